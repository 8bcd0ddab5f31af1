/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internals shared by the perf.data reader and writer (pd_*.c), not an API:
 * a growable byte buffer for feature payloads, the feature encoder the writer
 * uses and the feature/trailer decoders the reader uses.
 */
#ifndef PA_PD_PRIV_H
#define PA_PD_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfdata/event.h"
#include "perfdata/perfdata.h"
#include "perfdata/pd_read.h"
#include "perfdata/pd_zstd.h"

/* perf pads feature strings and build-id filenames to this (NAME_ALIGN). */
#define PD_NAME_ALIGN 64
/* Largest record: header.size is a u16. */
#define PD_MAX_RECORD 65535

/* Bytes appended with malloc growth; the first allocation failure sticks in err. */
struct pd_buf {
	uint8_t *p;
	size_t len, cap;
	int err;
};

void pd_buf_put(struct pd_buf *b, const void *data, size_t n);
void pd_buf_put_u32(struct pd_buf *b, uint32_t v);
void pd_buf_put_u64(struct pd_buf *b, uint64_t v);
/* perf's do_write_string: u32 len (strlen+1 rounded up to 64), chars, zero padding. */
void pd_buf_put_string(struct pd_buf *b, const char *s);
void pd_buf_pad(struct pd_buf *b, size_t align);
void pd_buf_free(struct pd_buf *b);

/* What the writer keeps of one event. */
struct pd_wattr {
	struct perf_event_attr attr;
	char *name;
	uint64_t *ids;
	size_t nr_ids;
};

struct pd_wbuild_id {
	uint16_t cpumode;
	int32_t pid;
	uint8_t build_id[BUILD_ID_SIZE];
	uint8_t size;
	char *filename;
};

/* Writer-side feature values. */
struct pd_wfeat {
	char *str[HEADER_LAST_FEATURE];
	bool have_nrcpus, have_mem;
	uint32_t online, avail;
	uint64_t mem_kb;
	char **argv;
	int argc;
	bool have_cmdline;
	struct pd_wbuild_id *bids;
	size_t nr_bids;
	bool have_comp;
	struct pd_comp_feat comp;
};

bool pd_wfeat_has(const struct pd_wfeat *f, int feat, size_t nr_attrs);
/* Append feature feat's payload (the bytes of its file section) to out. */
int pd_wfeat_encode(const struct pd_wfeat *f, int feat, const struct pd_wattr *attrs,
		    size_t nr_attrs, struct pd_buf *out);
/* One build-id entry laid out as perf_record_header_build_id + filename padded to 64,
 * then to align (1 inside the BUILD_ID feature, as perf writes it; 8 for a pipe record). */
int pd_wfeat_build_id_rec(const struct pd_wbuild_id *b, uint32_t type, size_t align,
			  struct pd_buf *out);
void pd_wfeat_free(struct pd_wfeat *f);
struct pd_writer;
struct pd_wfeat *pd_writer_feat(struct pd_writer *w);

/* Reader-side: decode one feature payload (file section or HEADER_FEATURE body). */
struct pd_reader;
void pd_rfeat_parse(struct pd_reader *r, int feat, const uint8_t *p, size_t len);
/* Decode one build-id entry (feature entry or HEADER_BUILD_ID record).  0 or -EINVAL. */
int pd_rfeat_add_build_id(struct pd_reader *r, const struct perf_event_header *h, size_t avail);
void pd_rfeat_free(struct pd_reader *r);

/* Reader internals used by pd_rfeat.c. */
struct pd_rfeat {
	char *str[HEADER_LAST_FEATURE];
	char *cmdline;
	char **argv; /* CMDLINE's strings, argc of them */
	int argc;
	bool have_nrcpus, have_mem;
	uint32_t online, avail;
	uint64_t mem_kb;
	struct pd_build_id *bids;
	size_t nr_bids, cap_bids;
	bool have_comp;
	struct pd_comp_feat comp;
	/* EVENT_DESC names for evsels not yet known (pipe mode: desc before attr). */
};
struct pd_rfeat *pd_reader_feat(struct pd_reader *r);
/* Name evsel(s) carrying this id (or index idx when the event has no ids). */
void pd_reader_name_evsel(struct pd_reader *r, const uint64_t *ids, size_t nr_ids, size_t idx,
			  const char *name);

/* Sample-id position rules shared by writer and reader (the trailer itself: event.h). */
/* u64 index of the id in a sample (-1: none) and from the end of a trailer (-1: none). */
int pd_sample_id_pos(uint64_t sample_type);
int pd_sid_id_pos(uint64_t sample_type);

/*
 * Time-ordered delivery (pd_order.c): a min-heap of parsed records.  A record stays
 * where it is (the mapped file) unless the reader's buffer will be reused (pipes):
 * then it is copied and the parsed event's pointers follow the copy.
 */
struct pd_qev {
	struct pd_event ev;
	struct pd_qev *next_free;
	bool owned; /* ev.hdr is a malloc'd copy */
};
struct pd_oent {
	uint64_t time, seq; /* seq keeps records of equal time in file order */
	struct pd_qev *qe;
};
struct pd_qev_chunk;
/* Copies of records up to this many 64-byte size classes are kept for reuse. */
#define PD_OQ_REC_CLASSES 16

struct pd_oqueue {
	/*
	 * Records that come in time order (most do: each CPU's buffer is) are appended
	 * to run, a FIFO of ascending (time, seq); the others go to the heap.  The oldest
	 * is the older of the two heads: O(1) for the common case instead of O(log n).
	 */
	struct pd_oent *run;
	size_t run_head, run_end, run_cap;
	struct pd_oent *heap;
	size_t n, cap, bytes;
	uint64_t seq;
	uint64_t max_time;  /* newest time queued so far */
	uint64_t round_max; /* newest time when the last FINISHED_ROUND came */
	uint64_t limit;	    /* records up to this time may be released */
	struct pd_qev *free_qe;
	struct pd_qev_chunk *chunks;
	void *free_rec[PD_OQ_REC_CLASSES]; /* record copies given back, by size class */
};
/* Queue the parsed event ev (copying its record when copy is set).  0 or -ENOMEM. */
int pd_oq_push(struct pd_oqueue *q, const struct pd_event *ev, uint64_t time, bool copy);
/* Oldest event if its time <= limit, NULL otherwise; give it back with pd_oq_done. */
struct pd_qev *pd_oq_pop(struct pd_oqueue *q, uint64_t limit);
void pd_oq_done(struct pd_oqueue *q, struct pd_qev *qe);
/* The lowest record address in [lo, hi) still queued, NULL if none. */
const void *pd_oq_lowest(const struct pd_oqueue *q, const void *lo, const void *hi);
/* A FINISHED_ROUND arrived. */
void pd_oq_round(struct pd_oqueue *q);
/* Raise the limit when too much is queued. */
void pd_oq_relieve(struct pd_oqueue *q);
void pd_oq_free(struct pd_oqueue *q);

/* HOSTNAME, OSRELEASE, VERSION, ARCH, CPUDESC, CPUID: features that are one string. */
bool pd_feat_is_string(int feat);

/* Fallback event name from type/config ("cpu-clock"); returns a malloc'd string. */
char *pd_default_evname(const struct perf_event_attr *attr);

#endif /* PA_PD_PRIV_H */
