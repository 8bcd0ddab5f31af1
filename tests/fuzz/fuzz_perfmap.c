// SPDX-License-Identifier: Apache-2.0
/* A JIT's /tmp/perf-PID.map ("START SIZE name" per line, hex), from a path. */
#include "fuzz.h"
#include "fuzz_symtab.h"

FUZZ_TARGET(perfmap)
{
	volatile uint64_t sink = 0;
	struct symtab *st;
	char path[64];
	int fd = fuzz_memfd(data, size);

	st = symtab_load_perfmap(fuzz_fd_path(fd, path, sizeof(path)));
	if (st)
		sink = fuzz_symtab_use(st);
	(void)sink;
	symtab_free(st);
	close(fd);
	return 0;
}
