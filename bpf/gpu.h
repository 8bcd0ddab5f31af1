/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The contract between the CUDA adapter (cmd/gpu-attach/adapter, injected into a
 * CUDA process by pa-gpu-attach) and pa-record --gpu: the adapter's USDT probes
 * (provider pa_gpu) and the GPU activity records it hands over.
 *
 *	pa_gpu:launch(u64 corr, u32 cbid, const char *api)
 *		at a kernel launch API's entry, in the launching thread: its stack is
 *		the launch's stack; corr is the launch's correlation id.
 *	pa_gpu:records(const struct pa_gpu_rec *recs, u32 n, u64 unobserved)
 *		a batch of records, in a thread of CUPTI's or the adapter's; the
 *		records (and the names they point at) are valid during the probe only.
 *		unobserved: records discarded so far because no recorder was attached.
 *
 * Both are gated by USDT semaphores: with no recorder attached the adapter fires
 * nothing and batches nothing.  Included by BPF code (after vmlinux.h) and by user
 * space (after <linux/types.h>).
 */
#ifndef PA_GPU_H
#define PA_GPU_H

/* Records in one pa_gpu:records batch at most. */
#define PA_GPU_BATCH 256

enum pa_gpu_rec_kind {
	PA_GPU_KERNEL = 1,
	PA_GPU_MEMCPY = 2,
	PA_GPU_MEMSET = 3,
};

struct pa_gpu_rec {
	__u64 corr;	  /* the launch's correlation id, extended past 32 bits */
	__u64 start, end; /* CLOCK_MONOTONIC ns */
	__u64 name;	  /* kernel: address of its mangled name in the process; 0 none */
	__u64 bytes;	  /* memcpy, memset: bytes */
	__u64 graph_node; /* launched as a node of a CUDA graph: its id; else 0 */
	__u32 graph;	  /* that graph's id, 0 none */
	__u32 device, stream;
	__u16 kind;	 /* enum pa_gpu_rec_kind */
	__u16 copy_kind; /* memcpy: CUpti_ActivityMemcpyKind (1 HtoD, 2 DtoH, ...) */
	__s32 grid[3], block[3];
	__u32 pad;
};

_Static_assert(sizeof(struct pa_gpu_rec) == 96, "pa_gpu_rec is shared with BPF: keep its size");

#endif /* PA_GPU_H */
