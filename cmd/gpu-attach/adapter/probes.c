// SPDX-License-Identifier: Apache-2.0
#define _SDT_HAS_SEMAPHORES 1

#include <string.h>
#include <sys/sdt.h>
#include <time.h>

#include "probes.h"

/* USDT semaphores: non-zero while a recorder is attached to the probe. */
unsigned short pa_gpu_launch_semaphore __attribute__((section(".probes")));
unsigned short pa_gpu_records_semaphore __attribute__((section(".probes")));

static uint64_t last_corr; /* the last launch's extended correlation id */

void pa_gpu_batcher_init(struct pa_gpu_batcher *b, pa_gpu_deliver_fn deliver,
			 bool (*observed)(void))
{
	memset(b, 0, sizeof(*b));
	pthread_mutex_init(&b->lock, NULL);
	b->deliver = deliver;
	b->observed = observed;
}

/* Hand the batch over; the lock is held. */
static void deliver_locked(struct pa_gpu_batcher *b)
{
	if (!b->n)
		return;
	b->deliver(b->recs, b->n, b->unobserved);
	b->delivered += b->n;
	b->n = 0;
}

void pa_gpu_batch_add(struct pa_gpu_batcher *b, const struct pa_gpu_rec *r)
{
	pthread_mutex_lock(&b->lock);
	if (b->observed && !b->observed()) {
		/* Nobody listens: what was batched goes too, as it would arrive stale. */
		b->unobserved += b->n + 1;
		b->n = 0;
	} else {
		b->recs[b->n++] = *r;
		if (b->n == PA_GPU_BATCH)
			deliver_locked(b);
	}
	pthread_mutex_unlock(&b->lock);
}

void pa_gpu_batch_flush(struct pa_gpu_batcher *b)
{
	pthread_mutex_lock(&b->lock);
	if (b->observed && !b->observed()) {
		b->unobserved += b->n;
		b->n = 0;
	}
	deliver_locked(b);
	pthread_mutex_unlock(&b->lock);
}

uint64_t pa_gpu_corr_near(uint64_t last, uint32_t id)
{
	uint64_t v = (last & ~0xffffffffULL) | id;

	if (v > last + (1ULL << 31) && v >= (1ULL << 32))
		v -= 1ULL << 32;
	else if (v + (1ULL << 31) < last)
		v += 1ULL << 32;
	return v;
}

uint64_t pa_gpu_corr_next(uint64_t *last, uint32_t id)
{
	/* Ids rise, but launches race from several threads: near the last, either side. */
	uint64_t v = pa_gpu_corr_near(*last, id);

	if (v > *last)
		*last = v;
	return v;
}

int64_t pa_gpu_clock_offset(uint64_t gpu_before, uint64_t mono, uint64_t gpu_after)
{
	/* The GPU clock's reading at the instant mono was taken: the middle of the two. */
	return (int64_t)(mono - (gpu_before + (gpu_after - gpu_before) / 2));
}

uint64_t pa_gpu_to_mono(uint64_t gpu_ts, int64_t offset)
{
	return gpu_ts ? gpu_ts + (uint64_t)offset : 0;
}

uint64_t pa_gpu_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

void pa_gpu_launch(uint32_t corr, uint32_t cbid, const char *api)
{
	uint64_t cur, last, ext;

	if (!__atomic_load_n(&pa_gpu_launch_semaphore, __ATOMIC_RELAXED))
		return;
	cur = __atomic_load_n(&last_corr, __ATOMIC_RELAXED);
	last = cur;
	ext = pa_gpu_corr_next(&last, corr);
	/* Launches race from several threads: the largest stays. */
	while (cur < last && !__atomic_compare_exchange_n(&last_corr, &cur, last, true,
							  __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	DTRACE_PROBE3(pa_gpu, launch, ext, cbid, api);
}

uint64_t pa_gpu_last_launch(void)
{
	return __atomic_load_n(&last_corr, __ATOMIC_RELAXED);
}

void pa_gpu_deliver(const struct pa_gpu_rec *recs, uint32_t n, uint64_t unobserved)
{
	DTRACE_PROBE3(pa_gpu, records, recs, n, unobserved);
}

bool pa_gpu_records_observed(void)
{
	return __atomic_load_n(&pa_gpu_records_semaphore, __ATOMIC_RELAXED);
}
