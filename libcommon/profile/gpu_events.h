/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The events pa-record --gpu writes (docs/gpu.md), as their readers name them, and
 * the payload of a gpu-time sample: what the CUDA adapter's record said beyond its
 * duration (device, stream, correlation id, grid and block, bytes copied), as the
 * sample's PERF_SAMPLE_RAW.  perf shows it as a hex dump; our readers decode it.
 */
#ifndef PA_GPU_EVENTS_H
#define PA_GPU_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* One sample per kernel launch under its stack, period 1: launches are counted. */
#define GPU_LAUNCH_EVENT "gpu-launch"
/* One sample per kernel, copy or set the CUDA adapter timed, under its launch's
 * stack: period = ns on the GPU. */
#define GPU_TIME_EVENT "gpu-time"

/* What a gpu-time sample timed (the values of bpf/gpu.h's PA_GPU_*). */
enum gpu_op {
	GPU_OP_KERNEL = 1,
	GPU_OP_MEMCPY = 2,
	GPU_OP_MEMSET = 3,
};

#define GPU_RAW_MAGIC 0x6770 /* "gp" */

struct gpu_raw {
	uint16_t magic;	 /* GPU_RAW_MAGIC */
	uint8_t version; /* 2; version 1 ended before start */
	uint8_t op;	 /* enum gpu_op */
	uint32_t device, stream;
	uint32_t copy_kind; /* memcpy: CUpti_ActivityMemcpyKind (1 HtoD, 2 DtoH, ...) */
	uint64_t corr;	    /* the launch's correlation id */
	uint64_t bytes;	    /* memcpy, memset: bytes */
	int32_t grid[3], block[3];
	uint32_t graph; /* launched as a node of this CUDA graph; 0 none */
	uint32_t pad;
	/* When the GPU ran it, CLOCK_MONOTONIC ns (the samples' clock); 0 unknown.  The
	 * sample's own time is when its record reached pa-record. */
	uint64_t start, end;
};

#define GPU_RAW_VERSION 2
#define GPU_RAW_V1_SIZE offsetof(struct gpu_raw, start)

/* The gpu_raw carried by a sample's RAW payload into out (a version 1 payload with
 * start and end 0); false when it holds none of ours. */
static inline bool gpu_raw_get(const void *raw, uint32_t size, struct gpu_raw *out)
{
	size_t n = sizeof(*out);

	memset(out, 0, sizeof(*out));
	if (!raw || size < GPU_RAW_V1_SIZE)
		return false;
	memcpy(out, raw, GPU_RAW_V1_SIZE);
	if (out->magic != GPU_RAW_MAGIC || !out->version)
		return false;
	if (out->version == 1)
		n = GPU_RAW_V1_SIZE;
	else if (size < n)
		return false;
	memcpy(out, raw, n);
	return true;
}

#endif /* PA_GPU_EVENTS_H */
