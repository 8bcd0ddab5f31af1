// SPDX-License-Identifier: Apache-2.0
/* Compiled unwind tables on disk, keyed by build-id. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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
	uint64_t sum; /* rows_sum() of the rows */
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

/* Open bid's cache file and check its header: the fd, or -errno as cfi_cache_read. */
static int cache_open(const char *dir, const uint8_t *bid, size_t bid_size, struct cfi_cache_hdr *h)
{
	char path[PATH_MAX];
	struct stat st;
	int fd, err;

	if ((err = cache_path(path, sizeof(path), dir, bid, bid_size)))
		return err == -ENODATA ? -ENOENT : err;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = -ESTALE;
	if (fstat(fd, &st)) {
		err = -errno;
		goto fail;
	}
	/* Rows steer the stack walk: only trust what we or root wrote. */
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		err = -EPERM;
		goto fail;
	}
	if (pa_read_full(fd, h, sizeof(*h)) != sizeof(*h) || memcmp(h->magic, CFI_CACHE_MAGIC, 8) ||
	    h->version != CFI_CACHE_VERSION || h->row_size != sizeof(struct unwind_row) ||
	    h->hdr_size != sizeof(*h) || h->bid_size != bid_size || memcmp(h->bid, bid, bid_size) ||
	    (uint64_t)st.st_size != sizeof(*h) + (uint64_t)h->n_rows * sizeof(struct unwind_row))
		goto fail;
	return fd;
fail:
	close(fd);
	return err;
}

/*
 * A checksum of rows, against a file changed under us or a bad disk (what is trusted
 * is decided by the file's owner), continued from h.  Each step is a bijection of the
 * sum so far, so any one changed word changes it.
 */
static uint64_t rows_sum(uint64_t h, const struct unwind_row *r, size_t n)
{
	const unsigned char *p = (const unsigned char *)r;
	uint64_t w;

	for (size_t i = 0; i + 8 <= n * sizeof(*r); i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 29;
	}
	return h;
}

/*
 * The rows after h, checked and copied into dst: 0 or -ESTALE.  The file is mapped and
 * each chunk checked where it lies, then copied while it is in the CPU's cache: the
 * biggest tables are 8 MB, and each pass over memory not in the cache costs ~15 ms in
 * a VM (reading them into dst and then checking them there took two).
 */
static int cache_rows(int fd, const struct cfi_cache_hdr *h, struct unwind_row *dst)
{
	const size_t chunk = 32768; /* rows: 256 KiB */
	size_t bytes = (size_t)h->n_rows * sizeof(*dst), len = sizeof(*h) + bytes;
	uintptr_t page = (uintptr_t)dst & ~(uintptr_t)4095;
	const struct unwind_row *src;
	uint64_t sum = h->n_rows;
	void *map;
	int err = 0;

	if (!bytes)
		return h->sum == sum ? 0 : -ESTALE;
	map = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (map == MAP_FAILED)
		return -ESTALE;
	src = (const struct unwind_row *)((const char *)map + sizeof(*h));
	/* dst's page tables filled at once, not by a fault a page (costly in a VM); best
	 * effort (Linux 5.14). */
	madvise((void *)page, (uintptr_t)dst + bytes - page, MADV_POPULATE_WRITE);
	for (size_t at = 0; at < h->n_rows && !err; at += chunk) {
		size_t n = h->n_rows - at < chunk ? h->n_rows - at : chunk;

		sum = rows_sum(sum, src + at, n);
		for (size_t i = at ? at : 1; i < at + n && !err; i++)
			if (src[i].pc <= src[i - 1].pc)
				err = -ESTALE;
		memcpy(dst + at, src + at, n * sizeof(*dst));
	}
	munmap(map, len);
	return err ? err : sum == h->sum ? 0 : -ESTALE;
}

long cfi_cache_read(const char *dir, const uint8_t *bid, size_t bid_size, struct unwind_row *dst,
		    size_t cap, uint64_t *base)
{
	struct cfi_cache_hdr h;
	int fd = cache_open(dir, bid, bid_size, &h), err;

	if (fd < 0)
		return fd;
	err = h.n_rows > cap ? -ENOSPC : cache_rows(fd, &h, dst);
	close(fd);
	if (err)
		return err;
	*base = h.base;
	return h.n_rows;
}

struct cfi_table *cfi_cache_load(const char *dir, const uint8_t *bid, size_t bid_size)
{
	struct cfi_cache_hdr h;
	struct cfi_table *t = NULL;
	int fd = cache_open(dir, bid, bid_size, &h), err;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t || (h.n_rows && !(t->rows = malloc((size_t)h.n_rows * sizeof(*t->rows)))))
		err = -ENOMEM;
	else
		err = cache_rows(fd, &h, t->rows);
	close(fd);
	if (err) {
		cfi_table_free(t);
		errno = -err;
		return NULL;
	}
	t->n = h.n_rows;
	t->base = h.base;
	t->bid_size = h.bid_size;
	memcpy(t->bid, h.bid, sizeof(t->bid));
	t->stats = h.stats;
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
	h.sum = rows_sum(t->n, t->rows, t->n);
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
