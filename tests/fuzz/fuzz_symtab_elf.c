// SPDX-License-Identifier: Apache-2.0
/*
 * ELF symbol tables from a path: .symtab/.dynsym, PLT names, segments, and the
 * MiniDebugInfo ELF inside .gnu_debugdata (xz).
 */
#include "fuzz.h"
#include "fuzz_symtab.h"

FUZZ_TARGET(symtab_elf)
{
	volatile uint64_t sink = 0;
	struct symtab *st;
	char path[64];
	int fd = fuzz_memfd(data, size);

	st = symtab_load_elf(fuzz_fd_path(fd, path, sizeof(path)));
	if (st)
		sink = fuzz_symtab_use(st);
	(void)sink;
	symtab_free(st);
	close(fd);
	return 0;
}
