/* SPDX-License-Identifier: Apache-2.0 */
/* GNU build-ids of ELF files (the NT_GNU_BUILD_ID note). */
#ifndef PA_BUILDID_H
#define PA_BUILDID_H

#include <stddef.h>
#include <stdint.h>

#define BID_MAX 20 /* perf keeps 20 bytes; longer ids are truncated like perf does */

/* Read the build-id of the ELF file at path / open fd.  Returns its size (> 0),
 * 0 when the file has none, -errno when it is not a readable ELF file. */
int bid_read_path(const char *path, uint8_t out[BID_MAX]);
int bid_read_fd(int fd, uint8_t out[BID_MAX]);
/* The running kernel's, from /sys/kernel/notes. */
int bid_read_kernel(uint8_t out[BID_MAX]);

/* "abcdef..." (2*size+1 bytes needed). */
void bid_to_hex(char *out, const uint8_t *bid, size_t size);

#endif /* PA_BUILDID_H */
