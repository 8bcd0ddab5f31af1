/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Finding the separate debug file of an ELF file, the way gdb and perf do: by build-id
 * under the debug directories and perf's build-id cache, by .gnu_debuglink (CRC-checked)
 * next to the file, in its .debug/ and under the debug directories, and last through
 * debuginfod.  A candidate whose build-id differs from the file's is never taken.
 */
#ifndef PA_DEBUGINFO_H
#define PA_DEBUGINFO_H

#include <stddef.h>
#include <stdint.h>

struct dbg_opts {
	const char *debug_dirs;	     /* ':'-separated roots; NULL: "/usr/lib/debug" */
	const char *buildid_dir;     /* perf's build-id cache ("$HOME/.debug"); NULL: none */
	const char *debuginfod_urls; /* NULL: $DEBUGINFOD_URLS; "": never ask a server */
	int debuginfod_timeout_s;    /* NULL/0: $DEBUGINFOD_TIMEOUT, else 5 */
};

struct dbg_finder;

struct dbg_finder *dbg_new(const struct dbg_opts *opts);
void dbg_free(struct dbg_finder *f);

/*
 * The debug file for the ELF file at path (which may be NULL when only the build-id is
 * known).  bid/bid_size: the build-id the debug file must carry (the file's own is read
 * when bid_size is 0).  Returns a malloc'ed path, or NULL with errno ENOENT.
 */
char *dbg_find(struct dbg_finder *f, const char *path, const uint8_t *bid, size_t bid_size);

/* The executable itself from debuginfod, for a file that is gone.  As dbg_find. */
char *dbg_find_executable(struct dbg_finder *f, const uint8_t *bid, size_t bid_size);

/* The .gnu_debuglink of an ELF file: name into buf and its CRC.  0 or -errno (-ENOENT). */
int dbg_read_debuglink(const char *path, char *buf, size_t len, uint32_t *crc);
/* CRC32 of a whole file as .gnu_debuglink computes it.  0 or -errno. */
int dbg_file_crc(const char *path, uint32_t *crc);

#endif /* PA_DEBUGINFO_H */
