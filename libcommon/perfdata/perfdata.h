/* SPDX-License-Identifier: Apache-2.0 */
/*
 * perf.data on-disk layout, as documented in Linux perf's
 * tools/perf/Documentation/perf.data-file-format.txt.  Constants keep perf's names.
 * The kernel's record types and perf_event_attr come from <linux/perf_event.h>;
 * this header adds what only the file format has (user records, features).
 */
#ifndef PA_PERFDATA_H
#define PA_PERFDATA_H

#include <linux/perf_event.h>
#include <stdint.h>

#define PERF_MAGIC2 0x32454c4946524550ULL /* "PERFILE2" little endian */

struct perf_file_section {
	uint64_t offset;
	uint64_t size;
};

#define HEADER_FEAT_BITS 256

struct perf_file_header {
	uint64_t magic;
	uint64_t size;	    /* sizeof(struct perf_file_header) */
	uint64_t attr_size; /* sizeof(struct perf_file_attr) */
	struct perf_file_section attrs;
	struct perf_file_section data;
	struct perf_file_section event_types; /* unused, zero */
	uint64_t adds_features[HEADER_FEAT_BITS / 64];
};

/* Pipe mode starts with only magic + size. */
struct perf_pipe_file_header {
	uint64_t magic;
	uint64_t size;
};

struct perf_file_attr {
	struct perf_event_attr attr;
	struct perf_file_section ids; /* array of u64 sample ids */
};

/* Feature bits (adds_features) and HEADER_FEATURE record ids. */
enum {
	HEADER_RESERVED = 0,
	HEADER_TRACING_DATA = 1,
	HEADER_BUILD_ID,
	HEADER_HOSTNAME,
	HEADER_OSRELEASE,
	HEADER_VERSION,
	HEADER_ARCH,
	HEADER_NRCPUS,
	HEADER_CPUDESC,
	HEADER_CPUID,
	HEADER_TOTAL_MEM,
	HEADER_CMDLINE,
	HEADER_EVENT_DESC,
	HEADER_CPU_TOPOLOGY,
	HEADER_NUMA_TOPOLOGY,
	HEADER_BRANCH_STACK,
	HEADER_PMU_MAPPINGS,
	HEADER_GROUP_DESC,
	HEADER_AUXTRACE,
	HEADER_STAT,
	HEADER_CACHE,
	HEADER_SAMPLE_TIME,
	HEADER_MEM_TOPOLOGY,
	HEADER_CLOCKID,
	HEADER_DIR_FORMAT,
	HEADER_BPF_PROG_INFO,
	HEADER_BPF_BTF,
	HEADER_COMPRESSED,
	HEADER_CPU_PMU_CAPS,
	HEADER_CLOCK_DATA,
	HEADER_HYBRID_TOPOLOGY,
	HEADER_PMU_CAPS,
	HEADER_LAST_FEATURE,
};

/* User-space-only record types (perf's enum perf_user_event_type). */
enum {
	PERF_RECORD_USER_TYPE_START = 64,
	PERF_RECORD_HEADER_ATTR = 64,
	PERF_RECORD_HEADER_EVENT_TYPE = 65, /* deprecated */
	PERF_RECORD_HEADER_TRACING_DATA = 66,
	PERF_RECORD_HEADER_BUILD_ID = 67,
	PERF_RECORD_FINISHED_ROUND = 68,
	PERF_RECORD_ID_INDEX = 69,
	PERF_RECORD_AUXTRACE_INFO = 70,
	PERF_RECORD_AUXTRACE = 71,
	PERF_RECORD_AUXTRACE_ERROR = 72,
	PERF_RECORD_THREAD_MAP = 73,
	PERF_RECORD_CPU_MAP = 74,
	PERF_RECORD_STAT_CONFIG = 75,
	PERF_RECORD_STAT = 76,
	PERF_RECORD_STAT_ROUND = 77,
	PERF_RECORD_EVENT_UPDATE = 78,
	PERF_RECORD_TIME_CONV = 79,
	PERF_RECORD_HEADER_FEATURE = 80,
	PERF_RECORD_COMPRESSED = 81,
	PERF_RECORD_FINISHED_INIT = 82,
};

/* misc bit of MMAP2: maj/min/ino/ino_generation replaced by a build-id. */
#ifndef PERF_RECORD_MISC_MMAP_BUILD_ID
#define PERF_RECORD_MISC_MMAP_BUILD_ID (1 << 14)
#endif

#define BUILD_ID_SIZE 20

/* Feature strings are u32 len (incl. NUL, padded to 64) + chars. */
#define PERF_ALIGN(x, a) (((x) + (a)-1) & ~((uint64_t)(a)-1))

/* In misc of a build-id entry: the size byte of the build-id is valid. */
#define PERF_RECORD_MISC_BUILD_ID_SIZE (1 << 15)

/*
 * A PERF_RECORD_SAMPLE, decoded (reader) or to encode (writer).  Which fields are
 * on disk is decided by the event's attr.sample_type; the others are ignored.
 * Pointers refer to the record buffer and live until the next record is read.
 */
struct pd_sample {
	uint64_t id; /* PERF_SAMPLE_IDENTIFIER / PERF_SAMPLE_ID */
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t addr;
	uint32_t cpu;
	uint64_t period;
	uint16_t misc;	 /* header.misc: PERF_RECORD_MISC_KERNEL/USER... */
	uint64_t nr_ips; /* callchain, with PERF_CONTEXT_KERNEL/USER markers */
	const uint64_t *ips;
	uint32_t raw_size; /* PERF_SAMPLE_RAW */
	const void *raw;
	uint64_t cgroup; /* PERF_SAMPLE_CGROUP: the cgroup id a PERF_RECORD_CGROUP names */
};

/* The sample_id_all trailer of non-sample records. */
struct pd_sample_id {
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id;
	uint32_t cpu;
};

#endif /* PA_PERFDATA_H */
