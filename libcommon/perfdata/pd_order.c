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

/* What one queued record holds: its copy, its malloc header and its heap entry (several
 * times the size of a small record, which alone would let the cap be passed many times). */
static size_t cost(const struct perf_event_header *rec)
{
	return rec->size + 16 + sizeof(struct pd_oent);
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

int pd_oq_push(struct pd_oqueue *q, const struct perf_event_header *rec,
	       const struct pd_evsel *evsel, uint64_t time)
{
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
	e = &q->heap[q->n];
	e->rec = malloc(rec->size);
	if (!e->rec)
		return -ENOMEM;
	memcpy(e->rec, rec, rec->size);
	e->evsel = evsel;
	e->time = time;
	e->seq = q->seq++;
	q->bytes += cost(rec);
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

bool pd_oq_pop(struct pd_oqueue *q, uint64_t limit, struct pd_oent *out)
{
	size_t i = 0;

	if (!q->n || q->heap[0].time > limit)
		return false;
	*out = q->heap[0];
	q->bytes -= cost(out->rec);
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
	return true;
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
		free(q->heap[i].rec);
	free(q->heap);
	memset(q, 0, sizeof(*q));
}
