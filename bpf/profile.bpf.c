// SPDX-License-Identifier: GPL-2.0
/*
 * On-CPU sampling: runs on every cpu-clock tick of every CPU, keeps the ticks of
 * the processes being profiled, and hands pa-record their kernel and user stacks
 * through a ring buffer.  A tp_btf fork hook extends the target set to children.
 *
 * Off-CPU time: on sched_switch, a target thread leaving the CPU has the time and
 * its state stored per thread; when it is switched back in (on any CPU) the
 * stretch is known and, if long enough, emitted as one sample whose period is the
 * ns it spent off the CPU.  A thread blocked in the kernel goes back to user space
 * with the stack it blocked with, so its user stack can wait until the stretch is
 * known to be emitted: taken by a task_work as it returns to user space where the
 * verifier lets a tracepoint schedule one, else as it passes rseq_update on its way
 * back (threads with an rseq area; others are walked at switch-out), else at the
 * exit of the system call it slept in (sleeps; other waits are walked at
 * switch-out), else at every switch-out.  pa-record loads the first of these that
 * the kernel accepts.
 */
/*
 * The map value that carries a task_work needs the type under its kernel name,
 * which vmlinux.h has only when the build machine's kernel does (6.18+).
 */
#define bpf_task_work bpf_task_work___vmlinux
#include "vmlinux.h"
#undef bpf_task_work
struct bpf_task_work {
	__u64 __opaque;
};

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

#include "profile.h"
#include "unwind.bpf.h"
#include "python.bpf.h"

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
/* PROFILE_USTACK_*: when the off-CPU user stack is taken (all but SWITCH_OUT: tp_btf only). */
const volatile __u32 offcpu_ustack = PROFILE_USTACK_SWITCH_OUT;
/* The raw_tp program keeps the switch state by tid (offcpu_tids), not in task storage. */
const volatile bool offcpu_by_tid = false;
/* --dump: a thread runnable all along but not on a CPU gets its stack at the end too. */
const volatile bool open_runnable = false;
/* Tests (PA_RECORD_SKIP_SWITCH_IN): ignore every Nth switch-in that ends a stretch. */
const volatile __u32 skip_switch_in = 0;
__u32 switch_ins_seen;
/* Tests (PA_RECORD_DROP_EVERY): every Nth sample is dropped as if the buffer were full. */
const volatile __u32 drop_every = 0;
__u32 submits_seen;
/* PROFILE_CGROUP_*: the hierarchy profile_sample.cgroup is taken from. */
const volatile __u32 cgroup_mode = PROFILE_CGROUP_NONE;
/* -G: only threads in cgroup_allow's cgroups (or below) are sampled. */
const volatile bool cgroup_filter = false;
/* --gpu-stacks RATE: the ns of credit one launch stack walk costs a thread (1 s /
 * RATE), 0 if every launch is walked. */
const volatile __u64 gpu_walk_ns = 0;
/* bpf_ktime_get_ns() when sampling started and stopped, set by pa-record. */
__u64 offcpu_start_ns = 0;
__u64 offcpu_stop_ns = 0;
/* A user's pa-record (cmd/record/priv.c): the uid whose processes alone are followed;
 * (__u32)-1 when any may be. */
const volatile __u32 owner_uid = (__u32)-1;

/* -G: the ids of the cgroups whose threads are sampled (value unused). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u64);
	__type(value, __u8);
} cgroup_allow SEC(".maps");

typedef int (*task_work_fn)(struct bpf_map *map, void *key, void *value);
extern int bpf_task_work_schedule_resume_impl(struct task_struct *task, struct bpf_task_work *tw,
					      void *map__map, task_work_fn callback,
					      void *aux__prog) __ksym __weak;
extern void bpf_preempt_disable(void) __ksym __weak;
extern void bpf_preempt_enable(void) __ksym __weak;

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

/* With owner_uid: targets that exec'd a program they are not followed into (on_exec),
 * until pa-record reads that exec in the side-band (value unused). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} exec_denied SEC(".maps");

/* Threads whose launch the runtime's uprobe walked, until the adapter's launch
 * probe (on_gpu_corr) takes it: tid -> time.  Kept only once pa-record attached to
 * an adapter (gpu_adapter, set from user space): without one nobody takes them. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} gpu_uprobed SEC(".maps");
bool gpu_adapter;

/*
 * The runtime launch each thread made last, while pa-record probes the driver too
 * (gpu_driver): its stack pointer at entry, the return address stored there, and the
 * code of the file defining it (an executable segment, lo to hi).  The runtime
 * launches through the driver: the first driver launch after it, deeper in the
 * stack, called from that code, with the runtime's return address still in place, is
 * the runtime's own, already counted.
 */
struct gpu_rt_call {
	__u64 sp, ret, lo, hi;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct gpu_rt_call);
} gpu_rt SEC(".maps");
bool gpu_driver;

/*
 * Each launching thread's credit for stack walks (--gpu-stacks): ns of time, gained
 * as time goes by up to one second's worth, spent gpu_walk_ns a walk.
 */
struct gpu_walk {
	__u64 credit, last;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct gpu_walk);
} gpu_walks SEC(".maps");

#define GPU_WALK_CREDIT_MAX 1000000000ULL

/* A driver call giving a kernel its handle, from its entry to its return: tid -> call. */
struct gpu_fn_call {
	__u64 out;    /* where the handle is written */
	__u64 name;   /* the kernel's name (PROFILE_GPU_FN_MODULE, _LIBRARY) */
	__u64 kernel; /* the CUkernel (PROFILE_GPU_FN_KERNEL) */
	__u32 what;   /* PROFILE_GPU_FN_* */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct gpu_fn_call);
} gpu_fn_calls SEC(".maps");

/*
 * A sample is ~2 KiB at full depth: too big for the 512-byte BPF stack.  One slot
 * per context that builds samples, so none overwrites another's on one CPU.
 */
#define SLOT_CPU    0 /* on_sample (cpu-clock interrupt) */
#define SLOT_SWITCH 1 /* sched_switch (interrupts off) */
#define SLOT_USTACK 2 /* the deferred user stack walk (preemption off) */
#define SLOT_OPEN   3 /* offcpu_open, the iterator at the end (migration off) */
#define SLOT_GPU    4 /* a CUDA launch's uprobe */
#define SLOT_NR	    PROFILE_SLOTS

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SLOT_NR);
	__type(key, __u32);
	__type(value, struct profile_sample);
} scratch SEC(".maps");

/*
 * Where a sample with its stack slice is put together before it is copied into the
 * ring at its used size: one per CPU (pa-record sizes it; too big for a per-CPU
 * array's 32 KiB), only for on_sample, which does not nest on a CPU.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct profile_slice_sample);
} slice_bufs SEC(".maps");

/* Drop and skip counters, PROFILE_LOST_* slots; user space reads the deltas. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PROFILE_LOST_NR);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

/*
 * Per thread: when and why it last left the CPU, time 0 once consumed.  Per
 * thread, not per CPU, so a thread that leaves CPU 0 and comes back on CPU 1 is
 * counted once.  This is read on every switch: tp_btf keeps it in task storage,
 * the cheapest lookup there is, and freed with the task; raw_tp, whose task
 * pointers cannot key task storage, in a hash by tid freed at the thread's last
 * switch.
 */
struct offcpu_when {
	__u64 time; /* switch-out, sched_now(); 0: not timing */
	__u32 cpu;  /* the CPU it left */
	__u8 state; /* PROFILE_STATE_* */
	/* PROFILE_USTACK_RSEQ, _SYS_EXIT: samples wait for the user stack at the
	 * return to user space with these user registers (stack pointer, pc). */
	__u8 ustack_pending;
	__u8 __pad[2];
	__u64 user_sp, user_ip;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct offcpu_when);
} offcpu_tasks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, PROFILE_OFFCPU_THREADS);
	__type(key, __u32);
	__type(value, struct offcpu_when);
} offcpu_tids SEC(".maps");

/*
 * PROFILE_USTACK_TASK_WORK: the task_work that takes a thread's user stack, per
 * tid, made at its first emitted stretch (a task_work cannot live in task storage).
 */
struct offcpu_work {
	struct bpf_task_work tw;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, PROFILE_OFFCPU_THREADS);
	__type(key, __u32);
	__type(value, struct offcpu_work);
} offcpu_works SEC(".maps");

/*
 * The scheduler's clock (sched_clock ns) as of this switch: __schedule updates its
 * run queue's just before the tracepoint (unless a yield asked it to skip that,
 * leaving it microseconds old).  Three loads from cur, a trusted pointer to the
 * task running here (its CFS queue's run queue is this CPU's), where
 * bpf_ktime_get_ns() costs ~50 ns on every switch in a VM.  Only ever subtracted
 * from itself (a stretch's length); samples are still stamped with
 * bpf_ktime_get_ns(), when they are emitted.  Kernels without group scheduling have
 * no path there: the plain clock then.
 */
static __always_inline __u64 sched_now(struct task_struct *cur)
{
	if (!bpf_core_field_exists(cur->se.cfs_rq) || !bpf_core_field_exists(cur->se.cfs_rq->rq))
		return bpf_ktime_get_ns();
	return cur->se.cfs_rq->rq->clock;
}

/* now - then, 0 if the CPUs' clocks disagree by more than the stretch. */
static __always_inline __u64 elapsed(__u64 then, __u64 now)
{
	return now > then ? now - then : 0;
}

/*
 * PROFILE_USTACK_SWITCH_OUT: the stacks taken at the last switch-out, per tid.  The
 * ~2 KiB copy of insertion is paid once per thread, not per switch.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, PROFILE_OFFCPU_THREADS);
	__type(key, __u32);
	__type(value, struct profile_sample);
} offcpu_stacks SEC(".maps");

#define STACK_BYTES (PROFILE_MAX_FRAMES * sizeof(__u64))

/*
 * t's cgroup in the hierarchy cgroup_mode names, NULL if none.  Read through
 * task->cgroups, which any program type may do: a cgroup v1 hierarchy is not one
 * bpf_get_current_cgroup_id() knows.  A controller this kernel lacks fails its
 * relocation, in a branch the verifier drops unless pa-record chose it.
 */
static __always_inline struct cgroup *task_cgrp(struct task_struct *t)
{
	struct cgroup_subsys_state *css;
	struct css_set *cset;
	__u32 ssid;

	switch (cgroup_mode) {
	case PROFILE_CGROUP_V2:
		return BPF_CORE_READ(t, cgroups, dfl_cgrp);
	case PROFILE_CGROUP_CPU:
		ssid = bpf_core_enum_value(enum cgroup_subsys_id, cpu_cgrp_id);
		break;
	case PROFILE_CGROUP_MEMORY:
		ssid = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
		break;
	case PROFILE_CGROUP_PIDS:
		ssid = bpf_core_enum_value(enum cgroup_subsys_id, pids_cgrp_id);
		break;
	default:
		return NULL;
	}
	cset = BPF_CORE_READ(t, cgroups);
	if (!cset || ssid >= bpf_core_enum_value(enum cgroup_subsys_id, CGROUP_SUBSYS_COUNT) ||
	    bpf_probe_read_kernel(&css, sizeof(css), &cset->subsys[ssid]) || !css)
		return NULL;
	return BPF_CORE_READ(css, cgroup);
}

/* t's cgroup id (its directory's inode number in the hierarchy), 0 if none. */
static __always_inline __u64 task_cgroup(struct task_struct *t)
{
	struct cgroup *cg = cgroup_mode ? task_cgrp(t) : NULL;

	return cg ? BPF_CORE_READ(cg, kn, id) : 0;
}

static __always_inline __u64 current_cgroup(void)
{
	return task_cgroup((struct task_struct *)bpf_get_current_task());
}

/* Cgroup levels -G looks up from a thread's own. */
#define CGROUP_FILTER_DEPTH 16

/* Whether -G lets the current thread be sampled: its cgroup or an ancestor is one of
 * cgroup_allow's. */
static __always_inline bool cgroup_allowed(void)
{
	struct cgroup *cg, *anc;
	int level, i;
	__u64 id;

	if (!cgroup_filter)
		return true;
	cg = task_cgrp((struct task_struct *)bpf_get_current_task());
	if (!cg)
		return false;
	level = BPF_CORE_READ(cg, level);
	for (i = 0; i < CGROUP_FILTER_DEPTH && i <= level; i++) {
		/* ancestors[level] is cg itself, [0] the root. */
		if (bpf_probe_read_kernel(&anc, sizeof(anc), &cg->ancestors[level - i]) || !anc)
			return false;
		id = BPF_CORE_READ(anc, kn, id);
		if (bpf_map_lookup_elem(&cgroup_allow, &id))
			return true;
	}
	return false;
}

static __always_inline bool is_target(__u32 tgid)
{
	if (tgid == self_tgid)
		return false;
	if (system_wide)
		return true;
	return bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

static __always_inline void count(__u32 slot, __u64 v)
{
	__u64 *cnt = bpf_map_lookup_elem(&lost, &slot);

	if (cnt)
		*cnt += v;
}

/*
 * The user stack, written at s->ips[nr_kernel..]: the CFI walker of unwind.bpf.h, or
 * with --unwind fp frame pointers through bpf_get_stack.  ctx is the program's
 * context (perf_event or tracepoint), NULL in a task_work: the user registers are
 * the current task's either way.  slot is the caller's SLOT_*.  Returns the number
 * of frames stored, or < 0.
 */
static __always_inline long unwind_user(void *ctx, struct profile_sample *s, __u32 nr_kernel,
					__u32 slot)
{
	long n;

	if (nr_kernel > PROFILE_MAX_FRAMES)
		return -1;
	if (unwind_mode != UNWIND_MODE_FP)
		return unwind_cfi(s, nr_kernel, slot, slot == SLOT_CPU);
	if (ctx)
		n = bpf_get_stack(ctx, &s->ips[nr_kernel], STACK_BYTES, BPF_F_USER_STACK);
	else
		n = bpf_get_task_stack(bpf_get_current_task_btf(), &s->ips[nr_kernel], STACK_BYTES,
				       BPF_F_USER_STACK);
	if (n < 0)
		return n;
	n /= sizeof(__u64);
	if (n >= PROFILE_MAX_FRAMES)
		count(PROFILE_USTACK_FP_CUT, 1);
	return n;
}

/*
 * n, what a user stack walk into s returned (frames, < 0: failed), as s->nr_user,
 * then the Python frames of the thread after them: the current thread's, or with
 * remote (sleepable programs) task's.
 */
static __always_inline void set_nr_user_of(struct profile_sample *s, long n, __u32 slot,
					   struct task_struct *task, bool remote)
{
	if (n < 0) {
		s->flags |= PROFILE_F_USTACK_ERR;
		n = 0;
	}
	if (n > PROFILE_MAX_UFRAMES)
		n = PROFILE_MAX_UFRAMES;
	s->nr_user = n;
	s->nr_py = py_walk(s, s->nr_kernel + n, s->pid, s->tid, slot, task, remote);
}

static __always_inline void set_nr_user(struct profile_sample *s, long n, __u32 slot)
{
	set_nr_user_of(s, n, slot, NULL, false);
}

/*
 * The current task's kernel (unless kernel is false) and user stacks into s->ips,
 * nr_kernel/nr_user and the error flags set: the one stack capture both samplers
 * share.  slot: the caller's SLOT_*.
 */
static __always_inline void capture_stacks(void *ctx, struct profile_sample *s, bool kernel,
					   __u32 slot)
{
	__u32 nk = 0;
	long n;

	s->flags = 0;
	if (kernel && !no_kernel) {
		n = bpf_get_stack(ctx, s->ips, STACK_BYTES, 0);
		if (n < 0)
			s->flags |= PROFILE_F_KSTACK_ERR;
		else
			nk = n / sizeof(__u64);
	}
	if (nk >= PROFILE_MAX_FRAMES) {
		nk = PROFILE_MAX_FRAMES;
		count(PROFILE_KSTACK_CUT, 1);
	}
	if (nk)
		s->flags |= PROFILE_F_KERNEL_MODE;

	s->nr_kernel = nk;
	set_nr_user(s, unwind_user(ctx, s, nk, slot), slot);
}

/*
 * pa-record is woken once wakeup_bytes are waiting, not at every sample.  Forced: the
 * kernel's default wakes the reader only when it had read everything before this
 * record, which it has not when the records before went without a wakeup; it would
 * then sleep to its poll timeout while the ring fills.
 */
static __always_inline __u64 wakeup_flags(void)
{
	if (!wakeup_bytes)
		return 0;
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) < wakeup_bytes ? BPF_RB_NO_WAKEUP
									    : BPF_RB_FORCE_WAKEUP;
}

/* Submit the used prefix of s; false if the ring buffer is full. */
static __always_inline bool submit(struct profile_sample *s)
{
	__u64 size;

	/* Pruned by the verifier unless set. */
	if (drop_every && ++submits_seen % drop_every == 0)
		return false;
	size = PROFILE_SAMPLE_HDR_SIZE + (s->nr_kernel + s->nr_user + 2 * s->nr_py) * sizeof(__u64);
	if (size > sizeof(*s))
		size = sizeof(*s);
	return bpf_ringbuf_output(&events, s, size, wakeup_flags()) == 0;
}

/*
 * Submit s whole with the stack slice its walk left in the SLOT_CPU buffer: the
 * registers of the first frame without a table and the user stack from its sp to
 * the end of that page and on, page by page, up to PROFILE_SLICE_BYTES (a page that
 * cannot be read, past the top of the stack, ends it).
 */
static __always_inline bool submit_slice(struct profile_sample *s)
{
	struct profile_slice_sample *r;
	struct unwind_buf *buf;
	__u32 slot = SLOT_CPU, cpu = bpf_get_smp_processor_id(), first, len = 0, i;
	__u64 sp, *exec_ns;

	if (drop_every && ++submits_seen % drop_every == 0)
		return false;
	buf = bpf_map_lookup_elem(&unwind_bufs, &slot);
	r = bpf_map_lookup_elem(&slice_bufs, &cpu);
	if (!buf || !r)
		return false;
	if (bpf_probe_read_kernel(&r->s, sizeof(r->s), s))
		return false;
	sp = buf->slice_sp;
	r->slice.pc = buf->slice_pc;
	r->slice.sp = sp;
	r->slice.bp = buf->slice_bp;
	r->slice.at = buf->slice_at - 1;
	r->slice.exact = buf->slice_exact;
	r->slice.end = buf->slice_end;
	exec_ns = bpf_map_lookup_elem(&unwind_execs, &s->pid);
	r->slice.exec_ns = exec_ns ? *exec_ns : 0;
	first = 4096 - (sp & 4095); /* 1..4096: to the end of sp's page */
	asm volatile("" : "+r"(first));
	if (first > 4096)
		first = 4096;
	if (first && !bpf_probe_read_user(r->slice.data, first, (void *)sp)) {
		len = first;
		for (i = 1; i < PROFILE_SLICE_BYTES / 4096; i++) {
			/* Kept for the verifier, which cannot bound len otherwise. */
			asm volatile("" : "+r"(len));
			if (len > PROFILE_SLICE_BYTES - 4096 || len + 4096 > slice_bytes ||
			    bpf_probe_read_user(r->slice.data + len, 4096, (void *)(sp + len)))
				break;
			len += 4096;
		}
	}
	if (len > PROFILE_SLICE_BYTES)
		len = PROFILE_SLICE_BYTES;
	r->slice.len = len;
	/* Woken at once: the sooner pa-record loads the tables, the fewer slices.  With
	 * --unwind dwarf every sample has one: those wake it like any other sample. */
	return bpf_ringbuf_output(&events, r, PROFILE_SLICE_HDR_SIZE + len,
				  slice_always ? wakeup_flags() : BPF_RB_FORCE_WAKEUP) == 0;
}

/*
 * A sample of sampling event cookie (pa-record's index of it, given at attach) in the
 * current thread, standing for period events: its stacks into the ring buffer.
 */
static __always_inline int sample_current(void *ctx, __u64 period)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, slot = SLOT_CPU;
	struct profile_sample *s;

	if (!is_target(tgid) || !cgroup_allowed())
		return 0;
	s = bpf_map_lookup_elem(&scratch, &slot);
	if (!s)
		return 0;

	s->pid = tgid;
	s->tid = (__u32)id;
	s->time = bpf_ktime_get_ns();
	s->period = period;
	s->cpu = bpf_get_smp_processor_id();
	s->kind = PROFILE_KIND_CPU;
	s->state = bpf_get_attach_cookie(ctx);
	s->nr_py = 0;
	s->cgroup = current_cgroup();
	capture_stacks(ctx, s, true, SLOT_CPU);
	/* A slice is up to 32 KiB: never at the cost of the samples that follow. */
	if ((s->flags & PROFILE_F_SLICE) &&
	    bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >
		    bpf_ringbuf_query(&events, BPF_RB_RING_SIZE) / 2) {
		s->flags &= ~PROFILE_F_SLICE;
		unwind_count(UNWIND_SLICE_SKIPPED, 1);
	}
	if (!(s->flags & PROFILE_F_SLICE) ? !submit(s) : !submit_slice(s))
		count(PROFILE_LOST_CPU, 1);
	return 0;
}

/* A sampling event's overflow: cpu-clock, a software or a hardware event. */
SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	return sample_current(ctx, ctx->sample_period);
}

/* A tracepoint event (-e sched:sched_wakeup): every hit is a sample. */
SEC("tracepoint")
int on_tp_sample(void *ctx)
{
	return sample_current(ctx, 1);
}

/*
 * The GPU probes' scratch slot (SLOT_GPU, and its unwind and Python buffers) is per
 * CPU, but a uprobe program runs with only migration off: on a kernel that preempts
 * fully, another target thread's launch may run on this CPU before the first is
 * done.  The program that takes the slot marks it; one that finds it marked loses
 * its launch (counted) rather than write over the other's.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} gpu_slot_busy SEC(".maps");

/* SLOT_GPU's sample, marked taken in *busy; NULL (the launch counted lost) if taken. */
static __always_inline struct profile_sample *gpu_slot_take(__u32 **busy)
{
	__u32 zero = 0, slot = SLOT_GPU;
	struct profile_sample *s;
	__u32 *b = bpf_map_lookup_elem(&gpu_slot_busy, &zero);

	if (!b)
		return NULL;
	if (*b) {
		count(PROFILE_LOST_GPU, 1);
		return NULL;
	}
	s = bpf_map_lookup_elem(&scratch, &slot);
	if (!s)
		return NULL;
	*b = 1;
	*busy = b;
	return s;
}

/* Nested driver calls lie at most this far below the runtime launch's entry. */
#define GPU_NEST_MAX (256u << 10)

/* Whether thread tid may walk a launch's stack at now, within its walk rate. */
static __always_inline bool gpu_may_walk(__u32 tid, __u64 now)
{
	struct gpu_walk *w, first = {GPU_WALK_CREDIT_MAX - gpu_walk_ns, now};
	__u64 credit;

	if (!gpu_walk_ns)
		return true;
	w = bpf_map_lookup_elem(&gpu_walks, &tid);
	if (!w) {
		bpf_map_update_elem(&gpu_walks, &tid, &first, BPF_ANY);
		return true;
	}
	credit = w->credit + (now > w->last ? now - w->last : 0);
	if (credit > GPU_WALK_CREDIT_MAX)
		credit = GPU_WALK_CREDIT_MAX;
	w->last = now;
	if (credit < gpu_walk_ns) {
		w->credit = credit;
		return false;
	}
	w->credit = credit - gpu_walk_ns;
	return true;
}

/*
 * A CUDA kernel launch (pa-record --gpu): a uprobe on each launch API of the CUDA
 * runtime (libcudart.so, or linked into the executable) and of the driver (libcuda),
 * in any process (the targets are filtered here).  The launching thread's user
 * stack (and Python frames) with the launched function, which pa-record names as the
 * kernel.  A driver launch the runtime makes for its own is not counted again.
 */
SEC("uprobe")
int on_gpu_launch(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), cookie = bpf_get_attach_cookie(ctx);
	/* All read as they are: a load through a computed ctx pointer is refused. */
	__u64 arg1 = PT_REGS_PARM1(ctx), arg2 = PT_REGS_PARM2(ctx), sp = PT_REGS_SP(ctx),
	      ip = PT_REGS_IP(ctx), api = PROFILE_GPU_COOKIE_API(cookie), caller, ret;
	__u32 tgid = id >> 32, tid = (__u32)id, *busy = NULL;
	struct profile_sample *s;
	struct gpu_rt_call *in;
	bool sent;

	if (!is_target(tgid))
		return 0;
	if (PROFILE_GPU_API_DRIVER(api)) {
		in = bpf_map_lookup_elem(&gpu_rt, &tid);
		/* At the entry, the return address is at sp: the caller's. */
		if (in && sp < in->sp && in->sp - sp < GPU_NEST_MAX &&
		    !bpf_probe_read_user(&caller, sizeof(caller), (const void *)sp) &&
		    caller >= in->lo && caller < in->hi &&
		    !bpf_probe_read_user(&ret, sizeof(ret), (const void *)in->sp) &&
		    ret == in->ret) {
			bpf_map_delete_elem(&gpu_rt, &tid);
			count(PROFILE_GPU_NESTED, 1);
			return 0;
		}
	} else if (gpu_driver && !bpf_probe_read_user(&ret, sizeof(ret), (const void *)sp)) {
		struct gpu_rt_call rt = {
			.sp = sp,
			.ret = ret,
			.lo = ip - PROFILE_GPU_COOKIE_BEFORE(cookie),
			.hi = ip + PROFILE_GPU_COOKIE_AFTER(cookie),
		};

		bpf_map_update_elem(&gpu_rt, &tid, &rt, BPF_ANY);
	}
	s = gpu_slot_take(&busy);
	if (!s || !busy)
		return 0;
	s->pid = tgid;
	s->tid = tid;
	s->time = bpf_ktime_get_ns();
	s->period = api == PROFILE_GPU_API_LAUNCH || api == PROFILE_GPU_API_COOP ||
				    api == PROFILE_GPU_API_CU_LAUNCH
			    ? arg1
		    : api == PROFILE_GPU_API_LAUNCH_EX || api == PROFILE_GPU_API_CU_LAUNCH_EX ? arg2
											      : 0;
	s->cpu = bpf_get_smp_processor_id();
	s->kind = PROFILE_KIND_GPU_LAUNCH;
	s->state = api;
	s->nr_py = 0;
	s->cgroup = current_cgroup();
	if (gpu_may_walk(tid, s->time)) {
		capture_stacks(ctx, s, false, SLOT_GPU);
	} else {
		s->flags = PROFILE_F_STACK_REUSED;
		s->nr_kernel = s->nr_user = 0;
		count(PROFILE_GPU_REUSED, 1);
	}
	sent = submit(s);
	/* The CUDA adapter, if loaded, names this launch's correlation id next. */
	if (sent && gpu_adapter)
		bpf_map_update_elem(&gpu_uprobed, &s->tid, &s->time, BPF_ANY);
	*busy = 0;
	if (!sent)
		count(PROFILE_LOST_GPU, 1);
	return 0;
}

/* A driver call that gives a kernel a handle (PROFILE_GPU_FN_*), at its entry. */
SEC("uprobe")
int on_gpu_fn(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), what = bpf_get_attach_cookie(ctx);
	__u64 arg1 = PT_REGS_PARM1(ctx), arg2 = PT_REGS_PARM2(ctx), arg3 = PT_REGS_PARM3(ctx);
	__u32 tid = (__u32)id;
	struct gpu_fn_call c = {.out = arg1, .what = what};

	if (!is_target(id >> 32))
		return 0;
	if (what == PROFILE_GPU_FN_KERNEL)
		c.kernel = arg2;
	else
		c.name = arg3;
	bpf_map_update_elem(&gpu_fn_calls, &tid, &c, BPF_ANY);
	return 0;
}

/* ... and at its return: the handle it gave, if it succeeded, with the name. */
SEC("uretprobe")
int on_gpu_fn_ret(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), rc = PT_REGS_RC(ctx);
	__u32 tid = (__u32)id;
	struct gpu_fn_call *c = bpf_map_lookup_elem(&gpu_fn_calls, &tid);
	struct profile_gpu_fn *e;

	if (!c)
		return 0;
	/* CUresult: CUDA_SUCCESS is 0; a failed call leaves the handle as it was. */
	if ((__u32)rc)
		goto out;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		/* Its launches will be unnamed: lost with the launches the ring lost. */
		count(PROFILE_LOST_GPU, 1);
		goto out;
	}
	e->pid = id >> 32;
	e->tid = tid;
	e->time = bpf_ktime_get_ns();
	e->cpu = bpf_get_smp_processor_id();
	e->flags = 0;
	e->nr_kernel = e->nr_user = e->nr_py = 0;
	e->kind = PROFILE_KIND_GPU_FN;
	e->state = c->what;
	e->cgroup = 0;
	e->alias = c->kernel;
	e->name[0] = 0;
	if (bpf_probe_read_user(&e->handle, sizeof(e->handle), (const void *)c->out) ||
	    !e->handle) {
		bpf_ringbuf_discard(e, 0);
		goto out;
	}
	if (c->name)
		bpf_probe_read_user_str(e->name, sizeof(e->name), (const void *)c->name);
	bpf_ringbuf_submit(e, wakeup_flags());
out:
	bpf_map_delete_elem(&gpu_fn_calls, &tid);
	return 0;
}

/*
 * A launch the CUDA adapter saw (USDT pa_gpu:launch, bpf/gpu.h), in the launching
 * thread.  When the runtime's uprobe took this thread's stack for the same launch
 * (it fires at the API's entry, the adapter's callback inside it), only the
 * correlation id goes out; else (a driver API launch) the stacks are taken here.
 */
SEC("usdt")
int BPF_USDT(on_gpu_corr, __u64 corr)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id, *busy = NULL;
	struct profile_sample *s;
	bool paired, sent;

	if (!is_target(tgid))
		return 0;
	s = gpu_slot_take(&busy);
	if (!s || !busy)
		return 0;
	paired = bpf_map_delete_elem(&gpu_uprobed, &tid) == 0;
	s->pid = tgid;
	s->tid = tid;
	s->time = bpf_ktime_get_ns();
	s->period = corr;
	s->cpu = bpf_get_smp_processor_id();
	s->kind = PROFILE_KIND_GPU_CORR;
	s->state = paired ? PROFILE_GPU_PAIRED : 0;
	s->flags = 0;
	s->nr_kernel = s->nr_user = s->nr_py = 0;
	s->cgroup = current_cgroup();
	if (!paired)
		capture_stacks(ctx, s, false, SLOT_GPU);
	sent = submit(s);
	*busy = 0;
	if (!sent)
		count(PROFILE_LOST_GPU, 1);
	return 0;
}

struct gpu_batch {
	const struct pa_gpu_rec *recs;
	__u64 time, unobserved;
	__u32 pid, tid, cpu;
};

static long gpu_rec_one(__u32 i, void *data)
{
	struct gpu_batch *b = data;
	struct profile_gpu_rec *e;

	/* Pruned by the verifier unless set, as in submit(). */
	if (drop_every && ++submits_seen % drop_every == 0) {
		count(PROFILE_LOST_GPU_REC, 1);
		return 0;
	}
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(PROFILE_LOST_GPU_REC, 1);
		return 0;
	}
	e->pid = b->pid;
	e->tid = b->tid;
	e->time = b->time;
	e->unobserved = b->unobserved;
	e->cpu = b->cpu;
	e->flags = 0;
	e->nr_kernel = e->nr_user = e->nr_py = 0;
	e->kind = PROFILE_KIND_GPU_REC;
	e->state = 0;
	e->name[0] = 0;
	if (bpf_probe_read_user(&e->rec, sizeof(e->rec), &b->recs[i])) {
		bpf_ringbuf_discard(e, 0);
		return 1;
	}
	if (e->rec.name)
		bpf_probe_read_user_str(e->name, sizeof(e->name), (const void *)e->rec.name);
	bpf_ringbuf_submit(e, wakeup_flags());
	return 0;
}

/* A batch of the CUDA adapter's GPU activity records (USDT pa_gpu:records): each
 * goes out with its kernel's name, read while the adapter still holds it. */
SEC("usdt")
int BPF_USDT(on_gpu_records, const struct pa_gpu_rec *recs, __u32 n, __u64 unobserved)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct gpu_batch b = {
		.recs = recs,
		.time = bpf_ktime_get_ns(),
		.unobserved = unobserved,
		.pid = id >> 32,
		.tid = (__u32)id,
		.cpu = bpf_get_smp_processor_id(),
	};

	(void)ctx;
	if (!is_target(b.pid))
		return 0;
	bpf_loop(n < PA_GPU_BATCH ? n : PA_GPU_BATCH, gpu_rec_one, &b, 0);
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
#define EBUSY		     16 /* errno-base.h */

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

/* The entry of map (a tid hash) for tid, made from init if missing; NULL if full. */
static __always_inline void *tid_entry(void *map, __u32 tid, const void *init)
{
	void *v = bpf_map_lookup_elem(map, &tid);

	if (v)
		return v;
	bpf_map_update_elem(map, &tid, init, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, &tid);
}

/*
 * The when-entry of task (tid) for a switch-out (create) or switch-in, from task
 * storage with btf (task is trusted there), else from the tid hash.  One that
 * cannot be made is counted as a switch-out not tracked.
 */
static __always_inline struct offcpu_when *when_of(struct task_struct *task, __u32 tid, bool btf,
						   bool create)
{
	struct offcpu_when zero = {};
	struct offcpu_when *w;

	if (!btf)
		w = create ? tid_entry(&offcpu_tids, tid, &zero)
			   : bpf_map_lookup_elem(&offcpu_tids, &tid);
	else if (create)
		w = bpf_task_storage_get(&offcpu_tasks, task, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	else
		w = bpf_task_storage_get(&offcpu_tasks, task, NULL, 0);
	if (!w && create)
		count(PROFILE_LOST_OFFCPU_MAP, 1);
	return w;
}

/* The off-CPU sample header of s: who (tgid, tid), the CPU it left and why. */
static __always_inline void offcpu_head(struct profile_sample *s, struct task_struct *task,
					__u32 tgid, __u32 tid, __u32 cpu, __u8 state)
{
	s->cgroup = cgroup_mode ? task_cgroup(task) : 0;
	s->pid = tgid;
	s->tid = tid;
	s->cpu = cpu;
	s->kind = PROFILE_KIND_OFFCPU;
	s->state = state;
	s->nr_py = 0;
}

/*
 * PROFILE_USTACK_SWITCH_OUT: the current task's user stack (and with kernel, its
 * kernel stack) into its offcpu_stacks entry.  False if there is no room.
 */
static __always_inline bool stash_stacks(void *ctx, __u32 tgid, __u32 tid, __u8 state, bool kernel)
{
	__u32 slot = SLOT_SWITCH;
	struct profile_sample *seed = bpf_map_lookup_elem(&scratch, &slot);
	struct profile_sample *s;

	if (!seed)
		return false;
	/* Any content: the seed is only copied when the thread has no entry yet. */
	s = tid_entry(&offcpu_stacks, tid, seed);
	if (!s) {
		count(PROFILE_LOST_OFFCPU_MAP, 1);
		return false;
	}
	offcpu_head(s, (struct task_struct *)bpf_get_current_task(), tgid, tid,
		    bpf_get_smp_processor_id(), state);
	capture_stacks(ctx, s, kernel, SLOT_SWITCH);
	return true;
}

/*
 * Whether task's stretch in state has its stacks stashed at switch-out
 * (offcpu_stacks).  PROFILE_USTACK_RSEQ defers the threads that registered an
 * rseq area: the kernel passes rseq_update on their every return to user space
 * after a switch.  PROFILE_USTACK_SYS_EXIT defers only sleeps: they end in a
 * system call's exit, where other waits (a page fault's I/O, a preemption) need
 * not.
 */
static __always_inline bool stashed_at_switch_out(struct task_struct *task, __u8 state)
{
	if (offcpu_ustack == PROFILE_USTACK_RSEQ)
		return !BPF_CORE_READ(task, rseq);
	return offcpu_ustack == PROFILE_USTACK_SWITCH_OUT ||
	       (offcpu_ustack == PROFILE_USTACK_SYS_EXIT && state != PROFILE_STATE_SLEEP);
}

/*
 * When task last came onto a CPU: sched_info's stamp, the run queue's clock like
 * sched_now(), set at every switch-in whether or not the tracepoint fired.  0 on
 * kernels without CONFIG_SCHED_INFO.
 */
static __always_inline __u64 last_arrival(struct task_struct *task)
{
	if (!bpf_core_field_exists(task->sched_info.last_arrival))
		return 0;
	return BPF_CORE_READ(task, sched_info.last_arrival);
}

/*
 * w's stretch ended without a sched_switch for its switch-in: some kernels switch
 * to a thread without the tracepoint (seen after certain tasks of a VM's init, for
 * perf's sched:sched_switch as much as for BPF).  Found at the thread's next
 * switch-out, exit or the end of the recording, it ended when the thread last
 * arrived on a CPU.  Sent with the stacks stashed at its switch-out where the
 * method stashes them, else (task_work) without a stack: its time is kept, its
 * place is unknown.
 */
static __always_inline void emit_untraced(struct offcpu_when *w, struct task_struct *task,
					  __u32 tgid, __u32 tid)
{
	__u32 slot = SLOT_SWITCH;
	struct profile_sample *s = NULL;
	__u64 delta = elapsed(w->time, last_arrival(task));

	w->time = 0;
	count(PROFILE_UNTRACED_IN, 1);
	if (delta < offcpu_min_ns)
		return;
	if (stashed_at_switch_out(task, w->state))
		s = bpf_map_lookup_elem(&offcpu_stacks, &tid);
	if (!s) {
		s = bpf_map_lookup_elem(&scratch, &slot);
		if (!s)
			return;
		offcpu_head(s, task, tgid, tid, w->cpu, w->state);
		s->flags = 0;
		s->nr_kernel = 0;
		s->nr_user = 0;
	}
	s->time = bpf_ktime_get_ns();
	s->period = delta;
	if (!submit(s))
		count(PROFILE_LOST_OFFCPU, 1);
}

/* tid's last switch: it never comes back, free what it had. */
static __always_inline void forget(struct offcpu_when *w, __u32 tid, bool btf)
{
	w->ustack_pending = 0;
	if (!btf)
		bpf_map_delete_elem(&offcpu_tids, &tid);
	if (offcpu_ustack == PROFILE_USTACK_TASK_WORK)
		bpf_map_delete_elem(&offcpu_works, &tid);
	else
		bpf_map_delete_elem(&offcpu_stacks, &tid);
}

/*
 * prev (the current task) leaves the CPU at now: remember when and why.  Unless
 * the user stack is deferred, take it now too (it cannot be read from another
 * task later); from tp_btf (btf) the kernel stack, the costly part, is taken at
 * switch-in and only for stretches that are emitted.
 */
static __always_inline void offcpu_out(void *ctx, bool preempt, struct task_struct *prev,
				       __u32 prev_state, __u64 now, bool btf)
{
	__u64 id = btf ? (__u64)prev->tgid << 32 | (__u32)prev->pid : bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct offcpu_when *w;
	__u8 state;

	if (!tid)
		return;
	/* A thread with an entry was a target when it was made: skip that lookup. */
	w = when_of(prev, tid, btf, false);
	if (!w && !is_target(tgid))
		return;
	/* Still timing: it came back, unseen, since its last switch-out. */
	if (w && w->time)
		emit_untraced(w, prev, tgid, tid);
	if (prev_state & (TASK_DEAD | EXIT_DEAD | EXIT_ZOMBIE)) {
		if (w)
			forget(w, tid, btf);
		return;
	}
	state = switch_state(preempt, prev_state);
	if (!(offcpu_states & (1u << state))) {
		if (w)
			w->time = 0;
		return;
	}
	if (!w) {
		/* Kernel threads of -a would bury the targets' waits under their idling. */
		if (system_wide && (BPF_CORE_READ(prev, flags) & PF_KTHREAD))
			return;
		w = when_of(prev, tid, btf, true);
		if (!w)
			return;
	}
	w->cpu = bpf_get_smp_processor_id();
	w->state = state;
	if (stashed_at_switch_out(prev, state) && !stash_stacks(ctx, tgid, tid, state, !btf)) {
		w->time = 0;
		return;
	}
	w->time = now;
}

/*
 * next's kernel stack into out, taken now that next is about to run: its kernel
 * stack is still the one it blocked in.  Returns the number of frames.
 */
static __always_inline __u32 task_kstack(struct profile_sample *out, struct task_struct *next)
{
	long n;

	if (no_kernel)
		return 0;
	n = bpf_get_task_stack(next, out->ips, STACK_BYTES, 0);
	if (n < 0) {
		out->flags |= PROFILE_F_KSTACK_ERR;
		return 0;
	}
	n /= sizeof(__u64);
	if (n >= PROFILE_MAX_FRAMES) {
		n = PROFILE_MAX_FRAMES;
		count(PROFILE_KSTACK_CUT, 1);
	}
	if (n)
		out->flags |= PROFILE_F_KERNEL_MODE;
	return n;
}

/* The header of a PROFILE_KIND_USTACK record for thread tgid:tid, no frames yet. */
static __always_inline void ustack_head(struct profile_sample *s, __u32 tgid, __u32 tid)
{
	s->pid = tgid;
	s->tid = tid;
	s->time = bpf_ktime_get_ns();
	s->period = 0;
	s->cpu = bpf_get_smp_processor_id();
	s->flags = 0;
	s->nr_kernel = 0;
	s->nr_user = 0;
	s->kind = PROFILE_KIND_USTACK;
	s->state = 0;
	s->nr_py = 0;
	s->cgroup = 0;
}

/*
 * In the thread's own context as it returns to user space (or exits): the user
 * stack it blocked with, for the samples sent at its switch-in.  Preemption stays
 * off so that no other walk on this CPU shares the slot.  If the record is
 * dropped, pa-record writes the samples waiting for it without it, after a
 * second, and counts them.
 */
static __always_inline void send_ustack(void)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 slot = SLOT_USTACK;
	struct profile_sample *s;

	bpf_preempt_disable();
	s = bpf_map_lookup_elem(&scratch, &slot);
	if (s) {
		ustack_head(s, id >> 32, (__u32)id);
		set_nr_user(s, unwind_user(NULL, s, 0, SLOT_USTACK), SLOT_USTACK);
		submit(s);
	}
	bpf_preempt_enable();
}

/*
 * No user stack will come for the samples of tgid:tid held so far: an empty
 * record releases them (each counted by pa-record as written without one).
 */
static __always_inline void send_no_ustack(__u32 tgid, __u32 tid)
{
	__u64 buf[PROFILE_SAMPLE_HDR_SIZE / sizeof(__u64)];
	struct profile_sample *s = (struct profile_sample *)buf;

	ustack_head(s, tgid, tid);
	s->flags = PROFILE_F_USTACK_ERR;
	count(PROFILE_LOST_USTACK, 1);
	bpf_ringbuf_output(&events, buf, sizeof(buf), 0);
}

/* PROFILE_USTACK_TASK_WORK: the task_work's callback, as tid returns to user space. */
static int offcpu_ustack_work(struct bpf_map *map __attribute__((unused)), __u32 *tid,
			      struct offcpu_work *wk __attribute__((unused)))
{
	if (*tid == (__u32)bpf_get_current_pid_tgid())
		send_ustack();
	return 0;
}

/* Ask for next's user stack when it returns to user space; false if it will not come. */
static __always_inline bool ustack_later(struct task_struct *next, __u32 tid)
{
	struct offcpu_work zero = {}, *wk = tid_entry(&offcpu_works, tid, &zero);
	int err;

	if (!wk)
		return false;
	/* -EBUSY: a walk is already pending, and it will serve this stretch too. */
	err = bpf_task_work_schedule_resume_impl(next, &wk->tw, &offcpu_works,
						 (task_work_fn)offcpu_ustack_work, NULL);
	return !err || err == -EBUSY;
}

/*
 * PROFILE_USTACK_RSEQ, _SYS_EXIT: next's user stack is to be taken as it returns to
 * user space (rseq_update), or at the exit of the system call it slept in
 * (sys_exit), known by the user registers it entered the kernel with.  A stack
 * still pending for other registers is for a wait that went back to user space
 * without passing there: it will not come.
 */
static __always_inline void ustack_at_return(struct offcpu_when *w, struct task_struct *next,
					     __u32 tid)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(next);
	__u64 sp = PT_REGS_SP_CORE(regs), ip = PT_REGS_IP_CORE(regs);

	if (w->ustack_pending && (w->user_sp != sp || w->user_ip != ip))
		send_no_ustack(next->tgid, tid);
	w->user_sp = sp;
	w->user_ip = ip;
	w->ustack_pending = 1;
}

/*
 * tp_btf: the sample of w's stretch that ends now, as next (thread tid) comes
 * back: its kernel stack, and the user stack stashed at switch-out or taken later
 * as it returns to user space.
 */
static __always_inline void emit_at_switch_in(struct offcpu_when *w, struct task_struct *next,
					      __u32 tid, __u64 delta)
{
	__u32 slot = SLOT_SWITCH, nk, nu = 0;
	struct profile_sample *out = bpf_map_lookup_elem(&scratch, &slot);
	struct profile_sample *st = NULL;

	if (!out)
		return;
	out->flags = 0;
	if (stashed_at_switch_out(next, w->state)) {
		st = bpf_map_lookup_elem(&offcpu_stacks, &tid);
		if (!st) {
			count(PROFILE_LOST_STASH, 1);
			return;
		}
		out->flags = st->flags;
		nu = st->nr_user;
	}
	offcpu_head(out, next, next->tgid, tid, w->cpu, w->state);
	/* Stamped at switch-in, when the length is known: stamps stay in time order. */
	out->time = bpf_ktime_get_ns();
	out->period = delta;
	nk = task_kstack(out, next);
	if (nu > PROFILE_MAX_UFRAMES)
		nu = PROFILE_MAX_UFRAMES;
	if (st && nu && bpf_probe_read_kernel(&out->ips[nk], nu * sizeof(__u64), st->ips))
		nu = 0;
	out->nr_kernel = nk;
	out->nr_user = nu;
	/* The stash holds no kernel frames: its Python frames follow its user ones. */
	if (st && nu && !st->nr_kernel)
		out->nr_py = py_copy(out, nk + nu, st, nu, st->nr_py);
	if (offcpu_ustack == PROFILE_USTACK_TASK_WORK) {
		if (ustack_later(next, tid))
			out->flags |= PROFILE_F_USTACK_LATER;
		else
			count(PROFILE_LOST_USTACK, 1);
	} else if (!st) {
		ustack_at_return(w, next, tid);
		out->flags |= PROFILE_F_USTACK_LATER;
	}
	if (!submit(out))
		count(PROFILE_LOST_OFFCPU, 1);
}

/* next comes back at now: if its switch-out was remembered, the stretch is known. */
static __always_inline void offcpu_in(struct task_struct *next, __u64 now, bool btf)
{
	struct offcpu_when *w;
	struct profile_sample *s;
	__u64 delta;
	__u32 tid;

	/* tp_btf reads next directly; raw_tp's next is a plain number to the verifier. */
	tid = btf ? next->pid : BPF_CORE_READ(next, pid);
	if (!tid)
		return;
	w = when_of(next, tid, btf, false);
	if (!w || !w->time)
		return;
	/* Pruned by the verifier unless set: untraced switch-ins on demand. */
	if (skip_switch_in && ++switch_ins_seen % skip_switch_in == 0)
		return;
	delta = elapsed(w->time, now);
	w->time = 0;
	if (delta < offcpu_min_ns) {
		count(PROFILE_SHORT_OFFCPU, 1);
		count(PROFILE_SHORT_OFFCPU_NS, delta);
		return;
	}
	if (btf) {
		emit_at_switch_in(w, next, tid, delta);
		return;
	}
	/* raw_tp: both stacks were taken at switch-out. */
	s = bpf_map_lookup_elem(&offcpu_stacks, &tid);
	if (!s) {
		count(PROFILE_LOST_STASH, 1);
		return;
	}
	s->time = bpf_ktime_get_ns();
	s->period = delta;
	if (!submit(s))
		count(PROFILE_LOST_OFFCPU, 1);
}

/*
 * sched_switch(bool preempt, prev, next, unsigned int prev_state), 5.18+.  prev and
 * next are trusted task pointers here: they key task storage, and next's kernel
 * stack can be taken at switch-in.  One clock read serves both sides.
 */
SEC("tp_btf/sched_switch")
int on_switch_btf(__u64 *ctx)
{
	struct task_struct *prev = (void *)ctx[1], *next = (void *)ctx[2];
	__u64 now = sched_now(prev); /* prev is the current task */

	offcpu_out(ctx, (bool)ctx[0], prev, (__u32)ctx[3], now, true);
	offcpu_in(next, now, true);
	return 0;
}

/*
 * The same where BTF tracepoints cannot be attached.  prev and next are plain
 * numbers to the verifier here: state is kept by tid and both stacks are taken at
 * switch-out.
 */
SEC("raw_tp/sched_switch")
int on_switch_raw(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *prev = (void *)ctx->args[1], *next = (void *)ctx->args[2];
	__u64 now = sched_now(bpf_get_current_task_btf());

	offcpu_out(ctx, (bool)ctx->args[0], prev, (__u32)ctx->args[3], now, false);
	offcpu_in(next, now, false);
	return 0;
}

/*
 * The current thread goes back to user space with user registers regs: if a stack
 * is pending for it and the registers are those it entered the kernel with, its
 * user stack is the one it blocked with; with others it went back some other way
 * and has run since, and its held samples get no user stack.
 */
static __always_inline void ustack_returning(struct task_struct *cur, struct offcpu_when *w,
					     struct pt_regs *regs)
{
	if (!w->ustack_pending)
		return;
	w->ustack_pending = 0;
	if (PT_REGS_SP_CORE(regs) == w->user_sp && PT_REGS_IP_CORE(regs) == w->user_ip)
		send_ustack();
	else
		send_no_ustack(cur->tgid, cur->pid);
}

/*
 * The current thread goes back to user space with w's stretch still open: it came
 * back through a switch-in the tracepoint did not report (emit_untraced()).  Where
 * its stacks were not stashed at switch-out, the user stack it goes back to is the
 * one it blocked with, since it has not run in user space since: that is sent, so
 * the stretch keeps its place.  The kernel stack it blocked in is gone.
 */
static __always_inline void emit_returned(struct offcpu_when *w, struct task_struct *cur)
{
	__u32 slot = SLOT_USTACK;
	struct profile_sample *s;
	__u64 delta;

	if (stashed_at_switch_out(cur, w->state)) {
		emit_untraced(w, cur, cur->tgid, cur->pid);
		return;
	}
	delta = elapsed(w->time, last_arrival(cur));
	w->time = 0;
	count(PROFILE_UNTRACED_IN, 1);
	if (delta < offcpu_min_ns)
		return;
	bpf_preempt_disable();
	s = bpf_map_lookup_elem(&scratch, &slot);
	if (s) {
		offcpu_head(s, cur, cur->tgid, cur->pid, w->cpu, w->state);
		s->time = bpf_ktime_get_ns();
		s->period = delta;
		s->flags = 0;
		s->nr_kernel = 0;
		set_nr_user(s, unwind_user(NULL, s, 0, SLOT_USTACK), SLOT_USTACK);
		if (!submit(s))
			count(PROFILE_LOST_OFFCPU, 1);
	}
	bpf_preempt_enable();
}

/*
 * PROFILE_USTACK_RSEQ, _SYS_EXIT: the current thread goes back to user space (or
 * exits) with user registers regs.  Target threads pay a task storage lookup;
 * others, which have no task storage, a load or two.
 */
static __always_inline void returning(struct pt_regs *regs)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct offcpu_when *w = bpf_task_storage_get(&offcpu_tasks, cur, NULL, 0);

	if (!w)
		return;
	/* The pending stack first: it is for an earlier stretch than an open one. */
	ustack_returning(cur, w, regs);
	if (w->time)
		emit_returned(w, cur);
}

/*
 * PROFILE_USTACK_RSEQ: a thread with an rseq area (glibc registers one for every
 * thread) passes here on its way back to user space after every switch-out, from
 * a system call, a page fault or an interrupt alike.
 */
SEC("tp_btf/rseq_update")
int on_rseq_update(__u64 *ctx __attribute__((unused)))
{
	returning((struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf()));
	return 0;
}

/*
 * PROFILE_USTACK_RSEQ: a thread that dies in the kernel (a fatal signal is handled
 * before rseq on the way out) never passes rseq_update: its stack is taken as it
 * exits, while its memory is still mapped.
 */
SEC("tp_btf/sched_process_exit")
int on_exit_ustack(__u64 *ctx __attribute__((unused)))
{
	returning((struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf()));
	return 0;
}

/*
 * PROFILE_USTACK_SYS_EXIT: a thread whose sleep was emitted leaves the system call
 * it slept in.  Every system call on the machine passes here.
 */
SEC("tp_btf/sys_exit")
int on_sys_exit(__u64 *ctx)
{
	returning((struct pt_regs *)ctx[0]);
	return 0;
}

/*
 * The state of a thread that has not run since before sampling started (-p and
 * -- CMD targets only), from what it is doing now; false if it is runnable (with
 * open_runnable: only if it is on a CPU, whose saved registers are stale).
 */
static __always_inline bool blocked_all_along(struct task_struct *task, __u8 *state)
{
	__u32 st = task->__state;

	if (system_wide || !is_target(task->tgid))
		return false;
	if (st == TASK_RUNNING && (!open_runnable || task->on_cpu))
		return false;
	*state = switch_state(false, st);
	return true;
}

/*
 * Run once over every task when recording stops, after sched_switch is detached:
 * a target thread still off the CPU gets the stretch up to now, whose end no
 * switch-in will ever report.  That is a thread whose switch-out was seen, or,
 * for -p and -- CMD, one that has not switched at all since sampling started (a
 * thread blocked all along: a deadlock, an idle worker).  Sleepable, so the user
 * stack of a thread that is not running can be read, and taken now.
 */
SEC("iter.s/task")
int offcpu_open(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	__u32 slot = SLOT_OPEN, tid, nk;
	struct profile_sample *s;
	struct offcpu_when *w;
	__u64 now, late, period;
	__u8 state;

	if (!task || (task->flags & PF_KTHREAD) || (__u32)task->tgid == self_tgid)
		return 0;
	tid = task->pid;
	now = bpf_ktime_get_ns();
	/* The iterator runs a little after the stop: each stretch ends at the stop. */
	late = offcpu_stop_ns && now > offcpu_stop_ns ? now - offcpu_stop_ns : 0;
	w = when_of(task, tid, !offcpu_by_tid, false);
	if (w && w->time && last_arrival(task) > w->time) {
		/* Back on a CPU since, through a switch the tracepoint did not see. */
		emit_untraced(w, task, task->tgid, tid);
		return 0;
	}
	if (w && w->time) {
		/* This CPU's clock may be a tick old: close enough at the end. */
		period = elapsed(w->time, sched_now(bpf_get_current_task_btf()) - late);
		state = w->state;
	} else if (!w && blocked_all_along(task, &state)) {
		period = offcpu_start_ns ? elapsed(offcpu_start_ns, now - late) : 0;
	} else {
		return 0;
	}
	if (!period || period < offcpu_min_ns || !(offcpu_states & (1u << state)))
		return 0;
	s = bpf_map_lookup_elem(&scratch, &slot);
	if (!s)
		return 0;
	offcpu_head(s, task, task->tgid, tid, w ? w->cpu : BPF_CORE_READ(task, thread_info.cpu),
		    state);
	s->time = now;
	s->period = period;
	s->flags = 0;
	nk = task_kstack(s, task);
	s->nr_kernel = nk;
	set_nr_user_of(s, unwind_task(s, nk, SLOT_OPEN, task, true, false), SLOT_OPEN, task, true);
	if (!submit(s))
		count(PROFILE_LOST_OFFCPU, 1);
	return 0;
}

/*
 * A new process whose parent is followed is followed too (threads share the tgid).
 * It starts with its parent's mappings, so it starts with a copy of the parent's
 * unwind entry: its first samples unwind fully, with no round trip to pa-record
 * (until it execs or maps new code, which it then reports).
 */
SEC("tp_btf/sched_process_fork")
int on_fork(__u64 *ctx)
{
	struct task_struct *parent = (void *)ctx[0], *child = (void *)ctx[1];
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	const struct unwind_proc *pm;
	const struct py_proc *py;
	__u8 v = PROFILE_TARGET_CHILD;

	if (ptgid == ctgid)
		return 0;
	if (!system_wide && bpf_map_lookup_elem(&targets, &ptgid)) {
		if (bpf_map_update_elem(&targets, &ctgid, &v, BPF_ANY))
			count(PROFILE_LOST_TARGETS, 1);
		/* A pid used again: what its last process did is not this one's. */
		if (owner_uid != (__u32)-1)
			bpf_map_delete_elem(&exec_denied, &ctgid);
	}
	if (unwind_mode == UNWIND_MODE_FP)
		return 0;
	pm = bpf_map_lookup_elem(&unwind_procs, &ptgid);
	if (pm && bpf_map_update_elem(&unwind_procs, &ctgid, pm, BPF_ANY))
		unwind_count(UNWIND_FORK_LOST, 1);
	/* A forked interpreter (multiprocessing) keeps its parent's addresses. */
	py = bpf_map_lookup_elem(&py_procs, &ptgid);
	if (py)
		bpf_map_update_elem(&py_procs, &ctgid, py, BPF_ANY);
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

/*
 * A process's unwind entry, copied at fork and maybe never known to pa-record (-a),
 * goes when its group leader is freed: after every thread has exited, and after
 * sched_process_exit, where a thread killed in its sleep still has its user stack
 * walked.
 */
SEC("tp_btf/sched_process_free")
int on_free(__u64 *ctx)
{
	struct task_struct *p = (void *)ctx[0];
	__u32 tgid = BPF_CORE_READ(p, tgid);

	if ((__u32)BPF_CORE_READ(p, pid) != tgid)
		return 0;
	bpf_map_delete_elem(&unwind_procs, &tgid);
	bpf_map_delete_elem(&unwind_missing, &tgid);
	bpf_map_delete_elem(&py_procs, &tgid);
	return 0;
}

/*
 * Whether the current task, just exec'd, is still the owner's to follow: every uid is
 * owner_uid, its gids are one, it holds no capability.  A setuid, setgid or
 * file-capability program is not: there the kernel ends a user's perf events too
 * (begin_new_exec calls perf_event_exit_task when the program is not dumpable).
 */
static __always_inline bool exec_keeps_owner(void)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	const struct cred *c = BPF_CORE_READ(task, cred);
	__u64 caps = 0;
	__u32 gid;

	if (BPF_CORE_READ(c, uid.val) != owner_uid || BPF_CORE_READ(c, euid.val) != owner_uid ||
	    BPF_CORE_READ(c, suid.val) != owner_uid || BPF_CORE_READ(c, fsuid.val) != owner_uid)
		return false;
	gid = BPF_CORE_READ(c, gid.val);
	if (BPF_CORE_READ(c, egid.val) != gid || BPF_CORE_READ(c, sgid.val) != gid ||
	    BPF_CORE_READ(c, fsgid.val) != gid)
		return false;
	/* kernel_cap_t is 64 bits: one u64 since 6.3, two u32 before. */
	bpf_core_read(&caps, sizeof(caps), &c->cap_permitted);
	return caps == 0;
}

/*
 * exec replaced the process's mappings: forget them, and ask pa-record for the new
 * ones now (the binary and its interpreter are mapped), not at the first walk.  A
 * user's target that exec'd a privileged program is followed no more.
 */
SEC("tp_btf/sched_process_exec")
int on_exec(__u64 *ctx __attribute__((unused)))
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u8 one = 1;

	if (owner_uid != (__u32)-1 && is_target(tgid) && !exec_keeps_owner()) {
		bpf_map_delete_elem(&targets, &tgid);
		bpf_map_update_elem(&exec_denied, &tgid, &one, BPF_ANY);
	}
	bpf_map_delete_elem(&py_procs, &tgid);
	if (unwind_mode == UNWIND_MODE_FP)
		return 0;
	bpf_map_delete_elem(&unwind_procs, &tgid);
	if (is_target(tgid)) {
		__u64 now = bpf_ktime_get_ns();

		bpf_map_update_elem(&unwind_execs, &tgid, &now, BPF_ANY);
		unwind_ask(tgid, UNWIND_NOTICE_EXEC);
	}
	return 0;
}
