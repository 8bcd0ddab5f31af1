/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Python frame walker: for a sample of a CPython 3.11+ process, the sampled
 * thread's PyThreadState (found in the interpreter's thread list by
 * native_thread_id, then cached per tid and checked at each use), and from its
 * current frame the chain of _PyInterpreterFrame.previous, each frame's code object
 * and instruction pointer.  Nothing is resolved here: names, files and lines are
 * read by pa-record (cmd/record/python.c).  Included by profile.bpf.c only; the
 * contract is bpf/python.h.
 */
#ifndef PA_PYTHON_BPF_H
#define PA_PYTHON_BPF_H

#include "python.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PY_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct py_proc);
} py_procs SEC(".maps");

/* tid -> its PyThreadState, trusted only while its native_thread_id says tid. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} py_tstates SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PY_STAT_NR);
	__type(key, __u32);
	__type(value, __u64);
} py_stats SEC(".maps");

/* Where a walk puts its pairs: one slot per context that walks (SLOT_*). */
struct py_buf {
	__u64 f[2 * PY_MAX_FRAMES];
	__u32 n; /* pairs stored */
	__u32 __pad;
	__u8 win[PY_FRAME_WINDOW + 8]; /* the frame being read */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PROFILE_SLOTS);
	__type(key, __u32);
	__type(value, struct py_buf);
} py_bufs SEC(".maps");

/* bpf_loop's context: the process's offsets, copied, and where the walk is. */
struct py_walk {
	struct py_proc p;
	struct task_struct *task; /* whose memory: the current task's when not remote */
	__u64 frame;		  /* next frame to read; the thread state while searching */
	__u32 slot;
	__u32 tid; /* the thread as its process numbers it (native_thread_id) */
	__u32 key; /* ... and as the kernel does (py_tstates) */
	__u8 end;  /* PY_STAT_* that ended it, 0 while going */
	__u8 found;
};

static __always_inline void py_count(__u32 slot, __u64 v)
{
	__u64 *cnt = bpf_map_lookup_elem(&py_stats, &slot);

	if (cnt)
		*cnt += v;
}

/*
 * size bytes at addr of the walked process: the current task's memory, or with
 * remote (sleepable programs) w->task's.  0 or < 0.
 */
static __always_inline long py_read(const struct py_walk *w, void *dst, __u32 size, __u64 addr,
				    bool remote)
{
	if (remote)
		return bpf_copy_from_user_task(dst, size, (void *)addr, w->task, 0);
	return bpf_probe_read_user(dst, size, (void *)addr);
}

static __always_inline __u64 py_read_ptr(const struct py_walk *w, __u64 addr, bool remote)
{
	__u64 v = 0;

	if (!addr || py_read(w, &v, sizeof(v), addr, remote))
		return 0;
	return v;
}

/* The field at offset off of the frame window (offsets checked by pa-record). */
static __always_inline __u64 py_win_u64(const struct py_buf *b, __u16 off)
{
	return *(const __u64 *)&b->win[off & (PY_FRAME_WINDOW - 1)];
}

static __always_inline __u8 py_win_u8(const struct py_buf *b, __u16 off)
{
	return b->win[off & (PY_FRAME_WINDOW - 1)];
}

/* One pair into the walk's buffer; false when it is full. */
static __always_inline bool py_store(struct py_buf *b, __u64 code, __u64 instr)
{
	__u32 n = b->n;

	if (n >= PY_MAX_FRAMES)
		return false;
	b->f[(2 * n) & (2 * PY_MAX_FRAMES - 1)] = code;
	b->f[(2 * n + 1) & (2 * PY_MAX_FRAMES - 1)] = instr;
	b->n = n + 1;
	return true;
}

/* One thread state of the list: is it w->tid's? */
static __always_inline long py_find_step_in(struct py_walk *w, bool remote)
{
	__u64 tid = 0;

	if (!w->frame)
		return 1;
	if (py_read(w, &tid, sizeof(tid), w->frame + w->p.ts_native_tid, remote))
		return 1;
	if (tid == w->tid) {
		w->found = 1;
		return 1;
	}
	w->frame = py_read_ptr(w, w->frame + w->p.ts_next, remote);
	return 0;
}

static long py_find_step(__u32 i __attribute__((unused)), void *ctx)
{
	return py_find_step_in(ctx, false);
}

static long py_find_step_remote(__u32 i __attribute__((unused)), void *ctx)
{
	return py_find_step_in(ctx, true);
}

/* The sampled thread's PyThreadState, 0 if it has none. */
static __always_inline __u64 py_thread_state(struct py_walk *w, bool remote)
{
	__u64 *cached = bpf_map_lookup_elem(&py_tstates, &w->key), ts, tid = 0;

	if (cached) {
		ts = *cached;
		if (!py_read(w, &tid, sizeof(tid), ts + w->p.ts_native_tid, remote) &&
		    tid == w->tid)
			return ts;
	}
	ts = py_read_ptr(w, w->p.interp_head, remote);
	w->frame = ts ? py_read_ptr(w, ts + w->p.threads_head, remote) : 0;
	w->found = 0;
	bpf_loop(PY_MAX_THREADS, remote ? py_find_step_remote : py_find_step, w, 0);
	if (!w->found)
		return 0;
	bpf_map_update_elem(&py_tstates, &w->key, &w->frame, BPF_ANY);
	return w->frame;
}

/* One frame: its pair (or an entry frame's 0 pair), then on to the previous one. */
static __always_inline long py_step_in(struct py_walk *w, bool remote)
{
	struct py_buf *b;
	__u64 code, instr;
	bool entry;

	if (!w->frame)
		return 1;
	b = bpf_map_lookup_elem(&py_bufs, &w->slot);
	if (!b)
		return 1;
	if (py_read(w, b->win, PY_FRAME_WINDOW, w->frame, remote)) {
		w->end = PY_STAT_READ;
		return 1;
	}
	w->frame = py_win_u64(b, w->p.fr_previous);
	if (w->p.fr_owner != PY_NO_FIELD && py_win_u8(b, w->p.fr_owner) >= w->p.owner_skip) {
		/* 3.12+: the entry frame an eval call pushed below its frames. */
		code = instr = 0;
		entry = false;
	} else {
		code = py_win_u64(b, w->p.fr_executable) & w->p.exec_mask;
		instr = py_win_u64(b, w->p.fr_instr);
		/* 3.11: the frame an eval call started with is marked. */
		entry = w->p.fr_is_entry != PY_NO_FIELD && py_win_u8(b, w->p.fr_is_entry);
	}
	if (!py_store(b, code, instr) || (entry && !py_store(b, 0, 0))) {
		w->end = PY_STAT_CUT;
		return 1;
	}
	return 0;
}

static long py_step(__u32 i __attribute__((unused)), void *ctx)
{
	return py_step_in(ctx, false);
}

static long py_step_remote(__u32 i __attribute__((unused)), void *ctx)
{
	return py_step_in(ctx, true);
}

/*
 * The thread's id in the pid namespace numbered ino (its process's, as
 * native_thread_id holds it): the current task's, or with remote w->task's.
 * 0 if it is not in that namespace.
 */
static __always_inline __u32 py_ns_tid(const struct py_walk *w, bool remote)
{
	struct task_struct *task = w->task;
	struct bpf_pidns_info ns;
	struct upid up;
	struct pid *pid;
	__u32 level;

	if (!remote)
		return bpf_get_ns_current_pid_tgid(w->p.ns_dev, w->p.ns_ino, &ns, sizeof(ns))
			       ? 0
			       : ns.pid;
	pid = BPF_CORE_READ(task, thread_pid);
	level = BPF_CORE_READ(pid, level);
	if (!pid || level > 31 ||
	    bpf_probe_read_kernel(&up, sizeof(up), &pid->numbers[level & 31]) ||
	    BPF_CORE_READ(up.ns, ns.inum) != w->p.ns_ino)
		return 0;
	return up.nr;
}

/*
 * The Python frames of thread tid of tgid, as pairs into s->ips[at..]: their number
 * (0: not a Python process or thread).  The current thread's, or with remote
 * (sleepable programs) task's, which is not running.  slot: the caller's SLOT_*.
 */
static __always_inline __u32 py_walk(struct profile_sample *s, __u32 at, __u32 tgid, __u32 tid,
				     __u32 slot, struct task_struct *task, bool remote)
{
	const struct py_proc *p = bpf_map_lookup_elem(&py_procs, &tgid);
	struct py_walk w = {};
	struct py_buf *b;
	__u64 ts, off;
	__u32 n;

	if (!p)
		return 0;
	py_count(PY_STAT_WALKS, 1);
	w.p = *p;
	w.task = task;
	w.slot = slot;
	w.tid = w.key = tid;
	if (w.p.ns_ino) {
		w.tid = py_ns_tid(&w, remote);
		if (!w.tid)
			return 0;
	}
	ts = py_thread_state(&w, remote);
	if (!ts) {
		py_count(PY_STAT_NO_THREAD, 1);
		return 0;
	}
	w.frame = py_read_ptr(&w, ts + w.p.ts_frame, remote);
	if (w.p.cf_frame != PY_NO_FIELD)
		w.frame = py_read_ptr(&w, w.frame ? w.frame + w.p.cf_frame : 0, remote);
	b = bpf_map_lookup_elem(&py_bufs, &slot);
	if (!b)
		return 0;
	b->n = 0;
	bpf_loop(PY_MAX_STEPS, remote ? py_step_remote : py_step, &w, 0);
	if (w.frame && !w.end)
		w.end = PY_STAT_CUT;
	if (w.end)
		py_count(w.end, 1);
	b = bpf_map_lookup_elem(&py_bufs, &slot);
	if (!b)
		return 0;
	n = b->n;
	if (n > PY_MAX_FRAMES)
		n = PY_MAX_FRAMES;
	/* Widened before the check: a bound checked on a 32-bit copy is lost. */
	off = at;
	asm volatile("" : "+r"(off));
	if (off > PROFILE_MAX_FRAMES + PROFILE_MAX_UFRAMES)
		return 0;
	/* Both bounds are seen by the verifier only through the clamped registers. */
	asm volatile("" : "+r"(n));
	asm volatile("" : "+r"(off));
	if (!n || bpf_probe_read_kernel(&s->ips[off], n * 2 * sizeof(__u64), b->f))
		return 0;
	if (w.end == PY_STAT_CUT)
		s->flags |= PROFILE_F_PY_CUT;
	py_count(PY_STAT_FRAMES, n);
	return n;
}

/*
 * The n Python frames of src (at src->ips[from..]) into dst->ips[at..]: a stack
 * stashed at switch-out sent with the kernel stack of the switch-in.  Returns the
 * number copied.
 */
static __always_inline __u32 py_copy(struct profile_sample *dst, __u32 at,
				     const struct profile_sample *src, __u32 from, __u32 n)
{
	__u64 to = at, fr = from;

	asm volatile("" : "+r"(to));
	asm volatile("" : "+r"(fr));
	if (to > PROFILE_MAX_FRAMES + PROFILE_MAX_UFRAMES ||
	    fr > PROFILE_MAX_FRAMES + PROFILE_MAX_UFRAMES || n > PY_MAX_FRAMES)
		return 0;
	asm volatile("" : "+r"(n));
	asm volatile("" : "+r"(to));
	asm volatile("" : "+r"(fr));
	if (!n || bpf_probe_read_kernel(&dst->ips[to], n * 2 * sizeof(__u64), &src->ips[fr]))
		return 0;
	return n;
}

#endif /* PA_PYTHON_BPF_H */
