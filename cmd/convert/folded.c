// SPDX-License-Identifier: Apache-2.0
/*
 * Folded stacks, the input of flamegraph.pl and speedscope: like stackcollapse-perf
 * --all --inline, so existing flame-graph tooling reads it unchanged.
 *
 * A line is "comm;root;...;leaf COUNT".  Each part of it (a comm, or a frame's name
 * with its "_[k]"/"_[i]" mark) is made once and interned, so a line is a sequence of
 * token ids: lines sort by comparing tokens, not by rendering and comparing text, and
 * stacks that print the same text (two threads of a process, two addresses of one
 * function) have equal sequences, which the sort puts next to each other, to be
 * merged as they are written.  A location's tokens are made once, kept in a small
 * array by location id: a line is made from its stack's location ids alone.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "convert.h"
#include "profile/gpu_events.h"
#include "profile/offcpu.h"

struct token {
	char *text;
	size_t len;
};

/*
 * One stack's line: tokens [first, first + nr) of the token sequence array, and what
 * the sort moves and compares first: its first three tokens' ranks + 1 (0: none),
 * which decide most compares (before ranking, their ids as rank_tokens numbers them,
 * + 1).
 */
struct line {
	uint32_t key[3];
	uint32_t nr;
	size_t first;
	uint64_t count;
};

/* A location's tokens, in loc_tok: 0 not made yet; one token t: t + 1; more (inlined
 * frames): LT_MULTI | i, where ltoks[i] is their number and the tokens follow,
 * innermost first, as the location's frames are. */
#define LT_MULTI (1u << 31)

struct folder {
	struct hidx tok_idx;
	struct token *toks;
	size_t nr_toks, cap_toks;
	uint32_t *loc_tok; /* location id -> its tokens (LT_MULTI) */
	uint32_t *ltoks;
	size_t nr_ltoks, cap_ltoks;
	const char *last_comm;	/* comms are interned by the callgraph: equal ones, */
	uint32_t last_comm_tok; /* equal pointers; the last one's token */
	/* Token id t followed by ';' (2t) or ending its line (2t + 1) -> its place in
	 * the text order of all of them. */
	uint32_t *rank;
	uint32_t *seq; /* every line's token ids, back to back */
	size_t nr_seq, cap_seq;
	struct line *lines;
	size_t nr_lines, cap_lines;
};

static bool tok_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct folder *f = ctx;

	return !strcmp(f->toks[id].text, key);
}

/*
 * The token of name and its mark, or UINT32_MAX when out of memory.  ';' separates
 * frames and ' ' the count: in names they become ':' and '_', as stackcollapse-perf
 * and flamegraph.pl have them, so no name forges either.
 */
static uint32_t token(struct folder *f, const char *name, const char *mark)
{
	size_t n = strlen(name), m = strlen(mark), i;
	char *t = malloc(n + m + 1);
	uint64_t h;
	int64_t id;

	if (!t)
		return UINT32_MAX;
	memcpy(t, name, n);
	memcpy(t + n, mark, m + 1);
	for (i = 0; i < n; i++) {
		if (t[i] == ' ' || t[i] == '\n')
			t[i] = '_';
		else if (t[i] == ';')
			t[i] = ':';
	}
	h = hash_str(t);
	id = hidx_find(&f->tok_idx, h, tok_eq, f, t);
	if (id >= 0) {
		free(t);
		return id;
	}
	if (pa_grow((void **)&f->toks, &f->cap_toks, f->nr_toks + 1, sizeof(*f->toks)) ||
	    hidx_insert(&f->tok_idx, h, f->nr_toks)) {
		free(t);
		return UINT32_MAX;
	}
	f->toks[f->nr_toks] = (struct token){t, n + m};
	return f->nr_toks++;
}

/* Make location loc's tokens (see LT_MULTI); 0 when out of memory. */
static uint32_t loc_tokens(struct folder *f, const struct cg_profile *cg, uint32_t loc)
{
	const struct cg_loc *l = cg_loc(cg, loc);
	size_t at = f->nr_ltoks, k;
	uint32_t t;

	if (l->nr_frames > 1 &&
	    (at + 1 + l->nr_frames >= LT_MULTI ||
	     pa_grow((void **)&f->ltoks, &f->cap_ltoks, at + 1 + l->nr_frames, sizeof(*f->ltoks))))
		return 0;
	for (k = 0; k < l->nr_frames; k++) {
		const struct cg_frame *fr = cg_frame(cg, l->frame + k);

		/* Inlined functions as stackcollapse-perf --inline marks them (flamegraph.pl
		 * colours "_[i]" frames as inlined). */
		t = token(f, fr->name, fr->kernel ? "_[k]" : fr->inlined ? "_[i]" : "");
		if (t >= LT_MULTI - 1)
			return 0;
		if (l->nr_frames == 1)
			return f->loc_tok[loc] = t + 1;
		f->ltoks[at + 1 + k] = t;
	}
	f->ltoks[at] = l->nr_frames;
	f->nr_ltoks += 1 + l->nr_frames;
	return f->loc_tok[loc] = LT_MULTI | at;
}

/* Room for n more tokens in the sequence array.  0 or -ENOMEM. */
static int seq_room(struct folder *f, size_t n)
{
	return pa_grow((void **)&f->seq, &f->cap_seq, f->nr_seq + n, sizeof(*f->seq));
}

/* Add stack s's line (count of it): comm, then frames root first, inlined functions
 * above their real function. */
static int add_line(struct folder *f, const struct cg_profile *cg, const struct cg_stack *s,
		    uint64_t count)
{
	struct line l = {.first = f->nr_seq, .count = count};
	const uint32_t *lt;
	uint32_t t, k;
	size_t i;

	if (seq_room(f, s->nr + 1))
		return -ENOMEM;
	t = s->comm == f->last_comm ? f->last_comm_tok : token(f, s->comm, "");
	if (t == UINT32_MAX)
		return -ENOMEM;
	f->last_comm = s->comm;
	f->last_comm_tok = t;
	f->seq[f->nr_seq + l.nr++] = t;
	for (i = s->nr; i-- > 0;) {
		t = f->loc_tok[s->locs[i]];
		if (!t && !(t = loc_tokens(f, cg, s->locs[i])))
			return -ENOMEM;
		if (!(t & LT_MULTI)) {
			f->seq[f->nr_seq + l.nr++] = t - 1;
			continue;
		}
		lt = &f->ltoks[t & ~LT_MULTI];
		/* its tokens, and at least one for each location still to come */
		if (seq_room(f, l.nr + lt[0] + i))
			return -ENOMEM;
		for (k = lt[0]; k-- > 0;)
			f->seq[f->nr_seq + l.nr++] = lt[1 + k];
	}
	for (k = 0; k < 3; k++)
		l.key[k] = k < l.nr ? 2 * f->seq[l.first + k] + (k + 1 == l.nr) + 1 : 0;
	if (pa_grow((void **)&f->lines, &f->cap_lines, f->nr_lines + 1, sizeof(*f->lines)))
		return -ENOMEM;
	f->lines[f->nr_lines++] = l;
	f->nr_seq += l.nr;
	return 0;
}

/* A token and what follows it in its line: ';' (end false) or the end of the text. */
static int cmp_followed(const struct token *a, bool a_end, const struct token *b, bool b_end)
{
	size_t k, n = (a->len < b->len ? a->len : b->len) + 1;
	int ca, cb;

	for (k = 0; k < n; k++) {
		ca = k < a->len ? (unsigned char)a->text[k] : a_end ? 0 : ';';
		cb = k < b->len ? (unsigned char)b->text[k] : b_end ? 0 : ';';
		if (ca != cb)
			return ca - cb;
	}
	return 0;
}

static int cmp_virtual(const void *pa, const void *pb, void *arg)
{
	const struct folder *f = arg;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	return cmp_followed(&f->toks[a / 2], a & 1, &f->toks[b / 2], b & 1);
}

/*
 * rank[]: the text order of every token followed by ';' and by the end.  No token
 * holds a ';', so neither of two such strings is a prefix of the other, and their
 * order is that of the lines they start to differ in.
 */
static int rank_tokens(struct folder *f)
{
	size_t i, n = 2 * f->nr_toks;
	uint32_t *ids = malloc((n + 1) * sizeof(*ids));

	f->rank = malloc((n + 1) * sizeof(*f->rank));
	if (!ids || !f->rank) {
		free(ids);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		ids[i] = i;
	if (n)
		qsort_r(ids, n, sizeof(*ids), cmp_virtual, f);
	for (i = 0; i < n; i++)
		f->rank[ids[i]] = i;
	free(ids);
	return 0;
}

/* The rank of line l's token i, as followed in it. */
static uint32_t vrank(const struct folder *f, const struct line *l, uint32_t i)
{
	return f->rank[2 * f->seq[l->first + i] + (i + 1 == l->nr)];
}

/* The lines' keys, from ids to ranks. */
static void rank_keys(struct folder *f)
{
	size_t i;
	uint32_t k;

	for (i = 0; i < f->nr_lines; i++)
		for (k = 0; k < 3; k++)
			if (f->lines[i].key[k])
				f->lines[i].key[k] = f->rank[f->lines[i].key[k] - 1] + 1;
}

/*
 * Text order of two lines without making their text: after the equal leading tokens,
 * the first different pair decides, each followed by what follows it in its line
 * (';' before another token, the end of the text after the last).  The ranks say
 * it, from the keys for the first three.
 */
static int cmp_lines(const void *pa, const void *pb, void *arg)
{
	const struct folder *f = arg;
	const struct line *a = pa, *b = pb;
	uint32_t n = a->nr < b->nr ? a->nr : b->nr, i, ra, rb;

	for (i = 0; i < 3; i++)
		if (a->key[i] != b->key[i])
			return a->key[i] < b->key[i] ? -1 : 1;
	for (i = 3; i < n; i++) {
		ra = vrank(f, a, i);
		rb = vrank(f, b, i);
		if (ra != rb)
			return ra < rb ? -1 : 1;
	}
	return a->nr < b->nr ? -1 : a->nr > b->nr;
}

/* The sort key of line l at depth d: its d-th rank + 1, 0 past its end. */
static uint32_t key_at(const struct folder *f, const struct line *l, uint32_t d)
{
	if (d < 3)
		return l->key[d];
	return d < l->nr ? vrank(f, l, d) + 1 : 0;
}

static void swap_line(struct line *a, struct line *b)
{
	struct line t = *a;

	*a = *b;
	*b = t;
}

/*
 * Multikey quicksort (Bentley and Sedgewick) of lines se[0..n), which all share their
 * first d ranks: partition by the rank at depth d into less, equal and greater, and
 * go one rank deeper only in the equal part.  Real stacks share long prefixes
 * (comm;_start;__libc_start_main;main;...), which a comparison sort would compare
 * again on every compare.  levels bounds the recursion into the less and greater
 * parts (the equal part is a loop): past it, bad pivots, cmp_lines finishes.
 */
static void sort_lines(struct folder *f, struct line *se, size_t n, uint32_t d, unsigned int levels)
{
	while (n > 1) {
		size_t lt = 0, i = 0, gt = n;
		uint32_t pivot, k;

		if (n < 12 || !levels) {
			qsort_r(se, n, sizeof(*se), cmp_lines, f);
			return;
		}
		swap_line(&se[0], &se[n / 2]);
		pivot = key_at(f, &se[0], d);
		/* se[0..lt) < pivot, [lt..i) == pivot, [gt..n) > pivot */
		while (i < gt) {
			k = key_at(f, &se[i], d);
			if (k < pivot)
				swap_line(&se[lt++], &se[i++]);
			else if (k > pivot)
				swap_line(&se[i], &se[--gt]);
			else
				i++;
		}
		sort_lines(f, se, lt, d, levels - 1);
		sort_lines(f, se + gt, n - gt, d, levels - 1);
		if (!pivot)
			return; /* the lines that ended here are equal */
		se += lt;
		n = gt - lt;
		d++;
	}
}

/* v in decimal at p; returns the end. */
static char *put_u64(char *p, uint64_t v)
{
	char tmp[20];
	size_t n = 0;

	do {
		tmp[n++] = '0' + v % 10;
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

static void folder_free(struct folder *f)
{
	size_t i;

	for (i = 0; i < f->nr_toks; i++)
		free(f->toks[i].text);
	free(f->toks);
	free(f->loc_tok);
	free(f->ltoks);
	free(f->rank);
	free(f->seq);
	free(f->lines);
	hidx_free(&f->tok_idx);
}

static bool same_line(const struct folder *f, const struct line *a, const struct line *b)
{
	return a->nr == b->nr &&
	       !memcmp(&f->seq[a->first], &f->seq[b->first], a->nr * sizeof(*f->seq));
}

/* The text goes out in pieces this large (a longer line grows it). */
#define OUT_CHUNK (1u << 20)

struct out {
	char *buf;
	size_t len, cap;
	folded_write_fn write;
	void *ctx;
};

/* Room for need more bytes, writing out what is there first.  0 or -errno. */
static int out_room(struct out *o, size_t need)
{
	int err;

	if (o->len + need <= o->cap)
		return 0;
	err = o->len ? o->write(o->ctx, o->buf, o->len) : 0;
	if (err)
		return err;
	o->len = 0;
	if (need > o->cap) {
		char *nb = realloc(o->buf, need);

		if (!nb)
			return -ENOMEM;
		o->buf = nb;
		o->cap = need;
	}
	return 0;
}

/* Line l with count, as "tok;tok;...;tok COUNT\n". */
static int put_line(const struct folder *f, struct out *o, const struct line *l, uint64_t count)
{
	size_t k, need = 21 + 1; /* the count, the newline */
	char *p;
	int err;

	for (k = 0; k < l->nr; k++)
		need += f->toks[f->seq[l->first + k]].len + 1;
	err = out_room(o, need);
	if (err)
		return err;
	p = o->buf + o->len;
	for (k = 0; k < l->nr; k++) {
		const struct token *t = &f->toks[f->seq[l->first + k]];

		memcpy(p, t->text, t->len);
		p += t->len;
		*p++ = k + 1 < l->nr ? ';' : ' ';
	}
	p = put_u64(p, count);
	*p++ = '\n';
	o->len = p - o->buf;
	return 0;
}

/*
 * The lines in two sorted runs: with many, the second half is sorted in a second
 * thread while this one sorts the first, and the runs are merged as they are
 * written.  run[1] is empty with few lines or no thread.
 */
#define SORT_SPLIT (64u << 10)

struct run {
	struct folder *f;
	struct line *lines;
	size_t n, next;
};

static void *sort_run(void *arg)
{
	struct run *r = arg;

	sort_lines(r->f, r->lines, r->n, 0, 2 * 64);
	return NULL;
}

static void sort_runs(struct folder *f, struct run run[2])
{
	size_t half = f->nr_lines >= SORT_SPLIT ? f->nr_lines / 2 : f->nr_lines;
	pthread_t thread;
	bool threaded;

	run[0] = (struct run){.f = f, .lines = f->lines, .n = half};
	run[1] = (struct run){.f = f, .lines = f->lines + half, .n = f->nr_lines - half};
	threaded = run[1].n && !pthread_create(&thread, NULL, sort_run, &run[1]);
	sort_run(&run[0]);
	if (threaded)
		pthread_join(thread, NULL);
	else
		sort_run(&run[1]);
}

/* The next line of the two runs in text order, NULL after the last. */
static const struct line *next_line(const struct folder *f, struct run run[2])
{
	struct run *r;

	if (run[0].next == run[0].n)
		r = &run[1];
	else if (run[1].next == run[1].n)
		r = &run[0];
	else
		r = &run[cmp_lines(&run[0].lines[run[0].next], &run[1].lines[run[1].next],
				   (void *)f) > 0];
	if (r->next == r->n)
		return NULL;
	/* Sorted, the lines' tokens are visited at random: fetch the next ones early. */
	if (r->next + 8 < r->n)
		__builtin_prefetch(&f->seq[r->lines[r->next + 8].first]);
	return &r->lines[r->next++];
}

int folded_render(const struct cg_profile *cg, uint32_t ev, folded_write_fn write, void *ctx)
{
	const struct cg_event *e = cg_event(cg, ev);
	/* Off-CPU and GPU samples differ in length: what a flame graph must weigh is the
	 * time. */
	bool by_time = e && e->name &&
		       (!strcmp(e->name, OFFCPU_EVENT) || !strcmp(e->name, GPU_TIME_EVENT));
	struct out o = {.write = write, .ctx = ctx};
	struct folder f = {0};
	struct run run[2];
	const struct line *prev = NULL, *l;
	uint64_t count = 0;
	size_t i;
	int err = -ENOMEM;

	f.loc_tok = calloc(cg_nr_locs(cg) + 1, sizeof(*f.loc_tok));
	o.buf = malloc(OUT_CHUNK);
	o.cap = OUT_CHUNK;
	if (!f.loc_tok || !o.buf)
		goto out;
	for (i = 0; i < cg_nr_stacks(cg); i++) {
		const struct cg_stack *s = cg_stack(cg, i);

		/* count 0: dropped by cg_keep_stacks */
		if (s->event == ev && s->count &&
		    add_line(&f, cg, s, by_time ? s->period : s->count))
			goto out;
	}
	if (rank_tokens(&f))
		goto out;
	rank_keys(&f);
	sort_runs(&f, run);
	/* Equal lines come one after the other now: one line with their counts summed. */
	while ((l = next_line(&f, run))) {
		if (prev && same_line(&f, prev, l)) {
			count += l->count;
			continue;
		}
		if (prev && (err = put_line(&f, &o, prev, count)))
			goto out;
		prev = l;
		count = l->count;
	}
	if (prev && (err = put_line(&f, &o, prev, count)))
		goto out;
	err = o.len ? write(ctx, o.buf, o.len) : 0;
out:
	free(o.buf);
	folder_free(&f);
	return err;
}
