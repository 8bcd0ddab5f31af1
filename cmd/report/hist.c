// SPDX-License-Identifier: Apache-2.0
/*
 * Entries and their call-graph tries.  Children follow perf's cumulative iterator:
 * walking a chain in the chosen order, every entry met gets the sample's period
 * once (the first occurrence wins under recursion) together with the part of the
 * chain from that frame on; the leaf's own entry gets the whole chain.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "hist.h"

/* The entry key of frame f in stack s, restricted to the sort keys. */
static void make_key(const struct hists *h, const struct cg_stack *s, uint32_t frame,
		     struct hist_entry *key)
{
	const struct cg_frame *f = cg_frame(h->cg, frame);
	size_t i;

	memset(key, 0, sizeof(*key));
	key->frame = frame;
	for (i = 0; i < h->opts.nr_keys; i++) {
		switch (h->opts.keys[i]) {
		case SK_COMM:
			key->comm = s->comm;
			break;
		case SK_PID:
			key->pid = s->pid;
			break;
		case SK_TID:
			key->tid = s->tid;
			break;
		case SK_DSO:
			key->dso = f->dso_name;
			break;
		case SK_SYM:
			key->func = f->func + 1; /* 0 means "not keyed" */
			break;
		case SK_STATE:
		case SK_CGROUP:
		case SK_CONTAINER:
		case SK_POD:
			key->label[h->opts.keys[i] - SK_FIRST_LABEL] =
				cg_label_str(s->labels, hist_label_key(h->opts.keys[i]));
			break;
		case SK_NR:
			break;
		}
	}
}

const char *hist_label_key(enum sort_key k)
{
	switch (k) {
	case SK_STATE:
		return CG_LABEL_STATE;
	case SK_CGROUP:
		return CG_LABEL_CGROUP;
	case SK_CONTAINER:
		return CG_LABEL_CONTAINER;
	case SK_POD:
		return CG_LABEL_POD;
	default:
		return NULL;
	}
}

static uint64_t key_hash(const struct hist_entry *k)
{
	uint64_t x = hash_mix(hash_mix(hash_mix(0, (uintptr_t)k->comm), k->pid), k->tid);

	x = hash_mix(hash_mix(x, (uintptr_t)k->dso), k->func);
	for (size_t i = 0; i < SK_NR_LABELS; i++)
		x = hash_mix(x, (uintptr_t)k->label[i]);
	return x;
}

static bool key_eq(const struct hist_entry *a, const struct hist_entry *b)
{
	return a->comm == b->comm && a->pid == b->pid && a->tid == b->tid && a->dso == b->dso &&
	       a->func == b->func && !memcmp(a->label, b->label, sizeof(a->label));
}

static bool entry_eq(const void *ctx, uint32_t id, const void *key)
{
	return key_eq(((const struct hists *)ctx)->entries[id], key);
}

/* The entry of key, made (first seen in thread tid) when new; NULL: out of memory.
 * Entries are indexed by their creation order until hists_sort reorders them. */
static struct hist_entry *find_or_add(struct hists *h, const struct hist_entry *key, uint32_t tid)
{
	uint64_t hh = key_hash(key);
	int64_t id = hidx_find(&h->idx, hh, entry_eq, h, key);
	struct hist_entry *e;

	if (id >= 0)
		return h->entries[id];
	if (h->nr_entries == h->cap_entries) {
		size_t cap = h->cap_entries ? 2 * h->cap_entries : 1024;
		struct hist_entry **v = realloc(h->entries, cap * sizeof(*v));

		if (!v)
			return NULL;
		h->entries = v;
		h->cap_entries = cap;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	if (hidx_insert(&h->idx, hh, h->nr_entries)) {
		free(e);
		return NULL;
	}
	*e = *key;
	e->first_tid = tid;
	h->entries[h->nr_entries++] = e;
	return e;
}

#define ARENA_BLOCK (4u << 20)

/* size bytes, zeroed and aligned, from h's arena; NULL when out of memory. */
static void *arena_alloc(struct hists *h, size_t size)
{
	struct hist_arena_block *b = h->arena;
	size_t units = (size + sizeof(max_align_t) - 1) / sizeof(max_align_t);
	void *p;

	if (!b || b->used + units > b->cap) {
		size_t cap = units > ARENA_BLOCK / sizeof(max_align_t)
				     ? units
				     : ARENA_BLOCK / sizeof(max_align_t);

		b = pa_calloc_big(1, sizeof(*b) + cap * sizeof(max_align_t));
		if (!b)
			return NULL;
		b->cap = cap;
		b->next = h->arena;
		h->arena = b;
	}
	p = &b->data[b->used];
	b->used += units;
	return p;
}

/* The frames of s's locations, leaf first, into exp; their number. */
static size_t expand(const struct cg_profile *cg, const struct cg_stack *s, uint32_t *exp)
{
	size_t i, n = 0;

	for (i = 0; i < s->nr; i++) {
		const struct cg_loc *l = cg_loc(cg, s->locs[i]);
		uint32_t k;

		for (k = 0; k < l->nr_frames; k++)
			exp[n++] = l->frame + k;
	}
	return n;
}

static int add_stack(struct hists *h, const struct cg_stack *s, uint32_t *exp, uint32_t *seq,
		     struct hist_entry **seen)
{
	const struct hist_opts *o = &h->opts;
	struct hist_entry key, *self;
	size_t i, j, nr_seen = 0, nr = expand(h->cg, s, exp);

	/* Chains run in the order they are printed: root first for caller. */
	for (i = 0; i < nr; i++)
		seq[i] = o->order == ORDER_CALLER ? exp[nr - 1 - i] : exp[i];

	/*
	 * perf's entry is the sample's real function: an inlined helper's frames show
	 * in the call graph, not as the entry (nor as entries of their own).
	 */
	for (i = 0; i + 1 < nr && cg_frame(h->cg, exp[i])->inlined; i++)
		;
	make_key(h, s, exp[i], &key);
	self = find_or_add(h, &key, s->tid);
	if (!self)
		return -ENOMEM;
	self->self += s->period;
	self->children += s->period;
	if (nr > self->max_depth)
		self->max_depth = nr;
	if (!o->children)
		return 0;

	seen[nr_seen++] = self;
	for (i = 0; i < nr; i++) {
		struct hist_entry *e;

		if (cg_frame(h->cg, seq[i])->inlined)
			continue;
		make_key(h, s, seq[i], &key);
		for (j = 0; j < nr_seen; j++)
			if (key_eq(seen[j], &key))
				break;
		if (j < nr_seen)
			continue;
		e = find_or_add(h, &key, s->tid);
		if (!e)
			return -ENOMEM;
		e->children += s->period;
		seen[nr_seen++] = e;
		if (nr - i > e->max_depth)
			e->max_depth = nr - i;
	}
	return 0;
}

/*
 * The call-graph tries, built level by level so that only branches that will be
 * printed are ever made.  An item is one chain still being followed: a stack's
 * frames seq[pos, end) below trie node `node` of an entry.  At each level every item
 * steps into the kid its next frame names (a candidate, gathering the period of the
 * items that reach it); candidates under min_hit are counted but dropped with their
 * items, since nothing under them can reach the threshold either.  A chain that ends
 * adds its period to the node's hit.
 */
struct graph_item {
	uint32_t pos, end; /* into the graphs' seqs */
	uint32_t node;	   /* nodes[] (this level: cands[]) index */
	uint32_t stack;
};

struct graph_cand {
	uint32_t parent; /* nodes[] index */
	uint32_t func, frame;
	bool inlined;
	uint64_t cumul;
};

struct graph_build {
	struct hists *h;
	uint32_t *seqs; /* each stack's frames in print order, back to back */
	size_t nr_seqs, cap_seqs;
	struct graph_item *items;
	size_t nr_items, cap_items;
	struct chain_node **nodes; /* index -> node; the entries' roots first */
	size_t nr_nodes, cap_nodes;
	struct graph_cand *cands;
	size_t nr_cands, cap_cands;
	struct hidx cand_idx;
};

static bool cand_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct graph_cand *a = &((const struct graph_build *)ctx)->cands[id], *b = key;

	return a->parent == b->parent && a->func == b->func && a->inlined == b->inlined;
}

static uint32_t node_add(struct graph_build *g, struct chain_node *n)
{
	if (pa_grow((void **)&g->nodes, &g->cap_nodes, g->nr_nodes + 1, sizeof(*g->nodes)))
		return UINT32_MAX;
	g->nodes[g->nr_nodes] = n;
	return g->nr_nodes++;
}

/* Items of stack s: one per entry with a graph, from where its chain starts. */
static int graph_items(struct graph_build *g, const struct cg_stack *s, uint32_t sidx,
		       uint32_t *exp, struct hist_entry **seen)
{
	struct hists *h = g->h;
	const struct hist_opts *o = &h->opts;
	struct hist_entry key, *e;
	size_t i, j, nr = expand(h->cg, s, exp), base = g->nr_seqs, nr_seen = 0;

	if (pa_grow((void **)&g->seqs, &g->cap_seqs, g->nr_seqs + nr, sizeof(*g->seqs)))
		return -ENOMEM;
	for (i = 0; i < nr; i++)
		g->seqs[base + i] = o->order == ORDER_CALLER ? exp[nr - 1 - i] : exp[i];
	g->nr_seqs += nr;
	for (i = 0; i + 1 < nr && cg_frame(h->cg, exp[i])->inlined; i++)
		;
	/* The same walk as add_stack: the leaf's entry takes the whole chain, each
	 * caller's entry (first occurrence) the chain from its frame on. */
	for (j = (size_t)-1; j == (size_t)-1 || (o->children && j < nr); j++) {
		size_t start = j == (size_t)-1 ? 0 : j, k;
		uint32_t frame = j == (size_t)-1 ? exp[i] : g->seqs[base + j];

		if (j != (size_t)-1 && cg_frame(h->cg, frame)->inlined)
			continue;
		make_key(h, s, frame, &key);
		for (k = 0; k < nr_seen; k++)
			if (key_eq(seen[k], &key))
				break;
		if (k < nr_seen)
			continue;
		e = find_or_add(h, &key, s->tid);
		if (!e)
			return -ENOMEM;
		seen[nr_seen++] = e;
		if (!e->graph)
			continue;
		if (pa_grow((void **)&g->items, &g->cap_items, g->nr_items + 1, sizeof(*g->items)))
			return -ENOMEM;
		g->items[g->nr_items++] = (struct graph_item){
			.pos = base + start, .end = base + nr, .node = e->graph - 1, .stack = sidx};
		e->root.cumul += s->period;
	}
	return 0;
}

/* One level: every item steps one frame down; returns how many items go on. */
static int graph_level_build(struct graph_build *g, const struct cg_profile *cg, uint32_t ev)
{
	struct hists *h = g->h;
	size_t i, live = 0;

	g->nr_cands = 0;
	hidx_free(&g->cand_idx);
	for (i = 0; i < g->nr_items; i++) {
		struct graph_item *it = &g->items[i];
		uint64_t period = cg_stack(cg, it->stack)->period;
		const struct cg_frame *f;
		struct graph_cand key;
		uint64_t hh;
		int64_t c;

		if (it->pos == it->end) {
			g->nodes[it->node]->hit += period;
			continue;
		}
		f = cg_frame(cg, g->seqs[it->pos]);
		key = (struct graph_cand){.parent = it->node,
					  .func = f->func,
					  .frame = g->seqs[it->pos],
					  .inlined = f->inlined};
		hh = hash_mix(hash_mix(hash_mix(0, key.parent), key.func), key.inlined);
		c = hidx_find(&g->cand_idx, hh, cand_eq, g, &key);
		if (c < 0) {
			if (pa_grow((void **)&g->cands, &g->cap_cands, g->nr_cands + 1,
				    sizeof(*g->cands)) ||
			    hidx_insert(&g->cand_idx, hh, g->nr_cands))
				return -ENOMEM;
			c = g->nr_cands++;
			g->cands[c] = key;
			g->nodes[key.parent]->nr_all++;
		}
		g->cands[c].cumul += period;
		it->node = c;
		it->pos++;
		g->items[live++] = *it;
	}
	g->nr_items = live;
	/* Candidates become nodes (their index replaces the candidate's) or go. */
	for (i = 0; i < g->nr_cands; i++) {
		struct graph_cand *c = &g->cands[i];
		struct chain_node *p = g->nodes[c->parent], *n;
		uint32_t id = UINT32_MAX;

		if (c->cumul >= h->min_hit && c->cumul) {
			n = arena_alloc(h, sizeof(*n));
			if (!n)
				return -ENOMEM;
			n->func = c->func;
			n->frame = c->frame;
			n->cumul = c->cumul;
			id = node_add(g, n);
			if (id == UINT32_MAX)
				return -ENOMEM;
			/* Kids in creation order, like the tries perf builds chain by chain. */
			if (p->nr_kids == 0 || !(p->nr_kids & (p->nr_kids - 1))) {
				size_t cap = p->nr_kids ? 2 * p->nr_kids : 2;
				struct chain_node **k = arena_alloc(h, cap * sizeof(*k));

				if (!k)
					return -ENOMEM;
				if (p->nr_kids)
					memcpy(k, p->kids, p->nr_kids * sizeof(*k));
				p->kids = k;
			}
			p->kids[p->nr_kids++] = n;
		}
		c->parent = id; /* reused: the candidate's node, or none */
	}
	for (i = live = 0; i < g->nr_items; i++) {
		struct graph_item *it = &g->items[i];

		if (g->cands[it->node].parent == UINT32_MAX)
			continue;
		it->node = g->cands[it->node].parent;
		g->items[live++] = *it;
	}
	g->nr_items = live;
	(void)ev;
	return 0;
}

static int build_graphs(struct hists *h, const struct cg_profile *cg, uint32_t ev, uint32_t *exp,
			struct hist_entry **seen)
{
	struct graph_build g = {.h = h};
	size_t i;
	int err = 0;

	/* Entries whose graph can show anything: their total reaches the threshold. */
	for (i = 0; i < h->nr_entries; i++) {
		struct hist_entry *e = h->entries[i];
		uint64_t v = h->opts.children ? e->children : e->self;
		uint32_t id;

		if (v < h->min_hit || !v)
			continue;
		id = node_add(&g, &e->root);
		if (id == UINT32_MAX) {
			err = -ENOMEM;
			goto out;
		}
		e->graph = id + 1;
	}
	if (!g.nr_nodes)
		goto out;
	for (i = 0; i < cg_nr_stacks(cg) && !err; i++)
		if (cg_stack(cg, i)->event == ev && cg_stack(cg, i)->count)
			err = graph_items(&g, cg_stack(cg, i), i, exp, seen);
	while (!err && g.nr_items)
		err = graph_level_build(&g, cg, ev);
out:
	free(g.seqs);
	free(g.items);
	free(g.nodes);
	free(g.cands);
	hidx_free(&g.cand_idx);
	return err;
}

int hists_build(struct hists *h, const struct cg_profile *cg, uint32_t ev,
		const struct hist_opts *opts)
{
	size_t i, max = 1;
	uint32_t *seq, *exp;
	struct hist_entry **seen;
	int err = 0;

	memset(h, 0, sizeof(*h));
	h->cg = cg;
	h->opts = *opts;
	/* perf: min hits = total * (min_percent / 100), truncated; set once totals are. */
	for (i = 0; i < cg_nr_locs(cg); i++)
		if (cg_loc(cg, i)->nr_frames > max)
			max = cg_loc(cg, i)->nr_frames;
	{
		size_t deepest = 1, k;

		for (k = 0; k < cg_nr_stacks(cg); k++)
			if (cg_stack(cg, k)->nr > deepest)
				deepest = cg_stack(cg, k)->nr;
		max *= deepest; /* a bound on any stack's frames */
	}
	seq = calloc(max, sizeof(*seq));
	exp = calloc(max, sizeof(*exp));
	seen = calloc(max + 1, sizeof(*seen));
	if (!seq || !exp || !seen) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < cg_nr_stacks(cg); i++) {
		const struct cg_stack *s = cg_stack(cg, i);

		/* count 0: dropped by cg_keep_stacks (--focus, --ignore) */
		if (s->event != ev || !s->count)
			continue;
		h->total_period += s->period;
		h->total_samples += s->count;
		err = add_stack(h, s, exp, seq, seen);
		if (err)
			break;
	}
	h->min_hit = (uint64_t)(h->total_period * (opts->chain_min_percent / 100.0));
	if (!err && opts->order != ORDER_NONE)
		err = build_graphs(h, cg, ev, exp, seen);
out:
	free(seq);
	free(exp);
	free(seen);
	return err;
}

static int cmp_str(const char *a, const char *b)
{
	if (a == b)
		return 0;
	if (!a || !b)
		return a ? 1 : -1;
	return strcmp(a, b);
}

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a < b ? 1 : a > b ? -1 : 0;
}

static int cmp_keys(const struct hists *h, const struct hist_entry *a, const struct hist_entry *b)
{
	const struct cg_frame *fa = cg_frame(h->cg, a->frame), *fb = cg_frame(h->cg, b->frame);
	size_t i;
	int c = 0;

	for (i = 0; i < h->opts.nr_keys && !c; i++) {
		switch (h->opts.keys[i]) {
		case SK_COMM:
			c = cmp_str(a->comm, b->comm);
			break;
		case SK_PID:
			c = a->pid < b->pid ? -1 : a->pid > b->pid;
			break;
		case SK_TID:
			c = a->tid < b->tid ? -1 : a->tid > b->tid;
			break;
		case SK_DSO:
			c = cmp_str(a->dso, b->dso);
			break;
		case SK_SYM:
			c = cmp_str(fa->name, fb->name);
			if (!c)
				c = cmp_str(fa->dso_name, fb->dso_name);
			break;
		case SK_STATE:
		case SK_CGROUP:
		case SK_CONTAINER:
		case SK_POD:
			c = cmp_str(a->label[h->opts.keys[i] - SK_FIRST_LABEL],
				    b->label[h->opts.keys[i] - SK_FIRST_LABEL]);
			break;
		case SK_NR:
			break;
		}
	}
	return c;
}

/* qsort has no context argument, so each item carries the hists it belongs to. */
struct sort_item {
	const struct hists *h;
	struct hist_entry *e;
};

static int cmp_items(const void *pa, const void *pb)
{
	const struct sort_item *a = pa, *b = pb;
	int c = 0;

	if (a->h->opts.children) {
		c = cmp_u64_desc(a->e->children, b->e->children);
		/*
		 * perf puts a caller above its callee when both have the same children
		 * period: in caller order the caller's chains run deeper (they hold the
		 * callee's), so the longer chain comes first; if both entries started
		 * in one thread.
		 */
		if (!c && a->e->first_tid == b->e->first_tid && a->h->opts.order != ORDER_NONE) {
			c = a->e->max_depth > b->e->max_depth ? -1
							      : a->e->max_depth < b->e->max_depth;
			if (a->h->opts.order == ORDER_CALLEE)
				c = -c;
		}
	}
	if (!c)
		c = cmp_u64_desc(a->e->self, b->e->self);
	if (!c)
		c = cmp_keys(a->h, a->e, b->e);
	return c;
}

void hists_sort(struct hists *h)
{
	struct sort_item *items = calloc(h->nr_entries ? h->nr_entries : 1, sizeof(*items));
	size_t i;

	/* Unsorted output beats none. */
	if (!items)
		return;
	/*
	 * From creation order, which the samples decide: the comparison is not a total
	 * order (perf's caller-above-callee tie-break holds within one thread only), so
	 * the input order must not depend on where entries happen to be in memory.
	 */
	for (i = 0; i < h->nr_entries; i++)
		items[i] = (struct sort_item){h, h->entries[i]};
	qsort(items, h->nr_entries, sizeof(*items), cmp_items);
	for (i = 0; i < h->nr_entries; i++)
		h->entries[i] = items[i].e;
	free(items);
}

void hists_free(struct hists *h)
{
	size_t i;

	for (i = 0; i < h->nr_entries; i++)
		free(h->entries[i]);
	while (h->arena) {
		struct hist_arena_block *b = h->arena;

		h->arena = b->next;
		free(b);
	}
	hidx_free(&h->idx);
	free(h->entries);
	memset(h, 0, sizeof(*h));
}
