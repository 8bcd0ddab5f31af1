/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The hybrid user stack walker: per frame, the CFI row compiled from the binary's
 * .eh_frame (bpf/unwind_rows.h) where a table covers the pc, the frame pointer where
 * none does.  Included by profile.bpf.c only; the maps are described in bpf/unwind.h.
 *
 * Each frame is one bpf_loop callback, so the verifier checks one frame's work (two
 * binary searches and a few user reads) once instead of PROFILE_MAX_UFRAMES copies.
 */
#ifndef PA_UNWIND_BPF_H
#define PA_UNWIND_BPF_H

#include "unwind.h"

/* --unwind, set through rodata before load. */
const volatile __u32 unwind_mode = UNWIND_MODE_FP;
/* --unwind dwarf: every on-CPU sample takes a stack slice from its first frame. */
const volatile bool slice_always = false;
/* The most a slice copies (whole pages after sp's): PROFILE_SLICE_BYTES, or SIZE. */
const volatile __u32 slice_bytes = PROFILE_SLICE_BYTES;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* pa-record sizes it */
	__type(key, __u32);
	__type(value, struct unwind_row);
} unwind_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, UNWIND_MAX_TABLES);
	__type(key, __u32);
	__type(value, struct unwind_table_info);
} unwind_tables SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, UNWIND_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct unwind_proc);
} unwind_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, UNWIND_MAX_TABLES);
	__type(key, struct unwind_file_key);
	__type(value, struct unwind_file);
} unwind_files SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} unwind_missing SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} unwind_notify SEC(".maps");

/* tgid -> bpf_ktime_get_ns() of its last exec: a stack slice taken before an exec
 * is not finished with the mappings after it. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, UNWIND_MAX_PROCS);
	__type(key, __u32);
	__type(value, __u64);
} unwind_execs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UNWIND_STATS_NR);
	__type(key, __u32);
	__type(value, __u64);
} unwind_stats SEC(".maps");

/* bpf_find_vma's result: a VMA of a file whose table is loaded (found), or the
 * VMA of pc mapping no file at all (anon: JIT code, never in a table). */
struct unwind_vma {
	__u64 start, end, adj;
	__u32 table;
	__u8 found, anon;
};

/*
 * One walk's registers and bookkeeping.  In the slot's buffer, not on the stack: the
 * verifier follows every constant stored on the stack, and a flag or a counter it can
 * follow makes it check the frame step once per combination of their values
 * (seconds of loading); what a map holds it takes as unknown, and checks once.
 */
struct unwind_walk {
	__u64 pc, sp, bp;
	__u64 rdi; /* the interrupted frame's (UNWIND_CFA_RA_RDI) */
	__u32 pid;
	__u32 cfi, fp;	/* frames stepped each way */
	__u8 exact;	/* pc is where the thread was, not a return address */
	__u8 end;	/* UNWIND_END_*, UNWIND_GOING while walking */
	__u8 missing;	/* some frame had no table */
	__u8 unsup;	/* some frame had an unsupported row */
	__u8 stale;	/* the process's mappings are unknown or out of date */
	__u8 vma_tried; /* vma was looked up (once per walk) */
	__u8 slice;	/* keep the first frame of no known mapping for a stack slice */
	__u8 switched;	/* a frame pointer led down to another stack (once a walk) */
	struct unwind_vma vma;
};

#define UNWIND_GOING 0xff
#define EEXIST	     17 /* errno-base.h */

/* bpf_loop's context, on the stack (a task pointer cannot be kept in a map): whose
 * stack, the current task's when not remote, and the slot of its walk. */
struct unwind_loop {
	struct task_struct *task;
	__u32 slot;
};

/* Where a walk puts its pcs: one slot per context that walks (profile.bpf.c's SLOT_*). */
struct unwind_buf {
	__u64 ips[PROFILE_MAX_UFRAMES];
	struct unwind_walk w;
	__u32 n; /* frames stored */
	/* The first frame in code of no known mapping, for a stack slice
	 * (profile_slice): its index + 1 (0: none) and registers. */
	__u32 slice_at;
	__u64 slice_pc, slice_sp, slice_bp;
	__u8 slice_exact, slice_end;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PROFILE_SLOTS);
	__type(key, __u32);
	__type(value, struct unwind_buf);
} unwind_bufs SEC(".maps");

static __always_inline void unwind_count(__u32 slot, __u64 v)
{
	__u64 *cnt = bpf_map_lookup_elem(&unwind_stats, &slot);

	if (cnt)
		*cnt += v;
}

/*
 * One binary search step without a branch on the probe: a branch per probe makes the
 * verifier walk every path of the search (2^steps) instead of one.  below is 1 when
 * the probed key is above the target, 0 when it is at or below it; both are under
 * 2^63 (user addresses, 32-bit row pcs), so the sign of the difference says it.
 */
static __always_inline void unwind_bsearch_step(__u32 *lo, __u32 *hi, __u32 mid, __u64 key,
						__u64 target)
{
	__u64 below = (target - key) >> 63;
	__u32 mask;

	/* Hide the value so the compiler cannot turn the arithmetic back into a branch. */
	asm volatile("" : "+r"(below));
	mask = (__u32)below - 1; /* all ones when key <= target */
	*lo = (*lo & ~mask) | ((mid + 1) & mask);
	*hi = (*hi & mask) | (mid & ~mask);
}

/*
 * The searches are global functions: the verifier checks each once and sees only a
 * number come back, instead of carrying every exit of one search into the next and
 * into the rest of the frame step (which made loading take seconds).
 */

/* Index in pid's mapping table of the mapping covering pc, or -1. */
__noinline int unwind_map_index(__u32 pid, __u64 pc)
{
	const struct unwind_proc *pm = bpf_map_lookup_elem(&unwind_procs, &pid);
	__u32 lo = 0, hi, mid, i;

	if (!pm || pc >> 63)
		return -1;
	hi = pm->n;
	if (hi > UNWIND_MAX_MAPS)
		hi = UNWIND_MAX_MAPS;
	for (i = 0; i < UNWIND_MAP_STEPS && lo < hi; i++) {
		mid = (lo + hi) / 2;
		unwind_bsearch_step(&lo, &hi, mid, pm->m[mid & (UNWIND_MAX_MAPS - 1)].start, pc);
	}
	if (!lo || pc >= pm->m[(lo - 1) & (UNWIND_MAX_MAPS - 1)].end)
		return -1;
	return (lo - 1) & (UNWIND_MAX_MAPS - 1);
}

/* unwind_lookup's result: the row's type, rbp_off and cfa_off, and what was found. */
#define UNWIND_LK_ROW	  (1ull << 32) /* a row covers the pc: the low 32 bits hold it */
#define UNWIND_LK_NO_MAP  (1ull << 33) /* no mapping covers the pc: mappings stale */
#define UNWIND_LK_TYPE(v) ((__u8)(v))
#define UNWIND_LK_RBP(v)  ((__s8)((v) >> 8))
#define UNWIND_LK_CFA(v)  ((__s16)((v) >> 16))

/* The row of table covering tpc (relative to the table's base), packed, or 0. */
__noinline __u64 unwind_row_at(__u32 table, __u64 tpc)
{
	const struct unwind_table_info *t = bpf_map_lookup_elem(&unwind_tables, &table);
	const struct unwind_row *r;
	__u32 lo = 0, hi, mid, idx, i;

	if (!t || tpc >> 32)
		return 0;
	hi = t->n;
	for (i = 0; i < UNWIND_SEARCH_STEPS && lo < hi; i++) {
		mid = (lo + hi) / 2;
		idx = t->first + mid;
		r = bpf_map_lookup_elem(&unwind_rows, &idx);
		if (!r)
			return 0;
		unwind_bsearch_step(&lo, &hi, mid, r->pc, tpc);
	}
	if (!lo)
		return 0;
	idx = t->first + lo - 1;
	r = bpf_map_lookup_elem(&unwind_rows, &idx);
	if (!r)
		return 0;
	return UNWIND_LK_ROW | (__u64)(__u16)r->cfa_off << 16 | (__u64)(__u8)r->rbp_off << 8 |
	       r->type;
}

#define VM_EXEC_FLAG 0x4

static long unwind_vma_cb(struct task_struct *task __attribute__((unused)),
			  struct vm_area_struct *vma, void *data)
{
	struct unwind_vma *v = data;
	const struct unwind_file *f;
	struct unwind_file_key k;
	struct file *file;
	__u64 pgoff;

	if (!(BPF_CORE_READ(vma, vm_flags) & VM_EXEC_FLAG))
		return 0;
	file = BPF_CORE_READ(vma, vm_file);
	if (!file) {
		v->anon = 1;
		return 0;
	}
	k.dev = BPF_CORE_READ(file, f_inode, i_sb, s_dev);
	k.ino = BPF_CORE_READ(file, f_inode, i_ino);
	f = bpf_map_lookup_elem(&unwind_files, &k);
	if (!f)
		return 0;
	pgoff = BPF_CORE_READ(vma, vm_pgoff) << 12;
	if (pgoff < (f->off & ~4095ull) || pgoff >= f->off + f->filesz)
		return 0;
	v->start = BPF_CORE_READ(vma, vm_start);
	v->end = BPF_CORE_READ(vma, vm_end);
	v->adj = v->start - (f->vaddr + (pgoff - f->off)) + f->base;
	v->table = f->table;
	v->found = 1;
	return 0;
}

/*
 * The current task's VMA holding pc, into *v, where it maps a file whose table is
 * loaded.  Once per walk: in interrupt context the helper unlocks the mm from an
 * irq_work, and refuses (-EBUSY) until that has run.
 */
__noinline int unwind_vma_find(__u64 pc, struct unwind_vma *v)
{
	struct unwind_vma found = {}; /* the helper takes a pointer to the stack only */

	if (!v)
		return 0;
	if (bpf_find_vma(bpf_get_current_task_btf(), pc, unwind_vma_cb, &found, 0))
		found.found = found.anon = 0;
	*v = found;
	return found.found;
}

/*
 * The rule for w's pc (exact: not a return address), packed.  A pc outside the
 * process's known mappings (none yet: a process just forked or exec'd, or a
 * library just mapped) is looked for in the current task's VMAs, once per walk,
 * and the VMA found serves the walk's later frames in the same file: any file
 * whose table is loaded unwinds before its process's mappings are.
 */
static __always_inline __u64 unwind_lookup(struct unwind_walk *w, __u64 pc, bool remote)
{
	const struct unwind_proc *pm;
	const struct unwind_map *m;
	__u64 tpc = w->exact ? pc : pc - 1;
	int i = unwind_map_index(w->pid, pc);

	if (i < 0) {
		if (remote)
			return UNWIND_LK_NO_MAP;
		if (!w->vma_tried) {
			w->vma_tried = 1;
			unwind_vma_find(pc, &w->vma);
		}
		if (!w->vma.found || pc < w->vma.start || pc >= w->vma.end)
			return UNWIND_LK_NO_MAP;
		unwind_count(UNWIND_FRAMES_VMA, 1);
		return UNWIND_LK_NO_MAP | unwind_row_at(w->vma.table, tpc - w->vma.adj);
	}
	pm = bpf_map_lookup_elem(&unwind_procs, &w->pid);
	if (!pm)
		return UNWIND_LK_NO_MAP;
	m = &pm->m[i & (UNWIND_MAX_MAPS - 1)];
	if (m->table == UNWIND_NO_TABLE)
		return 0;
	return unwind_row_at(m->table, tpc - m->adj);
}

/*
 * Why the walk cannot go on: a frame stepped by the frame pointer for lack of a
 * table (or for a row the walker cannot follow) makes whatever fails after it,
 * garbage read through a register that held no frame pointer, that frame's fault.
 */
static __always_inline __u8 unwind_fail_reason(const struct unwind_walk *w)
{
	if (w->missing)
		return UNWIND_END_TABLE_MISSING;
	if (w->unsup)
		return UNWIND_END_UNSUPPORTED;
	return UNWIND_END_READ_FAILED;
}

/*
 * 8 bytes of the walked task's user memory at src: the current task's, or with
 * remote another one's (bpf_copy_from_user_task: sleepable programs only).
 */
static __always_inline long unwind_read(struct task_struct *task, __u64 *dst, __u64 src,
					bool remote)
{
	if (remote)
		return bpf_copy_from_user_task(dst, 8, (void *)src, task, 0);
	return bpf_probe_read_user(dst, 8, (void *)src);
}

/* One frame: store w->pc, then step to the caller.  Returns 1 once the walk ends. */
static __always_inline long unwind_step_in(struct unwind_loop *c, bool remote)
{
	struct task_struct *task = c->task;
	struct unwind_buf *buf = bpf_map_lookup_elem(&unwind_bufs, &c->slot);
	struct unwind_walk *w;
	__u64 pc, sp, bp, cfa, ra, v, lk;
	__u32 n, rule = UNWIND_CFA_NONE, rbp_rule = UNWIND_RBP_SAME;
	__s64 off = 0, rbp_off = 0;

	if (!buf)
		return 1;
	w = &buf->w;
	pc = w->pc;
	sp = w->sp;
	bp = w->bp;
	n = buf->n;
	if (n >= PROFILE_MAX_UFRAMES) {
		w->end = UNWIND_END_DEPTH;
		return 1;
	}
	buf->ips[n] = pc;
	buf->n = n + 1;

	lk = unwind_lookup(w, pc, remote);
	if (lk & UNWIND_LK_NO_MAP)
		w->stale = 1;
	if (lk & UNWIND_LK_ROW) {
		rule = UNWIND_LK_TYPE(lk) & UNWIND_CFA_MASK;
		rbp_rule = UNWIND_LK_TYPE(lk) >> UNWIND_RBP_SHIFT;
		off = UNWIND_LK_CFA(lk);
		rbp_off = UNWIND_LK_RBP(lk);
	}

	/* Only the interrupted frame has its rdi: the sampled registers. */
	if (rule == UNWIND_CFA_RA_RDI && (n || !w->exact))
		rule = UNWIND_CFA_UNSUPPORTED;

	switch (rule) {
	case UNWIND_CFA_OUTERMOST:
		w->end = UNWIND_END_COMPLETE;
		return 1;
	case UNWIND_CFA_RA_RDI:
		w->sp = sp + off;
		w->pc = w->rdi;
		w->exact = 0;
		w->cfi++;
		if (!w->pc) {
			w->end = UNWIND_END_COMPLETE;
			return 1;
		}
		return 0;
	case UNWIND_CFA_SIGNAL:
		/* sp points at the ucontext the kernel pushed: the interrupted registers. */
		if (unwind_read(task, &w->pc, sp + UNWIND_SIG_RIP_OFF, remote) ||
		    unwind_read(task, &w->sp, sp + UNWIND_SIG_RSP_OFF, remote) ||
		    unwind_read(task, &w->bp, sp + UNWIND_SIG_RBP_OFF, remote)) {
			w->end = unwind_fail_reason(w);
			return 1;
		}
		w->exact = 1;
		w->cfi++;
		return 0;
	case UNWIND_CFA_RSP:
		cfa = sp + off;
		break;
	case UNWIND_CFA_RBP:
		cfa = bp + off;
		break;
	case UNWIND_CFA_PLT:
		/* Load bias is page aligned: pc & 15 is the PLT entry's offset. */
		cfa = sp + off + ((pc & 15) >= 11 ? 8 : 0);
		break;
	case UNWIND_CFA_PLT_IBT:
		cfa = sp + off + ((pc & 15) >= 10 ? 8 : 0);
		break;
	case UNWIND_CFA_DEREF_RBP:
		if (unwind_read(task, &cfa, bp + off, remote)) {
			w->end = unwind_fail_reason(w);
			return 1;
		}
		break;
	default:
		/* No table (or a row we cannot follow): the frame pointer. */
		if (lk & UNWIND_LK_ROW)
			w->unsup |= rule == UNWIND_CFA_UNSUPPORTED;
		else
			w->missing = 1;
		/* Code of a file pa-record has not loaded yet: a stack slice from
		 * here lets it finish the walk once it has (not for JIT code). */
		if (w->slice && (lk & UNWIND_LK_NO_MAP) && !(lk & UNWIND_LK_ROW) &&
		    !buf->slice_at && !(w->vma.anon && !w->vma.found)) {
			buf->slice_at = n + 1;
			buf->slice_pc = pc;
			buf->slice_sp = sp;
			buf->slice_bp = bp;
			buf->slice_exact = w->exact;
		}
		if (unwind_mode == UNWIND_MODE_CFI) {
			w->end = unwind_fail_reason(w);
			return 1;
		}
		if (!bp) {
			/* The outermost frame's rbp is 0 (the ABI's chain end). */
			w->end = UNWIND_END_COMPLETE;
			return 1;
		}
		/*
		 * A caller's frame is above, as the stack grows down, except once: Go's
		 * runtime runs C (cgo's asmcgocall) and its own work (systemstack) on the
		 * thread's stack, and from there the frame pointer leads back to the
		 * goroutine's stack, wherever the heap put it.
		 */
		if (bp <= sp) {
			if (w->switched || (bp & 7)) {
				w->end = unwind_fail_reason(w);
				return 1;
			}
			w->switched = 1;
		}
		if (unwind_read(task, &v, bp, remote) || unwind_read(task, &ra, bp + 8, remote)) {
			w->end = unwind_fail_reason(w);
			return 1;
		}
		w->sp = bp + 16;
		w->bp = v;
		w->pc = ra;
		w->exact = 0;
		w->fp++;
		if (!ra) {
			w->end = UNWIND_END_COMPLETE;
			return 1;
		}
		return 0;
	}

	/* The stack grows down: a caller's frame is above.  Anything else is garbage. */
	if (cfa <= sp || unwind_read(task, &ra, cfa - 8, remote)) {
		w->end = unwind_fail_reason(w);
		return 1;
	}
	switch (rbp_rule) {
	case UNWIND_RBP_CFA_OFF:
		if (unwind_read(task, &v, cfa + 8 * rbp_off, remote)) {
			w->end = unwind_fail_reason(w);
			return 1;
		}
		w->bp = v;
		break;
	case UNWIND_RBP_AT_RBP:
		if (unwind_read(task, &v, bp + 8 * rbp_off, remote)) {
			w->end = unwind_fail_reason(w);
			return 1;
		}
		w->bp = v;
		break;
	case UNWIND_RBP_UNDEFINED:
		w->bp = 0;
		break;
	default: /* UNWIND_RBP_SAME */
		break;
	}
	w->sp = cfa;
	w->pc = ra;
	w->exact = 0;
	w->cfi++;
	if (!ra) {
		w->end = UNWIND_END_COMPLETE;
		return 1;
	}
	return 0;
}

static long unwind_step(__u32 i __attribute__((unused)), void *ctx)
{
	return unwind_step_in(ctx, false);
}

static long unwind_step_remote(__u32 i __attribute__((unused)), void *ctx)
{
	return unwind_step_in(ctx, true);
}

/*
 * Ask pa-record to load pid's mappings (why: UNWIND_NOTICE_*).  A walk asks once,
 * until pa-record has looked (unwind_missing); an exec always asks.  A request
 * that cannot be sent is forgotten, so the next walk asks again.
 */
static __always_inline void unwind_ask(__u32 pid, __u32 why)
{
	struct unwind_notice n = {.pid = pid, .why = why};
	__u8 one = 1;
	long err = bpf_map_update_elem(&unwind_missing, &pid, &one,
				       why == UNWIND_NOTICE_EXEC ? BPF_ANY : BPF_NOEXIST);

	if (err) {
		if (err != -EEXIST)
			unwind_count(UNWIND_MISSING_FULL, 1);
		return;
	}
	n.time = bpf_ktime_get_ns();
	if (bpf_ringbuf_output(&unwind_notify, &n, sizeof(n), 0)) {
		unwind_count(UNWIND_NOTIFY_LOST, 1);
		bpf_map_delete_elem(&unwind_missing, &pid);
	}
}

#define PF_KTHREAD_FLAG 0x00200000

/*
 * Walk task's user stack from its saved user registers into s->ips[nr_kernel..]:
 * the current task's, or with remote (sleepable programs) a task that is not
 * running.  With slice, a walk that meets code of a file not loaded yet sets
 * PROFILE_F_SLICE and leaves the frame in the slot's buffer (see submit_slice).
 * Returns the number of frames stored.
 */
static __always_inline long unwind_task(struct profile_sample *s, __u32 nr_kernel, __u32 slot,
					struct task_struct *task, bool remote, bool slice)
{
	struct unwind_loop c = {.task = task, .slot = slot};
	struct unwind_walk *w;
	struct unwind_buf *buf;
	struct pt_regs *regs;
	__u8 end;
	__u32 n;

	if (nr_kernel > PROFILE_MAX_FRAMES)
		return -1;
	if (BPF_CORE_READ(task, flags) & PF_KTHREAD_FLAG)
		return 0;
	/* An exiting task past exit_mm (its memory being torn down) has no user stack
	 * left to walk. */
	if (!BPF_CORE_READ(task, mm)) {
		unwind_count(UNWIND_END_GONE, 1);
		return 0;
	}
	buf = bpf_map_lookup_elem(&unwind_bufs, &slot);
	if (!buf)
		return -1;
	w = &buf->w;
	/* The registers saved at the kernel entry: the interrupted user state, whether
	 * the sample hit user or kernel code, and at a switch out of a syscall. */
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	*w = (struct unwind_walk){
		.pc = BPF_CORE_READ(regs, ip),
		.sp = BPF_CORE_READ(regs, sp),
		.bp = BPF_CORE_READ(regs, bp),
		.rdi = BPF_CORE_READ(regs, di),
		.pid = s->pid,
		.exact = 1,
		.end = UNWIND_GOING,
		.slice = slice && !remote,
	};
	if (!w->pc)
		return 0;
	buf->n = 0;
	buf->slice_at = 0;
	if (slice_always && slice && !remote) {
		buf->slice_at = 1;
		buf->slice_pc = w->pc;
		buf->slice_sp = w->sp;
		buf->slice_bp = w->bp;
		buf->slice_exact = 1;
	}

	/* buf and w stay valid across the loop: the slot's value does not move. */
	bpf_loop(PROFILE_MAX_UFRAMES + 1, remote ? unwind_step_remote : unwind_step, &c, 0);

	end = w->end;
	/*
	 * A task in exec has no user stack to speak of once exec has replaced its
	 * memory: its registers still point into the old program's stack, gone, or
	 * already at the new program's entry.  A walk that did not complete there
	 * read garbage; it is dropped, not counted as a failure of the walker.
	 */
	if (end != UNWIND_END_COMPLETE && BPF_CORE_READ_BITFIELD_PROBED(task, in_execve)) {
		end = UNWIND_END_GONE;
		w->stale = 0;
		buf->n = buf->slice_at = 0;
	}
	if (w->stale)
		unwind_ask(w->pid, UNWIND_NOTICE_WALK);
	unwind_count(end < UNWIND_END_NR ? end : UNWIND_END_DEPTH, 1);
	unwind_count(UNWIND_FRAMES_CFI, w->cfi);
	unwind_count(UNWIND_FRAMES_FP, w->fp);

	n = buf->n;
	if (!n)
		return 0;
	/* Even a walk that ends "complete" there: a frame pointer of 0 in code built
	 * without them ends it early. */
	if (buf->slice_at) {
		buf->slice_end = end;
		s->flags |= PROFILE_F_SLICE;
	}
	if (n > PROFILE_MAX_UFRAMES)
		n = PROFILE_MAX_UFRAMES;
	/* The size must be computed from the clamped n, or the verifier sees no bound. */
	asm volatile("" : "+r"(n));
	if (bpf_probe_read_kernel(&s->ips[nr_kernel], n * sizeof(__u64), buf->ips))
		return -1;
	return n;
}

/* The current task's user stack into s->ips[nr_kernel..]; see unwind_task. */
static __always_inline long unwind_cfi(struct profile_sample *s, __u32 nr_kernel, __u32 slot,
				       bool slice)
{
	return unwind_task(s, nr_kernel, slot, bpf_get_current_task_btf(), false, slice);
}

#endif /* PA_UNWIND_BPF_H */
