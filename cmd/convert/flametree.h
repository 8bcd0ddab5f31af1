/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The call tree a flame graph draws: the samples' stacks merged by frame name from
 * the root (the process) down, each node with its inclusive weight per event, and
 * for a differential graph the same weights from a base capture.  Frames keep their
 * kind (kernel, Python, GPU kernel...) so the graph can colour by it.
 */
#ifndef PA_CONVERT_FLAMETREE_H
#define PA_CONVERT_FLAMETREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hash.h"
#include "profile/callgraph.h"

enum flame_kind {
	FK_ROOT,
	FK_PROCESS,
	FK_KERNEL,
	FK_NATIVE,
	FK_INLINED,
	FK_JIT,
	FK_PYTHON,
	FK_GPU_LAUNCH,
	FK_GPU_KERNEL,
	FK_OFFCPU,
	FK_UNKNOWN,
	FK_NR,
};

/* The kinds' names, as the flame graph's legend and JSON have them. */
extern const char *const flame_kind_names[FK_NR];

/* One event of the tree: its weights are nanoseconds (time) or samples. */
struct flame_event {
	const char *name;
	bool time;		    /* weights in ns */
	uint64_t total, base_total; /* the root's weights */
};

struct flame_node {
	uint32_t name; /* flame_tree.names index */
	uint8_t kind;
	uint32_t child, next; /* first child, next sibling; 0: none (node 0 is the root) */
};

struct flame_tree {
	struct flame_event *events;
	size_t nr_events;
	bool diff; /* weights of a base capture too */
	struct flame_node *nodes;
	size_t nr_nodes, cap_nodes;
	/* Node n's weight for event e: val[n * cols + e]; its base weight (diff):
	 * val[n * cols + nr_events + e]. */
	uint64_t *val;
	size_t cols;
	char **names;
	size_t nr_names, cap_names;
	/* private */
	struct hidx name_idx, node_idx;
	uint32_t *parent_of;
	size_t cap_val, cap_parent;
};

/*
 * The tree of cg's samples: every event with samples, each node's children in name
 * order (flamegraph.pl's, so two graphs line up).  base, when not NULL, adds the
 * base weights of a differential graph: its events matched to cg's by name.  0 or
 * -ENOMEM.
 */
int flame_tree_build(struct flame_tree *t, const struct cg_profile *cg,
		     const struct cg_profile *base);
void flame_tree_free(struct flame_tree *t);

/*
 * Whether node n is worth drawing: some event's weight (or base weight) is at least
 * min_frac of that event's total.  Narrower frames would be under a pixel even
 * zoomed far in; dropping them bounds the file for any number of stacks.
 */
bool flame_visible(const struct flame_tree *t, uint32_t n, double min_frac);

#endif /* PA_CONVERT_FLAMETREE_H */
