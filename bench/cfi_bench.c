// SPDX-License-Identifier: Apache-2.0
/*
 * bench/cfi-compile's driver: for each ELF file, compile its unwind table N times (best
 * time), store it in a fresh cache, then load it back N times (best time), and print one
 * table row: FDEs, rows, bytes per row, rows/s compiled, cold (compile+store) and warm
 * (cache load) times, unsupported share.
 *
 *	cfi_bench N CACHE_DIR FILE...
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/cfi_cache.h"
#include "unwind/cfi_compile.h"
#include "base/util.h"

static uint32_t unsupported(const struct cfi_table *t)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < t->n; i++)
		n += UNWIND_ROW_CFA(&t->rows[i]) == UNWIND_CFA_UNSUPPORTED;
	return n;
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 0;

	if (argc < 4 || runs < 1) {
		fprintf(stderr, "usage: cfi_bench N CACHE_DIR FILE...\n");
		return 2;
	}
	printf("%-28s %7s %8s %6s %9s %10s %10s %9s %7s\n", "file", "FDEs", "rows", "B/row",
	       "Mrows/s", "cold ms", "warm ms", "table KB", "unsup%");
	for (int f = 3; f < argc; f++) {
		uint64_t best_c = UINT64_MAX, best_w = UINT64_MAX, t0, store_ns;
		struct cfi_table *t = NULL, *c;
		const char *name = strlen(argv[f]) > 28 ? argv[f] + strlen(argv[f]) - 28 : argv[f];

		for (int i = 0; i < runs; i++) {
			cfi_table_free(t);
			t0 = pa_now_ns();
			t = cfi_compile_elf(argv[f], -1, NULL);
			if (!t) {
				fprintf(stderr, "cfi_bench: %s: %s\n", argv[f], strerror(errno));
				return 1;
			}
			if (pa_now_ns() - t0 < best_c)
				best_c = pa_now_ns() - t0;
		}
		t0 = pa_now_ns();
		if (cfi_cache_store(argv[2], t)) {
			fprintf(stderr, "cfi_bench: %s: cannot store in %s\n", argv[f], argv[2]);
			return 1;
		}
		store_ns = pa_now_ns() - t0;
		for (int i = 0; i < runs; i++) {
			t0 = pa_now_ns();
			c = cfi_cache_get(argv[2], argv[f], NULL, NULL);
			if (pa_now_ns() - t0 < best_w)
				best_w = pa_now_ns() - t0;
			if (!c || c->n != t->n) {
				fprintf(stderr, "cfi_bench: %s: cache load failed\n", argv[f]);
				return 1;
			}
			cfi_table_free(c);
		}
		printf("%-28.28s %7u %8u %6zu %9.1f %10.2f %10.2f %9.1f %7.2f\n", name,
		       t->stats.fdes, t->n, sizeof(struct unwind_row),
		       t->stats.rows_raw / (best_c / 1e9) / 1e6, (best_c + store_ns) / 1e6,
		       best_w / 1e6, t->n * sizeof(struct unwind_row) / 1024.0,
		       t->n ? 100.0 * unsupported(t) / t->n : 0);
		cfi_table_free(t);
	}
	return 0;
}
