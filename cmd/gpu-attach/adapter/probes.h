/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The adapter's probe layer: what it hands pa-record (bpf/gpu.h), without CUPTI.
 * Correlation ids extended past their 32-bit wrap, GPU timestamps on
 * CLOCK_MONOTONIC, records batched for the records probe.  The CUPTI layer
 * (cupti.c) feeds it; the unit tests drive it directly.
 */
#ifndef PA_GPU_PROBES_H
#define PA_GPU_PROBES_H

#include <linux/types.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "gpu.h"

/* Where a full batch goes: the records probe, or a test's sink. */
typedef void (*pa_gpu_deliver_fn)(const struct pa_gpu_rec *recs, uint32_t n, uint64_t unobserved);

struct pa_gpu_batcher {
	pthread_mutex_t lock;
	pa_gpu_deliver_fn deliver;
	/* Whether a recorder listens (the records probe's semaphore); NULL: always. */
	bool (*observed)(void);
	struct pa_gpu_rec recs[PA_GPU_BATCH];
	uint32_t n;
	uint64_t delivered;  /* records handed over */
	uint64_t unobserved; /* records discarded: nobody listened */
};

void pa_gpu_batcher_init(struct pa_gpu_batcher *b, pa_gpu_deliver_fn deliver,
			 bool (*observed)(void));
/* Add one record; a full batch is delivered.  Never blocks for long: the lock is
 * held for a copy, or for one delivery. */
void pa_gpu_batch_add(struct pa_gpu_batcher *b, const struct pa_gpu_rec *r);
/* Deliver what is batched. */
void pa_gpu_batch_flush(struct pa_gpu_batcher *b);

/*
 * Correlation ids: CUPTI's are 32 bits and wrap.  A launch's id is extended past
 * the last launch's (*last, updated); a record's, which arrives later, to the 64-bit
 * value nearest the last launch's.
 */
uint64_t pa_gpu_corr_next(uint64_t *last, uint32_t id);
uint64_t pa_gpu_corr_near(uint64_t last, uint32_t id);

/*
 * GPU timestamps to CLOCK_MONOTONIC: offset is CLOCK_MONOTONIC minus the GPU clock,
 * measured at one instant (pa_gpu_clock_offset, from two reads of the GPU clock
 * around one of CLOCK_MONOTONIC).  0 stays 0 (no timestamp).
 */
int64_t pa_gpu_clock_offset(uint64_t gpu_before, uint64_t mono, uint64_t gpu_after);
uint64_t pa_gpu_to_mono(uint64_t gpu_ts, int64_t offset);

/* CLOCK_MONOTONIC now, ns. */
uint64_t pa_gpu_mono_ns(void);

/*
 * The probes themselves.  pa_gpu_launch fires pa_gpu:launch for a launch whose
 * CUPTI correlation id is corr (extended here), when a recorder listens;
 * pa_gpu_last_launch is the last extended id, for records (pa_gpu_corr_near).
 * pa_gpu_deliver is the records probe, a pa_gpu_deliver_fn; pa_gpu_records_observed
 * says whether a recorder listens to it.
 */
void pa_gpu_launch(uint32_t corr, uint32_t cbid, const char *api);
uint64_t pa_gpu_last_launch(void);
void pa_gpu_deliver(const struct pa_gpu_rec *recs, uint32_t n, uint64_t unobserved);
bool pa_gpu_records_observed(void);

#endif /* PA_GPU_PROBES_H */
