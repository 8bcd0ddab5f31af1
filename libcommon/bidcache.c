// SPDX-License-Identifier: Apache-2.0
/*
 * The build-id cache writer.  Layout and naming follow perf's build-id.c so both
 * tools share ~/.debug; the reader side is dso.c's ".build-id/xx/rest/elf" lookup.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bidcache.h"
#include "buildid.h"
#include "pd_read.h"
#include "perfdata.h"
#include "util.h"

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
	n = bid_read_fd(fd, got);
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
	if (linkat(AT_FDCWD, fdpath, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW)) {
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

/* The first mapping of each file seen: which process to reach it through. */
struct seen_map {
	uint32_t pid;
	uint64_t start, end;
	char *path;
};

struct save_ctx {
	const char *dir;
	struct seen_map *maps;
	size_t nr_maps;
	uint32_t *pids;
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

static void note_mmap2(struct save_ctx *c, const struct perf_event_header *h)
{
	const uint8_t *b = (const uint8_t *)h;
	struct seen_map *m;
	uint32_t pid;
	uint64_t start, len;
	const char *name;
	size_t i;

	if (h->size < 73)
		return;
	memcpy(&pid, b + 8, 4);
	memcpy(&start, b + 16, 8);
	memcpy(&len, b + 24, 8);
	name = (const char *)b + 72;
	if (!memchr(name, '\0', h->size - 72))
		return;
	if (pid != (uint32_t)-1)
		note_pid(c, pid);
	if (name[0] != '/')
		return;
	for (i = 0; i < c->nr_maps; i++)
		if (!strcmp(c->maps[i].path, name))
			return;
	m = realloc(c->maps, (c->nr_maps + 1) * sizeof(*m));
	if (!m)
		return;
	c->maps = m;
	m = &c->maps[c->nr_maps];
	m->path = strdup(name);
	if (!m->path)
		return;
	m->pid = pid;
	m->start = start;
	m->end = start + len;
	c->nr_maps++;
}

static void save_file(struct save_ctx *c, const struct pd_build_id *b)
{
	const struct seen_map *m = NULL;
	char src[PATH_MAX + 64];
	size_t i;
	int ret = -ENOENT;

	for (i = 0; i < c->nr_maps; i++)
		if (!strcmp(c->maps[i].path, b->filename))
			m = &c->maps[i];
	if (m && m->pid != (uint32_t)-1) {
		/* map_files holds the mapped file even if deleted or namespaced. */
		snprintf(src, sizeof(src), "/proc/%u/map_files/%llx-%llx", m->pid,
			 (unsigned long long)m->start, (unsigned long long)m->end);
		ret = bidc_add(c->dir, b->build_id, b->size, b->filename, src);
		if (ret < 0) {
			snprintf(src, sizeof(src), "/proc/%u/root%s", m->pid, b->filename);
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
	r = pd_reader_open(perf_data, err, sizeof(err));
	if (!r)
		return errno ? -errno : -EINVAL;
	while ((ret = pd_reader_next(r, &ev)) > 0) {
		if (ev.hdr->type == PERF_RECORD_MMAP2)
			note_mmap2(&c, ev.hdr);
		else if (ev.hdr->type == PERF_RECORD_COMM && ev.hdr->size >= 16)
			note_pid(&c, *(const uint32_t *)(ev.hdr + 1));
	}
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
	for (i = 0; i < c.nr_maps; i++)
		free(c.maps[i].path);
	free(c.maps);
	free(c.pids);
	return ret < 0 ? ret : 0;
}
