/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Synthetic ELF files that name code with no ELF file of its own (Python functions,
 * later GPU kernels and JIT code): a .symtab for the names, a DWARF 4 line table for
 * file:line, a GNU build-id.  .text is SHT_NOBITS: the file holds no code, only the
 * address range it describes.  Mapped with pgoff 0 at any address, mapping offset X is
 * vaddr X, so Linux perf and our symbolizer both read X straight off the symbols.
 */
#ifndef PA_SYNTHELF_H
#define PA_SYNTHELF_H

#include <stddef.h>
#include <stdint.h>

#define SYNTH_TEXT_ALIGN 4096u /* text_start: a multiple of this, and not 0 */
#define SYNTH_BID_MAX	 20u   /* what perf keeps of a build-id */
#define SYNTH_NAME_MAX	 4096u /* longest function or file name, NUL excluded */

/* One function: [start, start + size) inside .text, named name (non-empty). */
struct synth_fn {
	uint64_t start, size;
	const char *name;
};

/* From addr on (up to the next row or the end of its function) the code is file:line. */
struct synth_line {
	uint64_t addr;
	uint32_t file; /* index into synth_elf.files */
	uint32_t line;
};

struct synth_elf {
	const uint8_t *bid; /* GNU build-id note content, 1..SYNTH_BID_MAX bytes */
	size_t bid_size;
	uint64_t text_start, text_size;
	const struct synth_fn *fns; /* any order; inside .text, not overlapping */
	size_t nr_fns;
	const char *const *files; /* source paths as given (non-empty), no directory table */
	size_t nr_files;
	const struct synth_line *lines; /* any order, each inside some function; of rows
					 * at the same address the first given wins */
	size_t nr_lines;
};

/*
 * Write se to path through a temporary file in the same directory renamed into place:
 * on error path is untouched and no temporary file is left.  0 or -errno: -EINVAL for
 * a description that breaks the rules above, -ENAMETOOLONG for a name longer than
 * SYNTH_NAME_MAX, -EFBIG past 1 GiB of output, else the errno of the file calls.
 */
int synth_elf_write(const char *path, const struct synth_elf *se);

#endif /* PA_SYNTHELF_H */
