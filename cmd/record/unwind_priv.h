/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What unwind.c (the tables, the processes' mappings) and slice.c (walks finished
 * from stack slices) share inside pa-record.
 */
#ifndef PA_RECORD_UNWIND_PRIV_H
#define PA_RECORD_UNWIND_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "profile.h"
#include "unwind.h"

struct cfi_table;
struct proc_map;
struct rec_file;
struct rec_session;
struct uw_compiler;

#define UW_SLICE_RELOAD_NS 5000000ULL /* a stack slice reloads an unloaded process every 5 ms */
#define UW_MAX_HELD	   1024 /* slices held for a table or the side-band (<= 41 KiB each) */
#define UW_COMPILE_WAIT_NS 3000000000ULL /* at the end: tables still compiling get 3 s */

/* What became of a stack slice (slice.c). */
enum uw_slice_why {
	UW_SLICE_DONE,	 /* the walk completed */
	UW_SLICE_GONE,	 /* the process was gone before its mappings could be read */
	UW_SLICE_EXEC,	 /* taken before the process exec'd */
	UW_SLICE_SHORT,	 /* the walk went past the end of the copy */
	UW_SLICE_NOWALK, /* no row and no frame pointer to go on by */
	UW_SLICE_DEPTH,	 /* the walk reached the depth limit */
	UW_SLICE_NR,
};

struct uw_proc {
	pid_t pid;
	bool loaded;
	bool pending;	    /* reload at the next round */
	bool mapped;	    /* the side-band showed it mapping code since the last load */
	bool notified;	    /* the BPF side asked: its unwind_missing entry is to be cleared */
	uint64_t notify_ns; /* when the last load the BPF side asked for ran */
	uint64_t load_ns;   /* when it was last loaded */
	uint64_t exec_ns;   /* when it exec'd, until its new mappings are loaded */
	bool awaits;	    /* published without code whose table is compiling */
};

/*
 * A process's executable file mappings as the side-band showed them since its exec
 * (or its parent's, from its fork): what a stack slice is finished with when the
 * process is gone before /proc could be read.
 */
struct uw_sbmap {
	uint64_t start, end, pgoff;
	uint32_t maj, min;
	uint64_t ino;
	char *path;
};

struct uw_sbproc {
	pid_t pid;
	uint64_t since;	  /* time of its exec (or fork): the mappings hold from then */
	uint64_t until;	  /* time of its exit (0: alive) */
	uint32_t gone_at; /* the round after its EXIT was seen (0: alive) */
	size_t n, cap;
	struct uw_sbmap *m;
};

/*
 * A stack slice held while tables are compiling (they may be the ones it needs), or
 * until the side-band of its round is read (gone: its process had exited).
 */
struct uw_held {
	struct uw_held *next;
	size_t size;
	bool gone;
	struct profile_slice_sample ss; /* size bytes of it */
};

/* A file compiled by the worker (compile.c): what the main thread loads at its round. */
struct uw_job {
	struct uw_job *next;
	size_t file;	     /* its index in rec_session.files */
	int fd;		     /* the worker's own copy, closed once compiled */
	char *path;	     /* for messages */
	struct cfi_table *t; /* NULL: not compiled, err says why */
	int err;
	uint64_t t0, ns; /* when the compile started, and how long it took */
};

struct rec_unwind {
	char *cache_dir;
	struct unwind_row *rows; /* mmap of unwind_rows */
	size_t rows_cap, rows_used, rows_len;
	uint32_t nr_tables;
	struct unwind_table_info tables[UNWIND_MAX_TABLES]; /* as in unwind_tables */
	bool rows_full_warned;
	struct uw_proc *procs;
	size_t nr_procs, cap_procs;
	struct unwind_proc *val; /* scratch for one map value (16 KiB) */
	struct bpf_link *exec_link, *fork_link, *free_link;
	uint64_t *exec_lat; /* ns from each exec to its mappings in the kernel */
	size_t nr_exec_lat, cap_exec_lat;
	uint64_t loads, cache_hits, compiled;
	struct uw_compiler *compiler; /* compile.c, started on the first cache miss */
	bool compiler_failed;	      /* no thread: compile in the sample loop */
	size_t compiles;	      /* queued and not taken back yet */
	uint64_t procs_full;	      /* processes not published: unwind_procs full */
	uint64_t maps_cut; /* processes with more than UNWIND_MAX_MAPS executable mappings */
	/* Stack slices (slice.c): received, and of the walks they completed how
	 * the walk in the kernel had ended (UNWIND_END_*). */
	uint64_t slices, slice_fixed[UNWIND_END_NR];
	uint64_t slice_why[UW_SLICE_NR]; /* what became of each slice */
	struct uw_sbproc *sb;		 /* side-band mappings, by process */
	size_t nr_sb, cap_sb;
	uint32_t round;			   /* rounds so far */
	struct uw_held *held, **held_tail; /* slices of gone processes, in arrival order */
	size_t nr_held;
};

/* unwind.c */
struct uw_proc *uw_proc_get(struct rec_unwind *u, pid_t pid, bool create);
void uw_proc_forget(struct rec_unwind *u, struct uw_proc *p);
/* Load p's mappings now, and settle what asked for it.  -ESRCH when it is gone. */
int uw_proc_reload(struct rec_session *s, struct uw_proc *p, uint64_t now);
/* Fill e for mapping m of a file: table pc = pc - adj. */
void uw_map_entry(const struct rec_file *f, const struct proc_map *m, struct unwind_map *e);

/* compile.c: the table compiler thread. */
/* Compile file (index in rec_session.files, known by device and inode), open at fd (a
 * copy is kept); -ENOSYS when there is no worker thread. */
int uw_compile_queue(struct rec_unwind *u, size_t file, int fd, const char *path);
/* The compiles finished since the last call, in the order queued (may be NULL). */
struct uw_job *uw_compile_take(struct rec_unwind *u);
/* Wait until every queued compile is done, or timeout_ns; those not started by then
 * are cancelled (err ECANCELED). */
void uw_compile_wait(struct rec_unwind *u, uint64_t timeout_ns);
void uw_job_free(struct uw_job *j);
void uw_compile_stop(struct rec_unwind *u);

/* slice.c */
void uw_slices_free(struct rec_unwind *u);
void uw_slice_summary(const struct rec_unwind *u);

#endif /* PA_RECORD_UNWIND_PRIV_H */
