// SPDX-License-Identifier: Apache-2.0
/*
 * gosym-cmp: a Go binary's .gopclntab against its DWARF, at every address that starts
 * a row of its DWARF line table (each statement's first instruction, on every line of
 * every inlined call).  Both go through the symbolizer as pa-report uses it: the
 * binary with DWARF answers from DWARF, a copy without (-s -w, or -w) from .gopclntab.
 *
 *   gosym-cmp BIN [STRIPPED]
 *
 * BIN must have DWARF; STRIPPED (default BIN itself, read through its .gopclntab
 * alone) is the same program built without it.  Prints, for the addresses inside Go
 * functions: how many, names (the whole inline chain) and lines (every frame's
 * file:line) that agree, and the cold time of each side; the first disagreements on
 * stderr.  Exit 0, or 1 on errors.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "symbolize/dwarf_lines.h"
#include "symbolize/gopclntab.h"

#define SHOW_MAX 10

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Every row address of path's DWARF line tables, sorted and unique, into *out. */
static size_t line_addrs(const char *path, uint64_t **out)
{
	size_t n = 0, cap = 0, hsize, i, j;
	Dwarf_Off off = 0, next;
	uint64_t *v = NULL;
	Dwarf *dw;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	dw = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;
	if (!dw) {
		fprintf(stderr, "gosym-cmp: %s: no DWARF\n", path);
		exit(1);
	}
	while (!dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL)) {
		Dwarf_Die cu;
		Dwarf_Lines *lines;
		size_t nl;

		if (dwarf_offdie(dw, off + hsize, &cu) && !dwarf_getsrclines(&cu, &lines, &nl)) {
			for (i = 0; i < nl; i++) {
				Dwarf_Addr a;
				bool end = false;
				Dwarf_Line *l = dwarf_onesrcline(lines, i);

				if (!l || dwarf_lineaddr(l, &a) || dwarf_lineendsequence(l, &end) ||
				    end)
					continue;
				if (n == cap) {
					cap = cap ? 2 * cap : 65536;
					v = realloc(v, cap * sizeof(*v));
					if (!v)
						exit(1);
				}
				v[n++] = a;
			}
		}
		off = next;
	}
	dwarf_end(dw);
	close(fd);
	qsort(v, n, sizeof(*v), cmp_u64);
	for (i = j = 0; i < n; i++)
		if (!j || v[j - 1] != v[i])
			v[j++] = v[i];
	*out = v;
	return j;
}

static bool same_str(const char *a, const char *b)
{
	return a && b ? !strcmp(a, b) : a == b;
}

static void show(const char *what, uint64_t pc, const struct dwl_result *a,
		 const struct dwl_result *b)
{
	uint32_t i;

	fprintf(stderr, "%s differ at %#llx:\n", what, (unsigned long long)pc);
	for (i = 0; a && i < a->n; i++)
		fprintf(stderr, "  dwarf   %s %s:%d\n", a->f[i].name, a->f[i].file, a->f[i].line);
	for (i = 0; b && i < b->n; i++)
		fprintf(stderr, "  pclntab %s %s:%d\n", b->f[i].name, b->f[i].file, b->f[i].line);
}

int main(int argc, char **argv)
{
	size_t n, i, in_go = 0, names_ok = 0, lines_ok = 0, shown = 0;
	const char *bin, *stripped;
	struct dso_dwarf *dw, *go;
	struct gopcln *t;
	double t0, t_dw, t_go;
	uint64_t *pcs;
	Elf *elf;
	int fd;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: gosym-cmp BIN [STRIPPED]\n");
		return 1;
	}
	bin = argv[1];
	stripped = argc > 2 ? argv[2] : NULL;
	elf_version(EV_CURRENT);
	n = line_addrs(bin, &pcs);

	/* Which addresses are in Go functions (cgo's C has DWARF but no pclntab entry). */
	fd = open(stripped ? stripped : bin, O_RDONLY | O_CLOEXEC);
	elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	t = elf ? gopcln_open(elf) : NULL;
	if (!t) {
		fprintf(stderr, "gosym-cmp: %s: no .gopclntab: %s\n", stripped ? stripped : bin,
			strerror(errno));
		return 1;
	}

	/* Cold, each: open, then every address once. */
	t0 = now_s();
	dw = dwl_open(bin, NULL, false);
	for (i = 0; dw && i < n; i++)
		dwl_lookup(dw, pcs[i]);
	t_dw = now_s() - t0;
	t0 = now_s();
	/* Without DWARF (a stripped build, or gopcln straight on BIN) dwl answers from Go's. */
	go = stripped ? dwl_open(stripped, NULL, false) : NULL;
	for (i = 0; go && i < n; i++)
		dwl_lookup(go, pcs[i]);
	t_go = now_s() - t0;
	if (!dw || (stripped && !go)) {
		fprintf(stderr, "gosym-cmp: cannot open %s\n", dw ? stripped : bin);
		return 1;
	}

	for (i = 0; i < n; i++) {
		struct gopcln_frame gf[GOPCLN_MAX_INLINE];
		struct {
			struct dwl_result r;
			struct dwl_frame f[GOPCLN_MAX_INLINE];
		} own;
		const struct dwl_result *a = dwl_lookup(dw, pcs[i]), *b;
		bool names = true, lines = true;
		uint32_t k;
		int m;

		m = gopcln_lookup(t, pcs[i], gf, GOPCLN_MAX_INLINE);
		if (m <= 0)
			continue; /* not Go code */
		in_go++;
		if (go) {
			b = dwl_lookup(go, pcs[i]);
		} else {
			own.r.n = (uint32_t)m;
			for (k = 0; k < (uint32_t)m; k++)
				own.r.f[k] = (struct dwl_frame){gf[k].name, gf[k].file, gf[k].line};
			b = &own.r;
		}
		if (!a || !b || a->n != b->n) {
			names = lines = false;
		} else {
			for (k = 0; k < a->n; k++) {
				names &= same_str(a->f[k].name, b->f[k].name);
				lines &= same_str(a->f[k].file, b->f[k].file) &&
					 a->f[k].line == b->f[k].line;
			}
		}
		names_ok += names;
		lines_ok += names && lines;
		if ((!names || !lines) && shown++ < SHOW_MAX)
			show(names ? "lines" : "names", pcs[i], a, b);
	}
	printf("addresses %zu in Go functions %zu\n", n, in_go);
	printf("names %zu/%zu (%.3f%%) lines %zu/%zu (%.3f%%)\n", names_ok, in_go,
	       in_go ? 100.0 * names_ok / in_go : 0, lines_ok, in_go,
	       in_go ? 100.0 * lines_ok / in_go : 0);
	printf("cold dwarf %.3f s pclntab %.3f s\n", t_dw, t_go);
	dso_dwarf_free(dw);
	dso_dwarf_free(go);
	gopcln_free(t);
	elf_end(elf);
	close(fd);
	free(pcs);
	return 0;
}
