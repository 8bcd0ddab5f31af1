/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The contract between the BPF stack walker (unwind.bpf.h) and pa-record's user side
 * (cmd/record/unwind.c): the maps that tell the walker where a process's code is and
 * which rows of bpf/unwind_rows.h describe it, and the reasons a walk ends.
 * Included by BPF code (after vmlinux.h) and by user space.
 *
 * Layout (simpler than the sharded proposal of unwind_rows.h, and enough here):
 *   unwind_rows:   one ARRAY of struct unwind_row, BPF_F_MMAPABLE, sized at load
 *                  (--unwind-rows); user space bump-allocates every table in it through
 *                  mmap, so loading a table is a memcpy, not a syscall per row.  A
 *                  table is loaded once per binary (by device/inode and build-id) and
 *                  shared by every process that maps it.
 *   unwind_tables: ARRAY, table id -> struct unwind_table_info (shard is always 0).
 *   unwind_procs:  HASH, tgid -> struct unwind_proc: the process's executable file
 *                  mappings, sorted by start, each with its table.
 *   unwind_missing, unwind_notify: a process without an entry (or whose pc fell
 *                  outside every mapping) is put in unwind_missing once, and its pid
 *                  sent on the small unwind_notify ring so pa-record wakes and loads it;
 *                  so is every process that execs, as it execs.  A forked child gets a
 *                  copy of its parent's entry in the kernel, at the fork.
 */
#ifndef PA_UNWIND_H
#define PA_UNWIND_H

#include "unwind_rows.h"

/* --unwind */
#define UNWIND_MODE_FP	 0 /* bpf_get_stack's frame-pointer walk */
#define UNWIND_MODE_CFI	 1 /* CFI only: a frame without a table ends the walk */
#define UNWIND_MODE_AUTO 2 /* CFI where a table covers the pc, frame pointer elsewhere */

/* Executable mappings kept per process: a python with 60 extension modules has ~130. */
#define UNWIND_MAX_MAPS	    512
#define UNWIND_MAP_STEPS    10 /* binary search probes: log2(UNWIND_MAX_MAPS) + 1 */
#define UNWIND_MAX_PROCS    4096
#define UNWIND_MAX_TABLES   8192
#define UNWIND_NO_TABLE	    0xffffffffu /* mapping known, but its file has no usable CFI */
#define UNWIND_DEFAULT_ROWS (4u << 20)	/* 32 MiB of rows */

struct unwind_map {
	__u64 start, end; /* [start, end) in the process */
	__u64 adj;	  /* table pc = pc - adj */
	__u32 table;	  /* index into unwind_tables, or UNWIND_NO_TABLE */
	__u32 __pad;
};

struct unwind_proc {
	__u32 n; /* used entries of m[], sorted by start, non-overlapping, all below 2^63 */
	__u32 __pad;
	struct unwind_map m[UNWIND_MAX_MAPS];
};

/* Map values written by pa-record (gcc) and read by the walker (clang -target bpf). */
_Static_assert(sizeof(struct unwind_map) == 32, "unwind_map size");
_Static_assert(__builtin_offsetof(struct unwind_map, end) == 8, "unwind_map.end");
_Static_assert(__builtin_offsetof(struct unwind_map, adj) == 16, "unwind_map.adj");
_Static_assert(__builtin_offsetof(struct unwind_map, table) == 24, "unwind_map.table");
_Static_assert(sizeof(struct unwind_proc) == 8 + 32 * UNWIND_MAX_MAPS, "unwind_proc size");
_Static_assert(__builtin_offsetof(struct unwind_proc, m) == 8, "unwind_proc.m");

/*
 * unwind_files: a file whose table is loaded, by the kernel's device number and
 * inode, with its executable segment, so that the walker can place a pc in a
 * mapping pa-record has not published yet (a new process, a library just mapped)
 * from the VMA alone: table pc = pc - (vm_start - (vaddr + (pgoff - off)) + base).
 */
struct unwind_file_key {
	__u64 dev; /* the kernel's dev_t: major << 20 | minor */
	__u64 ino;
};

struct unwind_file {
	__u64 vaddr, off, filesz; /* the executable PT_LOAD segment */
	__u64 base;		  /* the table's base */
	__u32 table;		  /* index into unwind_tables */
	__u32 __pad;
};

_Static_assert(sizeof(struct unwind_file_key) == 16, "unwind_file_key size");
_Static_assert(sizeof(struct unwind_file) == 40, "unwind_file size");

/* What unwind_notify carries: a process to (re)load, why, and since when. */
#define UNWIND_NOTICE_WALK 0 /* a walk found the process unknown or its mappings stale */
#define UNWIND_NOTICE_EXEC 1 /* the process exec'd: its new mappings are to be loaded */

struct unwind_notice {
	__u32 pid;
	__u32 why;  /* UNWIND_NOTICE_* */
	__u64 time; /* bpf_ktime_get_ns() when it was sent */
};

_Static_assert(sizeof(struct unwind_notice) == 16, "unwind_notice size");

/* Slots of the per-CPU unwind_stats counters: how each walk ended, then frame counts. */
#define UNWIND_END_COMPLETE	 0 /* outermost row (undefined RA), or FP chain end (rbp 0) */
#define UNWIND_END_TABLE_MISSING 1 /* a pc without a table, and the FP fallback failed */
#define UNWIND_END_UNSUPPORTED	 2 /* a row the walker cannot follow, FP fallback failed */
#define UNWIND_END_READ_FAILED	 3 /* user stack not readable where the rules pointed */
#define UNWIND_END_DEPTH	 4 /* PROFILE_MAX_UFRAMES reached: truncated */
#define UNWIND_END_GONE		 5 /* in exec or exit: no user stack to walk, none kept */
#define UNWIND_END_NR		 6
#define UNWIND_FRAMES_CFI	 6 /* frames stepped by a CFI row */
#define UNWIND_FRAMES_FP	 7 /* frames stepped by the frame pointer */
#define UNWIND_MISSING_FULL	 8 /* processes without tables not asked for: unwind_missing full */
#define UNWIND_NOTIFY_LOST	 9 /* requests for tables lost (unwind_notify full), asked again */
#define UNWIND_FORK_LOST	 10 /* children not given their parent's entry (map full) */
#define UNWIND_FRAMES_VMA	 11 /* frames placed from the VMA, the mapping not yet loaded */
#define UNWIND_SLICE_SKIPPED	 12 /* stack slices not sent: the ring buffer over half full */
#define UNWIND_STATS_NR		 13

#endif /* PA_UNWIND_H */
