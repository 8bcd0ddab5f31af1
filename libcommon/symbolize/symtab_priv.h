/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Inside struct symtab: shared by the loaders (symtab.c: kallsyms and perf maps,
 * symtab_elf.c: ELF files).  A loader adds raw symbols to a builder, which sorts,
 * deduplicates and packs them (no per-symbol allocation).  Names are copied into one
 * string pool, or, an ELF file's, left where the file's mapping has them: copying the
 * 45k names of a large C++ library costs more than the rest of its loading.
 */
#ifndef PA_SYMTAB_PRIV_H
#define PA_SYMTAB_PRIV_H

#include <libelf.h>

#include "symbolize/symtab.h"

#define SYMTAB_MAX_KEPT 3 /* a file, its MiniDebugInfo and its debug file */

struct symtab_seg {
	uint64_t off, vaddr, filesz;
};

/* The lookup array; symtab_lookup hands out &isym->s. */
struct symtab_isym {
	struct sym s;
	uint64_t end; /* exclusive: start + size, or up to the next symbol when size is 0 */
	uint32_t mod; /* kallsyms: 1 + index of the module name in mods, 0: core kernel */
};

/* What names point into, released with the table: an ELF handle (its mapping of
 * the file), and the buffer it was read from when that is ours. */
struct symtab_kept {
	Elf *elf;
	void *buf;
};

struct symtab {
	struct symtab_isym *syms;
	size_t nr;
	char *pool;
	const char **mods;
	size_t nr_mods;
	struct symtab_seg *segs;
	size_t nr_segs;
	const char **dnames; /* demangled names by index, filled on first use; ==name: none */
	bool identity;	     /* offsets are addresses (kallsyms, perf maps) */
	bool full;	     /* names come from a .symtab, not .dynsym alone */
	uint64_t ref_text;   /* kallsyms: address of _text (to detect KASLR moves), else 0 */
	struct symtab_kept kept[SYMTAB_MAX_KEPT];
	size_t nr_kept;
};

/* Ranking bits for choosing among symbols at one address (higher wins). */
enum {
	SB_GLOBAL = 1 << 0, /* not local */
	SB_STRONG = 1 << 1, /* not weak */
	SB_FUNC = 1 << 2,   /* FUNC/IFUNC rather than NOTYPE */
};

/* A raw name with this bit is a pointer into a kept file (symtab_builder_keep). */
#define SB_NAME_REF (1ULL << 63)

struct symtab_raw {
	uint64_t start, size;
	uint64_t limit; /* a zero-size symbol stops here at the latest (section end); 0: none */
	uint64_t name;	/* offset in the pool, or SB_NAME_REF | address */
	uint32_t mod;
	uint32_t bits;
};

struct symtab_builder {
	struct symtab_raw *v;
	size_t n, cap;
	char *pool;
	size_t plen, pcap;
	uint32_t *mods; /* pool offsets of module names */
	size_t nr_mods, mods_cap;
	bool full; /* a .symtab was read (symtab.full) */
	struct symtab_kept kept[SYMTAB_MAX_KEPT];
	size_t nr_kept;
};

/* Append name (len bytes) + suffix to the pool; returns its offset or -ENOMEM. */
int64_t symtab_builder_str(struct symtab_builder *b, const char *name, size_t len,
			   const char *suffix);
int symtab_builder_add(struct symtab_builder *b, uint64_t start, uint64_t size, uint64_t limit,
		       const char *name, size_t len, const char *suffix, uint32_t bits);
/* The same with name itself, not a copy: a NUL-terminated string in what the builder
 * keeps (symtab_builder_keep). */
int symtab_builder_add_ref(struct symtab_builder *b, uint64_t start, uint64_t size, uint64_t limit,
			   const char *name, uint32_t bits);
/* Keep elf (elf_end'ed) and buf (freed, may be NULL) as long as the table: names
 * added by reference point into them.  Releases them at once when full (-ENOSPC). */
int symtab_builder_keep(struct symtab_builder *b, Elf *elf, void *buf);
/* Sort, dedup, compute ends, move everything into st.  Frees the builder. */
int symtab_builder_finish(struct symtab_builder *b, struct symtab *st, uint64_t last_extent);
void symtab_builder_free(struct symtab_builder *b);

#endif /* PA_SYMTAB_PRIV_H */
