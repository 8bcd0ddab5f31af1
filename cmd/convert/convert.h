/* SPDX-License-Identifier: Apache-2.0 */
/* pa-convert's output writers: each renders a cg_profile into a malloc'd buffer. */
#ifndef PA_CONVERT_H
#define PA_CONVERT_H

#include <stddef.h>
#include <stdint.h>

#include "profile/callgraph.h"

/* Where folded_render's text goes, a piece at a time: 0 or -errno. */
typedef int (*folded_write_fn)(void *ctx, const char *buf, size_t len);

/*
 * Folded stacks of event ev: "comm;root;...;leaf COUNT\n" per distinct line, sorted
 * by text; kernel frames end in "_[k]".  COUNT is samples, except for offcpu-time
 * where it is nanoseconds off the CPU.  The text goes to write in pieces of about a
 * MiB.  0, -ENOMEM, or what write returned.
 */
int folded_render(const struct cg_profile *cg, uint32_t ev, folded_write_fn write, void *ctx);

/* What a speedscope file says of itself. */
struct speedscope_opts {
	const char *name;     /* the profile group's name: the input's */
	const char *exporter; /* "pa-convert VERSION" */
};

/*
 * speedscope's JSON file format, every event at once: a "sampled" profile per thread
 * and event, named "comm pid/tid: event", the one with the most samples first; its
 * samples in time order, weighed in nanoseconds (the period) for events whose period
 * is time (pprof_value_type), else 1 each.  Needs the timeline (cg_set_timeline before
 * cg_load); stacks with count 0 are left out.  0, -EINVAL when cg has samples but no
 * timeline, -ENOMEM, or what write returned.
 */
int speedscope_render(const struct cg_profile *cg, const struct speedscope_opts *o,
		      folded_write_fn write, void *ctx);

#endif /* PA_CONVERT_H */
