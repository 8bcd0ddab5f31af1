// SPDX-License-Identifier: Apache-2.0
/* Compiled unwind tables on disk, keyed by build-id. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "symbolize/buildid.h"
#include "unwind/cfi_cache.h"
#include "base/util.h"

#define CFI_CACHE_MAGIC "PACFI\0\0\0"

/* Host byte order: a cache is per machine. */
struct cfi_cache_hdr {
	char magic[8];
	uint32_t version;
	uint32_t row_size;
	uint32_t hdr_size;
	uint32_t n_rows;
	uint64_t base;
	uint32_t bid_size;
	uint8_t bid[20];
	uint32_t crc; /* crc32 of the rows */
	uint32_t __pad;
	struct cfi_stats stats;
};

char *cfi_cache_default_dir(void)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char *dir = NULL;
	int n;

	if (xdg && *xdg)
		n = asprintf(&dir, "%s/perf-agent/cfi", xdg);
	else if (geteuid() == 0)
		n = asprintf(&dir, "/var/cache/perf-agent/cfi");
	else if (home && *home)
		n = asprintf(&dir, "%s/.cache/perf-agent/cfi", home);
	else {
		errno = ENOENT;
		return NULL;
	}
	if (n < 0) {
		errno = ENOMEM;
		return NULL;
	}
	return dir;
}

static int cache_path(char *buf, size_t len, const char *dir, const uint8_t *bid, size_t size)
{
	char hex[2 * 20 + 1];

	if (!size || size > 20)
		return -ENODATA;
	bid_to_hex(hex, bid, size);
	if ((size_t)snprintf(buf, len, "%s/%s.cfi", dir, hex) >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* mkdir -p, 0755 (tables hold nothing secret; others may read them). */
static int mkdirs(const char *dir)
{
	char p[PATH_MAX];

	if ((size_t)snprintf(p, sizeof(p), "%s", dir) >= sizeof(p))
		return -ENAMETOOLONG;
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(p, 0755) && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (mkdir(p, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

struct cfi_table *cfi_cache_load(const char *dir, const uint8_t *bid, size_t bid_size)
{
	struct cfi_cache_hdr h;
	struct cfi_table *t = NULL;
	char path[PATH_MAX];
	struct stat st;
	int fd, err;

	if ((err = cache_path(path, sizeof(path), dir, bid, bid_size))) {
		errno = err == -ENODATA ? ENOENT : -err;
		return NULL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	err = -ESTALE;
	if (fstat(fd, &st)) {
		err = -errno;
		goto out;
	}
	/* Rows steer the stack walk: only trust what we or root wrote. */
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		err = -EPERM;
		goto out;
	}
	if (pa_read_full(fd, &h, sizeof(h)) != sizeof(h) || memcmp(h.magic, CFI_CACHE_MAGIC, 8) ||
	    h.version != CFI_CACHE_VERSION || h.row_size != sizeof(struct unwind_row) ||
	    h.hdr_size != sizeof(h) || h.bid_size != bid_size || memcmp(h.bid, bid, bid_size) ||
	    (uint64_t)st.st_size != sizeof(h) + (uint64_t)h.n_rows * sizeof(struct unwind_row))
		goto out;
	t = calloc(1, sizeof(*t));
	if (!t || (h.n_rows && !(t->rows = malloc((size_t)h.n_rows * sizeof(*t->rows))))) {
		err = -ENOMEM;
		goto out;
	}
	if (pa_read_full(fd, t->rows, (size_t)h.n_rows * sizeof(*t->rows)) !=
		    (ssize_t)(h.n_rows * sizeof(*t->rows)) ||
	    crc32(0, (const Bytef *)t->rows, h.n_rows * sizeof(*t->rows)) != h.crc)
		goto out;
	for (uint32_t i = 1; i < h.n_rows; i++)
		if (t->rows[i].pc <= t->rows[i - 1].pc)
			goto out;
	t->n = h.n_rows;
	t->base = h.base;
	t->bid_size = h.bid_size;
	memcpy(t->bid, h.bid, sizeof(t->bid));
	t->stats = h.stats;
	err = 0;
out:
	close(fd);
	if (err) {
		cfi_table_free(t);
		errno = -err;
		return NULL;
	}
	return t;
}

int cfi_cache_store(const char *dir, const struct cfi_table *t)
{
	struct cfi_cache_hdr h = {0};
	char path[PATH_MAX], tmp[PATH_MAX + 16];
	size_t rows_size = (size_t)t->n * sizeof(*t->rows);
	int fd, err;

	if ((err = cache_path(path, sizeof(path), dir, t->bid, t->bid_size)))
		return err;
	if ((err = mkdirs(dir)))
		return err;
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	memcpy(h.magic, CFI_CACHE_MAGIC, 8);
	h.version = CFI_CACHE_VERSION;
	h.row_size = sizeof(struct unwind_row);
	h.hdr_size = sizeof(h);
	h.n_rows = t->n;
	h.base = t->base;
	h.bid_size = t->bid_size;
	memcpy(h.bid, t->bid, sizeof(h.bid));
	h.crc = crc32(0, (const Bytef *)t->rows, rows_size);
	h.stats = t->stats;
	err = pa_write_all(fd, &h, sizeof(h));
	if (!err && rows_size)
		err = pa_write_all(fd, t->rows, rows_size);
	if (!err && fchmod(fd, 0644))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

struct cfi_table *cfi_cache_get(const char *dir, const char *path, const struct cfi_opts *opts,
				bool *hit)
{
	uint8_t bid[BID_MAX];
	struct cfi_table *t;
	int n = 0;

	if (hit)
		*hit = false;
	if (dir && (n = bid_read_path(path, bid)) > 0 && (t = cfi_cache_load(dir, bid, n))) {
		if (hit)
			*hit = true;
		return t;
	}
	t = cfi_compile_elf(path, -1, opts);
	if (t && dir && t->bid_size)
		cfi_cache_store(dir, t); /* best effort: a read-only cache only costs time */
	return t;
}
