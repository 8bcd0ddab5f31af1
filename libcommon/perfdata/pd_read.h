/* SPDX-License-Identifier: Apache-2.0 */
/*
 * perf.data reader for files and pipes, ours and Linux perf's.  Decodes the header,
 * attrs, features (file: at open; pipe: as HEADER_* records arrive) and samples, and
 * hands every record to the caller in file order.
 */
#ifndef PA_PD_READ_H
#define PA_PD_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfdata/perfdata.h"

struct pd_reader;

struct pd_evsel {
	struct perf_event_attr attr;
	char *name; /* EVENT_DESC name, else derived from type/config ("cpu-clock") */
	uint64_t *ids;
	size_t nr_ids;
	size_t idx;
};

struct pd_build_id {
	uint16_t cpumode;
	int32_t pid;
	uint8_t build_id[BUILD_ID_SIZE];
	uint8_t size;
	char *filename;
};

struct pd_event {
	const struct perf_event_header *hdr; /* the whole record, hdr->size bytes */
	const struct pd_evsel *evsel;	     /* samples (and sample_id trailers): its event */
	struct pd_sample sample;	     /* valid when hdr->type == PERF_RECORD_SAMPLE */
	struct pd_sample_id sid;	     /* trailer of non-sample records, when sample_id_all */
};

/*
 * path "-" or NULL with stdin not a terminal: read stdin.  On failure returns NULL and
 * writes one line naming the cause into err (e.g. "perf.data: truncated header (40 of
 * 104 bytes)", "x: not a perf.data file (bad magic)").
 */
struct pd_reader *pd_reader_open(const char *path, char *err, size_t errlen);
void pd_reader_close(struct pd_reader *r);

/*
 * Next record into ev.  Header records of pipe mode (HEADER_ATTR, HEADER_FEATURE,
 * HEADER_BUILD_ID) are consumed and also returned.  1: a record; 0: end of data;
 * -errno: error, text in pd_reader_error() (truncated record, bad size...).
 */
int pd_reader_next(struct pd_reader *r, struct pd_event *ev);
const char *pd_reader_error(const struct pd_reader *r);

/*
 * Deliver records in time order, as perf report does: records are queued and
 * released at each FINISHED_ROUND up to the newest time of the round before (all at
 * the end).  FINISHED_ROUND itself is then not returned.  Off by default.
 */
void pd_reader_set_ordered(struct pd_reader *r, bool ordered);

/*
 * File mode: read and decode records in a second thread, ahead of the caller, who
 * then spends its time on what it does with them (a flat report of 1M samples: a
 * third less).  Events are the same, in the same order; an event stays valid until
 * the next call, as always.  While records are being read, only pd_reader_next may be
 * called (and pd_reader_evsel*, whose tables a file does not change).  Nothing in
 * pipe mode.
 */
void pd_reader_read_ahead(struct pd_reader *r);

bool pd_reader_is_pipe(const struct pd_reader *r);
size_t pd_reader_nr_evsel(const struct pd_reader *r);
const struct pd_evsel *pd_reader_evsel(const struct pd_reader *r, size_t idx);
/* Event a sample id belongs to (single event: that one). NULL if unknown. */
const struct pd_evsel *pd_reader_evsel_by_id(const struct pd_reader *r, uint64_t id);

/* String features (HOSTNAME, OSRELEASE, ARCH, VERSION, CPUDESC...), NULL if absent. */
const char *pd_reader_feature_string(const struct pd_reader *r, int feat);
/* CMDLINE joined with spaces, NULL if absent. */
const char *pd_reader_cmdline(const struct pd_reader *r);
/* The same as the recorder's argv (*argc strings; NULL when the file has none). */
const char *const *pd_reader_argv(const struct pd_reader *r, int *argc);
int pd_reader_nrcpus(const struct pd_reader *r, uint32_t *online, uint32_t *avail);
/* TOTAL_MEM in kB; 0 or -ENOENT. */
int pd_reader_total_mem(const struct pd_reader *r, uint64_t *kb);
/* Samples skipped because their id names no event (perf counts these too). */
uint64_t pd_reader_nr_unknown_id(const struct pd_reader *r);
/* PERF_RECORD_COMPRESSED records read so far (perf record -z, pa-record -z).  Their
 * records are handed out in their place, as if they had not been compressed. */
uint64_t pd_reader_nr_compressed(const struct pd_reader *r);
size_t pd_reader_nr_build_ids(const struct pd_reader *r);
const struct pd_build_id *pd_reader_build_id(const struct pd_reader *r, size_t i);

/* Decode a sample record of evsel into s (exposed for tests and tools). 0 or -EINVAL. */
int pd_parse_sample(const struct pd_evsel *evsel, const struct perf_event_header *hdr,
		    struct pd_sample *s);

#endif /* PA_PD_READ_H */
