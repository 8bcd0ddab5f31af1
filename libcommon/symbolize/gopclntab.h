/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Go's pc-line table (.gopclntab): the function names, files and lines the Go runtime
 * itself needs for tracebacks, so it survives `go build -ldflags="-s -w"`.  Formats
 * of Go 1.2-1.15, 1.16-1.17, 1.18-1.19 and 1.20 and later, told apart by the magic;
 * little-endian only.  The inline tree (FUNCDATA_InlTree, PCDATA_InlTreeIndex) gives
 * inlined calls, as the runtime's traceback walks them.
 *
 * Addresses are link-time virtual addresses, as in the ELF file.
 */
#ifndef PA_GOPCLNTAB_H
#define PA_GOPCLNTAB_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

#define GOPCLN_MAX_INLINE 32 /* deeper inline chains are cut, the outermost kept */

struct gopcln;

/* One source frame: innermost first, the last one the real (out-of-line) function. */
struct gopcln_frame {
	const char *name; /* points into the table; never NULL */
	const char *file; /* NULL if unknown */
	int line;	  /* 0 if unknown */
};

/*
 * The table of elf: its .gopclntab section (.data.rel.ro.gopclntab in PIE), else
 * runtime.pclntab of .symtab, else (files with Go's build ID note) a header found in
 * the loaded data segments, as external linking and stripping leave it.  For 1.18+,
 * moduledata.gofunc and text come from runtime.firstmoduledata in the writable
 * segments, else from .symtab.  The table points into elf's data: elf must outlive it.
 * NULL with errno ENOENT (not a Go binary), EBADMSG (a table that does not hold
 * together), ENOMEM.
 */
struct gopcln *gopcln_open(Elf *elf);

/*
 * A table from memory: buf (len bytes) is the table as loaded at vaddr.  text is the
 * runtime text start for formats whose entries are relative to it (1.18+; 0: the
 * header's own), gofunc the address funcdata offsets are relative to (1.18+: the
 * go:func.* symbol; 0: unknown, no inline tree), and read() fetches other memory
 * (funcdata of 1.16-1.17, the inline tree) at a vaddr, 0 or -errno; NULL: none.  The
 * same checks as gopcln_open.  For tests and fuzzing.
 */
typedef int (*gopcln_read_fn)(void *ctx, uint64_t vaddr, void *out, size_t len);
struct gopcln *gopcln_open_mem(const void *buf, size_t len, uint64_t vaddr, uint64_t text,
			       uint64_t gofunc, gopcln_read_fn read, void *ctx);

void gopcln_free(struct gopcln *t);

/* "1.2", "1.16", "1.18" or "1.20": the oldest Go release writing this format. */
const char *gopcln_format(const struct gopcln *t);

/*
 * Number of functions; function i's [start, end) and name: 0, -ERANGE for i past
 * them, -EBADMSG for a damaged record or name.
 */
size_t gopcln_nr_funcs(const struct gopcln *t);
int gopcln_func(const struct gopcln *t, size_t i, uint64_t *start, uint64_t *end,
		const char **name);

/*
 * Source frames of pc into f (room for max, at least 1): the inlined calls innermost
 * first, then the function holding them; more than max cuts the innermost.  Returns
 * how many (>= 1), or -ENOENT when no function covers pc, -EBADMSG when its tables
 * are damaged (an inline chain that loops only ends early).  Each call decodes the
 * function's pc-value tables afresh: callers cache.
 */
int gopcln_lookup(const struct gopcln *t, uint64_t pc, struct gopcln_frame *f, size_t max);

#endif /* PA_GOPCLNTAB_H */
