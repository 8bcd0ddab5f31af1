// SPDX-License-Identifier: Apache-2.0
/*
 * Symbol tables: building (sort, dedup, sizes), lookup, and the text loaders for
 * kallsyms and JIT perf maps.  ELF files are read in symtab_elf.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "symbolize/demangle.h"
#include "symbolize/symtab_priv.h"

int64_t symtab_builder_str(struct symtab_builder *b, const char *name, size_t len,
			   const char *suffix)
{
	size_t slen = suffix ? strlen(suffix) : 0, need = len + slen + 1;
	int64_t off;

	if (b->plen + need > b->pcap) {
		/* name may live in the pool itself (PLT names): keep it across realloc. */
		bool inside = b->pool && name >= b->pool && name < b->pool + b->plen;
		size_t name_off = inside ? (size_t)(name - b->pool) : 0;
		size_t ncap = b->pcap ? b->pcap : 4096;
		char *np;

		while (ncap < b->plen + need)
			ncap *= 2;
		if (ncap > UINT32_MAX)
			return -ENOMEM;
		np = realloc(b->pool, ncap);
		if (!np)
			return -ENOMEM;
		pa_huge(np, ncap);
		b->pool = np;
		b->pcap = ncap;
		if (inside)
			name = np + name_off;
	}
	off = (int64_t)b->plen;
	memcpy(b->pool + b->plen, name, len);
	if (slen)
		memcpy(b->pool + b->plen + len, suffix, slen);
	b->pool[b->plen + len + slen] = '\0';
	b->plen += need;
	return off;
}

/* A new raw symbol named by name (see symtab_raw), or -ENOMEM. */
static int add_raw(struct symtab_builder *b, uint64_t start, uint64_t size, uint64_t limit,
		   uint64_t name, uint32_t bits)
{
	if (b->n == b->cap) {
		size_t ncap = b->cap ? b->cap * 2 : 1024;
		struct symtab_raw *nv = realloc(b->v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		pa_huge(nv, ncap * sizeof(*nv));
		b->v = nv;
		b->cap = ncap;
	}
	b->v[b->n++] = (struct symtab_raw){
		.start = start, .size = size, .limit = limit, .name = name, .bits = bits};
	return 0;
}

int symtab_builder_add(struct symtab_builder *b, uint64_t start, uint64_t size, uint64_t limit,
		       const char *name, size_t len, const char *suffix, uint32_t bits)
{
	int64_t off = symtab_builder_str(b, name, len, suffix);

	return off < 0 ? (int)off : add_raw(b, start, size, limit, (uint64_t)off, bits);
}

int symtab_builder_add_ref(struct symtab_builder *b, uint64_t start, uint64_t size, uint64_t limit,
			   const char *name, uint32_t bits)
{
	return add_raw(b, start, size, limit, SB_NAME_REF | (uint64_t)(uintptr_t)name, bits);
}

static void release_kept(struct symtab_kept *k, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (k[i].elf)
			elf_end(k[i].elf);
		free(k[i].buf);
	}
}

int symtab_builder_keep(struct symtab_builder *b, Elf *elf, void *buf)
{
	struct symtab_kept k = {elf, buf};

	if (b->nr_kept == SYMTAB_MAX_KEPT) {
		release_kept(&k, 1);
		return -ENOSPC;
	}
	/* Its descriptor is closed next; what the names need is read already. */
	if (elf)
		elf_cntl(elf, ELF_C_FDDONE);
	b->kept[b->nr_kept++] = k;
	return 0;
}

void symtab_builder_free(struct symtab_builder *b)
{
	free(b->v);
	free(b->pool);
	free(b->mods);
	release_kept(b->kept, b->nr_kept);
	memset(b, 0, sizeof(*b));
}

static const char *raw_name(const char *pool, const struct symtab_raw *r)
{
	return r->name & SB_NAME_REF ? (const char *)(uintptr_t)(r->name & ~SB_NAME_REF)
				     : pool + r->name;
}

static size_t leading_underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/*
 * Order by address; among aliases the best name comes first, chosen like perf's
 * choose_best_symbol(): sized, FUNC, global, strong, fewer leading underscores,
 * longer name; then by name so the result does not depend on input order.
 */
static int cmp_raw(const void *a, const void *b, void *pool)
{
	const struct symtab_raw *x = a, *y = b;
	const char *nx = raw_name(pool, x), *ny = raw_name(pool, y);
	size_t ux, uy, lx, ly;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (!x->size != !y->size)
		return x->size ? -1 : 1;
	if (x->bits != y->bits)
		return x->bits > y->bits ? -1 : 1;
	ux = leading_underscores(nx);
	uy = leading_underscores(ny);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	lx = strlen(nx);
	ly = strlen(ny);
	if (lx != ly)
		return lx > ly ? -1 : 1;
	return strcmp(nx, ny);
}

/*
 * Insertion sort for as long as it stays cheap: kallsyms comes sorted by address, only
 * some aliases out of order, and a merge sort of its 120k symbols would cost more than
 * reading them.  Gives up (false, b->v still a permutation) after b->n moves: an ELF
 * symbol table, in no order, is left to qsort.
 */
static bool sort_nearly_sorted(struct symtab_builder *b)
{
	size_t i, j, moves = 0;

	for (i = 1; i < b->n; i++) {
		struct symtab_raw t = b->v[i];

		for (j = i; j > 0 && cmp_raw(&b->v[j - 1], &t, b->pool) > 0; j--) {
			b->v[j] = b->v[j - 1];
			if (++moves > b->n) {
				b->v[j - 1] = t;
				return false;
			}
		}
		b->v[j] = t;
	}
	return true;
}

int symtab_builder_finish(struct symtab_builder *b, struct symtab *st, uint64_t last_extent)
{
	struct symtab_isym *out, *shrunk;
	size_t i, n = 0;
	char *pool;

	_Static_assert(sizeof(struct symtab_isym) <= sizeof(struct symtab_raw),
		       "the lookup array is built in the raw array's place");
	if (!sort_nearly_sorted(b))
		qsort_r(b->v, b->n, sizeof(*b->v), cmp_raw, b->pool);
	pool = b->plen ? realloc(b->pool, b->plen) : b->pool;
	if (b->plen && !pool)
		return -ENOMEM;
	b->pool = pool;
	st->dnames = calloc(b->n ? b->n : 1, sizeof(*st->dnames));
	out = b->n ? (struct symtab_isym *)b->v : calloc(1, sizeof(*out));
	if (!st->dnames || !out) {
		free(st->dnames);
		st->dnames = NULL;
		if (!b->n)
			free(out);
		return -ENOMEM;
	}
	/*
	 * In place: entry n of the lookup array is no larger than a raw entry and is
	 * written only after raw entry i >= n is read, so a large table (kallsyms: 120k
	 * symbols) is not faulted in twice.
	 */
	for (i = 0; i < b->n; i++) {
		struct symtab_isym o;
		struct symtab_raw r;

		/* Through memcpy: the two types share memory, which typed accesses
		 * would let the compiler reorder (strict aliasing). */
		memcpy(&r, &b->v[i], sizeof(r));
		if (n && out[n - 1].s.start == r.start)
			continue; /* an alias of the better name already kept */
		o = (struct symtab_isym){
			.s = {.start = r.start, .size = r.size, .name = raw_name(pool, &r)},
			.end = r.size ? r.start + r.size : r.limit,
			.mod = r.mod,
		};
		memcpy(&out[n++], &o, sizeof(o));
	}
	if (b->n) {
		b->v = NULL;
		b->n = b->cap = 0;
		shrunk = realloc(out, n * sizeof(*out));
		if (shrunk)
			out = shrunk;
	}
	st->full = b->full;
	/* Zero-size symbols reach to the next symbol (or their section's end if closer). */
	for (i = 0; i < n; i++) {
		uint64_t next;

		if (out[i].s.size)
			continue;
		if (i + 1 < n) {
			next = out[i + 1].s.start;
			if (out[i].mod != out[i + 1].mod && next - out[i].s.start > last_extent)
				next = out[i].s.start + last_extent;
		} else {
			next = out[i].s.start + last_extent;
		}
		if (!out[i].end || out[i].end <= out[i].s.start || out[i].end > next)
			out[i].end = next;
	}
	if (b->nr_mods) {
		st->mods = malloc(b->nr_mods * sizeof(*st->mods));
		if (!st->mods) {
			free(out);
			return -ENOMEM;
		}
		for (i = 0; i < b->nr_mods; i++)
			st->mods[i] = pool + b->mods[i];
		st->nr_mods = b->nr_mods;
	}
	st->syms = out;
	st->nr = n;
	st->pool = pool;
	b->pool = NULL;
	memcpy(st->kept, b->kept, sizeof(st->kept));
	st->nr_kept = b->nr_kept;
	b->nr_kept = 0;
	symtab_builder_free(b);
	return 0;
}

void symtab_free(struct symtab *st)
{
	size_t i;

	if (!st)
		return;
	for (i = 0; st->dnames && i < st->nr; i++)
		if (st->dnames[i] && st->dnames[i] != st->syms[i].s.name)
			free((char *)st->dnames[i]);
	free(st->dnames);
	free(st->syms);
	free(st->pool);
	free(st->mods);
	free(st->segs);
	release_kept(st->kept, st->nr_kept);
	free(st);
}

const struct sym *symtab_lookup(const struct symtab *st, uint64_t addr)
{
	const struct symtab_isym *base;
	size_t n, half;

	if (!st || !st->nr)
		return NULL;
	/*
	 * The last symbol starting at or below addr, without a branch on the compare (it
	 * becomes a cmov): a flat report looks up every sample, and a mispredicted branch
	 * per level cost more than the loads.
	 */
	base = st->syms;
	for (n = st->nr; n > 1; n -= half) {
		half = n / 2;
		base = base[half].s.start <= addr ? base + half : base;
	}
	if (base->s.start > addr || addr >= base->end)
		return NULL;
	return &base->s;
}

const char *symtab_sym_module(const struct symtab *st, const struct sym *s)
{
	const struct symtab_isym *is = (const struct symtab_isym *)s;

	if (!st || !s || !is->mod || is->mod > st->nr_mods)
		return NULL;
	return st->mods[is->mod - 1];
}

int symtab_offset_to_vaddr(const struct symtab *st, uint64_t off, uint64_t *vaddr)
{
	size_t i;

	if (st->identity) {
		*vaddr = off;
		return 0;
	}
	for (i = 0; i < st->nr_segs; i++) {
		const struct symtab_seg *sg = &st->segs[i];

		if (off >= sg->off && off < sg->off + sg->filesz) {
			*vaddr = off - sg->off + sg->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

int symtab_vaddr_to_offset(const struct symtab *st, uint64_t vaddr, uint64_t *off)
{
	size_t i;

	if (st->identity) {
		*off = vaddr;
		return 0;
	}
	for (i = 0; i < st->nr_segs; i++) {
		const struct symtab_seg *sg = &st->segs[i];

		if (vaddr >= sg->vaddr && vaddr < sg->vaddr + sg->filesz) {
			*off = vaddr - sg->vaddr + sg->off;
			return 0;
		}
	}
	return -ENOENT;
}

const char *symtab_sym_demangled(const struct symtab *st, const struct sym *s)
{
	const struct symtab_isym *is = (const struct symtab_isym *)s;
	size_t i;
	char *d;

	if (!st || !s || !st->dnames || !dm_maybe_mangled(s->name))
		return s ? s->name : NULL;
	i = (size_t)(is - st->syms);
	if (i >= st->nr)
		return s->name;
	if (!st->dnames[i]) {
		d = dm_demangle(s->name);
		st->dnames[i] = d ? d : s->name;
	}
	return st->dnames[i];
}

bool symtab_full(const struct symtab *st)
{
	return st->full;
}

size_t symtab_size(const struct symtab *st)
{
	return st ? st->nr : 0;
}

static int builder_module(struct symtab_builder *b, const char *name, size_t len, uint32_t *idx)
{
	size_t i;
	int64_t off;

	/* kallsyms lists a module's symbols together: the last one is almost always it. */
	for (i = b->nr_mods; i-- > 0;) {
		const char *m = b->pool + b->mods[i];

		if (!strncmp(m, name, len) && !m[len]) {
			*idx = (uint32_t)i + 1;
			return 0;
		}
	}
	if (b->nr_mods == b->mods_cap) {
		size_t ncap = b->mods_cap ? b->mods_cap * 2 : 64;
		uint32_t *nm = realloc(b->mods, ncap * sizeof(*nm));

		if (!nm)
			return -ENOMEM;
		b->mods = nm;
		b->mods_cap = ncap;
	}
	off = symtab_builder_str(b, name, len, NULL);
	if (off < 0)
		return (int)off;
	b->mods[b->nr_mods++] = (uint32_t)off;
	*idx = (uint32_t)b->nr_mods;
	return 0;
}

/* "ffffffff81000000 T _text" or "ffffffffc0a01000 t foo\t[ext4]". */
static int kallsyms_line(struct symtab_builder *b, char *line, bool *nonzero, uint64_t *text)
{
	char *p = line, *end, *name, *mod = NULL;
	unsigned long long addr;
	char type;
	size_t nlen;
	uint32_t bits;
	int err;

	addr = strtoull(p, &end, 16);
	if (end == p || *end != ' ')
		return 0;
	if (addr)
		*nonzero = true;
	p = end + 1;
	type = *p;
	if (!type || p[1] != ' ')
		return 0;
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return 0;
	name = p + 2;
	nlen = strcspn(name, " \t\n");
	if (!nlen)
		return 0;
	if (nlen == 5 && !strncmp(name, "_text", 5))
		*text = addr;
	p = name + nlen;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '[') {
		mod = p + 1;
		p = strchr(mod, ']');
		if (!p)
			mod = NULL;
	}
	bits = (type == 'T' || type == 'W' ? SB_GLOBAL : 0) |
	       (type == 't' || type == 'T' ? SB_STRONG : 0) | SB_FUNC;
	err = symtab_builder_add(b, addr, 0, 0, name, nlen, NULL, bits);
	if (err || !mod)
		return err;
	return builder_module(b, mod, (size_t)(p - mod), &b->v[b->n - 1].mod);
}

/* A table whose addresses are runtime addresses (kallsyms, perf maps): no ELF
 * translation.  NULL with *err set on failure. */
static struct symtab *identity_finish(struct symtab_builder *b, uint64_t last_extent,
				      uint64_t ref_text, int *err)
{
	struct symtab *st = calloc(1, sizeof(*st));

	if (!st) {
		*err = -ENOMEM;
		return NULL;
	}
	st->identity = true;
	st->ref_text = ref_text;
	*err = symtab_builder_finish(b, st, last_extent);
	if (*err) {
		free(st);
		return NULL;
	}
	return st;
}

#define KALLSYMS_IOBUF (64u << 10)

struct symtab *symtab_load_kallsyms(const char *path, bool *restricted)
{
	struct symtab_builder b = {0};
	struct symtab *st = NULL;
	bool nonzero = false;
	uint64_t text = 0;
	size_t cap = 0;
	char *line = NULL, *iobuf;
	FILE *f;
	int err = 0;

	if (restricted)
		*restricted = false;
	f = fopen(path ? path : "/proc/kallsyms", "re");
	if (!f)
		return NULL;
	/*
	 * procfs says 1 KiB blocks, so stdio would read that little: 4x the calls into
	 * the kernel, each restarting its walk of the symbols.  (glibc ignores the size
	 * given without a buffer.)
	 */
	iobuf = malloc(KALLSYMS_IOBUF);
	if (iobuf)
		setvbuf(f, iobuf, _IOFBF, KALLSYMS_IOBUF);
	while (getline(&line, &cap, f) > 0) {
		err = kallsyms_line(&b, line, &nonzero, &text);
		if (err)
			goto out;
	}
	if (ferror(f)) {
		err = -EIO;
		goto out;
	}
	if (!b.n) {
		err = -ENOEXEC;
		goto out;
	}
	if (!nonzero) {
		/* kptr_restrict: names are there, addresses are not. */
		if (restricted)
			*restricted = true;
		err = -EPERM;
		goto out;
	}
	/* Kernel symbols have no sizes; cap the last one of a module at a page. */
	st = identity_finish(&b, 4096, text, &err);
out:
	free(line);
	fclose(f);
	free(iobuf); /* after fclose, which may still use it */
	symtab_builder_free(&b);
	if (err) {
		errno = -err;
		return NULL;
	}
	return st;
}

/* JIT maps (/tmp/perf-PID.map): "START SIZE name with spaces", hex without 0x. */
struct symtab *symtab_load_perfmap(const char *path)
{
	struct symtab_builder b = {0};
	struct symtab *st = NULL;
	size_t cap = 0;
	char *line = NULL;
	ssize_t len;
	FILE *f;
	int err = 0;

	f = fopen(path, "re");
	if (!f)
		return NULL;
	while ((len = getline(&line, &cap, f)) > 0) {
		unsigned long long start, size;
		int pos = 0;

		if (line[len - 1] == '\n')
			line[--len] = '\0';
		if (sscanf(line, "%llx %llx %n", &start, &size, &pos) != 2 || !pos || !line[pos])
			continue;
		err = symtab_builder_add(&b, start, size, 0, line + pos, strlen(line + pos), NULL,
					 SB_FUNC | SB_GLOBAL | SB_STRONG);
		if (err)
			goto out;
	}
	st = identity_finish(&b, 0, 0, &err);
out:
	free(line);
	fclose(f);
	symtab_builder_free(&b);
	if (err) {
		errno = -err;
		return NULL;
	}
	return st;
}
