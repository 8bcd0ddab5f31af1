// SPDX-License-Identifier: Apache-2.0
/*
 * The CUDA adapter's probe layer (cmd/gpu-attach/adapter/probes.c), without CUPTI:
 * correlation ids extended past their 32-bit wrap, GPU timestamps moved to
 * CLOCK_MONOTONIC, records batched and counted when nobody listens, and the totals
 * file of PA_GPU_ADAPTER_TOTALS.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probes.h"
#include "totals.h"
#include "unit.h"

static void test_corr_next(void)
{
	uint64_t last = 0;

	CHECK_EQ_U64(pa_gpu_corr_next(&last, 1), 1);
	CHECK_EQ_U64(pa_gpu_corr_next(&last, 0xfffffff0u), 0xfffffff0u);
	/* a launch slightly out of order (another thread) stays below */
	CHECK_EQ_U64(pa_gpu_corr_next(&last, 0xffffff00u), 0xffffff00u);
	CHECK_EQ_U64(last, 0xfffffff0u);
	/* the wrap: 5 comes after 0xfffffff0 */
	CHECK_EQ_U64(pa_gpu_corr_next(&last, 5), 0x100000005ULL);
	CHECK_EQ_U64(last, 0x100000005ULL);
	/* a late launch from before the wrap keeps its old epoch */
	CHECK_EQ_U64(pa_gpu_corr_next(&last, 0xfffffffeu), 0xfffffffeULL);
	CHECK_EQ_U64(pa_gpu_corr_next(&last, 7), 0x100000007ULL);
}

static void test_corr_near(void)
{
	/* records arrive after their launches: near the last launch, either side */
	CHECK_EQ_U64(pa_gpu_corr_near(0x100000005ULL, 0xfffffff0u), 0xfffffff0ULL);
	CHECK_EQ_U64(pa_gpu_corr_near(0x100000005ULL, 3), 0x100000003ULL);
	CHECK_EQ_U64(pa_gpu_corr_near(0xfffffff0ULL, 2), 0x100000002ULL);
	CHECK_EQ_U64(pa_gpu_corr_near(10, 7), 7);
	CHECK_EQ_U64(pa_gpu_corr_near(0, 0xfffffff0u), 0xfffffff0ULL);
}

static void test_clock(void)
{
	/* the GPU clock read at 1000 and 1100 around CLOCK_MONOTONIC's 5050: offset 4000 */
	int64_t off = pa_gpu_clock_offset(1000, 5050, 1100);

	CHECK_EQ_U64(off, 4000);
	CHECK_EQ_U64(pa_gpu_to_mono(2000, off), 6000);
	CHECK_EQ_U64(pa_gpu_to_mono(0, off), 0);
	/* a GPU clock ahead of CLOCK_MONOTONIC: a negative offset */
	off = pa_gpu_clock_offset(9000, 5000, 9000);
	CHECK_EQ_U64(pa_gpu_to_mono(9500, off), 5500);
	CHECK(pa_gpu_mono_ns() > 0);
}

/* What the batcher delivered. */
static struct pa_gpu_rec got[4 * PA_GPU_BATCH];
static uint32_t nr_got, nr_calls;
static uint64_t last_unobserved;
static bool listening = true;

static void sink(const struct pa_gpu_rec *recs, uint32_t n, uint64_t unobserved)
{
	uint32_t i;

	for (i = 0; i < n && nr_got < 4 * PA_GPU_BATCH; i++)
		got[nr_got++] = recs[i];
	nr_calls++;
	last_unobserved = unobserved;
}

static bool observed(void)
{
	return listening;
}

static void test_batches(void)
{
	struct pa_gpu_batcher b;
	struct pa_gpu_rec r = {.kind = PA_GPU_KERNEL};
	uint32_t i;

	pa_gpu_batcher_init(&b, sink, observed);
	for (i = 0; i < PA_GPU_BATCH + 10; i++) {
		r.corr = i + 1;
		pa_gpu_batch_add(&b, &r);
	}
	/* one full batch went at once; the rest waits for a flush */
	CHECK_EQ_U64(nr_calls, 1);
	CHECK_EQ_U64(nr_got, PA_GPU_BATCH);
	pa_gpu_batch_flush(&b);
	CHECK_EQ_U64(nr_calls, 2);
	CHECK_EQ_U64(nr_got, PA_GPU_BATCH + 10);
	for (i = 0; i < nr_got; i++)
		if (got[i].corr != i + 1)
			break;
	CHECK_EQ_U64(i, PA_GPU_BATCH + 10);
	/* nobody listens: nothing delivered, all counted, and said with the next batch */
	pa_gpu_batch_add(&b, &r);
	listening = false;
	pa_gpu_batch_add(&b, &r);
	pa_gpu_batch_add(&b, &r);
	pa_gpu_batch_flush(&b);
	CHECK_EQ_U64(nr_calls, 2);
	CHECK_EQ_U64(b.unobserved, 3);
	listening = true;
	pa_gpu_batch_add(&b, &r);
	pa_gpu_batch_flush(&b);
	CHECK_EQ_U64(nr_calls, 3);
	CHECK_EQ_U64(last_unobserved, 3);
	CHECK_EQ_U64(b.delivered, PA_GPU_BATCH + 11);
	/* an empty flush delivers nothing */
	pa_gpu_batch_flush(&b);
	CHECK_EQ_U64(nr_calls, 3);
}

/* Records summed per name, written as "COUNT TOTAL_NS NAME" lines. */
static void test_totals(void)
{
	static const char kern[] = "_Z4kernPf";
	struct pa_gpu_rec r[3] = {
		{.kind = PA_GPU_KERNEL, .start = 1000, .end = 1100, .name = (uintptr_t)kern},
		{.kind = PA_GPU_KERNEL, .start = 2000, .end = 2250, .name = (uintptr_t)kern},
		{.kind = PA_GPU_MEMCPY, .copy_kind = 1, .start = 10, .end = 60},
	};
	char path[] = "/tmp/test_gpu_totals.XXXXXX", line[3][128] = {{0}};
	FILE *f;
	int fd = mkstemp(path), i;

	CHECK(fd >= 0);
	close(fd);
	pa_gpu_totals_deliver(r, 2, 0);
	pa_gpu_totals_deliver(r + 2, 1, 0);
	CHECK(!pa_gpu_totals_write(path));
	f = fopen(path, "r");
	CHECK(f != NULL);
	for (i = 0; f && i < 3 && fgets(line[i], sizeof(line[i]), f); i++)
		;
	if (f)
		fclose(f);
	unlink(path);
	CHECK_STR(line[0], "2 350 _Z4kernPf\n");
	CHECK_STR(line[1], "1 50 [memcpy 1]\n");
	CHECK_STR(line[2], "");
	CHECK(pa_gpu_totals_write("/nonexistent/dir/totals") == -1);
}

int main(void)
{
	RUN(test_corr_next);
	RUN(test_totals);
	RUN(test_corr_near);
	RUN(test_clock);
	RUN(test_batches);
	return unit_done();
}
