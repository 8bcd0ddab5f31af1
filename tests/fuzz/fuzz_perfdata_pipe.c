// SPDX-License-Identifier: Apache-2.0
/*
 * perf.data in pipe mode from stdin ("-"): the input is one flags byte (bit 0: time
 * ordered, as pa-report reads) and the records after the 16-byte pipe header, which
 * the target writes itself so that no input is spent on the header.
 */
#include <unistd.h>

#include "fuzz.h"
#include "fuzz_pd.h"

FUZZ_TARGET(perfdata_pipe)
{
	const struct perf_pipe_file_header h = {PERF_MAGIC2, sizeof(h)};
	volatile uint64_t sink;
	uint8_t *buf;
	int fd, in;

	if (!size)
		return 0;
	buf = malloc(sizeof(h) + size - 1);
	if (!buf)
		abort();
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), data + 1, size - 1);
	fd = fuzz_memfd(buf, sizeof(h) + size - 1);
	free(buf);
	in = dup(STDIN_FILENO);
	if (dup2(fd, STDIN_FILENO) < 0)
		abort();
	sink = fuzz_pd_read("-", data[0] & 1);
	(void)sink;
	if (in >= 0) {
		dup2(in, STDIN_FILENO);
		close(in);
	} else {
		close(STDIN_FILENO);
	}
	close(fd);
	return 0;
}
