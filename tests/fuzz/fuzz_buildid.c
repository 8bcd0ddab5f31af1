// SPDX-License-Identifier: Apache-2.0
/*
 * What identifies an ELF file: the NT_GNU_BUILD_ID note (sections, then PT_NOTE
 * segments) from an fd, the .gnu_debuglink name and CRC from a path, and whether it is
 * a CPython interpreter (_PyRuntime, Py_Version, _Py_DebugOffsets); and the same bytes
 * as a code object's co_linetable.
 */
#include <string.h>

#include "symbolize/buildid.h"
#include "symbolize/cpython.h"
#include "symbolize/debuginfo.h"
#include "fuzz.h"

FUZZ_TARGET(buildid)
{
	uint8_t bid[BID_MAX];
	char path[64], link[4096], hex[2 * BID_MAX + 1], ver[32];
	struct cpython_elf py;
	volatile size_t sink = 0;
	uint32_t crc;
	int n, fd = fuzz_memfd(data, size);

	n = bid_read_fd(fd, bid);
	if (n > 0) {
		bid_to_hex(hex, bid, (size_t)n);
		sink += strlen(hex);
	}
	if (!dbg_read_debuglink(fuzz_fd_path(fd, path, sizeof(path)), link, sizeof(link), &crc))
		sink += strlen(link) + crc;
	if (!cpython_probe_fd(fd, &py)) {
		sink += py.runtime + strlen(cpython_version_str(py.version, ver, sizeof(ver)));
		sink += cpython_unsupported(&py) != NULL;
	}
	sink += (size_t)cpython_line(data, size, 1, (int64_t)size);
	sink += (size_t)cpython_line(data, size, 1, 3);
	(void)sink;
	close(fd);
	return 0;
}
