/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the fuzz targets share.  Each tests/fuzz/fuzz_NAME.c is one target:
 *
 *	FUZZ_TARGET(NAME) { ...feed data/size to one parser...; return 0; }
 *
 * built alone with -fsanitize=fuzzer it is LLVMFuzzerTestOneInput (make fuzz); with
 * FUZZ_REPLAY defined it is fuzz_NAME(), so tests/unit/test_fuzz_regress.c can include
 * every target in one binary and replay the corpus and the regression inputs with any
 * compiler (make check).  Statics of a target are prefixed with its name for the same
 * reason.
 */
#ifndef PA_FUZZ_H
#define PA_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#ifdef FUZZ_REPLAY
#define FUZZ_TARGET(name) int fuzz_##name(const uint8_t *data, size_t size)
#else
#define FUZZ_TARGET(name) int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
#endif

/* The parsers under test take paths or fds: the input as an anonymous file, offset 0. */
static inline int fuzz_memfd(const void *data, size_t size)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);
	size_t off = 0;

	if (fd < 0) {
		perror("memfd_create");
		abort();
	}
	while (off < size) {
		ssize_t n = write(fd, (const char *)data + off, size - off);

		if (n <= 0) {
			perror("memfd write");
			abort();
		}
		off += (size_t)n;
	}
	if (lseek(fd, 0, SEEK_SET) != 0)
		abort();
	return fd;
}

/* "/proc/self/fd/N": a path that opens fd's file anew (its own offset). */
static inline const char *fuzz_fd_path(int fd, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/self/fd/%d", fd);
	return buf;
}

#endif /* PA_FUZZ_H */
