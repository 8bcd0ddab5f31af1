/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pprof encoder: a cg_profile as profile.proto (github.com/google/pprof), gzipped,
 * what `go tool pprof` and the pprof ecosystem read.
 *
 * Value columns are per event, two each: its sample count and its period, e.g.
 * cpu-clock gives samples/count and cpu/nanoseconds, and an offcpu-time event would
 * add offcpu_samples/count and offcpu/nanoseconds.  Each pprof Sample (one distinct
 * stack of one thread) fills the two columns of its event and leaves the others 0.
 * Locations are code addresses, leaf first, each with one Line per function inlined
 * there (innermost first, the real function last) and file:line where DWARF gives
 * them; functions are deduplicated by name and
 * file; kernel frames sit in the kernel's mapping; labels pid, tid (num) and comm,
 * plus thread_state ("sleep", "io", "preempted", "other") on off-CPU samples.
 */
#ifndef PA_PPROF_H
#define PA_PPROF_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "profile/callgraph.h"

struct pprof_opts {
	int64_t time_nanos; /* start of the capture, ns since the epoch (0: unknown) */
	int64_t duration_nanos;
	/* A tid label on every sample: each thread's samples apart (pid, comm and the
	 * samples' own labels are always there). */
	bool tid_label;
	/* Labels of the whole capture, "KEY=VALUE" (pa_input_tags), on every sample. */
	const char *const *tags;
	size_t nr_tags;
};

/* The pprof type/unit of an event's period ("cpu-clock" -> "cpu", "nanoseconds"). */
void pprof_value_type(const char *event, const char **type, const char **unit);

/*
 * Encode cg as a gzip-compressed profile into a malloc'd buffer (*out, *len).
 * 0, -ENOMEM, or -EINVAL when cg holds no event.
 */
int pprof_encode(const struct cg_profile *cg, const struct pprof_opts *opts, uint8_t **out,
		 size_t *len);

#endif /* PA_PPROF_H */
