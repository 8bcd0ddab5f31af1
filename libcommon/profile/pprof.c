// SPDX-License-Identifier: Apache-2.0
/*
 * cg_profile -> profile.proto.  The message is built in a few flat arrays (one per
 * message type, plus the pointer arrays protobuf-c wants) and packed, except for the
 * samples: there is one per stack, a million in a large capture, so they are encoded
 * straight into bytes after it (a repeated field may come in any order and any
 * number of pieces), each label set encoded once.  Then gzipped, two halves at once
 * (gzip2).  Ids are the callgraph's ids + 1: pprof reserves 0.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profile.pb-c.h"
#include "base/hash.h"
#include "profile/gpu_events.h"
#include "profile/offcpu.h"
#include "profile/pprof.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_vtype;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

/* String table with a hash index, so each string is stored once. */
struct strtab {
	char **strs;
	size_t nr, cap;
	struct hidx idx;
};

/* pprof_opts.tags kept at most. */
#define MAX_TAGS 8

struct builder {
	const struct cg_profile *cg;
	bool tid_label; /* pprof_opts.tid_label */
	/* pprof_opts.tags: string ids of each key and value; the keys (the string table
	 * keeps pointers) */
	int64_t tag_key[MAX_TAGS], tag_val[MAX_TAGS];
	char tag_names[MAX_TAGS][128];
	size_t nr_tags;
	struct strtab st;
	pb_profile prof;

	pb_vtype *vtypes, **vtype_ptrs, period_type;
	int *ev_col;  /* event index -> first value column, -1 when not present */
	char **owned; /* strings the table holds that were built here */
	size_t nr_owned;

	pb_mapping *maps, **map_ptrs;
	size_t nr_maps;
	uint32_t *map_id; /* cg mapping id -> pprof mapping id (main mapping first) */

	pb_location *locs, **loc_ptrs;
	pb_line *lines, **line_ptrs;
	pb_function *funcs, **func_ptrs;

	struct label_set *lsets;
	size_t nr_lsets, cap_lsets;
	struct hidx lset_idx;
	uint8_t *lbytes; /* every label set's encoded labels, back to back */
	size_t nr_lbytes, cap_lbytes;

	uint8_t *samples; /* Profile.sample fields, encoded */
	size_t nr_samples, cap_samples;
};

static bool str_eq(const void *ctx, uint32_t id, const void *key)
{
	return !strcmp(((const struct strtab *)ctx)->strs[id], key);
}

/* Index of s in the table, adding it; -1 on allocation failure. */
static int64_t str_id(struct strtab *st, const char *s)
{
	uint64_t h;
	int64_t id;

	if (!s)
		s = "";
	h = hash_str(s);
	id = hidx_find(&st->idx, h, str_eq, st, s);
	if (id >= 0)
		return id;
	if (pa_grow((void **)&st->strs, &st->cap, st->nr + 1, sizeof(*st->strs)) ||
	    hidx_insert(&st->idx, h, st->nr))
		return -1;
	/* Strings are borrowed (cg's, or literals) and outlive the builder. */
	st->strs[st->nr] = (char *)s;
	return st->nr++;
}

/* str_id for a string that does not outlive the call (a stack buffer). */
static int64_t str_id_copy(struct builder *b, const char *s)
{
	int64_t id = str_id(&b->st, s);
	char *copy;

	if (id < 0 || b->st.strs[id] != s)
		return id;
	copy = strdup(s);
	if (!copy) {
		b->st.strs[id] = "";
		return -1;
	}
	b->st.strs[id] = copy;
	b->owned[b->nr_owned++] = copy;
	return id;
}

/* event is name, optionally with perf's ":modifiers" ("cpu-clock:ppp"). */
static bool event_is(const char *event, const char *name)
{
	size_t n = strcspn(event, ":");

	return n == strlen(name) && !strncmp(event, name, n);
}

void pprof_value_type(const char *event, const char **type, const char **unit)
{
	if (!event) {
		*type = "events";
		*unit = "count";
	} else if (event_is(event, "cpu-clock") || event_is(event, "task-clock")) {
		*type = "cpu";
		*unit = "nanoseconds";
	} else if (event_is(event, OFFCPU_EVENT)) {
		*type = "offcpu";
		*unit = "nanoseconds";
	} else if (event_is(event, GPU_TIME_EVENT)) {
		*type = "gpu";
		*unit = "nanoseconds";
	} else {
		*type = event;
		*unit = "count";
	}
}

static void *xcalloc(size_t n, size_t size)
{
	return pa_calloc_big(n, size);
}

/* Sample types: two columns per event with samples (count, then period). */
static int build_types(struct builder *b)
{
	const struct cg_profile *cg = b->cg;
	size_t nev = cg_nr_events(cg), i, ncol = 0;
	int64_t deflt = -1;
	int period_ev = -1;

	b->ev_col = xcalloc(nev, sizeof(*b->ev_col));
	b->vtypes = xcalloc(2 * nev, sizeof(*b->vtypes));
	b->vtype_ptrs = xcalloc(2 * nev, sizeof(*b->vtype_ptrs));
	b->owned = xcalloc(nev, sizeof(*b->owned));
	if (!b->ev_col || !b->vtypes || !b->vtype_ptrs || !b->owned)
		return -ENOMEM;
	for (i = 0; i < nev; i++) {
		const struct cg_event *ev = cg_event(cg, i);
		const char *type, *unit;
		char name[256];
		int64_t s_type, s_unit, s_cnt, s_count_unit;

		b->ev_col[i] = -1;
		if (!ev->samples && !(i == nev - 1 && !ncol))
			continue;
		pprof_value_type(ev->name, &type, &unit);
		/* The first event's count column keeps the conventional name "samples". */
		if (!ncol) {
			s_cnt = str_id(&b->st, "samples");
		} else {
			snprintf(name, sizeof(name), "%s_samples", type);
			s_cnt = str_id_copy(b, name);
		}
		s_count_unit = str_id(&b->st, "count");
		s_type = str_id(&b->st, type);
		s_unit = str_id(&b->st, unit);
		if (s_cnt < 0 || s_count_unit < 0 || s_type < 0 || s_unit < 0)
			return -ENOMEM;
		b->ev_col[i] = ncol;
		perftools__profiles__value_type__init(&b->vtypes[ncol]);
		b->vtypes[ncol].type = s_cnt;
		b->vtypes[ncol].unit = s_count_unit;
		perftools__profiles__value_type__init(&b->vtypes[ncol + 1]);
		b->vtypes[ncol + 1].type = s_type;
		b->vtypes[ncol + 1].unit = s_unit;
		/* Default: the cpu column if there is one, else the first event's. */
		if (deflt < 0 || (!strcmp(type, "cpu") && strcmp(b->st.strs[deflt], "cpu"))) {
			deflt = s_type;
			period_ev = i;
		}
		ncol += 2;
	}
	for (i = 0; i < ncol; i++)
		b->vtype_ptrs[i] = &b->vtypes[i];
	b->prof.n_sample_type = ncol;
	b->prof.sample_type = b->vtype_ptrs;
	b->prof.default_sample_type = deflt;

	if (period_ev >= 0) {
		const struct cg_event *ev = cg_event(cg, period_ev);
		const char *type, *unit;

		pprof_value_type(ev->name, &type, &unit);
		perftools__profiles__value_type__init(&b->period_type);
		b->period_type.type = str_id(&b->st, type);
		b->period_type.unit = str_id(&b->st, unit);
		b->prof.period_type = &b->period_type;
		if (!ev->freq && ev->sample_period)
			b->prof.period = ev->sample_period;
		else if (ev->freq && ev->sample_period && !strcmp(unit, "nanoseconds"))
			b->prof.period = 1000000000ULL / ev->sample_period;
		else if (ev->samples)
			b->prof.period = ev->period / ev->samples;
	}
	return 0;
}

/*
 * pprof takes mapping[0] as the main binary (its "File:" line).  perf.data does not
 * say which one that is: prefer the file named like the sampled command (comm is
 * the executable's name, cut to 15 characters), else the user mapping under the
 * most period; each stack counts once per mapping.
 */
static bool named_like(const char *path, const char *comm)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return *comm && !strncmp(base, comm, 15);
}

/* The index of the mapping to put first (see above). */
static int main_mapping(const struct builder *b, size_t *best_out)
{
	const struct cg_profile *cg = b->cg;
	size_t nm = cg_nr_mappings(cg), nl = cg_nr_locs(cg), i, k, best = 0;
	uint64_t *weight = xcalloc(nm, sizeof(*weight));
	uint64_t *weight_named = xcalloc(nm, sizeof(*weight_named));
	size_t *stamp = xcalloc(nm, sizeof(*stamp));
	/* Per location its user mapping + 1 (0: none): a small array, where the
	 * locations are large and every address of every stack is looked up. */
	uint32_t *user_map = xcalloc(nl, sizeof(*user_map));
	/* Per mapping, whether it is named like the last comm it was checked with. */
	const char **named_for = xcalloc(nm, sizeof(*named_for));
	bool *named = xcalloc(nm, sizeof(*named));
	int err = -ENOMEM;

	if (!weight || !weight_named || !stamp || !user_map || !named_for || !named)
		goto out;
	for (i = 0; i < nl; i++) {
		uint32_t m = cg_loc(cg, i)->mapping;

		user_map[i] = m && !cg_mapping(cg, m - 1)->kernel ? m : 0;
	}
	for (i = 0; i < cg_nr_stacks(cg); i++) {
		const struct cg_stack *s = cg_stack(cg, i);

		for (k = 0; k < s->nr; k++) {
			uint32_t m = user_map[s->locs[k]];

			if (!m-- || stamp[m] == i + 1)
				continue;
			stamp[m] = i + 1;
			weight[m] += s->period;
			if (named_for[m] != s->comm) {
				named_for[m] = s->comm;
				named[m] = named_like(cg_mapping(cg, m)->path, s->comm);
			}
			if (named[m])
				weight_named[m] += s->period;
		}
	}
	for (i = 1; i < nm; i++)
		if (weight_named[i] > weight_named[best])
			best = i;
	if (!nm || !weight_named[best])
		for (i = 1; i < nm; i++)
			if (weight[i] > weight[best])
				best = i;
	*best_out = best;
	err = 0;
out:
	free(weight);
	free(weight_named);
	free(stamp);
	free(user_map);
	free(named_for);
	free(named);
	return err;
}

/* Mappings: the capture's, the main one first. */
static int build_mappings(struct builder *b)
{
	const struct cg_profile *cg = b->cg;
	size_t nm = cg_nr_mappings(cg), i, best = 0;
	int err;

	b->maps = xcalloc(nm, sizeof(*b->maps));
	b->map_ptrs = xcalloc(nm, sizeof(*b->map_ptrs));
	b->map_id = xcalloc(nm, sizeof(*b->map_id));
	if (!b->maps || !b->map_ptrs || !b->map_id)
		return -ENOMEM;
	err = main_mapping(b, &best);
	if (err)
		return err;
	for (i = 0; i < nm; i++) {
		const struct cg_mapping *cm = cg_mapping(cg, i);
		/* Swap the main mapping with the first. */
		size_t j = i == best ? 0 : i == 0 ? best : i;
		pb_mapping *m = &b->maps[j];

		perftools__profiles__mapping__init(m);
		m->id = j + 1;
		m->memory_start = cm->start;
		m->memory_limit = cm->end;
		m->file_offset = cm->pgoff;
		m->filename = str_id(&b->st, cm->path);
		m->build_id = str_id(&b->st, cm->build_id ? cm->build_id : "");
		if (m->filename < 0 || m->build_id < 0)
			return -ENOMEM;
		/* Every location carries its function: nothing for pprof to symbolize. */
		m->has_functions = true;
		b->map_ptrs[j] = m;
		b->map_id[i] = j + 1;
	}
	b->nr_maps = nm;
	b->prof.n_mapping = nm;
	b->prof.mapping = b->map_ptrs;
	return 0;
}

static int build_functions(struct builder *b)
{
	const struct cg_profile *cg = b->cg;
	size_t nfn = cg_nr_funcs(cg), i;

	b->funcs = xcalloc(nfn, sizeof(*b->funcs));
	b->func_ptrs = xcalloc(nfn, sizeof(*b->func_ptrs));
	if (!b->funcs || !b->func_ptrs)
		return -ENOMEM;
	for (i = 0; i < nfn; i++) {
		const struct cg_func *f = cg_func(cg, i);
		pb_function *fn = &b->funcs[i];

		perftools__profiles__function__init(fn);
		fn->id = i + 1;
		fn->name = str_id(&b->st, f->name);
		fn->system_name = fn->name;
		/*
		 * The source file when DWARF names it, else the dso: either way functions
		 * of equal names in two binaries stay two.
		 */
		fn->filename = str_id(&b->st, f->file);
		if (fn->name < 0 || fn->filename < 0)
			return -ENOMEM;
		b->func_ptrs[i] = fn;
	}
	b->prof.n_function = nfn;
	b->prof.function = b->func_ptrs;
	return 0;
}

/*
 * One Location per cg location, its frames as Lines: the functions inlined at its
 * address innermost first and the real function last, which is how pprof expects
 * inlining.
 */
static int build_locations(struct builder *b)
{
	const struct cg_profile *cg = b->cg;
	size_t nloc = cg_nr_locs(cg), nf = cg_nr_frames(cg), i, k;
	int err;

	err = build_functions(b);
	if (err)
		return err;
	b->locs = xcalloc(nloc, sizeof(*b->locs));
	b->loc_ptrs = xcalloc(nloc, sizeof(*b->loc_ptrs));
	b->lines = xcalloc(nf, sizeof(*b->lines));
	b->line_ptrs = xcalloc(nf, sizeof(*b->line_ptrs));
	if (!b->locs || !b->loc_ptrs || !b->lines || !b->line_ptrs)
		return -ENOMEM;
	for (i = 0; i < nloc; i++) {
		const struct cg_loc *cl = cg_loc(cg, i);
		pb_location *l = &b->locs[i];

		for (k = cl->frame; k < cl->frame + cl->nr_frames; k++) {
			pb_line *ln = &b->lines[k];

			perftools__profiles__line__init(ln);
			ln->function_id = cg_frame(cg, k)->func + 1;
			ln->line = cg_frame(cg, k)->line;
			b->line_ptrs[k] = ln;
		}
		perftools__profiles__location__init(l);
		l->id = i + 1;
		l->mapping_id = cl->mapping ? b->map_id[cl->mapping - 1] : 0;
		l->address = cl->ip;
		l->n_line = cl->nr_frames;
		l->line = &b->line_ptrs[cl->frame];
		b->loc_ptrs[i] = l;
	}
	b->prof.n_location = nloc;
	b->prof.location = b->loc_ptrs;
	return 0;
}

/* pid, tid (pprof_opts.tid_label) and comm; then the stack's own labels
 * (cg_stack.labels). */
#define NR_THREAD_LABELS 3
#define MAX_LABELS	 (NR_THREAD_LABELS + CG_MAX_LABELS + MAX_TAGS)

/* One thread's labels with one label set, shared by all their samples. */
struct label_set {
	uint32_t pid, tid;
	const char *comm;		/* interned by the callgraph */
	const struct cg_labels *labels; /* the same */
	size_t at, len;			/* its Sample.label fields in lbytes */
};

static bool lset_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct label_set *a = &((const struct builder *)ctx)->lsets[id], *b = key;

	return a->pid == b->pid && a->tid == b->tid && a->comm == b->comm && a->labels == b->labels;
}

/* The label set of stack s, encoded when new; -1 when out of memory. */
static int64_t label_set(struct builder *b, const struct cg_stack *s,
			 const int64_t keys[NR_THREAD_LABELS])
{
	struct label_set k = {s->pid, b->tid_label ? s->tid : 0, s->comm, s->labels, b->nr_lbytes,
			      0};
	uint64_t h = hash_mix(hash_mix(hash_mix(hash_mix(0, k.pid), k.tid), (uintptr_t)k.comm),
			      (uintptr_t)k.labels);
	int64_t id = hidx_find(&b->lset_idx, h, lset_eq, b, &k);
	pb_label lb[MAX_LABELS], *ptrs[MAX_LABELS];
	size_t i, n = 0;
	pb_sample only;

	if (id >= 0)
		return id;
	for (i = 0; i < MAX_LABELS; i++) {
		perftools__profiles__label__init(&lb[i]);
		ptrs[i] = &lb[i];
	}
	lb[n].key = keys[0];
	lb[n++].num = s->pid;
	if (b->tid_label) {
		lb[n].key = keys[1];
		lb[n++].num = s->tid;
	}
	lb[n].key = keys[2];
	lb[n].str = str_id(&b->st, s->comm);
	if (lb[n++].str < 0)
		return -1;
	for (i = 0; s->labels && i < s->labels->nr && n < MAX_LABELS; i++, n++) {
		const struct cg_label *l = &s->labels->v[i];

		lb[n].key = str_id(&b->st, l->key);
		if (l->str)
			lb[n].str = str_id(&b->st, l->str);
		else
			lb[n].num = l->num;
		if (lb[n].key < 0 || lb[n].str < 0)
			return -1;
	}
	for (i = 0; i < b->nr_tags && n < MAX_LABELS; i++, n++) {
		lb[n].key = b->tag_key[i];
		lb[n].str = b->tag_val[i];
	}
	/* A Sample with labels alone packs to exactly its label fields. */
	perftools__profiles__sample__init(&only);
	only.n_label = n;
	only.label = ptrs;
	k.len = perftools__profiles__sample__get_packed_size(&only);
	if (pa_grow((void **)&b->lbytes, &b->cap_lbytes, b->nr_lbytes + k.len, 1) ||
	    pa_grow((void **)&b->lsets, &b->cap_lsets, b->nr_lsets + 1, sizeof(*b->lsets)) ||
	    hidx_insert(&b->lset_idx, h, b->nr_lsets))
		return -1;
	perftools__profiles__sample__pack(&only, b->lbytes + k.at);
	b->nr_lbytes += k.len;
	b->lsets[b->nr_lsets] = k;
	return b->nr_lsets++;
}

static size_t varint_len(uint64_t v)
{
	size_t n = 1;

	for (; v >= 0x80; v >>= 7)
		n++;
	return n;
}

static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	for (; v >= 0x80; v >>= 7)
		*p++ = (uint8_t)v | 0x80;
	*p++ = (uint8_t)v;
	return p;
}

/* Wire tags: Profile.sample = 2, Sample.location_id = 1, Sample.value = 2, length-delimited. */
#define TAG_PROFILE_SAMPLE 0x12
#define TAG_LOCATION_IDS   0x0a
#define TAG_VALUES	   0x12

/* Stack s as one Profile.sample field at the end of b->samples. */
static int encode_sample(struct builder *b, const struct cg_stack *s, const uint64_t *val,
			 size_t ncol, const struct label_set *ls)
{
	size_t nloc = 0, nval = 0, body, k;
	uint8_t *p;

	for (k = 0; k < s->nr; k++)
		nloc += varint_len(s->locs[k] + 1);
	for (k = 0; k < ncol; k++)
		nval += varint_len(val[k]);
	body = (s->nr ? 1 + varint_len(nloc) + nloc : 0) + 1 + varint_len(nval) + nval + ls->len;
	if (pa_grow((void **)&b->samples, &b->cap_samples,
		    b->nr_samples + 1 + varint_len(body) + body, 1))
		return -ENOMEM;
	p = b->samples + b->nr_samples;
	*p++ = TAG_PROFILE_SAMPLE;
	p = put_varint(p, body);
	if (s->nr) {
		*p++ = TAG_LOCATION_IDS;
		p = put_varint(p, nloc);
		for (k = 0; k < s->nr; k++)
			p = put_varint(p, s->locs[k] + 1); /* already leaf first */
	}
	*p++ = TAG_VALUES;
	p = put_varint(p, nval);
	for (k = 0; k < ncol; k++)
		p = put_varint(p, val[k]);
	memcpy(p, b->lbytes + ls->at, ls->len);
	b->nr_samples = p + ls->len - b->samples;
	return 0;
}

static int build_samples(struct builder *b)
{
	const struct cg_profile *cg = b->cg;
	size_t ns = cg_nr_stacks(cg), ncol = b->prof.n_sample_type, i;
	int64_t keys[NR_THREAD_LABELS] = {str_id(&b->st, "pid"), str_id(&b->st, "tid"),
					  str_id(&b->st, "comm")};
	uint64_t *val = xcalloc(ncol, sizeof(*val));
	int err = -ENOMEM;

	if (!val || keys[0] < 0 || keys[1] < 0 || keys[2] < 0)
		goto out;
	for (i = 0; i < ns; i++) {
		const struct cg_stack *s = cg_stack(cg, i);
		int col;
		int64_t ls;

		if (!s->count) /* dropped (cg_keep_stacks) */
			continue;
		col = s->event < cg_nr_events(cg) ? b->ev_col[s->event] : -1;
		ls = label_set(b, s, keys);
		if (ls < 0)
			goto out;
		if (col >= 0) {
			val[col] = s->count;
			val[col + 1] = s->period;
		}
		if (encode_sample(b, s, val, ncol, &b->lsets[ls]))
			goto out;
		if (col >= 0)
			val[col] = val[col + 1] = 0;
	}
	err = 0;
out:
	free(val);
	return err;
}

static void builder_free(struct builder *b)
{
	size_t i;

	for (i = 0; i < b->nr_owned; i++)
		free(b->owned[i]);
	free(b->owned);
	free(b->st.strs);
	hidx_free(&b->st.idx);
	free(b->vtypes);
	free(b->vtype_ptrs);
	free(b->ev_col);
	free(b->maps);
	free(b->map_ptrs);
	free(b->map_id);
	free(b->locs);
	free(b->loc_ptrs);
	free(b->lines);
	free(b->line_ptrs);
	free(b->funcs);
	free(b->func_ptrs);
	free(b->lsets);
	hidx_free(&b->lset_idx);
	free(b->lbytes);
	free(b->samples);
}

/* Build cg's profile in b: the packed message without its samples in *head, then
 * b->samples. */
static int build(struct builder *b, const struct pprof_opts *opts, uint8_t **head, size_t *head_len)
{
	int err;

	*head = NULL;
	*head_len = 0;
	if (!cg_nr_events(b->cg))
		return -EINVAL;
	perftools__profiles__profile__init(&b->prof);
	b->tid_label = opts && opts->tid_label;
	/* string_table[0] must be "" */
	if (str_id(&b->st, "") != 0)
		return -ENOMEM;
	for (size_t i = 0; opts && i < opts->nr_tags && b->nr_tags < MAX_TAGS; i++) {
		const char *t = opts->tags[i], *eq = strchr(t, '=');
		char *key = b->tag_names[b->nr_tags];

		if (!eq || eq == t || (size_t)(eq - t) >= sizeof(b->tag_names[0]))
			continue;
		memcpy(key, t, eq - t);
		key[eq - t] = '\0';
		b->tag_key[b->nr_tags] = str_id(&b->st, key);
		b->tag_val[b->nr_tags] = str_id(&b->st, eq + 1);
		if (b->tag_key[b->nr_tags] < 0 || b->tag_val[b->nr_tags] < 0)
			return -ENOMEM;
		b->nr_tags++;
	}
	err = build_types(b);
	if (!err)
		err = build_mappings(b);
	if (!err)
		err = build_locations(b);
	if (!err)
		err = build_samples(b);
	if (err)
		return err;
	b->prof.time_nanos = opts ? opts->time_nanos : 0;
	b->prof.duration_nanos = opts ? opts->duration_nanos : 0;
	b->prof.n_string_table = b->st.nr;
	b->prof.string_table = b->st.strs;

	*head_len = perftools__profiles__profile__get_packed_size(&b->prof);
	*head = malloc(*head_len ? *head_len : 1);
	if (!*head)
		return -ENOMEM;
	perftools__profiles__profile__pack(&b->prof, *head);
	return 0;
}

/*
 * gzip, in two halves at once (as pigz does): each half is a raw deflate stream,
 * the first ended by a sync flush (its blocks not final, byte-aligned), the second
 * primed with the 32 KiB before it as its dictionary, so the two read as one stream
 * and compress about as well.  One gzip header before them; after them the CRC of
 * the whole, combined from the halves', and its length.
 */
#define GZ_SPLIT  (1u << 20) /* smaller inputs are one half */
#define GZ_WINDOW (1u << 15)

/* One half: bytes [from, to) of in[0] followed by in[1]. */
struct gz_half {
	const uint8_t *const *in;
	const size_t *n;
	size_t from, to;
	bool last;
	uint8_t *out;
	size_t cap, len;
	uLong crc;
	int err;
};

/* The piece of in[i] inside [from, to), as a pointer and a length (0: none). */
static size_t gz_piece(const struct gz_half *h, int i, const uint8_t **p)
{
	size_t at = i ? h->n[0] : 0, lo, hi;

	if (h->to <= at)
		return 0;
	lo = h->from > at ? h->from - at : 0;
	hi = h->to - at < h->n[i] ? h->to - at : h->n[i];
	if (lo >= hi)
		return 0;
	*p = h->in[i] + lo;
	return hi - lo;
}

static void *gz_deflate(void *arg)
{
	struct gz_half *h = arg;
	z_stream zs = {0};
	const uint8_t *p, *dict = NULL;
	size_t len;
	int i, zret = Z_OK;

	h->crc = crc32(0, NULL, 0);
	h->err = -ENOMEM;
	/* Level 1, as Go's runtime/pprof writes profiles: a profile is written once per
	 * capture and read by tools that do not care, and level 6 costs three times the
	 * time.  windowBits -15: raw deflate, the gzip framing is ours. */
	if (deflateInit2(&zs, Z_BEST_SPEED, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return NULL;
	/* The window before this half, where one piece holds it whole. */
	for (i = 0; i < 2 && h->from >= GZ_WINDOW; i++) {
		size_t at = i ? h->n[0] : 0;

		if (h->from - GZ_WINDOW >= at && h->from <= at + h->n[i])
			dict = h->in[i] + (h->from - GZ_WINDOW - at);
	}
	if (dict && deflateSetDictionary(&zs, dict, GZ_WINDOW) != Z_OK)
		goto out;
	h->cap = deflateBound(&zs, h->to - h->from) + 64;
	h->out = malloc(h->cap);
	if (!h->out)
		goto out;
	pa_huge(h->out, h->cap);
	zs.next_out = h->out;
	zs.avail_out = h->cap;
	/* deflateBound covers the whole half, so each call consumes all it is given. */
	for (i = 0; i < 2 && zret == Z_OK; i++) {
		len = gz_piece(h, i, &p);
		if (!len)
			continue;
		h->crc = crc32(h->crc, p, len);
		zs.next_in = (Bytef *)p;
		zs.avail_in = len;
		zret = deflate(&zs, Z_NO_FLUSH);
	}
	if (zret == Z_OK)
		zret = deflate(&zs, h->last ? Z_FINISH : Z_SYNC_FLUSH);
	if (zret == (h->last ? Z_STREAM_END : Z_OK)) {
		h->len = h->cap - zs.avail_out;
		h->err = 0;
	} else {
		h->err = -EIO;
	}
out:
	deflateEnd(&zs);
	return NULL;
}

/* in[0] and then in[1] (n bytes each) in one gzip stream at *out. */
static int gzip2(const uint8_t *const in[2], const size_t n[2], uint8_t **out, size_t *out_len)
{
	/* ID1 ID2 CM=deflate FLG=0 MTIME=0 XFL=4 (fastest) OS=3 (Unix), as zlib writes */
	static const uint8_t head[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 3};
	size_t total = n[0] + n[1], split = total >= GZ_SPLIT ? total / 2 : 0;
	struct gz_half h[2] = {
		{.in = in, .n = n, .from = 0, .to = split},
		{.in = in, .n = n, .from = split, .to = total, .last = true},
	};
	pthread_t thread;
	bool threaded = split && !pthread_create(&thread, NULL, gz_deflate, &h[1]);
	uLong crc;
	uint8_t *buf, *p;
	int err;

	*out = NULL;
	*out_len = 0;
	if (split)
		gz_deflate(&h[0]);
	if (threaded)
		pthread_join(thread, NULL);
	else
		gz_deflate(&h[1]);
	err = split && h[0].err ? h[0].err : h[1].err;
	if (err)
		goto out;
	buf = malloc(sizeof(head) + h[0].len + h[1].len + 8);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	crc = split ? crc32_combine(h[0].crc, h[1].crc, total - split) : h[1].crc;
	p = buf;
	memcpy(p, head, sizeof(head));
	p += sizeof(head);
	if (h[0].len)
		memcpy(p, h[0].out, h[0].len);
	p += h[0].len;
	memcpy(p, h[1].out, h[1].len);
	p += h[1].len;
	for (int i = 0; i < 4; i++)
		*p++ = crc >> (8 * i);
	for (int i = 0; i < 4; i++)
		*p++ = (uint32_t)total >> (8 * i);
	*out = buf;
	*out_len = p - buf;
out:
	free(h[0].out);
	free(h[1].out);
	return err;
}

int pprof_encode(const struct cg_profile *cg, const struct pprof_opts *opts, uint8_t **out,
		 size_t *len)
{
	struct builder b = {.cg = cg};
	uint8_t *head;
	size_t head_len;
	int err = build(&b, opts, &head, &head_len);

	*out = NULL;
	*len = 0;
	if (!err)
		err = gzip2((const uint8_t *const[2]){head, b.samples},
			    (const size_t[2]){head_len, b.nr_samples}, out, len);
	free(head);
	builder_free(&b);
	return err;
}
