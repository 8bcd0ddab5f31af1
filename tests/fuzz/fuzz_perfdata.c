// SPDX-License-Identifier: Apache-2.0
/*
 * perf.data in file mode (or pipe mode, when the header says so) from a path, read in
 * time order as pa-report reads it (the pipe target covers unordered reading too).
 */
#include <unistd.h>

#include "fuzz.h"
#include "fuzz_pd.h"

FUZZ_TARGET(perfdata)
{
	volatile uint64_t sink;
	char path[64];
	int fd = fuzz_memfd(data, size);

	fuzz_fd_path(fd, path, sizeof(path));
	sink = fuzz_pd_read(path, true);
	(void)sink;
	close(fd);
	return 0;
}
