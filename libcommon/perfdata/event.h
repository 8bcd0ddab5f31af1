/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One typed struct per perf record we read or write, laid out as perf's
 * tools/lib/perf/include/perf/event.h lays them out, and one decoder per type.
 *
 * Decoders take a record h with avail bytes readable at h and check that it is whole
 * before anything is returned: header.size within avail, the type theirs, the fixed
 * part inside header.size, every string NUL-terminated before header.size.  Otherwise
 * -EINVAL.  On success the decoded view holds copies of the fixed fields (a record
 * need not be aligned) and pointers into the record for strings and build-ids, valid
 * as long as the record is.  A sample_id_all trailer may follow; pd_parse_sid
 * decodes it.  Nothing outside event.c reads a record's bytes by offset.
 */
#ifndef PA_EVENT_H
#define PA_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "perfdata/perfdata.h"

/* ---- on-disk layouts ---- */

struct perf_record_mmap {
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t start;
	uint64_t len;
	uint64_t pgoff;
	char filename[]; /* NUL-terminated, zero padded to 8 */
};

struct perf_record_mmap2 {
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t start;
	uint64_t len;
	uint64_t pgoff;
	union {
		struct {
			uint32_t maj;
			uint32_t min;
			uint64_t ino;
			uint64_t ino_generation;
		};
		struct { /* header.misc & PERF_RECORD_MISC_MMAP_BUILD_ID */
			uint8_t build_id_size;
			uint8_t __reserved_1;
			uint16_t __reserved_2;
			uint8_t build_id[20];
		};
	};
	uint32_t prot;
	uint32_t flags;
	char filename[]; /* NUL-terminated, zero padded to 8 */
};

struct perf_record_comm {
	struct perf_event_header header;
	uint32_t pid, tid;
	char comm[]; /* NUL-terminated, at most 16 bytes with the NUL, padded to 8 */
};

/* PERF_RECORD_FORK and PERF_RECORD_EXIT. */
struct perf_record_fork {
	struct perf_event_header header;
	uint32_t pid, ppid;
	uint32_t tid, ptid;
	uint64_t time;
};

struct perf_record_lost {
	struct perf_event_header header;
	uint64_t id;
	uint64_t lost;
};

struct perf_record_lost_samples {
	struct perf_event_header header;
	uint64_t lost;
};

struct perf_record_cgroup {
	struct perf_event_header header;
	uint64_t id;
	char path[]; /* NUL-terminated, zero padded to 8 */
};

/*
 * PERF_RECORD_HEADER_BUILD_ID records, and the entries of the HEADER_BUILD_ID feature
 * (the same bytes with header.type 0).  header.misc: PERF_RECORD_MISC_USER/KERNEL,
 * plus PERF_RECORD_MISC_BUILD_ID_SIZE when size is valid.
 */
struct perf_record_header_build_id {
	struct perf_event_header header;
	int32_t pid;
	union {
		uint8_t build_id[24];
		struct {
			uint8_t data[20];
			uint8_t size;
			uint8_t reserved1__;
			uint16_t reserved2__;
		};
	};
	char filename[]; /* NUL-terminated, padded to 64 (and to 8 in a stream) */
};

/* ---- decoded views ---- */

/* PERF_RECORD_MMAP or PERF_RECORD_MMAP2. */
struct pd_mmap {
	uint32_t type;
	uint16_t misc;
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	/* MMAP2 whose union holds the file's device and inode; else all 0. */
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	/*
	 * MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID: the build-id (size 0..20; 0 when
	 * the kernel could not read it).  NULL otherwise, and also when the size byte is
	 * over 20: some kernels (seen on 6.18) set the flag on records that hold the
	 * device and inode instead; such a record is read as carrying neither.
	 */
	const uint8_t *build_id;
	uint8_t build_id_size;
	uint32_t prot, flags; /* MMAP2; 0 for MMAP */
	const char *filename;
};

struct pd_comm {
	uint16_t misc; /* PERF_RECORD_MISC_COMM_EXEC: the thread exec'ed */
	uint32_t pid, tid;
	const char *comm;
};

/* PERF_RECORD_FORK or PERF_RECORD_EXIT. */
struct pd_task {
	uint32_t type;
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

struct pd_lost {
	uint64_t id; /* sample id of the event that lost records */
	uint64_t lost;
};

struct pd_lost_samples {
	uint16_t misc;
	uint64_t lost;
};

/*
 * PERF_RECORD_CGROUP: samples with PERF_SAMPLE_CGROUP == id ran in the cgroup at path.
 * pa-record may put labels after the path's NUL, which perf ignores:
 *
 *	"pa-labels\0" "key=value\0" ... "\0"
 *
 * (the first string cannot start a sample_id trailer, whose pid or time comes first).
 */
#define PD_CGROUP_LABELS "pa-labels"

struct pd_cgroup {
	uint64_t id;
	const char *path;
	const char *labels; /* "key=value\0"... ending in "\0", or NULL */
	size_t labels_len;  /* bytes, the final NUL included */
};

struct pd_header_build_id {
	uint16_t misc; /* cpumode in PERF_RECORD_MISC_CPUMODE_MASK */
	int32_t pid;
	const uint8_t *build_id;
	/* The size byte when PERF_RECORD_MISC_BUILD_ID_SIZE says it is valid and it is
	 * 1..20; else 20, what perf meant before the byte existed. */
	uint8_t size;
	const char *filename;
};

int pd_parse_mmap(const struct perf_event_header *h, size_t avail, struct pd_mmap *m);
int pd_parse_comm(const struct perf_event_header *h, size_t avail, struct pd_comm *c);
int pd_parse_task(const struct perf_event_header *h, size_t avail, struct pd_task *t);
int pd_parse_lost(const struct perf_event_header *h, size_t avail, struct pd_lost *l);
int pd_parse_lost_samples(const struct perf_event_header *h, size_t avail,
			  struct pd_lost_samples *l);
int pd_parse_cgroup(const struct perf_event_header *h, size_t avail, struct pd_cgroup *c);
/* header.type is not checked: feature entries carry 0 there. */
int pd_parse_header_build_id(const struct perf_event_header *h, size_t avail,
			     struct pd_header_build_id *b);

/* Trailer size in bytes of a non-sample record for sample_type (sample_id_all set). */
size_t pd_sid_size(uint64_t sample_type);
/* Decode the trailer at the end of record h; 0 or -EINVAL when it does not fit. */
int pd_parse_sid(uint64_t sample_type, const struct perf_event_header *h, struct pd_sample_id *sid);

#endif /* PA_EVENT_H */
