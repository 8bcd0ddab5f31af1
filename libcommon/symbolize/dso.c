// SPDX-License-Identifier: Apache-2.0
/* DSOs: dedup by build-id or path, lazy symbol loading from a build-id-matching file. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/dso.h"
#include "symbolize/dwarf_lines.h"

#define MAX_WARNINGS 8

void dsos_warn(struct dso_table *t, const char *fmt, ...)
{
	size_t old = t->warnings ? strlen(t->warnings) : 0;
	char line[512], *nw;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (t->warnings && strstr(t->warnings, line))
		return;
	if (++t->nr_warnings > MAX_WARNINGS) {
		if (t->nr_warnings == MAX_WARNINGS + 1)
			snprintf(line, sizeof(line), "(more warnings not shown)");
		else
			return;
	}
	nw = realloc(t->warnings, old + strlen(line) + 2);
	if (!nw)
		return;
	if (old)
		nw[old++] = '\n';
	strcpy(nw + old, line);
	t->warnings = nw;
}

/* Names with no file behind them; symbols come only from a build-id cache, if at all. */
static bool path_is_anon(const char *p)
{
	return p[0] == '[' || !strncmp(p, "//", 2) || !strncmp(p, "/memfd:", 7) ||
	       !strncmp(p, "/dev/zero", 9) || !strncmp(p, "/SYSV", 5) ||
	       !strncmp(p, "anon_inode:", 11) || p[0] != '/';
}

static const char *short_name(const char *p)
{
	const char *s;

	if (p[0] == '[' || !strncmp(p, "//", 2))
		return p;
	s = strrchr(p, '/');
	return s && s[1] ? s + 1 : p;
}

static struct dso_bid *find_bid(struct dso_table *t, const char *path)
{
	size_t i;

	for (i = 0; i < t->nr_bids; i++)
		if (!strcmp(t->bids[i].path, path))
			return &t->bids[i];
	return NULL;
}

static struct dso *dso_new(struct dso_table *t, const char *path, size_t plen)
{
	struct dso *d;

	if (t->n == t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 64;
		struct dso **nv = realloc(t->v, ncap * sizeof(*nv));

		if (!nv)
			return NULL;
		t->v = nv;
		t->cap = ncap;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->path = strndup(path, plen);
	if (!d->path) {
		free(d);
		return NULL;
	}
	d->short_name = short_name(d->path);
	d->anon = path_is_anon(d->path);
	d->kernel = !strcmp(d->path, "[kernel.kallsyms]");
	t->v[t->n++] = d;
	return d;
}

struct dso *dsos_findnew(struct dso_table *t, const char *path, const uint8_t *bid, size_t bid_size)
{
	const char *del = strstr(path, " (deleted)");
	size_t plen = del && !del[10] ? (size_t)(del - path) : strlen(path);
	struct dso_bid *known;
	struct dso *d;
	size_t i;

	if (bid_size > BID_MAX)
		bid_size = BID_MAX;
	for (i = 0; i < t->n; i++) {
		d = t->v[i];
		if (bid_size) {
			/* Same bytes, same symbols, whatever the path. */
			if (d->bid_size == bid_size && !memcmp(d->bid, bid, bid_size))
				return d;
			continue;
		}
		if (!strncmp(d->path, path, plen) && !d->path[plen])
			return d;
	}
	d = dso_new(t, path, plen);
	if (!d)
		return NULL;
	if (bid_size) {
		memcpy(d->bid, bid, bid_size);
		d->bid_size = (uint8_t)bid_size;
	} else if ((known = find_bid(t, d->path))) {
		memcpy(d->bid, known->bid, known->size);
		d->bid_size = known->size;
	}
	return d;
}

int dsos_add_bid(struct dso_table *t, const char *path, const uint8_t *bid, size_t size)
{
	struct dso_bid *b;
	size_t i;

	if (!size)
		return 0;
	if (size > BID_MAX)
		size = BID_MAX;
	b = find_bid(t, path);
	if (!b) {
		if (t->nr_bids == t->bids_cap) {
			size_t ncap = t->bids_cap ? t->bids_cap * 2 : 64;
			struct dso_bid *nv = realloc(t->bids, ncap * sizeof(*nv));

			if (!nv)
				return -ENOMEM;
			t->bids = nv;
			t->bids_cap = ncap;
		}
		b = &t->bids[t->nr_bids];
		b->path = strdup(path);
		if (!b->path)
			return -ENOMEM;
		t->nr_bids++;
	}
	memcpy(b->bid, bid, size);
	b->size = (uint8_t)size;
	/* Pipe mode sends build-ids late: give them to DSOs that have not loaded yet. */
	for (i = 0; i < t->n; i++) {
		struct dso *d = t->v[i];

		if (!d->bid_size && !d->loaded && !strcmp(d->path, path)) {
			memcpy(d->bid, bid, size);
			d->bid_size = (uint8_t)size;
		}
	}
	return 0;
}

static bool file_matches(const char *path, const struct dso *d, bool *exists)
{
	uint8_t bid[BID_MAX];
	int n = bid_read_path(path, bid);

	if (exists)
		*exists = n >= 0;
	return n == d->bid_size && !memcmp(bid, d->bid, (size_t)n);
}

/* Symbols of file (which carries d's build-id, or d has none), plus its debug file's. */
static struct symtab *load_file(struct dso_table *t, struct dso *d, const char *file)
{
	d->elf_path = strdup(file);
	if (!d->elf_path)
		return NULL;
	d->debug_path = t->dbg ? dbg_find(t->dbg, file, d->bid, d->bid_size) : NULL;
	return symtab_load_elf_debug(file, d->debug_path);
}

static struct symtab *load_matching(struct dso_table *t, struct dso *d)
{
	/* perf's cache holds "elf" for files, "vdso" for [vdso]. */
	static const char *const cached[] = {"elf", "vdso"};
	char hex[2 * BID_MAX + 1], cand[4096];
	bool exists = false;
	char *found;
	size_t i;

	if (!d->bid_size)
		return d->anon ? NULL : load_file(t, d, d->path);
	if (!d->anon && file_matches(d->path, d, &exists))
		return load_file(t, d, d->path);
	bid_to_hex(hex, d->bid, d->bid_size);
	for (i = 0; t->buildid_dir && i < sizeof(cached) / sizeof(cached[0]); i++) {
		snprintf(cand, sizeof(cand), "%s/.build-id/%.2s/%s/%s", t->buildid_dir, hex,
			 hex + 2, cached[i]);
		if (file_matches(cand, d, NULL))
			return load_file(t, d, cand);
	}
	/*
	 * The file is gone or differs: a debug file alone has .symtab and program headers,
	 * and debuginfod may still have the executable itself.
	 */
	if (t->dbg && !d->anon) {
		found = dbg_find(t->dbg, NULL, d->bid, d->bid_size);
		if (found) {
			d->debug_path = found;
			d->elf_path = strdup(found);
			return symtab_load_elf(found);
		}
		found = dbg_find_executable(t->dbg, d->bid, d->bid_size);
		if (found) {
			struct symtab *st = load_file(t, d, found);

			free(found);
			return st;
		}
	}
	if (exists)
		dsos_warn(
			t,
			"%s: build-id %s recorded but the file differs (rebuilt or upgraded?); "
			"its frames are shown as %s+0xOFFSET (copy the original into %s/.build-id)",
			d->path, hex, d->short_name, t->buildid_dir ? t->buildid_dir : "~/.debug");
	return NULL;
}

const struct symtab *dso_symtab(struct dso_table *t, struct dso *d)
{
	if (!d || d->kernel)
		return d ? d->st : NULL;
	if (!d->loaded) {
		d->loaded = true;
		d->st = load_matching(t, d);
	}
	return d->st;
}

struct dso_dwarf *dso_dwarf(struct dso_table *t, struct dso *d)
{
	if (!d || d->kernel || d->anon)
		return NULL;
	if (!d->loaded)
		dso_symtab(t, d);
	if (!d->dw_tried) {
		d->dw_tried = true;
		/* Without a matching file (elf_path unset) DWARF would describe other code. */
		if (d->elf_path)
			d->dw = dwl_open(d->elf_path, d->debug_path, !t->no_demangle);
	}
	return d->dw;
}

void dsos_free(struct dso_table *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		symtab_free(t->v[i]->st);
		dso_dwarf_free(t->v[i]->dw);
		free(t->v[i]->elf_path);
		free(t->v[i]->debug_path);
		free(t->v[i]->path);
		free(t->v[i]);
	}
	for (i = 0; i < t->nr_bids; i++)
		free(t->bids[i].path);
	free(t->v);
	free(t->bids);
	free(t->warnings);
	dbg_free(t->dbg);
	memset(t, 0, sizeof(*t));
}

const char *dso_path(const struct dso *d)
{
	return d ? d->path : NULL;
}

size_t dso_build_id(const struct dso *d, const uint8_t **bid)
{
	if (!d || !d->bid_size) {
		*bid = NULL;
		return 0;
	}
	*bid = d->bid;
	return d->bid_size;
}
