/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pa-report --diff BASE NEW: per function, its self and total time in two captures of
 * one event, the biggest changes first, as perf diff prints them (Baseline, Delta);
 * and the exit status benchmark scripts test.  Functions are matched by name and
 * shared object, never by address: two builds differ in addresses.
 */
#ifndef PA_REPORT_DIFF_H
#define PA_REPORT_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profile/callgraph.h"

/* The exit status when a function grew past --fail-above (1 is any error). */
#define DIFF_EXIT_REGRESSION 2

struct diff_opts {
	const char *event;    /* NULL: base's first sampled event that new has too */
	bool total;	      /* compare total (inclusive) time, not self */
	bool abs;	      /* samples (ns for time events), not shares of the capture */
	size_t rows;	      /* rows printed; 0: all */
	double fail_above;    /* percent growth over base that is a regression; < 0: none */
	uint64_t min_samples; /* fewer samples in both captures: never a regression */
	bool header;	      /* the '#' lines */
};

struct diff_input {
	const char *name; /* for messages and the header */
	const struct cg_profile *cg;
};

/*
 * Compare in[0] (the base) with in[1] (the new capture): print the table to out and
 * one line per regression to stderr.  0, or DIFF_EXIT_REGRESSION when a function grew
 * past o->fail_above; -errno on failure, its one line printed (the event is missing,
 * no event in common, out of memory).
 */
int report_diff(FILE *out, const struct diff_input in[2], const struct diff_opts *o);

#endif /* PA_REPORT_DIFF_H */
