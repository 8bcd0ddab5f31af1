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

#include "hist.h"

static uint64_t hmix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 29);
}

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
			key->state = s->state;
			break;
		case SK_NR:
			break;
		}
	}
}

static uint64_t key_hash(const struct hist_entry *k)
{
	uint64_t x = hmix(hmix(hmix(0, (uintptr_t)k->comm), k->pid), k->tid);

	return hmix(hmix(hmix(x, (uintptr_t)k->dso), k->func), (uintptr_t)k->state);
}

static bool key_eq(const struct hist_entry *a, const struct hist_entry *b)
{
	return a->comm == b->comm && a->pid == b->pid && a->tid == b->tid && a->dso == b->dso &&
	       a->func == b->func && a->state == b->state;
}

static int grow_buckets(struct hists *h)
{
	size_t n = h->nr_buckets ? h->nr_buckets * 2 : 1024, i;
	struct hist_entry **b = calloc(n, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (i = 0; i < h->nr_buckets; i++) {
		struct hist_entry *e = h->buckets[i], *next;

		for (; e; e = next) {
			size_t j = key_hash(e) & (n - 1);

			next = e->next_hash;
			e->next_hash = b[j];
			b[j] = e;
		}
	}
	free(h->buckets);
	h->buckets = b;
	h->nr_buckets = n;
	return 0;
}

static struct hist_entry *find_or_add(struct hists *h, const struct hist_entry *key, uint32_t tid)
{
	size_t j = key_hash(key) & (h->nr_buckets - 1);
	struct hist_entry *e;

	for (e = h->buckets[j]; e; e = e->next_hash)
		if (key_eq(e, key))
			return e;
	if (h->nr_entries + 1 > h->nr_buckets) {
		if (grow_buckets(h))
			return NULL;
		j = key_hash(key) & (h->nr_buckets - 1);
	}
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
	h->entries[h->nr_entries] = e;
	*e = *key;
	e->first_tid = tid;
	e->next_hash = h->buckets[j];
	h->buckets[j] = e;
	h->nr_entries++;
	return e;
}

#define ARENA_BLOCK (1u << 20)

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

		b = calloc(1, sizeof(*b) + cap * sizeof(max_align_t));
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

static struct chain_node *kid_get(struct hists *h, struct chain_node *n, uint32_t frame)
{
	const struct cg_frame *f = cg_frame(h->cg, frame);
	uint32_t func = f->func;
	struct chain_node *k;
	size_t i;

	/* "mixer (inlined)" and a called mixer are two lines, as in perf --inline. */
	for (i = 0; i < n->nr_kids; i++)
		if (n->kids[i]->func == func &&
		    cg_frame(h->cg, n->kids[i]->frame)->inlined == f->inlined)
			return n->kids[i];
	if (n->nr_kids == n->cap_kids) {
		/* The arena cannot grow in place: the old array stays behind (<= 2x). */
		size_t cap = n->cap_kids ? n->cap_kids * 2 : 2;
		struct chain_node **kids = arena_alloc(h, cap * sizeof(*kids));

		if (!kids)
			return NULL;
		if (n->nr_kids)
			memcpy(kids, n->kids, n->nr_kids * sizeof(*kids));
		n->kids = kids;
		n->cap_kids = cap;
	}
	k = arena_alloc(h, sizeof(*k));
	if (!k)
		return NULL;
	k->func = func;
	k->frame = frame;
	n->kids[n->nr_kids++] = k;
	return k;
}

static int chain_add(struct hists *h, struct hist_entry *e, const uint32_t *seq, size_t nr,
		     uint64_t period)
{
	struct chain_node *root = &e->root, *n = root;
	size_t i;

	if (nr > e->max_depth)
		e->max_depth = nr;
	root->cumul += period;
	for (i = 0; i < nr; i++) {
		n = kid_get(h, n, seq[i]);
		if (!n)
			return -ENOMEM;
		n->cumul += period;
	}
	n->hit += period;
	return 0;
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
	if (o->order != ORDER_NONE && chain_add(h, self, seq, nr, s->period))
		return -ENOMEM;
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
		if (o->order != ORDER_NONE && chain_add(h, e, seq + i, nr - i, s->period))
			return -ENOMEM;
	}
	return 0;
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
	if (grow_buckets(h))
		return -ENOMEM;
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

		if (s->event != ev)
			continue;
		h->total_period += s->period;
		h->total_samples += s->count;
		err = add_stack(h, s, exp, seq, seen);
		if (err)
			break;
	}
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
			c = cmp_str(a->state, b->state);
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

	for (i = 0; i < h->nr_buckets; i++) {
		struct hist_entry *e = h->buckets[i], *next;

		for (; e; e = next) {
			next = e->next_hash;
			free(e);
		}
	}
	while (h->arena) {
		struct hist_arena_block *b = h->arena;

		h->arena = b->next;
		free(b);
	}
	free(h->buckets);
	free(h->entries);
	memset(h, 0, sizeof(*h));
}
