/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The contract between profile.bpf.c and pa-record: what one sample record in the
 * `events` ring buffer looks like, and the limits both sides size buffers by.
 * Included by BPF code (after vmlinux.h) and by user space (after <linux/types.h>).
 */
#ifndef PA_PROFILE_H
#define PA_PROFILE_H

#include "gpu.h"

/*
 * Frames kept per stack.  Kernel stacks (and --unwind fp user stacks, both taken by
 * bpf_get_stack) keep perf's default of 127.  The CFI walker goes deeper: a compiler's
 * recursive descent (clang's parser and optimizer) runs past 127 user frames, and a
 * stack cut there never reaches _start.
 */
#define PROFILE_MAX_FRAMES  127
#define PROFILE_MAX_UFRAMES 1023

/* Default size of the `events` ring buffer (power of two, >= page size). */
#define PROFILE_RINGBUF_BYTES (4u << 20)

/* Default capacity of the `targets` map (tgids followed). */
#define PROFILE_MAX_TARGETS 8192

/*
 * Default capacity of the per-thread off-CPU hashes (offcpu_tids, offcpu_works,
 * offcpu_stacks).  One entry per live target thread, allocated on first use, freed
 * when the thread dies; pa-record sizes them with bpf_map__set_max_entries.
 */
#define PROFILE_OFFCPU_THREADS 16384

/* Sampling events (-e) at most: profile_sample.state of an on-CPU sample. */
#define PROFILE_MAX_EVENTS 16

/*
 * The cgroup hierarchy profile_sample.cgroup comes from (rodata cgroup_mode): the
 * unified one, or on a cgroup v1 machine one controller's (all of kubelet's and the
 * container runtimes' hierarchies name a container alike).  The id is the cgroup
 * directory's inode number in that hierarchy's mount.
 */
#define PROFILE_CGROUP_NONE   0
#define PROFILE_CGROUP_V2     1 /* task->cgroups->dfl_cgrp */
#define PROFILE_CGROUP_CPU    2 /* v1: task->cgroups->subsys[cpu_cgrp_id] */
#define PROFILE_CGROUP_MEMORY 3 /* v1: ...[memory_cgrp_id] */
#define PROFILE_CGROUP_PIDS   4 /* v1: ...[pids_cgrp_id] */

/* profile_sample.kind */
#define PROFILE_KIND_CPU    0 /* a cpu-clock tick */
#define PROFILE_KIND_OFFCPU 1 /* a stretch off the CPU: period = ns switched out */
/*
 * The user stack of a thread returning to user space, for the off-CPU samples of
 * that thread sent before it with PROFILE_F_USTACK_LATER: nr_kernel is 0.
 */
#define PROFILE_KIND_USTACK 2
/*
 * A CUDA kernel launch, seen by a uprobe on the launch API: period is the launched
 * kernel's host-side function (0: not known from this API), state its
 * PROFILE_GPU_API_*; the stacks are the launching thread's.
 */
#define PROFILE_KIND_GPU_LAUNCH 3

/*
 * A launch the CUDA adapter saw (its USDT probe pa_gpu:launch, bpf/gpu.h): period is
 * its correlation id.  state PROFILE_GPU_PAIRED: the runtime's uprobe took this
 * thread's stack for the same launch just before (the last GPU_LAUNCH sample of the
 * thread), and no stack follows; 0: the stacks are this launch's.
 */
#define PROFILE_KIND_GPU_CORR 4
#define PROFILE_GPU_PAIRED    1
/* A GPU activity record of the adapter: a struct profile_gpu_rec. */
#define PROFILE_KIND_GPU_REC 5
/* A driver function handle and what it runs (a struct profile_gpu_fn). */
#define PROFILE_KIND_GPU_FN 6

/* The launch APIs probed: the uprobe's cookie, and profile_sample.state. */
#define PROFILE_GPU_API_LAUNCH	  0 /* cudaLaunchKernel(func, ...): func in arg 1 */
#define PROFILE_GPU_API_COOP	  1 /* cudaLaunchCooperativeKernel(func, ...) */
#define PROFILE_GPU_API_LAUNCH_EX 2 /* cudaLaunchKernelExC(config, func, args) */
#define PROFILE_GPU_API_GRAPH	  3 /* cudaGraphLaunch(exec, stream): no kernel */
/* The driver's (libcuda): period is then a CUfunction handle, not a host function. */
#define PROFILE_GPU_API_CU_LAUNCH    4 /* cuLaunchKernel(f, ...), cuLaunchCooperativeKernel */
#define PROFILE_GPU_API_CU_LAUNCH_EX 5 /* cuLaunchKernelEx(config, f, params, extra) */
#define PROFILE_GPU_API_CU_GRAPH     6 /* cuGraphLaunch(exec, stream): no kernel */
#define PROFILE_GPU_API_NR	     7
#define PROFILE_GPU_API_DRIVER(api)  ((api) >= PROFILE_GPU_API_CU_LAUNCH)

/*
 * A launch uprobe's cookie: the API, and where the executable segment holding it
 * lies around its entry (bytes before and after, at most 2^28 - 1 each).
 */
#define PROFILE_GPU_COOKIE(api, before, after)                                                     \
	((__u64)(api) | (__u64)(before) << 8 | (__u64)(after) << 36)
#define PROFILE_GPU_COOKIE_API(c)    ((c)&0xff)
#define PROFILE_GPU_COOKIE_BEFORE(c) (((c) >> 8) & 0xfffffff)
#define PROFILE_GPU_COOKIE_AFTER(c)  ((c) >> 36)
#define PROFILE_GPU_COOKIE_MAX	     0xfffffffULL

/*
 * The driver calls that give a kernel its handle, probed at entry and return (the
 * uprobe's cookie): a launch through the driver names its kernel by that handle.
 */
#define PROFILE_GPU_FN_MODULE  0 /* cuModuleGetFunction(CUfunction *f, CUmodule, name) */
#define PROFILE_GPU_FN_LIBRARY 1 /* cuLibraryGetKernel(CUkernel *k, CUlibrary, name) */
#define PROFILE_GPU_FN_KERNEL  2 /* cuKernelGetFunction(CUfunction *f, CUkernel k) */

/* Slots of the per-CPU scratch buffers (profile.bpf.c's SLOT_*, unwind_bufs, py_bufs). */
#define PROFILE_SLOTS 5

/*
 * How the off-CPU user stack is taken (rodata offcpu_ustack), cheapest first.  A
 * thread blocked in the kernel returns to user space with the user stack it
 * blocked with, so the stack can wait until a stretch is known to be long enough.
 */
#define PROFILE_USTACK_TASK_WORK  0 /* task_work at the return to user space */
#define PROFILE_USTACK_RSEQ	  1 /* rseq threads: at the return to user; others: switch-out */
#define PROFILE_USTACK_SYS_EXIT	  2 /* sleeps: at the system call's exit; others: switch-out */
#define PROFILE_USTACK_SWITCH_OUT 3 /* walked at every switch-out */

/*
 * profile_sample.state for off-CPU samples: why the thread left the CPU, from
 * sched_switch's prev_state.  Bit (1 << state) is what `offcpu_states` selects.
 */
#define PROFILE_STATE_PREEMPT 0 /* still runnable (preempted, or woke before blocking) */
#define PROFILE_STATE_SLEEP   1 /* TASK_INTERRUPTIBLE: sleeps, futex, poll, pipe read */
#define PROFILE_STATE_IO      2 /* TASK_UNINTERRUPTIBLE: disk I/O, D-state waits */
#define PROFILE_STATE_OTHER   3 /* stopped, traced, parked, frozen */
#define PROFILE_STATE_NR      4

/* Slots of the per-CPU `lost` counters. */
#define PROFILE_LOST_CPU	0  /* cpu samples: ring buffer full */
#define PROFILE_LOST_OFFCPU	1  /* off-CPU samples: ring buffer full */
#define PROFILE_LOST_OFFCPU_MAP 2  /* switch-outs not tracked: offcpu_threads full */
#define PROFILE_SHORT_OFFCPU	3  /* off-CPU stretches under offcpu_min_ns: count */
#define PROFILE_SHORT_OFFCPU_NS 4  /* ... and their total ns */
#define PROFILE_LOST_USTACK	5  /* deferred user stacks not scheduled or not matching */
#define PROFILE_UNTRACED_IN	6  /* stretches whose switch-in the tracepoint missed */
#define PROFILE_LOST_TARGETS	7  /* forked processes not followed: targets map full */
#define PROFILE_LOST_STASH	8  /* off-CPU samples dropped: stacks stashed at switch-out gone */
#define PROFILE_KSTACK_CUT	9  /* kernel stacks cut at PROFILE_MAX_FRAMES */
#define PROFILE_USTACK_FP_CUT	10 /* --unwind fp user stacks cut at PROFILE_MAX_FRAMES */
#define PROFILE_LOST_GPU	11 /* GPU launches: ring buffer full */
#define PROFILE_LOST_GPU_REC	12 /* GPU activity records: ring buffer full */
#define PROFILE_GPU_NESTED	13 /* driver launches made by a runtime launch: not counted */
#define PROFILE_GPU_REUSED	14 /* GPU launches over the walk rate: stacks not walked */
#define PROFILE_LOST_NR		15

/* profile_sample.flags */
#define PROFILE_F_KSTACK_ERR   (1u << 0) /* bpf_get_stack failed for the kernel stack */
#define PROFILE_F_USTACK_ERR   (1u << 1) /* the user stack walk failed */
#define PROFILE_F_KERNEL_MODE  (1u << 2) /* the sample interrupted kernel code */
#define PROFILE_F_USTACK_LATER (1u << 3) /* user stack follows: PROFILE_KIND_USTACK */
/* A struct profile_slice_sample: the user stack is to be finished from its slice. */
#define PROFILE_F_SLICE (1u << 4)
/* The Python frames were cut at PY_MAX_FRAMES (or the walk's step limit). */
#define PROFILE_F_PY_CUT (1u << 5)
/* A GPU launch over its thread's walk rate (gpu_walk_ns): not walked, no stacks; it
 * takes the last stack walked in its thread for the same kernel. */
#define PROFILE_F_STACK_REUSED (1u << 6)

/* Python frames kept per sample, each two u64s (python.h's PY_MAX_FRAMES). */
#define PROFILE_MAX_PYFRAMES 256

/*
 * One sample, variable size: header then nr_kernel kernel ips followed by nr_user
 * user ips, each innermost first (ips[0] is the interrupted kernel pc when
 * nr_kernel > 0, else ips[0] is the user pc), then nr_py Python frames as pairs
 * (bpf/python.h).  Only PROFILE_SAMPLE_HDR_SIZE + 8 * (nr_kernel + nr_user +
 * 2 * nr_py) bytes are submitted.
 */
struct profile_sample {
	__u32 pid; /* tgid */
	__u32 tid;
	__u64 time;   /* bpf_ktime_get_ns(): CLOCK_MONOTONIC; off-CPU: switch-in time */
	__u64 period; /* ns of cpu-clock this sample stands for; off-CPU: ns switched out */
	__u32 cpu;    /* off-CPU: the CPU the thread left */
	__u32 flags;  /* PROFILE_F_* */
	__u16 nr_kernel;
	__u16 nr_user;
	__u8 kind;    /* PROFILE_KIND_* */
	__u8 state;   /* off-CPU: PROFILE_STATE_*; on-CPU: the sampling event's index */
	__u16 nr_py;  /* Python frames after the user ips */
	__u64 cgroup; /* the thread's cgroup id in the hierarchy cgroup_mode names */
	__u64 ips[PROFILE_MAX_FRAMES + PROFILE_MAX_UFRAMES + 2 * PROFILE_MAX_PYFRAMES];
};

/* Bytes of a sample before ips[]. */
#define PROFILE_SAMPLE_HDR_SIZE ((unsigned long)&((struct profile_sample *)0)->ips)

/* clang -target bpf writes it and gcc reads it: both must see one layout. */
_Static_assert(sizeof(struct profile_sample) == 48 + 8 * (PROFILE_MAX_FRAMES + PROFILE_MAX_UFRAMES +
							  2 * PROFILE_MAX_PYFRAMES),
	       "profile_sample size");
_Static_assert(__builtin_offsetof(struct profile_sample, time) == 8, "profile_sample.time");
_Static_assert(__builtin_offsetof(struct profile_sample, period) == 16, "profile_sample.period");
_Static_assert(__builtin_offsetof(struct profile_sample, cpu) == 24, "profile_sample.cpu");
_Static_assert(__builtin_offsetof(struct profile_sample, flags) == 28, "profile_sample.flags");
_Static_assert(__builtin_offsetof(struct profile_sample, nr_kernel) == 32,
	       "profile_sample.nr_kernel");
_Static_assert(__builtin_offsetof(struct profile_sample, nr_user) == 34, "profile_sample.nr_user");
_Static_assert(__builtin_offsetof(struct profile_sample, kind) == 36, "profile_sample.kind");
_Static_assert(__builtin_offsetof(struct profile_sample, state) == 37, "profile_sample.state");
_Static_assert(__builtin_offsetof(struct profile_sample, nr_py) == 38, "profile_sample.nr_py");
_Static_assert(__builtin_offsetof(struct profile_sample, cgroup) == 40, "profile_sample.cgroup");
_Static_assert(__builtin_offsetof(struct profile_sample, ips) == 48, "profile_sample.ips");

/*
 * The stack slice of an on-CPU sample whose walk met code it has no table for yet (a
 * process or library just started or mapped, a binary whose table is being
 * compiled): the registers of that frame and a copy of the user stack above its stack
 * pointer, so that pa-record can finish the walk with the same CFI rows once it has
 * loaded them, before it writes the sample.  Such a sample is sent whole, as a
 * struct profile_slice_sample cut to the bytes copied; every other sample pays nothing
 * for it.  Like perf's --call-graph dwarf, but only where the tables are missing: from
 * sp to the end of its page, then page by page up to 32 KiB or a page that cannot be
 * read (the top of the stack).
 */
#define PROFILE_SLICE_BYTES (32u << 10)

struct profile_slice {
	__u64 pc, sp, bp; /* the frame the walk found no table for */
	__u32 at;	  /* its index among the sample's user frames */
	__u32 len;	  /* bytes copied from sp into data */
	__u8 exact;	  /* pc is where the thread was, not a return address */
	__u8 end;	  /* UNWIND_END_* of the walk in the kernel */
	__u8 __pad[6];
	__u64 exec_ns; /* the process's last exec (unwind_execs), 0 if none seen */
	__u8 data[PROFILE_SLICE_BYTES];
};

struct profile_slice_sample {
	struct profile_sample s;
	struct profile_slice slice;
};

_Static_assert(__builtin_offsetof(struct profile_slice, at) == 24, "profile_slice.at");
_Static_assert(__builtin_offsetof(struct profile_slice, exec_ns) == 40, "profile_slice.exec_ns");
_Static_assert(__builtin_offsetof(struct profile_slice, data) == 48, "profile_slice.data");
/* A slice sample's size before its data. */
#define PROFILE_SLICE_HDR_SIZE (sizeof(struct profile_sample) + 48)

_Static_assert(__builtin_offsetof(struct profile_slice_sample, slice.data) ==
		       PROFILE_SLICE_HDR_SIZE,
	       "PROFILE_SLICE_HDR_SIZE");
_Static_assert(__builtin_offsetof(struct profile_slice_sample, slice) ==
		       sizeof(struct profile_sample),
	       "profile_slice_sample.slice");

/* Value of the `targets` map: only presence matters, the byte is for debugging. */
#define PROFILE_TARGET_ROOT  1 /* given by the user (-p, or the started command) */
#define PROFILE_TARGET_CHILD 2 /* found following fork() */

/*
 * A GPU activity record (PROFILE_KIND_GPU_REC): the sample header's fields where a
 * sample has them (period: the records the adapter discarded so far with nobody
 * listening), then the record and the kernel's name as the process had it.
 */
#define PROFILE_GPU_NAME 256

struct profile_gpu_rec {
	__u32 pid, tid;
	__u64 time;	  /* when the records probe fired */
	__u64 unobserved; /* profile_sample.period's place */
	__u32 cpu, flags;
	__u16 nr_kernel, nr_user; /* 0 */
	__u8 kind;		  /* PROFILE_KIND_GPU_REC */
	__u8 state;
	__u16 nr_py;
	struct pa_gpu_rec rec;
	char name[PROFILE_GPU_NAME];
};

_Static_assert(__builtin_offsetof(struct profile_gpu_rec, kind) == 36, "profile_gpu_rec.kind");
_Static_assert(__builtin_offsetof(struct profile_gpu_rec, rec) == 40, "profile_gpu_rec.rec");

/*
 * PROFILE_KIND_GPU_FN: a driver call gave handle (a CUfunction or CUkernel) to the
 * kernel named name, or (name empty) to the kernel the handle alias stands for.
 */
struct profile_gpu_fn {
	__u32 pid, tid;
	__u64 time;
	__u64 handle;
	__u32 cpu, flags;	  /* flags 0 */
	__u16 nr_kernel, nr_user; /* 0 */
	__u8 kind;		  /* PROFILE_KIND_GPU_FN */
	__u8 state;		  /* PROFILE_GPU_FN_* */
	__u16 nr_py;		  /* 0 */
	__u64 cgroup;		  /* 0 */
	__u64 alias;
	char name[PROFILE_GPU_NAME];
};

_Static_assert(__builtin_offsetof(struct profile_gpu_fn, kind) == 36, "profile_gpu_fn.kind");
_Static_assert(__builtin_offsetof(struct profile_gpu_fn, cgroup) == 40, "profile_gpu_fn.cgroup");

#endif /* PA_PROFILE_H */
