// SPDX-License-Identifier: Apache-2.0
/*
 * Stack slices (bpf/profile.h's profile_slice): an on-CPU walk that met code of a file
 * whose table the kernel did not have yet sent the registers of that frame and a copy
 * of the user stack above it; here the walk is finished by the same rows, in C,
 * through the copy, before the sample is written.  The process's mappings are the
 * ones published to the walker, reloaded when the walk meets a pc outside them; for a
 * process already gone from /proc, the ones the side-band showed since its exec (or
 * fork), read at the end of the round.  With --unwind dwarf every sample has one.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/hash.h"
#include "base/procfs.h"
#include "perfdata/event.h"
#include "profile.skel.h"
#include "record.h"
#include "unwind_priv.h"
#include "base/util.h"

/*
 * The side-band's view of each process's mappings (struct uw_sbproc), kept from its
 * exec or fork until two rounds after its exit, for slices of processes gone before
 * pa-record read /proc/PID/maps.
 */
static struct uw_sbproc *sb_get(struct rec_unwind *u, pid_t pid, bool create)
{
	size_t i;

	for (i = 0; i < u->nr_sb; i++)
		if (u->sb[i].pid == pid)
			return &u->sb[i];
	if (!create || pa_grow((void **)&u->sb, &u->cap_sb, u->nr_sb + 1, sizeof(*u->sb)))
		return NULL;
	u->sb[u->nr_sb] = (struct uw_sbproc){.pid = pid};
	return &u->sb[u->nr_sb++];
}

static void sb_clear(struct uw_sbproc *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->m[i].path);
	p->n = 0;
}

static void sb_forget(struct rec_unwind *u, struct uw_sbproc *p)
{
	sb_clear(p);
	free(p->m);
	*p = u->sb[--u->nr_sb];
}

/* A side-band mapping as /proc/PID/maps would give it (path borrowed). */
static struct proc_map sb_proc_map(const struct uw_sbmap *e)
{
	return (struct proc_map){.start = e->start,
				 .end = e->end,
				 .pgoff = e->pgoff,
				 .maj = e->maj,
				 .min = e->min,
				 .ino = e->ino,
				 .path = e->path};
}

bool rec_unwind_sb_map(struct rec_session *s, pid_t pid, uint64_t addr, struct proc_map *m)
{
	struct uw_sbproc *p = s->uw ? sb_get(s->uw, pid, false) : NULL;
	size_t i;

	for (i = 0; p && i < p->n; i++) {
		const struct uw_sbmap *e = &p->m[i];

		if (addr >= e->start && addr < e->end) {
			*m = sb_proc_map(e);
			return true;
		}
	}
	return false;
}

/* Side-band: pid exec'd (COMM with the exec flag) at time: its mappings start anew. */
void rec_unwind_sb_exec(struct rec_session *s, pid_t pid, uint64_t time)
{
	struct uw_sbproc *p;

	if (!s->uw || !(p = sb_get(s->uw, pid, true)))
		return;
	sb_clear(p);
	p->since = time;
	p->until = 0;
	p->gone_at = 0;
}

/* Side-band: pid forked from ppid at time, with its parent's mappings. */
void rec_unwind_sb_fork(struct rec_session *s, pid_t pid, pid_t ppid, uint64_t time)
{
	struct rec_unwind *u = s->uw;
	struct uw_sbproc *p, *pp;
	size_t i;

	if (!u || !sb_get(u, ppid, false) || !(p = sb_get(u, pid, true)))
		return;
	pp = sb_get(u, ppid, false); /* sb_get(.., true) may have moved it */
	sb_clear(p);
	p->since = time;
	p->until = 0;
	p->gone_at = 0;
	if (pp->gone_at || !pp->n || pa_grow((void **)&p->m, &p->cap, pp->n, sizeof(*p->m)))
		return;
	for (i = 0; i < pp->n; i++) {
		p->m[p->n] = pp->m[i];
		p->m[p->n].path = strdup(pp->m[i].path);
		if (p->m[p->n].path)
			p->n++;
	}
}

/* Side-band: an executable mapping of a file, in a process whose exec or fork it showed. */
void rec_unwind_sb_mmap(struct rec_session *s, const struct pd_mmap *m)
{
	struct uw_sbproc *p;
	struct uw_sbmap e = {
		.start = m->start,
		.end = m->start + m->len,
		.pgoff = m->pgoff,
		.maj = m->maj,
		.min = m->min,
		.ino = m->ino,
	};
	size_t i, j;

	if (!s->uw || !(m->prot & PROT_EXEC) || m->filename[0] != '/' || e.end <= e.start ||
	    !(p = sb_get(s->uw, m->pid, false)) || p->gone_at)
		return;
	/* What it maps over is gone: keep the others, in order of start. */
	for (i = j = 0; i < p->n; i++) {
		if (p->m[i].start < e.end && e.start < p->m[i].end)
			free(p->m[i].path);
		else
			p->m[j++] = p->m[i];
	}
	p->n = j;
	if (p->n >= UNWIND_MAX_MAPS)
		return;
	if (pa_grow((void **)&p->m, &p->cap, p->n + 1, sizeof(*p->m)) ||
	    !(e.path = strdup(m->filename)))
		return;
	for (i = p->n; i > 0 && p->m[i - 1].start > e.start; i--)
		p->m[i] = p->m[i - 1];
	p->m[i] = e;
	p->n++;
}

/* Side-band: the process exited at time; its mappings stay for the slices still to
 * come. */
void rec_unwind_sb_exit(struct rec_session *s, pid_t pid, uint64_t time)
{
	struct uw_sbproc *p;

	if (s->uw && (p = sb_get(s->uw, pid, false)) && !p->gone_at) {
		p->gone_at = s->uw->round + 1;
		p->until = time;
	}
}

/*
 * Finishing a walk from a stack slice (bpf/profile.h's profile_slice): the kernel's
 * walker stepped by the same rows, in C, reading the stack from the slice.
 */
struct uw_walk {
	uint64_t pc, sp, bp;
	bool exact; /* pc is where the thread was, not a return address */
	bool past;  /* a read went past the end of the copy */
	const struct profile_slice *sl;
	uint32_t len; /* bytes of sl->data received */
};

/* 8 bytes of the walked stack at addr, from the slice; false outside it. */
static bool slice_read(struct uw_walk *w, uint64_t addr, uint64_t *v)
{
	const struct profile_slice *sl = w->sl;
	uint64_t len = w->len;

	if (len < 8 || addr < sl->sp)
		return false;
	if (addr - sl->sp > len - 8) {
		w->past = true;
		return false;
	}
	memcpy(v, sl->data + (addr - sl->sp), sizeof(*v));
	return true;
}

/* The row covering pc in the process's mappings pm, as the kernel's walker finds it;
 * *unmapped is set when no mapping covers pc. */
static const struct unwind_row *row_at(const struct rec_unwind *u, const struct unwind_proc *pm,
				       uint64_t pc, bool exact, bool *unmapped)
{
	const struct unwind_table_info *t;
	const struct unwind_map *m;
	uint32_t lo = 0, hi = pm->n < UNWIND_MAX_MAPS ? pm->n : UNWIND_MAX_MAPS, mid;
	uint64_t tpc;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (pm->m[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || pc >= pm->m[lo - 1].end) {
		*unmapped = true;
		return NULL;
	}
	m = &pm->m[lo - 1];
	if (m->table >= u->nr_tables)
		return NULL;
	t = &u->tables[m->table];
	tpc = (exact ? pc : pc - 1) - m->adj;
	if (tpc >> 32)
		return NULL;
	lo = 0;
	hi = t->n;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (u->rows[t->first + mid].pc <= tpc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &u->rows[t->first + lo - 1] : NULL;
}

/* w to its caller by row r (NULL: none, the frame pointer).  1: the walk is
 * complete, -1: it cannot go on, 0: stepped. */
static int uw_step(struct uw_walk *w, const struct unwind_row *r, bool fp)
{
	uint64_t cfa, ra, v;

	switch (r ? UNWIND_ROW_CFA(r) : UNWIND_CFA_NONE) {
	case UNWIND_CFA_OUTERMOST:
		return 1;
	case UNWIND_CFA_SIGNAL:
		if (!slice_read(w, w->sp + UNWIND_SIG_RIP_OFF, &w->pc) ||
		    !slice_read(w, w->sp + UNWIND_SIG_RBP_OFF, &w->bp) ||
		    !slice_read(w, w->sp + UNWIND_SIG_RSP_OFF, &w->sp))
			return -1;
		w->exact = true;
		return 0;
	case UNWIND_CFA_RSP:
		cfa = w->sp + r->cfa_off;
		break;
	case UNWIND_CFA_RBP:
		cfa = w->bp + r->cfa_off;
		break;
	case UNWIND_CFA_PLT:
		cfa = w->sp + r->cfa_off + ((w->pc & 15) >= 11 ? 8 : 0);
		break;
	case UNWIND_CFA_PLT_IBT:
		cfa = w->sp + r->cfa_off + ((w->pc & 15) >= 10 ? 8 : 0);
		break;
	case UNWIND_CFA_DEREF_RBP:
		if (!slice_read(w, w->bp + r->cfa_off, &cfa))
			return -1;
		break;
	default: /* no row, or one the walker cannot follow: the frame pointer */
		if (!fp)
			return -1;
		if (!w->bp)
			return 1;
		if (w->bp <= w->sp || !slice_read(w, w->bp, &v) || !slice_read(w, w->bp + 8, &ra))
			return -1;
		w->sp = w->bp + 16;
		w->bp = v;
		w->pc = ra;
		w->exact = false;
		return ra ? 0 : 1;
	}
	if (cfa <= w->sp || !slice_read(w, cfa - 8, &ra))
		return -1;
	switch (UNWIND_ROW_RBP(r)) {
	case UNWIND_RBP_CFA_OFF:
		if (!slice_read(w, cfa + 8 * r->rbp_off, &w->bp))
			return -1;
		break;
	case UNWIND_RBP_AT_RBP:
		if (!slice_read(w, w->bp + 8 * r->rbp_off, &w->bp))
			return -1;
		break;
	case UNWIND_RBP_UNDEFINED:
		w->bp = 0;
		break;
	default: /* UNWIND_RBP_SAME */
		break;
	}
	w->sp = cfa;
	w->pc = ra;
	w->exact = false;
	return ra ? 0 : 1;
}

/* A walk from a slice: its frames, and how it ended. */
struct uw_result {
	uint64_t n;    /* user frames, the kernel's before the slice's frame included */
	int r;	       /* uw_step's last answer: 1 complete, -1 stopped, 0 depth limit */
	bool past;     /* it needed stack past the copy */
	bool unmapped; /* it met a pc in none of the mappings */
	uint64_t pc;   /* where it stopped */
	__u64 ips[PROFILE_MAX_UFRAMES];
};

/* Walk on from the frame of ss (size bytes) the kernel had no table for, by the
 * mappings in u->val. */
static void slice_walk(const struct rec_session *s, const struct profile_slice_sample *ss,
		       size_t size, struct uw_result *res)
{
	const struct profile_slice *sl = &ss->slice;
	struct uw_walk w = {.pc = sl->pc, .sp = sl->sp, .bp = sl->bp, .exact = sl->exact, .sl = sl};
	bool fp = s->opts.unwind_mode == UNWIND_MODE_AUTO;
	uint64_t n;
	int r = 0;

	/* What came: the BPF side sends the slice cut to the bytes it copied. */
	w.len = sl->len < size - PROFILE_SLICE_HDR_SIZE ? sl->len : size - PROFILE_SLICE_HDR_SIZE;
	res->unmapped = false;
	for (n = sl->at; n < PROFILE_MAX_UFRAMES;) {
		res->ips[n++] = w.pc;
		r = uw_step(&w, row_at(s->uw, s->uw->val, w.pc, w.exact, &res->unmapped), fp);
		if (r)
			break;
	}
	res->n = n;
	res->r = r;
	res->past = w.past;
	res->pc = w.pc;
}

/* The sample of ss written, its user frames finished by res if given:
 * they replace the kernel's (stepped by frame pointer from the slice's frame) when
 * the walk completes or goes further. */
static int slice_write(struct rec_session *s, const struct profile_slice_sample *ss,
		       const struct uw_result *res)
{
	const struct profile_sample *ps = &ss->s;
	const struct profile_slice *sl = &ss->slice;
	uint64_t nk = ps->nr_kernel < PROFILE_MAX_FRAMES ? ps->nr_kernel : PROFILE_MAX_FRAMES;
	uint64_t nu = ps->nr_user < PROFILE_MAX_UFRAMES ? ps->nr_user : PROFILE_MAX_UFRAMES;
	struct rec_unwind *u = s->uw;
	__u64 uips[PROFILE_MAX_UFRAMES];

	memcpy(uips, ps->ips + nk, nu * sizeof(*uips));
	if (!res)
		return rec_write_sample(s, ps, sizeof(*ps), uips, nu, NULL, 0);
	u->slice_why[res->r == 1 ? UW_SLICE_DONE
		     : !res->r	 ? UW_SLICE_DEPTH
		     : res->past ? UW_SLICE_SHORT
				 : UW_SLICE_NOWALK]++;
	if (s->opts.verbose > 1)
		pa_info("unwind: pid %u slice at frame %u of %llu, %u bytes: %s after %llu frames "
			"(pc %llx)",
			ps->pid, sl->at, (unsigned long long)nu, sl->len,
			res->r == 1 ? "complete"
			: res->past ? "past the copy"
				    : "incomplete",
			(unsigned long long)res->n, (unsigned long long)res->pc);
	if (res->r == 1 || res->n > nu) {
		memcpy(uips + sl->at, res->ips + sl->at, (res->n - sl->at) * sizeof(*uips));
		nu = res->n;
	}
	if (res->r == 1 && sl->end != UNWIND_END_COMPLETE && sl->end < UNWIND_END_NR)
		u->slice_fixed[sl->end]++;
	return rec_write_sample(s, ps, sizeof(*ps), uips, nu, NULL, 0);
}

/* Hold a slice while tables compile, or (gone) of a process gone from /proc until the
 * side-band of the round is read. */
static bool slice_hold(struct rec_unwind *u, const void *data, size_t size, bool gone)
{
	struct uw_held *h;

	if (u->nr_held >= UW_MAX_HELD || !(h = malloc(offsetof(struct uw_held, ss) + size)))
		return false;
	h->next = NULL;
	h->size = size;
	h->gone = gone;
	memcpy(&h->ss, data, size);
	if (!u->held)
		u->held_tail = &u->held;
	*u->held_tail = h;
	u->held_tail = &h->next;
	u->nr_held++;
	return true;
}

/*
 * p's mappings as published to the walker into u->val, (re)loaded first if reload;
 * -ESRCH when the process is gone, -ESTALE when they are not the sample's (an exec
 * came between).
 */
static int slice_maps(struct rec_session *s, struct uw_proc *p,
		      const struct profile_slice_sample *ss, bool reload)
{
	struct rec_unwind *u = s->uw;
	uint32_t key = p->pid;
	uint64_t exec_ns;

	if (reload && uw_proc_reload(s, p, pa_now_ns()) == -ESRCH)
		return -ESRCH;
	if (!p->loaded || bpf_map__lookup_elem(s->skel->maps.unwind_procs, &key, sizeof(key),
					       u->val, sizeof(*u->val), 0))
		return -ENOENT;
	/* Looked up after the mappings: the same exec then means they are the sample's. */
	if (bpf_map__lookup_elem(s->skel->maps.unwind_execs, &key, sizeof(key), &exec_ns,
				 sizeof(exec_ns), 0))
		exec_ns = 0;
	return exec_ns == ss->slice.exec_ns ? 0 : -ESTALE;
}

/*
 * A sample sent with a stack slice (PROFILE_F_SLICE): its walk in the kernel met code
 * of no mapping it knew.  The walk is finished through the slice by the same rows,
 * with the process's mappings as loaded, or loaded again when it meets a pc outside
 * them and the sample is newer than their last load.  A process already gone from
 * /proc waits for the side-band of this round (rec_unwind_flush_slices), which showed
 * its mappings.
 */
static int slice_finish(struct rec_session *s, const struct profile_slice_sample *ss, size_t size)
{
	const struct profile_sample *ps = &ss->s;
	struct rec_unwind *u = s->uw;
	struct uw_result res;
	struct uw_proc *p;
	bool loaded;
	int err;

	if (!(p = uw_proc_get(u, ps->pid, true)))
		return slice_write(s, ss, NULL);
	loaded = !p->loaded && pa_now_ns() - p->load_ns >= UW_SLICE_RELOAD_NS;
	err = s->opts.slice_gone ? -ESRCH : slice_maps(s, p, ss, loaded);
	if (!err) {
		slice_walk(s, ss, size, &res);
		if (!res.unmapped || loaded || p->load_ns >= ps->time)
			return slice_write(s, ss, &res);
		err = slice_maps(s, p, ss, true);
		if (!err) {
			slice_walk(s, ss, size, &res);
			return slice_write(s, ss, &res);
		}
	}
	if (err == -ESRCH) {
		if (!s->opts.slice_gone)
			uw_proc_forget(u, p);
		if (slice_hold(u, ss, size, true))
			return 0;
	}
	u->slice_why[err == -ESTALE ? UW_SLICE_EXEC : UW_SLICE_GONE]++;
	return slice_write(s, ss, NULL);
}

/* While tables compile, every slice waits: they may be the ones it needs. */
int rec_unwind_slice(struct rec_session *s, const void *data, size_t size)
{
	const struct profile_slice_sample *ss = data;
	const struct profile_sample *ps = &ss->s;
	uint64_t nu = ps->nr_user < PROFILE_MAX_UFRAMES ? ps->nr_user : PROFILE_MAX_UFRAMES;
	struct rec_unwind *u = s->uw;

	if (size < PROFILE_SLICE_HDR_SIZE)
		return 0;
	if (!u || ss->slice.at >= nu)
		return slice_write(s, ss, NULL);
	u->slices++;
	if (u->compiles && slice_hold(u, data, size, false))
		return 0;
	return slice_finish(s, ss, size);
}

bool rec_unwind_holding(const struct rec_session *s)
{
	return s->uw && s->uw->held;
}

/* u->val from the side-band's mappings of p; false when none has a table. */
static bool sb_load(struct rec_session *s, const struct uw_sbproc *p)
{
	struct unwind_proc *v = s->uw->val;
	bool any = false;
	size_t i;

	memset(v, 0, sizeof(*v));
	for (i = 0; i < p->n && v->n < UNWIND_MAX_MAPS; i++) {
		const struct uw_sbmap *e = &p->m[i];
		struct proc_map m = sb_proc_map(e);
		struct rec_file_ref r;

		rec_file_ref_map(&r, p->pid, &m);
		uw_map_entry(rec_file_get(s, &r, true), &m, &v->m[v->n]);
		any |= v->m[v->n++].table != UNWIND_NO_TABLE;
	}
	return any;
}

/*
 * After the side-band of a round, once no table is compiling: the held slices, those
 * of live processes finished as they came, those of processes gone with the mappings
 * the side-band showed; then the side-band's view of processes gone for two rounds
 * is dropped.
 */
int rec_unwind_flush_slices(struct rec_session *s, bool final)
{
	struct rec_unwind *u = s->uw;
	struct uw_held *h;
	size_t i;
	int err = 0;

	if (!u || (u->compiles && !final))
		return 0;
	while ((h = u->held)) {
		const struct uw_sbproc *p;
		uint64_t t = h->ss.s.time;
		struct uw_result res;
		bool maps;

		u->held = h->next;
		u->nr_held--;
		/* Held for a table: finished now (or held again, its process gone). */
		if (!h->gone) {
			if (!err)
				err = slice_finish(s, &h->ss, h->size);
			free(h);
			continue;
		}
		p = sb_get(u, h->ss.s.pid, false);
		maps = p && t >= p->since && (!p->until || t <= p->until) && sb_load(s, p);
		if (maps) {
			if (s->opts.verbose > 1)
				pa_info("unwind: pid %u gone: its slice walks by the %zu mappings "
					"the side-band showed",
					h->ss.s.pid, p->n);
			slice_walk(s, &h->ss, h->size, &res);
		} else {
			u->slice_why[p && t < p->since ? UW_SLICE_EXEC : UW_SLICE_GONE]++;
		}
		if (!err)
			err = slice_write(s, &h->ss, maps ? &res : NULL);
		free(h);
	}
	u->round++;
	for (i = 0; i < u->nr_sb;) {
		if (u->sb[i].gone_at && u->sb[i].gone_at + 1 < u->round)
			sb_forget(u, &u->sb[i]);
		else
			i++;
	}
	return err;
}

/* "unwind: 287 stack slices: 125 finished, 100 processes gone, ..." */
void uw_slice_summary(const struct rec_unwind *u)
{
	const uint64_t *n = u->slice_why;

	pa_info("unwind: %llu stack slices: %llu finished, %llu of processes gone before their "
		"mappings were read, %llu taken before an exec, %llu deeper than the copy, %llu "
		"with no row or frame pointer to go on by, %llu at the depth limit",
		(unsigned long long)u->slices, (unsigned long long)n[UW_SLICE_DONE],
		(unsigned long long)n[UW_SLICE_GONE], (unsigned long long)n[UW_SLICE_EXEC],
		(unsigned long long)n[UW_SLICE_SHORT], (unsigned long long)n[UW_SLICE_NOWALK],
		(unsigned long long)n[UW_SLICE_DEPTH]);
}

void uw_slices_free(struct rec_unwind *u)
{
	while (u->held) {
		struct uw_held *h = u->held;

		u->held = h->next;
		free(h);
	}
	while (u->nr_sb)
		sb_forget(u, &u->sb[0]);
	free(u->sb);
}
