// SPDX-License-Identifier: Apache-2.0
/*
 * dwl_lookup against elfutils' eu-addr2line -i: the same inline chains, names and
 * file:line for every address of a -O2 program with nested inlines, and for addresses
 * spread over libc when its debug file is installed.
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "symbolize/buildid.h"
#include "symbolize/dwarf_lines.h"
#include "unit.h"
#include "base/util.h"

#define MAX_ADDRS 512
#define MAX_FR	  16

static const char prog_src[] = "static volatile int sink;\n"
			       "static inline __attribute__((always_inline)) int leaf(int x)\n"
			       "{\n"
			       "	sink += x;\n"
			       "	return x * 3;\n"
			       "}\n"
			       "static inline __attribute__((always_inline)) int mid(int x)\n"
			       "{\n"
			       "	int r = leaf(x) + 1;\n"
			       "	sink ^= r;\n"
			       "	return leaf(r);\n"
			       "}\n"
			       "static inline int top(int x)\n"
			       "{\n"
			       "	int s = 0;\n"
			       "	for (int i = 0; i < x; i++)\n"
			       "		s += mid(i) ^ leaf(s);\n"
			       "	return s;\n"
			       "}\n"
			       "int __attribute__((noinline)) outer(int n)\n"
			       "{\n"
			       "	int a = 0;\n"
			       "	for (int i = 0; i < n; i++) {\n"
			       "		a += mid(i);\n"
			       "		if (a & 1) {\n"
			       "			int b = top(a & 7);\n"
			       "			a ^= b;\n"
			       "		}\n"
			       "	}\n"
			       "	return a;\n"
			       "}\n"
			       "int __attribute__((noinline)) other(int n)\n"
			       "{\n"
			       "	return top(n) + leaf(n);\n"
			       "}\n"
			       "int main(int argc, char **argv)\n"
			       "{\n"
			       "	(void)argv;\n"
			       "	return (outer(argc) + other(argc)) & 1;\n"
			       "}\n";

/* eu-addr2line's answer for one address, innermost first. */
struct ref {
	uint64_t va;
	int n;
	struct {
		char name[256], file[512];
		int line;
	} f[MAX_FR];
};

static char dir[64];

/* .text's link-time range of path: 0 or -1. */
static int text_range(const char *path, uint64_t *lo, uint64_t *hi)
{
	int fd = open(path, O_RDONLY), ret = -1;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	Elf *e;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e && !elf_getshdrstrndx(e, &shstrndx)) {
		while ((scn = elf_nextscn(e, scn))) {
			const char *n;

			if (!gelf_getshdr(scn, &sh))
				continue;
			n = elf_strptr(e, shstrndx, sh.sh_name);
			if (n && !strcmp(n, ".text")) {
				*lo = sh.sh_addr;
				*hi = sh.sh_addr + sh.sh_size;
				ret = 0;
				break;
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return ret;
}

/* "file:line[:col]" into r's frame i. */
static void parse_pos(char *s, struct ref *r, int i)
{
	char *c = strrchr(s, ':'), *c2;

	r->f[i].line = 0;
	if (c && c > s) {
		*c = '\0';
		c2 = strrchr(s, ':');
		/* With a column, the line is the field before it. */
		if (c2 && strspn(c2 + 1, "0123456789") == strlen(c2 + 1)) {
			*c2 = '\0';
			r->f[i].line = atoi(c2 + 1);
		} else {
			r->f[i].line = atoi(c + 1);
		}
	}
	snprintf(r->f[i].file, sizeof(r->f[i].file), "%.511s", s);
}

/*
 * eu-addr2line -i sometimes stops after a first "leaf inlined at p.c:3:71 in outer"
 * line without the caller's own name and position lines; that line says them, so an
 * answer missing them gets them from it.
 */
static void finish_ref(struct ref *r, const char *pend_name, char *pend_pos)
{
	if (!r || !pend_name[0] || r->n >= MAX_FR)
		return;
	snprintf(r->f[r->n].name, sizeof(r->f[0].name), "%.255s", pend_name);
	parse_pos(pend_pos, r, r->n++);
}

/* Run eu-addr2line -a -f -i on the addresses; refs get its answers.  0 or -1. */
static int addr2line(const char *bin, const uint64_t *va, size_t n, struct ref *refs)
{
	size_t len = 64 + strlen(bin) + n * 20, i, k = 0;
	char *cmd = malloc(len), line[1024], pend_name[256] = "", pend_pos[512] = "";
	int off, want_pos = 0;
	FILE *p;

	if (!cmd)
		return -1;
	off = snprintf(cmd, len, "eu-addr2line -a -f -i -e '%s'", bin);
	for (i = 0; i < n; i++)
		off += snprintf(cmd + off, len - off, " %#llx", (unsigned long long)va[i]);
	p = popen(cmd, "r");
	free(cmd);
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		struct ref *r = k ? &refs[k - 1] : NULL;
		char *s, *in;

		line[strcspn(line, "\n")] = '\0';
		if (!want_pos && !strncmp(line, "0x", 2)) {
			finish_ref(r, pend_name, pend_pos);
			pend_name[0] = '\0';
			if (k == n)
				break;
			refs[k].va = strtoull(line, NULL, 16);
			refs[k++].n = 0;
		} else if (r && !want_pos && r->n < MAX_FR) {
			pend_name[0] = '\0';
			s = strstr(line, " inlined at ");
			if (s) {
				*s = '\0';
				in = strstr(s + 12, " in ");
				if (in) {
					*in = '\0';
					snprintf(pend_name, sizeof(pend_name), "%.255s", in + 4);
					snprintf(pend_pos, sizeof(pend_pos), "%.511s", s + 12);
				}
			}
			snprintf(r->f[r->n].name, sizeof(r->f[0].name), "%.255s", line);
			want_pos = 1;
		} else if (r && want_pos) {
			parse_pos(line, r, r->n++);
			want_pos = 0;
		}
	}
	if (k)
		finish_ref(&refs[k - 1], pend_name, pend_pos);
	return pclose(p) == 0 && k == n ? 0 : -1;
}

/*
 * alias_ok: eu-addr2line names functions after ELF symbols where one covers them:
 * glibc's internal __GI_ aliases, and for the real function any alias (memmem for
 * __memmem).  Reports take the real function's name from the symbol table anyway.
 */
static bool same_name(const char *dwl, const char *eu, bool alias_ok, bool outermost)
{
	if (!strcmp(dwl, eu))
		return true;
	if (!alias_ok)
		return false;
	return outermost || (!strncmp(eu, "__GI_", 5) && !strcmp(eu + 5, dwl));
}

/* eu-addr2line puts DW_AT_comp_dir before a relative name ("./csu/" + "./csu/x.c"). */
static bool same_file(const char *dwl, const char *eu)
{
	size_t a, b;

	if (!dwl)
		return false;
	if (!strcmp(dwl, eu))
		return true;
	a = strlen(dwl);
	b = strlen(eu);
	return dwl[0] != '/' && b > a && eu[b - a - 1] == '/' && !strcmp(eu + b - a, dwl);
}

/*
 * Compare dwl_lookup with eu-addr2line on n addresses; where DWARF names no function
 * (assembly), eu-addr2line falls back to the symbol table, so only the line is compared.
 * alias_ok: accept eu-addr2line's symbol aliases (same_name).
 * Returns how many addresses had inline chains; bumps *bad per mismatch.
 */
static int compare(const char *bin, const char *debug, const uint64_t *va, size_t n, bool alias_ok,
		   int *bad)
{
	struct ref *refs = calloc(n, sizeof(*refs));
	struct dso_dwarf *d = dwl_open(bin, debug, true);
	int inl = 0;
	size_t i;

	CHECK(refs && d);
	if (!refs || !d || addr2line(bin, va, n, refs)) {
		CHECK(!"eu-addr2line failed");
		(*bad)++;
		goto out;
	}
	for (i = 0; i < n; i++) {
		const struct dwl_result *r = dwl_lookup(d, va[i]);
		const struct ref *e = &refs[i];
		bool same = true;
		int j;

		CHECK_EQ_U64(e->va, va[i]);
		if (!r) {
			/* No DWARF here: eu-addr2line knows no line either. */
			same = e->n == 1 && e->f[0].line == 0;
		} else if (!r->f[r->n - 1].name) {
			same = r->n == 1 && e->n >= 1 && r->f[0].line == e->f[0].line;
		} else {
			same = (int)r->n == e->n;
			for (j = 0; same && j < e->n; j++)
				same = same_name(r->f[j].name, e->f[j].name, alias_ok,
						 j == e->n - 1) &&
				       same_file(r->f[j].file, e->f[j].file) &&
				       r->f[j].line == e->f[j].line;
		}
		if (r && r->n > 1)
			inl++;
		if (!same && (*bad)++ < 5) {
			printf("#   %s %#llx: dwl %u frames, eu-addr2line %d:", bin,
			       (unsigned long long)va[i], r ? r->n : 0, e->n);
			for (j = 0; j < e->n; j++)
				printf(" %s@%s:%d", e->f[j].name, e->f[j].file, e->f[j].line);
			printf("; dwl:");
			for (j = 0; r && j < (int)r->n; j++)
				printf(" %s@%s:%d", r->f[j].name ? r->f[j].name : "?",
				       r->f[j].file ? r->f[j].file : "?", r->f[j].line);
			printf("\n");
		}
	}
out:
	dso_dwarf_free(d);
	free(refs);
	return inl;
}

static void test_inline_chains_match_addr2line(void)
{
	char path[128], cmd[512];
	uint64_t lo, hi, va[MAX_ADDRS], a;
	size_t n = 0;
	int bad = 0, inl;
	FILE *f;

	snprintf(path, sizeof(path), "%s/p.c", dir);
	f = fopen(path, "w");
	CHECK(f && fputs(prog_src, f) >= 0);
	if (f)
		fclose(f);
	snprintf(cmd, sizeof(cmd), "gcc -O2 -g -o %s/prog %s/p.c", dir, dir);
	CHECK(system(cmd) == 0);
	snprintf(path, sizeof(path), "%s/prog", dir);
	if (text_range(path, &lo, &hi)) {
		CHECK(!"no .text");
		return;
	}
	/* Every byte of .text (up to MAX_ADDRS), instruction boundaries or not. */
	for (a = lo; a < hi && n < MAX_ADDRS; a++)
		va[n++] = a;
	inl = compare(path, NULL, va, n, false, &bad);
	printf("# prog: %zu addresses, %d in inline chains\n", n, inl);
	CHECK(inl > 20); /* the fixture really has inlines */
	CHECK(bad == 0);
}

static void test_libc_matches_addr2line(void)
{
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	char debug[256], hex[2 * BID_MAX + 1];
	uint8_t bid[BID_MAX];
	uint64_t lo, hi, va[MAX_ADDRS];
	struct timespec t0, t1;
	struct dso_dwarf *d;
	int nb, bad = 0, inl;
	size_t i, n = 400;

	nb = bid_read_path(libc, bid);
	if (nb <= 1 || text_range(libc, &lo, &hi)) {
		CHECK(!"libc has a build-id and a .text");
		return;
	}
	pa_hex(hex, bid, (size_t)nb);
	snprintf(debug, sizeof(debug), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
	if (access(debug, R_OK))
		SKIP("libc6-dbg not installed (no %s)", debug);
	/* Spread over .text at an odd stride, so most land in different functions and CUs. */
	for (i = 0; i < n; i++)
		va[i] = lo + (hi - lo) / n * i + (i * 7) % 61;
	inl = compare(libc, debug, va, n, true, &bad);
	printf("# libc: %zu addresses, %d in inline chains\n", n, inl);
	CHECK(inl > 10);
	CHECK(bad == 0);

	/* First lookups of each address, timed: one DIE-tree walk per CU, not per address. */
	d = dwl_open(libc, debug, true);
	CHECK(d != NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; d && i < 20000; i++)
		dwl_lookup(d, lo + (hi - lo) / 20000 * i + i % 13);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("# libc: 20000 first lookups in %.0f ms\n",
	       (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
	dso_dwarf_free(d);
}

int main(void)
{
	char cmd[128];

	if (system("command -v eu-addr2line >/dev/null && command -v gcc >/dev/null")) {
		printf("Bail out! eu-addr2line or gcc not installed (make deps: elfutils, gcc)\n");
		return 1;
	}
	snprintf(dir, sizeof(dir), "/tmp/pa-dwl.XXXXXX");
	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp failed\n");
		return 1;
	}
	RUN(test_inline_chains_match_addr2line);
	RUN(test_libc_matches_addr2line);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		printf("# could not remove %s\n", dir);
	return unit_done();
}
