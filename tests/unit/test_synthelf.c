// SPDX-License-Identifier: Apache-2.0
/*
 * Synthetic ELF files read back by our own loaders: symbols by symtab_load_elf, lines
 * by dwl_lookup (libdw), the build-id by bid_read_path; bad descriptions and unwritable
 * paths leave no file behind.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "symbolize/buildid.h"
#include "symbolize/dwarf_lines.h"
#include "symbolize/symtab.h"
#include "symbolize/synthelf.h"
#include "unit.h"

#define TEXT	     0x10000ULL
#define FAR	     (TEXT + (1ULL << 30))
#define NR_BIG_FNS   100000
#define NR_BIG_LINES 1000000

static char dir[64];

static const uint8_t bid[20] = {0x5e, 0x1f, 0xe1, 0xf0, 1,  2,	3,  4,	5,  6,
				7,    8,    9,	  10,	11, 12, 13, 14, 15, 16};

static const char *const files[] = {"a.py", "/srv/app/b.py"};

static const struct synth_fn fns[] = {
	{FAR, 0x80, "inner (b.py)"},
	{TEXT + 0x1000, 0x400, "outer (a.py)"},
	{TEXT, 0x40, "<module> (a.py)"},
};

/*
 * Out of order on purpose; deltas that need the long opcodes (a line going back, a
 * jump past 255 bytes), a file switch inside a function, and a duplicate address.
 */
static const struct synth_line lines[] = {
	{TEXT + 0x1000, 0, 10},	 {TEXT + 0x1010, 0, 11},  {TEXT + 0x1020, 1, 3},
	{TEXT + 0x1300, 0, 900}, {TEXT + 0x1310, 0, 12},  {FAR, 1, 40},
	{FAR + 0x10, 1, 41},	 {FAR + 0x20, 1, 39},	  {TEXT, 0, 1},
	{TEXT + 0x8, 0, 2},	 {TEXT + 0x1010, 1, 777}, /* duplicate: {0x1010, a.py, 11} wins */
};

static double ms_since(const struct timespec *a)
{
	struct timespec b;

	clock_gettime(CLOCK_MONOTONIC, &b);
	return (double)(b.tv_sec - a->tv_sec) * 1e3 + (double)(b.tv_nsec - a->tv_nsec) / 1e6;
}

static struct synth_elf small_elf(void)
{
	return (struct synth_elf){
		.bid = bid,
		.bid_size = sizeof(bid),
		.text_start = TEXT,
		.text_size = 1ULL << 31,
		.fns = fns,
		.nr_fns = 3,
		.files = files,
		.nr_files = 2,
		.lines = lines,
		.nr_lines = sizeof(lines) / sizeof(lines[0]),
	};
}

/* Entries of dir other than "." and "..". */
static int dir_entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static const char *name_at(const struct symtab *st, uint64_t off)
{
	const struct sym *s;
	uint64_t va;

	if (symtab_offset_to_vaddr(st, off, &va) || va != off)
		return NULL;
	s = symtab_lookup(st, va);
	return s ? s->name : NULL;
}

static void test_symbols_name_every_function(void)
{
	struct synth_elf se = small_elf();
	struct symtab *st;
	char path[128];

	snprintf(path, sizeof(path), "%s/sym.elf", dir);
	CHECK_EQ_U64(synth_elf_write(path, &se), 0);
	st = symtab_load_elf(path);
	CHECK(st != NULL);
	if (!st)
		return;
	CHECK_EQ_U64(symtab_size(st), 3);
	CHECK_STR(name_at(st, TEXT), "<module> (a.py)");
	CHECK_STR(name_at(st, TEXT + 0x3f), "<module> (a.py)");
	CHECK_STR(name_at(st, TEXT + 0x1000), "outer (a.py)");
	CHECK_STR(name_at(st, TEXT + 0x1234), "outer (a.py)");
	CHECK_STR(name_at(st, FAR), "inner (b.py)");
	CHECK_STR(name_at(st, FAR + 0x7f), "inner (b.py)");
	CHECK(name_at(st, TEXT + 0x40) == NULL);
	CHECK(name_at(st, FAR + 0x80) == NULL);
	symtab_free(st);
}

static void check_line(struct dso_dwarf *dw, uint64_t va, const char *file, int line)
{
	const struct dwl_result *r = dwl_lookup(dw, va);

	CHECK(r != NULL && r->n == 1);
	if (!r || !r->n) {
		printf("#   no line for %#llx\n", (unsigned long long)va);
		return;
	}
	CHECK_STR(r->f[r->n - 1].file, file);
	CHECK_EQ_U64(r->f[r->n - 1].line, line);
}

static void test_lines_give_file_and_line(void)
{
	struct synth_elf se = small_elf();
	struct dso_dwarf *dw;
	char path[128];
	size_t i;

	snprintf(path, sizeof(path), "%s/lines.elf", dir);
	CHECK_EQ_U64(synth_elf_write(path, &se), 0);
	dw = dwl_open(path, NULL, false);
	CHECK(dw != NULL);
	if (!dw)
		return;
	for (i = 0; i + 1 < se.nr_lines; i++) {
		const struct synth_line *l = &lines[i];

		check_line(dw, l->addr, files[l->file], (int)l->line);
		check_line(dw, l->addr + 1, files[l->file], (int)l->line);
	}
	check_line(dw, TEXT + 0x3f, "a.py", 2);		 /* last byte of <module> */
	check_line(dw, FAR + 0x7f, "/srv/app/b.py", 39); /* last byte of inner */
	CHECK(dwl_lookup(dw, TEXT + 0x40) == NULL);	 /* between functions */
	CHECK(dwl_lookup(dw, FAR + 0x80) == NULL);
	dso_dwarf_free(dw);
}

static void test_buildid_reads_back(void)
{
	struct synth_elf se = small_elf();
	uint8_t out[BID_MAX];
	char path[128];

	snprintf(path, sizeof(path), "%s/bid.elf", dir);
	CHECK_EQ_U64(synth_elf_write(path, &se), 0);
	CHECK_EQ_U64(bid_read_path(path, out), sizeof(bid));
	CHECK(!memcmp(out, bid, sizeof(bid)));
}

static void test_errors_leave_no_file(void)
{
	struct synth_fn overlap[] = {{TEXT, 0x20, "a"}, {TEXT + 0x10, 0x20, "b"}};
	struct synth_line stray[] = {{TEXT + 0x100, 0, 1}};
	struct synth_line bad_file[] = {{TEXT, 2, 1}};
	struct synth_fn outside[] = {{TEXT - 0x10, 0x20, "a"}};
	struct synth_elf se = small_elf();
	int before = dir_entries();
	char path[128], *long_name;
	struct stat sb;

	snprintf(path, sizeof(path), "%s/missing/x.elf", dir);
	CHECK_EQ_U64(synth_elf_write(path, &se), -ENOENT);
	snprintf(path, sizeof(path), "%s/missing", dir);
	CHECK(stat(path, &sb) && errno == ENOENT);

	snprintf(path, sizeof(path), "%s/bad.elf", dir);
	se.fns = overlap;
	se.nr_fns = 2;
	se.nr_lines = 0;
	CHECK_EQ_U64(synth_elf_write(path, &se), -EINVAL);
	se.fns = outside;
	se.nr_fns = 1;
	CHECK_EQ_U64(synth_elf_write(path, &se), -EINVAL);
	se.fns = fns;
	se.nr_fns = 3;
	se.lines = stray;
	se.nr_lines = 1;
	CHECK_EQ_U64(synth_elf_write(path, &se), -EINVAL);
	se.lines = bad_file;
	CHECK_EQ_U64(synth_elf_write(path, &se), -EINVAL);
	se = small_elf();
	se.text_start = TEXT + 1;
	CHECK_EQ_U64(synth_elf_write(path, &se), -EINVAL);
	se = small_elf();
	se.bid_size = 0;
	CHECK_EQ_U64(synth_elf_write(path, &se), -EINVAL);

	long_name = malloc(SYNTH_NAME_MAX + 2);
	CHECK(long_name != NULL);
	if (long_name) {
		struct synth_fn one = {TEXT, 0x10, long_name};

		memset(long_name, 'x', SYNTH_NAME_MAX + 1);
		long_name[SYNTH_NAME_MAX + 1] = '\0';
		se = small_elf();
		se.fns = &one;
		se.nr_fns = 1;
		se.nr_lines = 0;
		CHECK_EQ_U64(synth_elf_write(path, &se), -ENAMETOOLONG);
		long_name[SYNTH_NAME_MAX] = '\0'; /* the longest allowed */
		CHECK_EQ_U64(synth_elf_write(path, &se), 0);
		CHECK(unlink(path) == 0);
		free(long_name);
	}
	CHECK_EQ_U64(dir_entries(), before);
}

/* The size a Python process may reach, shuffled: written well under a second. */
static void test_large_writes_fast(void)
{
	struct synth_fn *fv = calloc(NR_BIG_FNS, sizeof(*fv));
	struct synth_line *lv = calloc(NR_BIG_LINES, sizeof(*lv));
	char(*names)[64] = calloc(NR_BIG_FNS, sizeof(*names));
	uint64_t x = 88172645463325252ULL;
	struct dso_dwarf *dw = NULL;
	struct symtab *st = NULL;
	struct synth_elf se;
	struct timespec t0;
	char path[128];
	double ms;
	size_t i;

	CHECK(fv && lv && names);
	if (!fv || !lv || !names)
		goto out;
	/* Function i: 0x400 bytes at TEXT + 0x1000 * i, ten rows 0x40 apart. */
	for (i = 0; i < NR_BIG_FNS; i++) {
		snprintf(names[i], sizeof(names[i]), "Class%zu.method%zu (/srv/app/mod%zu.py)", i,
			 i, i % 97);
		fv[i] = (struct synth_fn){TEXT + 0x1000 * i, 0x400, names[i]};
	}
	for (i = 0; i < NR_BIG_LINES; i++)
		lv[i] = (struct synth_line){TEXT + 0x1000 * (i / 10) + 0x40 * (i % 10),
					    (uint32_t)(i % 2), (uint32_t)(i % 5000 + 1)};
	for (i = NR_BIG_LINES - 1; i > 0; i--) {
		struct synth_line t = lv[i];
		size_t j;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		j = x % (i + 1);
		lv[i] = lv[j];
		lv[j] = t;
	}
	se = small_elf();
	se.text_size = 0x1000ULL * NR_BIG_FNS;
	se.fns = fv;
	se.nr_fns = NR_BIG_FNS;
	se.lines = lv;
	se.nr_lines = NR_BIG_LINES;
	snprintf(path, sizeof(path), "%s/big.elf", dir);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_EQ_U64(synth_elf_write(path, &se), 0);
	ms = ms_since(&t0);
	printf("# %d functions, %d rows written in %.0f ms\n", NR_BIG_FNS, NR_BIG_LINES, ms);
	CHECK(ms < 10000); /* ~100 ms expected, valgrind included; 10 s is pathological */

	st = symtab_load_elf(path);
	dw = dwl_open(path, NULL, false);
	CHECK(st && dw);
	if (!st || !dw)
		goto out;
	CHECK_EQ_U64(symtab_size(st), NR_BIG_FNS);
	for (i = 0; i < 1000; i++) {
		const struct synth_line *l = &lv[(i * 7919) % NR_BIG_LINES];
		const struct dwl_result *r = dwl_lookup(dw, l->addr + 1);
		const struct sym *s = symtab_lookup(st, l->addr);
		size_t fn = (l->addr - TEXT) / 0x1000;

		CHECK(s && !strcmp(s->name, names[fn]));
		CHECK(r && r->n == 1 && r->f[0].file && !strcmp(r->f[0].file, files[l->file]) &&
		      r->f[0].line == (int)l->line);
	}
out:
	dso_dwarf_free(dw);
	symtab_free(st);
	free(names);
	free(lv);
	free(fv);
}

int main(void)
{
	char cmd[128];

	snprintf(dir, sizeof(dir), "/tmp/pa-synthelf.XXXXXX");
	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp failed\n");
		return 1;
	}
	RUN(test_symbols_name_every_function);
	RUN(test_lines_give_file_and_line);
	RUN(test_buildid_reads_back);
	RUN(test_errors_leave_no_file);
	RUN(test_large_writes_fast);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		printf("# could not remove %s\n", dir);
	return unit_done();
}
