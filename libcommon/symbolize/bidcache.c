// SPDX-License-Identifier: Apache-2.0
/*
 * The build-id cache writer.  Layout and naming follow perf's build-id.c so both
 * tools share ~/.debug; the reader side is dso.c's ".build-id/xx/rest/elf" lookup.
 * A stripped Go binary is kept as a copy with a symbol table (buildid.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/bidcache.h"
#include "symbolize/buildid.h"
#include "symbolize/elfadd.h"
#include "symbolize/gopclntab.h"
#include "perfdata/pd_read.h"
#include "perfdata/perfdata.h"
#include "base/util.h"

/* mkdir -p of path's directories up to (not including) its last component. */
static int mkdir_parents(char *path)
{
	char *p;

	for (p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST) {
			int err = -errno;

			*p = '/';
			return err;
		}
		*p = '/';
	}
	return 0;
}

/* Copy fd into a new file tmp (mode 0755, like perf's copies of executables). */
static int copy_fd(int in, const char *tmp)
{
	struct stat st;
	off_t off = 0;
	int out, err = 0;

	if (fstat(in, &st))
		return -errno;
	out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	if (out < 0)
		return -errno;
	while (off < st.st_size) {
		ssize_t n = sendfile(out, in, &off, st.st_size - off);

		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			break;
		}
	}
	if (close(out) && !err)
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

/*
 * A stripped Go binary into a new file tmp: itself with the functions of its .gopclntab
 * as a .symtab and its derived build-id as a GNU note, so perf names its frames too.
 */
static int write_go_copy(int in, const char *tmp, const uint8_t *bid, size_t bid_size)
{
	struct elfadd_sym *syms = NULL;
	struct gopcln *t = NULL;
	size_t i, n = 0;
	Elf *elf;
	int out, err;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	elf = elf_begin(in, ELF_C_READ_MMAP, NULL);
	t = elf ? gopcln_open(elf) : NULL;
	if (!t) {
		err = elf && errno == ENOMEM ? -ENOMEM : -ENOEXEC;
		goto out;
	}
	syms = calloc(gopcln_nr_funcs(t) + 1, sizeof(*syms));
	if (!syms) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < gopcln_nr_funcs(t); i++) {
		uint64_t start, end;

		if (!gopcln_func(t, i, &start, &end, &syms[n].name)) {
			syms[n].start = start;
			syms[n].size = end - start;
			n++;
		}
	}
	out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	if (out < 0) {
		err = -errno;
		goto out;
	}
	err = elfadd_write(in, out, syms, n, bid, bid_size);
	if (close(out) && !err)
		err = -errno;
	if (err)
		unlink(tmp);
out:
	free(syms);
	gopcln_free(t);
	if (elf)
		elf_end(elf);
	return err;
}

/* perf names a deleted file "path (deleted)"; the cache is named for the path. */
static void strip_deleted(char *s)
{
	static const char suffix[] = " (deleted)";
	size_t n = strlen(s), k = sizeof(suffix) - 1;

	if (n > k && !strcmp(s + n - k, suffix))
		s[n - k] = '\0';
}

int bidc_add(const char *dir, const uint8_t *bid, size_t bid_size, const char *path,
	     const char *src)
{
	char hex[2 * BID_MAX + 1], name[PATH_MAX], link_path[PATH_MAX], elf[PATH_MAX];
	char tmp[PATH_MAX + 32], target[PATH_MAX], fdpath[64];
	uint8_t got[BID_MAX];
	struct stat st;
	bool derived;
	int fd, n, err;

	if (!bid_size || bid_size > BID_MAX || path[0] != '/')
		return -EINVAL;
	pa_hex(hex, bid, bid_size);
	if (snprintf(link_path, sizeof(link_path), "%s/.build-id/%.2s/%s", dir, hex, hex + 2) >=
	    (int)sizeof(link_path))
		return -ENAMETOOLONG;
	if (!stat(link_path, &st))
		return 0;
	snprintf(name, sizeof(name), "%s", path);
	strip_deleted(name);
	if (snprintf(elf, sizeof(elf), "%s%s/%s/elf", dir, name, hex) >= (int)sizeof(elf))
		return -ENAMETOOLONG;

	fd = open(src, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* Never cache a file under a build-id it does not carry (rebuilt meanwhile). */
	n = bid_read_fd_derived(fd, got, &derived);
	if (n != (int)bid_size || memcmp(got, bid, bid_size)) {
		close(fd);
		return -ESTALE;
	}
	err = mkdir_parents(elf);
	if (err)
		goto out;
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", elf, (int)getpid());
	unlink(tmp);
	/*
	 * Link the open file itself: that works for deleted files and for ones in other
	 * mount namespaces alike; across filesystems (EXDEV) it has to be a copy.
	 */
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	if (derived) {
		err = write_go_copy(fd, tmp, bid, bid_size);
		if (err)
			goto out;
	} else if (linkat(AT_FDCWD, fdpath, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW)) {
		err = copy_fd(fd, tmp);
		if (err)
			goto out;
	}
	if (rename(tmp, elf)) {
		err = -errno;
		unlink(tmp);
		goto out;
	}
	/* The link names the directory, relative to .build-id/xx/, as perf's do. */
	snprintf(target, sizeof(target), "../..%s/%s", name, hex);
	err = mkdir_parents(link_path);
	if (!err && symlink(target, link_path) && errno != EEXIST)
		err = -errno;
	if (!err)
		err = 1;
out:
	close(fd);
	return err;
}

const char *bidc_jit_map_path(const char *dir, uint32_t pid, char *buf, size_t len)
{
	snprintf(buf, len, "%s/jit/perf-%u.map", dir, pid);
	return buf;
}

/* One file mapping of one process, as MMAP2 records give them. */
struct seen_map {
	uint32_t pid;
	uint64_t start, end;
	uint32_t path; /* index into save_ctx.paths */
};

struct seen_path {
	char *name;
	uint32_t pid; /* a process that mapped it, and where: to reach the file */
	uint64_t start, end;
	bool hit; /* a sample fell into it */
};

struct save_ctx {
	const char *dir;
	struct seen_map *maps;
	size_t nr_maps, cap_maps;
	struct seen_path *paths;
	size_t nr_paths;
	uint32_t (*forks)[2]; /* child, parent: children inherit the parent's maps */
	size_t nr_forks;
	uint32_t *pids; /* processes with samples: whose JIT maps to keep */
	size_t nr_pids;
	struct bidc_stats *st;
};

static void note_pid(struct save_ctx *c, uint32_t pid)
{
	uint32_t *p;
	size_t i;

	for (i = 0; i < c->nr_pids; i++)
		if (c->pids[i] == pid)
			return;
	p = realloc(c->pids, (c->nr_pids + 1) * sizeof(*p));
	if (!p)
		return; /* best effort: one JIT map fewer */
	c->pids = p;
	c->pids[c->nr_pids++] = pid;
}

static int path_index(struct save_ctx *c, const char *name, uint32_t pid, uint64_t start,
		      uint64_t end)
{
	struct seen_path *p;
	size_t i;

	/* Few distinct files, many mappings: a linear scan from the newest is enough. */
	for (i = c->nr_paths; i-- > 0;)
		if (!strcmp(c->paths[i].name, name))
			return i;
	p = realloc(c->paths, (c->nr_paths + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	c->paths = p;
	p = &c->paths[c->nr_paths];
	p->name = strdup(name);
	if (!p->name)
		return -ENOMEM;
	p->pid = pid;
	p->start = start;
	p->end = end;
	p->hit = false;
	return c->nr_paths++;
}

static void note_mmap2(struct save_ctx *c, const struct perf_event_header *h)
{
	const uint8_t *b = (const uint8_t *)h;
	uint32_t pid;
	uint64_t start, len;
	const char *name;
	int idx;

	if (h->size < 73)
		return;
	memcpy(&pid, b + 8, 4);
	memcpy(&start, b + 16, 8);
	memcpy(&len, b + 24, 8);
	name = (const char *)b + 72;
	if (!memchr(name, '\0', h->size - 72) || name[0] != '/')
		return;
	idx = path_index(c, name, pid, start, start + len);
	if (idx < 0)
		return;
	if (c->nr_maps == c->cap_maps) {
		size_t cap = c->cap_maps ? 2 * c->cap_maps : 256;
		struct seen_map *m = realloc(c->maps, cap * sizeof(*m));

		if (!m)
			return;
		c->maps = m;
		c->cap_maps = cap;
	}
	c->maps[c->nr_maps++] = (struct seen_map){pid, start, start + len, idx};
}

static void note_fork(struct save_ctx *c, const struct perf_event_header *h)
{
	const uint32_t *body = (const uint32_t *)(h + 1); /* pid, ppid, tid, ptid */
	uint32_t(*f)[2];

	if (h->size < sizeof(*h) + 16 || body[0] == body[1])
		return; /* a new thread, not a new process */
	f = realloc(c->forks, (c->nr_forks + 1) * sizeof(*f));
	if (!f)
		return;
	c->forks = f;
	c->forks[c->nr_forks][0] = body[0];
	c->forks[c->nr_forks][1] = body[1];
	c->nr_forks++;
}

static int cmp_map(const void *pa, const void *pb)
{
	const struct seen_map *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

/* The file pid (or the process it was forked from) had mapped at ip, or -1. */
static int map_of(const struct save_ctx *c, uint32_t pid, uint64_t ip)
{
	int depth, k;

	for (depth = 0; depth < 8; depth++) {
		size_t lo = 0, hi = c->nr_maps;

		/* lo: the first map after (pid, ip) in (pid, start) order */
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			const struct seen_map *m = &c->maps[mid];

			if (m->pid < pid || (m->pid == pid && m->start <= ip))
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo > 0 && c->maps[lo - 1].pid == pid)
			return ip < c->maps[lo - 1].end ? (int)c->maps[lo - 1].path : -1;
		if (lo < c->nr_maps && c->maps[lo].pid == pid)
			return -1;
		/* No mapping of its own: a fork child running on its parent's. */
		for (k = c->nr_forks; k-- > 0;)
			if (c->forks[k][0] == pid)
				break;
		if (k < 0)
			return -1;
		pid = c->forks[k][1];
	}
	return -1;
}

static void mark_hits(struct save_ctx *c, const struct pd_sample *s)
{
	uint64_t i;
	int idx;

	/* Kernel addresses match no user mapping: no need to tell them apart. */
	idx = s->nr_ips ? -1 : map_of(c, s->pid, s->ip);
	if (idx >= 0)
		c->paths[idx].hit = true;
	for (i = 0; i < s->nr_ips; i++) {
		if (s->ips[i] >= PERF_CONTEXT_MAX)
			continue;
		idx = map_of(c, s->pid, s->ips[i]);
		if (idx >= 0)
			c->paths[idx].hit = true;
	}
	note_pid(c, s->pid);
}

static void save_file(struct save_ctx *c, const struct pd_build_id *b)
{
	const struct seen_path *p = NULL;
	char src[PATH_MAX + 64];
	size_t i;
	int ret = -ENOENT;

	for (i = 0; i < c->nr_paths; i++)
		if (!strcmp(c->paths[i].name, b->filename))
			p = &c->paths[i];
	/* Like perf record: the files samples hit, not every library mapped. */
	if (!p || !p->hit)
		return;
	if (p->pid != (uint32_t)-1) {
		/* map_files holds the mapped file even if deleted or namespaced. */
		snprintf(src, sizeof(src), "/proc/%u/map_files/%llx-%llx", p->pid,
			 (unsigned long long)p->start, (unsigned long long)p->end);
		ret = bidc_add(c->dir, b->build_id, b->size, b->filename, src);
		if (ret < 0) {
			snprintf(src, sizeof(src), "/proc/%u/root%s", p->pid, b->filename);
			ret = bidc_add(c->dir, b->build_id, b->size, b->filename, src);
		}
	}
	if (ret < 0)
		ret = bidc_add(c->dir, b->build_id, b->size, b->filename, b->filename);
	if (ret > 0)
		c->st->added++;
	else if (!ret)
		c->st->present++;
	else
		c->st->missing++;
}

/* The pid inside the process's own pid namespace: the name of its JIT map. */
static uint32_t ns_pid(uint32_t pid)
{
	char path[64], line[256];
	uint32_t nspid = pid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "re");
	if (!f)
		return pid;
	while (fgets(line, sizeof(line), f)) {
		char *p, *end;

		if (strncmp(line, "NSpid:", 6))
			continue;
		/* The last field is the innermost namespace's pid. */
		for (p = line + 6; *p; p = end) {
			unsigned long v = strtoul(p, &end, 10);

			if (end == p)
				break;
			nspid = v;
		}
		break;
	}
	fclose(f);
	return nspid;
}

static void save_jit_map(struct save_ctx *c, uint32_t pid)
{
	char src[PATH_MAX], dst[PATH_MAX], tmp[PATH_MAX + 32];
	int fd, err;

	snprintf(src, sizeof(src), "/proc/%u/root/tmp/perf-%u.map", pid, ns_pid(pid));
	fd = open(src, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(src, sizeof(src), "/tmp/perf-%u.map", pid);
		fd = open(src, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0)
		return;
	bidc_jit_map_path(c->dir, pid, dst, sizeof(dst));
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", dst, (int)getpid());
	unlink(tmp);
	/* A copy, not a link: the JIT keeps appending to (or truncates) the original. */
	err = mkdir_parents(dst);
	if (!err)
		err = copy_fd(fd, tmp);
	if (!err && rename(tmp, dst)) {
		unlink(tmp);
		err = -errno;
	}
	if (!err)
		c->st->jit_maps++;
	close(fd);
}

int bidc_save(const char *perf_data, const char *dir, struct bidc_stats *st)
{
	struct save_ctx c = {.st = st};
	char def[PATH_MAX], err[256];
	struct pd_reader *r;
	struct pd_event ev;
	const char *home;
	size_t i;
	int ret;

	memset(st, 0, sizeof(*st));
	if (!dir) {
		home = getenv("HOME");
		if (!home || !*home)
			return -ENOENT;
		snprintf(def, sizeof(def), "%s/.debug", home);
		dir = def;
	}
	c.dir = dir;
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	if (access(dir, W_OK))
		return -errno;
	/* Two passes: every mapping first, then the samples that hit them. */
	r = pd_reader_open(perf_data, err, sizeof(err));
	if (!r)
		return errno ? -errno : -EINVAL;
	while ((ret = pd_reader_next(r, &ev)) > 0) {
		if (ev.hdr->type == PERF_RECORD_MMAP2)
			note_mmap2(&c, ev.hdr);
		else if (ev.hdr->type == PERF_RECORD_FORK)
			note_fork(&c, ev.hdr);
	}
	pd_reader_close(r);
	r = ret < 0 ? NULL : pd_reader_open(perf_data, err, sizeof(err));
	if (!r) {
		ret = ret < 0 ? ret : errno ? -errno : -EINVAL;
		goto out;
	}
	if (c.nr_maps)
		qsort(c.maps, c.nr_maps, sizeof(*c.maps), cmp_map);
	while ((ret = pd_reader_next(r, &ev)) > 0)
		if (ev.hdr->type == PERF_RECORD_SAMPLE)
			mark_hits(&c, &ev.sample);
	for (i = 0; i < pd_reader_nr_build_ids(r); i++) {
		const struct pd_build_id *b = pd_reader_build_id(r, i);

		/* The kernel and [vdso] have no file here to keep. */
		if (b->filename && b->filename[0] == '/' && b->size &&
		    (b->cpumode & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER)
			save_file(&c, b);
	}
	for (i = 0; i < c.nr_pids; i++)
		save_jit_map(&c, c.pids[i]);
	pd_reader_close(r);
out:
	for (i = 0; i < c.nr_paths; i++)
		free(c.paths[i].name);
	free(c.paths);
	free(c.maps);
	free(c.forks);
	free(c.pids);
	return ret < 0 ? ret : 0;
}
