/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The unwind-table compiler: .eh_frame (and .debug_frame, from the binary or its debug
 * file) of an x86-64 ELF file -> the compact rows of bpf/unwind_rows.h, sorted by PC,
 * identical neighbours merged, FDE gaps marked UNWIND_CFA_NONE.
 */
#ifndef PA_CFI_COMPILE_H
#define PA_CFI_COMPILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "unwind_rows.h"

struct dbg_finder;

struct cfi_opts {
	struct dbg_finder *dbg; /* to find a debug file for .debug_frame; NULL: don't */
	bool no_debug_frame;	/* only .eh_frame */
};

/* What the compiler saw; every rule it could not express is counted here. */
struct cfi_stats {
	uint32_t cies, fdes;   /* parsed */
	uint32_t fdes_debug;   /* of which from .debug_frame */
	uint32_t fdes_skipped; /* bad CIE/FDE, unknown augmentation, overlapping */
	uint32_t fdes_overlap; /* of which skipped for overlapping a kept FDE */
	uint32_t rows_raw;     /* rows before merging */
	uint32_t rows_plt, rows_signal, rows_outermost, rows_deref, rows_ra_rdi;
	uint32_t rows_init;	 /* synthesized for .init (crti.o's _init has no CFI) */
	uint32_t unsup_cfa_reg;	 /* CFA based on a register other than rsp/rbp */
	uint32_t unsup_cfa_expr; /* CFA expression not a known pattern */
	uint32_t unsup_rbp;	 /* rbp in a register / by expression / val_offset */
	uint32_t unsup_ra;	 /* return address not at CFA-8 */
	uint32_t unsup_range;	 /* offset does not fit the row */
	uint32_t bad_insns;	 /* FDE programs cut short by an unknown/truncated insn */
	bool has_eh_frame, has_debug_frame;
	uint64_t compile_ns;
};

struct cfi_table {
	struct unwind_row *rows;
	uint32_t n;
	uint64_t base; /* row.pc = vaddr - base */
	uint8_t bid[20];
	uint32_t bid_size;
	struct cfi_stats stats;
};

/*
 * Compile the tables of the ELF file at path (or the open fd when path is NULL; the fd
 * stays the caller's).  opts may be NULL.  A file without any CFI gives a table with
 * n == 0.  Returns NULL with errno set: ENOENT/EACCES (open), ENOEXEC (not ELF, or not
 * x86-64 ET_EXEC/ET_DYN), ENOMEM, E2BIG (PC span of 4 GiB or more).
 */
struct cfi_table *cfi_compile_elf(const char *path, int fd, const struct cfi_opts *opts);
void cfi_table_free(struct cfi_table *t);

/* The row covering vaddr (link-time address), or NULL before the first row. */
const struct unwind_row *cfi_table_lookup(const struct cfi_table *t, uint64_t vaddr);

/* "rsp+16", "rbp+16", "plt", "none", ... for the CFA rule of a row (static string or buf). */
const char *cfi_row_cfa_str(const struct unwind_row *r, char *buf, size_t len);

#endif /* PA_CFI_COMPILE_H */
