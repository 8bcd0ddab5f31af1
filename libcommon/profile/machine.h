/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The state a perf.data stream describes: threads (comm), their address-space maps,
 * the DSOs behind the maps, and how a sample's callchain resolves to named frames.
 * Fed record by record (machine_process_event); shared by pa-report and pa-convert,
 * so there is one symbolizer, not two.
 */
#ifndef PA_MACHINE_H
#define PA_MACHINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfdata/pd_read.h"

struct machine;
struct dso;

struct machine_opts {
	const char *kallsyms;	     /* default "/proc/kallsyms" */
	bool no_kernel_syms;	     /* don't read kallsyms (tests, foreign captures) */
	const char *buildid_dir;     /* perf's build-id cache; default "$HOME/.debug" */
	const char *debug_dirs;	     /* ':'-separated debug roots; default "/usr/lib/debug" */
	const char *debuginfod_urls; /* --debuginfod; NULL: $DEBUGINFOD_URLS, "": none */
	const char *perfmap_dir;     /* where perf-PID.map files are; default "/tmp" */
	bool no_debuginfo;	     /* the files' own symbols only (no debug-file search) */
	bool no_demangle;	     /* keep C++/Rust names mangled */
	bool no_inline;		     /* no DWARF: no inline frames, no file:line */
};

/*
 * What kind of code a frame is: the one place a new kind (Python, GPU launch, GPU
 * kernel, off-CPU) plugs in; reports and converters print and group by it.
 */
enum pa_frame_kind {
	PA_FRAME_UNKNOWN, /* no mapping (or a guest's): "[unknown]" */
	PA_FRAME_KERNEL,
	PA_FRAME_NATIVE, /* a mapped file: ELF symbols, DWARF */
	PA_FRAME_JIT,	 /* anonymous code named by /tmp/perf-PID.map */
	PA_FRAME_NR,
};

struct frame {
	uint64_t ip;
	bool kernel;
	uint8_t kind;	       /* enum pa_frame_kind */
	const struct dso *dso; /* NULL when no map covers ip */
	const char *dso_name;  /* short name: "libc.so.6", "[kernel.kallsyms]", "[unknown]" */
	const char *sym;       /* NULL when unnamed */
	uint64_t sym_off;      /* ip - symbol start */
	uint64_t dso_off;      /* file offset (user) or ip (kernel): for "dso+0xoff" names */
	uint64_t map_start, map_end, map_pgoff; /* the mapping ip fell in */
	bool inlined;	     /* an inlined function's frame; the real one follows it */
	const char *srcfile; /* DWARF source file of this frame's position, NULL if unknown */
	int line;	     /* its line, 0 if unknown */
	uint64_t func_off;   /* unnamed: file offset of the function start (.eh_frame), 0 unknown */
};

struct machine *machine_new(const struct machine_opts *opts);
void machine_free(struct machine *m);

/* Track COMM, MMAP, MMAP2, FORK, EXIT, CGROUP and build-id records/features.  Others
 * ignored. 0 or -errno (-EINVAL: a malformed record of a tracked type). */
int machine_process_event(struct machine *m, const struct pd_event *ev);
/* Take the BUILD_ID feature of a file-mode reader (call once after open). */
void machine_add_build_ids(struct machine *m, const struct pd_reader *r);

/* The path of the cgroup samples with PERF_SAMPLE_CGROUP == id ran in, from the latest
 * PERF_RECORD_CGROUP for it ("/system.slice/docker-<id>.scope"); NULL when none named it. */
const char *machine_cgroup_path(const struct machine *m, uint64_t id);
/* Its labels, "key=value\0"... "\0" in *len bytes (pa-record --label-env); NULL if none. */
const char *machine_cgroup_labels(const struct machine *m, uint64_t id, size_t *len);

/* The thread's current comm ("[unknown]" / ":PID" style fallback, never NULL). */
const char *machine_comm(struct machine *m, uint32_t pid, uint32_t tid);

/*
 * Locate, then symbolize.  machine_locate() is the cheap step done for every address of
 * every sample: which mapping (in the sample's process, or the kernel's) an address
 * fell in.  The mapping's id, the address, the ring and whether it is a return
 * address identify what the address resolves to, so callers intern locations by
 * them and call machine_symbolize() once per distinct one.
 */
enum machine_ring {
	MACHINE_RING_USER,
	MACHINE_RING_KERNEL,
	MACHINE_RING_GUEST_USER,
	MACHINE_RING_GUEST_KERNEL,
};

struct machine_loc {
	/* The key: equal keys symbolize the same. */
	uint64_t ip;
	uint32_t map; /* machine-wide id of the mapping ip fell in; 0: none */
	uint8_t ring; /* enum machine_ring */
	bool ret;     /* a return address: looked up at ip - 1 */
	/* What machine_symbolize needs besides the key. */
	uint32_t pid;
	uint64_t start, end, pgoff;
	struct dso *dso;
};

/* A sample's addresses, leaf first, context markers dropped; its ip alone when it
 * has no callchain.  Returns how many were written (<= max). */
size_t machine_locate(struct machine *m, const struct pd_sample *s, struct machine_loc *locs,
		      size_t max);

/*
 * The frames of one located address: where DWARF is available (unless
 * opts.no_inline), one per function inlined there (innermost first, inlined set),
 * then the real function's; srcfile/line filled in.  With less room than that, the
 * real frame alone.  Returns how many were written (1..max; 0 when max is 0).
 */
size_t machine_symbolize(struct machine *m, const struct machine_loc *l, struct frame *frames,
			 size_t max);

/*
 * The real function's frame alone (its inlined functions left out), for reports that
 * show only that: DWARF is read only when the symbol tables do not name the address.
 * Returns 1.
 */
size_t machine_symbolize_real(struct machine *m, const struct machine_loc *l, struct frame *f);

/*
 * A sample's stack as frames, leaf first (machine_locate, then machine_symbolize of
 * every address: for tests and one-off lookups).  Kernel and user frames in callchain order,
 * context markers dropped; if the sample has no callchain, its ip alone.  The return
 * addresses of non-leaf frames are looked up at ip-1 so calls at a function's end
 * resolve to the caller.  Where DWARF is available (unless opts.no_inline), a user ip
 * inside inlined code yields one frame per inlined function first (innermost first,
 * inlined set, same ip), then the real function's; srcfile/line are filled in.
 * Returns the number of frames written (<= max).
 */
size_t machine_resolve(struct machine *m, const struct pd_sample *s, struct frame *frames,
		       size_t max);

/* A frame's name as reports print it: the symbol itself, else buf filled with
 * "dso+0xoff", off being the start of the unnamed function when .eh_frame gives it
 * (so its samples add up) or the ip's own offset ("[unknown]" when no map covered
 * ip).  Never NULL. */
const char *frame_name(const struct frame *f, char *buf, size_t len);

/* Warnings gathered (e.g. kptr_restrict hides kernel addresses), NULL when none. */
const char *machine_warning(const struct machine *m);

/*
 * For a stream read for long (perf-agent --continuous): free what processes that have
 * exited hold (their mappings, JIT maps, comms), for those that had exited already at
 * the call before, so that samples still coming for them in between are named.  A
 * later sample of such a process is "[unknown]".
 */
void machine_reap(struct machine *m);

#endif /* PA_MACHINE_H */
