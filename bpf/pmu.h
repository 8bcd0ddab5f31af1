/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The contract between pmu.bpf.c and pa-record --pmu (cmd/record/pmu.c): the
 * per-process and per-thread counts kept in the `stats` hash, the per-CPU state
 * user space reads at the end, and the log-linear histogram both sides index.
 * Included by BPF code (after vmlinux.h) and by user space (after <linux/types.h>).
 */
#ifndef PA_PMU_H
#define PA_PMU_H

/* The counters read at every switch, where perf_event_open gives them. */
#define PMU_CYCLES	 0
#define PMU_INSTRUCTIONS 1
#define PMU_CACHE_MISSES 2
#define PMU_NR_COUNTERS	 3

/*
 * Histograms of nanoseconds, log-linear: values under PMU_SUBS in a slot each, then
 * every power of two split into PMU_SUBS equal slots (each 1/16 of its lower bound
 * wide, so a percentile read from a slot is within 6.25% of the true value), up to
 * 2^(PMU_MAX_LOG2 + 1) ns (~18 minutes); longer ones go to the last slot.  The exact
 * maximum is kept beside.
 */
#define PMU_SUB_BITS   4
#define PMU_SUBS       (1u << PMU_SUB_BITS)
#define PMU_MAX_LOG2   39
#define PMU_HIST_SLOTS ((PMU_MAX_LOG2 - PMU_SUB_BITS + 2) * PMU_SUBS)

/* Default capacity of `stats` (processes, and threads with --per-pid). */
#define PMU_MAX_KEYS 16384
/* Capacity of `threads`, the per-thread run-queue entry times (LRU). */
#define PMU_MAX_THREADS 65536
/* Capacity of `targets` with -p (the processes given and their children). */
#define PMU_MAX_TARGETS 8192

/* A process (tid 0) or, with --per-pid, one of its threads. */
struct pmu_key {
	__u32 tgid;
	__u32 tid;
};

struct pmu_hist {
	__u64 count;
	__u64 sum;
	__u64 max;
	__u32 slots[PMU_HIST_SLOTS];
};

struct pmu_stats {
	__u64 oncpu_ns;	   /* whole slices, and the parts of those cut by the start */
	__u64 voluntary;   /* switched out not runnable (blocked, sleeping, exiting) */
	__u64 involuntary; /* switched out still runnable (preempted, yielded) */
	__u64 counters[PMU_NR_COUNTERS];
	char comm[16];	       /* as of the last switch-out; a process's is its leader's */
	struct pmu_hist runq;  /* wakeup or preemption to switch-in */
	struct pmu_hist slice; /* switch-in to switch-out, whole slices only */
};

/*
 * Per CPU: who got it at the last switch and when, and the counters' values then.
 * since_ns 0: no switch seen on this CPU yet.
 */
struct pmu_cpu {
	__u64 since_ns;
	__u32 tgid, tid;
	__u64 last[PMU_NR_COUNTERS];
	__u64 enabled[PMU_NR_COUNTERS];
	__u64 running[PMU_NR_COUNTERS];
};

_Static_assert(sizeof(struct pmu_key) == 8, "pmu_key");
_Static_assert(sizeof(struct pmu_hist) == 24 + 4 * PMU_HIST_SLOTS, "pmu_hist");
_Static_assert(PMU_HIST_SLOTS == 592, "pmu_hist slots");
_Static_assert(__builtin_offsetof(struct pmu_stats, counters) == 24, "pmu_stats.counters");
_Static_assert(__builtin_offsetof(struct pmu_stats, comm) == 48, "pmu_stats.comm");
_Static_assert(__builtin_offsetof(struct pmu_stats, runq) == 64, "pmu_stats.runq");
_Static_assert(__builtin_offsetof(struct pmu_stats, slice) == 64 + sizeof(struct pmu_hist),
	       "pmu_stats.slice");
_Static_assert(sizeof(struct pmu_stats) == 64 + 2 * sizeof(struct pmu_hist), "pmu_stats");
_Static_assert(sizeof(struct pmu_cpu) == 16 + 3 * 8 * PMU_NR_COUNTERS, "pmu_cpu");

/* floor(log2(v)) for v > 0, without a loop or clz (BPF has neither). */
static inline __u32 pmu_log2(__u64 v)
{
	__u32 r, shift;

	r = (v > 0xffffffffULL) << 5;
	v >>= r;
	shift = (v > 0xffff) << 4;
	v >>= shift;
	r |= shift;
	shift = (v > 0xff) << 3;
	v >>= shift;
	r |= shift;
	shift = (v > 0xf) << 2;
	v >>= shift;
	r |= shift;
	shift = (v > 0x3) << 1;
	v >>= shift;
	r |= shift;
	return r | (__u32)(v >> 1);
}

/* The histogram slot of v ns. */
static inline __u32 pmu_slot(__u64 v)
{
	__u32 msb;

	if (v < PMU_SUBS)
		return (__u32)v;
	msb = pmu_log2(v);
	if (msb > PMU_MAX_LOG2)
		return PMU_HIST_SLOTS - 1;
	return (msb - PMU_SUB_BITS + 1) * PMU_SUBS +
	       (__u32)((v >> (msb - PMU_SUB_BITS)) & (PMU_SUBS - 1));
}

#endif /* PA_PMU_H */
