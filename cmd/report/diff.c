// SPDX-License-Identifier: Apache-2.0
/*
 * Each capture is summed per function first (its ids are its own), then the sums are
 * joined by (name, shared object) into rows.  Self and total follow hist.c: self is
 * the sample's real function, total counts every real function on the stack once.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/util.h"
#include "diff.h"
#include "profile/gpu_events.h"
#include "profile/input.h"
#include "profile/offcpu.h"

enum { SELF, TOTAL };

struct diff_row {
	const char *name, *dso;
	bool kernel;
	uint64_t period[2][2]; /* [capture][SELF/TOTAL] */
	uint64_t count[2][2];
	double v[2]; /* the compared value in each capture */
};

struct diff_table {
	struct diff_row *rows;
	size_t nr, cap;
	struct hidx idx;
};

struct row_key {
	const char *name, *dso;
};

static bool row_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct diff_row *r = &((const struct diff_table *)ctx)->rows[id];
	const struct row_key *k = key;

	return !strcmp(r->name, k->name) && !strcmp(r->dso, k->dso);
}

/* The row of function f's name and dso, made when new; -1: out of memory. */
static int64_t row_of(struct diff_table *t, const struct cg_func *f, bool kernel)
{
	struct row_key k = {f->name ? f->name : "[unknown]",
			    f->dso_name ? f->dso_name : "[unknown]"};
	uint64_t h = hash_mix(hash_str(k.name), hash_str(k.dso));
	int64_t id = hidx_find(&t->idx, h, row_eq, t, &k);

	if (id >= 0)
		return id;
	if (pa_grow((void **)&t->rows, &t->cap, t->nr + 1, sizeof(*t->rows)) ||
	    hidx_insert(&t->idx, h, t->nr))
		return -1;
	memset(&t->rows[t->nr], 0, sizeof(t->rows[t->nr]));
	t->rows[t->nr].name = k.name;
	t->rows[t->nr].dso = k.dso;
	t->rows[t->nr].kernel = kernel;
	return t->nr++;
}

/* Add event ev's stacks of cg as capture side's sums.  0 or -ENOMEM. */
static int add_capture(struct diff_table *t, const struct cg_profile *cg, uint32_t ev, int side)
{
	size_t nf = cg_nr_funcs(cg), i, k;
	int64_t *rows = malloc((nf + 1) * sizeof(*rows)); /* function id -> row, -1: none */
	size_t *stamp = calloc(nf + 1, sizeof(*stamp));	  /* last stack counted in total */
	int err = -ENOMEM;

	if (!rows || !stamp)
		goto out;
	for (i = 0; i < nf; i++)
		rows[i] = -1;
	for (i = 0; i < cg_nr_stacks(cg); i++) {
		const struct cg_stack *s = cg_stack(cg, i);

		/* count 0: dropped by --focus or --ignore */
		if (s->event != ev || !s->count)
			continue;
		for (k = 0; k < s->nr; k++) {
			const struct cg_frame *f = cg_loc_real(cg, s->locs[k]);
			struct diff_row *r;

			if (rows[f->func] < 0) {
				rows[f->func] = row_of(t, cg_func(cg, f->func), f->kernel);
				if (rows[f->func] < 0)
					goto out;
			}
			r = &t->rows[rows[f->func]];
			if (!k) {
				r->period[side][SELF] += s->period;
				r->count[side][SELF] += s->count;
			}
			if (stamp[f->func] == i + 1)
				continue; /* recursion: once per stack */
			stamp[f->func] = i + 1;
			r->period[side][TOTAL] += s->period;
			r->count[side][TOTAL] += s->count;
		}
	}
	err = 0;
out:
	free(rows);
	free(stamp);
	return err;
}

/*
 * The event to compare: o->event in both, else base's first event with samples that
 * new has, else the first one they share.  Its index in each, or -1 with the error
 * printed.
 */
static int pick_event(const struct diff_input in[2], const char *want, int idx[2])
{
	char names[2][256];
	size_t i;
	int c, pass;

	if (want) {
		for (c = 0; c < 2; c++) {
			idx[c] = cg_find_event(in[c].cg, want);
			if (idx[c] < 0) {
				pa_err("no event '%s' in %s; events: %s", want, in[c].name,
				       pa_input_event_names(in[c].cg, names[0], sizeof(names[0])));
				return -1;
			}
		}
		return 0;
	}
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < cg_nr_events(in[0].cg); i++) {
			const struct cg_event *ev = cg_event(in[0].cg, i);

			if (!ev->name || (!pass && !ev->samples))
				continue;
			idx[1] = cg_find_event(in[1].cg, ev->name);
			if (idx[1] >= 0) {
				idx[0] = i;
				return 0;
			}
		}
	pa_err("%s and %s have no event in common: %s has %s; %s has %s", in[0].name, in[1].name,
	       in[0].name, pa_input_event_names(in[0].cg, names[0], sizeof(names[0])), in[1].name,
	       pa_input_event_names(in[1].cg, names[1], sizeof(names[1])));
	return -1;
}

/* qsort has no context: the metric rides in the rows (v), the order needs nothing else. */
static int cmp_rows(const void *pa, const void *pb)
{
	const struct diff_row *a = pa, *b = pb;
	double da = fabs(a->v[1] - a->v[0]), db = fabs(b->v[1] - b->v[0]);
	int c;

	if (da != db)
		return da < db ? 1 : -1;
	/* Equal changes (none, diffed with itself): the biggest functions first. */
	da = fmax(a->v[0], a->v[1]);
	db = fmax(b->v[0], b->v[1]);
	if (da != db)
		return da < db ? 1 : -1;
	c = strcmp(a->name, b->name);
	return c ? c : strcmp(a->dso, b->dso);
}

/* The relative change of b to n, as printed: "+12.3%", "new". */
static const char *change_text(double b, double n, char *buf, size_t len)
{
	if (b > 0)
		snprintf(buf, len, "%+.1f%%", 100.0 * (n - b) / b);
	else
		snprintf(buf, len, "%s", n > 0 ? "new" : "0.0%");
	return buf;
}

static const char *value_text(double v, bool abs, char *buf, size_t len)
{
	if (abs)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.2f%%", v);
	return buf;
}

static const char *delta_text(double d, bool abs, char *buf, size_t len)
{
	if (abs)
		snprintf(buf, len, "%+.0f", d);
	else
		snprintf(buf, len, "%+.2f%%", d);
	return buf;
}

static void print_header(FILE *out, const struct diff_input in[2], const int ev[2],
			 const struct diff_opts *o, bool by_time, int sym_w, int dso_w)
{
	const char *what = o->total ? "total (self and callees)" : "self";
	int c;

	fprintf(out, "# Event: %s\n", cg_event(in[0].cg, ev[0])->name);
	for (c = 0; c < 2; c++)
		fprintf(out, "# %s %s (%" PRIu64 " samples)\n", c ? "New: " : "Base:", in[c].name,
			cg_event(in[c].cg, ev[c])->samples);
	if (o->abs)
		fprintf(out, "# Compared: %s %s\n", what, by_time ? "time in ns" : "samples");
	else
		fprintf(out, "# Compared: %s, percent of each capture's total\n", what);
	fprintf(out, "# Sorted by: the size of the delta\n#\n");
	fprintf(out, "# %10s  %10s  %10s  %8s  %12s  %12s  %-*s  %s\n", "Baseline", "New", "Delta",
		"Change", "Base samples", "New samples", sym_w, "Symbol", "Shared Object");
	fprintf(out, "# %10s  %10s  %10s  %8s  %12s  %12s  ", "........", "........", "........",
		"......", "............", "...........");
	for (c = 0; c < sym_w; c++)
		fputc('.', out);
	fputs("  ", out);
	for (c = 0; c < dso_w; c++)
		fputc('.', out);
	fputs("\n#\n", out);
}

/* One line per regression to stderr; their number. */
static size_t report_regressions(const struct diff_table *t, const struct diff_opts *o,
				 bool by_time)
{
	int m = o->total ? TOTAL : SELF;
	char b[32], n[32], ch[32];
	size_t i, found = 0;

	for (i = 0; i < t->nr; i++) {
		const struct diff_row *r = &t->rows[i];
		bool grew;

		if (r->count[0][m] < o->min_samples && r->count[1][m] < o->min_samples)
			continue;
		if (r->v[0] > 0)
			grew = 100.0 * (r->v[1] - r->v[0]) / r->v[0] > o->fail_above;
		else
			grew = r->v[1] > 0;
		if (!grew)
			continue;
		found++;
		fprintf(stderr, "%s: regression: %s (%s): %s %s %s -> %s (%s, limit +%g%%)\n",
			pa_progname(), r->name, r->dso, o->total ? "total" : "self",
			o->abs ? (by_time ? "ns" : "samples") : "share",
			value_text(r->v[0], o->abs, b, sizeof(b)),
			value_text(r->v[1], o->abs, n, sizeof(n)),
			change_text(r->v[0], r->v[1], ch, sizeof(ch)), o->fail_above);
	}
	return found;
}

int report_diff(FILE *out, const struct diff_input in[2], const struct diff_opts *o)
{
	struct diff_table t = {0};
	int ev[2], c, m = o->total ? TOTAL : SELF, sym_w = 6, dso_w = 13, ret = -ENOMEM;
	const char *name;
	size_t i, shown;
	bool by_time;

	if (pick_event(in, o->event, ev))
		return -EINVAL;
	name = cg_event(in[0].cg, ev[0])->name;
	/* Off-CPU and GPU samples differ in length: their absolute value is the time. */
	by_time = !strcmp(name, OFFCPU_EVENT) || !strcmp(name, GPU_TIME_EVENT);
	for (c = 0; c < 2; c++)
		if (add_capture(&t, in[c].cg, ev[c], c))
			goto out;
	for (i = 0; i < t.nr; i++) {
		struct diff_row *r = &t.rows[i];

		for (c = 0; c < 2; c++) {
			uint64_t total = cg_event(in[c].cg, ev[c])->period;

			if (o->abs)
				r->v[c] = by_time ? r->period[c][m] : r->count[c][m];
			else
				r->v[c] = total ? 100.0 * r->period[c][m] / total : 0.0;
		}
	}
	if (t.nr)
		qsort(t.rows, t.nr, sizeof(*t.rows), cmp_rows);
	/* Rows without the metric in either capture (self 0: callers only) say nothing. */
	for (i = shown = 0; i < t.nr && (!o->rows || shown < o->rows); i++) {
		int w = strlen(t.rows[i].name) + 4;

		if (!t.rows[i].count[0][m] && !t.rows[i].count[1][m])
			continue;
		shown++;
		sym_w = w > sym_w ? w : sym_w;
	}
	if (o->header)
		print_header(out, in, ev, o, by_time, sym_w, dso_w);
	for (i = shown = 0; i < t.nr && (!o->rows || shown < o->rows); i++) {
		const struct diff_row *r = &t.rows[i];
		char b[32], n[32], d[32], ch[32], sym[1024];

		if (!r->count[0][m] && !r->count[1][m])
			continue;
		shown++;
		snprintf(sym, sizeof(sym), "[%c] %s", r->kernel ? 'k' : '.', r->name);
		fprintf(out, "  %10s  %10s  %10s  %8s  %12" PRIu64 "  %12" PRIu64 "  %-*s  %s\n",
			value_text(r->v[0], o->abs, b, sizeof(b)),
			value_text(r->v[1], o->abs, n, sizeof(n)),
			delta_text(r->v[1] - r->v[0], o->abs, d, sizeof(d)),
			change_text(r->v[0], r->v[1], ch, sizeof(ch)), r->count[0][m],
			r->count[1][m], sym_w, sym, r->dso);
	}
	ret = o->fail_above >= 0 && report_regressions(&t, o, by_time) ? DIFF_EXIT_REGRESSION : 0;
out:
	if (ret == -ENOMEM)
		pa_err("out of memory comparing %s and %s", in[0].name, in[1].name);
	free(t.rows);
	hidx_free(&t.idx);
	return ret;
}
