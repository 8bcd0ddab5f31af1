// SPDX-License-Identifier: Apache-2.0
/*
 * Inline chains and lines with libdw: dwarf_addrdie finds the CU, the line table gives
 * the innermost file:line, and dwarf_getscopes walks out through the inlined
 * subroutines, each one's DW_AT_call_file/line being where its caller is.  Where DWARF
 * is gone or silent, a Go binary's .gopclntab answers the same question.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/demangle.h"
#include "base/hash.h"
#include "symbolize/dwarf_lines.h"
#include "symbolize/dwarf_scopes.h"
#include "symbolize/gopclntab.h"

#define MAX_INLINE 32 /* deeper chains are cut: the outermost frames are kept */

struct elf_file {
	int fd;
	Elf *elf;
};

/*
 * Address -> result (the same address in several processes or mappings is looked up
 * once); a NULL result caches "no DWARF here".
 */
struct va_slot {
	uint64_t va;
	struct dwl_result *r;
};

struct va_cache {
	struct hidx idx;
	struct va_slot *slots;
	size_t cap, n;
};

struct dso_dwarf {
	struct elf_file bin, dbg;
	Dwarf *dw;	   /* from the debug file, else the binary; NULL if neither has it */
	bool dw_tried;	   /* dw is opened on first use: see dwarf_of */
	Dwarf_CFI *eh_cfi; /* the binary's .eh_frame */
	bool demangle;
	bool fde_tried;
	uint64_t *fde_starts; /* .eh_frame_hdr table, sorted */
	size_t nr_fde;
	struct va_cache cache;
	struct dws_cache cus; /* scope indexes of the CUs looked up */
	struct gopcln *go;    /* a Go binary's pc-line table, NULL if none */
	bool go_tried;
};

static int elf_file_open(struct elf_file *ef, const char *path)
{
	ef->fd = -1;
	if (!path)
		return -ENOENT;
	ef->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (ef->fd < 0)
		return -errno;
	ef->elf = elf_begin(ef->fd, ELF_C_READ_MMAP, NULL);
	if (!ef->elf || elf_kind(ef->elf) != ELF_K_ELF) {
		if (ef->elf)
			elf_end(ef->elf);
		ef->elf = NULL;
		close(ef->fd);
		ef->fd = -1;
		return -ENOEXEC;
	}
	return 0;
}

static void elf_file_close(struct elf_file *ef)
{
	if (ef->elf)
		elf_end(ef->elf);
	if (ef->fd >= 0)
		close(ef->fd);
}

struct dso_dwarf *dwl_open(const char *file, const char *debug, bool demangle)
{
	struct dso_dwarf *d;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = EINVAL;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->demangle = demangle;
	elf_file_open(&d->bin, file);
	if (debug && (!file || strcmp(debug, file)))
		elf_file_open(&d->dbg, debug);
	else
		d->dbg.fd = -1;
	if (!d->bin.elf && !d->dbg.elf) {
		dso_dwarf_free(d);
		errno = ENOENT;
		return NULL;
	}
	if (d->bin.elf)
		d->eh_cfi = dwarf_getcfi_elf(d->bin.elf);
	return d;
}

/*
 * d's DWARF, opened the first time it is needed: dwarf_begin_elf inflates every
 * compressed .debug section at once, which a report that only asks .eh_frame where a
 * function starts (an address no symbol covers) must not pay for.
 */
static Dwarf *dwarf_of(struct dso_dwarf *d)
{
	if (!d->dw_tried) {
		d->dw_tried = true;
		if (d->dbg.elf)
			d->dw = dwarf_begin_elf(d->dbg.elf, DWARF_C_READ, NULL);
		if (!d->dw && d->bin.elf)
			d->dw = dwarf_begin_elf(d->bin.elf, DWARF_C_READ, NULL);
	}
	return d->dw;
}

/* The binary's Go pc-line table, opened the first time DWARF does not answer. */
static struct gopcln *go_of(struct dso_dwarf *d)
{
	if (!d->go_tried) {
		d->go_tried = true;
		if (d->bin.elf)
			d->go = gopcln_open(d->bin.elf);
	}
	return d->go;
}

static void result_free(struct dwl_result *r)
{
	uint32_t i;

	if (!r)
		return;
	for (i = 0; i < r->n; i++)
		if (r->owned & (1u << i))
			free((char *)r->f[i].name);
	free(r);
}

void dso_dwarf_free(struct dso_dwarf *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->cache.n; i++)
		result_free(d->cache.slots[i].r);
	free(d->cache.slots);
	hidx_free(&d->cache.idx);
	dws_cache_free(&d->cus);
	gopcln_free(d->go);
	free(d->fde_starts);
	/* The CFI from dwarf_getcfi_elf is ours to end; dwarf_getcfi's belongs to dw. */
	if (d->eh_cfi)
		dwarf_cfi_end(d->eh_cfi);
	if (d->dw)
		dwarf_end(d->dw);
	elf_file_close(&d->dbg);
	elf_file_close(&d->bin);
	free(d);
}

/* ---- cache ---- */

static bool va_eq(const void *ctx, uint32_t id, const void *key)
{
	return ((const struct va_cache *)ctx)->slots[id].va == *(const uint64_t *)key;
}

static bool cache_get(const struct va_cache *c, uint64_t va, struct dwl_result **r)
{
	int64_t id = hidx_find(&c->idx, hash_mix(0, va), va_eq, c, &va);

	if (id < 0)
		return false;
	*r = c->slots[id].r;
	return true;
}

/* Remember va's result (va not there yet).  0 or -ENOMEM. */
static int cache_put(struct va_cache *c, uint64_t va, struct dwl_result *r)
{
	if (pa_grow((void **)&c->slots, &c->cap, c->n + 1, sizeof(*c->slots)) ||
	    hidx_insert(&c->idx, hash_mix(0, va), c->n))
		return -ENOMEM;
	c->slots[c->n++] = (struct va_slot){va, r};
	return 0;
}

/* ---- lookup ---- */

/* A subprogram's or inline's name: linkage name demangled (qualified), else DW_AT_name. */
static const char *die_name(struct dso_dwarf *d, Dwarf_Die *die, bool *owned)
{
	Dwarf_Attribute attr;
	const char *s;
	char *dm;

	*owned = false;
	if ((dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
	     dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr)) &&
	    (s = dwarf_formstring(&attr))) {
		if (!d->demangle)
			return s;
		dm = dm_demangle(s);
		if (dm) {
			*owned = true;
			return dm;
		}
	}
	if (dwarf_attr_integrate(die, DW_AT_name, &attr) && (s = dwarf_formstring(&attr)))
		return s;
	return NULL;
}

static void call_site(Dwarf_Die *die, Dwarf_Files *files, size_t nfiles, const char **file,
		      int *line)
{
	Dwarf_Attribute attr;
	Dwarf_Word w;

	*file = NULL;
	*line = 0;
	if (dwarf_attr(die, DW_AT_call_file, &attr) && !dwarf_formudata(&attr, &w) && files &&
	    w < nfiles)
		*file = dwarf_filesrc(files, w, NULL, NULL);
	if (dwarf_attr(die, DW_AT_call_line, &attr) && !dwarf_formudata(&attr, &w))
		*line = (int)w;
}

static struct dwl_result *resolve(struct dso_dwarf *d, uint64_t va)
{
	struct dwl_frame fr[MAX_INLINE];
	Dwarf_Die cudie, scopes[MAX_INLINE];
	const struct dws_index *ci;
	Dwarf_Files *files = NULL;
	struct dwl_result *r;
	uint32_t owned = 0, n = 0;
	const char *file = NULL;
	size_t nfiles = 0, ns = 0, i;
	Dwarf_Line *l;
	int line = 0;

	if (!dwarf_addrdie(d->dw, va, &cudie))
		return NULL;
	l = dwarf_getsrc_die(&cudie, va);
	if (l) {
		file = dwarf_linesrc(l, NULL, NULL);
		dwarf_lineno(l, &line);
	}
	if (dwarf_getsrcfiles(&cudie, &files, &nfiles))
		files = NULL;
	ci = dws_cache_get(&d->cus, &cudie);
	if (ci)
		ns = dws_scopes(ci, va, scopes, MAX_INLINE);
	/*
	 * Each frame is at the file:line its inner neighbour was called from; a chain cut
	 * at MAX_INLINE still takes its innermost line from the dropped frames' call sites.
	 */
	if (ci && ns == MAX_INLINE) {
		Dwarf_Die all[MAX_INLINE * 4];
		size_t full = dws_scopes(ci, va, all, MAX_INLINE * 4);

		if (full > ns)
			call_site(&all[full - ns - 1], files, nfiles, &file, &line);
	}
	for (i = 0; i < ns; i++) {
		bool own;

		fr[n].name = die_name(d, &scopes[i], &own);
		fr[n].file = file;
		fr[n].line = line;
		if (own)
			owned |= 1u << n;
		n++;
		if (dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine)
			call_site(&scopes[i], files, nfiles, &file, &line);
	}
	if (!n) {
		/* Lines but no scope (assembly CUs): one frame with the line alone. */
		if (!file)
			return NULL;
		fr[0] = (struct dwl_frame){.file = file, .line = line};
		n = 1;
	}
	r = malloc(sizeof(*r) + n * sizeof(r->f[0]));
	if (!r) {
		for (i = 0; i < n; i++)
			if (owned & (1u << i))
				free((char *)fr[i].name);
		return NULL;
	}
	r->n = n;
	r->owned = owned;
	memcpy(r->f, fr, n * sizeof(fr[0]));
	return r;
}

/* What the Go runtime's own tables say of va: names and files point into them. */
static struct dwl_result *resolve_go(struct gopcln *go, uint64_t va)
{
	struct gopcln_frame gf[MAX_INLINE];
	struct dwl_result *r;
	int i, n;

	n = gopcln_lookup(go, va, gf, MAX_INLINE);
	if (n <= 0)
		return NULL;
	r = malloc(sizeof(*r) + (size_t)n * sizeof(r->f[0]));
	if (!r)
		return NULL;
	r->n = (uint32_t)n;
	r->owned = 0;
	for (i = 0; i < n; i++)
		r->f[i] = (struct dwl_frame){gf[i].name, gf[i].file, gf[i].line};
	return r;
}

const struct dwl_result *dwl_lookup(struct dso_dwarf *d, uint64_t va)
{
	struct dwl_result *r;
	Dwarf *dw;

	if (!d)
		return NULL;
	dw = dwarf_of(d);
	if (!dw && !go_of(d))
		return NULL;
	if (cache_get(&d->cache, va, &r))
		return r;
	r = dw ? resolve(d, va) : NULL;
	if (!r && go_of(d))
		r = resolve_go(d->go, va);
	if (cache_put(&d->cache, va, r)) {
		result_free(r);
		return NULL; /* not cached: computed again next time, still correct */
	}
	return r;
}

int dwl_fde_starts(Elf *elf, uint64_t **starts, size_t *n)
{
	const uint8_t *p, *end;
	size_t nsec, shstrndx, i, count;
	Elf_Scn *scn = NULL;
	Elf_Data *data;
	GElf_Shdr sh;
	uint32_t cnt;

	*starts = NULL;
	*n = 0;
	if (!elf || elf_getshdrnum(elf, &nsec) || elf_getshdrstrndx(elf, &shstrndx))
		return -ENOENT;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".eh_frame_hdr"))
			break;
	}
	if (!scn || !(data = elf_rawdata(scn, NULL)) || !data->d_buf || data->d_size < 12)
		return -ENOENT;
	p = data->d_buf;
	end = p + data->d_size;
	/* version 1; eh_frame_ptr: 4 bytes (sdata4/udata4); count: udata4; table: datarel sdata4 */
	if (p[0] != 1 || ((p[1] & 0x0f) != 0x0b && (p[1] & 0x0f) != 0x03) || p[2] != 0x03 ||
	    p[3] != 0x3b)
		return -ENOTSUP;
	memcpy(&cnt, p + 8, 4);
	count = cnt;
	p += 12;
	if (count > (size_t)(end - p) / 8)
		return -EINVAL;
	*starts = malloc((count ? count : 1) * sizeof(**starts));
	if (!*starts)
		return -ENOMEM;
	for (i = 0; i < count; i++) {
		int32_t rel;

		memcpy(&rel, p + i * 8, 4);
		(*starts)[i] = sh.sh_addr + (uint64_t)(int64_t)rel;
	}
	*n = count;
	return 0;
}

int dwl_func_start(struct dso_dwarf *d, uint64_t va, uint64_t *start)
{
	size_t lo = 0, hi;
	Dwarf_Frame *fr;

	if (!d || !d->eh_cfi)
		return -ENOENT;
	if (!d->fde_tried) {
		d->fde_tried = true;
		dwl_fde_starts(d->bin.elf, &d->fde_starts, &d->nr_fde);
	}
	if (!d->nr_fde || va < d->fde_starts[0])
		return -ENOENT;
	/* Only an address some FDE covers has a function start (not padding between them). */
	if (dwarf_cfi_addrframe(d->eh_cfi, va, &fr))
		return -ENOENT;
	free(fr);
	hi = d->nr_fde;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->fde_starts[mid] <= va)
			lo = mid;
		else
			hi = mid;
	}
	*start = d->fde_starts[lo];
	return 0;
}
