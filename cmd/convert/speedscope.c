// SPDX-License-Identifier: Apache-2.0
/*
 * speedscope's JSON file format (https://www.speedscope.app/file-format-schema.json;
 * speedscope's src/lib/file-format-spec.ts): one "sampled" profile per thread and
 * event, whose samples are the thread's samples in time order, from the callgraph's
 * timeline, each a list of indices into shared.frames, root first.  speedscope's
 * time-order view lays them end to end, its left-heavy and sandwich views merge them.
 *
 * A frame is a function, as speedscope's own importers make them (its pprof importer
 * makes one of each pprof Function): its name as the other writers print it, with
 * folded's marks for kernel ("_[k]") and inlined ("_[i]") frames, and its source file
 * (else its dso's path).  No line: the line known is the sampled address's, and frames
 * differing by it would split each function into a box per line.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "convert.h"
#include "emit.h"
#include "profile/gpu_events.h"
#include "profile/pprof.h"

#define SS_SCHEMA "https://www.speedscope.app/file-format-schema.json"

static const char *const marks[] = {"", "_[k]", "_[i]"};

/* A frame of the file: interned name and file (cg's), a marks[] index. */
struct ss_frame {
	const char *name, *file;
	uint32_t mark;
};

/* A profile of the file: one thread's samples of one event. */
struct ss_prof {
	uint32_t event, pid, tid;
	size_t first, nr; /* its samples: order[first .. first + nr) */
};

struct speedscope {
	const struct cg_profile *cg;
	struct hidx frame_idx;
	struct ss_frame *frames;
	size_t nr_frames, cap_frames;
	uint32_t *frame_of; /* cg frame id -> file frame + 1; 0: not used */
	struct hidx prof_idx;
	struct ss_prof *profs;
	size_t nr_profs, cap_profs;
	uint32_t *prof_of; /* stack -> profile */
	size_t *order;	   /* timeline indices, a profile's together, each in time order */
};

static bool frame_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct ss_frame *a = &((const struct speedscope *)ctx)->frames[id], *b = key;

	return a->name == b->name && a->file == b->file && a->mark == b->mark;
}

/* Give cg frame id its file frame, new or equal to one given before.  0 or -ENOMEM. */
static int frame_use(struct speedscope *ss, uint32_t id)
{
	const struct cg_frame *f = cg_frame(ss->cg, id);
	const struct cg_func *fn = cg_func(ss->cg, f->func);
	struct ss_frame key = {fn->name, fn->file, f->kernel ? 1 : f->inlined ? 2 : 0};
	uint64_t h =
		hash_mix(hash_mix(hash_mix(0, (uintptr_t)key.name), (uintptr_t)key.file), key.mark);
	int64_t i;

	if (ss->frame_of[id])
		return 0;
	i = hidx_find(&ss->frame_idx, h, frame_eq, ss, &key);
	if (i < 0) {
		if (pa_grow((void **)&ss->frames, &ss->cap_frames, ss->nr_frames + 1,
			    sizeof(*ss->frames)) ||
		    hidx_insert(&ss->frame_idx, h, ss->nr_frames))
			return -ENOMEM;
		i = ss->nr_frames;
		ss->frames[ss->nr_frames++] = key;
	}
	ss->frame_of[id] = i + 1;
	return 0;
}

static bool prof_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct ss_prof *a = &((const struct speedscope *)ctx)->profs[id], *b = key;

	return a->event == b->event && a->pid == b->pid && a->tid == b->tid;
}

/* The profile of stack s, new or not.  0 or -ENOMEM. */
static int prof_use(struct speedscope *ss, const struct cg_stack *s, uint32_t *out)
{
	struct ss_prof key = {.event = s->event, .pid = s->pid, .tid = s->tid};
	uint64_t h = hash_mix(hash_mix(hash_mix(0, s->event), s->pid), s->tid);
	int64_t i = hidx_find(&ss->prof_idx, h, prof_eq, ss, &key);

	if (i < 0) {
		if (pa_grow((void **)&ss->profs, &ss->cap_profs, ss->nr_profs + 1,
			    sizeof(*ss->profs)) ||
		    hidx_insert(&ss->prof_idx, h, ss->nr_profs))
			return -ENOMEM;
		i = ss->nr_profs;
		ss->profs[ss->nr_profs++] = key;
	}
	*out = i;
	return 0;
}

/* Every stack that still counts: its profile, and its frames in the file. */
static int add_stacks(struct speedscope *ss)
{
	const struct cg_profile *cg = ss->cg;
	size_t i, k, f;

	for (i = 0; i < cg_nr_stacks(cg); i++) {
		const struct cg_stack *s = cg_stack(cg, i);

		if (!s->count) /* dropped by a filter (cg_keep_stacks) */
			continue;
		if (prof_use(ss, s, &ss->prof_of[i]))
			return -ENOMEM;
		for (k = s->nr; k-- > 0;) {
			const struct cg_loc *l = cg_loc(cg, s->locs[k]);

			for (f = l->nr_frames; f-- > 0;)
				if (frame_use(ss, l->frame + f))
					return -ENOMEM;
		}
	}
	return 0;
}

/* Whether timeline sample t counts: a stack not dropped. */
static bool sample_counts(const struct cg_profile *cg, struct cg_sample t)
{
	return t.stack < cg_nr_stacks(cg) && cg_stack(cg, t.stack)->count;
}

struct timed {
	uint64_t time;
	size_t idx;
};

static int cmp_timed(const void *a, const void *b)
{
	const struct timed *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Put profile p's samples in time order, where the reader's order was not (records
 * the reader could not order); equal times keep their order.  0 or -ENOMEM. */
static int time_order(struct speedscope *ss, const struct ss_prof *p)
{
	size_t *o = &ss->order[p->first], i;
	struct timed *t;

	for (i = 1; i < p->nr; i++)
		if (cg_sample(ss->cg, o[i]).time < cg_sample(ss->cg, o[i - 1]).time)
			break;
	if (i >= p->nr)
		return 0;
	t = malloc(p->nr * sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (i = 0; i < p->nr; i++)
		t[i] = (struct timed){cg_sample(ss->cg, o[i]).time, o[i]};
	qsort(t, p->nr, sizeof(*t), cmp_timed);
	for (i = 0; i < p->nr; i++)
		o[i] = t[i].idx;
	free(t);
	return 0;
}

/* The timeline's samples by profile (ss->order), each profile's in time order. */
static int group_samples(struct speedscope *ss)
{
	const struct cg_profile *cg = ss->cg;
	size_t n = cg_nr_samples(cg), i, at = 0;

	for (i = 0; i < n; i++) {
		struct cg_sample t = cg_sample(cg, i);

		if (sample_counts(cg, t))
			ss->profs[ss->prof_of[t.stack]].nr++;
	}
	for (i = 0; i < ss->nr_profs; i++) {
		ss->profs[i].first = at;
		at += ss->profs[i].nr;
		ss->profs[i].nr = 0;
	}
	ss->order = malloc((at ? at : 1) * sizeof(*ss->order));
	if (!ss->order)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct cg_sample t = cg_sample(cg, i);
		struct ss_prof *p;

		if (!sample_counts(cg, t))
			continue;
		p = &ss->profs[ss->prof_of[t.stack]];
		ss->order[p->first + p->nr++] = i;
	}
	for (i = 0; i < ss->nr_profs; i++)
		if (time_order(ss, &ss->profs[i]))
			return -ENOMEM;
	return 0;
}

/* Most samples first (speedscope opens the first), then by event and thread. */
static int cmp_prof(const void *a, const void *b)
{
	const struct ss_prof *x = a, *y = b;

	if (x->nr != y->nr)
		return x->nr > y->nr ? -1 : 1;
	if (x->event != y->event)
		return x->event < y->event ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static void emit_frames(struct emit *e, const struct speedscope *ss)
{
	size_t i;

	emit_str(e, "\"shared\":{\"frames\":[");
	for (i = 0; i < ss->nr_frames; i++) {
		const struct ss_frame *f = &ss->frames[i];

		emit_str(e, i ? ",\n{\"name\":" : "\n{\"name\":");
		emit_json_printf(e, "%s%s", f->name, marks[f->mark]);
		if (f->file) {
			emit_str(e, ",\"file\":");
			emit_json_str(e, f->file);
		}
		emit_str(e, "}");
	}
	emit_str(e, "\n]},\n");
}

/* Stack s: its frames' indices, root first, inlined functions above the
 * function they were inlined into. */
static void emit_stack(struct emit *e, const struct speedscope *ss, const struct cg_stack *s)
{
	const char *sep = "[";
	size_t k, f;

	for (k = s->nr; k-- > 0;) {
		const struct cg_loc *l = cg_loc(ss->cg, s->locs[k]);

		for (f = l->nr_frames; f-- > 0;) {
			emit_str(e, sep);
			emit_u64(e, ss->frame_of[l->frame + f] - 1);
			sep = ",";
		}
	}
	emit_str(e, "]");
}

/*
 * Profile p, named "comm pid/tid: event" by the thread's last comm (a thread that ran
 * exec is named by its new program).  Weights in nanoseconds for events whose period
 * is time (pprof's units), else 1 a sample.  It starts at its first sample's time
 * since start (the capture's first sample; 0 without times) and ends its total weight
 * later, as speedscope lays the samples out.
 */
static void emit_profile(struct emit *e, const struct speedscope *ss, const struct ss_prof *p,
			 uint64_t start)
{
	const struct cg_profile *cg = ss->cg;
	const struct cg_event *ev = cg_event(cg, p->event);
	const char *evname = ev && ev->name ? ev->name : "[unknown]", *type, *unit;
	struct cg_sample first = cg_sample(cg, ss->order[p->first]);
	struct cg_sample last = cg_sample(cg, ss->order[p->first + p->nr - 1]);
	uint64_t total = 0;
	bool ns;
	size_t i;

	pprof_value_type(evname, &type, &unit);
	ns = !strcmp(unit, "nanoseconds");
	for (i = 0; i < p->nr; i++)
		total += ns ? cg_sample(cg, ss->order[p->first + i]).period : 1;
	emit_str(e, "{\"type\":\"sampled\",\"name\":");
	emit_json_printf(e, "%s %u/%u: %s", cg_stack(cg, last.stack)->comm, p->pid, p->tid, evname);
	emit_str(e, ns ? ",\"unit\":\"nanoseconds\"" : ",\"unit\":\"none\"");
	emit_str(e, ",\"startValue\":");
	if (ns && first.time && first.time >= start) {
		/* speedscope lays samples end to end by weight: the end is where they stop */
		emit_u64(e, first.time - start);
		emit_str(e, ",\"endValue\":");
		emit_u64(e, first.time - start + total);
	} else {
		emit_str(e, "0,\"endValue\":");
		emit_u64(e, total);
	}
	emit_str(e, ",\n\"samples\":[");
	for (i = 0; i < p->nr; i++) {
		emit_str(e, i ? ",\n" : "\n");
		emit_stack(e, ss, cg_stack(cg, cg_sample(cg, ss->order[p->first + i]).stack));
	}
	emit_str(e, "],\n\"weights\":[");
	for (i = 0; i < p->nr; i++) {
		if (i)
			emit_str(e, ",");
		emit_u64(e, ns ? cg_sample(cg, ss->order[p->first + i]).period : 1);
	}
	emit_str(e, "]}");
}

/* A GPU sample of the timeline: its lane (device, stream) and time. */
struct gpu_item {
	const char *dev, *stream;
	uint64_t time;
	size_t idx;
};

static int cmp_gpu_item(const void *a, const void *b)
{
	const struct gpu_item *x = a, *y = b;
	int c = strcmp(x->dev, y->dev);

	if (!c)
		c = strcmp(x->stream, y->stream);
	if (c)
		return c;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static void emit_event(struct emit *e, char type, uint32_t frame, uint64_t at, bool *first)
{
	emit_str(e, *first ? "\n{\"type\":\"" : ",\n{\"type\":\"");
	*first = false;
	emit_mem(e, &type, 1);
	emit_str(e, "\",\"frame\":");
	emit_u64(e, frame);
	emit_str(e, ",\"at\":");
	emit_u64(e, at);
	emit_str(e, "}");
}

/* Open (type 'O') or close ('C') stack s's frames at at: root first when opening
 * (locations from the last, a location's real function before what it inlined), leaf
 * first when closing, so they nest. */
static void emit_events(struct emit *e, const struct speedscope *ss, const struct cg_stack *s,
			char type, uint64_t at, bool *first)
{
	size_t k, f;

	for (k = 0; k < s->nr; k++) {
		const struct cg_loc *l = cg_loc(ss->cg, s->locs[type == 'O' ? s->nr - 1 - k : k]);

		for (f = 0; f < l->nr_frames; f++)
			emit_event(
				e, type,
				ss->frame_of[l->frame + (type == 'O' ? l->nr_frames - 1 - f : f)] -
					1,
				at, first);
	}
}

/*
 * The GPU's own timeline: an evented profile per device and stream, each kernel, copy
 * or set open from when the GPU started it for as long as it ran, under its launch's
 * stack.  Work on one stream runs in order; a start before the previous end (clocks
 * read apart) is moved to that end, so events nest as speedscope needs.
 */
static int emit_gpu_lanes(struct emit *e, const struct speedscope *ss, uint64_t start,
			  size_t *nr_out)
{
	const struct cg_profile *cg = ss->cg;
	int ev = cg_find_event(cg, GPU_TIME_EVENT);
	struct gpu_item *items;
	size_t n = 0, i, j;

	if (ev < 0)
		return 0;
	items = malloc((cg_nr_samples(cg) + 1) * sizeof(*items));
	if (!items)
		return -ENOMEM;
	for (i = 0; i < cg_nr_samples(cg); i++) {
		struct cg_sample t = cg_sample(cg, i);
		const struct cg_stack *s;
		const char *dev, *stream;

		if (!sample_counts(cg, t) || !t.time || t.time < start)
			continue;
		s = cg_stack(cg, t.stack);
		dev = cg_label_str(s->labels, CG_LABEL_GPU_DEVICE);
		stream = cg_label_str(s->labels, CG_LABEL_GPU_STREAM);
		if ((int)s->event != ev || !dev || !stream)
			continue;
		items[n++] = (struct gpu_item){dev, stream, t.time, i};
	}
	qsort(items, n, sizeof(*items), cmp_gpu_item);
	for (i = 0; i < n; i = j) {
		uint64_t at = 0;
		bool first = true;

		for (j = i; j < n && !strcmp(items[j].dev, items[i].dev) &&
			    !strcmp(items[j].stream, items[i].stream);
		     j++)
			;
		emit_str(e, *nr_out ? ",\n" : "\n");
		(*nr_out)++;
		emit_str(e, "{\"type\":\"evented\",\"name\":");
		emit_json_printf(e, "GPU %s stream %s: " GPU_TIME_EVENT, items[i].dev,
				 items[i].stream);
		emit_str(e, ",\"unit\":\"nanoseconds\",\"startValue\":");
		emit_u64(e, items[i].time - start);
		emit_str(e, ",\"events\":[");
		for (size_t k = i; k < j; k++) {
			struct cg_sample t = cg_sample(cg, items[k].idx);
			const struct cg_stack *s = cg_stack(cg, t.stack);
			uint64_t open = t.time - start;

			if (open < at)
				open = at;
			at = open + t.period;
			emit_events(e, ss, s, 'O', open, &first);
			emit_events(e, ss, s, 'C', at, &first);
		}
		emit_str(e, "],\"endValue\":");
		emit_u64(e, at);
		emit_str(e, "}");
	}
	free(items);
	return 0;
}

int speedscope_render(const struct cg_profile *cg, const struct speedscope_opts *o,
		      folded_write_fn write, void *ctx)
{
	struct speedscope ss = {.cg = cg};
	struct emit e;
	uint64_t start = 0;
	size_t i, nr = 0;
	int err = -ENOMEM;

	for (i = 0; i < cg_nr_stacks(cg); i++)
		nr += cg_stack(cg, i)->count > 0;
	if (nr && !cg_nr_samples(cg))
		return -EINVAL; /* no timeline kept */
	for (i = 0; i < cg_nr_events(cg); i++) {
		const struct cg_event *ev = cg_event(cg, i);

		if (ev->first_time && (!start || ev->first_time < start))
			start = ev->first_time;
	}
	emit_init(&e, write, ctx);
	ss.frame_of = calloc(cg_nr_frames(cg) + 1, sizeof(*ss.frame_of));
	ss.prof_of = calloc(cg_nr_stacks(cg) + 1, sizeof(*ss.prof_of));
	if (!ss.frame_of || !ss.prof_of || add_stacks(&ss) || group_samples(&ss))
		goto out;
	qsort(ss.profs, ss.nr_profs, sizeof(*ss.profs), cmp_prof);

	emit_str(&e, "{\"$schema\":\"" SS_SCHEMA "\",\n\"exporter\":");
	emit_json_str(&e, o->exporter);
	emit_str(&e, ",\n\"name\":");
	emit_json_str(&e, o->name);
	emit_str(&e, ",\n\"activeProfileIndex\":0,\n");
	emit_frames(&e, &ss);
	emit_str(&e, "\"profiles\":[");
	/* Sorted by samples: those without any (not in the timeline) last, left out. */
	for (i = 0; i < ss.nr_profs && ss.profs[i].nr; i++) {
		emit_str(&e, i ? ",\n" : "\n");
		emit_profile(&e, &ss, &ss.profs[i], start);
	}
	if (emit_gpu_lanes(&e, &ss, start, &i))
		goto out;
	emit_str(&e, "\n]}\n");
	err = 0;
out:
	/* A failure writes nothing more. */
	if (err && !e.err)
		e.err = err;
	err = emit_finish(&e);
	free(ss.frame_of);
	free(ss.prof_of);
	free(ss.frames);
	free(ss.profs);
	free(ss.order);
	hidx_free(&ss.frame_idx);
	hidx_free(&ss.prof_idx);
	return err;
}
