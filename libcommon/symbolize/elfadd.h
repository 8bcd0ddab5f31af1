/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A copy of an ELF file with a symbol table and a GNU build-id note appended: what
 * Linux perf needs to name the frames of a binary that has neither (a stripped Go
 * program, whose names live in .gopclntab where perf does not look).  The copy's
 * bytes up to the original end are the original's, so its program headers, code and
 * data, and every address in it, are unchanged; new sections follow, then a new
 * section header table (the old entries, then .symtab, .strtab, .note.gnu.build-id
 * and a new .shstrtab).
 */
#ifndef PA_ELFADD_H
#define PA_ELFADD_H

#include <stddef.h>
#include <stdint.h>

/* One function: [start, start + size) at link-time addresses, a non-empty name. */
struct elfadd_sym {
	uint64_t start, size;
	const char *name;
};

/*
 * Write the ELF file open at in_fd, with syms (each a global STT_FUNC in the
 * executable section holding its start; one outside all of them is left out) and the
 * build-id bid (1..20 bytes) appended, to out_fd (empty, at offset 0).  0 or -errno:
 * -ENOTSUP for what this does not rewrite (not 64-bit little-endian, no section
 * headers, extended section numbering), -EBADMSG for headers that lie outside the file.
 */
int elfadd_write(int in_fd, int out_fd, const struct elfadd_sym *syms, size_t n, const uint8_t *bid,
		 size_t bid_size);

#endif /* PA_ELFADD_H */
