// SPDX-License-Identifier: Apache-2.0
/*
 * ELF symbol tables from a path: .symtab/.dynsym, PLT names, segments, and the
 * MiniDebugInfo ELF inside .gnu_debugdata (xz).
 */
#include "fuzz.h"
#include "fuzz_symtab.h"

FUZZ_TARGET(symtab_elf)
{
	return fuzz_symtab_run(data, size, symtab_load_elf);
}
