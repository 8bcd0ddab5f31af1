// SPDX-License-Identifier: GPL-2.0
/*
 * On-CPU sampling: runs on every cpu-clock tick of every CPU, keeps the ticks of
 * the processes being profiled, and hands pa-record their kernel and user stacks
 * through a ring buffer.  A tp_btf fork hook extends the target set to children.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "profile.h"

char LICENSE[] SEC("license") = "GPL";

/* Set through skel->rodata before load. */
const volatile bool system_wide = false;
const volatile bool no_kernel = false;
const volatile __u32 self_tgid = 0;
/* Wake pa-record only when this much is queued: it polls every 100 ms anyway. */
const volatile __u64 wakeup_bytes = 0;

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

/* A sample is ~2 KiB at full depth: too big for the 512-byte BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct profile_sample);
} scratch SEC(".maps");

/* Samples dropped because the ring buffer was full; user space reads the delta. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

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
 * The user stack, written at s->ips[nr_kernel..].  Frame pointers through
 * bpf_get_stack for now; the CFI unwinder replaces this function.  Returns the
 * number of frames stored, or < 0.
 */
static __always_inline long unwind_user(struct bpf_perf_event_data *ctx, struct profile_sample *s,
					__u32 nr_kernel)
{
	long n;

	if (nr_kernel > PROFILE_MAX_FRAMES)
		return -1;
	n = bpf_get_stack(ctx, &s->ips[nr_kernel], STACK_BYTES, BPF_F_USER_STACK);
	if (n < 0)
		return n;
	return n / sizeof(__u64);
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, zero = 0;
	struct profile_sample *s;
	__u32 nk = 0, nu = 0;
	__u64 size, *cnt, flags = 0;
	long n;

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
	s->flags = 0;
	s->__pad = 0;

	if (!no_kernel) {
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

	n = unwind_user(ctx, s, nk);
	if (n < 0)
		s->flags |= PROFILE_F_USTACK_ERR;
	else
		nu = n;
	if (nu > PROFILE_MAX_FRAMES)
		nu = PROFILE_MAX_FRAMES;

	s->nr_kernel = nk;
	s->nr_user = nu;
	size = PROFILE_SAMPLE_HDR_SIZE + (nk + nu) * sizeof(__u64);
	if (size > sizeof(*s))
		size = sizeof(*s);
	if (wakeup_bytes && bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) < wakeup_bytes)
		flags = BPF_RB_NO_WAKEUP;
	if (bpf_ringbuf_output(&events, s, size, flags)) {
		cnt = bpf_map_lookup_elem(&lost, &zero);
		if (cnt)
			*cnt += 1;
	}
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
