/* SPDX-License-Identifier: Apache-2.0 */
/*
 * On-disk cache of compiled unwind tables, one file per build-id
 * (DIR/<hex build-id>.cfi), so a binary is compiled once per machine and a second run
 * starts fast.  Files are written under a temporary name and renamed into place;
 * a header carries a format version, the row size and a checksum, and anything that
 * does not match is a miss, never a wrong table.
 */
#ifndef PA_CFI_CACHE_H
#define PA_CFI_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind/cfi_compile.h"

/* Bump on any change of the file layout, of struct unwind_row or of what rows mean. */
#define CFI_CACHE_VERSION 3

/*
 * $XDG_CACHE_HOME/perf-agent/cfi when set; else /var/cache/perf-agent/cfi for root;
 * else $HOME/.cache/perf-agent/cfi.  Malloc'ed, or NULL with errno (ENOENT: no HOME).
 */
char *cfi_cache_default_dir(void);

/*
 * The cached table for a build-id.  NULL with errno: ENOENT (not cached), ESTALE (other
 * version, truncated, corrupt or for another build-id: recompile and store over it),
 * EPERM (file owned by another user than us or root: not trusted), ENOMEM.
 */
struct cfi_table *cfi_cache_load(const char *dir, const uint8_t *bid, size_t bid_size);

/*
 * The same table's rows read straight into dst (room for cap rows), with its base in
 * *base: what a loader that keeps every table in one array wants, with no copy.  The
 * row count, or -errno as above, and -ENOSPC when it has more than cap rows.  dst
 * past the rows read may have been written.
 */
long cfi_cache_read(const char *dir, const uint8_t *bid, size_t bid_size, struct unwind_row *dst,
		    size_t cap, uint64_t *base);

/*
 * Store t under its build-id in dir (created, with parents, if missing).  0 or -errno;
 * -ENODATA when t has no build-id (such tables are never cached).
 */
int cfi_cache_store(const char *dir, const struct cfi_table *t);

/*
 * The table for the ELF file at path: from the cache when its build-id is there, else
 * compiled and stored (a failed store is not an error: the table is still returned).
 * dir NULL: no cache.  *hit (may be NULL) says which.  NULL with errno as
 * cfi_compile_elf.
 */
struct cfi_table *cfi_cache_get(const char *dir, const char *path, const struct cfi_opts *opts,
				bool *hit);

#endif /* PA_CFI_CACHE_H */
