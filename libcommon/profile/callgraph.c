// SPDX-License-Identifier: Apache-2.0
/*
 * Stack aggregation shared by pa-report and pa-convert.  Three interning tables
 * (strings, frames, stacks) over one small open-addressing hash index, so a capture
 * of millions of samples costs one hash lookup per frame and one per stack.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/callgraph.h"
#include "profile/offcpu.h"
#include "base/util.h"

#define CG_MAX_FRAMES 4096

/* Hash index: slots hold (hash, id + 1); 0 id marks an empty slot. */
struct hindex {
	uint64_t *hash;
	uint32_t *id;
	size_t cap; /* power of two */
	size_t n;
};

struct cg_func {
	const char *dso_name;
	const char *name;
};

/*
 * Leaf-only reports resolve one address per sample, and most samples hit an address
 * seen before: its frame ids, kept per (pid, cpu mode, ip), spare the symbol, DWARF
 * and frame lookups.  Entries belong to a generation; any record that may change
 * what an address resolves to (maps, threads, build-ids) starts a new one.
 */
#define LEAF_IDS 3 /* the real function and two inlined into it; deeper is not kept */

struct leaf_entry {
	uint64_t ip;
	uint32_t pid;
	uint32_t gen; /* 0: never used */
	uint8_t mode; /* leaf_mode() */
	uint8_t nr;
	uint32_t ids[LEAF_IDS];
};

struct leaf_cache {
	struct leaf_entry *e;
	size_t cap; /* power of two */
	size_t n;   /* entries of generation gen */
	uint32_t gen;
};

struct cg_profile {
	struct hindex str_idx;
	char **strs;
	size_t nr_strs, cap_strs;

	struct hindex frame_idx;
	struct cg_frame *frames;
	size_t nr_frames, cap_frames;

	struct hindex func_idx;
	struct cg_func *funcs;
	size_t nr_funcs, cap_funcs;

	struct hindex stack_idx;
	struct cg_stack *stacks;
	size_t nr_stacks, cap_stacks;

	struct cg_event *events;
	size_t nr_events;

	bool leaf_only; /* cg_set_leaf_only */
	struct leaf_cache leaf;
	struct frame *scratch; /* CG_MAX_FRAMES resolved frames */
	uint32_t *ids;	       /* CG_MAX_FRAMES frame ids */
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	/* splitmix64 finalizer over a running xor: cheap and well spread. */
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return h;
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return mix(h, 0);
}

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 64;
	void *p;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	p = realloc(*arr, ncap * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

static int hindex_rehash(struct hindex *hi)
{
	size_t ncap = hi->cap ? hi->cap * 2 : 256, i;
	uint64_t *nh = calloc(ncap, sizeof(*nh));
	uint32_t *nid = calloc(ncap, sizeof(*nid));

	if (!nh || !nid) {
		free(nh);
		free(nid);
		return -ENOMEM;
	}
	for (i = 0; i < hi->cap; i++) {
		size_t j;

		if (!hi->id[i])
			continue;
		for (j = hi->hash[i] & (ncap - 1); nid[j]; j = (j + 1) & (ncap - 1))
			;
		nh[j] = hi->hash[i];
		nid[j] = hi->id[i];
	}
	free(hi->hash);
	free(hi->id);
	hi->hash = nh;
	hi->id = nid;
	hi->cap = ncap;
	return 0;
}

/*
 * Find id with hash h for which eq(ctx, id, key) holds; if none, *slot is where it
 * goes.  Returns the id or -1.
 */
typedef bool (*hindex_eq)(const struct cg_profile *cg, uint32_t id, const void *key);

static int64_t hindex_find(const struct cg_profile *cg, const struct hindex *hi, uint64_t h,
			   hindex_eq eq, const void *key)
{
	size_t j;

	if (!hi->cap)
		return -1;
	for (j = h & (hi->cap - 1); hi->id[j]; j = (j + 1) & (hi->cap - 1))
		if (hi->hash[j] == h && eq(cg, hi->id[j] - 1, key))
			return hi->id[j] - 1;
	return -1;
}

static int hindex_insert(struct hindex *hi, uint64_t h, uint32_t id)
{
	size_t j;
	int err;

	if ((hi->n + 1) * 4 > hi->cap * 3) {
		err = hindex_rehash(hi);
		if (err)
			return err;
	}
	for (j = h & (hi->cap - 1); hi->id[j]; j = (j + 1) & (hi->cap - 1))
		;
	hi->hash[j] = h;
	hi->id[j] = id + 1;
	hi->n++;
	return 0;
}

static void hindex_free(struct hindex *hi)
{
	free(hi->hash);
	free(hi->id);
}

static bool str_eq(const struct cg_profile *cg, uint32_t id, const void *key)
{
	return !strcmp(cg->strs[id], key);
}

/* The one copy of s owned by cg; NULL (errno ENOMEM) on allocation failure. */
static const char *intern(struct cg_profile *cg, const char *s)
{
	uint64_t h = hash_str(s);
	int64_t id = hindex_find(cg, &cg->str_idx, h, str_eq, s);
	char *copy;

	if (id >= 0)
		return cg->strs[id];
	if (grow((void **)&cg->strs, &cg->cap_strs, cg->nr_strs + 1, sizeof(*cg->strs)))
		goto nomem;
	copy = strdup(s);
	if (!copy)
		goto nomem;
	if (hindex_insert(&cg->str_idx, h, cg->nr_strs)) {
		free(copy);
		goto nomem;
	}
	cg->strs[cg->nr_strs++] = copy;
	return copy;
nomem:
	errno = ENOMEM;
	return NULL;
}

static bool func_eq(const struct cg_profile *cg, uint32_t id, const void *key)
{
	const struct cg_func *a = &cg->funcs[id], *b = key;

	return a->dso_name == b->dso_name && a->name == b->name;
}

static int func_id(struct cg_profile *cg, const char *dso_name, const char *name, uint32_t *out)
{
	struct cg_func key = {dso_name, name};
	uint64_t h = mix(mix(0, (uintptr_t)dso_name), (uintptr_t)name);
	int64_t id = hindex_find(cg, &cg->func_idx, h, func_eq, &key);

	if (id < 0) {
		if (grow((void **)&cg->funcs, &cg->cap_funcs, cg->nr_funcs + 1,
			 sizeof(*cg->funcs)) ||
		    hindex_insert(&cg->func_idx, h, cg->nr_funcs))
			return -ENOMEM;
		id = cg->nr_funcs;
		cg->funcs[cg->nr_funcs++] = key;
	}
	*out = id;
	return 0;
}

/* Frames are one per (ip, mapping, dso, ring): the same address in another mapping
 * may be other code. */
static bool frame_eq(const struct cg_profile *cg, uint32_t id, const void *key)
{
	const struct cg_frame *a = &cg->frames[id];
	const struct frame *b = key;

	if (a->ip != b->ip || a->dso != b->dso || a->map_start != b->map_start ||
	    a->kernel != b->kernel || a->inlined != (b->inlined && b->sym))
		return false;
	/* One ip holds the real function and each function inlined into it there. */
	if (!a->inlined)
		return true;
	return a->sym && b->sym && !strcmp(a->sym, b->sym);
}

static int frame_id(struct cg_profile *cg, const struct frame *f, uint32_t *out)
{
	uint64_t h = mix(mix(mix(mix(0, f->ip), (uintptr_t)f->dso), f->map_start),
			 f->kernel | (uint64_t)(f->inlined && f->sym) << 1);
	int64_t id = hindex_find(cg, &cg->frame_idx, h, frame_eq, f);
	struct cg_frame *cf;
	char buf[512];
	const char *path;
	const uint8_t *bid;
	size_t bid_len;

	if (id >= 0) {
		*out = id;
		return 0;
	}
	if (grow((void **)&cg->frames, &cg->cap_frames, cg->nr_frames + 1, sizeof(*cg->frames)))
		return -ENOMEM;
	cf = &cg->frames[cg->nr_frames];
	memset(cf, 0, sizeof(*cf));
	cf->ip = f->ip;
	cf->kernel = f->kernel;
	/* An unnamed inlined frame cannot be told from its neighbours: treat it as real. */
	cf->inlined = f->inlined && f->sym;
	cf->line = f->line;
	cf->dso = f->dso;
	if (f->dso) {
		cf->map_start = f->map_start;
		cf->map_end = f->map_end;
		cf->map_pgoff = f->map_pgoff;
	}
	cf->dso_name = intern(cg, f->dso_name ? f->dso_name : "[unknown]");
	cf->sym = f->sym ? intern(cg, f->sym) : NULL;
	cf->name = intern(cg, frame_name(f, buf, sizeof(buf)));
	path = f->dso ? dso_path(f->dso) : NULL;
	cf->path = intern(cg, path ? path : cf->dso_name ? cf->dso_name : "[unknown]");
	cf->srcfile = f->srcfile ? intern(cg, f->srcfile) : NULL;
	if (!cf->dso_name || (f->sym && !cf->sym) || !cf->name || !cf->path ||
	    (f->srcfile && !cf->srcfile))
		return -ENOMEM;
	bid_len = f->dso ? dso_build_id(f->dso, &bid) : 0;
	if (bid_len) {
		char hex[2 * 64 + 1];

		if (bid_len > 64)
			bid_len = 64;
		pa_hex(hex, bid, bid_len);
		cf->build_id = intern(cg, hex);
		if (!cf->build_id)
			return -ENOMEM;
	}
	if (func_id(cg, cf->dso_name, cf->name, &cf->func))
		return -ENOMEM;
	if (hindex_insert(&cg->frame_idx, h, cg->nr_frames))
		return -ENOMEM;
	*out = cg->nr_frames++;
	return 0;
}

static bool stack_eq(const struct cg_profile *cg, uint32_t id, const void *key)
{
	const struct cg_stack *a = &cg->stacks[id], *b = key;

	return a->event == b->event && a->pid == b->pid && a->tid == b->tid && a->comm == b->comm &&
	       a->state == b->state && a->nr == b->nr &&
	       !memcmp(a->frames, b->frames, a->nr * sizeof(*a->frames));
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

int cg_add_sample(struct cg_profile *cg, uint32_t event, const char *event_name, uint32_t pid,
		  uint32_t tid, const char *comm, const struct frame *frames, size_t nr,
		  uint64_t period, uint64_t time)
{
	return cg_add_sample_state(cg, event, event_name, pid, tid, comm, frames, nr, period, time,
				   NULL);
}

/* Intern nr resolved frames (leaf first) into ids; nr 0 stands for one "[unknown]"
 * frame.  Returns how many ids were written, 0 when out of memory. */
static size_t intern_frames(struct cg_profile *cg, const struct frame *frames, size_t nr,
			    uint32_t *ids)
{
	static const struct frame unknown = {.dso_name = "[unknown]"};
	size_t i;

	if (!nr) {
		frames = &unknown;
		nr = 1;
	}
	if (nr > CG_MAX_FRAMES)
		nr = CG_MAX_FRAMES;
	for (i = 0; i < nr; i++)
		if (frame_id(cg, &frames[i], &ids[i]))
			return 0;
	return nr;
}

/* Count one sample of the stack of frame ids ids[0..nr). */
static int add_stack(struct cg_profile *cg, uint32_t event, const char *event_name, uint32_t pid,
		     uint32_t tid, const char *comm, const uint32_t *ids, size_t nr,
		     uint64_t period, uint64_t time, const char *state)
{
	struct cg_event *ev = event_get(cg, event, event_name);
	struct cg_stack key = {.event = event, .pid = pid, .tid = tid};
	uint64_t h;
	int64_t id;
	size_t i;

	if (!ev)
		return -ENOMEM;
	key.comm = intern(cg, comm ? comm : "[unknown]");
	if (!key.comm)
		return -ENOMEM;
	if (state) {
		key.state = intern(cg, state);
		if (!key.state)
			return -ENOMEM;
	}
	h = mix(mix(mix(mix(mix(0, event), pid), tid), (uintptr_t)key.comm), (uintptr_t)key.state);
	for (i = 0; i < nr; i++)
		h = mix(h, ids[i]);
	key.nr = nr;
	key.frames = ids;

	id = hindex_find(cg, &cg->stack_idx, h, stack_eq, &key);
	if (id < 0) {
		uint32_t *copy;

		if (grow((void **)&cg->stacks, &cg->cap_stacks, cg->nr_stacks + 1,
			 sizeof(*cg->stacks)))
			return -ENOMEM;
		copy = malloc(nr * sizeof(*copy));
		if (!copy)
			return -ENOMEM;
		memcpy(copy, ids, nr * sizeof(*copy));
		if (hindex_insert(&cg->stack_idx, h, cg->nr_stacks)) {
			free(copy);
			return -ENOMEM;
		}
		key.frames = copy;
		id = cg->nr_stacks++;
		cg->stacks[id] = key;
	}
	cg->stacks[id].count++;
	cg->stacks[id].period += period;
	ev->samples++;
	ev->period += period;
	if (time) {
		if (!ev->first_time || time < ev->first_time)
			ev->first_time = time;
		if (time > ev->last_time)
			ev->last_time = time;
	}
	return 0;
}

int cg_add_sample_state(struct cg_profile *cg, uint32_t event, const char *event_name, uint32_t pid,
			uint32_t tid, const char *comm, const struct frame *frames, size_t nr,
			uint64_t period, uint64_t time, const char *state)
{
	/* The event first: a sample names its event even when its frames fail. */
	if (!event_get(cg, event, event_name))
		return -ENOMEM;
	nr = intern_frames(cg, frames, nr, cg->ids);
	if (!nr)
		return -ENOMEM;
	return add_stack(cg, event, event_name, pid, tid, comm, cg->ids, nr, period, time, state);
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
	const uint64_t *body = (const void *)(ev->hdr + 1);
	struct cg_event *cev;
	uint64_t lost;

	if (ev->hdr->type == PERF_RECORD_LOST) {
		if (ev->hdr->size < sizeof(*ev->hdr) + 16)
			return;
		evsel = pd_reader_evsel_by_id(r, body[0]);
		lost = body[1];
	} else {
		if (ev->hdr->size < sizeof(*ev->hdr) + 8)
			return;
		lost = body[0];
	}
	cev = event_get(cg, evsel ? evsel->idx : 0, evsel ? evsel->name : NULL);
	if (cev)
		cev->lost += lost;
}

/* s with its callchain cut after the first address (context markers kept before). */
static struct pd_sample leaf_of(const struct pd_sample *s)
{
	struct pd_sample l = *s;
	uint64_t i;

	for (i = 0; i < s->nr_ips; i++)
		if (s->ips[i] < PERF_CONTEXT_MAX) {
			l.nr_ips = i + 1;
			break;
		}
	return l;
}

/*
 * Which machine_resolve() inputs besides pid and ip decide a leaf's frames: the
 * sample's cpu mode and the last context marker before the address.  -1 when the
 * callchain holds no address (not cached).
 */
static int leaf_mode(const struct pd_sample *s, uint64_t *ip)
{
	int marker = 0;
	uint64_t i;

	if (!s->nr_ips || !s->ips) {
		*ip = s->ip;
		return 0x80 | (s->misc & PERF_RECORD_MISC_CPUMODE_MASK);
	}
	for (i = 0; i < s->nr_ips; i++) {
		switch (s->ips[i]) {
		case PERF_CONTEXT_KERNEL:
			marker = 1;
			continue;
		case PERF_CONTEXT_USER:
			marker = 2;
			continue;
		case PERF_CONTEXT_GUEST:
			marker = 3;
			continue;
		case PERF_CONTEXT_GUEST_KERNEL:
			marker = 4;
			continue;
		case PERF_CONTEXT_GUEST_USER:
			marker = 5;
			continue;
		}
		if (s->ips[i] >= PERF_CONTEXT_MAX)
			continue;
		*ip = s->ips[i];
		return marker << 3 | (s->misc & PERF_RECORD_MISC_CPUMODE_MASK);
	}
	return -1;
}

static uint64_t leaf_hash(uint32_t pid, int mode, uint64_t ip)
{
	return mix(mix(mix(0, ip), pid), mode);
}

/*
 * Linear probing that stops at a slot of an older generation: within one generation
 * slots only ever turn current, so every current entry stays reachable.
 */
static struct leaf_entry *leaf_find(struct leaf_cache *lc, uint32_t pid, int mode, uint64_t ip)
{
	size_t j;

	if (!lc->cap)
		return NULL;
	for (j = leaf_hash(pid, mode, ip) & (lc->cap - 1); lc->e[j].gen == lc->gen;
	     j = (j + 1) & (lc->cap - 1))
		if (lc->e[j].ip == ip && lc->e[j].pid == pid && lc->e[j].mode == mode)
			return &lc->e[j];
	return NULL;
}

static void leaf_put(struct leaf_cache *lc, const struct leaf_entry *ne)
{
	size_t j;

	for (j = leaf_hash(ne->pid, ne->mode, ne->ip) & (lc->cap - 1); lc->e[j].gen == lc->gen;
	     j = (j + 1) & (lc->cap - 1))
		;
	lc->e[j] = *ne;
	lc->e[j].gen = lc->gen;
	lc->n++;
}

/* Remember a leaf's ids; a cache, so running out of memory only skips it. */
static void leaf_add(struct leaf_cache *lc, uint32_t pid, int mode, uint64_t ip,
		     const uint32_t *ids, size_t nr)
{
	struct leaf_entry ne = {.ip = ip, .pid = pid, .mode = mode, .nr = nr};

	if (nr > LEAF_IDS)
		return;
	if ((lc->n + 1) * 4 > lc->cap * 3) {
		size_t ncap = lc->cap ? lc->cap * 2 : 1024, ocap = lc->cap, i;
		struct leaf_entry *old = lc->e, *e = calloc(ncap, sizeof(*e));

		if (!e)
			return;
		lc->e = e;
		lc->cap = ncap;
		lc->n = 0;
		for (i = 0; i < ocap; i++)
			if (old[i].gen == lc->gen)
				leaf_put(lc, &old[i]);
		free(old);
	}
	memcpy(ne.ids, ids, nr * sizeof(*ids));
	leaf_put(lc, &ne);
}

/* Records after which an address may resolve differently: all but those known not to
 * touch the machine's maps, threads or build-ids. */
static void leaf_note_record(struct leaf_cache *lc, uint32_t type)
{
	switch (type) {
	case PERF_RECORD_FINISHED_ROUND:
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		return;
	}
	if (!lc->n)
		return;
	lc->n = 0;
	if (++lc->gen)
		return;
	/* Wrapped: generation 0 marks never-used slots, so forget every slot. */
	memset(lc->e, 0, lc->cap * sizeof(*lc->e));
	lc->gen = 1;
}

/* A leaf-only sample's frame ids into cg->ids; their number, 0 when out of memory. */
static size_t leaf_ids(struct cg_profile *cg, struct machine *m, const struct pd_sample *s)
{
	struct pd_sample leaf = leaf_of(s);
	struct leaf_entry *e;
	uint64_t ip = 0;
	int mode = leaf_mode(&leaf, &ip);
	size_t nr;

	if (mode >= 0 && (e = leaf_find(&cg->leaf, s->pid, mode, ip))) {
		memcpy(cg->ids, e->ids, e->nr * sizeof(*e->ids));
		return e->nr;
	}
	nr = machine_resolve(m, &leaf, cg->scratch, CG_MAX_FRAMES);
	nr = intern_frames(cg, cg->scratch, nr, cg->ids);
	if (nr && mode >= 0)
		leaf_add(&cg->leaf, s->pid, mode, ip, cg->ids, nr);
	return nr;
}

void cg_set_leaf_only(struct cg_profile *cg, bool leaf_only)
{
	cg->leaf_only = leaf_only;
}

int cg_load(struct cg_profile *cg, struct pd_reader *r, struct machine *m,
	    const struct cg_filter *filter, char *err, size_t errlen)
{
	struct pd_event ev;
	size_t i;
	int ret;

	while ((ret = pd_reader_next(r, &ev)) > 0) {
		const struct pd_sample *s = &ev.sample;
		const struct pd_evsel *evsel = ev.evsel;
		const char *comm, *state;
		uint64_t period;
		size_t nr;

		switch (ev.hdr->type) {
		case PERF_RECORD_SAMPLE:
			break;
		case PERF_RECORD_LOST:
		case PERF_RECORD_LOST_SAMPLES:
			count_lost(cg, r, &ev);
			continue;
		default:
			leaf_note_record(&cg->leaf, ev.hdr->type);
			ret = machine_process_event(m, &ev);
			if (ret == -ENOMEM)
				goto nomem;
			continue;
		}
		comm = machine_comm(m, s->pid, s->tid);
		if (!keep(filter, s->pid, s->tid, comm))
			continue;
		period = s->period;
		if (evsel && !(evsel->attr.sample_type & PERF_SAMPLE_PERIOD))
			period = evsel->attr.freq ? 0 : evsel->attr.sample_period;
		if (!period)
			period = 1;
		state = evsel && (evsel->attr.sample_type & PERF_SAMPLE_RAW)
				? offcpu_raw_state(s->raw, s->raw_size)
				: NULL;
		if (!event_get(cg, evsel ? evsel->idx : 0, evsel ? evsel->name : "[unknown]"))
			goto nomem;
		if (cg->leaf_only) {
			nr = leaf_ids(cg, m, s);
		} else {
			nr = machine_resolve(m, s, cg->scratch, CG_MAX_FRAMES);
			nr = intern_frames(cg, cg->scratch, nr, cg->ids);
		}
		if (!nr ||
		    add_stack(cg, evsel ? evsel->idx : 0, evsel ? evsel->name : "[unknown]", s->pid,
			      s->tid, comm, cg->ids, nr, period,
			      evsel && (evsel->attr.sample_type & PERF_SAMPLE_TIME) ? s->time : 0,
			      state))
			goto nomem;
	}
	if (ret < 0) {
		snprintf(err, errlen, "%s", pd_reader_error(r));
		return ret;
	}
	/* Events without samples still get their header section. */
	for (i = 0; i < pd_reader_nr_evsel(r); i++)
		note_event_attr(cg, pd_reader_evsel(r, i));
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
}

struct cg_profile *cg_new(void)
{
	struct cg_profile *cg = calloc(1, sizeof(*cg));

	if (!cg)
		return NULL;
	cg->scratch = calloc(CG_MAX_FRAMES, sizeof(*cg->scratch));
	cg->ids = calloc(CG_MAX_FRAMES, sizeof(*cg->ids));
	cg->leaf.gen = 1;
	if (!cg->scratch || !cg->ids) {
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
	for (i = 0; i < cg->nr_stacks; i++)
		free((void *)cg->stacks[i].frames);
	free(cg->strs);
	free(cg->frames);
	free(cg->funcs);
	free(cg->stacks);
	free(cg->events);
	free(cg->scratch);
	free(cg->ids);
	free(cg->leaf.e);
	hindex_free(&cg->str_idx);
	hindex_free(&cg->frame_idx);
	hindex_free(&cg->func_idx);
	hindex_free(&cg->stack_idx);
	free(cg);
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
