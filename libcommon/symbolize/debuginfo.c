// SPDX-License-Identifier: Apache-2.0
/* Debug-file lookup: build-id directories, .gnu_debuglink, perf's cache, debuginfod. */
#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "symbolize/buildid.h"
#include "symbolize/debuginfo.h"

#define DEFAULT_TIMEOUT_S 5

/*
 * libdebuginfod is opened at run time rather than linked: it pulls in libcurl and its
 * TLS stack, which an offline report never needs, and a machine without it still works.
 */
struct dbgd_api {
	void *handle;
	debuginfod_client *(*begin)(void);
	void (*end)(debuginfod_client *c);
	int (*find_debuginfo)(debuginfod_client *c, const unsigned char *bid, int len, char **path);
	int (*find_executable)(debuginfod_client *c, const unsigned char *bid, int len,
			       char **path);
};

struct dbg_finder {
	char *debug_dirs;
	char *buildid_dir;
	char *urls; /* NULL: no server to ask */
	int timeout_s;
	bool dbgd_tried, dbgd_failed;
	struct dbgd_api api;
	debuginfod_client *client;
};

struct dbg_finder *dbg_new(const struct dbg_opts *opts)
{
	struct dbg_finder *f = calloc(1, sizeof(*f));
	const char *urls, *tmo;

	if (!f)
		return NULL;
	urls = opts && opts->debuginfod_urls ? opts->debuginfod_urls : getenv("DEBUGINFOD_URLS");
	tmo = getenv("DEBUGINFOD_TIMEOUT");
	f->timeout_s = opts && opts->debuginfod_timeout_s > 0 ? opts->debuginfod_timeout_s
		       : tmo && atoi(tmo) > 0		      ? atoi(tmo)
							      : DEFAULT_TIMEOUT_S;
	f->debug_dirs = strdup(opts && opts->debug_dirs ? opts->debug_dirs : "/usr/lib/debug");
	f->buildid_dir = opts && opts->buildid_dir ? strdup(opts->buildid_dir) : NULL;
	f->urls = urls && *urls ? strdup(urls) : NULL;
	if (!f->debug_dirs || (opts && opts->buildid_dir && !f->buildid_dir) ||
	    (urls && *urls && !f->urls)) {
		dbg_free(f);
		errno = ENOMEM;
		return NULL;
	}
	return f;
}

void dbg_free(struct dbg_finder *f)
{
	if (!f)
		return;
	if (f->client)
		f->api.end(f->client);
	if (f->api.handle)
		dlclose(f->api.handle);
	free(f->debug_dirs);
	free(f->buildid_dir);
	free(f->urls);
	free(f);
}

/* Usable as the debug file of a file with build-id bid (size 0: unknown)? */
static bool bid_ok(const char *cand, const uint8_t *bid, size_t size)
{
	uint8_t got[BID_MAX];
	int n = bid_read_path(cand, got);

	if (n < 0)
		return false; /* missing or not ELF */
	if (!size)
		return true;
	return (size_t)n == size && !memcmp(got, bid, size);
}

int dbg_file_crc(const char *path, uint32_t *crc)
{
	unsigned char buf[65536];
	uLong c = crc32(0L, Z_NULL, 0);
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		c = crc32(c, buf, (uInt)n);
	if (n < 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	close(fd);
	*crc = (uint32_t)c;
	return 0;
}

int dbg_read_debuglink(const char *path, char *buf, size_t len, uint32_t *crc)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int fd, err = -ENOENT;
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx)) {
		err = -ENOEXEC;
		goto out;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *d, conv = {0}, src;
		size_t nlen, crc_off;
		uint32_t word;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".gnu_debuglink"))
			continue;
		d = elf_rawdata(scn, NULL);
		if (!d || !d->d_buf)
			break;
		/* "name\0", padding to 4, then the CRC in the file's byte order. */
		nlen = strnlen(d->d_buf, d->d_size);
		crc_off = (nlen + 4) & ~(size_t)3;
		if (!nlen || nlen >= len || crc_off + 4 > d->d_size || memchr(d->d_buf, '/', nlen))
			break;
		memcpy(buf, d->d_buf, nlen);
		buf[nlen] = '\0';
		src = (Elf_Data){.d_buf = (char *)d->d_buf + crc_off,
				 .d_type = ELF_T_WORD,
				 .d_size = 4,
				 .d_version = EV_CURRENT};
		conv = (Elf_Data){.d_buf = &word, .d_size = 4, .d_version = EV_CURRENT};
		if (!gelf_xlatetom(elf, &conv, &src, elf_getident(elf, NULL)[EI_DATA]))
			break;
		*crc = word;
		err = 0;
		break;
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

/* fn on each ':'-separated root of f->debug_dirs until one returns a path. */
static char *each_root(struct dbg_finder *f, char *(*fn)(const char *root, size_t rlen, void *arg),
		       void *arg)
{
	const char *p = f->debug_dirs;

	while (*p) {
		size_t n = strcspn(p, ":");
		char *r = n ? fn(p, n, arg) : NULL;

		if (r)
			return r;
		p += n;
		if (*p)
			p++;
	}
	return NULL;
}

struct bid_arg {
	const char *hex;
	const uint8_t *bid;
	size_t size;
};

static char *try_bid_root(const char *root, size_t rlen, void *arg)
{
	const struct bid_arg *a = arg;
	char cand[PATH_MAX];

	snprintf(cand, sizeof(cand), "%.*s/.build-id/%.2s/%s.debug", (int)rlen, root, a->hex,
		 a->hex + 2);
	return bid_ok(cand, a->bid, a->size) ? strdup(cand) : NULL;
}

struct link_arg {
	const char *dir; /* the file's directory, absolute */
	const char *name;
	uint32_t crc;
	const uint8_t *bid;
	size_t size;
};

static bool link_ok(const char *cand, const struct link_arg *a)
{
	uint32_t crc;

	if (access(cand, R_OK) || dbg_file_crc(cand, &crc) || crc != a->crc)
		return false;
	return bid_ok(cand, a->bid, a->size);
}

static char *try_link_root(const char *root, size_t rlen, void *arg)
{
	const struct link_arg *a = arg;
	char cand[PATH_MAX];

	snprintf(cand, sizeof(cand), "%.*s%s/%s", (int)rlen, root, a->dir, a->name);
	return link_ok(cand, a) ? strdup(cand) : NULL;
}

static char *by_debuglink(struct dbg_finder *f, const char *path, const uint8_t *bid, size_t size)
{
	char name[256], dir[PATH_MAX], cand[PATH_MAX + 300], *slash;
	struct link_arg a = {.dir = dir, .name = name, .bid = bid, .size = size};

	if (dbg_read_debuglink(path, name, sizeof(name), &a.crc))
		return NULL;
	if (!realpath(path, dir))
		return NULL;
	slash = strrchr(dir, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	snprintf(cand, sizeof(cand), "%s/%s", dir, name);
	/* The file itself may carry its own debuglink name (not stripped): not a debug file. */
	if (strcmp(cand, path) && link_ok(cand, &a))
		return strdup(cand);
	snprintf(cand, sizeof(cand), "%s/.debug/%s", dir, name);
	if (link_ok(cand, &a))
		return strdup(cand);
	return each_root(f, try_link_root, &a);
}

/* ---- debuginfod ---- */

static bool dbgd_open(struct dbg_finder *f)
{
	struct dbgd_api *api = &f->api;
	char t[16];

	if (f->dbgd_tried)
		return !f->dbgd_failed;
	f->dbgd_tried = true;
	f->dbgd_failed = true;
	if (!f->urls)
		return false; /* offline: never wait on a network */
	/* NODELETE: dlclose would unload libcurl and its TLS stack with their global state
	 * still allocated, lost (leaked) at each dlopen. */
	api->handle = dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NODELETE);
	if (!api->handle)
		return false;
	*(void **)&api->begin = dlsym(api->handle, "debuginfod_begin");
	*(void **)&api->end = dlsym(api->handle, "debuginfod_end");
	*(void **)&api->find_debuginfo = dlsym(api->handle, "debuginfod_find_debuginfo");
	*(void **)&api->find_executable = dlsym(api->handle, "debuginfod_find_executable");
	if (!api->begin || !api->end || !api->find_debuginfo || !api->find_executable)
		return false;
	/*
	 * libdebuginfod (0.188) takes its servers and timeout only from the environment, so
	 * --debuginfod and our short timeout are handed over that way.  Its timeout bounds
	 * connecting and stalls (under 100 B/s), which is what makes a dead server cheap.
	 */
	snprintf(t, sizeof(t), "%d", f->timeout_s);
	if (setenv("DEBUGINFOD_URLS", f->urls, 1) || setenv("DEBUGINFOD_TIMEOUT", t, 1))
		return false;
	f->client = api->begin();
	if (!f->client)
		return false;
	f->dbgd_failed = false;
	return true;
}

static char *dbgd_fetch(struct dbg_finder *f, const uint8_t *bid, size_t size, bool exe)
{
	char *path = NULL;
	int fd;

	if (!size || !dbgd_open(f))
		return NULL;
	fd = exe ? f->api.find_executable(f->client, bid, (int)size, &path)
		 : f->api.find_debuginfo(f->client, bid, (int)size, &path);
	if (fd < 0) {
		/*
		 * Anything but "not there" (refused, timed out, stalled, bad reply): the next
		 * DSO would wait the same way, so one timeout is the most a run ever pays.
		 */
		if (fd != -ENOENT)
			f->dbgd_failed = true;
		return NULL;
	}
	close(fd);
	if (path && !bid_ok(path, bid, size)) {
		free(path);
		return NULL;
	}
	return path;
}

char *dbg_find(struct dbg_finder *f, const char *path, const uint8_t *bid, size_t bid_size)
{
	char hex[2 * BID_MAX + 1], cand[PATH_MAX];
	uint8_t own[BID_MAX];
	struct bid_arg a;
	char *r = NULL;
	int n;

	if (!bid_size && path && (n = bid_read_path(path, own)) > 0) {
		bid = own;
		bid_size = (size_t)n;
	}
	if (bid_size) {
		bid_to_hex(hex, bid, bid_size);
		a = (struct bid_arg){.hex = hex, .bid = bid, .size = bid_size};
		r = each_root(f, try_bid_root, &a);
		if (!r && f->buildid_dir) {
			/* perf buildid-cache keeps "debug" next to "elf" when it found one. */
			snprintf(cand, sizeof(cand), "%s/.build-id/%.2s/%s/debug", f->buildid_dir,
				 hex, hex + 2);
			if (bid_ok(cand, bid, bid_size))
				r = strdup(cand);
		}
	}
	if (!r && path)
		r = by_debuglink(f, path, bid, bid_size);
	if (!r)
		r = dbgd_fetch(f, bid, bid_size, false);
	if (!r)
		errno = ENOENT;
	return r;
}

char *dbg_find_executable(struct dbg_finder *f, const uint8_t *bid, size_t bid_size)
{
	char *r = dbgd_fetch(f, bid, bid_size, true);

	if (!r)
		errno = ENOENT;
	return r;
}
