// SPDX-License-Identifier: GPL-2.0
/*
 * On-CPU sampling: runs on every cpu-clock tick of every CPU, keeps the ticks of
 * the processes being profiled, and hands pa-record their kernel and user stacks
 * through a ring buffer.  A tp_btf fork hook extends the target set to children.
 *
 * Off-CPU time: on sched_switch, a target thread leaving the CPU has its stacks
 * and the time stored under its tid; when it is switched back in (on any CPU) the
 * stretch is emitted as one sample whose period is the ns it spent off the CPU.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "profile.h"
#include "unwind.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Set through skel->rodata before load. */
const volatile bool system_wide = false;
const volatile bool no_kernel = false;
const volatile __u32 self_tgid = 0;
/* Wake pa-record only when this much is queued: it polls every 100 ms anyway. */
const volatile __u64 wakeup_bytes = 0;
/* Off-CPU stretches shorter than this are counted, not emitted. */
const volatile __u64 offcpu_min_ns = 0;
/* Bit (1 << PROFILE_STATE_*) set: that state is recorded. */
const volatile __u32 offcpu_states = 1u << PROFILE_STATE_SLEEP | 1u << PROFILE_STATE_IO;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PROFILE_MAX_TARGETS);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, PROFILE_RINGBUF_BYTES);
} events SEC(".maps");

/*
 * A sample is ~2 KiB at full depth: too big for the 512-byte BPF stack.  Slot 0 is
 * the cpu sampler's, slot 1 the seed of new offcpu_start entries, slot 2 where an
 * off-CPU sample is put together at switch-in.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 3);
	__type(key, __u32);
	__type(value, struct profile_sample);
} scratch SEC(".maps");

/* Drop and skip counters, PROFILE_LOST_* slots; user space reads the deltas. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PROFILE_LOST_NR);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

/*
 * Per thread (tid): the stacks and time of its last switch-out, time 0 once
 * consumed.  Keyed by tid, not CPU, so a thread that leaves CPU 0 and comes back
 * on CPU 1 is counted once.  The entry lives as long as the thread, so the ~2 KiB
 * copy of insertion is paid once per thread, not per switch.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, PROFILE_OFFCPU_THREADS);
	__type(key, __u32);
	__type(value, struct profile_sample);
} offcpu_start SEC(".maps");

#define STACK_BYTES (PROFILE_MAX_FRAMES * sizeof(__u64))

static __always_inline bool is_target(__u32 tgid)
{
	if (tgid == self_tgid)
		return false;
	if (system_wide)
		return true;
	return bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

/*
 * The user stack, written at s->ips[nr_kernel..]: the CFI walker of unwind.bpf.h, or
 * with --unwind fp frame pointers through bpf_get_stack.  ctx is the program's
 * context (perf_event or tracepoint): the user registers are the current task's
 * either way.  slot is the caller's unwind_bufs slot.  Returns the number of frames
 * stored, or < 0.
 */
static __always_inline long unwind_user(void *ctx, struct profile_sample *s, __u32 nr_kernel,
					__u32 slot)
{
	long n;

	if (nr_kernel > PROFILE_MAX_FRAMES)
		return -1;
	if (unwind_mode != UNWIND_MODE_FP)
		return unwind_cfi(s, nr_kernel, slot);
	n = bpf_get_stack(ctx, &s->ips[nr_kernel], STACK_BYTES, BPF_F_USER_STACK);
	if (n < 0)
		return n;
	return n / sizeof(__u64);
}

static __always_inline void count(__u32 slot, __u64 v)
{
	__u64 *cnt = bpf_map_lookup_elem(&lost, &slot);

	if (cnt)
		*cnt += v;
}

/*
 * The current task's kernel (unless kernel is false) and user stacks into s->ips,
 * nr_kernel/nr_user and the error flags set: the one stack capture both samplers
 * share.  slot: the caller's unwind_bufs slot.
 */
static __always_inline void capture_stacks(void *ctx, struct profile_sample *s, bool kernel,
					   __u32 slot)
{
	__u32 nk = 0, nu = 0;
	long n;

	s->flags = 0;
	if (kernel && !no_kernel) {
		n = bpf_get_stack(ctx, s->ips, STACK_BYTES, 0);
		if (n < 0)
			s->flags |= PROFILE_F_KSTACK_ERR;
		else
			nk = n / sizeof(__u64);
	}
	if (nk > PROFILE_MAX_FRAMES)
		nk = PROFILE_MAX_FRAMES;
	if (nk)
		s->flags |= PROFILE_F_KERNEL_MODE;

	n = unwind_user(ctx, s, nk, slot);
	if (n < 0)
		s->flags |= PROFILE_F_USTACK_ERR;
	else
		nu = n;
	if (nu > PROFILE_MAX_FRAMES)
		nu = PROFILE_MAX_FRAMES;
	s->nr_kernel = nk;
	s->nr_user = nu;
}

/* Submit the used prefix of s; a full ring buffer counts in slot lost_slot. */
static __always_inline void submit(struct profile_sample *s, __u32 lost_slot)
{
	__u64 size, flags = 0;

	size = PROFILE_SAMPLE_HDR_SIZE + (s->nr_kernel + s->nr_user) * sizeof(__u64);
	if (size > sizeof(*s))
		size = sizeof(*s);
	if (wakeup_bytes && bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) < wakeup_bytes)
		flags = BPF_RB_NO_WAKEUP;
	if (bpf_ringbuf_output(&events, s, size, flags))
		count(lost_slot, 1);
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, zero = 0;
	struct profile_sample *s;

	if (!is_target(tgid))
		return 0;
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;

	s->pid = tgid;
	s->tid = (__u32)id;
	s->time = bpf_ktime_get_ns();
	s->period = ctx->sample_period;
	s->cpu = bpf_get_smp_processor_id();
	s->kind = PROFILE_KIND_CPU;
	s->state = 0;
	s->__pad = 0;
	capture_stacks(ctx, s, true, 0);
	submit(s, PROFILE_LOST_CPU);
	return 0;
}

/* task_struct->__state bits (include/linux/sched.h), stable kernel ABI. */
#define TASK_RUNNING	     0x0000
#define TASK_INTERRUPTIBLE   0x0001
#define TASK_UNINTERRUPTIBLE 0x0002
#define EXIT_DEAD	     0x0010
#define EXIT_ZOMBIE	     0x0020
#define TASK_DEAD	     0x0080
#define PF_KTHREAD	     0x00200000

/*
 * preempt is true for involuntary switches; prev_state is what the scheduler acted
 * on (TASK_RUNNING when a pending signal cancelled the sleep), so a task that stays
 * runnable is "preempted" whatever its __state said.
 */
static __always_inline __u8 switch_state(bool preempt, __u32 prev_state)
{
	if (preempt || prev_state == TASK_RUNNING)
		return PROFILE_STATE_PREEMPT;
	if (prev_state & TASK_INTERRUPTIBLE)
		return PROFILE_STATE_SLEEP;
	if (prev_state & TASK_UNINTERRUPTIBLE)
		return PROFILE_STATE_IO;
	return PROFILE_STATE_OTHER;
}

/*
 * prev (the current task) leaves the CPU: remember when, why and where.  With
 * defer_kstack only the user stack is taken now (it cannot be read from another
 * task later); the kernel stack, the costly part, is taken at switch-in and only
 * for stretches that are emitted.
 */
static __always_inline void offcpu_out(void *ctx, bool preempt, struct task_struct *prev,
				       __u32 prev_state, bool defer_kstack)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id, one = 1;
	struct profile_sample *s;
	__u8 state;

	if (!tid || !is_target(tgid))
		return;
	if (prev_state & (TASK_DEAD | EXIT_DEAD | EXIT_ZOMBIE)) {
		/* Its last switch: it never comes back, free the entry. */
		bpf_map_delete_elem(&offcpu_start, &tid);
		return;
	}
	/* Kernel threads of -a would bury the targets' waits under their idling. */
	if (system_wide && (BPF_CORE_READ(prev, flags) & PF_KTHREAD))
		return;
	state = switch_state(preempt, prev_state);
	s = bpf_map_lookup_elem(&offcpu_start, &tid);
	if (!(offcpu_states & (1u << state))) {
		if (s)
			s->time = 0;
		return;
	}
	if (!s) {
		struct profile_sample *seed = bpf_map_lookup_elem(&scratch, &one);

		if (!seed)
			return;
		if (bpf_map_update_elem(&offcpu_start, &tid, seed, BPF_NOEXIST) &&
		    !bpf_map_lookup_elem(&offcpu_start, &tid)) {
			count(PROFILE_LOST_OFFCPU_MAP, 1);
			return;
		}
		s = bpf_map_lookup_elem(&offcpu_start, &tid);
		if (!s)
			return;
	}
	s->pid = tgid;
	s->tid = tid;
	s->cpu = bpf_get_smp_processor_id();
	s->kind = PROFILE_KIND_OFFCPU;
	s->state = state;
	s->__pad = 0;
	capture_stacks(ctx, s, !defer_kstack, 1);
	/* Last: a non-zero time marks the entry complete. */
	s->time = bpf_ktime_get_ns();
}

/*
 * The sample for s with next's kernel stack, taken now that next is about to run
 * (its kernel stack is still the one it blocked in), followed by the user stack
 * stored at switch-out.  NULL if there is no room.
 */
static __always_inline struct profile_sample *with_task_kstack(struct profile_sample *s,
							       struct task_struct *next)
{
	__u32 two = 2, nk = 0, nu = s->nr_user;
	struct profile_sample *out = bpf_map_lookup_elem(&scratch, &two);
	long n;

	if (!out)
		return NULL;
	out->pid = s->pid;
	out->tid = s->tid;
	out->cpu = s->cpu;
	out->kind = s->kind;
	out->state = s->state;
	out->__pad = 0;
	out->flags = s->flags;
	if (!no_kernel) {
		n = bpf_get_task_stack(next, out->ips, STACK_BYTES, 0);
		if (n < 0)
			out->flags |= PROFILE_F_KSTACK_ERR;
		else
			nk = n / sizeof(__u64);
	}
	if (nk > PROFILE_MAX_FRAMES)
		nk = PROFILE_MAX_FRAMES;
	if (nk)
		out->flags |= PROFILE_F_KERNEL_MODE;
	if (nu > PROFILE_MAX_FRAMES)
		nu = PROFILE_MAX_FRAMES;
	if (nu && bpf_probe_read_kernel(&out->ips[nk], nu * sizeof(__u64), s->ips))
		nu = 0;
	out->nr_kernel = nk;
	out->nr_user = nu;
	return out;
}

/* next comes back: if its switch-out was remembered, the stretch is known now. */
static __always_inline void offcpu_in(struct task_struct *next, bool defer_kstack)
{
	__u32 tid = BPF_CORE_READ(next, pid);
	struct profile_sample *s, *out;
	__u64 now, delta;

	if (!tid)
		return;
	s = bpf_map_lookup_elem(&offcpu_start, &tid);
	if (!s || !s->time)
		return;
	now = bpf_ktime_get_ns();
	delta = now - s->time;
	s->time = 0;
	if (delta < offcpu_min_ns) {
		count(PROFILE_SHORT_OFFCPU, 1);
		count(PROFILE_SHORT_OFFCPU_NS, delta);
		return;
	}
	out = defer_kstack ? with_task_kstack(s, next) : s;
	if (!out)
		return;
	/* Stamped at switch-in, when the length is known: stamps stay in time order. */
	out->time = now;
	out->period = delta;
	submit(out, PROFILE_LOST_OFFCPU);
	s->time = 0;
}

/*
 * sched_switch(bool preempt, prev, next, unsigned int prev_state), 5.18+.  next is
 * a trusted task pointer here, so its kernel stack can be taken at switch-in.
 */
SEC("tp_btf/sched_switch")
int on_switch_btf(__u64 *ctx)
{
	struct task_struct *prev = (void *)ctx[1], *next = (void *)ctx[2];

	offcpu_out(ctx, (bool)ctx[0], prev, (__u32)ctx[3], true);
	offcpu_in(next, true);
	return 0;
}

/*
 * The same where BTF tracepoints cannot be attached.  next is a plain number to
 * the verifier here: both stacks are taken at switch-out.
 */
SEC("raw_tp/sched_switch")
int on_switch_raw(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *prev = (void *)ctx->args[1], *next = (void *)ctx->args[2];

	offcpu_out(ctx, (bool)ctx->args[0], prev, (__u32)ctx->args[3], false);
	offcpu_in(next, false);
	return 0;
}

/* A new process whose parent is followed is followed too (threads share the tgid). */
SEC("tp_btf/sched_process_fork")
int on_fork(__u64 *ctx)
{
	struct task_struct *parent = (void *)ctx[0], *child = (void *)ctx[1];
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	__u8 v = PROFILE_TARGET_CHILD;

	if (system_wide || ptgid == ctgid)
		return 0;
	if (bpf_map_lookup_elem(&targets, &ptgid))
		bpf_map_update_elem(&targets, &ctgid, &v, BPF_ANY);
	return 0;
}

/*
 * Forget a process once its last thread exits (signal->live reached zero), so a
 * recycled pid is not profiled by mistake.  A single thread's exit keeps it.
 */
SEC("tp_btf/sched_process_exit")
int on_exit(__u64 *ctx)
{
	/* Older kernels pass only the task; newer ones add group_dead after it. */
	struct task_struct *p = (void *)ctx[0];
	__u32 tgid = BPF_CORE_READ(p, tgid);

	if (system_wide)
		return 0;
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	bpf_map_delete_elem(&targets, &tgid);
	return 0;
}

/* exec replaced the process's mappings: forget them until pa-record loads the new ones. */
SEC("tp_btf/sched_process_exec")
int on_exec(__u64 *ctx __attribute__((unused)))
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (unwind_mode == UNWIND_MODE_FP)
		return 0;
	bpf_map_delete_elem(&unwind_procs, &tgid);
	return 0;
}
