// SPDX-License-Identifier: Apache-2.0
/*
 * Folded stacks, the input of flamegraph.pl and speedscope: like stackcollapse-perf
 * --all --inline, so existing flame-graph tooling reads it unchanged.
 *
 * A line is "comm;root;...;leaf COUNT".  Each part of it (a comm, or a frame's name
 * with its "_[k]"/"_[i]" mark) is made once and interned, so a line is a sequence of
 * token pointers: stacks that print the same text (two addresses of one function,
 * two functions of one name) have equal sequences and merge by hashing, and lines
 * sort by comparing tokens, not by rendering and comparing text.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "convert.h"
#include "profile/offcpu.h"

struct token {
	char *text;
	size_t len;
};

/* One distinct line: tokens [first, first + nr) of the token sequence array. */
struct line {
	size_t first;
	uint32_t nr;
	uint64_t count;
};

struct folder {
	struct hidx tok_idx;
	struct token *toks;
	size_t nr_toks, cap_toks;
	uint32_t *frame_tok;	/* frame id -> token + 1 (0: not made yet) */
	const char *last_comm;	/* comms are interned by the callgraph: equal ones, */
	uint32_t last_comm_tok; /* equal pointers; the last one's token */
	uint32_t *seq;		/* every line's token ids, back to back */
	size_t nr_seq, cap_seq;
	struct hidx line_idx;
	struct line *lines;
	size_t nr_lines, cap_lines;
};

static bool tok_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct folder *f = ctx;

	return !strcmp(f->toks[id].text, key);
}

/* The token of text (';' separates frames and ' ' the count: names cannot forge
 * either), or UINT32_MAX when out of memory. */
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
	for (i = 0; i < n; i++)
		if (t[i] == ' ' || t[i] == '\n')
			t[i] = '_';
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

static uint32_t frame_token(struct folder *f, const struct cg_profile *cg, uint32_t frame)
{
	const struct cg_frame *fr = cg_frame(cg, frame);
	uint32_t t;

	if (f->frame_tok[frame])
		return f->frame_tok[frame] - 1;
	/* Inlined functions as stackcollapse-perf --inline marks them (flamegraph.pl
	 * colours "_[i]" frames as inlined). */
	t = token(f, fr->name, fr->kernel ? "_[k]" : fr->inlined ? "_[i]" : "");
	if (t != UINT32_MAX)
		f->frame_tok[frame] = t + 1;
	return t;
}

static bool line_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct folder *f = ctx;
	const struct line *a = &f->lines[id], *b = key;

	return a->nr == b->nr &&
	       !memcmp(&f->seq[a->first], &f->seq[b->first], a->nr * sizeof(*f->seq));
}

/* Add stack s's line (count more of it): comm, then frames root first, inlined
 * functions above their real function. */
static int add_line(struct folder *f, const struct cg_profile *cg, const struct cg_stack *s,
		    uint64_t count)
{
	struct line key = {.first = f->nr_seq, .count = count};
	uint32_t t;
	uint64_t h = 0;
	size_t i, need = 1;
	int64_t id;

	for (i = 0; i < s->nr; i++)
		need += cg_loc(cg, s->locs[i])->nr_frames;
	if (pa_grow((void **)&f->seq, &f->cap_seq, f->nr_seq + need, sizeof(*f->seq)))
		return -ENOMEM;
	t = s->comm == f->last_comm ? f->last_comm_tok : token(f, s->comm, "");
	if (t == UINT32_MAX)
		return -ENOMEM;
	f->last_comm = s->comm;
	f->last_comm_tok = t;
	f->seq[f->nr_seq + key.nr++] = t;
	for (i = s->nr; i-- > 0;) {
		const struct cg_loc *l = cg_loc(cg, s->locs[i]);
		uint32_t k;

		for (k = l->nr_frames; k-- > 0;) {
			t = frame_token(f, cg, l->frame + k);
			if (t == UINT32_MAX)
				return -ENOMEM;
			f->seq[f->nr_seq + key.nr++] = t;
		}
	}
	for (i = 0; i < key.nr; i++)
		h = hash_mix(h, f->seq[key.first + i]);
	id = hidx_find(&f->line_idx, h, line_eq, f, &key);
	if (id >= 0) {
		f->lines[id].count += count;
		return 0; /* its tokens are dropped: the next line overwrites them */
	}
	if (pa_grow((void **)&f->lines, &f->cap_lines, f->nr_lines + 1, sizeof(*f->lines)) ||
	    hidx_insert(&f->line_idx, h, f->nr_lines))
		return -ENOMEM;
	f->lines[f->nr_lines++] = key;
	f->nr_seq += key.nr;
	return 0;
}

/*
 * Text order of two lines without making their text: after the equal leading tokens,
 * the first different pair decides, each followed by what follows it in its line
 * (';' before another token, the end of the text after the last).
 */
static int cmp_lines(const void *pa, const void *pb, void *arg)
{
	const struct folder *f = arg;
	const struct line *a = pa, *b = pb;
	const uint32_t *sa = &f->seq[a->first], *sb = &f->seq[b->first];
	uint32_t n = a->nr < b->nr ? a->nr : b->nr, i;
	const struct token *ta, *tb;
	size_t k;
	int ca, cb;

	for (i = 0; i < n && sa[i] == sb[i]; i++)
		;
	if (i == n)
		return a->nr < b->nr ? -1 : a->nr > b->nr;
	ta = &f->toks[sa[i]];
	tb = &f->toks[sb[i]];
	for (k = 0; k < ta->len && k < tb->len && ta->text[k] == tb->text[k]; k++)
		;
	ca = k < ta->len ? (unsigned char)ta->text[k] : i + 1 < a->nr ? ';' : 0;
	cb = k < tb->len ? (unsigned char)tb->text[k] : i + 1 < b->nr ? ';' : 0;
	return ca - cb;
}

static void folder_free(struct folder *f)
{
	size_t i;

	for (i = 0; i < f->nr_toks; i++)
		free(f->toks[i].text);
	free(f->toks);
	free(f->frame_tok);
	free(f->seq);
	free(f->lines);
	hidx_free(&f->tok_idx);
	hidx_free(&f->line_idx);
}

int folded_render(const struct cg_profile *cg, uint32_t ev, char **out, size_t *len)
{
	const struct cg_event *e = cg_event(cg, ev);
	/* Off-CPU samples differ in length: what a flame graph must weigh is the time. */
	bool by_time = e && e->name && !strcmp(e->name, OFFCPU_EVENT);
	struct folder f = {0};
	FILE *o = NULL;
	size_t i, k;
	int err = -ENOMEM;

	*out = NULL;
	*len = 0;
	f.frame_tok = calloc(cg_nr_frames(cg) + 1, sizeof(*f.frame_tok));
	if (!f.frame_tok)
		goto out;
	for (i = 0; i < cg_nr_stacks(cg); i++) {
		const struct cg_stack *s = cg_stack(cg, i);

		if (s->event == ev && add_line(&f, cg, s, by_time ? s->period : s->count))
			goto out;
	}
	if (f.nr_lines) /* no lines, no array: qsort's base must not be NULL */
		qsort_r(f.lines, f.nr_lines, sizeof(*f.lines), cmp_lines, &f);
	o = open_memstream(out, len);
	if (!o)
		goto out;
	for (i = 0; i < f.nr_lines; i++) {
		const struct line *l = &f.lines[i];

		for (k = 0; k < l->nr; k++) {
			const struct token *t = &f.toks[f.seq[l->first + k]];

			if (k)
				fputc(';', o);
			fwrite(t->text, 1, t->len, o);
		}
		fprintf(o, " %" PRIu64 "\n", l->count);
	}
	if (fclose(o) == 0)
		err = 0;
	o = NULL;
out:
	folder_free(&f);
	if (err) {
		free(*out);
		*out = NULL;
		*len = 0;
	}
	return err;
}
