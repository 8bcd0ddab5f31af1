// SPDX-License-Identifier: Apache-2.0
/*
 * Output in perf report --stdio's layout.  The call graph follows perf's "graph"
 * mode (absolute percentages, branches under the threshold hidden): a trie node
 * starts a printed node where the chains branch or end, and the glyphs and margins
 * are perf's, so the two tools' outputs can be compared line by line.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile/gpu_events.h"
#include "profile/offcpu.h"
#include "print.h"

struct graph_ctx {
	FILE *out;
	const struct hists *h;
	uint64_t total;	  /* percent base */
	uint64_t min_hit; /* branches below are hidden */
	char *mask;	  /* per depth: draw the '|' of that level */
	size_t mask_len;
	size_t lines; /* printed so far */
};

static const char *col_header(enum sort_key k)
{
	static const char *const names[SK_NR] = {"Command",	  "Pid",       "Tid",
						 "Shared Object", "Symbol",    "State",
						 "Cgroup",	  "Container", "Pod"};

	return names[k];
}

/* Column text of entry e for key k into buf. */
static const char *col_text(const struct hists *h, const struct hist_entry *e, enum sort_key k,
			    char *buf, size_t len)
{
	const struct cg_frame *f = cg_frame(h->cg, e->frame);

	switch (k) {
	case SK_COMM:
		return e->comm;
	case SK_PID:
		snprintf(buf, len, "%u", e->pid);
		return buf;
	case SK_TID:
		snprintf(buf, len, "%u", e->tid);
		return buf;
	case SK_DSO:
		return e->dso;
	case SK_SYM:
		snprintf(buf, len, "[%c] %s", f->kernel ? 'k' : '.', f->name);
		return buf;
	case SK_STATE:
	case SK_CGROUP:
	case SK_CONTAINER:
	case SK_POD:
		return e->label[k - SK_FIRST_LABEL] ? e->label[k - SK_FIRST_LABEL] : "-";
	case SK_NR:
		break;
	}
	return "";
}

static double pct(uint64_t v, uint64_t total)
{
	return total ? 100.0 * v / total : 0.0;
}

static void margin(const struct graph_ctx *g, int left)
{
	fprintf(g->out, "%*s", 12 + left, "");
}

static void graph_line(struct graph_ctx *g, size_t depth, int left)
{
	size_t i;

	margin(g, left);
	for (i = 0; i < depth; i++)
		fputs(g->mask[i] ? "|          " : "           ", g->out);
	fputc('\n', g->out);
}

/* perf --inline's spelling of a call-graph line: "name (inlined)". */
static void print_node_name(FILE *out, const struct cg_frame *f)
{
	fprintf(out, "%s%s\n", f->name, f->inlined ? " (inlined)" : "");
}

static void graph_name(struct graph_ctx *g, const struct chain_node *head,
		       const struct chain_node *n, size_t depth, int left)
{
	size_t i;

	margin(g, left);
	for (i = 0; i < depth; i++) {
		fputc(g->mask[i] ? '|' : ' ', g->out);
		if (n == head && i == depth - 1)
			fprintf(g->out, "--%.2f%%--", pct(head->cumul, g->total));
		else
			fputs("          ", g->out);
	}
	print_node_name(g->out, cg_frame(g->h->cg, n->frame));
	g->lines++;
}

/* The last trie node of the printed node starting at n: runs while nothing
 * branches off and no chain ends. */
static const struct chain_node *run_end(const struct chain_node *n)
{
	while (n->nr_all == 1 && !n->hit)
		n = n->kids[0];
	return n;
}

static int cmp_kids(const void *pa, const void *pb, void *arg)
{
	const struct chain_node *a = *(const struct chain_node *const *)pa;
	const struct chain_node *b = *(const struct chain_node *const *)pb;
	const struct cg_profile *cg = arg;

	if (a->cumul != b->cumul)
		return a->cumul < b->cumul ? 1 : -1;
	return strcmp(cg_frame(cg, a->frame)->name, cg_frame(cg, b->frame)->name);
}

/* Visible kids of n, heaviest first; caller frees.  NULL with *nr 0 when none. */
static struct chain_node **visible_kids(const struct graph_ctx *g, const struct chain_node *n,
					size_t *nr)
{
	struct chain_node **v;
	size_t i, k = 0;

	*nr = 0;
	if (!n->nr_kids)
		return NULL;
	v = malloc(n->nr_kids * sizeof(*v));
	if (!v)
		return NULL;
	for (i = 0; i < n->nr_kids; i++)
		if (n->kids[i]->cumul >= g->min_hit && n->kids[i]->cumul)
			v[k++] = n->kids[i];
	qsort_r(v, k, sizeof(*v), cmp_kids, (void *)g->h->cg);
	*nr = k;
	return v;
}

static void graph_level(struct graph_ctx *g, const struct chain_node *parent, size_t depth,
			int left)
{
	struct chain_node **kids;
	size_t nr, i;
	char old;

	if (depth + 1 >= g->mask_len)
		return;
	kids = visible_kids(g, parent, &nr);
	old = g->mask[depth - 1];
	for (i = 0; i < nr; i++) {
		const struct chain_node *n = kids[i], *end = run_end(n);

		/* The separator keeps the level's pipe; the names drop it after the last. */
		g->mask[depth - 1] = old;
		graph_line(g, depth, left);
		g->mask[depth - 1] = i + 1 < nr ? old : 0;
		for (;;) {
			graph_name(g, kids[i], n, depth, left);
			if (n == end)
				break;
			n = n->kids[0];
		}
		g->mask[depth] = 1;
		graph_level(g, end, depth + 1, left);
	}
	g->mask[depth - 1] = old;
	free(kids);
}

static void print_graph(FILE *out, const struct hists *h, const struct hist_entry *e,
			const struct print_opts *po)
{
	struct graph_ctx g = {.out = out, .h = h, .total = h->total_period};
	uint64_t parent = h->opts.children ? e->children : e->self;
	const struct chain_node *root = &e->root;
	struct chain_node **kids;
	size_t nr;
	int left = 0;

	/* perf: min hits = total * (min_percent / 100), truncated. */
	g.min_hit = (uint64_t)(h->total_period * (po->chain_min_percent / 100.0));
	g.mask_len = 4096 + 2;
	g.mask = calloc(g.mask_len, 1);
	if (!g.mask)
		return;
	kids = visible_kids(&g, root, &nr);
	if (nr == 1 && kids[0]->cumul == parent) {
		/* One root holding everything: print it bare, without a percentage. */
		const struct chain_node *n = kids[0], *end = run_end(n);
		bool first = true;

		for (;;) {
			if (!(first && po->skip_first_sym)) {
				margin(&g, left);
				if (!g.lines) {
					fputs("|\n", out);
					margin(&g, left);
					fputs("---", out);
					left += 3;
				}
				print_node_name(out, cg_frame(h->cg, n->frame));
				g.lines++;
			}
			first = false;
			if (n == end)
				break;
			n = n->kids[0];
		}
		root = end;
	}
	free(kids);
	g.mask[0] = 1;
	graph_level(&g, root, 1, left);
	/* perf ends a non-empty graph with a blank line. */
	if (g.lines)
		fputc('\n', out);
	free(g.mask);
}

void report_print(FILE *out, const struct hists *h, const struct cg_event *ev,
		  const struct print_opts *po)
{
	const struct hist_opts *o = &h->opts;
	size_t width[SK_NR] = {0}, i, k;
	char buf[1024];

	for (k = 0; k < o->nr_keys; k++)
		width[k] = strlen(col_header(o->keys[k]));
	for (i = 0; i < h->nr_entries; i++)
		for (k = 0; k < o->nr_keys; k++) {
			size_t w = strlen(col_text(h, h->entries[i], o->keys[k], buf, sizeof(buf)));

			if (w > width[k])
				width[k] = w;
		}

	if (po->header) {
		fprintf(out, "# Event: %s\n", ev->name ? ev->name : "[unknown]");
		fprintf(out, "# Samples: %" PRIu64 "  of event '%s'\n", h->total_samples,
			ev->name ? ev->name : "[unknown]");
		fprintf(out, "# Lost samples: %" PRIu64 "\n", ev->lost);
		fprintf(out, "# Event count (approx.): %" PRIu64 "\n", h->total_period);
		/* Its period is ns off the CPU: say what the count adds up to. */
		if (ev->name && !strcmp(ev->name, OFFCPU_EVENT))
			fprintf(out, "# Off-CPU time: %.3f s\n", h->total_period / 1e9);
		else if (ev->name && !strcmp(ev->name, GPU_TIME_EVENT))
			fprintf(out, "# GPU time: %.6f s\n", h->total_period / 1e9);
		fprintf(out, "#\n# %s", o->children ? "Children      Self" : "Overhead");
		for (k = 0; k < o->nr_keys; k++)
			fprintf(out, "  %-*s", (int)width[k], col_header(o->keys[k]));
		fprintf(out, "\n# %s", o->children ? "........  ........" : "........");
		for (k = 0; k < o->nr_keys; k++) {
			fputs("  ", out);
			for (i = 0; i < width[k]; i++)
				fputc('.', out);
		}
		fputs("\n#\n", out);
	}

	for (i = 0; i < h->nr_entries; i++) {
		const struct hist_entry *e = h->entries[i];
		uint64_t v = o->children ? e->children : e->self;

		if (pct(v, h->total_period) < po->percent_limit)
			continue;
		if (o->children)
			fprintf(out, "  %7.2f%%", pct(e->children, h->total_period));
		fprintf(out, "  %7.2f%%", pct(e->self, h->total_period));
		for (k = 0; k < o->nr_keys; k++) {
			const char *t = col_text(h, e, o->keys[k], buf, sizeof(buf));

			if (k + 1 < o->nr_keys)
				fprintf(out, "  %-*s", (int)width[k], t);
			else
				fprintf(out, "  %s", t);
		}
		fputc('\n', out);
		if (o->order != ORDER_NONE)
			print_graph(out, h, e, po);
	}
}
