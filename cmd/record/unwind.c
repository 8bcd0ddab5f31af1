// SPDX-License-Identifier: Apache-2.0
/*
 * The user side of the CFI stack walker (bpf/unwind.bpf.h): load the unwind tables of
 * the targets' executable mappings into the BPF maps of bpf/unwind.h, keep them
 * current as processes dlopen, exec and start, and report how the walks ended.
 *
 * Tables come from the CFI cache (compiled once per binary, cached on disk by
 * build-id), are loaded once per file into the one mmap'ed row array, and shared by
 * every process mapping the file; files.c keeps what is known of each file (its
 * build-id, segments and table) and opens it.  A process is (re)loaded when the BPF
 * side reports it unknown or stale (unwind_notify) or when the side-band shows it
 * mapping code; in -a mode only on the first report, and at most UW_MAX_NEW_PER_ROUND
 * new processes per round.  Walks the kernel could not finish for lack of a table are
 * finished from their stack slices in slice.c.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "unwind/cfi_cache.h"
#include "unwind/cfi_compile.h"
#include "base/procfs.h"
#include "profile.skel.h"
#include "record.h"
#include "unwind.h"
#include "unwind_priv.h"
#include "base/util.h"

#define UW_MAX_NEW_PER_ROUND 16		 /* -a: processes loaded per 100 ms round */
#define UW_STALE_RELOAD_NS   50000000ULL /* a still-stale process: reload at most 20 times a second */

const char *rec_unwind_mode_name(uint32_t mode)
{
	return mode == UNWIND_MODE_FP ? "fp" : mode == UNWIND_MODE_CFI ? "cfi" : "auto";
}

/* auto, cfi, fp, or dwarf[,SIZE]: auto with a stack slice of every sample (SIZE bytes,
 * 4096 to PROFILE_SLICE_BYTES, default 8192 as perf's --call-graph dwarf). */
int rec_unwind_parse_mode(const char *arg, struct rec_opts *o)
{
	o->slice_always = 0;
	if (!strcmp(arg, "fp")) {
		o->unwind_mode = UNWIND_MODE_FP;
	} else if (!strcmp(arg, "cfi")) {
		o->unwind_mode = UNWIND_MODE_CFI;
	} else if (!strcmp(arg, "auto")) {
		o->unwind_mode = UNWIND_MODE_AUTO;
	} else if (!strncmp(arg, "dwarf", 5) && (!arg[5] || arg[5] == ',')) {
		const char *size = arg[5] ? arg + 6 : NULL;
		unsigned long v = 8192;
		char *end;

		if (size) {
			errno = 0;
			v = strtoul(size, &end, 0);
			if (errno || end == size || *end || v < 4096 || v > PROFILE_SLICE_BYTES)
				return -EINVAL;
		}
		o->unwind_mode = UNWIND_MODE_AUTO;
		o->slice_always = v;
	} else {
		return -EINVAL;
	}
	return 0;
}

/* The mode's name in the summary. */
const char *rec_unwind_opts_name(const struct rec_opts *o)
{
	return o->slice_always ? "dwarf" : rec_unwind_mode_name(o->unwind_mode);
}

/* Before load: the walker's mode, and the row array sized (or shrunk away with fp). */
void rec_unwind_configure(struct rec_session *s)
{
	struct profile_bpf *skel = s->skel;
	bool cfi = s->opts.unwind_mode != UNWIND_MODE_FP;
	uint32_t rows = s->opts.unwind_rows ? s->opts.unwind_rows : UNWIND_DEFAULT_ROWS;

	skel->rodata->unwind_mode = s->opts.unwind_mode;
	skel->rodata->slice_always = s->opts.slice_always != 0;
	if (s->opts.slice_always)
		skel->rodata->slice_bytes = s->opts.slice_always;
	bpf_map__set_max_entries(skel->maps.unwind_rows, cfi ? rows : 1);
	bpf_map__set_max_entries(skel->maps.slice_bufs, cfi ? s->nr_possible : 1);
	if (!cfi) {
		bpf_map__set_max_entries(skel->maps.unwind_tables, 1);
		bpf_map__set_max_entries(skel->maps.unwind_procs, 1);
		bpf_map__set_max_entries(skel->maps.unwind_missing, 1);
		bpf_map__set_max_entries(skel->maps.unwind_execs, 1);
		bpf_map__set_max_entries(skel->maps.unwind_files, 1);
	}
	bpf_program__set_autoload(skel->progs.on_exec, cfi);
	/* Attached by rec_unwind_init, in every mode (profile_bpf__attach is not in -a). */
	bpf_program__set_autoattach(skel->progs.on_exec, false);
	/* A process's entry is freed with it (on_free, attached by rec_unwind_init);
	 * -a follows fork only to give children their parent's entry. */
	bpf_program__set_autoload(skel->progs.on_free, cfi);
	bpf_program__set_autoattach(skel->progs.on_free, false);
	if (s->opts.system_wide)
		bpf_program__set_autoload(skel->progs.on_fork, cfi);
}

static int on_notify(void *ctx, void *data, size_t size);

/* After load: map the rows, hook the notifications into the sample loop. */
int rec_unwind_init(struct rec_session *s)
{
	struct rec_unwind *u;
	long page = sysconf(_SC_PAGESIZE);
	int err;

	if (s->opts.unwind_mode == UNWIND_MODE_FP)
		return 0;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	s->uw = u;
	u->val = malloc(sizeof(*u->val));
	if (!u->val)
		return -ENOMEM;
	u->cache_dir = cfi_cache_default_dir(); /* NULL: compile every time, no cache */
	u->rows_cap = bpf_map__max_entries(s->skel->maps.unwind_rows);
	u->rows_len = (u->rows_cap * sizeof(struct unwind_row) + page - 1) / page * page;
	u->rows = mmap(NULL, u->rows_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       bpf_map__fd(s->skel->maps.unwind_rows), 0);
	if (u->rows == MAP_FAILED) {
		err = -errno;
		u->rows = NULL;
		pa_err("cannot mmap the unwind row map: %s; use --unwind fp", strerror(-err));
		return err;
	}
	if (ring_buffer__add(s->rb, bpf_map__fd(s->skel->maps.unwind_notify), on_notify, s)) {
		err = -errno;
		pa_err("cannot set up the unwind notification ring: %s", strerror(-err));
		return err;
	}
	u->exec_link = bpf_program__attach(s->skel->progs.on_exec);
	if (u->exec_link)
		u->free_link = bpf_program__attach(s->skel->progs.on_free);
	if (s->opts.system_wide && u->free_link)
		u->fork_link = bpf_program__attach(s->skel->progs.on_fork);
	if (!u->exec_link || !u->free_link || (s->opts.system_wide && !u->fork_link)) {
		err = -errno;
		pa_err("cannot attach to the sched_process_exec/free/fork tracepoints: %s; use "
		       "--unwind fp",
		       strerror(-err));
		return err;
	}
	return 0;
}

struct uw_proc *uw_proc_get(struct rec_unwind *u, pid_t pid, bool create)
{
	size_t i;

	for (i = 0; i < u->nr_procs; i++)
		if (u->procs[i].pid == pid)
			return &u->procs[i];
	if (!create)
		return NULL;
	if (u->nr_procs == u->cap_procs) {
		size_t cap = u->cap_procs ? 2 * u->cap_procs : 64;
		struct uw_proc *v = realloc(u->procs, cap * sizeof(*v));

		if (!v)
			return NULL;
		u->procs = v;
		u->cap_procs = cap;
	}
	u->procs[u->nr_procs] = (struct uw_proc){.pid = pid};
	return &u->procs[u->nr_procs++];
}

void uw_proc_forget(struct rec_unwind *u, struct uw_proc *p)
{
	*p = u->procs[--u->nr_procs];
}

/* ring_buffer callback for unwind_notify: a pid the walker found unknown or stale,
 * or that exec'd. */
static int on_notify(void *ctx, void *data, size_t size)
{
	struct rec_session *s = ctx;
	struct unwind_notice n;
	struct uw_proc *p;

	if (size < sizeof(n) || !s->uw)
		return 0;
	memcpy(&n, data, sizeof(n));
	p = uw_proc_get(s->uw, n.pid, true);
	if (!p)
		return 0;
	p->pending = true;
	p->notified = true;
	if (n.why == UNWIND_NOTICE_EXEC) {
		/* New mappings: loaded at once, whatever the last load was. */
		p->mapped = true;
		p->exec_ns = n.time;
	}
	return 0;
}

/* One exec's latency, from the exec to its mappings in the kernel. */
static void exec_lat_add(struct rec_unwind *u, uint64_t ns)
{
	if (u->nr_exec_lat == u->cap_exec_lat) {
		size_t cap = u->cap_exec_lat ? 2 * u->cap_exec_lat : 256;
		uint64_t *v = realloc(u->exec_lat, cap * sizeof(*v));

		if (!v)
			return;
		u->exec_lat = v;
		u->cap_exec_lat = cap;
	}
	u->exec_lat[u->nr_exec_lat++] = ns;
}

/* Warn once that the row array or the table ids are used up. */
static uint32_t tables_full(struct rec_unwind *u)
{
	if (!u->rows_full_warned)
		pa_warn("unwind tables full (%zu rows, %u tables); raise --unwind-rows",
			u->rows_cap, UNWIND_MAX_TABLES);
	u->rows_full_warned = true;
	return UNWIND_NO_TABLE;
}

/* The n rows put at u->rows + u->rows_used made a table the walker sees: its id. */
static uint32_t table_publish(struct rec_session *s, uint32_t n, const char *path)
{
	struct rec_unwind *u = s->uw;
	struct unwind_table_info info = {.first = u->rows_used, .n = n};
	uint32_t id = u->nr_tables;

	if (!n)
		return UNWIND_NO_TABLE;
	if (n >= (1u << UNWIND_SEARCH_STEPS)) {
		pa_warn("%s: %u unwind rows, over the walker's %u; its frames use frame pointers",
			path, n, (1u << UNWIND_SEARCH_STEPS) - 1);
		return UNWIND_NO_TABLE;
	}
	if (id >= UNWIND_MAX_TABLES)
		return tables_full(u);
	if (bpf_map__update_elem(s->skel->maps.unwind_tables, &id, sizeof(id), &info, sizeof(info),
				 BPF_ANY))
		return UNWIND_NO_TABLE;
	u->rows_used += n;
	u->tables[id] = info;
	u->nr_tables++;
	return id;
}

/* f's table read from the CFI cache straight into the row array; false on a miss. */
static bool table_from_cache(struct rec_session *s, struct rec_file *f, const char *path)
{
	struct rec_unwind *u = s->uw;
	uint64_t t0 = pa_now_ns(), base;
	long n = cfi_cache_read(u->cache_dir, f->bid, f->bid_size, u->rows + u->rows_used,
				u->rows_cap - u->rows_used, &base);

	if (n < 0 && n != -ENOSPC)
		return false;
	f->base = base;
	f->table = n < 0 ? tables_full(u) : table_publish(s, n, path);
	u->loads++;
	u->cache_hits++;
	if (s->opts.verbose > 1)
		pa_info("unwind: %s: %ld rows from the cache in %.1f ms", path, n,
			(pa_now_ns() - t0) / 1e6);
	return true;
}

/* t's rows into the row array, and f's table the walker's. */
static void table_install(struct rec_session *s, struct rec_file *f, const struct cfi_table *t,
			  const char *path)
{
	struct rec_unwind *u = s->uw;

	f->base = t->base;
	if (u->rows_used + t->n > u->rows_cap) {
		f->table = tables_full(u);
	} else {
		memcpy(u->rows + u->rows_used, t->rows, t->n * sizeof(*t->rows));
		f->table = table_publish(s, t->n, path);
	}
	u->loads++;
	u->compiled++;
}

int rec_unwind_file_table(struct rec_session *s, struct rec_file *f, int fd, const char *path,
			  bool stable)
{
	struct rec_unwind *u = s->uw;
	struct cfi_table *t;

	if (!u || f->table_state == REC_TABLE_KNOWN || f->table_state == REC_TABLE_COMPILING)
		return 0;
	if (!f->nsegs) {
		f->table_state = REC_TABLE_KNOWN;
		return 0;
	}
	if (u->cache_dir && f->bid_size > 0 && f->table_state != REC_TABLE_NEED_FILE &&
	    table_from_cache(s, f, path)) {
		f->table_state = REC_TABLE_KNOWN;
		return 0;
	}
	if (fd < 0) {
		f->table_state = REC_TABLE_NEED_FILE;
		return -EAGAIN;
	}
	/*
	 * Compiled off the sample loop; the processes mapping it go on without it
	 * (their samples there keep stack slices) until rec_unwind_collect.  Not a
	 * file known by no inode (deleted, a memfd): the next load of its process
	 * would not find it again, but compile it anew, and wait again.
	 */
	if (stable && !uw_compile_queue(u, f - s->files.v, fd, path)) {
		f->table_state = REC_TABLE_COMPILING;
		return 0;
	}
	t = cfi_compile_elf(NULL, fd, NULL);
	if (t) {
		/* Best effort: a read-only cache only costs time. */
		if (u->cache_dir && t->bid_size)
			cfi_cache_store(u->cache_dir, t);
		table_install(s, f, t, path);
		cfi_table_free(t);
	} else if (s->opts.verbose) {
		pa_warn("no unwind table for %s: %s", path, strerror(errno));
	}
	f->table_state = REC_TABLE_KNOWN;
	return 0;
}

void rec_unwind_collect(struct rec_session *s)
{
	struct rec_unwind *u = s->uw;
	struct uw_job *j, *next;
	uint64_t now;
	size_t i;

	if (!u || !(j = uw_compile_take(u)))
		return;
	for (; j; j = next) {
		struct rec_file *f = &s->files.v[j->file];

		next = j->next;
		if (j->t) {
			table_install(s, f, j->t, j->path);
			if (s->opts.verbose > 1)
				pa_info("unwind: %s: %u rows compiled in %.1f ms, loaded %.1f ms "
					"after it was queued",
					j->path, j->t->n, j->ns / 1e6, (pa_now_ns() - j->t0) / 1e6);
		} else if (s->opts.verbose && j->err != ECANCELED) {
			pa_warn("no unwind table for %s: %s", j->path, strerror(j->err));
		}
		f->table_state = REC_TABLE_KNOWN;
		rec_unwind_publish_file(s, f);
		uw_job_free(j);
	}
	/* Their mappings in the kernel with the new tables, before the slices held
	 * for them are walked. */
	now = pa_now_ns();
	for (i = 0; i < u->nr_procs; i++) {
		struct uw_proc *p = &u->procs[i];

		if (p->awaits && uw_proc_reload(s, p, now) == -ESRCH) {
			uw_proc_forget(u, p);
			i--;
		}
	}
}

void rec_unwind_collect_final(struct rec_session *s)
{
	if (!s->uw || !s->uw->compiles)
		return;
	uw_compile_wait(s->uw, UW_COMPILE_WAIT_NS);
	rec_unwind_collect(s);
}

/*
 * Put f, whose table is loaded, in unwind_files: the walker then places a pc in
 * any mapping of it from the VMA, before (or without) the process being loaded.
 */
void rec_unwind_publish_file(struct rec_session *s, const struct rec_file *f)
{
	struct rec_unwind *u = s->uw;
	struct unwind_file_key k;
	struct unwind_file v = {};
	int i;

	if (!u || f->table == UNWIND_NO_TABLE)
		return;
	for (i = 0; i < f->nsegs && !f->segs[i].exec; i++)
		;
	if (i == f->nsegs)
		return;
	/* The kernel's dev_t, as in inode->i_sb->s_dev. */
	k.dev = (uint64_t)major(f->dev) << 20 | minor(f->dev);
	k.ino = f->ino;
	v.vaddr = f->segs[i].vaddr;
	v.off = f->segs[i].off;
	v.filesz = f->segs[i].filesz;
	v.base = f->base;
	v.table = f->table;
	/* Best effort: a file left out (map full) waits for its process's load. */
	bpf_map__update_elem(s->skel->maps.unwind_files, &k, sizeof(k), &v, sizeof(v), BPF_ANY);
}

/* Fill e for mapping m of a file: table pc = pc - adj. */
void uw_map_entry(const struct rec_file *f, const struct proc_map *m, struct unwind_map *e)
{
	int i;

	e->start = m->start;
	e->end = m->end;
	e->table = UNWIND_NO_TABLE;
	if (!f || f->table == UNWIND_NO_TABLE)
		return;
	for (i = 0; i < f->nsegs; i++) {
		const struct rec_seg *g = &f->segs[i];

		/* The kernel maps a segment from its offset rounded down to a page, so
		 * the page before an executable segment often holds the end of the
		 * read-only one too: an executable mapping is its executable segment. */
		if (g->exec && (g->off & ~4095ULL) <= m->pgoff && m->pgoff < g->off + g->filesz) {
			uint64_t vstart = g->vaddr + (m->pgoff - g->off); /* mod 2^64 */

			e->adj = m->start - vstart + f->base;
			e->table = f->table;
			return;
		}
	}
}

/*
 * Read p's executable mappings and publish them.  -ESRCH when it is gone.  Code of a
 * file whose table is compiling is left out: the walker takes a stack slice there,
 * finished once the table is loaded (p->awaits: p is loaded again then).
 */
static int proc_load(struct rec_session *s, struct uw_proc *p)
{
	struct rec_unwind *u = s->uw;
	struct unwind_proc *v = u->val;
	struct proc_map *maps = NULL;
	pid_t pid = p->pid;
	uint32_t key = pid;
	bool python = false;
	int i, n;

	n = proc_read_maps(pid, true, &maps);
	if (n < 0)
		return -ESRCH;
	memset(v, 0, sizeof(*v));
	p->awaits = false;
	for (i = 0; i < n; i++) {
		const struct proc_map *m = &maps[i];
		const struct rec_file *f = NULL;
		struct rec_file_ref r;

		/* [vsyscall] sits above 2^63, where the walker's branch-free search
		 * cannot compare; it holds no code a stack walk needs. */
		if (m->start >> 63)
			continue;
		if (v->n == UNWIND_MAX_MAPS) {
			u->maps_cut++;
			break;
		}
		if (m->path[0] == '/') {
			rec_file_ref_map(&r, pid, m);
			f = rec_file_get(s, &r, true);
		}
		if (f && f->is_python)
			python = rec_python_proc(s, pid, f, m) || python;
		if (f && f->table_state == REC_TABLE_COMPILING) {
			p->awaits = true;
			continue;
		}
		uw_map_entry(f, m, &v->m[v->n]);
		if (s->opts.verbose > 1)
			pa_info("unwind: pid %d %llx-%llx %s table %d adj %llx", pid,
				(unsigned long long)m->start, (unsigned long long)m->end, m->path,
				(int)v->m[v->n].table, (unsigned long long)v->m[v->n].adj);
		v->n++;
	}
	proc_maps_free(maps, n);
	if (!python)
		rec_python_gone(s, pid);
	if (bpf_map__update_elem(s->skel->maps.unwind_procs, &key, sizeof(key), v, sizeof(*v),
				 BPF_ANY)) {
		int err = -errno;

		if (err == -E2BIG)
			u->procs_full++;
		return err;
	}
	return 0;
}

/* A process to load now (a -p target at attach). */
int rec_unwind_add_pid(struct rec_session *s, pid_t pid)
{
	struct uw_proc *p;

	if (!s->uw)
		return 0;
	p = uw_proc_get(s->uw, pid, true);
	if (!p)
		return -ENOMEM;
	p->loaded = !proc_load(s, p);
	p->load_ns = pa_now_ns();
	return 0;
}

/* Side-band: pid mapped code (dlopen, exec, a new process). */
bool rec_unwind_note_mmap(struct rec_session *s, pid_t pid, uint32_t prot)
{
	struct uw_proc *p;

	if (!s->uw || !(prot & PROT_EXEC))
		return false;
	/* -a: unknown processes wait for the walker to ask for them. */
	p = uw_proc_get(s->uw, pid, !s->opts.system_wide);
	if (!p)
		return false;
	p->pending = true;
	p->mapped = true;
	return true;
}

/* Side-band: the process exited: its entry goes (pids get recycled). */
void rec_unwind_note_exit(struct rec_session *s, pid_t pid)
{
	struct rec_unwind *u = s->uw;
	struct uw_proc *p;
	uint32_t key = pid;

	if (!u || !(p = uw_proc_get(u, pid, false)))
		return;
	bpf_map__delete_elem(s->skel->maps.unwind_procs, &key, sizeof(key), 0);
	bpf_map__delete_elem(s->skel->maps.unwind_missing, &key, sizeof(key), 0);
	uw_proc_forget(u, p);
}

/* Load p's mappings now, and settle what asked for it.  -ESRCH when it is gone. */
int uw_proc_reload(struct rec_session *s, struct uw_proc *p, uint64_t now)
{
	uint32_t key = p->pid;
	int err = proc_load(s, p);

	p->loaded = !err;
	p->load_ns = now;
	/* Only a walk's report starts the wait: after the load an exec asked
	 * for, the first report (a library just mapped) is answered at once. */
	p->notify_ns = p->notified && !p->exec_ns ? now : 0;
	if (!err && p->exec_ns)
		exec_lat_add(s->uw, pa_now_ns() - p->exec_ns);
	p->exec_ns = 0;
	p->pending = false;
	p->mapped = false;
	if (p->notified)
		bpf_map__delete_elem(s->skel->maps.unwind_missing, &key, sizeof(key), 0);
	p->notified = false;
	return err;
}

/* Once per round, after the side-band: (re)load the processes that need it. */
void rec_unwind_round(struct rec_session *s)
{
	struct rec_unwind *u = s->uw;
	uint64_t now = pa_now_ns();
	size_t i, fresh = 0;

	if (!u)
		return;
	for (i = 0; i < u->nr_procs; i++) {
		struct uw_proc *p = &u->procs[i];
		int err;

		if (!p->pending)
			continue;
		/* The first report after a load is answered at once (a dlopen the
		 * side-band has not shown yet); a process that stays stale (a pc in
		 * code without a file mapping, e.g. a JIT) is not reloaded on every
		 * sample's report. */
		if (p->loaded && !p->mapped && p->notified && p->notify_ns &&
		    now - p->notify_ns < UW_STALE_RELOAD_NS)
			continue;
		if (!p->loaded && s->opts.system_wide && fresh++ >= UW_MAX_NEW_PER_ROUND)
			continue;
		err = uw_proc_reload(s, p, now);
		if (err == -ESRCH) {
			uw_proc_forget(u, p);
			i--;
		}
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* "unwind: 212 execs, mappings in the kernel 0.41 ms after the exec (p50), ..." */
static void exec_lat_summary(struct rec_unwind *u)
{
	size_t n = u->nr_exec_lat;

	qsort(u->exec_lat, n, sizeof(*u->exec_lat), cmp_u64);
	pa_info("unwind: %zu execs, mappings in the kernel %.2f ms after the exec (p50), "
		"%.2f ms (p99), %.2f ms (max)",
		n, u->exec_lat[n / 2] / 1e6, u->exec_lat[(n * 99) / 100] / 1e6,
		u->exec_lat[n - 1] / 1e6);
}

/* "stacks: 99.8% complete (cfi), 0.2% table missing" */
void rec_unwind_summary(struct rec_session *s)
{
	static const char *const names[UNWIND_END_NR] = {"complete",	     "table missing",
							 "rule unsupported", "stack read failed",
							 "depth limit",	     "in exec or exit"};
	uint64_t tot[UNWIND_STATS_NR] = {}, vals[s->nr_possible], all = 0;
	char line[512];
	size_t len;
	uint32_t k;
	int i;

	if (!s->uw)
		return;
	for (k = 0; k < UNWIND_STATS_NR; k++) {
		if (bpf_map__lookup_elem(s->skel->maps.unwind_stats, &k, sizeof(k), vals,
					 sizeof(vals), 0))
			return;
		for (i = 0; i < s->nr_possible; i++)
			tot[k] += vals[i];
	}
	/* Walks finished from a stack slice end complete, whatever the kernel's did. */
	for (k = 1; k < UNWIND_END_NR; k++) {
		uint64_t fixed = s->uw->slice_fixed[k] < tot[k] ? s->uw->slice_fixed[k] : tot[k];

		tot[k] -= fixed;
		tot[UNWIND_END_COMPLETE] += fixed;
	}
	/* A task in exec or exit has no user stack to walk: not the walker's share. */
	for (k = 0; k < UNWIND_END_NR; k++)
		all += k == UNWIND_END_GONE ? 0 : tot[k];
	if (!all)
		return;
	len = snprintf(line, sizeof(line), "stacks: %.1f%% complete (%s)",
		       100.0 * tot[UNWIND_END_COMPLETE] / all, rec_unwind_opts_name(&s->opts));
	if (s->uw->slices)
		len += snprintf(line + len, sizeof(line) - len,
				" (%llu of %llu stack slices finished in user space)",
				(unsigned long long)s->uw->slice_why[UW_SLICE_DONE],
				(unsigned long long)s->uw->slices);
	for (k = 1; k < UNWIND_END_NR && len < sizeof(line); k++)
		if (tot[k] && k != UNWIND_END_GONE)
			len += snprintf(line + len, sizeof(line) - len, ", %.1f%% %s",
					100.0 * tot[k] / all, names[k]);
	if (tot[UNWIND_END_GONE] && len < sizeof(line))
		snprintf(line + len, sizeof(line) - len,
			 "; %llu more in exec or exit, with no user stack",
			 (unsigned long long)tot[UNWIND_END_GONE]);
	pa_info("%s", line);
	if (tot[UNWIND_FORK_LOST])
		pa_warn("unwind: %llu new processes did not get their parent's tables (the "
			"%u-process map was full): their first samples fall back to frame pointers",
			(unsigned long long)tot[UNWIND_FORK_LOST], UNWIND_MAX_PROCS);
	if (tot[UNWIND_MISSING_FULL] || tot[UNWIND_NOTIFY_LOST] || s->uw->procs_full)
		pa_warn("unwind: tables not loaded for some processes (%llu walks found the "
			"request table full, %llu requests lost and asked again, %llu processes "
			"over the %u-process limit): their stacks fall back to frame pointers",
			(unsigned long long)tot[UNWIND_MISSING_FULL],
			(unsigned long long)tot[UNWIND_NOTIFY_LOST],
			(unsigned long long)s->uw->procs_full, UNWIND_MAX_PROCS);
	if (s->uw->maps_cut)
		pa_warn("unwind: %llu process loads had more than %u executable mappings; code "
			"mapped past those unwinds by frame pointers",
			(unsigned long long)s->uw->maps_cut, UNWIND_MAX_MAPS);
	if (s->opts.verbose)
		pa_info("unwind: %llu walks, %llu cfi + %llu fp frames (%llu placed from their "
			"VMA); %u tables (%zu rows, %llu from cache, %llu compiled)",
			(unsigned long long)all, (unsigned long long)tot[UNWIND_FRAMES_CFI],
			(unsigned long long)tot[UNWIND_FRAMES_FP],
			(unsigned long long)tot[UNWIND_FRAMES_VMA], s->uw->nr_tables,
			s->uw->rows_used, (unsigned long long)s->uw->cache_hits,
			(unsigned long long)s->uw->compiled);
	if (s->opts.verbose && s->uw->slices)
		uw_slice_summary(s->uw);
	if (tot[UNWIND_SLICE_SKIPPED])
		pa_warn("unwind: %llu stack slices not taken (the ring buffer was over half full): "
			"those stacks used frame pointers",
			(unsigned long long)tot[UNWIND_SLICE_SKIPPED]);
	if (s->opts.verbose && s->uw->nr_exec_lat)
		exec_lat_summary(s->uw);
}

void rec_unwind_free(struct rec_session *s)
{
	struct rec_unwind *u = s->uw;

	if (!u)
		return;
	uw_compile_stop(u);
	bpf_link__destroy(u->exec_link);
	bpf_link__destroy(u->fork_link);
	bpf_link__destroy(u->free_link);
	uw_slices_free(u);
	free(u->exec_lat);
	if (u->rows)
		munmap(u->rows, u->rows_len);
	free(u->cache_dir);
	free(u->procs);
	free(u->val);
	free(u);
	s->uw = NULL;
}
