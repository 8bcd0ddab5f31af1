// SPDX-License-Identifier: Apache-2.0
/*
 * Stack aggregation shared by pa-report and pa-convert.  Per address: one hash lookup
 * of its location key; per sample: one of its stack.  Symbols, DWARF and names are
 * looked up once per distinct location, when it is first seen.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/util.h"
#include "perfdata/event.h"
#include "profile/callgraph.h"
#include "profile/container.h"
#include "profile/gpu_sum.h"
#include "profile/offcpu.h"
#include "symbolize/dso.h"

#define CG_MAX_FRAMES 4096
/*
 * Stack location ids are allocated in blocks, each twice the last, from 64K ids (a
 * short window of perf-agent --continuous needs no more) to 4M.
 */
#define IDS_BLOCK_MIN (64u << 10)
#define IDS_BLOCK     (4u << 20)

struct ids_block {
	struct ids_block *next;
	size_t used, size;
	uint32_t ids[];
};

/* What a location was interned by: the key of machine_locate. */
struct loc_key {
	uint64_t ip;
	uint32_t map;
	uint8_t ring;
	bool ret;
};

/* leaf_only: a function (key.ip its start) and the one location all its addresses use. */
struct leaf_entry {
	struct loc_key key;
	uint32_t loc;
};

struct loc_entry {
	struct cg_loc l;
	struct loc_key key;
	bool gpu_wait; /* in a CUDA call that waits for the GPU (is_gpu_wait) */
};

/*
 * Whether sym is a CUDA call that blocks its thread until the GPU has finished:
 * off-CPU time under one is waiting on the GPU, whatever the thread's state.
 */
static bool is_gpu_wait(const char *sym)
{
	static const char *const waits[] = {
		"cudaStreamSynchronize", "cudaStreamSynchronize_ptsz", "cudaDeviceSynchronize",
		"cudaEventSynchronize",	 "cuStreamSynchronize",	       "cuStreamSynchronize_ptsz",
		"cuCtxSynchronize",	 "cuEventSynchronize",
	};
	size_t i, n;

	if (!sym || sym[0] != 'c' || sym[1] != 'u')
		return false;
	n = strcspn(sym, "@"); /* a versioned dynamic symbol: name@@VERSION */
	for (i = 0; i < sizeof(waits) / sizeof(waits[0]); i++)
		if (strlen(waits[i]) == n && !strncmp(sym, waits[i], n))
			return true;
	return false;
}

struct map_entry {
	struct cg_mapping m;
	const struct dso *dso;
};

/* A sample of the timeline as add_stack keeps it (cg_set_timeline). */
struct tl_entry {
	uint64_t time, period;
};

struct cg_profile {
	struct hidx str_idx;
	char **strs;
	size_t nr_strs, cap_strs;

	/* Locations by machine_locate key, and (cg_add_sample) by their frames. */
	struct hidx loc_idx, floc_idx;
	/* leaf_only: the location of each function's first address, by function. */
	struct hidx leaf_idx;
	struct leaf_entry *leaves;
	size_t nr_leaves, cap_leaves;
	struct loc_entry *locs;
	size_t nr_locs, cap_locs;
	int64_t unknown_loc; /* the "[unknown]" location of empty stacks, -1 until made */

	struct cg_frame *frames;
	size_t nr_frames, cap_frames;

	struct hidx func_idx;
	struct cg_func *funcs;
	size_t nr_funcs, cap_funcs;

	struct hidx map_idx;
	struct map_entry *maps;
	size_t nr_maps, cap_maps;

	/* Label sets, interned: stacks point at them. */
	struct hidx lset_idx;
	struct cg_labels **lsets;
	size_t nr_lsets, cap_lsets;

	struct hidx stack_idx;
	struct cg_stack *stacks;
	size_t nr_stacks, cap_stacks;
	struct ids_block *ids_blocks;

	struct cg_event *events;
	size_t nr_events;

	struct gpu_sum gpu;	     /* gpu-launch and gpu-time samples by kernel */
	struct cg_label gpu_wait[1]; /* thread_state: gpu-wait, once interned */
	/* The labels of each cgroup id samples carried (cgroup_labels). */
	struct hidx cgl_idx;
	struct cgroup_labels *cgls;
	size_t nr_cgls, cap_cgls;
	/* The last off-CPU state seen (offcpu_state_name's) and its label set. */
	const char *last_state;
	const struct cg_labels *last_state_labels;

	bool leaf_only;		   /* cg_set_leaf_only */
	bool count_thread;	   /* cg_set_count_thread */
	struct counter *counter;   /* while cg_load runs with one */
	size_t thread_batches;	   /* batches it counted in the last cg_load */
	const char *last_comm;	   /* the interned comm of the last sample */
	struct machine_loc *mlocs; /* CG_MAX_FRAMES located addresses */
	struct frame *scratch;	   /* CG_MAX_FRAMES symbolized frames */
	uint32_t *ids;		   /* CG_MAX_FRAMES location ids */
	uint64_t *hashes;	   /* CG_MAX_FRAMES location key hashes */

	/* cg_set_timeline: each sample's time and period, kept by add_stack, and its
	 * stack, kept by count_stack; each array is written by one thread only, and both
	 * in the order the samples were added. */
	bool timeline;
	struct tl_entry *tl;
	size_t nr_tl, cap_tl;
	uint32_t *tl_stack;
	size_t nr_tl_stack, cap_tl_stack;
};

static bool str_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct cg_profile *cg = ctx;

	return !strcmp(cg->strs[id], key);
}

/* The one copy of s owned by cg; NULL (errno ENOMEM) on allocation failure. */
static const char *intern(struct cg_profile *cg, const char *s)
{
	uint64_t h = hash_str(s);
	int64_t id = hidx_find(&cg->str_idx, h, str_eq, cg, s);
	char *copy;

	if (id >= 0)
		return cg->strs[id];
	if (pa_grow((void **)&cg->strs, &cg->cap_strs, cg->nr_strs + 1, sizeof(*cg->strs)))
		goto nomem;
	copy = strdup(s);
	if (!copy)
		goto nomem;
	if (hidx_insert(&cg->str_idx, h, cg->nr_strs)) {
		free(copy);
		goto nomem;
	}
	cg->strs[cg->nr_strs++] = copy;
	return copy;
nomem:
	errno = ENOMEM;
	return NULL;
}

static bool func_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct cg_profile *cg = ctx;
	const struct cg_func *a = &cg->funcs[id], *b = key;

	return a->dso_name == b->dso_name && a->name == b->name;
}

/* The function of dso_name and name (both interned); file names a new one. */
static int func_id(struct cg_profile *cg, const char *dso_name, const char *name, const char *file,
		   uint32_t *out)
{
	struct cg_func key = {.name = name, .dso_name = dso_name, .file = file};
	uint64_t h = hash_mix(hash_mix(0, (uintptr_t)dso_name), (uintptr_t)name);
	int64_t id = hidx_find(&cg->func_idx, h, func_eq, cg, &key);

	if (id < 0) {
		if (pa_grow((void **)&cg->funcs, &cg->cap_funcs, cg->nr_funcs + 1,
			    sizeof(*cg->funcs)) ||
		    hidx_insert(&cg->func_idx, h, cg->nr_funcs))
			return -ENOMEM;
		id = cg->nr_funcs;
		cg->funcs[cg->nr_funcs++] = key;
	}
	*out = id;
	return 0;
}

static bool map_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct cg_profile *cg = ctx;
	const struct map_entry *a = &cg->maps[id], *k = key;

	return a->dso == k->dso && a->m.kernel == k->m.kernel && a->m.start == k->m.start &&
	       a->m.pgoff == k->m.pgoff;
}

/* The mapping of a location whose real frame is f: one per (dso, ring, start, offset),
 * which also gives kernel frames one mapping; 0 when f has none, else its id + 1. */
static int mapping_id(struct cg_profile *cg, const struct frame *f, uint32_t *out)
{
	struct map_entry k = {.dso = f->dso};
	const char *path;
	const uint8_t *bid;
	size_t bid_len;
	uint64_t h;
	int64_t id;

	*out = 0;
	if (!f->dso && !f->kernel)
		return 0;
	k.m.kernel = f->kernel;
	if (f->dso) {
		k.m.start = f->map_start;
		k.m.end = f->map_end;
		k.m.pgoff = f->map_pgoff;
	}
	h = hash_mix(hash_mix(hash_mix(hash_mix(0, (uintptr_t)k.dso), k.m.kernel), k.m.start),
		     k.m.pgoff);
	id = hidx_find(&cg->map_idx, h, map_eq, cg, &k);
	if (id < 0) {
		path = f->dso ? dso_path(f->dso) : NULL;
		k.m.path = intern(cg, path ? path : f->dso_name ? f->dso_name : "[unknown]");
		if (!k.m.path)
			return -ENOMEM;
		bid_len = f->dso ? dso_build_id(f->dso, &bid) : 0;
		if (bid_len) {
			char hex[2 * 64 + 1];

			if (bid_len > 64)
				bid_len = 64;
			pa_hex(hex, bid, bid_len);
			k.m.build_id = intern(cg, hex);
			if (!k.m.build_id)
				return -ENOMEM;
		}
		if (pa_grow((void **)&cg->maps, &cg->cap_maps, cg->nr_maps + 1,
			    sizeof(*cg->maps)) ||
		    hidx_insert(&cg->map_idx, h, cg->nr_maps))
			return -ENOMEM;
		id = cg->nr_maps++;
		cg->maps[id] = k;
	}
	*out = id + 1;
	return 0;
}

/* Append the frames f[0..n) (one location: inlined ones first, the real one last). */
static int add_location(struct cg_profile *cg, const struct frame *f, size_t n, uint32_t *out)
{
	const struct frame *real = &f[n - 1];
	struct cg_loc *l;
	uint32_t loc = cg->nr_locs;
	char buf[512];
	size_t i;

	if (pa_grow((void **)&cg->locs, &cg->cap_locs, cg->nr_locs + 1, sizeof(*cg->locs)))
		return -ENOMEM;
	if (pa_grow((void **)&cg->frames, &cg->cap_frames, cg->nr_frames + n, sizeof(*cg->frames)))
		return -ENOMEM;
	memset(&cg->locs[loc], 0, sizeof(cg->locs[loc]));
	l = &cg->locs[loc].l;
	l->ip = real->ip;
	l->kind = real->kind;
	cg->locs[loc].gpu_wait = is_gpu_wait(real->sym);
	l->frame = cg->nr_frames;
	l->nr_frames = n;
	if (mapping_id(cg, real, &l->mapping))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct cg_frame *cf = &cg->frames[cg->nr_frames + i];
		const char *path = l->mapping ? cg->maps[l->mapping - 1].m.path : NULL;

		memset(cf, 0, sizeof(*cf));
		cf->loc = loc;
		cf->kernel = f[i].kernel;
		/* An unnamed inlined frame cannot be told from its neighbours: treat it as
		 * real. */
		cf->inlined = f[i].inlined && f[i].sym && i + 1 < n;
		cf->line = f[i].line;
		cf->dso_name = intern(cg, f[i].dso_name ? f[i].dso_name : "[unknown]");
		cf->sym = f[i].sym ? intern(cg, f[i].sym) : NULL;
		cf->name = intern(cg, frame_name(&f[i], buf, sizeof(buf)));
		cf->srcfile = f[i].srcfile ? intern(cg, f[i].srcfile) : NULL;
		if (!path)
			path = cf->dso_name;
		if (!cf->dso_name || (f[i].sym && !cf->sym) || !cf->name ||
		    (f[i].srcfile && !cf->srcfile) ||
		    func_id(cg, cf->dso_name, cf->name, cf->srcfile ? cf->srcfile : path,
			    &cf->func))
			return -ENOMEM;
	}
	cg->nr_frames += n;
	*out = cg->nr_locs++;
	return 0;
}
static bool key_eq(const struct loc_key *a, const struct loc_key *b)
{
	return a->ip == b->ip && a->map == b->map && a->ring == b->ring && a->ret == b->ret;
}

static uint64_t key_hash(const struct loc_key *k)
{
	return hash_mix(hash_mix(0, k->ip),
			k->map | (uint64_t)k->ring << 32 | (uint64_t)k->ret << 40);
}

static bool loc_eq(const void *ctx, uint32_t id, const void *key)
{
	return key_eq(&((const struct cg_profile *)ctx)->locs[id].key, key);
}

static struct loc_key loc_key_of(const struct machine_loc *ml)
{
	return (struct loc_key){.ip = ml->ip, .map = ml->map, .ring = ml->ring, .ret = ml->ret};
}

static uint64_t loc_hash(const struct machine_loc *ml)
{
	struct loc_key key = loc_key_of(ml);

	return key_hash(&key);
}

/*
 * The hashes of a sample's located addresses, their index slots fetched ahead: the
 * lookups that follow would each wait for one (the index of a large capture is far
 * larger than the caches).
 */
static void loc_hashes(const struct cg_profile *cg, const struct machine_loc *ml, size_t nr,
		       uint64_t *h)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		h[i] = loc_hash(&ml[i]);
		hidx_prefetch(&cg->loc_idx, h[i]);
	}
}

/* The location of a located address (its key's hash h), symbolized when it is new. */
static int loc_id(struct cg_profile *cg, struct machine *m, const struct machine_loc *ml,
		  uint64_t h, uint32_t *out)
{
	struct loc_key key = loc_key_of(ml);
	int64_t id = hidx_find(&cg->loc_idx, h, loc_eq, cg, &key);
	size_t n;

	if (id >= 0) {
		*out = id;
		return 0;
	}
	n = cg->leaf_only ? machine_symbolize_real(m, ml, cg->scratch)
			  : machine_symbolize(m, ml, cg->scratch, CG_MAX_FRAMES);
	if (!n || add_location(cg, cg->scratch, n, out))
		return -ENOMEM;
	cg->locs[*out].key = key;
	return hidx_insert(&cg->loc_idx, h, *out);
}

static bool leaf_eq(const void *ctx, uint32_t id, const void *key)
{
	return key_eq(&((const struct cg_profile *)ctx)->leaves[id].key, key);
}

/*
 * leaf_only: the location of a located address, by the function it is in.  A flat
 * report shows functions, so every address of one shares its first one's location,
 * and the tables stay as small as the set of functions sampled, which the cache holds
 * (keyed by address they grow with the sampled addresses).  Addresses no symbol or
 * .eh_frame function covers stay apart, as their names differ.
 */
static int leaf_loc_id(struct cg_profile *cg, struct machine *m, const struct machine_loc *ml,
		       uint32_t *out)
{
	const struct frame *f = cg->scratch;
	struct loc_key key = {.map = ml->map, .ring = ml->ring};
	uint64_t h;
	int64_t id;

	machine_symbolize_real(m, ml, cg->scratch);
	/* ret marks a function's start, so it never equals an address's own key. */
	key.ret = f->sym || (f->dso && f->func_off);
	key.ip = f->sym ? f->ip - f->sym_off : key.ret ? f->func_off : ml->ip;
	h = key_hash(&key);
	id = hidx_find(&cg->leaf_idx, h, leaf_eq, cg, &key);
	if (id >= 0) {
		*out = cg->leaves[id].loc;
		return 0;
	}
	if (loc_id(cg, m, ml, loc_hash(ml), out) ||
	    pa_grow((void **)&cg->leaves, &cg->cap_leaves, cg->nr_leaves + 1,
		    sizeof(*cg->leaves)) ||
	    hidx_insert(&cg->leaf_idx, h, cg->nr_leaves))
		return -ENOMEM;
	cg->leaves[cg->nr_leaves++] = (struct leaf_entry){.key = key, .loc = *out};
	return 0;
}

/* cg_add_sample's frames f[0..n) of one location, compared with location id's. */
struct floc_key {
	const struct frame *f;
	size_t n;
};

static bool floc_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct cg_profile *cg = ctx;
	const struct floc_key *k = key;
	const struct cg_loc *l = &cg->locs[id].l;
	const struct frame *real = &k->f[k->n - 1];
	const struct cg_mapping *mp = l->mapping ? &cg->maps[l->mapping - 1].m : NULL;
	size_t i;

	if (l->ip != real->ip || l->nr_frames != k->n ||
	    (l->mapping ? cg->maps[l->mapping - 1].dso != real->dso : !!real->dso) ||
	    (mp && real->dso && mp->start != real->map_start))
		return false;
	for (i = 0; i < k->n; i++) {
		const struct cg_frame *cf = &cg->frames[l->frame + i];
		const char *sym = k->f[i].sym;

		if (cf->kernel != k->f[i].kernel || !cf->sym != !sym ||
		    (sym && strcmp(cf->sym, sym)))
			return false;
	}
	return true;
}

static int floc_id(struct cg_profile *cg, const struct frame *f, size_t n, uint32_t *out)
{
	struct floc_key key = {f, n};
	uint64_t h = hash_mix(hash_mix(hash_mix(0, f[n - 1].ip), (uintptr_t)f[n - 1].dso), n);
	int64_t id;

	if (f[n - 1].sym)
		h = hash_mix(h, hash_str(f[n - 1].sym));
	id = hidx_find(&cg->floc_idx, h, floc_eq, cg, &key);
	if (id >= 0) {
		*out = id;
		return 0;
	}
	if (add_location(cg, f, n, out))
		return -ENOMEM;
	return hidx_insert(&cg->floc_idx, h, *out);
}

static bool stack_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct cg_profile *cg = ctx;
	const struct cg_stack *a = &cg->stacks[id], *b = key;

	return a->event == b->event && a->pid == b->pid && a->tid == b->tid && a->comm == b->comm &&
	       a->labels == b->labels && a->nr == b->nr &&
	       !memcmp(a->locs, b->locs, a->nr * sizeof(*a->locs));
}

struct lset_key {
	const struct cg_label *v;
	size_t nr;
};

static bool lset_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct cg_labels *a = ((const struct cg_profile *)ctx)->lsets[id];
	const struct lset_key *b = key;

	return a->nr == b->nr && !memcmp(a->v, b->v, b->nr * sizeof(*b->v));
}

/*
 * The interned set of labels v[0..nr) (their keys and strings interned already) into
 * out; NULL when nr is 0.  0 or -ENOMEM.
 */
static int labels_of(struct cg_profile *cg, const struct cg_label *v, size_t nr,
		     const struct cg_labels **out)
{
	struct lset_key key = {v, nr};
	struct cg_labels *l;
	uint64_t h = hash_mix(0, nr);
	int64_t id;
	size_t i;

	*out = NULL;
	if (!nr)
		return 0;
	for (i = 0; i < nr; i++)
		h = hash_mix(hash_mix(hash_mix(h, (uintptr_t)v[i].key), (uintptr_t)v[i].str),
			     (uint64_t)v[i].num);
	id = hidx_find(&cg->lset_idx, h, lset_eq, cg, &key);
	if (id >= 0) {
		*out = cg->lsets[id];
		return 0;
	}
	l = malloc(sizeof(*l) + nr * sizeof(*v));
	if (!l ||
	    pa_grow((void **)&cg->lsets, &cg->cap_lsets, cg->nr_lsets + 1, sizeof(*cg->lsets)) ||
	    hidx_insert(&cg->lset_idx, h, cg->nr_lsets)) {
		free(l);
		return -ENOMEM;
	}
	l->nr = nr;
	memcpy(l->v, v, nr * sizeof(*v));
	cg->lsets[cg->nr_lsets++] = l;
	*out = l;
	return 0;
}

/* The labels cgroup id gives its samples: its path, container and pod, then those of
 * its record (pa-record --label-env). */
#define CGROUP_LABELS 11
struct cgroup_labels {
	uint64_t id;
	bool named; /* a PERF_RECORD_CGROUP named it (a later one may) */
	size_t nr;
	struct cg_label v[CGROUP_LABELS];
};

static bool cgl_eq(const void *ctx, uint32_t id, const void *key)
{
	return ((const struct cg_profile *)ctx)->cgls[id].id == *(const uint64_t *)key;
}

/* The labels of cgroup id (interned, made on first use from the path a
 * PERF_RECORD_CGROUP gave it); NULL without memory. */
static const struct cgroup_labels *cgroup_labels(struct cg_profile *cg, struct machine *m,
						 uint64_t id)
{
	uint64_t h = hash_mix(0, id);
	int64_t i = hidx_find(&cg->cgl_idx, h, cgl_eq, cg, &id);
	const char *path;
	struct container_info ci;
	struct cgroup_labels *l;
	const char *labels;
	char unknown[32];
	size_t len, at;

	/* Named ones are final: the path is looked up only until a record names it. */
	if (i >= 0 && cg->cgls[i].named)
		return &cg->cgls[i];
	path = machine_cgroup_path(m, id);
	if (i >= 0 && !path)
		return &cg->cgls[i];
	if (i >= 0) {
		l = &cg->cgls[i]; /* named since its first samples */
	} else {
		if (pa_grow((void **)&cg->cgls, &cg->cap_cgls, cg->nr_cgls + 1,
			    sizeof(*cg->cgls)) ||
		    hidx_insert(&cg->cgl_idx, h, cg->nr_cgls))
			return NULL;
		l = &cg->cgls[cg->nr_cgls++];
	}
	memset(l, 0, sizeof(*l));
	l->id = id;
	l->named = path != NULL;
	if (!path) {
		/* perf names a cgroup it has no record of by its id as well. */
		snprintf(unknown, sizeof(unknown), "cgroup-%llu", (unsigned long long)id);
		path = unknown;
	}
	l->v[l->nr].key = intern(cg, CG_LABEL_CGROUP);
	l->v[l->nr++].str = intern(cg, path);
	if (!container_parse(path, &ci)) {
		if (ci.id[0]) {
			l->v[l->nr].key = intern(cg, CG_LABEL_CONTAINER);
			l->v[l->nr++].str = intern(cg, ci.short_id);
		}
		if (ci.pod_uid[0]) {
			l->v[l->nr].key = intern(cg, CG_LABEL_POD);
			l->v[l->nr++].str = intern(cg, ci.pod_uid);
		}
	}
	labels = machine_cgroup_labels(m, id, &len);
	for (at = 0; labels && at < len && labels[at] && l->nr < CGROUP_LABELS;
	     at += strnlen(labels + at, len - at) + 1) {
		const char *kv = labels + at, *eq = memchr(kv, '=', strnlen(kv, len - at));
		char key[64];

		if (!eq || eq == kv || (size_t)(eq - kv) >= sizeof(key))
			continue;
		memcpy(key, kv, eq - kv);
		key[eq - kv] = '\0';
		l->v[l->nr].key = intern(cg, key);
		l->v[l->nr++].str = intern(cg, eq + 1);
	}
	for (size_t k = 0; k < l->nr; k++)
		if (!l->v[k].key || !l->v[k].str)
			return NULL;
	return l;
}

/* *labels with the labels of the sample's cgroup id added.  0 or -ENOMEM. */
static int add_cgroup_labels(struct cg_profile *cg, struct machine *m, uint64_t id,
			     const struct cg_labels **labels)
{
	const struct cgroup_labels *cl = cgroup_labels(cg, m, id);
	struct cg_label v[CG_MAX_LABELS];
	size_t n = 0, i;

	if (!cl)
		return -ENOMEM;
	for (i = 0; *labels && i < (*labels)->nr && n < CG_MAX_LABELS; i++)
		v[n++] = (*labels)->v[i];
	for (i = 0; i < cl->nr && n < CG_MAX_LABELS; i++)
		v[n++] = cl->v[i];
	return labels_of(cg, v, n, labels);
}

/* What a sample's RAW payload says, decoded once: an off-CPU thread state, or a GPU
 * record (gpu true); neither when it carries none of ours. */
struct raw_info {
	const char *state;
	bool gpu;
	struct gpu_raw g;
};

static void raw_decode(const struct pd_evsel *evsel, const struct pd_sample *s, struct raw_info *ri)
{
	ri->state = NULL;
	ri->gpu = false;
	if (!evsel || !(evsel->attr.sample_type & PERF_SAMPLE_RAW))
		return;
	ri->state = offcpu_raw_state(s->raw, s->raw_size);
	ri->gpu = !ri->state && gpu_raw_get(s->raw, s->raw_size, &ri->g);
}

/* The labels of a sample whose RAW said ri: its thread state, or its GPU record's
 * device and stream.  0 or -ENOMEM. */
static int raw_labels(struct cg_profile *cg, const struct raw_info *ri,
		      const struct cg_labels **out)
{
	const char *state = ri->state;
	struct cg_label v[2] = {{0}};
	char dev[16], stream[16];
	size_t n = 0, i;

	/* GPU ids as strings: pprof drops a numeric label whose value is 0 (device 0). */
	*out = NULL;
	if (state && state == cg->last_state) {
		*out = cg->last_state_labels;
		return 0;
	} else if (state) {
		v[n].key = intern(cg, CG_LABEL_STATE);
		v[n++].str = intern(cg, state);
	} else if (ri->gpu) {
		snprintf(dev, sizeof(dev), "%u", ri->g.device);
		snprintf(stream, sizeof(stream), "%u", ri->g.stream);
		v[n].key = intern(cg, CG_LABEL_GPU_DEVICE);
		v[n++].str = intern(cg, dev);
		v[n].key = intern(cg, CG_LABEL_GPU_STREAM);
		v[n++].str = intern(cg, stream);
	}
	for (i = 0; i < n; i++)
		if (!v[i].key || !v[i].str)
			return -ENOMEM;
	if (labels_of(cg, v, n, out))
		return -ENOMEM;
	if (state) {
		cg->last_state = state;
		cg->last_state_labels = *out;
	}
	return 0;
}

/* Whether the stack of cg->ids[0..nr) is in a CUDA call waiting for the GPU. */
static bool waits_on_gpu(const struct cg_profile *cg, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (cg->locs[cg->ids[i]].gpu_wait)
			return true;
	return false;
}

const char *cg_label_str(const struct cg_labels *l, const char *key)
{
	size_t i;

	for (i = 0; l && i < l->nr; i++)
		if (!strcmp(l->v[i].key, key))
			return l->v[i].str;
	return NULL;
}

static struct cg_event *event_get(struct cg_profile *cg, uint32_t idx, const char *name)
{
	struct cg_event *ev;

	if (idx >= cg->nr_events) {
		ev = realloc(cg->events, (idx + 1) * sizeof(*ev));
		if (!ev)
			return NULL;
		memset(ev + cg->nr_events, 0, (idx + 1 - cg->nr_events) * sizeof(*ev));
		cg->events = ev;
		cg->nr_events = idx + 1;
	}
	ev = &cg->events[idx];
	if (!ev->name && name) {
		ev->name = intern(cg, name);
		if (!ev->name)
			return NULL;
	}
	return ev;
}

/* Room for nr location ids that live as long as cg. */
static uint32_t *ids_alloc(struct cg_profile *cg, size_t nr)
{
	struct ids_block *b = cg->ids_blocks;

	if (nr > IDS_BLOCK)
		return NULL;
	if (!b || b->used + nr > b->size) {
		size_t size = b ? b->size * 2 : IDS_BLOCK_MIN;

		if (size > IDS_BLOCK)
			size = IDS_BLOCK;
		b = malloc(sizeof(*b) + size * sizeof(b->ids[0]));
		if (!b)
			return NULL;
		pa_huge(b, sizeof(*b) + size * sizeof(b->ids[0]));
		b->used = 0;
		b->size = size;
		b->next = cg->ids_blocks;
		cg->ids_blocks = b;
	}
	b->used += nr;
	return &b->ids[b->used - nr];
}

/* Count one sample (period) of the stack key, whose locs are copied when it is new. */
static int count_stack(struct cg_profile *cg, const struct cg_stack *key)
{
	uint64_t h =
		hash_mix(hash_mix(hash_mix(hash_mix(hash_mix(0, key->event), key->pid), key->tid),
				  (uintptr_t)key->comm),
			 (uintptr_t)key->labels);
	int64_t id;
	uint32_t i;

	for (i = 0; i < key->nr; i++)
		h = hash_mix(h, key->locs[i]);
	id = hidx_find(&cg->stack_idx, h, stack_eq, cg, key);
	if (id < 0) {
		uint32_t *copy;

		if (pa_grow((void **)&cg->stacks, &cg->cap_stacks, cg->nr_stacks + 1,
			    sizeof(*cg->stacks)))
			return -ENOMEM;
		copy = ids_alloc(cg, key->nr);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, key->locs, key->nr * sizeof(*copy));
		if (hidx_insert(&cg->stack_idx, h, cg->nr_stacks))
			return -ENOMEM;
		id = cg->nr_stacks++;
		cg->stacks[id] = *key;
		cg->stacks[id].locs = copy;
		cg->stacks[id].count = 0;
		cg->stacks[id].period = 0;
	}
	cg->stacks[id].count++;
	cg->stacks[id].period += key->period;
	if (cg->timeline) {
		if (pa_grow((void **)&cg->tl_stack, &cg->cap_tl_stack, cg->nr_tl_stack + 1,
			    sizeof(*cg->tl_stack)))
			return -ENOMEM;
		cg->tl_stack[cg->nr_tl_stack++] = id;
	}
	return 0;
}

/*
 * The counting thread (cg_set_count_thread).  Locating a sample's addresses and
 * counting its stack each miss the caches at every step, in tables of their own: a
 * second thread keeps the stack table while cg_load locates the next samples.  The
 * samples pass in two batches, one filled while the other is counted; each owns
 * copies of its stacks' location ids.
 */
#define BATCH_STACKS 16384
#define BATCH_IDS    (256u << 10) /* > CG_MAX_FRAMES: a sample fits an empty batch */

struct batch {
	size_t nr, nr_ids;
	struct cg_stack keys[BATCH_STACKS];
	uint32_t ids[BATCH_IDS];
};

struct counter {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct batch *b[2];
	bool full[2];	   /* handed to the thread, not counted yet */
	bool done;	   /* no batch follows the full ones */
	int err;	   /* the thread's first error; it counts no further */
	unsigned int fill; /* the batch cg_load fills */
	size_t counted;	   /* batches the thread took */
};

static void *count_run(void *arg)
{
	struct cg_profile *cg = arg;
	struct counter *c = cg->counter;
	unsigned int cur = 0;
	size_t i;
	int err = 0;

	pthread_mutex_lock(&c->lock);
	for (;;) {
		while (!c->full[cur] && !c->done)
			pthread_cond_wait(&c->cond, &c->lock);
		if (!c->full[cur])
			break;
		pthread_mutex_unlock(&c->lock);
		for (i = 0; i < c->b[cur]->nr && !err; i++)
			err = count_stack(cg, &c->b[cur]->keys[i]);
		pthread_mutex_lock(&c->lock);
		c->err = err;
		c->counted++;
		c->full[cur] = false;
		pthread_cond_broadcast(&c->cond);
		cur ^= 1;
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

/* Start the counting thread; where it cannot start, cg_load counts by itself. */
static void counter_start(struct cg_profile *cg)
{
	struct counter *c = calloc(1, sizeof(*c));

	if (!c)
		return;
	c->b[0] = malloc(sizeof(*c->b[0]));
	c->b[1] = malloc(sizeof(*c->b[1]));
	if (!c->b[0] || !c->b[1])
		goto fail;
	c->b[0]->nr = c->b[0]->nr_ids = 0;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	cg->counter = c;
	if (!pthread_create(&c->thread, NULL, count_run, cg))
		return;
	cg->counter = NULL;
	pthread_cond_destroy(&c->cond);
	pthread_mutex_destroy(&c->lock);
fail:
	free(c->b[0]);
	free(c->b[1]);
	free(c);
}

/* Hand the filled batch to the thread and take the other one back, once counted.
 * 0 or the thread's error. */
static int counter_hand_over(struct counter *c)
{
	struct batch *b;
	int err;

	pthread_mutex_lock(&c->lock);
	c->full[c->fill] = true;
	pthread_cond_broadcast(&c->cond);
	c->fill ^= 1;
	while (c->full[c->fill])
		pthread_cond_wait(&c->cond, &c->lock);
	err = c->err;
	pthread_mutex_unlock(&c->lock);
	b = c->b[c->fill];
	b->nr = b->nr_ids = 0;
	return err;
}

/* Queue one sample of key for the thread.  0 or its error. */
static int counter_push(struct counter *c, const struct cg_stack *key)
{
	struct batch *b = c->b[c->fill];
	int err;

	if (b->nr == BATCH_STACKS || b->nr_ids + key->nr > BATCH_IDS) {
		err = counter_hand_over(c);
		if (err)
			return err;
		b = c->b[c->fill];
	}
	memcpy(&b->ids[b->nr_ids], key->locs, key->nr * sizeof(*b->ids));
	b->keys[b->nr] = *key;
	b->keys[b->nr++].locs = &b->ids[b->nr_ids];
	b->nr_ids += key->nr;
	return 0;
}

/* Count what is queued, stop the thread.  0 or its error. */
static int counter_stop(struct cg_profile *cg)
{
	struct counter *c = cg->counter;
	int err;

	if (!c)
		return 0;
	pthread_mutex_lock(&c->lock);
	c->full[c->fill] = c->b[c->fill]->nr > 0;
	c->done = true;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	pthread_join(c->thread, NULL);
	err = c->err;
	cg->thread_batches = c->counted;
	pthread_cond_destroy(&c->cond);
	pthread_mutex_destroy(&c->lock);
	free(c->b[0]);
	free(c->b[1]);
	free(c);
	cg->counter = NULL;
	return err;
}

/* Count one sample of the stack of location ids ids[0..nr), here or in the thread. */
static int add_stack(struct cg_profile *cg, uint32_t event, const char *event_name, uint32_t pid,
		     uint32_t tid, const char *comm, const uint32_t *ids, size_t nr,
		     uint64_t period, uint64_t time, const struct cg_labels *labels)
{
	struct cg_event *ev = event_get(cg, event, event_name);
	struct cg_stack key = {.event = event,
			       .pid = pid,
			       .tid = tid,
			       .nr = nr,
			       .locs = ids,
			       .count = 1,
			       .period = period,
			       .labels = labels};

	if (!ev)
		return -ENOMEM;
	/* Samples come in runs of one thread: its comm was the last one interned. */
	comm = comm ? comm : "[unknown]";
	key.comm = cg->last_comm && !strcmp(comm, cg->last_comm) ? cg->last_comm : intern(cg, comm);
	if (!key.comm)
		return -ENOMEM;
	cg->last_comm = key.comm;
	ev->samples++;
	ev->period += period;
	if (time) {
		if (!ev->first_time || time < ev->first_time)
			ev->first_time = time;
		if (time > ev->last_time)
			ev->last_time = time;
	}
	if (cg->timeline) {
		if (pa_grow((void **)&cg->tl, &cg->cap_tl, cg->nr_tl + 1, sizeof(*cg->tl)))
			return -ENOMEM;
		cg->tl[cg->nr_tl++] = (struct tl_entry){.time = time, .period = period};
	}
	return cg->counter ? counter_push(cg->counter, &key) : count_stack(cg, &key);
}

int cg_add_sample(struct cg_profile *cg, uint32_t event, const char *event_name, uint32_t pid,
		  uint32_t tid, const char *comm, const struct frame *frames, size_t nr,
		  uint64_t period, uint64_t time)
{
	return cg_add_sample_labels(cg, event, event_name, pid, tid, comm, frames, nr, period, time,
				    NULL, 0);
}

int cg_add_sample_labels(struct cg_profile *cg, uint32_t event, const char *event_name,
			 uint32_t pid, uint32_t tid, const char *comm, const struct frame *frames,
			 size_t nr, uint64_t period, uint64_t time, const struct cg_label *labels,
			 size_t nr_labels)
{
	static const struct frame unknown = {.dso_name = "[unknown]"};
	struct cg_label v[CG_MAX_LABELS];
	const struct cg_labels *set;
	size_t i = 0, n = 0;

	if (nr_labels > CG_MAX_LABELS)
		return -EINVAL;
	for (i = 0; i < nr_labels; i++) {
		v[i] = labels[i];
		v[i].key = intern(cg, labels[i].key);
		v[i].str = labels[i].str ? intern(cg, labels[i].str) : NULL;
		if (!v[i].key || (labels[i].str && !v[i].str))
			return -ENOMEM;
	}
	if (labels_of(cg, v, nr_labels, &set))
		return -ENOMEM;
	i = 0;

	/* The event first: a sample names its event even when its frames fail. */
	if (!event_get(cg, event, event_name))
		return -ENOMEM;
	if (!nr) {
		frames = &unknown;
		nr = 1;
	}
	while (i < nr && n < CG_MAX_FRAMES) {
		size_t run = 1;

		/* Inlined frames and the real frame after them at the same ip. */
		while (i + run < nr && frames[i + run - 1].inlined &&
		       frames[i + run].ip == frames[i].ip)
			run++;
		if (floc_id(cg, &frames[i], run, &cg->ids[n++]))
			return -ENOMEM;
		i += run;
	}
	return add_stack(cg, event, event_name, pid, tid, comm, cg->ids, n, period, time, set);
}

/* The "[unknown]" location standing for a sample without addresses. */
static int unknown_loc(struct cg_profile *cg, uint32_t *out)
{
	static const struct frame unknown = {.dso_name = "[unknown]"};

	if (cg->unknown_loc < 0) {
		if (add_location(cg, &unknown, 1, out))
			return -ENOMEM;
		cg->unknown_loc = *out;
	}
	*out = cg->unknown_loc;
	return 0;
}

static bool in_u32(const uint32_t *list, size_t n, uint32_t v)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (list[i] == v)
			return true;
	return false;
}

static bool keep(const struct cg_filter *f, uint32_t pid, uint32_t tid, const char *comm)
{
	size_t i;

	if (!f)
		return true;
	if (f->nr_pids && !in_u32(f->pids, f->nr_pids, pid))
		return false;
	if (f->nr_tids && !in_u32(f->tids, f->nr_tids, tid))
		return false;
	if (!f->nr_comms)
		return true;
	for (i = 0; i < f->nr_comms; i++)
		if (!strcmp(f->comms[i], comm))
			return true;
	return false;
}

/* Whether one of names[0..nr) is label key's value in l (prefix: a prefix of it,
 * or it a prefix of the name: ids given short or whole). */
static bool label_in(const struct cg_labels *l, const char *key, const char *const *names,
		     size_t nr, bool prefix)
{
	const char *v = cg_label_str(l, key);
	size_t i, n;

	for (i = 0; v && i < nr; i++) {
		if (!strcmp(names[i], v))
			return true;
		n = strlen(names[i]) < strlen(v) ? strlen(names[i]) : strlen(v);
		if (prefix && n >= 4 && !strncmp(names[i], v, n))
			return true;
	}
	return false;
}

/* The pod and container filters, on a sample's labels. */
static bool keep_labels(const struct cg_filter *f, const struct cg_labels *l)
{
	if (!f)
		return true;
	if (f->nr_pods && !label_in(l, CG_LABEL_POD, f->pods, f->nr_pods, false) &&
	    !label_in(l, CG_LABEL_POD_NAME, f->pods, f->nr_pods, false))
		return false;
	if (f->nr_containers &&
	    !label_in(l, CG_LABEL_CONTAINER, f->containers, f->nr_containers, true) &&
	    !label_in(l, CG_LABEL_CONTAINER_NAME, f->containers, f->nr_containers, false))
		return false;
	return true;
}

static void note_event_attr(struct cg_profile *cg, const struct pd_evsel *evsel)
{
	struct cg_event *ev = event_get(cg, evsel->idx, evsel->name);

	if (!ev)
		return;
	ev->freq = evsel->attr.freq;
	ev->sample_period = evsel->attr.sample_period;
	ev->callchain = evsel->attr.sample_type & PERF_SAMPLE_CALLCHAIN;
}

static void count_lost(struct cg_profile *cg, struct pd_reader *r, const struct pd_event *ev)
{
	const struct pd_evsel *evsel = ev->evsel;
	struct cg_event *cev;
	uint64_t lost;

	if (ev->hdr->type == PERF_RECORD_LOST) {
		struct pd_lost l;

		if (pd_parse_lost(ev->hdr, ev->hdr->size, &l))
			return;
		evsel = pd_reader_evsel_by_id(r, l.id);
		lost = l.lost;
	} else {
		struct pd_lost_samples l;

		if (pd_parse_lost_samples(ev->hdr, ev->hdr->size, &l))
			return;
		lost = l.lost;
	}
	cev = event_get(cg, evsel ? evsel->idx : 0, evsel ? evsel->name : NULL);
	if (cev)
		cev->lost += lost;
}

void cg_set_leaf_only(struct cg_profile *cg, bool leaf_only)
{
	cg->leaf_only = leaf_only;
}

void cg_set_count_thread(struct cg_profile *cg, bool on)
{
	cg->count_thread = on;
}

size_t cg_thread_batches(const struct cg_profile *cg)
{
	return cg->thread_batches;
}

void cg_set_timeline(struct cg_profile *cg, bool on)
{
	cg->timeline = on;
}

size_t cg_nr_samples(const struct cg_profile *cg)
{
	/* Equal but after an error, when the counting stopped short. */
	return cg->nr_tl < cg->nr_tl_stack ? cg->nr_tl : cg->nr_tl_stack;
}

struct cg_sample cg_sample(const struct cg_profile *cg, size_t idx)
{
	return (struct cg_sample){
		.stack = cg->tl_stack[idx], .time = cg->tl[idx].time, .period = cg->tl[idx].period};
}

/*
 * Count sample s in the GPU summary when it is a launch or a timed GPU record; its
 * leaf (cg->ids[0]) names the kernel.  0 or -ENOMEM.
 */
static int add_gpu(struct cg_profile *cg, const struct pd_evsel *evsel, const struct raw_info *ri,
		   uint64_t period)
{
	if (ri->gpu)
		return gpu_sum_time(&cg->gpu, cg_loc_real(cg, cg->ids[0])->func, period, &ri->g);
	/* gpu-launch samples carry no RAW; off-CPU ones are not launches */
	if (!ri->state && evsel->attr.config == PERF_COUNT_SW_BPF_OUTPUT && evsel->name &&
	    !strcmp(evsel->name, GPU_LAUNCH_EVENT))
		return gpu_sum_launch(&cg->gpu, cg_loc_real(cg, cg->ids[0])->func);
	return 0;
}

int cg_add_record(struct cg_profile *cg, struct pd_reader *r, struct machine *m,
		  const struct cg_filter *filter, const struct pd_event *ev)
{
	const struct pd_sample *s = &ev->sample;
	const struct pd_evsel *evsel = ev->evsel;
	const struct cg_labels *labels = NULL;
	struct raw_info ri;
	const char *comm;
	uint64_t period, time;
	size_t i, nr;
	int ret;

	switch (ev->hdr->type) {
	case PERF_RECORD_SAMPLE:
		break;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		count_lost(cg, r, ev);
		return 0;
	default:
		ret = machine_process_event(m, ev);
		return ret == -ENOMEM ? ret : 0;
	}
	comm = machine_comm(m, s->pid, s->tid);
	if (!keep(filter, s->pid, s->tid, comm))
		return 0;
	period = s->period;
	if (evsel && !(evsel->attr.sample_type & PERF_SAMPLE_PERIOD))
		period = evsel->attr.freq ? 0 : evsel->attr.sample_period;
	if (!period)
		period = 1;
	raw_decode(evsel, s, &ri);
	if (raw_labels(cg, &ri, &labels))
		return -ENOMEM;
	if (evsel && (evsel->attr.sample_type & PERF_SAMPLE_CGROUP) && s->cgroup &&
	    add_cgroup_labels(cg, m, s->cgroup, &labels))
		return -ENOMEM;
	if (!keep_labels(filter, labels))
		return 0;
	if (!event_get(cg, evsel ? evsel->idx : 0, evsel ? evsel->name : "[unknown]"))
		return -ENOMEM;
	nr = machine_locate(m, s, cg->mlocs, cg->leaf_only ? 1 : CG_MAX_FRAMES);
	if (!cg->leaf_only)
		loc_hashes(cg, cg->mlocs, nr, cg->hashes);
	for (i = 0; i < nr; i++)
		if (cg->leaf_only ? leaf_loc_id(cg, m, &cg->mlocs[i], &cg->ids[i])
				  : loc_id(cg, m, &cg->mlocs[i], cg->hashes[i], &cg->ids[i]))
			return -ENOMEM;
	if (!nr && unknown_loc(cg, &cg->ids[nr++]))
		return -ENOMEM;
	if (evsel && add_gpu(cg, evsel, &ri, period))
		return -ENOMEM;
	if (ri.state && waits_on_gpu(cg, nr)) {
		if (labels_of(cg, cg->gpu_wait, 1, &labels))
			return -ENOMEM;
		cg->gpu.wait_ns += period;
		cg->gpu.wait_samples++;
	}
	time = evsel && (evsel->attr.sample_type & PERF_SAMPLE_TIME) ? s->time : 0;
	/* GPU work happened when the GPU ran it, not when its record came in. */
	if (ri.gpu && ri.g.start)
		time = ri.g.start;
	if (add_stack(cg, evsel ? evsel->idx : 0, evsel ? evsel->name : "[unknown]", s->pid, s->tid,
		      comm, cg->ids, nr, period, time, labels))
		return -ENOMEM;
	return 0;
}

void cg_add_events_of(struct cg_profile *cg, const struct pd_reader *r)
{
	size_t i;

	for (i = 0; i < pd_reader_nr_evsel(r); i++)
		note_event_attr(cg, pd_reader_evsel(r, i));
}

int cg_load(struct cg_profile *cg, struct pd_reader *r, struct machine *m,
	    const struct cg_filter *filter, char *err, size_t errlen)
{
	struct pd_event ev;
	int ret;

	/* A flat report's stacks are single locations, as few as the functions sampled:
	 * counting them here costs less than handing them over. */
	cg->thread_batches = 0;
	if (cg->count_thread && !cg->leaf_only)
		counter_start(cg);
	while ((ret = pd_reader_next(r, &ev)) > 0)
		if (cg_add_record(cg, r, m, filter, &ev))
			goto nomem;
	if (ret < 0) {
		counter_stop(cg);
		snprintf(err, errlen, "%s", pd_reader_error(r));
		return ret;
	}
	if (counter_stop(cg))
		goto nomem;
	/* Events without samples still get their header section. */
	cg_add_events_of(cg, r);
	return 0;
nomem:
	counter_stop(cg);
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
}

struct cg_profile *cg_new(void)
{
	struct cg_profile *cg = calloc(1, sizeof(*cg));

	if (!cg)
		return NULL;
	cg->mlocs = calloc(CG_MAX_FRAMES, sizeof(*cg->mlocs));
	cg->scratch = calloc(CG_MAX_FRAMES, sizeof(*cg->scratch));
	cg->ids = calloc(CG_MAX_FRAMES, sizeof(*cg->ids));
	cg->hashes = calloc(CG_MAX_FRAMES, sizeof(*cg->hashes));
	cg->unknown_loc = -1;
	cg->gpu_wait[0].key = intern(cg, CG_LABEL_STATE);
	cg->gpu_wait[0].str = intern(cg, OFFCPU_GPU_WAIT);
	if (!cg->mlocs || !cg->scratch || !cg->ids || !cg->hashes || !cg->gpu_wait[0].key ||
	    !cg->gpu_wait[0].str) {
		cg_free(cg);
		errno = ENOMEM;
		return NULL;
	}
	return cg;
}

void cg_free(struct cg_profile *cg)
{
	size_t i;

	if (!cg)
		return;
	for (i = 0; i < cg->nr_strs; i++)
		free(cg->strs[i]);
	while (cg->ids_blocks) {
		struct ids_block *b = cg->ids_blocks;

		cg->ids_blocks = b->next;
		free(b);
	}
	free(cg->strs);
	free(cg->locs);
	free(cg->frames);
	free(cg->funcs);
	free(cg->maps);
	free(cg->stacks);
	free(cg->tl);
	free(cg->tl_stack);
	free(cg->events);
	gpu_sum_free(&cg->gpu);
	for (i = 0; i < cg->nr_lsets; i++)
		free(cg->lsets[i]);
	free(cg->lsets);
	hidx_free(&cg->lset_idx);
	free(cg->cgls);
	hidx_free(&cg->cgl_idx);
	free(cg->mlocs);
	free(cg->scratch);
	free(cg->ids);
	free(cg->hashes);
	hidx_free(&cg->str_idx);
	hidx_free(&cg->loc_idx);
	hidx_free(&cg->floc_idx);
	hidx_free(&cg->leaf_idx);
	free(cg->leaves);
	hidx_free(&cg->func_idx);
	hidx_free(&cg->map_idx);
	hidx_free(&cg->stack_idx);
	free(cg);
}

const struct gpu_sum *cg_gpu_sum(const struct cg_profile *cg)
{
	return &cg->gpu;
}

size_t cg_nr_events(const struct cg_profile *cg)
{
	return cg->nr_events;
}

const struct cg_event *cg_event(const struct cg_profile *cg, size_t idx)
{
	return idx < cg->nr_events ? &cg->events[idx] : NULL;
}

int cg_find_event(const struct cg_profile *cg, const char *name)
{
	size_t i;

	for (i = 0; i < cg->nr_events; i++)
		if (cg->events[i].name && !strcmp(cg->events[i].name, name))
			return i;
	return -1;
}

size_t cg_nr_stacks(const struct cg_profile *cg)
{
	return cg->nr_stacks;
}

const struct cg_stack *cg_stack(const struct cg_profile *cg, size_t idx)
{
	return &cg->stacks[idx];
}

size_t cg_keep_stacks(struct cg_profile *cg,
		      bool (*keep)(const struct cg_profile *, const struct cg_stack *, void *),
		      void *ctx)
{
	size_t i, dropped = 0;

	for (i = 0; i < cg->nr_stacks; i++) {
		struct cg_stack *s = &cg->stacks[i];

		if (!s->count || keep(cg, s, ctx))
			continue;
		if (s->event < cg->nr_events) {
			cg->events[s->event].samples -= s->count;
			cg->events[s->event].period -= s->period;
		}
		s->count = 0;
		s->period = 0;
		dropped++;
	}
	return dropped;
}

size_t cg_nr_locs(const struct cg_profile *cg)
{
	return cg->nr_locs;
}

const struct cg_loc *cg_loc(const struct cg_profile *cg, uint32_t id)
{
	return &cg->locs[id].l;
}

const struct cg_frame *cg_loc_real(const struct cg_profile *cg, uint32_t id)
{
	const struct cg_loc *l = &cg->locs[id].l;

	return &cg->frames[l->frame + l->nr_frames - 1];
}

const struct cg_func *cg_func(const struct cg_profile *cg, uint32_t id)
{
	return &cg->funcs[id];
}

size_t cg_nr_mappings(const struct cg_profile *cg)
{
	return cg->nr_maps;
}

const struct cg_mapping *cg_mapping(const struct cg_profile *cg, uint32_t id)
{
	return &cg->maps[id].m;
}

size_t cg_nr_frames(const struct cg_profile *cg)
{
	return cg->nr_frames;
}

const struct cg_frame *cg_frame(const struct cg_profile *cg, uint32_t id)
{
	return &cg->frames[id];
}

size_t cg_nr_funcs(const struct cg_profile *cg)
{
	return cg->nr_funcs;
}
