// SPDX-License-Identifier: Apache-2.0
/*
 * The CFI parser, interpreter and row compiler on one raw frame section.  Input: a
 * flags byte, then the section's bytes.  Flags: bit 0 the section is .debug_frame (else
 * .eh_frame), bit 1 the file's executable span is known ([0x1000, 0x9000)), bit 2 the
 * same bytes are also parsed as the other kind (both sections of one file).
 */
#include <stdlib.h>
#include <string.h>

#include "unwind/cfi_compile.h"
#include "unwind/cfi_priv.h"
#include "fuzz.h"

FUZZ_TARGET(cfi)
{
	static const struct cfi_span cfi_text = {0x1000, 0x9000};
	struct cfi_section sec = {.vaddr = 0x2000, .text_vaddr = 0x1000, .got_vaddr = 0x4000};
	struct cfi_entries e = {0};
	struct cfi_table *t;
	volatile size_t sink = 0;
	char buf[64];

	if (!size)
		return 0;
	sec.data = data + 1;
	sec.size = size - 1;
	sec.is_eh = !(data[0] & 1);
	if (data[0] & 2) {
		e.exec = &cfi_text;
		e.n_exec = 1;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		abort();
	if (cfi_parse_section(&sec, &e))
		goto out;
	if (data[0] & 4) {
		sec.is_eh = !sec.is_eh;
		if (cfi_parse_section(&sec, &e))
			goto out;
	}
	if (cfi_build_rows(t, &e))
		goto out;
	for (uint32_t i = 0; i < t->n; i++) {
		const struct unwind_row *r = cfi_table_lookup(t, t->base + t->rows[i].pc);

		sink += r ? strlen(cfi_row_cfa_str(r, buf, sizeof(buf))) : 0;
	}
out:
	(void)sink;
	cfi_entries_free(&e);
	cfi_table_free(t);
	return 0;
}
