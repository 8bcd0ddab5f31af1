/* SPDX-License-Identifier: Apache-2.0 */
/* pa-convert --flamegraph: a flame_tree as an interactive HTML page or an SVG. */
#ifndef PA_CONVERT_FLAMEGRAPH_H
#define PA_CONVERT_FLAMEGRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "convert.h"
#include "flametree.h"

struct flame_opts {
	const char *title;     /* NULL: "Flame graph" */
	const char *cmd;       /* the recorded command line, NULL unknown */
	const char *host;      /* NULL unknown */
	const char *base_name; /* diff: the base capture's name */
	uint64_t duration_ns;
	bool inverted; /* icicle: the root on top */
	bool abs;      /* diff: absolute change, not change of share */
	bool svg;
	double min_frac; /* frames narrower than this share of their event are left out */
};

/* The page (or SVG) of t, written through write in pieces.  0, -ENOMEM or what
 * write returned. */
int flamegraph_render(const struct flame_tree *t, const struct flame_opts *o, folded_write_fn write,
		      void *ctx);

#endif /* PA_CONVERT_FLAMEGRAPH_H */
