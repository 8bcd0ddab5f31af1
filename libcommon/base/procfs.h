/* SPDX-License-Identifier: Apache-2.0 */
/* What pa-record reads of a live process from /proc: maps, threads, comm. */
#ifndef PA_PROCFS_H
#define PA_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_map {
	uint64_t start, end, pgoff;
	uint32_t prot;	/* PROT_READ|PROT_WRITE|PROT_EXEC */
	uint32_t flags; /* MAP_PRIVATE or MAP_SHARED */
	uint32_t maj, min;
	uint64_t ino;
	char *path;   /* "/usr/lib/...", "[vdso]", "//anon" for anonymous executable maps */
	bool deleted; /* the file was " (deleted)" (suffix not part of path) */
};

/* Parse /proc/PID/maps.  exec_only keeps only executable mappings (what samples hit).
 * Returns the count (>= 0) with *maps malloc'ed (free with proc_maps_free), or -errno. */
int proc_read_maps(pid_t pid, bool exec_only, struct proc_map **maps);
/* The same from maps text (NUL-terminated, cut into lines in place). */
int proc_parse_maps(char *text, bool exec_only, struct proc_map **maps);
void proc_maps_free(struct proc_map *maps, size_t n);

/* Thread ids under /proc/PID/task.  Count or -errno; *tids malloc'ed. */
int proc_list_tids(pid_t pid, pid_t **tids);
/* Every process id under /proc.  Count or -errno; *pids malloc'ed. */
int proc_list_pids(pid_t **pids);

/* /proc/PID/task/TID/comm without the newline.  0 or -errno. */
int proc_read_comm(pid_t pid, pid_t tid, char *buf, size_t len);
/* Parent pid and tgid of a thread (from status).  0 or -errno. */
int proc_read_ppid_tgid(pid_t tid, pid_t *ppid, pid_t *tgid);
bool proc_exists(pid_t pid);

#endif /* PA_PROCFS_H */
