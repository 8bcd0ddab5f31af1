// SPDX-License-Identifier: Apache-2.0
/*
 * Python frames in samples.  For each process running a CPython interpreter
 * (proc_load finds its file), py_procs tells the BPF walker where the interpreter
 * keeps its thread states and frames; the walker hands back, per sample, each Python
 * frame's code object and instruction pointer (bpf/python.h).  Here each code object
 * is read once from the process (process_vm_readv, cached, checked again at each
 * sample since a freed code object's address is reused), its function interned, and
 * the frame put in place of the native _PyEval_EvalFrameDefault frame that ran it.
 *
 * How perf sees them: every Python function is a function of the capture's synthetic
 * ELF file (synthsym.c), mapped in each Python process; a frame is the address of its
 * line there.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/hash.h"
#include "base/procfs.h"
#include "base/util.h"
#include "profile.skel.h"
#include "python.h"
#include "record.h"

#define PY_MAX_CODES (1u << 20) /* code objects cached */

struct py_pid {
	pid_t pid;
	struct cpython_layout l;
	uint64_t runtime; /* _PyRuntime in the process; 0: none (exec'd away) */
	struct {
		uint64_t lo, hi;
	} eval[2];	    /* _PyEval_EvalFrameDefault (and .cold) in the process */
	uint64_t code_type; /* cpython_code_read's cache */
};

/* A code object as read: what its frames need, and what tells it is still the same. */
struct py_code {
	pid_t pid;
	uint32_t fn;
	uint64_t co;
	uint64_t qualname, linetable; /* the objects it pointed to */
	uint8_t *tab;		      /* its line table */
	uint32_t tab_len;
	int first;
};

struct rec_python {
	struct py_pid *pids;
	size_t nr_pids, cap_pids;
	struct hidx pid_idx;

	struct py_code *codes;
	size_t nr_codes, cap_codes;
	struct hidx code_idx;

	int64_t unknown_fn; /* the function of frames whose code was not read, -1: none yet */

	/* counters */
	uint64_t samples, frames, unresolved, rereads, no_eval;
};

static uint64_t pid_hash(pid_t pid)
{
	return hash_mix(0, (uint64_t)pid);
}

static bool pid_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct rec_python *py = ctx;

	return py->pids[id].pid == *(const pid_t *)key;
}

static struct py_pid *pid_find(struct rec_python *py, pid_t pid)
{
	int64_t id = hidx_find(&py->pid_idx, pid_hash(pid), pid_eq, py, &pid);

	return id < 0 ? NULL : &py->pids[id];
}

static struct py_pid *pid_add(struct rec_python *py, pid_t pid)
{
	struct py_pid *p = pid_find(py, pid);

	if (p)
		return p;
	if (pa_grow((void **)&py->pids, &py->cap_pids, py->nr_pids + 1, sizeof(*py->pids)) ||
	    hidx_insert(&py->pid_idx, pid_hash(pid), py->nr_pids))
		return NULL;
	p = &py->pids[py->nr_pids++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	return p;
}

int rec_python_init(struct rec_session *s)
{
	struct rec_python *py = calloc(1, sizeof(*py));

	if (!py)
		return -ENOMEM;
	py->unknown_fn = -1;
	s->py = py;
	return 0;
}

/* What the walker needs from l, for an interpreter whose _PyRuntime is at runtime. */
static bool py_proc_of(const struct cpython_layout *l, uint64_t runtime, struct py_proc *v)
{
	const uint64_t fr[] = {l->fr_previous, l->fr_executable, l->fr_instr_ptr};
	size_t i;

	for (i = 0; i < sizeof(fr) / sizeof(fr[0]); i++)
		if (fr[i] + 8 > PY_FRAME_WINDOW)
			return false;
	if (l->fr_owner >= PY_FRAME_WINDOW || l->fr_is_entry >= PY_FRAME_WINDOW ||
	    l->is_threads_head > 0xfff0 || l->ts_next > 0xfff0 || l->ts_native_tid > 0xfff0 ||
	    l->ts_current_frame > 0xfff0 || l->ts_cframe > 0xfff0 || l->cf_current_frame > 0xfff0)
		return false;
	memset(v, 0, sizeof(*v));
	v->interp_head = runtime + l->rt_interpreters_head;
	v->exec_mask = l->exec_mask;
	v->threads_head = l->is_threads_head;
	v->ts_next = l->ts_next;
	v->ts_native_tid = l->ts_native_tid;
	v->ts_frame = l->ts_cframe ? l->ts_cframe : l->ts_current_frame;
	v->cf_frame = l->ts_cframe ? l->cf_current_frame : PY_NO_FIELD;
	v->fr_previous = l->fr_previous;
	v->fr_executable = l->fr_executable;
	v->fr_instr = l->fr_instr_ptr;
	v->fr_owner = l->fr_owner;
	v->fr_is_entry = l->fr_is_entry ? l->fr_is_entry : PY_NO_FIELD;
	v->owner_skip = l->owner_skip;
	return true;
}

/* pid's pid namespace into v when it is not ours: threads are numbered there. */
static void pid_ns(pid_t pid, struct py_proc *v)
{
	struct stat self, it;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", pid);
	if (stat("/proc/self/ns/pid", &self) || stat(path, &it) ||
	    (self.st_dev == it.st_dev && self.st_ino == it.st_ino))
		return;
	v->ns_dev = it.st_dev;
	v->ns_ino = it.st_ino;
}

bool rec_python_proc(struct rec_session *s, pid_t pid, const struct rec_file *f,
		     const struct proc_map *m)
{
	struct rec_python *py = s->py;
	uint64_t bias, runtime;
	struct py_proc v;
	struct py_pid *p;
	uint32_t key = pid;
	int i;

	/* Its memory is read from here on: only a process the user may profile. */
	if (!py || !f->is_python || f->pyl_err || !rec_may_profile(s, pid))
		return false;
	/* The load bias, from the segment m maps (as uw_map_entry places code). */
	for (i = 0; i < f->nsegs; i++)
		if ((f->segs[i].off & ~4095ULL) <= m->pgoff &&
		    m->pgoff < f->segs[i].off + f->segs[i].filesz)
			break;
	if (i == f->nsegs)
		return false;
	bias = m->start - (f->segs[i].vaddr + (m->pgoff - f->segs[i].off));
	runtime = f->py.runtime + bias;
	if (!py_proc_of(&f->pyl, runtime, &v))
		return false;
	p = pid_add(py, pid);
	if (!p)
		return false;
	pid_ns(pid, &v);
	p->l = f->pyl;
	p->runtime = runtime;
	for (i = 0; i < 2; i++) {
		p->eval[i].lo = f->py.eval[i].lo ? f->py.eval[i].lo + bias : 0;
		p->eval[i].hi = f->py.eval[i].lo ? f->py.eval[i].hi + bias : 0;
	}
	/* Before the walker can use it: every sample with Python frames is later. */
	rec_synth_map(s, pid, runtime, s->start_ns ? pa_now_ns() : 0);
	return !bpf_map__update_elem(s->skel->maps.py_procs, &key, sizeof(key), &v, sizeof(v),
				     BPF_ANY);
}

void rec_python_gone(struct rec_session *s, pid_t pid)
{
	struct py_pid *p = s->py ? pid_find(s->py, pid) : NULL;
	uint32_t key = pid;

	if (!p || !p->runtime)
		return;
	/* Samples still queued keep nothing: their frames are not walked any more. */
	p->runtime = 0;
	bpf_map__delete_elem(s->skel->maps.py_procs, &key, sizeof(key), 0);
}

/* A forked interpreter: the walker copied its parent's entry; so does user space. */
void rec_python_fork(struct rec_session *s, pid_t pid, pid_t ppid)
{
	struct rec_python *py = s->py;
	struct py_pid *pp, *p;

	if (!py || !pid_find(py, ppid))
		return;
	/* A recycled pid's old entry is replaced. */
	p = pid_add(py, pid);
	pp = pid_find(py, ppid); /* pid_add may have moved it */
	if (!p || !pp)
		return;
	*p = *pp;
	p->pid = pid;
}

/* --- functions ---------------------------------------------------------------- */

/* The function qualname in file from line first, as the synthetic file names it:
 * "qualname (file's base name)". */
static int64_t fn_intern(struct rec_session *s, const char *qualname, const char *file, int first)
{
	const char *base;
	char name[512];

	if (!file[0])
		file = "<unknown>";
	base = strrchr(file, '/');
	/* A package's __init__.py and __main__.py go by their directory too. */
	if (base && base > file && (!strcmp(base, "/__init__.py") || !strcmp(base, "/__main__.py")))
		while (base > file && base[-1] != '/')
			base--;
	else if (base)
		base++;
	snprintf(name, sizeof(name), "%s (%s)", qualname[0] ? qualname : "?", base ? base : file);
	return rec_synth_fn(s, name, file, first);
}

/* --- code objects -------------------------------------------------------------- */

static uint64_t code_hash(pid_t pid, uint64_t co)
{
	return hash_mix(hash_mix(0, (uint64_t)pid), co);
}

struct code_key {
	pid_t pid;
	uint64_t co;
};

static bool code_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct rec_python *py = ctx;
	const struct code_key *k = key;

	return py->codes[id].pid == k->pid && py->codes[id].co == k->co;
}

/* Read code object co of p into cached entry id (-1: a new one).  Its id, or -1. */
static int64_t code_load(struct rec_session *s, struct py_pid *p, uint64_t co, int64_t id)
{
	struct rec_python *py = s->py;
	struct cpython_code cc;
	struct py_code *c;
	int64_t fn;

	if (cpython_code_read(p->pid, &p->l, co, &p->code_type, &cc))
		return -1;
	fn = fn_intern(s, cc.name, cc.file, cc.firstlineno);
	if (fn < 0) {
		free(cc.tab);
		return -1;
	}
	if (id < 0) {
		if (py->nr_codes >= PY_MAX_CODES ||
		    pa_grow((void **)&py->codes, &py->cap_codes, py->nr_codes + 1,
			    sizeof(*py->codes)) ||
		    hidx_insert(&py->code_idx, code_hash(p->pid, co), py->nr_codes)) {
			free(cc.tab);
			return -1;
		}
		id = py->nr_codes++;
	} else {
		free(py->codes[id].tab);
	}
	c = &py->codes[id];
	*c = (struct py_code){
		.pid = p->pid,
		.fn = (uint32_t)fn,
		.co = co,
		.qualname = cc.qualname,
		.linetable = cc.linetable,
		.tab = cc.tab,
		.tab_len = (uint32_t)cc.tab_len,
		.first = cc.firstlineno,
	};
	return id;
}

/*
 * Whether the cached entries ids[0..n) (-1: none) still hold what they were read
 * as: one process_vm_readv for all (qualname and line table pointers).  A process
 * gone keeps its entries.  stale[i] set where the address now holds something else.
 */
static void code_check(const struct rec_python *py, const struct py_pid *p, const int64_t *ids,
		       size_t n, bool *stale)
{
	struct iovec local[2 * PROFILE_MAX_PYFRAMES], remote[2 * PROFILE_MAX_PYFRAMES];
	uint64_t got[2 * PROFILE_MAX_PYFRAMES];
	size_t i, k = 0;
	ssize_t r;

	for (i = 0; i < n && i < PROFILE_MAX_PYFRAMES; i++) {
		uint64_t co;

		stale[i] = false;
		if (ids[i] < 0)
			continue;
		co = py->codes[ids[i]].co;
		local[k] = (struct iovec){&got[k], 8};
		remote[k++] = (struct iovec){(void *)(uintptr_t)(co + p->l.co_qualname), 8};
		local[k] = (struct iovec){&got[k], 8};
		remote[k++] = (struct iovec){(void *)(uintptr_t)(co + p->l.co_linetable), 8};
	}
	if (!k)
		return;
	r = process_vm_readv(p->pid, local, k, remote, k, 0);
	if (r < 0)
		return; /* gone, or not readable: trust what was read before */
	for (i = 0, k = 0; i < n && i < PROFILE_MAX_PYFRAMES; i++) {
		const struct py_code *c;

		if (ids[i] < 0)
			continue;
		c = &py->codes[ids[i]];
		if ((ssize_t)(8 * (k + 2)) <= r)
			stale[i] = got[k] != c->qualname || got[k + 1] != c->linetable;
		k += 2;
	}
}

/* The address of frame (co, instr) of p (cached as id, or -1), or 0 when co cannot be
 * read. */
static uint64_t frame_addr(struct rec_session *s, struct py_pid *p, int64_t id, uint64_t co,
			   uint64_t instr)
{
	struct rec_python *py = s->py;
	const struct py_code *c;

	if (id < 0)
		id = code_load(s, p, co, -1);
	if (id < 0) {
		py->unresolved++;
		return 0;
	}
	c = &py->codes[id];
	return rec_synth_addr(s, c->fn,
			      cpython_code_line(&p->l, c->tab, c->tab_len, c->first, co, instr));
}

/* --- the callchain ------------------------------------------------------------ */

static bool in_eval(const struct py_pid *p, uint64_t pc)
{
	return (pc >= p->eval[0].lo && pc < p->eval[0].hi) ||
	       (pc >= p->eval[1].lo && pc < p->eval[1].hi);
}

/* The address of an unresolved frame: a function of its own. */
static uint64_t unknown_addr(struct rec_session *s)
{
	struct rec_python *py = s->py;

	if (py->unknown_fn < 0)
		py->unknown_fn = rec_synth_fn(s, "[unknown] (<unknown>)", "<unknown>", 0);
	return py->unknown_fn < 0 ? 0 : rec_synth_addr(s, (uint32_t)py->unknown_fn, 0);
}

size_t rec_python_chain(struct rec_session *s, pid_t pid, const __u64 *pyf, size_t npy, bool cut,
			const __u64 *uips, size_t nu, uint64_t *out, size_t room)
{
	struct rec_python *py = s->py;
	int64_t ids[PROFILE_MAX_PYFRAMES];
	uint64_t addr[PROFILE_MAX_PYFRAMES];
	size_t gend[PROFILE_MAX_PYFRAMES + 1]; /* group g is frames [gend[g-1], gend[g]) */
	size_t eval[PROFILE_MAX_UFRAMES];
	bool stale[PROFILE_MAX_PYFRAMES];
	size_t i, n = 0, nf = 0, ng = 0, ne = 0, g, e, skip;
	struct py_pid *p;

	if (npy > PROFILE_MAX_PYFRAMES)
		npy = PROFILE_MAX_PYFRAMES;
	if (nu > PROFILE_MAX_UFRAMES)
		nu = PROFILE_MAX_UFRAMES;
	if (!py || !npy || !(p = pid_find(py, pid)) || !p->runtime)
		goto native;
	py->samples++;
	/* Frames (code, instr) into ids[]/addr[], groups split at the 0 pairs. */
	for (i = 0; i < npy; i++) {
		uint64_t co = pyf[2 * i];
		struct code_key k = {pid, co};

		if (!co) {
			gend[ng++] = nf;
			continue;
		}
		ids[nf] = hidx_find(&py->code_idx, code_hash(pid, co), code_eq, py, &k);
		addr[nf++] = i; /* the pair, for now */
	}
	if (!nf)
		goto native;
	if (!ng || gend[ng - 1] != nf)
		gend[ng++] = nf; /* a cut walk's last group */
	code_check(py, p, ids, nf, stale);
	for (i = 0; i < nf; i++) {
		const __u64 *pair = &pyf[2 * addr[i]];

		if (ids[i] >= 0 && stale[i]) {
			py->rereads++;
			ids[i] = code_load(s, p, pair[0], ids[i]);
		}
		addr[i] = frame_addr(s, p, ids[i], pair[0], pair[1]);
		if (!addr[i])
			addr[i] = unknown_addr(s);
	}
	py->frames += nf;

	for (i = 0; i < nu; i++)
		if (in_eval(p, uips[i] - (i > 0)))
			eval[ne++] = i;
	if (!ne)
		py->no_eval++;
	/* Matched from the root: the outermost eval calls are the settled ones; at the
	 * leaf, an eval call may not have pushed its frames yet, or may be popping them.
	 * A walk cut at PROFILE_MAX_PYFRAMES has the innermost groups only: from the leaf. */
	skip = ng > ne && !cut ? ng - ne : 0; /* groups with no native frame: innermost */
	g = 0;
	e = ne > ng && !cut ? ne - ng : 0;
	for (i = 0; i < nu && n < room; i++) {
		size_t from, to;

		if (e >= ne || eval[e] != i || g >= ng) {
			out[n++] = uips[i];
			continue;
		}
		from = g == 0 ? 0 : gend[g - 1];
		if (g == 0)
			g = skip;
		to = gend[g];
		for (; from < to && n < room; from++)
			out[n++] = addr[from];
		g++;
		e++;
	}
	/* No native eval frame found (a cut native stack): the rest at the root. */
	if (!ne)
		for (i = 0; i < nf && n < room; i++)
			out[n++] = addr[i];
	return n;

native:
	n = nu < room ? nu : room;
	memcpy(out, uips, n * sizeof(*out));
	return n;
}

/* --- the end -------------------------------------------------------------------- */

void rec_python_summary(const struct rec_session *s)
{
	const struct rec_python *py = s->py;
	uint64_t st[PY_STAT_NR] = {};
	int ncpu = s->nr_possible > 0 ? s->nr_possible : 1, i, j;
	uint64_t *v;

	if (!py || !s->opts.verbose || !py->nr_pids)
		return;
	v = calloc(ncpu, sizeof(*v));
	for (i = 0; v && i < PY_STAT_NR; i++) {
		uint32_t k = i;

		if (!bpf_map__lookup_elem(s->skel->maps.py_stats, &k, sizeof(k), v,
					  ncpu * sizeof(*v), 0))
			for (j = 0; j < ncpu; j++)
				st[i] += v[j];
	}
	free(v);
	pa_info("python: %llu walks, %llu frames (%llu cut, %llu unreadable, %llu threads "
		"without a thread state); %llu samples with Python frames, %zu functions in %s, "
		"%llu frames unresolved, %llu code objects read again, %llu samples with no "
		"eval frame",
		(unsigned long long)st[PY_STAT_WALKS], (unsigned long long)st[PY_STAT_FRAMES],
		(unsigned long long)st[PY_STAT_CUT], (unsigned long long)st[PY_STAT_READ],
		(unsigned long long)st[PY_STAT_NO_THREAD], (unsigned long long)py->samples,
		rec_synth_nr_fns(s), rec_synth_path(s), (unsigned long long)py->unresolved,
		(unsigned long long)py->rereads, (unsigned long long)py->no_eval);
}

void rec_python_free(struct rec_session *s)
{
	struct rec_python *py = s->py;
	size_t i;

	if (!py)
		return;
	for (i = 0; i < py->nr_codes; i++)
		free(py->codes[i].tab);
	free(py->codes);
	free(py->pids);
	hidx_free(&py->pid_idx);
	hidx_free(&py->code_idx);
	free(py);
	s->py = NULL;
}
