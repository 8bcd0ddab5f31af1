/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pa-report's histogram: entries keyed by the sort keys, with self and children
 * period, each owning the call-graph tree of the chains that reached it.  Built from
 * the aggregated stacks of one event (callgraph.h), the way perf's hist_entry_iter
 * does it, so the numbers match `perf report`.
 */
#ifndef PA_REPORT_HIST_H
#define PA_REPORT_HIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hash.h"
#include "profile/callgraph.h"

/*
 * The label keys (SK_STATE on) sort by a label of the samples ("-" for those without
 * it): the off-CPU thread state, the cgroup path, the container id, the pod.
 */
enum sort_key {
	SK_COMM,
	SK_PID,
	SK_TID,
	SK_DSO,
	SK_SYM,
	SK_STATE,
	SK_CGROUP,
	SK_CONTAINER,
	SK_POD,
	SK_NR
};
#define SK_FIRST_LABEL SK_STATE
#define SK_NR_LABELS   (SK_NR - SK_FIRST_LABEL)

/* The callgraph label a label key sorts by. */
const char *hist_label_key(enum sort_key k);

enum chain_order { ORDER_NONE, ORDER_CALLER, ORDER_CALLEE };

struct hist_opts {
	enum sort_key keys[SK_NR];
	size_t nr_keys;
	bool children;		/* accumulate callers' entries (perf --children) */
	enum chain_order order; /* call-graph order; NONE: no trees built */
	/* Call-graph branches below this percent of the total are never printed, so
	 * never built (perf's "graph,0.5"); 0 builds every branch. */
	double chain_min_percent;
};

/*
 * One node of an entry's call-graph trie: one function on the chain.  Only branches
 * at or above the threshold (hists.min_hit) are kept as kids; nr_all counts every
 * distinct callee/caller there was, kept or not, which decides where a printed run of
 * nodes ends.
 */
struct chain_node {
	uint32_t func;	/* cg function id */
	uint32_t frame; /* a frame of that function, for its name */
	uint64_t hit;	/* period of chains ending here */
	uint64_t cumul; /* hit plus everything below */
	struct chain_node **kids;
	size_t nr_kids, nr_all;
};

struct hist_entry {
	/* Key fields; those not in the sort keys are zero/NULL. */
	const char *comm;
	uint32_t pid, tid;
	const char *dso;
	/* Its samples' label of each label key (SK_FIRST_LABEL + i); valid when used. */
	const char *label[SK_NR_LABELS];
	uint32_t func;	/* valid when the sym key is used */
	uint32_t frame; /* representative frame: sym name, ring, dso */
	uint64_t self, children;
	uint32_t first_tid;	/* thread of the first sample: perf's he->thread */
	uint32_t max_depth;	/* longest chain appended */
	uint32_t graph;		/* its root's graph-build index + 1; 0: no graph */
	struct chain_node root; /* func/frame unused */
};

/* Call-graph nodes live in big blocks, freed at once: tries of millions of nodes
 * would otherwise cost as much to free as to build. */
struct hist_arena_block {
	struct hist_arena_block *next;
	size_t used, cap;
	max_align_t data[];
};

struct hists {
	const struct cg_profile *cg;
	struct hist_arena_block *arena;
	struct hist_opts opts;
	struct hidx idx;	     /* key -> entries[] index, while building */
	struct hist_entry **entries; /* in creation order; after hists_sort: output order */
	size_t nr_entries, cap_entries;
	uint64_t total_period, total_samples;
	uint64_t min_hit; /* chains below this period are not in the tries */
};

/* Aggregate event ev's stacks.  0 or -ENOMEM. */
int hists_build(struct hists *h, const struct cg_profile *cg, uint32_t ev,
		const struct hist_opts *opts);
/* Sort entries for output: children (when used), then self, descending; ties by keys. */
void hists_sort(struct hists *h);
void hists_free(struct hists *h);

#endif /* PA_REPORT_HIST_H */
