// SPDX-License-Identifier: Apache-2.0
/*
 * Stacks into a tree of frames.  A node is found by (parent, name, kind) in one hash
 * index; a stack's frames are walked from its root, each cg frame's name and kind
 * worked out once (by frame id) however many stacks use it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flametree.h"
#include "profile/gpu_events.h"
#include "profile/offcpu.h"
#include "profile/pprof.h"

const char *const flame_kind_names[FK_NR] = {
	[FK_ROOT] = "root",	 [FK_PROCESS] = "process",	 [FK_KERNEL] = "kernel",
	[FK_NATIVE] = "native",	 [FK_INLINED] = "inlined",	 [FK_JIT] = "jit",
	[FK_PYTHON] = "python",	 [FK_GPU_LAUNCH] = "gpu-launch", [FK_GPU_KERNEL] = "gpu",
	[FK_OFFCPU] = "off-cpu", [FK_UNKNOWN] = "unknown",
};

/* A cg frame's name id and kind, made on first use: 0 not yet, else name + 1. */
struct frame_memo {
	uint32_t name1;
	uint8_t kind;
};

struct builder {
	struct flame_tree *t;
	const struct cg_profile *cg;
	struct frame_memo *memo;
	uint32_t *path; /* the nodes of the stack being added, root first */
	size_t cap_path;
	size_t col; /* the value column of the event being added */
};

static bool name_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct flame_tree *t = ctx;

	return !strcmp(t->names[id], key);
}

/* The id of name, interned; -ENOMEM. */
static int64_t name_id(struct flame_tree *t, const char *name)
{
	uint64_t h = hash_str(name);
	int64_t id = hidx_find(&t->name_idx, h, name_eq, t, name);
	char *copy;

	if (id >= 0)
		return id;
	if (pa_grow((void **)&t->names, &t->cap_names, t->nr_names + 1, sizeof(*t->names)))
		return -ENOMEM;
	copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	if (hidx_insert(&t->name_idx, h, t->nr_names)) {
		free(copy);
		return -ENOMEM;
	}
	t->names[t->nr_names] = copy;
	return t->nr_names++;
}

struct node_key {
	uint32_t parent, name;
	uint8_t kind;
};

static uint64_t node_hash(const struct node_key *k)
{
	return hash_mix(hash_mix(k->parent, k->name), k->kind);
}

static bool node_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct flame_tree *t = ctx;
	const struct node_key *k = key;

	return t->parent_of[id] == k->parent && t->nodes[id].name == k->name &&
	       t->nodes[id].kind == k->kind;
}

/* The child of parent named name of kind, made if new; -ENOMEM. */
static int64_t child(struct flame_tree *t, uint32_t parent, uint32_t name, uint8_t kind)
{
	struct node_key k = {parent, name, kind};
	uint64_t h = node_hash(&k);
	int64_t id = hidx_find(&t->node_idx, h, node_eq, t, &k);
	size_t n = t->nr_nodes;

	if (id >= 0)
		return id;
	if (pa_grow((void **)&t->nodes, &t->cap_nodes, n + 1, sizeof(*t->nodes)) ||
	    pa_grow((void **)&t->parent_of, &t->cap_parent, n + 1, sizeof(*t->parent_of)) ||
	    pa_grow((void **)&t->val, &t->cap_val, (n + 1) * t->cols, sizeof(*t->val)) ||
	    hidx_insert(&t->node_idx, h, n))
		return -ENOMEM;
	memset(&t->val[n * t->cols], 0, t->cols * sizeof(*t->val));
	t->nodes[n] =
		(struct flame_node){.name = name, .kind = kind, .next = t->nodes[parent].child};
	t->nodes[parent].child = n;
	t->parent_of[n] = parent;
	t->nr_nodes++;
	return n;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

static uint8_t frame_kind(const struct cg_loc *loc, const struct cg_frame *fr)
{
	if (loc->kind == PA_FRAME_UNKNOWN)
		return FK_UNKNOWN;
	if (fr->kernel)
		return FK_KERNEL;
	if (!strncmp(fr->name, "[gpu:launch]", 12))
		return FK_GPU_LAUNCH;
	if (!strncmp(fr->name, "[gpu:", 5))
		return FK_GPU_KERNEL;
	if (loc->kind == PA_FRAME_JIT)
		return FK_JIT;
	if (fr->srcfile && ends_with(fr->srcfile, ".py"))
		return FK_PYTHON;
	return fr->inlined ? FK_INLINED : FK_NATIVE;
}

static int64_t frame_memo(struct builder *b, const struct cg_loc *loc, uint32_t fid)
{
	struct frame_memo *m = &b->memo[fid];
	const struct cg_frame *fr;
	int64_t id;

	if (m->name1)
		return m->name1 - 1;
	fr = cg_frame(b->cg, fid);
	id = name_id(b->t, fr->name);
	if (id < 0)
		return id;
	m->name1 = id + 1;
	m->kind = frame_kind(loc, fr);
	return id;
}

/* Add stack s's weight w to every node on its path, making the nodes. */
static int add_stack(struct builder *b, const struct cg_stack *s, uint64_t w, bool offcpu)
{
	struct flame_tree *t = b->t;
	uint32_t node = 0;
	int64_t id, n;
	size_t i;
	char state[64];
	uint32_t j;

#define STEP(name, kind)                                                                           \
	do {                                                                                       \
		n = child(t, node, (name), (kind));                                                \
		if (n < 0)                                                                         \
			return -ENOMEM;                                                            \
		node = n;                                                                          \
		t->val[node * t->cols + b->col] += w;                                              \
	} while (0)

	t->val[b->col] += w;
	id = name_id(t, s->comm ? s->comm : "[unknown]");
	if (id < 0)
		return -ENOMEM;
	STEP(id, FK_PROCESS);
	for (i = s->nr; i-- > 0;) {
		const struct cg_loc *loc = cg_loc(b->cg, s->locs[i]);

		/* The real function first, then what was inlined into it. */
		for (j = loc->nr_frames; j-- > 0;) {
			id = frame_memo(b, loc, loc->frame + j);
			if (id < 0)
				return -ENOMEM;
			STEP(id, b->memo[loc->frame + j].kind);
		}
	}
	if (offcpu) {
		const char *st = cg_label_str(s->labels, CG_LABEL_STATE);

		snprintf(state, sizeof(state), "[off-cpu] %s", st ? st : "blocked");
		id = name_id(t, state);
		if (id < 0)
			return -ENOMEM;
		STEP(id, FK_OFFCPU);
	}
#undef STEP
	return 0;
}

static bool event_is_time(const char *name)
{
	const char *type, *unit;

	pprof_value_type(name, &type, &unit);
	return !strcmp(unit, "nanoseconds");
}

/* Add cg's stacks of every event of t into value column base + its index. */
static int add_profile(struct flame_tree *t, const struct cg_profile *cg, size_t base)
{
	struct builder b = {.t = t, .cg = cg};
	int64_t *ev_col;
	size_t i, e;
	int err = -ENOMEM;

	b.memo = calloc(cg_nr_frames(cg) + 1, sizeof(*b.memo));
	ev_col = calloc(cg_nr_events(cg) + 1, sizeof(*ev_col));
	if (!b.memo || !ev_col)
		goto out;
	for (i = 0; i < cg_nr_events(cg); i++) {
		ev_col[i] = -1;
		for (e = 0; e < t->nr_events; e++)
			if (!strcmp(t->events[e].name, cg_event(cg, i)->name))
				ev_col[i] = base + e;
	}
	for (i = 0; i < cg_nr_stacks(cg); i++) {
		const struct cg_stack *s = cg_stack(cg, i);
		const char *ev;

		if (!s->count || ev_col[s->event] < 0)
			continue;
		ev = cg_event(cg, s->event)->name;
		b.col = ev_col[s->event];
		err = add_stack(&b, s, t->events[b.col - base].time ? s->period : s->count,
				!strcmp(ev, OFFCPU_EVENT));
		if (err)
			goto out;
	}
	for (e = 0; e < t->nr_events; e++)
		if (base)
			t->events[e].base_total = t->val[base + e];
		else
			t->events[e].total = t->val[e];
	err = 0;
out:
	free(b.memo);
	free(ev_col);
	return err;
}

static int by_name(const void *a, const void *b, void *ctx)
{
	const struct flame_tree *t = ctx;
	const struct flame_node *x = &t->nodes[*(const uint32_t *)a];
	const struct flame_node *y = &t->nodes[*(const uint32_t *)b];
	int c = strcmp(t->names[x->name], t->names[y->name]);

	return c ? c : x->kind - y->kind;
}

/* Every node's children relinked in name order. */
static int sort_children(struct flame_tree *t)
{
	uint32_t *tmp = NULL, c;
	size_t cap = 0, n, k, i;

	for (i = 0; i < t->nr_nodes; i++) {
		for (n = 0, c = t->nodes[i].child; c; c = t->nodes[c].next) {
			if (pa_grow((void **)&tmp, &cap, n + 1, sizeof(*tmp))) {
				free(tmp);
				return -ENOMEM;
			}
			tmp[n++] = c;
		}
		if (n < 2)
			continue;
		qsort_r(tmp, n, sizeof(*tmp), by_name, t);
		t->nodes[i].child = tmp[0];
		for (k = 0; k < n; k++)
			t->nodes[tmp[k]].next = k + 1 < n ? tmp[k + 1] : 0;
	}
	free(tmp);
	return 0;
}

int flame_tree_build(struct flame_tree *t, const struct cg_profile *cg,
		     const struct cg_profile *base)
{
	size_t i;
	int err = -ENOMEM;
	int64_t root;

	memset(t, 0, sizeof(*t));
	t->diff = base != NULL;
	t->events = calloc(cg_nr_events(cg) + 1, sizeof(*t->events));
	if (!t->events)
		return -ENOMEM;
	for (i = 0; i < cg_nr_events(cg); i++) {
		const struct cg_event *ev = cg_event(cg, i);

		if (!ev->samples)
			continue;
		t->events[t->nr_events].name = ev->name;
		t->events[t->nr_events].time = event_is_time(ev->name);
		t->nr_events++;
	}
	t->cols = t->nr_events * (t->diff ? 2 : 1);
	if (!t->cols)
		return 0;
	/* The root, node 0: its own parent, never anyone's child. */
	root = name_id(t, "all");
	if (root < 0 || pa_grow((void **)&t->nodes, &t->cap_nodes, 1, sizeof(*t->nodes)) ||
	    pa_grow((void **)&t->val, &t->cap_val, t->cols, sizeof(*t->val)) ||
	    pa_grow((void **)&t->parent_of, &t->cap_parent, 1, sizeof(*t->parent_of)))
		goto out;
	t->nodes[0] = (struct flame_node){.name = root, .kind = FK_ROOT};
	memset(t->val, 0, t->cols * sizeof(*t->val));
	t->parent_of[0] = 0;
	t->nr_nodes = 1;
	err = add_profile(t, cg, 0);
	if (!err && base)
		err = add_profile(t, base, t->nr_events);
	if (!err)
		err = sort_children(t);
out:
	/* Only building needs the parents and the node index. */
	free(t->parent_of);
	t->parent_of = NULL;
	hidx_free(&t->node_idx);
	return err;
}

void flame_tree_free(struct flame_tree *t)
{
	size_t i;

	for (i = 0; i < t->nr_names; i++)
		free(t->names[i]);
	free(t->names);
	free(t->nodes);
	free(t->val);
	free(t->events);
	hidx_free(&t->name_idx);
	hidx_free(&t->node_idx);
	memset(t, 0, sizeof(*t));
}

bool flame_visible(const struct flame_tree *t, uint32_t n, double min_frac)
{
	size_t e;

	for (e = 0; e < t->nr_events; e++) {
		if (t->val[n * t->cols + e] &&
		    t->val[n * t->cols + e] >= min_frac * t->events[e].total)
			return true;
		if (t->diff && t->val[n * t->cols + t->nr_events + e] &&
		    t->val[n * t->cols + t->nr_events + e] >= min_frac * t->events[e].base_total)
			return true;
	}
	return false;
}
