/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A perf.data stream reduced to what reports and converters need: per event, the
 * distinct stacks (thread, comm, locations) with their sample count and period.
 *
 * Locate, then symbolize: every address of every sample is located (its mapping,
 * machine_locate) and interned as a location by that key alone; only a location seen
 * for the first time is symbolized, into its frames: the functions inlined at the
 * address (innermost first) and the real function last, each with its file:line and
 * the id of its function (same dso + same name).  Stacks hold location ids; reports
 * expand a location's frames when they print it (pprof: one Location, several
 * Lines).  One pass over the stream; memory grows with distinct stacks and
 * locations, not with samples.
 */
#ifndef PA_CALLGRAPH_H
#define PA_CALLGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/machine.h"
#include "perfdata/pd_read.h"

struct cg_profile;
struct gpu_sum;

/* One mapping of the capture: a pprof Mapping. */
struct cg_mapping {
	uint64_t start, end, pgoff; /* the kernel's: as recorded, 0 when no map */
	const char *path;	    /* the dso's file name, never NULL */
	const char *build_id;	    /* lowercase hex, NULL when unknown */
	bool kernel;
};

/* One frame of a location: a function at a source position. */
struct cg_frame {
	const char *dso_name; /* short name, never NULL */
	const char *sym;      /* symbol name, NULL when unnamed */
	const char *name;     /* what reports print: sym, or "dso+0xoff" */
	uint32_t func;	      /* function id: frames with equal dso and name share it */
	uint32_t loc;	      /* the location holding this frame */
	bool kernel;
	/* An inlined function's frame: the frames after it in its location, up to the
	 * real (non-inlined) function's last one, are its callers. */
	bool inlined;
	const char *srcfile; /* DWARF source file of ip in this function, NULL unknown */
	int line;	     /* its line, 0 unknown */
};

/* One distinct code address: a pprof Location. */
struct cg_loc {
	uint64_t ip;
	uint32_t mapping;   /* cg_mapping() id + 1; 0 when no map covered ip */
	uint8_t kind;	    /* enum pa_frame_kind */
	uint32_t frame;	    /* its frames: cg_frame(frame .. frame + nr_frames - 1), */
	uint32_t nr_frames; /* innermost inlined first, the real function last; >= 1 */
};

/* One function: what pa-report groups by and pprof's Function. */
struct cg_func {
	const char *name;     /* as printed */
	const char *dso_name; /* short name */
	const char *file;     /* DWARF source file of its first frame, else the dso's path */
};

/*
 * A label of a sample beyond its thread, as pprof has them: a key with a string or a
 * number.  Off-CPU samples carry their thread state, GPU samples their device and
 * stream.
 */
struct cg_label {
	const char *key; /* interned: CG_LABEL_* */
	const char *str; /* interned; NULL: the value is num */
	int64_t num;
};

#define CG_LABEL_STATE	    "thread_state" /* off-CPU: "sleep", "io", ... */
#define CG_LABEL_GPU_DEVICE "gpu_device"   /* gpu-time: "0", "1", ... */
#define CG_LABEL_GPU_STREAM "gpu_stream"   /* gpu-time: the CUDA stream's id */
/* Samples with a cgroup (PERF_SAMPLE_CGROUP): its path, and what the path says. */
#define CG_LABEL_CGROUP	   "cgroup"    /* "/kubepods/burstable/pod<uid>/<id>" */
#define CG_LABEL_CONTAINER "container" /* the container id's first 12 characters */
#define CG_LABEL_POD	   "pod"       /* the Kubernetes pod's UID */
/* Labels the container's environment gave (pa-record --label-env), e.g. these. */
#define CG_LABEL_POD_NAME	"pod_name"
#define CG_LABEL_CONTAINER_NAME "container_name"

/* Labels in one set at most. */
#define CG_MAX_LABELS 16

/* The labels of a stack's samples, interned by the callgraph: equal sets are one
 * pointer. */
struct cg_labels {
	size_t nr;
	struct cg_label v[];
};

/* The string value of label key in l (NULL: l has none), interned. */
const char *cg_label_str(const struct cg_labels *l, const char *key);

/* One distinct stack of one thread under one event. */
struct cg_stack {
	uint32_t event; /* index into cg_event() */
	uint32_t pid, tid;
	uint32_t nr;			/* locations, leaf first; always >= 1 */
	const char *comm;		/* interned: equal comms have equal pointers */
	const uint32_t *locs;		/* ids for cg_loc() */
	uint64_t count;			/* samples */
	uint64_t period;		/* sum of their periods */
	const struct cg_labels *labels; /* NULL: none */
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
	/* Samples whose pod (UID, or name from the container's environment) is one of
	 * these; whose container (id or its prefix, or name) is one of these. */
	const char *const *pods;
	size_t nr_pods;
	const char *const *containers;
	size_t nr_containers;
};

struct cg_profile *cg_new(void);
void cg_free(struct cg_profile *cg);

/*
 * Keep only each sample's leaf location, and of it only the real function's frame
 * (no inlined ones, DWARF left unread where the symbol tables name it): for reports
 * that show neither callers nor call graphs.  Call before cg_load.
 */
void cg_set_leaf_only(struct cg_profile *cg, bool leaf_only);

/*
 * Let cg_load count stacks in a second thread while it locates the next samples (the
 * results are the same; where the thread cannot start, cg_load counts by itself).
 */
void cg_set_count_thread(struct cg_profile *cg, bool on);
/* The batches of stacks the thread counted in the last cg_load; 0: counted in place. */
size_t cg_thread_batches(const struct cg_profile *cg);

/*
 * Keep the timeline: every sample added from now on, in the order added, as its stack,
 * time and period (20 bytes a sample), for writers that show samples over time.  Off
 * by default; call before cg_load.  The same with the counting thread on or off.
 */
void cg_set_timeline(struct cg_profile *cg, bool on);

/* One sample of the timeline. */
struct cg_sample {
	uint32_t stack;	 /* cg_stack() index: its count is 0 when a filter dropped it */
	uint64_t time;	 /* PERF_SAMPLE_TIME (a GPU record's: when the GPU started it); 0
			  * when not recorded */
	uint64_t period; /* as counted in the stack's period */
};

/*
 * The samples of the timeline, in the order cg_load read them (time order when the
 * reader orders records, pd_reader_set_ordered) or cg_add_sample added them; 0 when
 * cg_set_timeline was off.
 */
size_t cg_nr_samples(const struct cg_profile *cg);
struct cg_sample cg_sample(const struct cg_profile *cg, size_t idx);

/*
 * Read every record of r, feeding m and adding each kept sample.  0, or -errno with
 * one line naming the cause in err (the reader's error text for a bad stream).
 */
int cg_load(struct cg_profile *cg, struct pd_reader *r, struct machine *m,
	    const struct cg_filter *filter, char *err, size_t errlen);

/*
 * cg_load one record at a time, for a stream read in windows: a sample is added,
 * lost counts counted, any other record fed to m.  0 or -ENOMEM.  Without the
 * counting thread (cg_set_count_thread is for cg_load).
 */
int cg_add_record(struct cg_profile *cg, struct pd_reader *r, struct machine *m,
		  const struct cg_filter *filter, const struct pd_event *ev);
/* Every event r declares, also those without samples (as cg_load ends with). */
void cg_add_events_of(struct cg_profile *cg, const struct pd_reader *r);

/*
 * Add one sample of already symbolized frames, leaf first, as machine_resolve() gives
 * them (a run of inlined frames and the real frame after it at the same ip form one
 * location; nr 0: a single "[unknown]" frame is used).  For tests and foreign inputs;
 * cg_load locates first.  Events are created on demand, named by the first caller.
 * 0 or -ENOMEM.
 */
int cg_add_sample(struct cg_profile *cg, uint32_t event, const char *event_name, uint32_t pid,
		  uint32_t tid, const char *comm, const struct frame *frames, size_t nr,
		  uint64_t period, uint64_t time);

/* The same with labels (keys and strings need not be interned); stacks that differ
 * only in labels stay apart. */
int cg_add_sample_labels(struct cg_profile *cg, uint32_t event, const char *event_name,
			 uint32_t pid, uint32_t tid, const char *comm, const struct frame *frames,
			 size_t nr, uint64_t period, uint64_t time, const struct cg_label *labels,
			 size_t nr_labels);

size_t cg_nr_events(const struct cg_profile *cg);
/* The GPU summary of the samples loaded (profile/gpu_sum.h): empty without GPU events. */
const struct gpu_sum *cg_gpu_sum(const struct cg_profile *cg);
const struct cg_event *cg_event(const struct cg_profile *cg, size_t idx);
/* Index of the event named name, or -1. */
int cg_find_event(const struct cg_profile *cg, const char *name);

size_t cg_nr_stacks(const struct cg_profile *cg);
const struct cg_stack *cg_stack(const struct cg_profile *cg, size_t idx);
/*
 * Drop the stacks keep() rejects (profile/focus.h: --focus, --ignore): their count
 * and period become 0 and leave their event's samples and period.  Stacks whose count
 * is already 0 are not asked about.  Writers skip stacks with count 0.  The number
 * dropped.
 */
size_t cg_keep_stacks(struct cg_profile *cg,
		      bool (*keep)(const struct cg_profile *, const struct cg_stack *, void *),
		      void *ctx);
size_t cg_nr_locs(const struct cg_profile *cg);
const struct cg_loc *cg_loc(const struct cg_profile *cg, uint32_t id);
size_t cg_nr_frames(const struct cg_profile *cg);
const struct cg_frame *cg_frame(const struct cg_profile *cg, uint32_t id);
/* The real function's frame of location id (its last). */
const struct cg_frame *cg_loc_real(const struct cg_profile *cg, uint32_t id);
size_t cg_nr_funcs(const struct cg_profile *cg);
const struct cg_func *cg_func(const struct cg_profile *cg, uint32_t id);
size_t cg_nr_mappings(const struct cg_profile *cg);
const struct cg_mapping *cg_mapping(const struct cg_profile *cg, uint32_t id);

#endif /* PA_CALLGRAPH_H */
