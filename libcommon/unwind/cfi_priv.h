/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Inside the CFI compiler: the .eh_frame/.debug_frame reader and the CFA program
 * interpreter (cfi_parse.c), used by cfi_compile.c.  Full-precision rules here; the
 * lossy squeeze into 8-byte rows happens in cfi_compile.c.
 */
#ifndef PA_CFI_PRIV_H
#define PA_CFI_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CFI_REG_RDI 5
#define CFI_REG_RBP 6
#define CFI_REG_RSP 7
#define CFI_REG_RA  16

/* An address range [lo, hi): an executable PT_LOAD segment. */
struct cfi_span {
	uint64_t lo, hi;
};

/* No function is this long: an FDE covering more is garbage (what an FDE may cover when
 * the executable segments are not known). */
#define CFI_FDE_MAX_RANGE (256ull << 20)

/* One frame section as loaded: bytes plus the addresses pointer encodings are relative to. */
struct cfi_section {
	const uint8_t *data;
	size_t size;
	uint64_t vaddr;	     /* sh_addr: base of DW_EH_PE_pcrel */
	uint64_t text_vaddr; /* DW_EH_PE_textrel */
	uint64_t got_vaddr;  /* DW_EH_PE_datarel */
	bool is_eh;	     /* .eh_frame (CIE id 0, relative CIE pointers) vs .debug_frame */
};

struct cfi_cie {
	size_t off; /* of the entry in its section */
	uint64_t code_align;
	int64_t data_align;
	uint32_t ra_reg;
	uint8_t fde_enc;      /* DW_EH_PE_* of FDE addresses */
	uint8_t addr_size;    /* for absptr */
	bool aug_z, signal;   /* 'z' (augmentation data present), 'S' */
	const uint8_t *insns; /* initial instructions */
	size_t insns_len;
};

struct cfi_fde {
	uint64_t start, end; /* [start, end) link-time vaddrs */
	uint32_t cie;	     /* index into cfi_entries.cies */
	const uint8_t *insns;
	size_t insns_len;
	const struct cfi_section *sec;
	bool from_debug;
};

/* Every CIE and FDE of a section. */
struct cfi_entries {
	struct cfi_cie *cies; /* sorted by off */
	size_t n_cies, cap_cies;
	struct cfi_fde *fdes; /* in section order */
	size_t n_fdes, cap_fdes;
	uint32_t bad; /* entries skipped: truncated, unknown augmentation, dangling CIE */
	const struct cfi_span *exec; /* set by the caller: the file's executable segments */
	size_t n_exec;		     /* 0: not known */
};

/*
 * Parse every entry of sec, appending to e (which may hold other sections' entries;
 * CIE pointers of FDEs are resolved within sec).  0 or -ENOMEM; malformed entries are
 * counted in e->bad and skipped (a bad length ends the section), and so are FDEs that
 * cover more than CFI_FDE_MAX_RANGE or, when e->n_exec is not 0, reach outside every
 * executable segment.
 */
int cfi_parse_section(const struct cfi_section *sec, struct cfi_entries *e);
void cfi_entries_free(struct cfi_entries *e);

/* A register's rule, for the registers the walker cares about (rbp, RA). */
enum cfi_rule_kind {
	CFI_R_SAME = 0, /* also "never mentioned": callee-saved by ABI */
	CFI_R_UNDEF,
	CFI_R_OFFSET,	  /* saved at CFA + off */
	CFI_R_VAL_OFFSET, /* value is CFA + off */
	CFI_R_REGISTER,	  /* in register reg */
	CFI_R_EXPR,	  /* saved at the address expr computes */
	CFI_R_VAL_EXPR,
};

struct cfi_rule {
	uint8_t kind;
	uint32_t reg;
	int64_t off;
	const uint8_t *expr;
	size_t expr_len;
};

struct cfi_state {
	bool cfa_is_expr;
	uint32_t cfa_reg;
	int64_t cfa_off;
	const uint8_t *cfa_expr;
	size_t cfa_expr_len;
	struct cfi_rule rbp, ra;
};

/*
 * Run the CIE's initial instructions then the FDE's, calling fn(ctx, pc, state) with the
 * state in effect from pc on, for each pc where it may change (first at fde->start;
 * calls with the same pc: the later one wins).  Returns 0, fn's non-zero value, or
 * -EINVAL for an instruction that is unknown or runs past the program: the rows emitted
 * before it stand, and fn gets st == NULL for the pc from which nothing is known.
 */
typedef int (*cfi_row_fn)(void *ctx, uint64_t pc, const struct cfi_state *st);
int cfi_run(const struct cfi_cie *cie, const struct cfi_fde *fde, cfi_row_fn fn, void *ctx);

struct cfi_table;
/*
 * Rows of t (zeroed by the caller, bid aside) from every FDE in e: FDEs sorted, an FDE
 * that reaches into the next one ends where the next one starts (as the unwinder's
 * search by start address has it), except that .eh_frame wins over .debug_frame, gaps
 * and the end marked UNWIND_CFA_NONE, neighbours merged.  Reorders e->fdes.  0 or -errno.
 */
int cfi_build_rows(struct cfi_table *t, struct cfi_entries *e);

#endif /* PA_CFI_PRIV_H */
