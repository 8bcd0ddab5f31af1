/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The per-kernel summary of a capture's GPU events, as `nsys stats` gives it: for
 * each kernel (copy, set) by name, its launches and its GPU times' count, total,
 * min and max, its grid and block sizes, and bytes moved; and the CPU's time spent
 * waiting for the GPU.  Filled by cg_load from gpu-launch samples (launches),
 * gpu-time samples (times, from their RAW payload) and off-CPU samples in a
 * synchronize call; read with cg_gpu_sum.
 */
#ifndef PA_GPU_SUM_H
#define PA_GPU_SUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hash.h"
#include "profile/gpu_events.h"

struct gpu_sum_row {
	uint32_t func;	   /* cg_func id of the sample's leaf: the kernel, copy or set */
	uint8_t op;	   /* enum gpu_op; 0 when only launches were seen */
	bool shapes_vary;  /* not every timed launch had grid and block below */
	uint64_t launches; /* gpu-launch samples (the launch uprobes) */
	uint64_t count;	   /* gpu-time samples (the adapter's records) */
	uint64_t total_ns, min_ns, max_ns;
	uint64_t bytes; /* copies and sets */
	int32_t grid[3], block[3];
};

struct gpu_sum {
	struct gpu_sum_row *rows;
	size_t nr, cap;
	struct hidx idx;
	/* off-CPU ns in CUDA calls waiting for the GPU (thread state gpu-wait), and samples */
	uint64_t wait_ns, wait_samples;
};

/* Count one launch of func.  0 or -ENOMEM. */
int gpu_sum_launch(struct gpu_sum *g, uint32_t func);
/* Count one record of func: ns on the GPU, the rest from its RAW payload. */
int gpu_sum_time(struct gpu_sum *g, uint32_t func, uint64_t ns, const struct gpu_raw *r);
void gpu_sum_free(struct gpu_sum *g);

#endif /* PA_GPU_SUM_H */
