/* SPDX-License-Identifier: Apache-2.0 */
/* The symbol-table targets (ELF, perf map): use a loaded table the way pa-report does. */
#ifndef PA_FUZZ_SYMTAB_H
#define PA_FUZZ_SYMTAB_H

#include <string.h>

#include "symbolize/symtab.h"
#include "symbolize/symtab_priv.h"

/* Look up each symbol's first and last address and demangle its name (the first 64). */
static inline uint64_t fuzz_symtab_use(const struct symtab *st)
{
	uint64_t s = 0, v, off;

	for (size_t i = 0; i < st->nr; i++) {
		const struct symtab_isym *is = &st->syms[i];
		const struct sym *a = symtab_lookup(st, is->s.start);
		const struct sym *b = symtab_lookup(st, is->end - 1);

		s += (a ? strlen(a->name) : 0) + (b ? b->start : 0);
		if (i < 64)
			s += strlen(symtab_sym_demangled(st, &is->s));
		if (!symtab_vaddr_to_offset(st, is->s.start, &off) &&
		    !symtab_offset_to_vaddr(st, off, &v))
			s += v;
		s += symtab_sym_module(st, &is->s) != NULL;
	}
	return s + symtab_size(st);
}

/* Write data to a memfd, load it by path with load, use the table and free it. */
static inline int fuzz_symtab_run(const uint8_t *data, size_t size,
				  struct symtab *(*load)(const char *path))
{
	volatile uint64_t sink = 0;
	struct symtab *st;
	char path[64];
	int fd = fuzz_memfd(data, size);

	st = load(fuzz_fd_path(fd, path, sizeof(path)));
	if (st)
		sink = fuzz_symtab_use(st);
	(void)sink;
	symtab_free(st);
	close(fd);
	return 0;
}

#endif /* PA_FUZZ_SYMTAB_H */
