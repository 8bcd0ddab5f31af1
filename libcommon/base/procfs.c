// SPDX-License-Identifier: Apache-2.0
/*
 * Reading a live process from /proc.  Processes exit while we read them: every "not
 * there any more" (ENOENT on open, ESRCH on read) is reported as -ESRCH so callers
 * can tell a vanished target from a real error.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/procfs.h"

#define DELETED_SUFFIX " (deleted)"

static int gone(int err)
{
	return err == ENOENT ? -ESRCH : -err;
}

/* Whole file into a NUL-terminated malloc'ed buffer: procfs files have no size. */
static int read_file(const char *path, char **out, size_t *outlen)
{
	size_t len = 0, cap = 16384;
	char *buf = malloc(cap), *nbuf;
	ssize_t n;
	int fd, err;

	if (!buf)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = gone(errno);
		free(buf);
		return err;
	}
	for (;;) {
		if (cap - len < 4096) {
			nbuf = realloc(buf, cap * 2);
			if (!nbuf) {
				err = -ENOMEM;
				goto fail;
			}
			buf = nbuf;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = gone(errno);
			goto fail;
		}
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	*out = buf;
	if (outlen)
		*outlen = len;
	return 0;
fail:
	close(fd);
	free(buf);
	return err;
}

/* One maps line: "start-end perms offset maj:min inode   path". 0, or -EINVAL. */
static int parse_map_line(char *line, struct proc_map *m, bool *deleted)
{
	unsigned long long start, end, pgoff, ino;
	unsigned int maj, min;
	char perms[8];
	int pos = 0;
	char *path;
	size_t plen;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu%n", &start, &end, perms, &pgoff, &maj, &min,
		   &ino, &pos) != 7 ||
	    strlen(perms) < 4)
		return -EINVAL;
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	m->maj = maj;
	m->min = min;
	m->ino = ino;
	m->prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
		  (perms[2] == 'x' ? PROT_EXEC : 0);
	m->flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;

	/* The path is the rest of the line after the padding: it may contain spaces. */
	path = line + pos;
	while (*path == ' ' || *path == '\t')
		path++;
	plen = strlen(path);
	*deleted = false;
	if (plen > strlen(DELETED_SUFFIX) &&
	    !strcmp(path + plen - strlen(DELETED_SUFFIX), DELETED_SUFFIX)) {
		plen -= strlen(DELETED_SUFFIX);
		*deleted = true;
	}
	m->path = plen ? strndup(path, plen) : strdup("//anon");
	return m->path ? 0 : -ENOMEM;
}

int proc_read_maps(pid_t pid, bool exec_only, struct proc_map **maps)
{
	char path[64], *buf;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	err = read_file(path, &buf, NULL);
	if (err)
		return err;
	err = proc_parse_maps(buf, exec_only, maps);
	free(buf);
	return err;
}

int proc_parse_maps(char *text, bool exec_only, struct proc_map **maps)
{
	struct proc_map *v = NULL, *nv;
	size_t n = 0, cap = 0;
	char *line, *save = NULL;
	int err;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct proc_map m = {0};
		bool deleted;
		int r = parse_map_line(line, &m, &deleted);

		if (r == -ENOMEM) {
			err = r;
			goto fail;
		}
		if (r)
			continue; /* a format we do not know: skip, do not fail the target */
		m.deleted = deleted;
		if (exec_only && !(m.prot & PROT_EXEC)) {
			free(m.path);
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(m.path);
				err = -ENOMEM;
				goto fail;
			}
			v = nv;
		}
		v[n++] = m;
	}
	*maps = v;
	return (int)n;
fail:
	proc_maps_free(v, n);
	return err;
}

void proc_maps_free(struct proc_map *maps, size_t n)
{
	size_t i;

	if (!maps)
		return;
	for (i = 0; i < n; i++)
		free(maps[i].path);
	free(maps);
}

/* Numeric entries of a directory (/proc or /proc/PID/task), sorted. */
static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

static int list_numeric(const char *dirpath, pid_t **out)
{
	size_t n = 0, cap = 0;
	pid_t *v = NULL, *nv;
	struct dirent *de;
	DIR *dir;

	dir = opendir(dirpath);
	if (!dir)
		return gone(errno);
	while ((errno = 0, de = readdir(dir))) {
		char *end;
		long id;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		id = strtol(de->d_name, &end, 10);
		if (*end || id <= 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				closedir(dir);
				return -ENOMEM;
			}
			v = nv;
		}
		v[n++] = (pid_t)id;
	}
	if (errno) {
		int err = gone(errno);

		free(v);
		closedir(dir);
		return err;
	}
	closedir(dir);
	if (n)
		qsort(v, n, sizeof(*v), cmp_pid);
	*out = v;
	return (int)n;
}

int proc_list_tids(pid_t pid, pid_t **tids)
{
	char path[64];
	int n;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	n = list_numeric(path, tids);
	/* A zombie's task dir is empty: nothing left to profile. */
	if (n == 0) {
		free(*tids);
		*tids = NULL;
		return -ESRCH;
	}
	return n;
}

int proc_list_pids(pid_t **pids)
{
	return list_numeric("/proc", pids);
}

int proc_read_comm(pid_t pid, pid_t tid, char *buf, size_t len)
{
	char path[64], *data;
	size_t n;
	int err;

	if (!len)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	err = read_file(path, &data, &n);
	if (err)
		return err;
	if (n && data[n - 1] == '\n')
		data[--n] = '\0';
	snprintf(buf, len, "%s", data);
	free(data);
	return 0;
}

int proc_read_ppid_tgid(pid_t tid, pid_t *ppid, pid_t *tgid)
{
	char path[64], *data, *p;
	bool got_ppid = false, got_tgid = false;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	err = read_file(path, &data, NULL);
	if (err)
		return err;
	/* Name: comes first and may hold anything, so match only at line starts. */
	for (p = data; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, "Tgid:", 5)) {
			*tgid = (pid_t)strtol(p + 5, NULL, 10);
			got_tgid = true;
		} else if (!strncmp(p, "PPid:", 5)) {
			*ppid = (pid_t)strtol(p + 5, NULL, 10);
			got_ppid = true;
		}
	}
	free(data);
	return got_ppid && got_tgid ? 0 : -EINVAL;
}

bool proc_exists(pid_t pid)
{
	char path[64];

	if (pid <= 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	return access(path, F_OK) == 0;
}
