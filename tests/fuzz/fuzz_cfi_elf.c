// SPDX-License-Identifier: Apache-2.0
/*
 * The CFI compiler on a whole ELF file, from an fd: section lookup (.eh_frame,
 * .debug_frame, compressed ones), executable segments, build-id, then the rows.
 */
#include <string.h>

#include "unwind/cfi_compile.h"
#include "fuzz.h"

FUZZ_TARGET(cfi_elf)
{
	volatile size_t sink = 0;
	struct cfi_table *t;
	char buf[64];
	int fd = fuzz_memfd(data, size);

	t = cfi_compile_elf(NULL, fd, NULL);
	for (uint32_t i = 0; t && i < t->n; i++) {
		const struct unwind_row *r = cfi_table_lookup(t, t->base + t->rows[i].pc);

		sink += r ? strlen(cfi_row_cfa_str(r, buf, sizeof(buf))) : 0;
	}
	(void)sink;
	cfi_table_free(t);
	close(fd);
	return 0;
}
