// SPDX-License-Identifier: Apache-2.0
/* Symbol tables against this test binary, libc and small fixture files. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "symbolize/buildid.h"
#include "base/procfs.h"
#include "symbolize/symtab_priv.h"
#include "unit.h"

__attribute__((noinline)) int sym_test_target(int x)
{
	volatile int acc = 0;
	int i;

	for (i = 0; i < x; i++)
		acc += i * 3;
	return acc;
}

static double ms_since(const struct timespec *a)
{
	struct timespec b;

	clock_gettime(CLOCK_MONOTONIC, &b);
	return (double)(b.tv_sec - a->tv_sec) * 1e3 + (double)(b.tv_nsec - a->tv_nsec) / 1e6;
}

/* The executable mapping of this process that holds addr, as a file offset. */
static int self_offset(uint64_t addr, char *path, size_t plen, uint64_t *off)
{
	struct proc_map *maps;
	int n = proc_read_maps(getpid(), true, &maps), i, ret = -ENOENT;

	for (i = 0; i < n; i++) {
		if (addr >= maps[i].start && addr < maps[i].end) {
			*off = addr - maps[i].start + maps[i].pgoff;
			snprintf(path, plen, "%s", maps[i].path);
			ret = 0;
		}
	}
	proc_maps_free(maps, n > 0 ? (size_t)n : 0);
	return ret;
}

static const struct sym *lookup_runtime(const struct symtab *st, uint64_t off)
{
	uint64_t va;

	if (symtab_offset_to_vaddr(st, off, &va))
		return NULL;
	return symtab_lookup(st, va);
}

static void test_self_function_resolves(void)
{
	uint64_t addr = (uint64_t)(uintptr_t)&sym_test_target + 5, off;
	const struct sym *s;
	struct symtab *st;
	char path[4096];

	CHECK(self_offset(addr, path, sizeof(path), &off) == 0);
	st = symtab_load_elf("/proc/self/exe");
	CHECK(st != NULL);
	if (!st)
		return;
	CHECK(symtab_size(st) > 10);
	CHECK(symtab_full(st)); /* built with its .symtab */
	s = lookup_runtime(st, off);
	CHECK(s != NULL);
	if (s) {
		CHECK_STR(s->name, "sym_test_target");
		CHECK(s->size > 5);
		/* Just past a sized symbol is not that symbol. */
		const struct sym *after = symtab_lookup(st, s->start + s->size);

		CHECK(!after || strcmp(after->name, "sym_test_target"));
	}
	symtab_free(st);
}

static void test_libc_function_resolves(void)
{
	void *fn = dlsym(RTLD_DEFAULT, "getpid");
	const struct sym *s;
	struct symtab *st;
	char path[4096];
	uint64_t off;

	CHECK(fn != NULL);
	CHECK(self_offset((uint64_t)(uintptr_t)fn + 2, path, sizeof(path), &off) == 0);
	CHECK(strstr(path, "libc") != NULL);
	st = symtab_load_elf(path);
	CHECK(st != NULL);
	if (!st)
		return;
	s = lookup_runtime(st, off);
	CHECK(s != NULL);
	if (s)
		CHECK(strstr(s->name, "getpid") != NULL);
	CHECK(!symtab_full(st)); /* Debian strips it to .dynsym */
	symtab_free(st);
}

static uint32_t le32(const unsigned char *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/* puts@plt exists, and at run time its stub jumps through the GOT slot holding puts. */
static void test_plt_entry_named(void)
{
	const struct sym *self = NULL, *plt = NULL;
	struct symtab *st;
	uint64_t off;
	char path[4096];
	size_t i;

	puts("# calling puts so its PLT slot is bound");
	st = symtab_load_elf("/proc/self/exe");
	CHECK(st != NULL);
	if (!st)
		return;
	for (i = 0; i < st->nr; i++)
		if (!strcmp(st->syms[i].s.name, "puts@plt"))
			plt = &st->syms[i].s;
	CHECK(plt != NULL);
	if (plt) {
		CHECK(symtab_lookup(st, plt->start + 3) == plt);
		CHECK(plt->size == 16 || plt->size == 8);
	}
	CHECK(self_offset((uint64_t)(uintptr_t)&sym_test_target, path, sizeof(path), &off) == 0);
	self = lookup_runtime(st, off);
#ifdef __x86_64__
	if (plt && self) {
		const unsigned char *p =
			(const unsigned char *)(uintptr_t)(plt->start +
							   ((uintptr_t)&sym_test_target -
							    self->start));
		if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa)
			p += 4;
		if (p[0] == 0xf2)
			p++;
		CHECK(p[0] == 0xff && p[1] == 0x25);
		void **slot = (void **)(uintptr_t)(p + 6 + (int32_t)le32(p + 2));

		CHECK(*slot == dlsym(RTLD_DEFAULT, "puts"));
	}
#endif
	symtab_free(st);
}

static const char *write_fixture(const char *name, const char *text)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/pa-test-%d-%s", (int)getpid(), name);
	f = fopen(path, "w");
	if (!f)
		return NULL;
	fputs(text, f);
	fclose(f);
	return path;
}

static void test_kallsyms_fixture(void)
{
	const char *path = write_fixture("kallsyms", "ffffffff81000000 T _text\n"
						     "ffffffff81000000 T _stext\n"
						     "ffffffff81000100 T do_work\n"
						     "ffffffff81000180 t helper\n"
						     "ffffffff81000200 D some_data\n"
						     "ffffffff81000300 W weak_fn\n"
						     "ffffffffc0001000 t mod_fn\t[mymod]\n"
						     "ffffffffc0001080 T mod_fn2\t[mymod]\n");
	const struct sym *s;
	struct symtab *st;
	bool restricted = true;

	CHECK(path != NULL);
	st = symtab_load_kallsyms(path, &restricted);
	unlink(path);
	CHECK(st != NULL);
	CHECK(!restricted);
	if (!st)
		return;
	CHECK_EQ_U64(symtab_size(st), 6); /* one of the _text aliases, no data symbol */
	s = symtab_lookup(st, 0xffffffff81000105);
	CHECK(s && !strcmp(s->name, "do_work"));
	/* No size: helper extends to the next text symbol (data is not one). */
	s = symtab_lookup(st, 0xffffffff810002ff);
	CHECK(s && !strcmp(s->name, "helper"));
	CHECK(s && !symtab_sym_module(st, s));
	s = symtab_lookup(st, 0xffffffffc0001010);
	CHECK(s && !strcmp(s->name, "mod_fn"));
	CHECK_STR(symtab_sym_module(st, s), "mymod");
	s = symtab_lookup(st, 0xffffffffc0001090);
	CHECK_STR(s ? symtab_sym_module(st, s) : NULL, "mymod");
	CHECK(symtab_lookup(st, 0xffffffff80000000) == NULL);
	CHECK_EQ_U64(st->ref_text, 0xffffffff81000000);
	symtab_free(st);
}

/* Sorted by address but for a few lines, as kallsyms comes: the table is still in
 * address order and each alias group keeps its best name. */
static void test_kallsyms_nearly_sorted(void)
{
	const char *path = write_fixture("kallsyms1", "ffffffff81000000 T _text\n"
						      "ffffffff81000100 t __weak_alias\n"
						      "ffffffff81000100 W alias_w\n"
						      "ffffffff81000100 T alias_best\n"
						      "ffffffff81000400 T late\n"
						      "ffffffff81000200 T early\n"
						      "ffffffff81000300 T middle\n");
	const struct sym *s;
	struct symtab *st;
	bool restricted;

	CHECK(path != NULL);
	st = symtab_load_kallsyms(path, &restricted);
	unlink(path);
	CHECK(st != NULL);
	if (!st)
		return;
	CHECK_EQ_U64(symtab_size(st), 5);
	s = symtab_lookup(st, 0xffffffff81000180);
	CHECK_STR(s ? s->name : NULL, "alias_best");
	s = symtab_lookup(st, 0xffffffff81000250);
	CHECK_STR(s ? s->name : NULL, "early");
	s = symtab_lookup(st, 0xffffffff81000350);
	CHECK_STR(s ? s->name : NULL, "middle");
	s = symtab_lookup(st, 0xffffffff81000450);
	CHECK_STR(s ? s->name : NULL, "late");
	CHECK(!symtab_full(st));
	symtab_free(st);
}

static void test_kallsyms_restricted(void)
{
	const char *path = write_fixture("kallsyms0", "0000000000000000 T _text\n"
						      "0000000000000000 T do_work\n"
						      "0000000000000000 t helper\t[mymod]\n");
	bool restricted = false;
	struct symtab *st;

	CHECK(path != NULL);
	errno = 0;
	st = symtab_load_kallsyms(path, &restricted);
	unlink(path);
	CHECK(st == NULL);
	CHECK(restricted);
	CHECK(errno == EPERM);
	CHECK(symtab_load_kallsyms("/nonexistent/kallsyms", &restricted) == NULL);
	CHECK(errno == ENOENT && !restricted);
}

static void test_perfmap_sizes_and_aliases(void)
{
	const char *path = write_fixture("perfmap", "1000 10 alpha\n"
						    "1020 10 beta with spaces\n"
						    "1020 10 __beta\n"
						    "garbage line\n");
	struct symtab *st;
	const struct sym *s;

	CHECK(path != NULL);
	st = symtab_load_perfmap(path);
	unlink(path);
	CHECK(st != NULL);
	if (!st)
		return;
	CHECK_EQ_U64(symtab_size(st), 2);
	s = symtab_lookup(st, 0x100f);
	CHECK(s && !strcmp(s->name, "alpha"));
	CHECK(symtab_lookup(st, 0x1010) == NULL); /* the gap after a sized symbol */
	s = symtab_lookup(st, 0x1025);
	CHECK(s && !strcmp(s->name, "beta with spaces")); /* fewer leading underscores */
	CHECK(symtab_lookup(st, 0x1030) == NULL);
	CHECK(symtab_lookup(st, 0xfff) == NULL);
	symtab_free(st);
}

static void test_not_elf(void)
{
	const char *path = write_fixture("notelf", "just text\n");

	errno = 0;
	CHECK(symtab_load_elf(path) == NULL);
	CHECK(errno == ENOEXEC);
	unlink(path);
	CHECK(symtab_load_elf("/nonexistent/x") == NULL);
	CHECK(errno == ENOENT);
}

/* A binary with no symbol at all (stripped, nothing dynamic) loads as an empty table. */
static void test_no_symbols(void)
{
	char path[] = "/tmp/pa-nosym-XXXXXX", cmd[256];
	struct symtab *st;
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	close(fd);
	snprintf(cmd, sizeof(cmd),
		 "printf 'void _start(void){for(;;);}' | cc -x c -nostdlib -static -s -o %s -",
		 path);
	CHECK(system(cmd) == 0);
	errno = 0;
	st = symtab_load_elf(path);
	CHECK(st != NULL);
	if (!st)
		printf("#   symtab_load_elf: %s\n", strerror(errno));
	CHECK(st && symtab_size(st) == 0);
	symtab_free(st);
	unlink(path);
}

static void test_build_ids(void)
{
	uint8_t a[BID_MAX], b[BID_MAX];
	char hex[2 * BID_MAX + 1];
	int n = bid_read_path("/proc/self/exe", a);

	CHECK(n == 20); /* gcc on Debian links with --build-id=sha1 */
	CHECK(bid_read_path("/nonexistent", b) == -ENOENT);
	if (n > 0) {
		bid_to_hex(hex, a, (size_t)n);
		CHECK_EQ_U64(strlen(hex), 2 * (size_t)n);
		printf("# self build-id %s\n", hex);
	}
	n = bid_read_kernel(b);
	if (access("/sys/kernel/notes", R_OK) == 0)
		CHECK(n > 0);
}

static void test_libc_speed(void)
{
	void *fn = dlsym(RTLD_DEFAULT, "getpid");
	struct timespec t0;
	struct symtab *st;
	char path[4096];
	uint64_t off, lo, hi, x = 88172645463325252ULL;
	size_t i, hits = 0;
	double load_ms, look_ms;

	CHECK(self_offset((uint64_t)(uintptr_t)fn, path, sizeof(path), &off) == 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 20; i++)
		symtab_free(symtab_load_elf(path));
	load_ms = ms_since(&t0) / 20;
	st = symtab_load_elf(path);
	CHECK(st != NULL);
	if (!st || !st->nr)
		return;
	lo = st->syms[0].s.start;
	hi = st->syms[st->nr - 1].end;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 1000000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		hits += symtab_lookup(st, lo + x % (hi - lo)) != NULL;
	}
	look_ms = ms_since(&t0);
	printf("# %s: %zu symbols, load %.2f ms, 1M lookups %.1f ms (%zu hits)\n", path,
	       symtab_size(st), load_ms, look_ms, hits);
	CHECK(load_ms < 50); /* a few ms expected; 50 flags something pathological */
	CHECK(look_ms < 1000);
	CHECK(hits > 0);
	symtab_free(st);
}

int main(void)
{
	RUN(test_self_function_resolves);
	RUN(test_libc_function_resolves);
	RUN(test_plt_entry_named);
	RUN(test_kallsyms_fixture);
	RUN(test_kallsyms_nearly_sorted);
	RUN(test_kallsyms_restricted);
	RUN(test_perfmap_sizes_and_aliases);
	RUN(test_not_elf);
	RUN(test_no_symbols);
	RUN(test_build_ids);
	RUN(test_libc_speed);
	return unit_done();
}
