// SPDX-License-Identifier: GPL-2.0
/*
 * pa-record --pmu: scheduler counts per process (and per thread), kept in a hash
 * user space reads once at the end; nothing is streamed.
 *
 * Run-queue latency as bcc's runqlat measures it: a thread enters the run queue at
 * its wakeup (sched_wakeup, sched_wakeup_new) or when it is switched out still
 * runnable (preempted); the latency is the time to its next switch-in.  A slice is
 * the time from a thread's switch-in to its switch-out on one CPU: the CPU's last
 * switch is its switch-in, so one per-CPU record serves both.  Where hardware
 * counters exist, their per-CPU values are read at every switch and the change
 * since the last one is the slice's, added to the thread leaving.
 *
 * Every program comes as tp_btf (task pointers read directly) and raw_tp (read with
 * BPF_CORE_READ); pa-record loads the first set the kernel accepts.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "pmu.h"

char LICENSE[] SEC("license") = "GPL";

/* Set through skel->rodata before load. */
const volatile bool system_wide = false;
const volatile __u32 self_tgid = 0;
const volatile bool per_thread = false; /* --per-pid */
const volatile __u32 counters_mask = 0; /* bit (1 << PMU_*): that counter is open */
/* Tests (PA_PMU_TEST_NO_BTF): on_switch_btf reads past its arguments, which the
 * verifier refuses, as a kernel that cannot load tp_btf does. */
const volatile bool test_refuse_btf = false;

/* bpf_ktime_get_ns() just before the programs were attached, set by pa-record. */
__u64 start_ns = 0;
/*
 * Counts user space reports: entries `stats` or `targets` had no room for, and
 * those the allocator failed to make (it refills between two switches; pa-record
 * makes the entries of the processes there at the start, fork those of new ones).
 */
__u64 stats_full = 0;
__u64 stats_nomem = 0;
__u64 targets_full = 0;

/* -p: the tgids followed, the ones given and the processes they fork. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PMU_MAX_TARGETS);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

/* Entries are made on a process's (or thread's) first switch: allocated on use. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, PMU_MAX_KEYS);
	__type(key, struct pmu_key);
	__type(value, struct pmu_stats);
} stats SEC(".maps");

/* tid -> when it entered the run queue, while it waits there. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, PMU_MAX_THREADS);
	__type(key, __u32);
	__type(value, __u64);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pmu_cpu);
} cpus SEC(".maps");

/* One counting perf event per CPU each, indexed by CPU number (pa-record fills them). */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
} cycles_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
} instructions_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
} cache_misses_events SEC(".maps");

static const struct pmu_stats zero_stats;

/* task_struct->__state bits (include/linux/sched.h), stable kernel ABI. */
#define TASK_RUNNING 0x0000
#define TASK_DEAD    0x0080
#define E2BIG	     7 /* errno-base.h */

/* A field of task t: loaded directly from tp_btf (btf), through the CO-RE reader else. */
#define TASK_FIELD(btf, t, field) ((btf) ? (t)->field : BPF_CORE_READ(t, field))

static __always_inline bool followed(__u32 tgid)
{
	if (!tgid) /* the idle tasks */
		return false;
	if (system_wide)
		return tgid != self_tgid;
	return bpf_map_lookup_elem(&targets, &tgid);
}

static __always_inline struct pmu_stats *stats_of(__u32 tgid, __u32 tid)
{
	struct pmu_key key = {.tgid = tgid, .tid = tid};
	struct pmu_stats *st = bpf_map_lookup_elem(&stats, &key);
	long err;

	if (st)
		return st;
	err = bpf_map_update_elem(&stats, &key, &zero_stats, BPF_NOEXIST);
	st = bpf_map_lookup_elem(&stats, &key);
	if (!st)
		__sync_fetch_and_add(err == -E2BIG ? &stats_full : &stats_nomem, 1);
	return st;
}

/* Another CPU may be adding to the same process: the larger value wins. */
static __always_inline void set_max(__u64 *p, __u64 v)
{
	__u64 old = *p, seen;
	int i;

	for (i = 0; i < 4 && v > old; i++) {
		seen = __sync_val_compare_and_swap(p, old, v);
		if (seen == old)
			break;
		old = seen;
	}
}

static __always_inline void hist_add(struct pmu_hist *h, __u64 v)
{
	__u32 slot = pmu_slot(v);

	if (slot >= PMU_HIST_SLOTS)
		slot = PMU_HIST_SLOTS - 1;
	__sync_fetch_and_add(&h->slots[slot], 1);
	__sync_fetch_and_add(&h->count, 1);
	__sync_fetch_and_add(&h->sum, v);
	set_max(&h->max, v);
}

/*
 * Counter k's change since the last switch on this CPU, scaled up by the time it
 * was scheduled where the PMU multiplexes more events than it has counters.  The
 * events were enabled at start from 0: the first change is since the start.
 */
static __always_inline __u64 counter_delta(void *map, struct pmu_cpu *c, int k)
{
	struct bpf_perf_event_value v;
	__u64 dc, de, dr;

	if (!(counters_mask & (1u << k)) ||
	    bpf_perf_event_read_value(map, BPF_F_CURRENT_CPU, &v, sizeof(v)))
		return 0;
	dc = v.counter - c->last[k];
	de = v.enabled - c->enabled[k];
	dr = v.running - c->running[k];
	c->last[k] = v.counter;
	c->enabled[k] = v.enabled;
	c->running[k] = v.running;
	/* 16 bits of fraction: exact enough, and no overflow before 2^47 events. */
	if (dr && dr < de)
		dc = (dc * ((de << 16) / dr)) >> 16;
	return dc;
}

/* What prev's leaving the CPU adds to one of its entries. */
static __always_inline void account_out(struct pmu_stats *st, __u64 slice, bool whole,
					bool runnable, const __u64 *deltas)
{
	int k;

	__sync_fetch_and_add(&st->oncpu_ns, slice);
	if (whole)
		hist_add(&st->slice, slice);
	if (runnable)
		__sync_fetch_and_add(&st->involuntary, 1);
	else
		__sync_fetch_and_add(&st->voluntary, 1);
	for (k = 0; k < PMU_NR_COUNTERS; k++)
		if (deltas[k])
			__sync_fetch_and_add(&st->counters[k], deltas[k]);
}

/*
 * prev (the current task) leaves the CPU at now.  Its slice began at this CPU's
 * last switch, if that switched to prev; with no switch seen here yet it ran since
 * the start: that part counts as on-CPU time, not as a slice.
 */
static __always_inline void switch_out(struct task_struct *prev, bool preempt, __u32 prev_state,
				       struct pmu_cpu *c, __u64 now, const __u64 *deltas, bool btf)
{
	__u32 tgid = TASK_FIELD(btf, prev, tgid), tid = TASK_FIELD(btf, prev, pid);
	/* preempt, or a sleep a pending signal cancelled: still on the run queue. */
	bool runnable = preempt || prev_state == TASK_RUNNING, whole = false;
	struct task_struct *leader;
	struct pmu_stats *st;
	__u64 slice = 0;

	if (!followed(tgid))
		return;
	if (c->since_ns && c->tid == tid && now > c->since_ns) {
		slice = now - c->since_ns;
		whole = true;
	} else if (!c->since_ns && start_ns && now > start_ns) {
		slice = now - start_ns;
	}
	st = stats_of(tgid, 0);
	if (st) {
		account_out(st, slice, whole, runnable, deltas);
		leader = TASK_FIELD(btf, prev, group_leader);
		bpf_probe_read_kernel(st->comm, sizeof(st->comm), &leader->comm);
	}
	if (per_thread) {
		st = stats_of(tgid, tid);
		if (st) {
			account_out(st, slice, whole, runnable, deltas);
			bpf_get_current_comm(st->comm, sizeof(st->comm));
		}
	}
	if (runnable && !(prev_state & TASK_DEAD))
		bpf_map_update_elem(&threads, &tid, &now, BPF_ANY);
	else
		bpf_map_delete_elem(&threads, &tid);
}

static __always_inline void account_in(struct pmu_stats *st, __u64 wait, struct task_struct *next)
{
	if (!st->comm[0])
		bpf_probe_read_kernel_str(st->comm, sizeof(st->comm), &next->comm);
	hist_add(&st->runq, wait);
}

/* next gets the CPU at now: the end of its wait in the run queue, if it was timed. */
static __always_inline void switch_in(struct task_struct *next, __u64 now, bool btf)
{
	__u32 tgid = TASK_FIELD(btf, next, tgid), tid = TASK_FIELD(btf, next, pid);
	struct pmu_stats *st;
	__u64 *enq, wait;

	if (!followed(tgid))
		return;
	enq = bpf_map_lookup_elem(&threads, &tid);
	if (!enq)
		return;
	wait = now > *enq ? now - *enq : 0;
	bpf_map_delete_elem(&threads, &tid);
	st = stats_of(tgid, 0);
	if (st)
		account_in(st, wait, next);
	if (per_thread) {
		st = stats_of(tgid, tid);
		if (st)
			account_in(st, wait, next);
	}
}

static __always_inline void on_switch(bool preempt, struct task_struct *prev,
				      struct task_struct *next, __u32 prev_state, bool btf)
{
	__u64 now = bpf_ktime_get_ns(), deltas[PMU_NR_COUNTERS];
	struct pmu_cpu *c;
	__u32 zero = 0;

	c = bpf_map_lookup_elem(&cpus, &zero);
	if (!c)
		return;
	deltas[PMU_CYCLES] = counter_delta(&cycles_events, c, PMU_CYCLES);
	deltas[PMU_INSTRUCTIONS] = counter_delta(&instructions_events, c, PMU_INSTRUCTIONS);
	deltas[PMU_CACHE_MISSES] = counter_delta(&cache_misses_events, c, PMU_CACHE_MISSES);
	switch_out(prev, preempt, prev_state, c, now, deltas, btf);
	switch_in(next, now, btf);
	c->since_ns = now;
	c->tgid = TASK_FIELD(btf, next, tgid);
	c->tid = TASK_FIELD(btf, next, pid);
}

/*
 * p enters a run queue.  A thread already timed (woken while still queued, its
 * preemption already counted) keeps the earlier time.  A new one (fresh) gets its
 * entry here with --per-pid, apart from its process's made at the fork: one
 * allocation per program run, which the allocator's per-CPU cache always has.
 */
static __always_inline void on_wakeup(struct task_struct *p, bool fresh, bool btf)
{
	__u32 tgid = TASK_FIELD(btf, p, tgid), tid = TASK_FIELD(btf, p, pid);
	__u64 now;

	if (!followed(tgid))
		return;
	now = bpf_ktime_get_ns();
	bpf_map_update_elem(&threads, &tid, &now, BPF_NOEXIST);
	if (fresh && per_thread)
		stats_of(tgid, tid);
}

/*
 * A new process: with -p, followed if its parent is (threads share their tgid);
 * its entry made now.
 */
static __always_inline void on_fork(struct task_struct *parent, struct task_struct *child, bool btf)
{
	__u32 ptgid = TASK_FIELD(btf, parent, tgid), ctgid = TASK_FIELD(btf, child, tgid);
	__u8 one = 1;

	if (ptgid == ctgid)
		return;
	if (!system_wide) {
		if (!bpf_map_lookup_elem(&targets, &ptgid))
			return;
		if (bpf_map_update_elem(&targets, &ctgid, &one, BPF_NOEXIST) &&
		    !bpf_map_lookup_elem(&targets, &ctgid)) {
			__sync_fetch_and_add(&targets_full, 1);
			return;
		}
	}
	if (followed(ctgid))
		stats_of(ctgid, 0);
}

/* sched_switch(bool preempt, prev, next, unsigned int prev_state), 5.18+. */
SEC("tp_btf/sched_switch")
int on_switch_btf(__u64 *ctx)
{
	if (test_refuse_btf)
		return ctx[15] != 0;
	on_switch((bool)ctx[0], (void *)ctx[1], (void *)ctx[2], (__u32)ctx[3], true);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int on_wakeup_btf(__u64 *ctx)
{
	on_wakeup((void *)ctx[0], false, true);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int on_wakeup_new_btf(__u64 *ctx)
{
	on_wakeup((void *)ctx[0], true, true);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int on_fork_btf(__u64 *ctx)
{
	on_fork((void *)ctx[0], (void *)ctx[1], true);
	return 0;
}

/* The same where BTF tracepoints cannot be loaded: task pointers are plain numbers. */
SEC("raw_tp/sched_switch")
int on_switch_raw(struct bpf_raw_tracepoint_args *ctx)
{
	on_switch((bool)ctx->args[0], (void *)ctx->args[1], (void *)ctx->args[2],
		  (__u32)ctx->args[3], false);
	return 0;
}

SEC("raw_tp/sched_wakeup")
int on_wakeup_raw(struct bpf_raw_tracepoint_args *ctx)
{
	on_wakeup((void *)ctx->args[0], false, false);
	return 0;
}

SEC("raw_tp/sched_wakeup_new")
int on_wakeup_new_raw(struct bpf_raw_tracepoint_args *ctx)
{
	on_wakeup((void *)ctx->args[0], true, false);
	return 0;
}

SEC("raw_tp/sched_process_fork")
int on_fork_raw(struct bpf_raw_tracepoint_args *ctx)
{
	on_fork((void *)ctx->args[0], (void *)ctx->args[1], false);
	return 0;
}
