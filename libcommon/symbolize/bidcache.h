/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Build-id cache in Linux perf's layout, so that a report made after the profiled
 * binaries were deleted, upgraded or left with their container still finds them,
 * and so does `perf report`:
 *
 *   DIR/<path of the file>/<hex build-id>/elf          the file (hard link or copy)
 *   DIR/.build-id/<hex[0:2]>/<hex[2:]> -> ../../<path of the file>/<hex build-id>
 *
 * DIR defaults to $HOME/.debug, as perf's.  JIT maps (/tmp/perf-PID.map) of the
 * recorded processes are kept as DIR/jit/perf-PID.map.
 */
#ifndef PA_BIDCACHE_H
#define PA_BIDCACHE_H

#include <stddef.h>
#include <stdint.h>

struct bidc_stats {
	unsigned int added;    /* files newly cached */
	unsigned int present;  /* already in the cache */
	unsigned int missing;  /* no readable file with the recorded build-id */
	unsigned int jit_maps; /* perf-PID.map files saved */
};

/*
 * Cache the file behind one recorded mapping: src is what to read (a path, or
 * /proc/PID/map_files/START-END), path the file's name in the recording (the cache
 * directory is named for it).  src's build-id must be bid.  Hard-linked when src is
 * on the cache's filesystem, else copied; a stripped Go binary, whose build-id is
 * derived (buildid.h), is copied with a symbol table and that build-id added
 * (elfadd.h).  Written under a temporary name and renamed, so a crash leaves no half
 * file.  1 when added, 0 when already cached, -errno.
 */
int bidc_add(const char *dir, const uint8_t *bid, size_t bid_size, const char *path,
	     const char *src);

/*
 * After a recording: cache the user-space files of perf_data's build-id table that
 * samples hit, as perf record does (not every library mapped; fork children count
 * on their parent's mappings), reached through the mapping process's
 * /proc/PID/map_files or /proc/PID/root while it is there, else the path; and the
 * JIT maps (perf-PID.map) of the processes that have samples.  dir NULL:
 * $HOME/.debug.  Files that cannot be found are counted, not errors.  0 or -errno
 * (unreadable perf_data, cache directory not writable).
 */
int bidc_save(const char *perf_data, const char *dir, struct bidc_stats *st);

/* DIR/jit/perf-PID.map into buf; the fallback where /tmp no longer has the map. */
const char *bidc_jit_map_path(const char *dir, uint32_t pid, char *buf, size_t len);

#endif /* PA_BIDCACHE_H */
