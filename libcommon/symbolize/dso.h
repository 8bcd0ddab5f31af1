/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DSOs behind the maps of a machine (machine.c's helper, not a public API): shared and
 * deduplicated by build-id, else by path; each loads its symbols lazily, once, from a
 * file whose build-id matches the recorded one.
 */
#ifndef PA_DSO_H
#define PA_DSO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize/buildid.h"
#include "symbolize/debuginfo.h"
#include "symbolize/symtab.h"

struct dso_dwarf;

struct dso {
	char *path;		/* as recorded, without a " (deleted)" suffix */
	const char *short_name; /* points into path, or a literal */
	uint8_t bid[BID_MAX];
	uint8_t bid_size;     /* 0: unknown */
	bool kernel;	      /* [kernel.kallsyms] or a kernel module */
	bool loaded;	      /* symbol load attempted */
	bool anon;	      /* no file behind it: [vdso], //anon, [heap]... */
	struct symtab *st;    /* NULL until loaded, or when no matching file was found */
	char *elf_path;	      /* the file symbols came from: path, or a copy in a cache */
	char *debug_path;     /* its separate debug file, NULL if none was found */
	struct dso_dwarf *dw; /* DWARF lines/inlines and CFI, opened on first use */
	bool dw_tried;
};

struct dso_bid {
	char *path;
	uint8_t bid[BID_MAX];
	uint8_t size;
};

struct dso_table {
	struct dso **v;
	size_t n, cap;
	struct dso_bid *bids; /* from the BUILD_ID feature / HEADER_BUILD_ID records */
	size_t nr_bids, bids_cap;
	const char *buildid_dir; /* perf's build-id cache, "$HOME/.debug" */
	struct dbg_finder *dbg;	 /* debug-file lookup; NULL: the file's own symbols only */
	bool no_demangle;	 /* for names read from DWARF */
	char *warnings;		 /* '\n'-separated lines, NULL if none */
	size_t nr_warnings;
};

/* Find or create the DSO for a recorded path (+ build-id if the record had one). */
struct dso *dsos_findnew(struct dso_table *t, const char *path, const uint8_t *bid,
			 size_t bid_size);
/* Remember a path's build-id (before or after its DSO exists; loaded DSOs keep theirs). */
int dsos_add_bid(struct dso_table *t, const char *path, const uint8_t *bid, size_t size);
/* The DSO's symbols (loading them the first time), NULL if none usable. */
const struct symtab *dso_symtab(struct dso_table *t, struct dso *d);
/* The DSO's DWARF and CFI (opened the first time, after its symbols), NULL if none. */
struct dso_dwarf *dso_dwarf(struct dso_table *t, struct dso *d);
/* The recorded path; its build-id (size, 0 when unknown).  d may be NULL. */
const char *dso_path(const struct dso *d);
size_t dso_build_id(const struct dso *d, const uint8_t **bid);
/* Append one warning line (deduplicated, capped). */
void dsos_warn(struct dso_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dsos_free(struct dso_table *t);

#endif /* PA_DSO_H */
