/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A perf.data stream reduced to what reports and converters need: per event, the
 * distinct stacks (thread, comm, frames) with their sample count and period.
 * Frames are interned per code address, and every frame carries the id of its
 * function (same dso + same name), so pa-report aggregates by function while
 * pprof keeps addresses.  Inlined functions are frames of their own (marked
 * inlined, innermost first, before the real function at the same ip).  One pass over the stream; memory grows with distinct
 * stacks, not with samples.
 */
#ifndef PA_CALLGRAPH_H
#define PA_CALLGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/machine.h"
#include "perfdata/pd_read.h"

struct cg_profile;

/* One distinct code address: a pprof Location. */
struct cg_frame {
	uint64_t ip;
	uint64_t map_start, map_end, map_pgoff; /* all 0 when no map covered ip */
	const struct dso *dso;			/* NULL when no map covered ip */
	const char *dso_name;			/* short name, never NULL */
	const char *sym;			/* symbol name, NULL when unnamed */
	const char *name;			/* what reports print: sym, or "dso+0xoff" */
	const char *path;     /* the dso's file name (pprof Mapping.filename), never NULL */
	const char *build_id; /* lowercase hex, NULL when unknown */
	uint32_t func;	      /* function id: frames with equal dso and name share it */
	bool kernel;
	/*
	 * An inlined function's frame: it shares ip with the frames after it in a
	 * stack, up to and including the real (non-inlined) function's frame.
	 */
	bool inlined;
	const char *srcfile; /* DWARF source file of ip in this function, NULL unknown */
	int line;	     /* its line, 0 unknown */
};

/* One distinct stack of one thread under one event. */
struct cg_stack {
	uint32_t event; /* index into cg_event() */
	uint32_t pid, tid;
	const char *comm;	/* interned: equal comms have equal pointers */
	uint32_t nr;		/* frames, leaf first; always >= 1 */
	const uint32_t *frames; /* ids for cg_frame() */
	uint64_t count;		/* samples */
	uint64_t period;	/* sum of their periods */
	const char *state;	/* off-CPU thread state ("sleep", "io", ...), interned; NULL
				 * when the samples carry none */
};

/* One event of the stream (perf's evsel). */
struct cg_event {
	const char *name;
	uint64_t samples;		/* after filters */
	uint64_t period;		/* after filters */
	uint64_t lost;			/* PERF_RECORD_LOST / LOST_SAMPLES counts */
	uint64_t first_time, last_time; /* sample times (0 when not recorded) */
	uint64_t sample_period;		/* attr: period, or frequency when freq */
	bool freq;
	bool callchain; /* attr asked for PERF_SAMPLE_CALLCHAIN */
};

/* Which samples to keep.  Empty lists keep all. */
struct cg_filter {
	const uint32_t *pids;
	size_t nr_pids;
	const uint32_t *tids;
	size_t nr_tids;
	const char *const *comms;
	size_t nr_comms;
};

struct cg_profile *cg_new(void);
void cg_free(struct cg_profile *cg);

/*
 * Keep only each sample's leaf (its function and the ones inlined there): for
 * reports that show neither callers nor call graphs, which then symbolize one
 * address per sample instead of the whole chain.  Call before cg_load.
 */
void cg_set_leaf_only(struct cg_profile *cg, bool leaf_only);

/*
 * Read every record of r, feeding m and adding each kept sample.  0, or -errno with
 * one line naming the cause in err (the reader's error text for a bad stream).
 */
int cg_load(struct cg_profile *cg, struct pd_reader *r, struct machine *m,
	    const struct cg_filter *filter, char *err, size_t errlen);

/*
 * Add one sample: frames leaf first (nr 0: a single "[unknown]" frame is used).
 * Events are created on demand, named by the first caller.  0 or -ENOMEM.
 */
int cg_add_sample(struct cg_profile *cg, uint32_t event, const char *event_name, uint32_t pid,
		  uint32_t tid, const char *comm, const struct frame *frames, size_t nr,
		  uint64_t period, uint64_t time);

/* The same with the thread state of an off-CPU sample (NULL: none); stacks that
 * differ only in state stay apart. */
int cg_add_sample_state(struct cg_profile *cg, uint32_t event, const char *event_name, uint32_t pid,
			uint32_t tid, const char *comm, const struct frame *frames, size_t nr,
			uint64_t period, uint64_t time, const char *state);

size_t cg_nr_events(const struct cg_profile *cg);
const struct cg_event *cg_event(const struct cg_profile *cg, size_t idx);
/* Index of the event named name, or -1. */
int cg_find_event(const struct cg_profile *cg, const char *name);

size_t cg_nr_stacks(const struct cg_profile *cg);
const struct cg_stack *cg_stack(const struct cg_profile *cg, size_t idx);
size_t cg_nr_frames(const struct cg_profile *cg);
const struct cg_frame *cg_frame(const struct cg_profile *cg, uint32_t id);
size_t cg_nr_funcs(const struct cg_profile *cg);

#endif /* PA_CALLGRAPH_H */
