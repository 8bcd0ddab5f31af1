// SPDX-License-Identifier: Apache-2.0
/*
 * CFI compiler: hand-assembled .eh_frame/.debug_frame programs with known rows, and
 * real binaries checked against `readelf --debug-dump=frames-interp` (binutils) as the
 * oracle: at the first and last PC of every readelf row of every FDE, our row gives the
 * same CFA rule and the same place for the caller's rbp.
 *
 *	test_cfi                 synthetic tests + oracle on system libraries
 *	test_cfi --oracle FILE   oracle on one file (tests/cfi.bats builds the fixtures)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/buildid.h"
#include "unwind/cfi_cache.h"
#include "unwind/cfi_compile.h"
#include "unwind/cfi_priv.h"
#include "unit.h"

/* A byte buffer to assemble frame sections in. */
struct buf {
	uint8_t b[1024];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put_u8(struct buf *b, uint8_t v)
{
	put(b, &v, 1);
}

static void put_u32(struct buf *b, uint32_t v)
{
	put(b, &v, 4);
}

static void put_u64(struct buf *b, uint64_t v)
{
	put(b, &v, 8);
}

static void set_u32(struct buf *b, size_t at, uint32_t v)
{
	memcpy(b->b + at, &v, 4);
}

/* Pad the entry started at `start` (its 4-byte length included) with nops, set length. */
static void end_entry(struct buf *b, size_t start)
{
	while ((b->n - start) % 8)
		put_u8(b, 0);
	set_u32(b, start, b->n - start - 4);
}

/* .eh_frame CIE "zR", pcrel|sdata4, CFA rsp+8, RA at c-8 (what gcc emits). */
static size_t eh_cie(struct buf *b, const char *aug_extra)
{
	static const uint8_t insns[] = {0x0c, 7, 8, 0x90, 1};
	size_t start = b->n;

	put_u32(b, 0);
	put_u32(b, 0); /* CIE id */
	put_u8(b, 1);
	put(b, "zR", 2);
	put(b, aug_extra, strlen(aug_extra) + 1);
	put_u8(b, 1);	 /* code align */
	put_u8(b, 0x78); /* data align -8 */
	put_u8(b, 16);	 /* RA */
	put_u8(b, 1);	 /* augmentation data length */
	put_u8(b, 0x1b); /* DW_EH_PE_pcrel | sdata4 */
	put(b, insns, sizeof(insns));
	end_entry(b, start);
	return start;
}

static void eh_fde(struct buf *b, uint64_t sec_vaddr, size_t cie, uint64_t start, uint32_t len,
		   const uint8_t *insns, size_t n)
{
	size_t at = b->n;

	put_u32(b, 0);
	put_u32(b, b->n - cie); /* back from this field to the CIE */
	put_u32(b, (uint32_t)(start - (sec_vaddr + b->n)));
	put_u32(b, len);
	put_u8(b, 0); /* no augmentation data */
	put(b, insns, n);
	end_entry(b, at);
}

/* Expected row: pc, CFA type and offset, rbp type and offset (bytes). */
struct want {
	uint64_t pc;
	int cfa, cfa_off, rbp, rbp_off;
};

static void check_rows(const struct cfi_table *t, const struct want *w, size_t n)
{
	CHECK_EQ_U64(t->n, n);
	for (size_t i = 0; i < n && i < t->n; i++) {
		const struct unwind_row *r = &t->rows[i];

		CHECK_EQ_U64(r->pc + t->base, w[i].pc);
		CHECK_EQ_U64(UNWIND_ROW_CFA(r), w[i].cfa);
		CHECK_EQ_U64(r->cfa_off, w[i].cfa_off);
		CHECK_EQ_U64(UNWIND_ROW_RBP(r), w[i].rbp);
		CHECK_EQ_U64(r->rbp_off * 8, w[i].rbp_off);
		if (unit_cur_failed) {
			printf("#   at row %zu\n", i);
			return;
		}
	}
}

static struct cfi_table *table_of(const struct cfi_section *secs, int n)
{
	struct cfi_entries e = {0};
	struct cfi_table *t = calloc(1, sizeof(*t));

	if (!t)
		abort();
	for (int i = 0; i < n; i++)
		CHECK(cfi_parse_section(&secs[i], &e) == 0);
	CHECK(cfi_build_rows(t, &e) == 0);
	cfi_entries_free(&e);
	return t;
}

#define RSP   UNWIND_CFA_RSP
#define RBP   UNWIND_CFA_RBP
#define NONE  UNWIND_CFA_NONE
#define SAME  UNWIND_RBP_SAME
#define AT    UNWIND_RBP_CFA_OFF
#define UNSUP UNWIND_CFA_UNSUPPORTED

/* A prologue/epilogue with remember/restore_state and restore (to the CIE's rule). */
static void test_eh_frame_program(void)
{
	static const uint8_t f1[] = {
		0x41, 0x0e, 16,	  0x86, 2,    /* +1: cfa rsp+16; rbp at c-16 */
		0x43, 0x0d, 6,		      /* +3: cfa rbp+16 */
		0x02, 0x20, 0x0a,	      /* +0x20: remember_state */
		0x0c, 7,    8,	  0xc6,	      /* def_cfa rsp+8; restore rbp */
		0x41, 0x0b,		      /* +1: restore_state */
		0x03, 0x05, 0x00, 0x2e, 0x10, /* advance_loc2 5; GNU_args_size: no change */
		0x04, 0x03, 0,	  0,	0,
		0x13, 0x7c, /* advance_loc4 3; def_cfa_offset_sf -4*-8 */
	};
	const uint64_t va = 0x9000;
	struct buf b = {0};
	size_t cie = eh_cie(&b, "");
	struct cfi_table *t;

	eh_fde(&b, va, cie, 0x1000, 0x40, f1, sizeof(f1));
	put_u32(&b, 0); /* terminator */
	t = table_of(&(struct cfi_section){b.b, b.n, va, 0, 0, true}, 1);
	const struct want w[] = {
		{0x1000, RSP, 8, SAME, 0},  {0x1001, RSP, 16, AT, -16}, {0x1004, RBP, 16, AT, -16},
		{0x1024, RSP, 8, SAME, 0},  {0x1025, RBP, 16, AT, -16}, {0x102d, RBP, 32, AT, -16},
		{0x1040, NONE, 0, SAME, 0},
	};
	check_rows(t, w, sizeof(w) / sizeof(w[0]));
	CHECK(cfi_table_lookup(t, 0xfff) == NULL);
	CHECK(cfi_table_lookup(t, 0x1003) == &t->rows[1]);
	CHECK(cfi_table_lookup(t, 0x1004) == &t->rows[2]);
	CHECK(cfi_table_lookup(t, 0x5000) == &t->rows[6]);
	CHECK_EQ_U64(t->stats.fdes, 1);
	cfi_table_free(t);
}

/* The binutils lazy-PLT expression, a gap between FDEs, outermost and unsupported rules. */
static void test_plt_gap_outermost(void)
{
	static const uint8_t plt[] = {
		0x0e, 16, 0x46, 0x0e, 24,   0x4a, /* rsp+16; +6: rsp+24; +10: */
		0x0f, 11, 0x77, 8,    0x80, 0,	  0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22,
	};
	static const uint8_t start[] = {
		0x07, 16,			     /* undefined RA */
		0x44, 0x08, 16,			     /* +4: same_value RA: RA not at CFA-8 */
		0x44, 0x90, 1,	0x10, 6, 2, 0x77, 8, /* +4: RA back; rbp by expression rsp+8 */
	};
	const uint64_t va = 0x400;
	struct buf b = {0};
	size_t cie = eh_cie(&b, "");
	struct cfi_table *t;

	eh_fde(&b, va, cie, 0x2000, 0x30, plt, sizeof(plt));
	eh_fde(&b, va, cie, 0x2040, 0x10, start, sizeof(start));
	t = table_of(&(struct cfi_section){b.b, b.n, va, 0, 0, true}, 1);
	const struct want w[] = {
		{0x2000, RSP, 16, SAME, 0},
		{0x2006, RSP, 24, SAME, 0},
		{0x2010, UNWIND_CFA_PLT, 8, SAME, 0},
		{0x2030, NONE, 0, SAME, 0},
		{0x2040, UNWIND_CFA_OUTERMOST, 0, SAME, 0},
		{0x2044, UNSUP, 0, SAME, 0},
		{0x2050, NONE, 0, SAME, 0},
	};
	check_rows(t, w, sizeof(w) / sizeof(w[0]));
	CHECK_EQ_U64(t->stats.rows_plt, 1);
	CHECK_EQ_U64(t->stats.unsup_ra, 1);
	CHECK_EQ_U64(t->stats.unsup_rbp, 1);
	CHECK_EQ_U64(t->stats.rows_outermost, 1);
	cfi_table_free(t);
}

/* glibc's __vfork: pop the return address into rdi, syscall, push it back. */
static void test_ra_in_rdi(void)
{
	static const uint8_t vfork[] = {
		0x41, 0x0e, 0, 0x09, 16, 5, /* +1: cfa rsp+0; register ra in rdi */
		0x4a, 0x0e, 8, 0x90, 1,	    /* +10: cfa rsp+8; ra at c-8 */
	};
	const uint64_t va = 0x400;
	struct buf b = {0};
	size_t cie = eh_cie(&b, "");
	struct cfi_table *t;

	eh_fde(&b, va, cie, 0x3000, 0x20, vfork, sizeof(vfork));
	t = table_of(&(struct cfi_section){b.b, b.n, va, 0, 0, true}, 1);
	const struct want w[] = {
		{0x3000, RSP, 8, SAME, 0},
		{0x3001, UNWIND_CFA_RA_RDI, 0, SAME, 0},
		{0x300b, RSP, 8, SAME, 0},
		{0x3020, NONE, 0, SAME, 0},
	};
	check_rows(t, w, sizeof(w) / sizeof(w[0]));
	CHECK_EQ_U64(t->stats.rows_ra_rdi, 1);
	CHECK_EQ_U64(t->stats.unsup_ra, 0);
	cfi_table_free(t);
}

/* crti.o's _init, without CFI, gets rows: rsp+8 at its entry and ret, rsp+16 between. */
static void test_init_rows(void)
{
	const char *bin = "/usr/bin/ls";
	unsigned long init = 0, size = 0;
	const struct unwind_row *r;
	struct cfi_table *t;
	char cmd[256], line[512];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -SW %s", bin);
	p = popen(cmd, "r");
	CHECK(p != NULL);
	while (p && fgets(line, sizeof(line), p)) {
		char *s = strstr(line, " .init ");

		if (s && sscanf(s, " .init %*s %lx %*s %lx", &init, &size) != 2)
			init = 0;
	}
	if (p)
		pclose(p);
	CHECK(init && size >= 13);
	t = cfi_compile_elf(bin, -1, NULL);
	CHECK(t != NULL);
	if (!t || !init)
		return;
	CHECK_EQ_U64(t->stats.rows_init, 4);
	r = cfi_table_lookup(t, init);
	CHECK(r && UNWIND_ROW_CFA(r) == UNWIND_CFA_RSP && r->cfa_off == 8);
	r = cfi_table_lookup(t, init + 8); /* past [endbr64] sub $8,%rsp */
	CHECK(r && UNWIND_ROW_CFA(r) == UNWIND_CFA_RSP && r->cfa_off == 16);
	r = cfi_table_lookup(t, init + size - 1); /* ret */
	CHECK(r && UNWIND_ROW_CFA(r) == UNWIND_CFA_RSP && r->cfa_off == 8);
	r = cfi_table_lookup(t, init + size);
	CHECK(r && UNWIND_ROW_CFA(r) != UNWIND_CFA_RSP); /* the .plt's, or a gap */
	cfi_table_free(t);
}

/* .debug_frame: CIE id 0xffffffff, version 4, absolute 8-byte addresses, a 64-bit length
 * entry, an FDE pointing forward to its CIE; .eh_frame wins where both cover a PC. */
static void test_debug_frame(void)
{
	static const uint8_t cie_insns[] = {0x0c, 7, 8, 0x90, 1};
	static const uint8_t f[] = {0x41, 0x0e, 16, 0x86, 2, 0x41, 0x0d, 6};
	static const uint8_t e[] = {0x0e, 32};
	struct buf d = {0}, eh = {0};
	size_t at, cie_at;
	struct cfi_table *t;

	/* FDE first, 64-bit length: 0xffffffff, u64 length, u64 CIE offset. */
	at = d.n;
	put_u32(&d, 0xffffffff);
	put_u64(&d, 0);
	put_u64(&d, 0); /* CIE offset, patched below */
	put_u64(&d, 0x3000);
	put_u64(&d, 0x20);
	put(&d, f, sizeof(f));
	memcpy(d.b + at + 4, &(uint64_t){d.n - at - 12}, 8);
	/* An FDE .eh_frame also covers: dropped. */
	size_t at2 = d.n;
	put_u32(&d, 0);
	put_u32(&d, 0);
	put_u64(&d, 0x5000);
	put_u64(&d, 0x10);
	end_entry(&d, at2);
	cie_at = d.n;
	put_u32(&d, 0);
	put_u32(&d, 0xffffffff);
	put_u8(&d, 4);
	put_u8(&d, 0); /* no augmentation */
	put_u8(&d, 8); /* address size */
	put_u8(&d, 0); /* segment size */
	put_u8(&d, 1); /* code align */
	put_u8(&d, 0x78);
	put_u8(&d, 16);
	put(&d, cie_insns, sizeof(cie_insns));
	end_entry(&d, cie_at);
	memcpy(d.b + at + 12, &(uint64_t){cie_at}, 8);
	set_u32(&d, at2 + 4, cie_at);

	size_t cie = eh_cie(&eh, "");
	eh_fde(&eh, 0x100, cie, 0x5000, 0x10, e, sizeof(e));

	const struct cfi_section secs[] = {
		{d.b, d.n, 0, 0, 0, false},
		{eh.b, eh.n, 0x100, 0, 0, true},
	};
	t = table_of(secs, 2);
	const struct want w[] = {
		{0x3000, RSP, 8, SAME, 0},  {0x3001, RSP, 16, AT, -16}, {0x3002, RBP, 16, AT, -16},
		{0x3020, NONE, 0, SAME, 0}, {0x5000, RSP, 32, SAME, 0}, {0x5010, NONE, 0, SAME, 0},
	};
	check_rows(t, w, sizeof(w) / sizeof(w[0]));
	CHECK_EQ_U64(t->stats.fdes_overlap, 1);
	CHECK_EQ_U64(t->stats.fdes_debug, 1);
	cfi_table_free(t);
}

/* A truncated program and garbage: no crash, the rest of the FDE marked unsupported. */
static void test_bad_input(void)
{
	/* 17 header bytes + 7 = 24: no padding, so the uleb offset of def_cfa is cut */
	static const uint8_t trunc[] = {0x41, 0x0e, 16, 0x42, 0x0c, 7, 0x80};
	struct buf b = {0};
	size_t cie = eh_cie(&b, "");
	struct cfi_table *t;
	uint8_t junk[512];

	eh_fde(&b, 0, cie, 0x100, 0x10, trunc, sizeof(trunc));
	t = table_of(&(struct cfi_section){b.b, b.n, 0, 0, 0, true}, 1);
	const struct want w[] = {
		{0x100, RSP, 8, SAME, 0},
		{0x101, RSP, 16, SAME, 0},
		{0x103, UNSUP, 0, SAME, 0},
		{0x110, NONE, 0, SAME, 0},
	};
	check_rows(t, w, sizeof(w) / sizeof(w[0]));
	CHECK_EQ_U64(t->stats.bad_insns, 1);
	cfi_table_free(t);

	srand(42);
	for (int round = 0; round < 5000; round++) {
		struct cfi_entries e = {0};
		int err;

		for (size_t i = 0; i < sizeof(junk); i++)
			junk[i] = rand();
		if (round % 2) /* a valid CIE first, so the FDE and interpreter paths run too */
			memcpy(junk, b.b, cie + 32);
		t = calloc(1, sizeof(*t));
		CHECK(cfi_parse_section(
			      &(struct cfi_section){junk, sizeof(junk), 0, 0, 0, round % 3 != 0},
			      &e) == 0);
		err = cfi_build_rows(t, &e);
		CHECK(err == 0 || err == -E2BIG);
		cfi_entries_free(&e);
		cfi_table_free(t);
	}
}

static void test_not_elf(void)
{
	struct cfi_table *t = cfi_compile_elf("/proc/self/status", -1, NULL);

	CHECK(!t && errno == ENOEXEC);
	t = cfi_compile_elf("/nonexistent", -1, NULL);
	CHECK(!t && errno == ENOENT);
}

/* Flip one byte of a file at off (from the end when off < 0). */
static void poke(const char *path, long off)
{
	int fd = open(path, O_RDWR);
	uint8_t c;

	CHECK(fd >= 0);
	CHECK(lseek(fd, off, off < 0 ? SEEK_END : SEEK_SET) >= 0);
	CHECK(read(fd, &c, 1) == 1);
	c ^= 0x5a;
	CHECK(lseek(fd, -1, SEEK_CUR) >= 0);
	CHECK(write(fd, &c, 1) == 1);
	close(fd);
}

static void test_cache(void)
{
	const char *lib = "/lib/x86_64-linux-gnu/libc.so.6";
	char dir[] = "/tmp/test_cfi.XXXXXX", sub[64], file[256], hex[41], *def;
	struct cfi_table *t, *c;
	bool hit;

	CHECK(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/a/b", dir);
	t = cfi_compile_elf(lib, -1, NULL);
	CHECK(t && t->bid_size == 20);
	if (!t)
		return;
	c = cfi_cache_load(sub, t->bid, t->bid_size);
	CHECK(!c && errno == ENOENT);
	CHECK(cfi_cache_store(sub, t) == 0); /* creates the directories */
	c = cfi_cache_load(sub, t->bid, t->bid_size);
	CHECK(c && c->n == t->n && c->base == t->base);
	CHECK(c && !memcmp(c->rows, t->rows, t->n * sizeof(*t->rows)));
	CHECK(c && c->stats.fdes == t->stats.fdes);
	cfi_table_free(c);

	c = cfi_cache_get(sub, lib, NULL, &hit);
	CHECK(c && hit && c->n == t->n);
	cfi_table_free(c);

	/* Straight into a caller's array, and only with room for all of it. */
	{
		struct unwind_row *rows = calloc(t->n + 1, sizeof(*rows));
		uint64_t base = 0;

		CHECK(rows && cfi_cache_read(sub, t->bid, t->bid_size, rows, t->n, &base) == t->n);
		CHECK(rows && base == t->base && !memcmp(rows, t->rows, t->n * sizeof(*rows)));
		CHECK(rows &&
		      cfi_cache_read(sub, t->bid, t->bid_size, rows, t->n - 1, &base) == -ENOSPC);
		free(rows);
	}

	bid_to_hex(hex, t->bid, t->bid_size);
	snprintf(file, sizeof(file), "%s/%s.cfi", sub, hex);
	poke(file, -3); /* a row byte: the checksum */
	c = cfi_cache_load(sub, t->bid, t->bid_size);
	CHECK(!c && errno == ESTALE);
	c = cfi_cache_get(sub, lib, NULL, &hit); /* recompiled and stored over it */
	CHECK(c && !hit);
	cfi_table_free(c);
	c = cfi_cache_load(sub, t->bid, t->bid_size);
	CHECK(c != NULL);
	cfi_table_free(c);
	poke(file, 8); /* the version */
	c = cfi_cache_load(sub, t->bid, t->bid_size);
	CHECK(!c && errno == ESTALE);
	CHECK(truncate(file, 100) == 0);
	c = cfi_cache_load(sub, t->bid, t->bid_size);
	CHECK(!c && errno == ESTALE);

	setenv("XDG_CACHE_HOME", "/x/y", 1);
	def = cfi_cache_default_dir();
	CHECK_STR(def, "/x/y/perf-agent/cfi");
	free(def);
	unsetenv("XDG_CACHE_HOME");
	def = cfi_cache_default_dir();
	CHECK(def && (geteuid() ? strstr(def, "/.cache/perf-agent/cfi") != NULL
				: !strcmp(def, "/var/cache/perf-agent/cfi")));
	free(def);

	cfi_table_free(t);
	snprintf(file, sizeof(file), "rm -rf '%s'", dir);
	CHECK(system(file) == 0);
}

/* The oracle. */

struct range {
	uint64_t lo, hi;
};

struct oracle {
	const struct cfi_table *t;
	long compared, mismatched, unsupported;
	struct range *eh; /* .eh_frame FDEs: ours prefers them over .debug_frame ones */
	size_t n_eh, cap_eh, n_debug;
	bool eh_sorted;
};

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Does [lo, hi) overlap an .eh_frame FDE? */
static bool eh_overlaps(struct oracle *o, uint64_t lo, uint64_t hi)
{
	size_t l = 0, h = o->n_eh;

	if (!o->eh_sorted) {
		qsort(o->eh, o->n_eh, sizeof(*o->eh), cmp_range);
		o->eh_sorted = true;
	}
	while (l < h) { /* first range with lo >= hi */
		size_t m = l + (h - l) / 2;

		if (o->eh[m].lo < hi)
			l = m + 1;
		else
			h = m;
	}
	/* the ranges do not overlap each other, so only the one before can reach lo */
	return l > 0 && o->eh[l - 1].hi > lo;
}

/* A CIE as readelf shows it: its initial rule and whether it is a signal frame. */
struct rcie {
	unsigned long off;
	char cfa[32], rbp[32], ra[32];
	int signal;
};

static int rule_matches(const struct unwind_row *r, const char *cfa, const char *rbp,
			const char *ra, int signal)
{
	int type = r ? UNWIND_ROW_CFA(r) : -1, rt = r ? UNWIND_ROW_RBP(r) : -1;
	long n;
	char c;

	if (!r)
		return 0;
	if (!strcmp(ra, "u"))
		return type == UNWIND_CFA_OUTERMOST;
	if (!strcmp(ra, "r5")) /* rdi: __vfork */
		return type ==
		       (strncmp(cfa, "rsp+", 4) ? UNWIND_CFA_UNSUPPORTED : UNWIND_CFA_RA_RDI);
	if (signal)
		return type == UNWIND_CFA_SIGNAL;
	if (type == UNWIND_CFA_UNSUPPORTED) /* only where readelf shows a rule we can't take */
		return strcmp(ra, "c-8") || !strcmp(cfa, "exp") ||
		       (strncmp(cfa, "rsp+", 4) && strncmp(cfa, "rbp+", 4)) ||
		       labs(atol(cfa + 4)) > INT16_MAX ||
		       (rbp[0] && strcmp(rbp, "u") && strcmp(rbp, "s") && strncmp(rbp, "c-", 2)) ||
		       (!strncmp(rbp, "c-", 2) && (atol(rbp + 2) % 8 || atol(rbp + 2) > 1024));
	if (strcmp(ra, "c-8"))
		return 0;
	if (!strcmp(cfa, "exp")) {
		if (type != UNWIND_CFA_PLT && type != UNWIND_CFA_PLT_IBT &&
		    type != UNWIND_CFA_DEREF_RBP)
			return 0;
	} else if (sscanf(cfa, "rsp+%ld%c", &n, &c) == 1) {
		if (type != UNWIND_CFA_RSP || r->cfa_off != n)
			return 0;
	} else if (sscanf(cfa, "rbp+%ld%c", &n, &c) == 1) {
		if (type != UNWIND_CFA_RBP || r->cfa_off != n)
			return 0;
	} else {
		return 0;
	}
	if (!rbp[0] || !strcmp(rbp, "u"))
		return rt == UNWIND_RBP_SAME || rt == UNWIND_RBP_UNDEFINED;
	if (!strcmp(rbp, "s"))
		return rt == UNWIND_RBP_SAME;
	if (!strcmp(rbp, "exp"))
		return rt == UNWIND_RBP_AT_RBP;
	if (sscanf(rbp, "c-%ld%c", &n, &c) == 1)
		return rt == UNWIND_RBP_CFA_OFF && r->rbp_off * 8 == -n;
	return 0;
}

static void oracle_check(struct oracle *o, uint64_t pc, const char *cfa, const char *rbp,
			 const char *ra, int signal)
{
	const struct unwind_row *r = cfi_table_lookup(o->t, pc);
	char buf[32];

	o->compared++;
	if (r && UNWIND_ROW_CFA(r) == UNWIND_CFA_UNSUPPORTED)
		o->unsupported++;
	if (rule_matches(r, cfa, rbp, ra, signal))
		return;
	if (o->mismatched++ < 10)
		printf("#   pc %#llx: readelf cfa=%s rbp=%s ra=%s%s, ours %s rbp type %d off %d\n",
		       (unsigned long long)pc, cfa, rbp[0] ? rbp : "-", ra,
		       signal ? " (signal)" : "", r ? cfi_row_cfa_str(r, buf, sizeof(buf)) : "NULL",
		       r ? UNWIND_ROW_RBP(r) : -1, r ? r->rbp_off * 8 : 0);
}

/* Split a readelf row/header line into words. */
static int words(char *line, char **w, int max)
{
	int n = 0;

	/* a register rule prints as "r3 (rbx)": keep one word per column */
	for (char *s = strtok(line, " \t\n"); s && n < max; s = strtok(NULL, " \t\n"))
		if (s[0] != '(' || !n)
			w[n++] = s;
	return n;
}

/* The rows readelf printed for one FDE (or CIE): loc and the three rules. */
struct rrow {
	uint64_t loc;
	char cfa[32], rbp[32], ra[32];
};

struct fde_rows {
	struct rrow *rows;
	size_t n, cap;
};

static void fde_flush(struct oracle *o, const struct fde_rows *fr, uint64_t lo, uint64_t hi,
		      const struct rcie *c, bool eh)
{
	if (eh) {
		if (o->n_eh == o->cap_eh) {
			o->cap_eh = o->cap_eh ? 2 * o->cap_eh : 1024;
			o->eh = realloc(o->eh, o->cap_eh * sizeof(*o->eh));
			if (!o->eh)
				abort();
		}
		o->eh[o->n_eh++] = (struct range){lo, hi};
		o->eh_sorted = false;
	} else if (eh_overlaps(o, lo, hi)) {
		return;
	} else {
		o->n_debug++;
	}
	if (!fr->n) { /* only nops: the CIE's initial rule throughout */
		oracle_check(o, lo, c->cfa, c->rbp, c->ra, c->signal);
		oracle_check(o, hi - 1, c->cfa, c->rbp, c->ra, c->signal);
		return;
	}
	for (size_t i = 0; i < fr->n; i++) {
		uint64_t end = i + 1 < fr->n ? fr->rows[i + 1].loc : hi;
		const struct rrow *r = &fr->rows[i];

		if (r->loc >= hi || end <= r->loc) /* past the FDE, or replaced at the same loc */
			continue;
		oracle_check(o, r->loc, r->cfa, r->rbp, r->ra, c->signal);
		oracle_check(o, end - 1, r->cfa, r->rbp, r->ra, c->signal);
	}
}

static void copy_word(char *dst, const char *src)
{
	snprintf(dst, 32, "%s", src);
}

/*
 * Compare t against readelf's interpretation of file: every .eh_frame FDE, and the
 * .debug_frame FDEs no .eh_frame FDE overlaps (ours prefers .eh_frame).
 * Returns the number of PCs compared (0 when readelf failed).
 */
static long run_oracle(const char *file, const struct cfi_table *t, long *mismatched, long *unsup)
{
	struct oracle o = {.t = t};
	char cmd[4096], line[4096], *w[64];
	struct rcie cies[4096];
	size_t ncies = 0;
	struct fde_rows fr = {0};
	struct rcie *cur_cie = NULL, *fde_cie = NULL, *table_cie = NULL;
	int rbp_col = -1, ra_col = -1, in_fde = 0;
	bool is_eh = true;
	uint64_t lo = 0, hi = 0;
	FILE *p;

	/* -wN: the file's own sections, not those of a debug file its debuglink names */
	snprintf(cmd, sizeof(cmd), "readelf -wN --debug-dump=frames-interp '%s'", file);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p)) {
		int n;

		if (!strncmp(line, "Contents of the ", 16) || strstr(line, "ZERO terminator")) {
			if (in_fde)
				fde_flush(&o, &fr, lo, hi, fde_cie, is_eh);
			in_fde = 0;
			if (line[0] == 'C')
				is_eh = strstr(line, ".eh_frame") != NULL;
			continue;
		}
		if (line[0] != ' ' && strstr(line, " CIE") && ncies < 4096) { /* new CIE */
			if (in_fde)
				fde_flush(&o, &fr, lo, hi, fde_cie, is_eh);
			in_fde = 0;
			cur_cie = &cies[ncies++];
			memset(cur_cie, 0, sizeof(*cur_cie));
			cur_cie->off = strtoul(line, NULL, 16);
			cur_cie->signal = !!strstr(line, "S\" ") && strstr(line, "\"z");
			table_cie = cur_cie;
			continue;
		}
		if (line[0] != ' ' && strstr(line, " FDE ")) {
			char *c = strstr(line, "cie="), *pc = strstr(line, "pc=");

			if (in_fde)
				fde_flush(&o, &fr, lo, hi, fde_cie, is_eh);
			in_fde = 1;
			fr.n = 0;
			table_cie = NULL;
			fde_cie = NULL;
			if (c && pc) {
				unsigned long co = strtoul(c + 4, NULL, 16);

				for (size_t i = 0; i < ncies; i++)
					if (cies[i].off == co)
						fde_cie = &cies[i];
				lo = strtoull(pc + 3, &pc, 16);
				hi = strtoull(pc + 2, NULL, 16);
			}
			if (!fde_cie)
				in_fde = 0;
			continue;
		}
		n = words(line, w, 64);
		if (n >= 2 && !strcmp(w[0], "LOC")) {
			rbp_col = ra_col = -1;
			for (int i = 1; i < n; i++) {
				if (!strcmp(w[i], "rbp"))
					rbp_col = i;
				if (!strcmp(w[i], "ra"))
					ra_col = i;
			}
			continue;
		}
		if (n >= 2 && strlen(w[0]) >= 8 &&
		    strspn(w[0], "0123456789abcdef") == strlen(w[0])) {
			struct rrow r = {.loc = strtoull(w[0], NULL, 16)};

			copy_word(r.cfa, w[1]);
			copy_word(r.rbp, rbp_col > 0 && rbp_col < n ? w[rbp_col] : "");
			copy_word(r.ra, ra_col > 0 && ra_col < n ? w[ra_col] : "u");
			if (table_cie) { /* the CIE's initial row */
				copy_word(table_cie->cfa, r.cfa);
				copy_word(table_cie->rbp, r.rbp);
				copy_word(table_cie->ra, r.ra);
				continue;
			}
			if (!in_fde)
				continue;
			if (fr.n == fr.cap) {
				fr.cap = fr.cap ? 2 * fr.cap : 64;
				fr.rows = realloc(fr.rows, fr.cap * sizeof(*fr.rows));
				if (!fr.rows)
					abort();
			}
			fr.rows[fr.n++] = r;
		}
	}
	if (in_fde)
		fde_flush(&o, &fr, lo, hi, fde_cie, is_eh);
	free(fr.rows);
	free(o.eh);
	if (pclose(p) != 0)
		return 0;
	printf("#   %s: %zu .eh_frame FDEs, %zu .debug_frame FDEs, %ld PCs compared\n", file,
	       o.n_eh, o.n_debug, o.compared);
	*mismatched = o.mismatched;
	*unsup = o.unsupported;
	return o.compared;
}

/* 0 when ours agrees with readelf at every PC compared (and something was compared). */
static int oracle_file(const char *file, int required)
{
	long cmp, mis = 0, unsup = 0;
	struct cfi_table *t;

	if (access(file, R_OK)) {
		printf("#   %s: missing%s\n", file, required ? "" : ", skipped");
		return required ? -1 : 0;
	}
	t = cfi_compile_elf(file, -1, NULL);
	if (!t) {
		printf("#   %s: compile failed: %s\n", file, strerror(errno));
		return -1;
	}
	cmp = run_oracle(file, t, &mis, &unsup);
	printf("#   %s: %u rows, %ld PCs compared, %ld mismatched, %ld unsupported, %u FDEs "
	       "skipped, %.1f ms\n",
	       file, t->n, cmp, mis, unsup, t->stats.fdes_skipped, t->stats.compile_ns / 1e6);
	cfi_table_free(t);
	return cmp > 0 && mis == 0 ? 0 : -1;
}

static void test_oracle_system_libs(void)
{
	CHECK(oracle_file("/lib/x86_64-linux-gnu/libc.so.6", 1) == 0);
	CHECK(oracle_file("/lib64/ld-linux-x86-64.so.2", 1) == 0);
	CHECK(oracle_file("/usr/lib/x86_64-linux-gnu/libstdc++.so.6", 1) == 0);
	CHECK(oracle_file("/usr/lib/x86_64-linux-gnu/liblzma.so.5", 1) == 0);
	CHECK(oracle_file("/root/.pyenv/versions/3.11.7/lib/libpython3.11.so.1.0", 0) == 0);
	/* lld-linked: .eh_frame typed SHT_X86_64_UNWIND, ~1M rows */
	CHECK(oracle_file("/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1", 0) == 0);
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	CHECK(n > 0);
	self[n > 0 ? n : 0] = 0;
	CHECK(oracle_file(self, 1) == 0); /* not /proc/self/exe: readelf would read itself */
}

/* Rows cfi_run reports: pc and whether a state came with it. */
struct seen {
	uint64_t pc[16];
	bool known[16];
	int n;
};

static int seen_row(void *ctx, uint64_t pc, const struct cfi_state *st)
{
	struct seen *s = ctx;

	if (s->n < 16) {
		s->pc[s->n] = pc;
		s->known[s->n] = st != NULL;
	}
	s->n++;
	return 0;
}

/* Run prog as the CIE's initial instructions (in_cie) or as the FDE's program. */
static int run_prog(const uint8_t *prog, size_t len, bool in_cie, struct seen *s)
{
	static const uint8_t init[] = {0x0c, 7, 8, 0x90, 1};
	struct cfi_section sec = {prog, len, 0xfff, 0, 0, true}; /* set_loc's base: 0x1000 */
	struct cfi_cie cie = {
		.code_align = 1, .data_align = -8, .ra_reg = 16, .fde_enc = 0x1b, .addr_size = 8};
	struct cfi_fde fde = {.start = 0x1000, .end = 0x1100, .sec = &sec};

	cie.insns = in_cie ? prog : init;
	cie.insns_len = in_cie ? len : sizeof(init);
	fde.insns = in_cie ? NULL : prog;
	fde.insns_len = in_cie ? 0 : len;
	memset(s, 0, sizeof(*s));
	return cfi_run(&cie, &fde, seen_row, s);
}

/*
 * An operand cut by the end of the program ends it: advance_loc2 with one byte left, a
 * def_cfa_expression block longer than what is left (both used to loop forever).
 */
static void test_cfi_truncated_operand_ends_program(void)
{
	static const uint8_t adv[] = {0x02, 0x04, 0x03, 0x01};
	static const uint8_t expr[] = {0x0f, 0x64, 0x70};
	struct seen s;

	for (int in_cie = 0; in_cie < 2; in_cie++) {
		CHECK(run_prog(adv, sizeof(adv), in_cie, &s) == -EINVAL);
		/* FDE: the row before the cut stands, nothing is known from 0x1004 on. */
		CHECK_EQ_U64(s.n, in_cie ? 1 : 2);
		CHECK_EQ_U64(s.pc[s.n - 1], in_cie ? 0x1000 : 0x1004);
		CHECK(!s.known[s.n - 1]);
		CHECK(run_prog(expr, sizeof(expr), in_cie, &s) == -EINVAL);
		CHECK_EQ_U64(s.n, 1);
		CHECK(!s.known[0]);
	}
}

/*
 * Every opcode with operands, cut at every length: the program ends (0 or -EINVAL) and
 * never reports a state past the cut.  Products that overflow are errors, not wraps.
 */
static void test_cfi_every_truncation(void)
{
	static const uint8_t prog[] = {
		0x01, 0x10, 0,	  0,	0,		     /* set_loc 0x1010 (pcrel sdata4) */
		0x02, 1,    0x03, 1,	0,		     /* advance_loc1, advance_loc2 */
		0x04, 1,    0,	  0,	0,		     /* advance_loc4 */
		0x1d, 1,    0,	  0,	0,    0,    0, 0, 0, /* MIPS_advance_loc8 */
		0x05, 6,    2,	  0x11, 6,    0x7e,	     /* offset_extended(_sf) */
		0x2f, 6,    2,	  0x14, 6,    2, /* GNU_negative_offset_extended, val_offset */
		0x15, 6,    0x7e, 0x06, 6,	 /* val_offset_sf, restore_extended */
		0x07, 6,    0x08, 6,	0x09, 6,    3, /* undefined, same_value, register */
		0x10, 6,    2,	  0x76, 0,	       /* expression */
		0x16, 3,    1,	  0x96,		       /* val_expression of another register */
		0x0c, 0x87, 1,	  0x90, 0x01,	       /* def_cfa with two-byte ulebs */
		0x12, 7,    0x7e, 0x0d, 6,	       /* def_cfa_sf, def_cfa_register */
		0x0e, 16,   0x13, 0x7e,		       /* def_cfa_offset(_sf) */
		0x0f, 2,    0x77, 8,		       /* def_cfa_expression */
		0x2e, 0x80, 1,	  0x86, 0x80, 0x01,    /* GNU_args_size, offset with a long uleb */
	};
	/* sleb -2^62 * -8 and uleb 2^63: both overflow an int64 offset */
	static const uint8_t ovf1[] = {0x13, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40};
	static const uint8_t ovf2[] = {0x0e, 0x80, 0x80, 0x80, 0x80, 0x80,
				       0x80, 0x80, 0x80, 0x80, 0x01};
	/* advance_loc8 past the end of the address space */
	static const uint8_t ovf3[] = {0x1d, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	struct seen s;

	for (size_t len = 0; len <= sizeof(prog); len++) {
		for (int in_cie = 0; in_cie < 2; in_cie++) {
			int err = run_prog(prog, len, in_cie, &s);

			CHECK(err == 0 || err == -EINVAL);
			CHECK(s.n > 0 && s.n <= 16);
			if (unit_cur_failed) {
				printf("#   cut at %zu, %s\n", len, in_cie ? "CIE" : "FDE");
				return;
			}
		}
	}
	CHECK(run_prog(prog, sizeof(prog), false, &s) == 0);
	CHECK(run_prog(ovf1, sizeof(ovf1), false, &s) == -EINVAL);
	CHECK(run_prog(ovf2, sizeof(ovf2), false, &s) == -EINVAL);
	CHECK(run_prog(ovf3, sizeof(ovf3), false, &s) == -EINVAL);
}

/* .eh_frame CIE "zR" with absolute 8-byte FDE addresses (udata8), CFA rsp+8, RA at c-8. */
static size_t eh_cie_udata8(struct buf *b)
{
	static const uint8_t insns[] = {0x0c, 7, 8, 0x90, 1};
	size_t start = b->n;

	put_u32(b, 0);
	put_u32(b, 0);
	put_u8(b, 1);
	put(b, "zR", 3);
	put_u8(b, 1);
	put_u8(b, 0x78);
	put_u8(b, 16);
	put_u8(b, 1);
	put_u8(b, 0x04); /* DW_EH_PE_udata8 */
	put(b, insns, sizeof(insns));
	end_entry(b, start);
	return start;
}

static void eh_fde_udata8(struct buf *b, size_t cie, uint64_t start, uint64_t len,
			  const uint8_t *insns, size_t n)
{
	size_t at = b->n;

	put_u32(b, 0);
	put_u32(b, b->n - cie);
	put_u64(b, start);
	put_u64(b, len);
	put_u8(b, 0);
	put(b, insns, n);
	end_entry(b, at);
}

/*
 * An FDE with a bogus huge pc_range before a good one: the good one is still found.
 * Too long for any function, or reaching outside the executable segment: dropped.
 * Inside the segment: it ends where the next FDE starts.  2^40 bytes used to make the
 * whole table E2BIG, and 2 GiB to hide the good FDE behind the bogus one's CIE rule.
 */
static void test_cfi_huge_fde_range(void)
{
	static const uint8_t good[] = {0x41, 0x0e, 16}; /* +1: cfa rsp+16 */
	static const struct cfi_span text = {0x1000, 0x10000};
	const uint64_t va = 0x400;
	const struct {
		uint64_t range;
		bool wide, spans;
	} cases[] = {
		{0x7fffff00, false, false},  /* past CFI_FDE_MAX_RANGE */
		{1ull << 40, true, false},   /* same, 64-bit */
		{0x100000, false, true},     /* past the executable segment */
		{~0ull - 0x800, true, true}, /* wraps the address space */
		{0x8000, false, true},	     /* inside it: cut at the good FDE */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct buf b = {0};
		struct cfi_entries e = {0};
		struct cfi_table *t = calloc(1, sizeof(*t));
		bool kept = cases[i].range == 0x8000;
		size_t cie = eh_cie(&b, ""), cie8 = eh_cie_udata8(&b);
		struct cfi_section sec = {b.b, 0, va, 0, 0, true};
		const struct unwind_row *r;
		int failed_before = unit_cur_failed;

		unit_cur_failed = 0;
		if (cases[i].wide)
			eh_fde_udata8(&b, cie8, 0x1000, cases[i].range, good, 0);
		else
			eh_fde(&b, va, cie, 0x1000, (uint32_t)cases[i].range, good, 0);
		eh_fde(&b, va, cie, 0x2000, 0x10, good, sizeof(good));
		sec.size = b.n;
		if (cases[i].spans) {
			e.exec = &text;
			e.n_exec = 1;
		}
		CHECK(t && cfi_parse_section(&sec, &e) == 0);
		CHECK_EQ_U64(e.bad, kept ? 0 : 1);
		CHECK(t && cfi_build_rows(t, &e) == 0);
		cfi_entries_free(&e);
		if (!t || !t->n) {
			printf("#   case %zu: no rows\n", i);
			unit_cur_failed = 1;
			cfi_table_free(t);
			continue;
		}
		r = cfi_table_lookup(t, 0x1800);
		CHECK(kept ? r && UNWIND_ROW_CFA(r) == RSP : r == NULL);
		r = cfi_table_lookup(t, 0x2001);
		CHECK(r && UNWIND_ROW_CFA(r) == RSP && r->cfa_off == 16);
		r = cfi_table_lookup(t, 0x3000);
		CHECK(r && UNWIND_ROW_CFA(r) == NONE);
		if (unit_cur_failed)
			printf("#   case %zu (range %#llx)\n", i,
			       (unsigned long long)cases[i].range);
		unit_cur_failed |= failed_before;
		cfi_table_free(t);
	}
}

/*
 * def_cfa_expression DW_OP_breg7 with a 9-byte SLEB128 (bit 63 and the sign): the
 * pattern matcher used to shift a signed 1 into bit 63 (undefined); now the row is
 * unsupported (the offset does not fit a row), with no undefined arithmetic on the way.
 */
static void test_cfi_long_breg_offset(void)
{
	static const uint8_t prog[] = {0x0f, 10,   0x77, 0x80, 0x80, 0x80, 0x80, 0x80,
				       0x80, 0x80, 0x80, 0x40, 0x41, 0x0c, 7,	 16};
	struct buf b = {0};
	size_t cie = eh_cie(&b, "");
	struct cfi_table *t;
	const struct unwind_row *r;

	eh_fde(&b, 0, cie, 0x100, 0x10, prog, sizeof(prog));
	t = table_of(&(struct cfi_section){b.b, b.n, 0, 0, 0, true}, 1);
	r = cfi_table_lookup(t, 0x100);
	CHECK(r && UNWIND_ROW_CFA(r) == UNSUP);
	r = cfi_table_lookup(t, 0x101);
	CHECK(r && UNWIND_ROW_CFA(r) == RSP && r->cfa_off == 16);
	cfi_table_free(t);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--oracle"))
		return oracle_file(argv[2], 1) ? 1 : 0;
	RUN(test_eh_frame_program);
	RUN(test_plt_gap_outermost);
	RUN(test_ra_in_rdi);
	RUN(test_init_rows);
	RUN(test_debug_frame);
	RUN(test_bad_input);
	RUN(test_not_elf);
	RUN(test_cache);
	RUN(test_oracle_system_libs);
	RUN(test_cfi_truncated_operand_ends_program);
	RUN(test_cfi_every_truncation);
	RUN(test_cfi_huge_fde_range);
	RUN(test_cfi_long_breg_offset);
	return unit_done();
}
