/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GNU build-ids of ELF files (the NT_GNU_BUILD_ID note).
 *
 * A Go binary has its own build ID note instead, and once stripped (`-ldflags=-s`) no
 * symbol table perf could name its frames by.  Such a file (a Go build ID, no GNU one,
 * no .symtab) is given a build-id derived from its Go build ID, "g0" and 18 bytes of
 * hash: a recording names the file by it, and the build-id cache keeps under it a copy
 * with a symbol table from .gopclntab and a GNU note carrying it (bidcache.h).
 */
#ifndef PA_BUILDID_H
#define PA_BUILDID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BID_MAX 20 /* perf keeps 20 bytes; longer ids are truncated like perf does */

/* Read the build-id of the ELF file at path / open fd.  Returns its size (> 0),
 * 0 when the file has none, -errno when it is not a readable ELF file. */
int bid_read_path(const char *path, uint8_t out[BID_MAX]);
int bid_read_fd(int fd, uint8_t out[BID_MAX]);
/* The same, saying whether the id was derived from a Go build ID (see above). */
int bid_read_fd_derived(int fd, uint8_t out[BID_MAX], bool *derived);
/* The running kernel's, from /sys/kernel/notes. */
int bid_read_kernel(uint8_t out[BID_MAX]);

/* "abcdef..." (2*size+1 bytes needed). */
void bid_to_hex(char *out, const uint8_t *bid, size_t size);

#endif /* PA_BUILDID_H */
