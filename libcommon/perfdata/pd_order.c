// SPDX-License-Identifier: Apache-2.0
/*
 * Time ordering of records, the way perf's ordered_events does it: per-CPU buffers
 * reach a perf.data file interleaved, so a COMM or MMAP2 can land after the samples
 * that need it.  Records are queued by time and released when a FINISHED_ROUND says
 * nothing older than the previous round's newest record can still arrive.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata/pd_priv.h"

/* Past this many queued bytes the oldest half is released without waiting for a
 * round (files without FINISHED_ROUND would otherwise be held whole). */
#define PD_OQ_MAX_BYTES (256u << 20)

#define QEV_CHUNK 4096

struct pd_qev_chunk {
	struct pd_qev_chunk *next;
	struct pd_qev qe[QEV_CHUNK];
};

/* What one queued record holds: its parsed event and heap entry, and its copy (with
 * malloc's header) when it has one. */
static size_t cost(const struct pd_qev *qe)
{
	return sizeof(*qe) + sizeof(struct pd_oent) + (qe->owned ? qe->ev.hdr->size + 16u : 0);
}

static bool before(const struct pd_oent *a, const struct pd_oent *b)
{
	return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static void swap(struct pd_oent *a, struct pd_oent *b)
{
	struct pd_oent t = *a;

	*a = *b;
	*b = t;
}

static struct pd_qev *qev_get(struct pd_oqueue *q)
{
	struct pd_qev *qe = q->free_qe;

	if (!qe) {
		struct pd_qev_chunk *c = malloc(sizeof(*c));
		size_t i;

		if (!c)
			return NULL;
		c->next = q->chunks;
		q->chunks = c;
		for (i = 0; i < QEV_CHUNK; i++) {
			c->qe[i].next_free = q->free_qe;
			q->free_qe = &c->qe[i];
		}
		qe = q->free_qe;
	}
	q->free_qe = qe->next_free;
	return qe;
}

/*
 * Room for a copy of a record of size bytes.  Copies (every record of a compressed
 * capture) come and go by the million in a few sizes: reused by 64-byte size class,
 * they cost no malloc and free each, which in a reader with a second thread take a
 * lock.
 */
static void *rec_alloc(struct pd_oqueue *q, size_t size)
{
	size_t c = (size + 63) / 64;
	void *p;

	if (!c || c > PD_OQ_REC_CLASSES)
		return malloc(size);
	p = q->free_rec[c - 1];
	if (!p)
		return malloc(c * 64);
	memcpy(&q->free_rec[c - 1], p, sizeof(void *));
	return p;
}

static void rec_free(struct pd_oqueue *q, const struct perf_event_header *rec)
{
	size_t c = (rec->size + 63u) / 64;
	void *p = (void *)rec;

	if (!c || c > PD_OQ_REC_CLASSES) {
		free(p);
		return;
	}
	memcpy(p, &q->free_rec[c - 1], sizeof(void *));
	q->free_rec[c - 1] = p;
}

/* p moved with its record from old to new, if it pointed into it. */
static const void *rebase(const void *p, const void *old, size_t size, const void *new)
{
	const uint8_t *b = p;

	if (!p || b < (const uint8_t *)old || b >= (const uint8_t *)old + size)
		return p;
	return (const uint8_t *)new + (b - (const uint8_t *)old);
}

/* Room at the run's end: slide it down over the popped part, or double it. */
static int run_grow(struct pd_oqueue *q)
{
	size_t live = q->run_end - q->run_head, cap;
	struct pd_oent *r;

	if (q->run_head >= q->run_cap / 2 && q->run_head) {
		memmove(q->run, q->run + q->run_head, live * sizeof(*q->run));
	} else {
		cap = q->run_cap ? 2 * q->run_cap : 1024;
		r = realloc(q->run, cap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		q->run = r;
		q->run_cap = cap;
		if (!q->run_head)
			return 0;
		memmove(q->run, q->run + q->run_head, live * sizeof(*q->run));
	}
	q->run_head = 0;
	q->run_end = live;
	return 0;
}

int pd_oq_push(struct pd_oqueue *q, const struct pd_event *ev, uint64_t time, bool copy)
{
	const struct perf_event_header *rec = ev->hdr;
	struct pd_qev *qe;
	struct pd_oent *e;
	size_t i;

	if (q->n == q->cap) {
		size_t cap = q->cap ? 2 * q->cap : 1024;
		struct pd_oent *h = realloc(q->heap, cap * sizeof(*h));

		if (!h)
			return -ENOMEM;
		q->heap = h;
		q->cap = cap;
	}
	qe = qev_get(q);
	if (!qe)
		return -ENOMEM;
	qe->ev = *ev;
	qe->owned = copy;
	if (copy) {
		struct perf_event_header *c = rec_alloc(q, rec->size);

		if (!c) {
			pd_oq_done(q, qe);
			return -ENOMEM;
		}
		memcpy(c, rec, rec->size);
		qe->ev.hdr = c;
		qe->ev.sample.ips = rebase(ev->sample.ips, rec, rec->size, c);
		qe->ev.sample.raw = rebase(ev->sample.raw, rec, rec->size, c);
	}
	q->bytes += cost(qe);
	if (time > q->max_time)
		q->max_time = time;
	if (q->run_head == q->run_end || q->run[q->run_end - 1].time <= time) {
		/* In order: seq grows, so it sorts after the run's last. */
		if (q->run_end == q->run_cap && run_grow(q))
			goto nomem;
		q->run[q->run_end++] = (struct pd_oent){.qe = qe, .time = time, .seq = q->seq++};
		return 0;
	}
	e = &q->heap[q->n];
	e->qe = qe;
	e->time = time;
	e->seq = q->seq++;
	/* Sift up. */
	for (i = q->n++; i > 0; i = (i - 1) / 2) {
		if (!before(&q->heap[i], &q->heap[(i - 1) / 2]))
			break;
		swap(&q->heap[i], &q->heap[(i - 1) / 2]);
	}
	return 0;
nomem:
	q->bytes -= cost(qe);
	pd_oq_done(q, qe);
	return -ENOMEM;
}

struct pd_qev *pd_oq_pop(struct pd_oqueue *q, uint64_t limit)
{
	struct pd_qev *qe;
	size_t i = 0;

	if (q->run_head < q->run_end && (!q->n || before(&q->run[q->run_head], &q->heap[0]))) {
		if (q->run[q->run_head].time > limit)
			return NULL;
		qe = q->run[q->run_head++].qe;
		if (q->run_head == q->run_end)
			q->run_head = q->run_end = 0;
		q->bytes -= cost(qe);
		return qe;
	}
	if (!q->n || q->heap[0].time > limit)
		return NULL;
	qe = q->heap[0].qe;
	q->bytes -= cost(qe);
	q->heap[0] = q->heap[--q->n];
	/* Sift down. */
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < q->n && before(&q->heap[l], &q->heap[m]))
			m = l;
		if (r < q->n && before(&q->heap[r], &q->heap[m]))
			m = r;
		if (m == i)
			break;
		swap(&q->heap[i], &q->heap[m]);
		i = m;
	}
	return qe;
}

void pd_oq_done(struct pd_oqueue *q, struct pd_qev *qe)
{
	if (!qe)
		return;
	if (qe->owned)
		rec_free(q, qe->ev.hdr);
	qe->owned = false;
	qe->next_free = q->free_qe;
	q->free_qe = qe;
}

const void *pd_oq_lowest(const struct pd_oqueue *q, const void *lo, const void *hi)
{
	const void *min = NULL;
	size_t i;

	for (i = 0; i < q->n; i++) {
		const void *p = q->heap[i].qe->ev.hdr;

		if (p >= lo && p < hi && (!min || p < min))
			min = p;
	}
	for (i = q->run_head; i < q->run_end; i++) {
		const void *p = q->run[i].qe->ev.hdr;

		if (p >= lo && p < hi && (!min || p < min))
			min = p;
	}
	return min;
}

void pd_oq_round(struct pd_oqueue *q)
{
	/* perf's OE_FLUSH__ROUND: release up to the newest time seen by the previous
	 * round; what this round brought may still have older peers in flight. */
	q->limit = q->round_max;
	q->round_max = q->max_time;
}

void pd_oq_relieve(struct pd_oqueue *q)
{
	uint64_t oldest;

	if (q->bytes <= PD_OQ_MAX_BYTES || (!q->n && q->run_head == q->run_end))
		return;
	oldest = q->n ? q->heap[0].time : UINT64_MAX;
	if (q->run_head < q->run_end && q->run[q->run_head].time < oldest)
		oldest = q->run[q->run_head].time;
	q->limit = oldest + (q->max_time - oldest) / 2;
}

void pd_oq_free(struct pd_oqueue *q)
{
	for (size_t i = 0; i < q->n; i++)
		if (q->heap[i].qe->owned)
			free((void *)q->heap[i].qe->ev.hdr);
	for (size_t i = q->run_head; i < q->run_end; i++)
		if (q->run[i].qe->owned)
			free((void *)q->run[i].qe->ev.hdr);
	for (size_t i = 0; i < PD_OQ_REC_CLASSES; i++) {
		while (q->free_rec[i]) {
			void *p = q->free_rec[i];

			memcpy(&q->free_rec[i], p, sizeof(void *));
			free(p);
		}
	}
	while (q->chunks) {
		struct pd_qev_chunk *c = q->chunks;

		q->chunks = c->next;
		free(c);
	}
	free(q->heap);
	free(q->run);
	memset(q, 0, sizeof(*q));
}
