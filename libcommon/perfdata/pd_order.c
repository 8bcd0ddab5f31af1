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

/* p moved with its record from old to new, if it pointed into it. */
static const void *rebase(const void *p, const void *old, size_t size, const void *new)
{
	const uint8_t *b = p;

	if (!p || b < (const uint8_t *)old || b >= (const uint8_t *)old + size)
		return p;
	return (const uint8_t *)new + (b - (const uint8_t *)old);
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
		struct perf_event_header *c = malloc(rec->size);

		if (!c) {
			pd_oq_done(q, qe);
			return -ENOMEM;
		}
		memcpy(c, rec, rec->size);
		qe->ev.hdr = c;
		qe->ev.sample.ips = rebase(ev->sample.ips, rec, rec->size, c);
		qe->ev.sample.raw = rebase(ev->sample.raw, rec, rec->size, c);
	}
	e = &q->heap[q->n];
	e->qe = qe;
	e->time = time;
	e->seq = q->seq++;
	q->bytes += cost(qe);
	if (time > q->max_time)
		q->max_time = time;
	/* Sift up. */
	for (i = q->n++; i > 0; i = (i - 1) / 2) {
		if (!before(&q->heap[i], &q->heap[(i - 1) / 2]))
			break;
		swap(&q->heap[i], &q->heap[(i - 1) / 2]);
	}
	return 0;
}

struct pd_qev *pd_oq_pop(struct pd_oqueue *q, uint64_t limit)
{
	struct pd_qev *qe;
	size_t i = 0;

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
		free((void *)qe->ev.hdr);
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
	if (q->bytes > PD_OQ_MAX_BYTES && q->n)
		q->limit = q->heap[0].time + (q->max_time - q->heap[0].time) / 2;
}

void pd_oq_free(struct pd_oqueue *q)
{
	for (size_t i = 0; i < q->n; i++)
		if (q->heap[i].qe->owned)
			free((void *)q->heap[i].qe->ev.hdr);
	while (q->chunks) {
		struct pd_qev_chunk *c = q->chunks;

		q->chunks = c->next;
		free(c);
	}
	free(q->heap);
	memset(q, 0, sizeof(*q));
}
