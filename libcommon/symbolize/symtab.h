/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Symbol tables: the functions of one ELF file (.symtab, .dynsym, PLT entries as
 * "name@plt") or of the kernel (/proc/kallsyms), sorted for binary search.
 */
#ifndef PA_SYMTAB_H
#define PA_SYMTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sym {
	uint64_t start; /* ELF: st_value (link-time vaddr); kernel: runtime address */
	uint64_t size;	/* 0 when unknown: the symbol then extends to the next one */
	const char *name;
};

struct symtab;

/* Load an ELF file's function symbols.  NULL and errno (ENOENT, ENOEXEC...) on failure. */
struct symtab *symtab_load_elf(const char *path);
/* The same, adding the .symtab of a separate debug file (skipped if debug is unreadable). */
struct symtab *symtab_load_elf_debug(const char *path, const char *debug);
/* Load kernel symbols (text only) from a kallsyms-format file, e.g. "/proc/kallsyms".
 * If every address reads as zero (kptr_restrict), *restricted is set and NULL returned. */
struct symtab *symtab_load_kallsyms(const char *path, bool *restricted);
/* Load a JIT's perf map (/tmp/perf-PID.map: "START SIZE name", hex); addresses are runtime. */
struct symtab *symtab_load_perfmap(const char *path);
void symtab_free(struct symtab *st);

/* Function containing addr (ELF: link-time vaddr), or NULL. */
const struct sym *symtab_lookup(const struct symtab *st, uint64_t addr);

/*
 * Translate a file offset (what MMAP records give: ip - start + pgoff) to the ELF's
 * link-time vaddr through its PT_LOAD headers.  0 with *vaddr set, -ENOENT if no
 * segment covers it.
 */
int symtab_offset_to_vaddr(const struct symtab *st, uint64_t off, uint64_t *vaddr);

/* The reverse: link-time vaddr to file offset.  0 or -ENOENT. */
int symtab_vaddr_to_offset(const struct symtab *st, uint64_t vaddr, uint64_t *off);

size_t symtab_size(const struct symtab *st);

/* Whether an ELF's names came from a .symtab (its own, MiniDebugInfo's or a debug
 * file's), which names every function a compiler emitted, not .dynsym's exports alone. */
bool symtab_full(const struct symtab *st);

/* s's name demangled (C++, Rust legacy and v0), computed on first use and kept for the
 * table's lifetime; s->name itself when it is not mangled. */
const char *symtab_sym_demangled(const struct symtab *st, const struct sym *s);

/* kallsyms: the module a symbol belongs to ("ext4"), NULL for the core kernel and ELF. */
const char *symtab_sym_module(const struct symtab *st, const struct sym *s);

#endif /* PA_SYMTAB_H */
