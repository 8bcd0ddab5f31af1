/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The thread state pa-record attaches to each offcpu-time sample, as the sample's
 * PERF_SAMPLE_RAW payload (4 bytes, so size + data stay 8-byte aligned).  perf
 * shows RAW of a bpf-output event as a hex dump and otherwise ignores it; our
 * readers turn it back into a state name.
 */
#ifndef PA_OFFCPU_H
#define PA_OFFCPU_H

#include <stdint.h>
#include <string.h>

/* Why the thread was off the CPU (the values of bpf/profile.h's PROFILE_STATE_*). */
enum offcpu_state {
	OFFCPU_PREEMPTED = 0, /* runnable: preempted, or woken before it could block */
	OFFCPU_SLEEP = 1,     /* TASK_INTERRUPTIBLE ('S'): sleep, futex, poll, pipe */
	OFFCPU_IO = 2,	      /* TASK_UNINTERRUPTIBLE ('D'): disk I/O and other D waits */
	OFFCPU_OTHER = 3,     /* stopped, traced, parked, frozen */
	OFFCPU_NR_STATES
};

#define OFFCPU_EVENT "offcpu-time" /* the event name, as Linux perf names its own */
/* Not a thread state the kernel knows: readers label off-CPU time spent inside a CUDA
 * call that waits for the GPU (cudaStreamSynchronize, ...) with it. */
#define OFFCPU_GPU_WAIT	 "gpu-wait"
#define OFFCPU_RAW_MAGIC 0x6170 /* "pa": a payload we wrote */

struct offcpu_raw {
	uint16_t magic;	 /* OFFCPU_RAW_MAGIC */
	uint8_t version; /* 1 */
	uint8_t state;	 /* enum offcpu_state */
};

static inline const char *offcpu_state_name(unsigned int state)
{
	static const char *const names[OFFCPU_NR_STATES] = {"preempted", "sleep", "io", "other"};

	return state < OFFCPU_NR_STATES ? names[state] : "unknown";
}

/* The state name carried by a sample's RAW payload, NULL when it holds none of ours. */
static inline const char *offcpu_raw_state(const void *raw, uint32_t size)
{
	struct offcpu_raw r;

	if (!raw || size < sizeof(r))
		return NULL;
	memcpy(&r, raw, sizeof(r));
	if (r.magic != OFFCPU_RAW_MAGIC || r.version != 1)
		return NULL;
	return offcpu_state_name(r.state);
}

#endif /* PA_OFFCPU_H */
