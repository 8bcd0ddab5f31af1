/* SPDX-License-Identifier: Apache-2.0 */
/*
 * perf.data writer: file mode (seekable, header rewritten at close, features after
 * the data) or pipe mode (header records inline), as Linux perf writes them.
 *
 * Lifecycle: pd_writer_open -> pd_writer_add_attr (all events, before any record)
 * -> pd_write_* records -> pd_writer_set_* features (any time before close)
 * -> pd_writer_close (or pd_writer_abort).  In file mode output goes to a temp file
 * renamed into place by close, so a reader never sees a half-written file.
 *
 * All int functions return 0 or -errno.
 */
#ifndef PA_PD_WRITE_H
#define PA_PD_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfdata/perfdata.h"

struct pd_writer;

struct pd_writer_opts {
	const char *path; /* "-" = stdout */
	bool pipe;	  /* pipe-mode stream (forced when path is "-" or not seekable) */
	bool keep_old;	  /* rename an existing file to PATH.old, like perf */
	/* 0: plain records; 1..22: zstd level, records go out as PERF_RECORD_COMPRESSED
	 * (perf record -z), HEADER_COMPRESSED says so (pd_zstd.h). */
	int compress_level;
};

/* NULL and errno on failure (EINVAL: a compress_level out of range). */
struct pd_writer *pd_writer_open(const struct pd_writer_opts *opts);

/*
 * Declare an event.  Every attr must share the sample_id_all layout (the writer uses
 * attr 0's sample_type for the trailer of non-sample records).  ids: the sample ids
 * samples of this event carry in PERF_SAMPLE_IDENTIFIER.  name goes to EVENT_DESC.
 * sample_type may use IDENTIFIER|IP|TID|TIME|ADDR|ID|CPU|PERIOD|CALLCHAIN|RAW|CGROUP; with
 * several events the id must sit at the same place in all of them (perf's rule; use
 * PERF_SAMPLE_IDENTIFIER).  -EINVAL otherwise.  In pipe mode an attr added after the
 * first record is announced at once.  Returns the event index (>= 0) or -errno.
 */
int pd_writer_add_attr(struct pd_writer *w, const struct perf_event_attr *attr, const char *name,
		       const uint64_t *ids, size_t nr_ids);

/* Raw record (header.size bytes, already laid out).  Used for copies and tests. */
int pd_write_raw(struct pd_writer *w, const void *rec);

/* Records.  sid is the sample_id_all trailer; NULL writes zeros. */
int pd_write_sample(struct pd_writer *w, int evidx, const struct pd_sample *s);
int pd_write_comm(struct pd_writer *w, uint32_t pid, uint32_t tid, const char *comm, bool exec,
		  const struct pd_sample_id *sid);
/* PERF_RECORD_MMAP (no device, inode, prot or flags): perf's form for the kernel map. */
int pd_write_mmap(struct pd_writer *w, uint16_t cpumode, uint32_t pid, uint32_t tid, uint64_t start,
		  uint64_t len, uint64_t pgoff, const char *filename,
		  const struct pd_sample_id *sid);
int pd_write_mmap2(struct pd_writer *w, uint16_t cpumode, uint32_t pid, uint32_t tid,
		   uint64_t start, uint64_t len, uint64_t pgoff, uint32_t prot, uint32_t flags,
		   const uint8_t *build_id, size_t build_id_size, /* NULL/0: maj/min/ino zero */
		   const char *filename, const struct pd_sample_id *sid);
/* type: PERF_RECORD_FORK or PERF_RECORD_EXIT. */
int pd_write_task(struct pd_writer *w, uint32_t type, uint32_t pid, uint32_t ppid, uint32_t tid,
		  uint32_t ptid, uint64_t time, const struct pd_sample_id *sid);
int pd_write_lost(struct pd_writer *w, uint64_t id, uint64_t lost, const struct pd_sample_id *sid);
/* PERF_RECORD_LOST_SAMPLES: samples dropped before reaching the buffer. */
int pd_write_lost_samples(struct pd_writer *w, uint64_t lost, const struct pd_sample_id *sid);
/* PERF_RECORD_CGROUP: the cgroup with this id (what samples carry in
 * PERF_SAMPLE_CGROUP) is at path, as the kernel names it ("/system.slice/x.scope").
 * -EINVAL without a path, -E2BIG when it does not fit a record. */
int pd_write_cgroup(struct pd_writer *w, uint64_t id, const char *path,
		    const struct pd_sample_id *sid);
/* The same with labels (len bytes, perfdata/event.h's PD_CGROUP_LABELS form) after the
 * path's NUL: perf reads the path and ignores them.  -EINVAL if they are malformed. */
int pd_write_cgroup_labels(struct pd_writer *w, uint64_t id, const char *path, const char *labels,
			   size_t len, const struct pd_sample_id *sid);
/* In a pipe, the round is written out at once (with what the buffer held before it). */
int pd_write_finished_round(struct pd_writer *w);

/* Features.  Written at close (file mode) or as HEADER_FEATURE records (pipe mode,
 * emitted before the first non-attr record if set by then, else at close). */
int pd_writer_set_string(
	struct pd_writer *w, int feat,
	const char *value); /* HOSTNAME, OSRELEASE, VERSION, ARCH, CPUDESC, CPUID */
int pd_writer_set_nrcpus(struct pd_writer *w, uint32_t online, uint32_t avail);
int pd_writer_set_cmdline(struct pd_writer *w, int argc, char *const argv[]);
int pd_writer_set_total_mem(struct pd_writer *w, uint64_t kb);
/* Fill HOSTNAME, OSRELEASE, VERSION, ARCH, NRCPUS, TOTAL_MEM from this machine. */
int pd_writer_set_host_features(struct pd_writer *w);
/* One BUILD_ID feature entry (file mode) / HEADER_BUILD_ID record (pipe mode, at close).
 * cpumode: PERF_RECORD_MISC_USER or PERF_RECORD_MISC_KERNEL.  Duplicates are dropped. */
int pd_writer_add_build_id(struct pd_writer *w, uint16_t cpumode, int32_t pid,
			   const uint8_t *build_id, size_t size, const char *filename);

/* Bytes of records written so far (data section size). */
uint64_t pd_writer_data_size(const struct pd_writer *w);
/* Write out the records held back, the chunk waiting to be compressed included. */
int pd_writer_flush(struct pd_writer *w);
/* Compressing: bytes of records compressed so far, and of the COMPRESSED records they
 * became (a record header each included).  -ENOENT when not compressing. */
int pd_writer_zstd_stats(const struct pd_writer *w, uint64_t *in, uint64_t *out);

/* Finish: features, final header, fsync, rename.  Frees w in every case. */
int pd_writer_close(struct pd_writer *w);
/* Drop the output (temp file removed).  Frees w. */
void pd_writer_abort(struct pd_writer *w);

#endif /* PA_PD_WRITE_H */
