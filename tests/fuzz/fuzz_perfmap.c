// SPDX-License-Identifier: Apache-2.0
/* A JIT's /tmp/perf-PID.map ("START SIZE name" per line, hex), from a path. */
#include "fuzz.h"
#include "fuzz_symtab.h"

FUZZ_TARGET(perfmap)
{
	return fuzz_symtab_run(data, size, symtab_load_perfmap);
}
