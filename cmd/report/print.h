/* SPDX-License-Identifier: Apache-2.0 */
/* pa-report's stdio output: perf report --stdio's header, entry lines and graphs. */
#ifndef PA_REPORT_PRINT_H
#define PA_REPORT_PRINT_H

#include <stdbool.h>
#include <stdio.h>

#include "hist.h"

struct print_opts {
	bool header;		  /* the '#' lines (off with --quiet) */
	double percent_limit;	  /* hide entries below, percent of the total */
	double chain_min_percent; /* hide call-graph branches below, percent of the total */
	bool skip_first_sym;	  /* --sort starts with sym: the lone root repeats the entry */
};

/* One event's section: header, then entries (with graphs when h was built with them). */
void report_print(FILE *out, const struct hists *h, const struct cg_event *ev,
		  const struct print_opts *po);

/*
 * --event gpu: the GPU events summed per kernel, then copies and sets
 * (gpu_summary.c).  1 when printed, 0 when the capture has no GPU samples, -1 out of
 * memory.
 */
int report_gpu_summary(FILE *out, const struct cg_profile *cg, bool header);

#endif /* PA_REPORT_PRINT_H */
