// SPDX-License-Identifier: Apache-2.0
/*
 * A CUDA program as the CUDA adapter shows it to pa-record, with no GPU: it links the
 * adapter's probe layer (cmd/gpu-attach/adapter/probes.c) and does what the adapter
 * does on CUPTI's behalf.  Each of N steps launches two kernels:
 *
 *	main -> step_a -> cudaLaunchKernel	(a runtime launch: pa-record's uprobe on
 *						 this symbol takes the stack, the probe
 *						 only names the correlation id)
 *	main -> step_b -> cuLaunchKernel	(a driver launch, of the handle that
 *						 cuModuleGetFunction gave: the uprobe's
 *						 stack too)
 *
 * then hands over their records: kernA 2000 ns (grid 64x1x1, block 256x1x1), kernB
 * 5000 ns (grid 32x2x1, block 128x1x1).  Every 100th step also copies
 *
 *	main -> step_c -> cudaMemcpy		(the probe's stack, as for a driver launch)
 *
 * 1 MiB host to device in 40000 ns, and hands over a record no launch made (orphan,
 * 1000 ns).  Correlation ids start just below
 * 2^32 and wrap.  Waits (up to 5 s) for a recorder before the first launch, unless
 * told not to (bench/gpu times it alone).  Prints the launch loop's own time.  With
 * records, it hands over N kernel records (no launch made them), as fast as it can
 * or at RATE records a second: the batch probe's throughput (bench/gpu).
 *
 *	gpu_producer N [nowait|records [RATE]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probes.h"

static uint32_t next_corr = 0xffffff00u;
static struct pa_gpu_batcher batcher;

/* As CUPTI gives kernel names: mangled. */
static const char kern_a[] = "_Z5kernAPfi", kern_b[] = "_Z5kernBPfi", orphan[] = "_Z6orphanv";

/* kernA's host-side function, as nvcc names it: what a runtime launch passes. */
void kern_a_stub(float *, int) __asm__("_Z5kernAPfi");
__attribute__((noinline)) void kern_a_stub(float *p, int n)
{
	(void)p, (void)n;
}

__attribute__((noinline)) int cudaLaunchKernel(const void *func, int grid)
{
	(void)func, (void)grid;
	pa_gpu_launch(next_corr++, 211, "cudaLaunchKernel");
	return 0;
}

/* The driver's handle of kernB, given by name as a module's function. */
static struct {
	const char *name;
} kern_b_fn;
static void *kern_b_handle;

__attribute__((noinline)) int cuModuleGetFunction(void **f, void *mod, const char *name)
{
	(void)mod;
	kern_b_fn.name = name;
	*f = &kern_b_fn;
	return 0;
}

__attribute__((noinline)) int cuLaunchKernel(void *f, int grid)
{
	(void)f, (void)grid;
	pa_gpu_launch(next_corr++, 307, "cuLaunchKernel");
	return 0;
}

__attribute__((noinline)) int cudaMemcpy(void *dst, const void *src, size_t n, int kind)
{
	(void)dst, (void)src, (void)n, (void)kind;
	pa_gpu_launch(next_corr++, 31, "cudaMemcpy");
	return 0;
}

static void record(uint32_t corr, const char *name, uint64_t ns, int gx, int gy, int bx)
{
	struct pa_gpu_rec r = {.kind = PA_GPU_KERNEL, .device = 0, .stream = 7};

	r.grid[0] = gx, r.grid[1] = gy, r.grid[2] = 1;
	r.block[0] = bx, r.block[1] = r.block[2] = 1;
	r.corr = pa_gpu_corr_near(pa_gpu_last_launch(), corr);
	r.start = pa_gpu_mono_ns();
	r.end = r.start + ns;
	r.name = (uintptr_t)name;
	pa_gpu_batch_add(&batcher, &r);
}

__attribute__((noinline)) void step_a(void)
{
	cudaLaunchKernel((const void *)kern_a_stub, 1);
}

__attribute__((noinline)) void step_b(void)
{
	cuLaunchKernel(kern_b_handle, 1);
}

/* A host-to-device copy of 1 MiB and its record. */
__attribute__((noinline)) void step_c(void)
{
	struct pa_gpu_rec r = {
		.kind = PA_GPU_MEMCPY, .copy_kind = 1, .bytes = 1 << 20, .stream = 7};
	uint32_t corr = next_corr;

	cudaMemcpy(NULL, NULL, 1 << 20, 1);
	r.corr = pa_gpu_corr_near(pa_gpu_last_launch(), corr);
	r.start = pa_gpu_mono_ns();
	r.end = r.start + 40000;
	pa_gpu_batch_add(&batcher, &r);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000, i;
	bool wait = argc < 3 || strcmp(argv[2], "nowait");
	bool records = argc > 2 && !strcmp(argv[2], "records");
	double rate = records && argc > 3 ? atof(argv[3]) : 0;
	struct timespec ms = {0, 1000000};
	uint64_t t0;

	pa_gpu_batcher_init(&batcher, pa_gpu_deliver, pa_gpu_records_observed);
	/* CUPTI's names live in memory it has written; these must be paged in too, as a
	 * probe cannot fault a page in to read one. */
	if (!*(volatile const char *)kern_a || !*(volatile const char *)kern_b ||
	    !*(volatile const char *)orphan)
		return 1;
	/* As a program loads its kernels: first, before any recorder may be there. */
	cuModuleGetFunction(&kern_b_handle, NULL, kern_b);
	for (i = 0; wait && i < 5000 && !pa_gpu_records_observed(); i++)
		nanosleep(&ms, NULL);
	if (wait && !pa_gpu_records_observed())
		fprintf(stderr, "gpu_producer: no recorder attached\n");
	t0 = pa_gpu_mono_ns();
	for (i = 0; records && i < n; i++) {
		record(0x80000000u + i, kern_a, 2000, 64, 1, 256);
		/* paced a batch at a time */
		while (rate > 0 && i % PA_GPU_BATCH == PA_GPU_BATCH - 1 &&
		       pa_gpu_mono_ns() < t0 + (uint64_t)((i + 1) / rate * 1e9))
			;
	}
	if (records) {
		pa_gpu_batch_flush(&batcher);
		printf("%d records in %.6f s\n", n, (pa_gpu_mono_ns() - t0) / 1e9);
		return 0;
	}
	for (i = 0; i < n; i++) {
		uint32_t a = next_corr;

		step_a();
		step_b();
		record(a, kern_a, 2000, 64, 1, 256);
		record(a + 1, kern_b, 5000, 32, 2, 128);
		if (i % 100 == 99) {
			step_c();
			record(a + 0x40000000u, orphan, 1000, 1, 1, 1);
		}
		if (i % 64 == 63)
			pa_gpu_batch_flush(&batcher);
	}
	pa_gpu_batch_flush(&batcher);
	printf("%d launches in %.6f s\n", 2 * n + n / 100, (pa_gpu_mono_ns() - t0) / 1e9);
	printf("gpu_producer: %d steps, %llu records delivered\n", n,
	       (unsigned long long)batcher.delivered);
	return 0;
}
