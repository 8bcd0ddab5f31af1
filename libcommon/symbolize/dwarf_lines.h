/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DWARF facts about one ELF file (and its separate debug file), through libdw: the
 * inline chain and file:line of an address, and the function start its .eh_frame FDE
 * gives when no symbol covers it.  Opened lazily per DSO, answers cached per address.
 */
#ifndef PA_DWARF_LINES_H
#define PA_DWARF_LINES_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dso_dwarf;

/* One source-level frame of an address. */
struct dwl_frame {
	const char *name; /* function name (demangled unless asked not to), NULL if unknown */
	const char *file; /* source file, NULL if unknown */
	int line;	  /* 0 if unknown */
};

/*
 * What an address is at the source level: n frames, innermost first.  f[0..n-2] are
 * inlined functions (f[i] is where in the function f[i] the address is); f[n-1] is the
 * real (out-of-line) function holding them all.
 */
struct dwl_result {
	uint32_t n;
	uint32_t owned; /* bit i: f[i].name was allocated (demangled) */
	struct dwl_frame f[];
};

/*
 * Open file's DWARF, preferring its debug file (either may be NULL), and its CFI.
 * The DWARF itself is read on the first dwl_lookup.  NULL with errno ENOENT when
 * neither file opens as ELF.
 */
struct dso_dwarf *dwl_open(const char *file, const char *debug, bool demangle);
void dso_dwarf_free(struct dso_dwarf *dw);

/*
 * Source frames of link-time address va, or NULL when DWARF does not cover it and the
 * file is no Go binary whose .gopclntab does (names, files, lines and inlined calls of
 * stripped Go programs).
 */
const struct dwl_result *dwl_lookup(struct dso_dwarf *dw, uint64_t va);

/*
 * .eh_frame_hdr's search table of elf: FDE start addresses, sorted, malloc'd into
 * *starts (*n of them).  GNU ld and lld write it as datarel sdata4 pairs (initial
 * location, FDE address); other encodings are -ENOTSUP.  0 or -errno.
 */
int dwl_fde_starts(Elf *elf, uint64_t **starts, size_t *n);

/* Start (link-time address) of the function whose CFI covers va.  0 or -ENOENT. */
int dwl_func_start(struct dso_dwarf *dw, uint64_t va, uint64_t *start);

#endif /* PA_DWARF_LINES_H */
