// SPDX-License-Identifier: Apache-2.0
/*
 * The machine a perf.data stream describes: threads and their comms, per-process
 * address-space maps, the kernel, and callchain resolution.  Modelled on perf's
 * struct machine (util/machine.c), fed one record at a time.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "perfdata/event.h"
#include "symbolize/bidcache.h"
#include "symbolize/dso.h"
#include "symbolize/dwarf_lines.h"
#include "profile/machine.h"
#include "symbolize/symtab_priv.h"

#define KERNEL_START 0xffff800000000000ULL /* lowest kernel address on x86-64/arm64 */

struct map {
	uint64_t start, end, pgoff;
	struct dso *dso;
	uint32_t id; /* machine-wide, new for every map inserted: a location's key */
};

struct maps {
	struct map *v;
	size_t n, cap;
};

struct proc {
	struct maps maps;
	struct symtab *perfmap; /* /tmp/perf-PID.map of a JIT, loaded on first anon hit */
	bool perfmap_tried;
	bool reap_next; /* machine_reap: it had exited at the last call */
};

struct thread {
	uint32_t pid, tid;
	bool dead;	   /* EXIT seen; kept because samples may still follow */
	bool reap_next;	   /* machine_reap: dead at the last call */
	char *comm;	   /* from COMM/FORK; NULL if never seen */
	char fallback[16]; /* ":TID", what perf shows for a thread without a comm */
};

/* Objects by u32 id (pid 0 is valid): keys[i] and vals[i], indexed by hidx. */
struct idmap {
	struct hidx idx;
	uint32_t *keys;
	void **vals;
	size_t n, cap;
};

/* Cgroup paths by the u64 id samples carry: ids[i] names paths[i], indexed by hidx.
 * Each path is followed by its labels ("key=value\0"... "\0"), labels[i] bytes. */
struct cgroups {
	struct hidx idx;
	uint64_t *ids;
	char **paths;
	size_t *labels;
	size_t n, cap;
};

struct machine {
	struct machine_opts opts;
	struct idmap threads; /* tid -> struct thread */
	struct idmap procs;   /* pid -> struct proc */
	struct maps kmaps;    /* pid -1: kernel and modules */
	struct dso_table dsos;
	struct dso *kdso; /* [kernel.kallsyms] */
	bool kernel_tried;
	uint32_t next_map_id;
	uint64_t ktext; /* _text of the recorded kernel (its MMAP's pgoff), 0 if unknown */
	int64_t kdelta; /* recorded minus kallsyms addresses (KASLR across boots) */
	char buildid_dir[4096];
	struct cgroups cgroups; /* from PERF_RECORD_CGROUP */
};

/* ---- id hash ---- */

static bool id_eq(const void *ctx, uint32_t i, const void *key)
{
	return ((const struct idmap *)ctx)->keys[i] == *(const uint32_t *)key;
}

static void *id_get(const struct idmap *h, uint32_t key)
{
	int64_t i = hidx_find(&h->idx, hash_mix(0, key), id_eq, h, &key);

	return i < 0 ? NULL : h->vals[i];
}

/* Map key to val (a key not there yet). */
static int id_put(struct idmap *h, uint32_t key, void *val)
{
	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 256;
		uint32_t *k = realloc(h->keys, cap * sizeof(*k));

		if (!k)
			return -ENOMEM;
		h->keys = k;
		void **v = realloc(h->vals, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		h->vals = v;
		h->cap = cap;
	}
	if (hidx_insert(&h->idx, hash_mix(0, key), h->n))
		return -ENOMEM;
	h->keys[h->n] = key;
	h->vals[h->n++] = val;
	return 0;
}

static void id_free(struct idmap *h)
{
	hidx_free(&h->idx);
	free(h->keys);
	free(h->vals);
}

/* ---- cgroups ---- */

static bool cg_eq(const void *ctx, uint32_t i, const void *key)
{
	return ((const struct cgroups *)ctx)->ids[i] == *(const uint64_t *)key;
}

static int64_t cg_find(const struct cgroups *cg, uint64_t id)
{
	return hidx_find(&cg->idx, hash_mix(0, id), cg_eq, cg, &id);
}

/* A later record for the same id wins, so a sample read in time order gets the path its
 * cgroup had then (perf keeps the first). */
static int cg_set(struct cgroups *cg, const struct pd_cgroup *c)
{
	int64_t i = cg_find(cg, c->id);
	size_t n = strlen(c->path) + 1, *labels;
	char *p = malloc(n + c->labels_len), **paths;
	uint64_t *ids;

	if (!p)
		return -ENOMEM;
	memcpy(p, c->path, n);
	if (c->labels_len)
		memcpy(p + n, c->labels, c->labels_len);
	if (i >= 0) {
		free(cg->paths[i]);
		cg->paths[i] = p;
		cg->labels[i] = c->labels_len;
		return 0;
	}
	if (cg->n == cg->cap) {
		size_t cap = cg->cap ? 2 * cg->cap : 16;

		if (!(ids = realloc(cg->ids, cap * sizeof(*ids))))
			goto nomem;
		cg->ids = ids;
		if (!(paths = realloc(cg->paths, cap * sizeof(*paths))))
			goto nomem;
		cg->paths = paths;
		if (!(labels = realloc(cg->labels, cap * sizeof(*labels))))
			goto nomem;
		cg->labels = labels;
		cg->cap = cap;
	}
	if (cg->n >= UINT32_MAX || hidx_insert(&cg->idx, hash_mix(0, c->id), (uint32_t)cg->n))
		goto nomem;
	cg->ids[cg->n] = c->id;
	cg->labels[cg->n] = c->labels_len;
	cg->paths[cg->n++] = p;
	return 0;
nomem:
	free(p);
	return -ENOMEM;
}

static void cg_free(struct cgroups *cg)
{
	for (size_t i = 0; i < cg->n; i++)
		free(cg->paths[i]);
	hidx_free(&cg->idx);
	free(cg->ids);
	free(cg->paths);
	free(cg->labels);
}

/* ---- maps ---- */

/*
 * The first map ending above addr (ms->n: none).  Without a branch on the compare (a
 * cmov per level): every address of every sample comes here, and in no predictable
 * order.
 */
static size_t maps_lower(const struct maps *ms, uint64_t addr)
{
	const struct map *base = ms->v;
	size_t n = ms->n, half;

	if (!n)
		return 0;
	for (; n > 1; n -= half) {
		half = n / 2;
		base = base[half].end <= addr ? base + half : base;
	}
	return (size_t)(base - ms->v) + (base->end <= addr);
}

static const struct map *maps_find(const struct maps *ms, uint64_t addr)
{
	size_t i = maps_lower(ms, addr);

	return i < ms->n && ms->v[i].start <= addr ? &ms->v[i] : NULL;
}

static int maps_reserve(struct maps *ms, size_t extra)
{
	struct map *nv;
	size_t ncap;

	if (ms->n + extra <= ms->cap)
		return 0;
	ncap = ms->cap ? ms->cap * 2 : 32;
	while (ncap < ms->n + extra)
		ncap *= 2;
	nv = realloc(ms->v, ncap * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	ms->v = nv;
	ms->cap = ncap;
	return 0;
}

/*
 * Insert nm, cutting away what it overlaps of older maps (perf's
 * maps__fixup_overlappings): a map over the middle of another leaves both ends.
 */
static int maps_insert(struct machine *m, struct maps *ms, const struct map *nmap)
{
	size_t first, last, keep = 0;
	struct map frag[2], nm_copy = *nmap, *nm = &nm_copy;

	if (nm->end <= nm->start)
		return 0;
	nm->id = ++m->next_map_id;
	if (maps_reserve(ms, 2))
		return -ENOMEM;
	first = maps_lower(ms, nm->start);
	for (last = first; last < ms->n && ms->v[last].start < nm->end; last++) {
		const struct map *o = &ms->v[last];

		if (o->start < nm->start) {
			frag[keep] = *o;
			frag[keep++].end = nm->start;
		}
		if (o->end > nm->end) {
			frag[keep] = *o;
			frag[keep].id = ++m->next_map_id; /* its addresses moved */
			frag[keep].start = nm->end;
			frag[keep++].pgoff = o->pgoff + (nm->end - o->start);
		}
	}
	/* Replace v[first, last) by: left fragment, nm, right fragment. */
	size_t add = keep + 1, del = last - first;

	memmove(&ms->v[first + add], &ms->v[last], (ms->n - last) * sizeof(*ms->v));
	ms->n = ms->n - del + add;
	size_t at = first;

	if (keep && frag[0].start < nm->start)
		ms->v[at++] = frag[0];
	ms->v[at++] = *nm;
	if (keep && frag[keep - 1].start >= nm->end)
		ms->v[at++] = frag[keep - 1];
	return 0;
}

static void maps_clear(struct maps *ms)
{
	ms->n = 0;
}

/* ---- threads and processes ---- */

static struct proc *proc_findnew(struct machine *m, uint32_t pid)
{
	struct proc *p = id_get(&m->procs, pid);

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p || id_put(&m->procs, pid, p)) {
		free(p);
		return NULL;
	}
	return p;
}

static struct thread *thread_findnew(struct machine *m, uint32_t pid, uint32_t tid)
{
	struct thread *t = id_get(&m->threads, tid);

	if (t) {
		if (pid != (uint32_t)-1)
			t->pid = pid;
		return t;
	}
	t = calloc(1, sizeof(*t));
	if (!t || id_put(&m->threads, tid, t)) {
		free(t);
		return NULL;
	}
	t->pid = pid;
	t->tid = tid;
	return t;
}

static int thread_set_comm(struct thread *t, const char *comm, size_t len)
{
	char *c = strndup(comm, len);

	if (!c)
		return -ENOMEM;
	free(t->comm);
	t->comm = c;
	return 0;
}

struct machine *machine_new(const struct machine_opts *opts)
{
	struct machine *m = calloc(1, sizeof(*m));
	const char *home;

	if (!m)
		return NULL;
	if (opts)
		m->opts = *opts;
	if (!m->opts.kallsyms)
		m->opts.kallsyms = "/proc/kallsyms";
	if (!m->opts.perfmap_dir)
		m->opts.perfmap_dir = "/tmp";
	if (m->opts.buildid_dir) {
		snprintf(m->buildid_dir, sizeof(m->buildid_dir), "%s", m->opts.buildid_dir);
	} else if ((home = getenv("HOME")) && *home) {
		snprintf(m->buildid_dir, sizeof(m->buildid_dir), "%s/.debug", home);
	}
	m->dsos.buildid_dir = m->buildid_dir[0] ? m->buildid_dir : NULL;
	m->dsos.no_demangle = m->opts.no_demangle;
	if (!m->opts.no_debuginfo) {
		struct dbg_opts dopts = {
			.debug_dirs = m->opts.debug_dirs,
			.buildid_dir = m->dsos.buildid_dir,
			.debuginfod_urls = m->opts.debuginfod_urls,
		};

		m->dsos.dbg = dbg_new(&dopts);
		if (!m->dsos.dbg) {
			machine_free(m);
			errno = ENOMEM;
			return NULL;
		}
	}
	m->kdso = dsos_findnew(&m->dsos, "[kernel.kallsyms]", NULL, 0);
	if (!m->kdso) {
		machine_free(m);
		errno = ENOMEM;
		return NULL;
	}
	return m;
}

void machine_reap(struct machine *m)
{
	size_t i;

	for (i = 0; i < m->procs.n; i++) {
		struct proc *p = m->procs.vals[i];
		struct thread *t = id_get(&m->threads, m->procs.keys[i]);

		if (!t || !t->dead) {
			p->reap_next = false;
			continue;
		}
		if (!p->reap_next) {
			p->reap_next = true;
			continue;
		}
		free(p->maps.v);
		p->maps.v = NULL;
		p->maps.n = p->maps.cap = 0;
		symtab_free(p->perfmap);
		p->perfmap = NULL;
		p->perfmap_tried = false;
		p->reap_next = false;
	}
	for (i = 0; i < m->threads.n; i++) {
		struct thread *t = m->threads.vals[i];

		if (!t->dead || !t->comm) {
			t->reap_next = false;
		} else if (!t->reap_next) {
			t->reap_next = true;
		} else {
			free(t->comm);
			t->comm = NULL;
		}
	}
}

void machine_free(struct machine *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->threads.n; i++) {
		struct thread *t = m->threads.vals[i];

		free(t->comm);
		free(t);
	}
	for (i = 0; i < m->procs.n; i++) {
		struct proc *p = m->procs.vals[i];

		free(p->maps.v);
		symtab_free(p->perfmap);
		free(p);
	}
	id_free(&m->threads);
	id_free(&m->procs);
	cg_free(&m->cgroups);
	free(m->kmaps.v);
	dsos_free(&m->dsos);
	free(m);
}

/* ---- records ---- */

static bool is_kernel_mode(uint16_t misc)
{
	uint16_t cm = misc & PERF_RECORD_MISC_CPUMODE_MASK;

	return cm == PERF_RECORD_MISC_KERNEL || cm == PERF_RECORD_MISC_GUEST_KERNEL;
}

static int add_kernel_map(struct machine *m, uint64_t start, uint64_t len, uint64_t pgoff,
			  const char *name)
{
	struct map nm = {.start = start, .end = start + len};
	char mod[256];

	if (!strncmp(name, "[kernel.kallsyms]", 17)) {
		/* perf writes "[kernel.kallsyms]_text" with pgoff = _text's address. */
		if (!strcmp(name + 17, "_text") || !strcmp(name + 17, "_stext"))
			m->ktext = pgoff;
		nm.dso = m->kdso;
		nm.pgoff = 0;
	} else {
		/* Modules: "/lib/modules/.../ext4.ko(.xz)" or "[ext4]" -> dso "[ext4]". */
		const char *b = strrchr(name, '/');
		size_t n;

		b = b ? b + 1 : name;
		if (*b == '[')
			b++;
		n = strcspn(b, ".]");
		snprintf(mod, sizeof(mod), "[%.*s]", (int)n, b);
		nm.dso = dsos_findnew(&m->dsos, mod, NULL, 0);
		if (!nm.dso)
			return -ENOMEM;
		nm.dso->kernel = true;
	}
	return maps_insert(m, &m->kmaps, &nm);
}

static int do_mmap(struct machine *m, const struct pd_event *ev)
{
	struct pd_mmap mm;
	struct map nm;
	struct proc *pr;

	if (pd_parse_mmap(ev->hdr, ev->hdr->size, &mm))
		return -EINVAL;
	nm.start = mm.start;
	nm.end = mm.start + mm.len;
	nm.pgoff = mm.pgoff;
	if (mm.pid == (uint32_t)-1 || (is_kernel_mode(mm.misc) && nm.start >= KERNEL_START))
		return add_kernel_map(m, nm.start, mm.len, nm.pgoff, mm.filename);
	nm.dso = dsos_findnew(&m->dsos, mm.filename, mm.build_id, mm.build_id_size);
	pr = proc_findnew(m, mm.pid);
	if (!nm.dso || !pr)
		return -ENOMEM;
	return maps_insert(m, &pr->maps, &nm);
}

static int do_comm(struct machine *m, const struct pd_event *ev)
{
	struct pd_comm c;
	struct thread *t;
	struct proc *pr;

	if (pd_parse_comm(ev->hdr, ev->hdr->size, &c))
		return -EINVAL;
	t = thread_findnew(m, c.pid, c.tid);
	if (!t)
		return -ENOMEM;
	if (c.misc & PERF_RECORD_MISC_COMM_EXEC) {
		/* exec replaced the address space; its new MMAPs follow. */
		pr = id_get(&m->procs, t->pid);
		if (pr) {
			maps_clear(&pr->maps);
			symtab_free(pr->perfmap);
			pr->perfmap = NULL;
			pr->perfmap_tried = false;
		}
	}
	t->dead = false;
	return thread_set_comm(t, c.comm, strlen(c.comm));
}

static int do_fork(struct machine *m, const struct pd_event *ev)
{
	struct pd_task f;
	struct thread *parent, *t;
	struct proc *pp, *cp;

	if (pd_parse_task(ev->hdr, ev->hdr->size, &f))
		return -EINVAL;
	parent = id_get(&m->threads, f.ptid);
	t = thread_findnew(m, f.pid, f.tid);
	if (!t)
		return -ENOMEM;
	/* A reused tid is a new thread: forget the old one's state. */
	t->dead = false;
	if (parent && parent->comm && thread_set_comm(t, parent->comm, strlen(parent->comm)))
		return -ENOMEM;
	if (f.pid == f.ppid)
		return 0; /* a thread: shares the process's maps by pid */
	pp = id_get(&m->procs, f.ppid);
	cp = proc_findnew(m, f.pid);
	if (!cp)
		return -ENOMEM;
	if (pp && pp != cp && !cp->maps.n && pp->maps.n) {
		if (maps_reserve(&cp->maps, pp->maps.n))
			return -ENOMEM;
		memcpy(cp->maps.v, pp->maps.v, pp->maps.n * sizeof(*pp->maps.v));
		cp->maps.n = pp->maps.n;
		/* The same file at the same place symbolizes the same in both processes;
		 * anonymous code does not (each process has its own JIT map). */
		for (size_t i = 0; i < cp->maps.n; i++)
			if (cp->maps.v[i].dso->anon)
				cp->maps.v[i].id = ++m->next_map_id;
	}
	return 0;
}

static int do_exit(struct machine *m, const struct pd_event *ev)
{
	struct pd_task e;
	struct thread *t;

	if (pd_parse_task(ev->hdr, ev->hdr->size, &e))
		return -EINVAL;
	t = id_get(&m->threads, e.tid);
	if (t)
		t->dead = true;
	return 0;
}

static int do_build_id(struct machine *m, const struct pd_event *ev)
{
	struct pd_header_build_id b;

	if (pd_parse_header_build_id(ev->hdr, ev->hdr->size, &b))
		return -EINVAL;
	return dsos_add_bid(&m->dsos, b.filename, b.build_id, b.size);
}

static int do_cgroup(struct machine *m, const struct pd_event *ev)
{
	struct pd_cgroup c;

	if (pd_parse_cgroup(ev->hdr, ev->hdr->size, &c))
		return -EINVAL;
	return cg_set(&m->cgroups, &c);
}

int machine_process_event(struct machine *m, const struct pd_event *ev)
{
	if (!ev || !ev->hdr || ev->hdr->size < sizeof(*ev->hdr))
		return -EINVAL;
	switch (ev->hdr->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return do_mmap(m, ev);
	case PERF_RECORD_COMM:
		return do_comm(m, ev);
	case PERF_RECORD_FORK:
		return do_fork(m, ev);
	case PERF_RECORD_EXIT:
		return do_exit(m, ev);
	case PERF_RECORD_HEADER_BUILD_ID:
		return do_build_id(m, ev);
	case PERF_RECORD_CGROUP:
		return do_cgroup(m, ev);
	default:
		return 0;
	}
}

void machine_add_build_ids(struct machine *m, const struct pd_reader *r)
{
	size_t i, n = pd_reader_nr_build_ids(r);

	for (i = 0; i < n; i++) {
		const struct pd_build_id *b = pd_reader_build_id(r, i);

		if (b && b->filename)
			dsos_add_bid(&m->dsos, b->filename, b->build_id,
				     b->size ? b->size : BUILD_ID_SIZE);
	}
}

const char *machine_cgroup_path(const struct machine *m, uint64_t id)
{
	int64_t i = cg_find(&m->cgroups, id);

	return i < 0 ? NULL : m->cgroups.paths[i];
}

const char *machine_cgroup_labels(const struct machine *m, uint64_t id, size_t *len)
{
	int64_t i = cg_find(&m->cgroups, id);

	*len = i < 0 ? 0 : m->cgroups.labels[i];
	return *len ? m->cgroups.paths[i] + strlen(m->cgroups.paths[i]) + 1 : NULL;
}

const char *machine_comm(struct machine *m, uint32_t pid, uint32_t tid)
{
	struct thread *t = id_get(&m->threads, tid);

	if (t && t->comm)
		return t->comm;
	/* A thread we never saw a COMM for is named like its process. */
	if (tid != pid) {
		struct thread *leader = id_get(&m->threads, pid);

		if (leader && leader->comm)
			return leader->comm;
	}
	if (pid == 0 && tid == 0)
		return "swapper";
	if (!t)
		t = thread_findnew(m, pid, tid);
	if (!t)
		return "[unknown]";
	snprintf(t->fallback, sizeof(t->fallback), ":%u", tid);
	return t->fallback;
}

/* ---- resolution ---- */

static const struct symtab *kernel_symtab(struct machine *m)
{
	const char *path = m->opts.kallsyms;
	bool restricted = false;
	struct symtab *st;

	if (m->kernel_tried)
		return m->kdso->st;
	m->kernel_tried = true;
	if (m->opts.no_kernel_syms)
		return NULL;
	if (!strcmp(path, "/proc/kallsyms") && m->kdso->bid_size) {
		uint8_t bid[BID_MAX];
		int n = bid_read_kernel(bid);

		if (n > 0 && (n != m->kdso->bid_size || memcmp(bid, m->kdso->bid, (size_t)n))) {
			char rec[2 * BID_MAX + 1];

			bid_to_hex(rec, m->kdso->bid, m->kdso->bid_size);
			dsos_warn(&m->dsos,
				  "recorded on another kernel (build-id %s): kernel frames are "
				  "shown as addresses; report on the recording machine",
				  rec);
			return NULL;
		}
	}
	st = symtab_load_kallsyms(path, &restricted);
	if (!st) {
		if (restricted)
			dsos_warn(&m->dsos,
				  "%s shows zero addresses (kptr_restrict): kernel frames are "
				  "unnamed; run as root or: sysctl kernel.kptr_restrict=0",
				  path);
		else
			dsos_warn(&m->dsos, "cannot read %s: %s: kernel frames are unnamed", path,
				  strerror(errno));
		return NULL;
	}
	/* Same kernel, other boot: KASLR moved it, _text tells by how much. */
	if (m->ktext && st->ref_text)
		m->kdelta = (int64_t)(m->ktext - st->ref_text);
	m->kdso->st = st;
	return st;
}

static void resolve_kernel(struct machine *m, const struct machine_loc *l, uint64_t adj,
			   struct frame *f)
{
	const struct symtab *st = kernel_symtab(m);
	const struct sym *sym;
	const char *mod;
	char name[256];
	uint64_t ip = l->ip;

	f->kernel = true;
	f->kind = PA_FRAME_KERNEL;
	f->dso = l->dso ? l->dso : m->kdso;
	f->dso_off = ip;
	if (l->dso) {
		f->map_start = l->start;
		f->map_end = l->end;
		f->map_pgoff = l->pgoff;
	}
	sym = st ? symtab_lookup(st, ip - adj - (uint64_t)m->kdelta) : NULL;
	/*
	 * A return address at a function's first byte looked up at ip - 1 lands in the
	 * padding before it (__pfx_*, CONFIG_FUNCTION_PADDING), where no call can be: it
	 * is an interrupted address after an interrupt frame, named as it is.
	 */
	if (sym && adj && !strncmp(sym->name, "__pfx_", 6))
		sym = symtab_lookup(st, ip - (uint64_t)m->kdelta);
	if (sym) {
		f->sym = sym->name;
		f->sym_off = ip - (uint64_t)m->kdelta - sym->start;
		mod = symtab_sym_module(st, sym);
		if (mod) {
			struct dso *d;

			snprintf(name, sizeof(name), "[%s]", mod);
			d = dsos_findnew(&m->dsos, name, NULL, 0);
			if (d) {
				d->kernel = true;
				f->dso = d;
			}
		} else {
			f->dso = m->kdso;
		}
	}
	f->dso_name = f->dso->short_name;
}

/*
 * The JIT's perf-PID.map; once the process is gone its map may be too (a /tmp cleaner,
 * another boot), so pa-record's copy in the build-id cache stands in for it.
 */
static const struct symtab *jit_symtab(struct machine *m, struct proc *pr, uint32_t pid)
{
	char path[4096];

	if (!pr->perfmap_tried) {
		pr->perfmap_tried = true;
		snprintf(path, sizeof(path), "%s/perf-%u.map", m->opts.perfmap_dir, pid);
		pr->perfmap = symtab_load_perfmap(path);
		if (!pr->perfmap && errno == ENOENT && m->dsos.buildid_dir) {
			bidc_jit_map_path(m->dsos.buildid_dir, pid, path, sizeof(path));
			pr->perfmap = symtab_load_perfmap(path);
		}
	}
	return pr->perfmap;
}

/* An unnamed address: the start of the function its FDE covers, as a file offset. */
static void unnamed_func(struct machine *m, struct dso *d, const struct symtab *st, uint64_t va,
			 struct frame *f)
{
	struct dso_dwarf *dw = dso_dwarf(&m->dsos, d);
	uint64_t start, off;

	if (dw && !dwl_func_start(dw, va, &start) && !symtab_vaddr_to_offset(st, start, &off))
		f->func_off = off;
}

/* Fills f; returns the DWARF view of the address when there is one to expand. */
static const struct dwl_result *resolve_user(struct machine *m, const struct machine_loc *l,
					     uint64_t adj, bool real_only, struct frame *f)
{
	const struct symtab *st;
	const struct sym *sym;
	struct dso_dwarf *dw;
	struct proc *pr;
	uint64_t va, ip = l->ip;

	f->kernel = false;
	if (!l->dso) {
		f->kind = PA_FRAME_UNKNOWN;
		f->dso_name = "[unknown]";
		f->dso_off = ip;
		return NULL;
	}
	f->kind = PA_FRAME_NATIVE;
	f->dso = l->dso;
	f->dso_name = l->dso->short_name;
	f->map_start = l->start;
	f->map_end = l->end;
	f->map_pgoff = l->pgoff;
	f->dso_off = ip - l->start + l->pgoff;
	st = dso_symtab(&m->dsos, l->dso);
	if (st) {
		if (symtab_offset_to_vaddr(st, f->dso_off - adj, &va))
			return NULL;
		sym = symtab_lookup(st, va);
		if (sym) {
			f->sym = m->opts.no_demangle ? sym->name : symtab_sym_demangled(st, sym);
			f->sym_off = va + adj - sym->start;
		} else {
			unnamed_func(m, l->dso, st, va, f);
		}
		/*
		 * The real function needs no DWARF when the symbol tables name it, or when
		 * they are a whole .symtab: what that leaves unnamed (PLT slots, padding,
		 * assembly) DWARF does not name either, and opening a large library's DWARF
		 * (libc's debug file: 70 ms of inflating) for it would cost a flat report
		 * as much as all its samples.
		 */
		if (real_only && (f->sym || symtab_full(st)))
			return NULL;
		if (m->opts.no_inline || !(dw = dso_dwarf(&m->dsos, l->dso)))
			return NULL;
		return dwl_lookup(dw, va);
	}
	/* JIT code: anonymous executable memory named by the JIT's perf map. */
	if (l->dso->anon &&
	    (!strcmp(l->dso->path, "//anon") || !strncmp(l->dso->path, "/memfd:", 7)) &&
	    (pr = id_get(&m->procs, l->pid)) && (st = jit_symtab(m, pr, l->pid)) &&
	    (sym = symtab_lookup(st, ip - adj))) {
		f->kind = PA_FRAME_JIT;
		f->sym = m->opts.no_demangle ? sym->name : symtab_sym_demangled(st, sym);
		f->sym_off = ip - sym->start;
	}
	return NULL;
}

/*
 * Turn the frame at f into r->n frames: the inlined functions innermost first, then
 * the real function, all at the same ip.  Returns how many frames f now spans (<= room);
 * with too little room, only the real frame (with its line) is kept.
 */
static size_t expand_inline(struct frame *f, const struct dwl_result *r, size_t room)
{
	const struct dwl_frame *outer;
	struct frame base = *f;
	uint32_t i;

	if (!r || !r->n)
		return 1;
	outer = &r->f[r->n - 1];
	base.srcfile = outer->file;
	base.line = outer->line;
	if (!base.sym && outer->name)
		base.sym = outer->name; /* DWARF knows a function the symbol tables lack */
	if (r->n > room) {
		*f = base;
		return 1;
	}
	for (i = 0; i + 1 < r->n; i++) {
		f[i] = base;
		f[i].inlined = true;
		if (r->f[i].name)
			f[i].sym = r->f[i].name;
		f[i].sym_off = 0;
		f[i].func_off = 0;
		f[i].srcfile = r->f[i].file;
		f[i].line = r->f[i].line;
	}
	f[r->n - 1] = base;
	return r->n;
}

static void locate_one(struct machine *m, const struct proc *pr, uint32_t pid, uint64_t ip,
		       enum machine_ring ring, bool ret, struct machine_loc *l)
{
	const struct map *mp = NULL;

	memset(l, 0, sizeof(*l));
	l->ip = ip;
	l->pid = pid;
	l->ring = ring;
	l->ret = ret;
	if (ring == MACHINE_RING_KERNEL)
		mp = maps_find(&m->kmaps, ip);
	else if (ring == MACHINE_RING_USER && pr)
		mp = maps_find(&pr->maps, ip);
	if (!mp)
		return;
	l->map = mp->id;
	l->start = mp->start;
	l->end = mp->end;
	l->pgoff = mp->pgoff;
	l->dso = mp->dso;
}

size_t machine_locate(struct machine *m, const struct pd_sample *s, struct machine_loc *locs,
		      size_t max)
{
	const struct proc *pr = id_get(&m->procs, s->pid);
	bool kernel = is_kernel_mode(s->misc), first = true, guest = false;
	enum machine_ring ring;
	size_t i, n = 0;

	if (!max)
		return 0;
	if (!s->nr_ips || !s->ips) {
		ring = kernel || s->ip >= KERNEL_START ? MACHINE_RING_KERNEL : MACHINE_RING_USER;
		locate_one(m, pr, s->pid, s->ip, ring, false, &locs[0]);
		return 1;
	}
	for (i = 0; i < s->nr_ips && n < max; i++) {
		uint64_t ip = s->ips[i];

		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			/* A context switch: its first frame is where that mode was left, not a
			 * return address. */
			if (ip == (uint64_t)PERF_CONTEXT_KERNEL ||
			    ip == (uint64_t)PERF_CONTEXT_USER) {
				kernel = ip == (uint64_t)PERF_CONTEXT_KERNEL;
				guest = false;
				first = true;
			} else if (ip == (uint64_t)PERF_CONTEXT_GUEST ||
				   ip == (uint64_t)PERF_CONTEXT_GUEST_KERNEL ||
				   ip == (uint64_t)PERF_CONTEXT_GUEST_USER) {
				kernel = ip == (uint64_t)PERF_CONTEXT_GUEST_KERNEL;
				guest = true;
				first = true;
			}
			continue;
		}
		/* Guest addresses mean nothing in this machine's maps. */
		if (guest)
			ring = kernel ? MACHINE_RING_GUEST_KERNEL : MACHINE_RING_GUEST_USER;
		else if (kernel || ip >= KERNEL_START)
			ring = MACHINE_RING_KERNEL;
		else
			ring = MACHINE_RING_USER;
		locate_one(m, pr, s->pid, ip, ring, !first, &locs[n++]);
		first = false;
	}
	return n;
}

static size_t symbolize(struct machine *m, const struct machine_loc *l, struct frame *frames,
			size_t max, bool real_only)
{
	struct frame *f = frames;
	uint64_t adj = l->ret ? 1 : 0;
	size_t n;

	if (!max)
		return 0;
	memset(f, 0, sizeof(*f));
	f->ip = l->ip;
	switch (l->ring) {
	case MACHINE_RING_GUEST_USER:
	case MACHINE_RING_GUEST_KERNEL:
		f->kernel = l->ring == MACHINE_RING_GUEST_KERNEL;
		f->kind = PA_FRAME_UNKNOWN;
		f->dso_name = "[unknown]";
		f->dso_off = l->ip;
		return 1;
	case MACHINE_RING_KERNEL:
		resolve_kernel(m, l, adj, f);
		return 1;
	case MACHINE_RING_USER:
		break;
	}
	n = expand_inline(f, resolve_user(m, l, adj, real_only, f), max);
	if (real_only && n > 1) {
		frames[0] = frames[n - 1];
		n = 1;
	}
	return n;
}

size_t machine_symbolize(struct machine *m, const struct machine_loc *l, struct frame *frames,
			 size_t max)
{
	return symbolize(m, l, frames, max, false);
}

size_t machine_symbolize_real(struct machine *m, const struct machine_loc *l, struct frame *f)
{
	return symbolize(m, l, f, 1, true);
}

size_t machine_resolve(struct machine *m, const struct pd_sample *s, struct frame *frames,
		       size_t max)
{
	size_t cap = s->nr_ips && s->ips ? s->nr_ips : 1, n = 0, nl, i;
	struct machine_loc *l = malloc(cap * sizeof(*l));

	if (!l)
		return 0;
	nl = machine_locate(m, s, l, cap);
	for (i = 0; i < nl && n < max; i++)
		n += machine_symbolize(m, &l[i], frames + n, max - n);
	free(l);
	return n;
}

const char *frame_name(const struct frame *f, char *buf, size_t len)
{
	if (f->sym)
		return f->sym;
	if (!f->dso)
		snprintf(buf, len, "[unknown]");
	else if (f->func_off)
		snprintf(buf, len, "%s+0x%" PRIx64, f->dso_name, f->func_off);
	else
		snprintf(buf, len, "%s+0x%" PRIx64, f->dso_name, f->dso_off);
	return buf;
}

const char *machine_warning(const struct machine *m)
{
	return m->dsos.warnings;
}
