// SPDX-License-Identifier: Apache-2.0
/*
 * The flame graph's two forms.  HTML: the page in flamegraph.html (built in as
 * flamegraph_html) with the tree as JSON where its PA-DATA comment is; the page
 * draws it on a canvas, only what is at least a pixel wide, so a capture's size
 * bounds the file (narrow frames are left out here) and not the drawing time.  SVG:
 * drawn here, one <rect> and <title> per frame, as flamegraph.pl's are, for where a
 * picture is wanted and not an application.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "flamegraph.h"

extern const char flamegraph_html[];
extern const size_t flamegraph_html_len;

#define DATA_MARK "<!--PA-DATA-->"

/* Node ids on a walk of the visible tree (preorder). */
struct walk {
	uint32_t *stack;
	size_t nr, cap;
	uint32_t *kids;
	size_t cap_kids;
};

/* Push n's visible children (in reverse, so they pop in order); their number, or -1
 * out of memory. */
static int64_t push_kids(struct walk *w, const struct flame_tree *t, uint32_t n, double min_frac)
{
	size_t k = 0;
	uint32_t c;

	for (c = t->nodes[n].child; c; c = t->nodes[c].next) {
		if (!flame_visible(t, c, min_frac))
			continue;
		if (pa_grow((void **)&w->kids, &w->cap_kids, k + 1, sizeof(*w->kids)))
			return -1;
		w->kids[k++] = c;
	}
	if (pa_grow((void **)&w->stack, &w->cap, w->nr + k, sizeof(*w->stack)))
		return -1;
	for (c = k; c-- > 0;)
		w->stack[w->nr++] = w->kids[c];
	return k;
}

static void walk_free(struct walk *w)
{
	free(w->stack);
	free(w->kids);
}

static void emit_meta(struct emit *e, const struct flame_tree *t, const struct flame_opts *o)
{
	size_t i;

	emit_str(e, "{\"title\":");
	emit_json_str(e, o->title ? o->title : "Flame graph");
	emit_str(e, ",\"cmd\":");
	emit_json_str(e, o->cmd);
	emit_str(e, ",\"host\":");
	emit_json_str(e, o->host);
	emit_str(e, ",\"base_name\":");
	emit_json_str(e, o->base_name);
	emit_printf(e, ",\"duration_ns\":%llu,\"diff\":%s,\"abs\":%s,\"inverted\":%s,\"kinds\":[",
		    (unsigned long long)o->duration_ns, t->diff ? "true" : "false",
		    o->abs ? "true" : "false", o->inverted ? "true" : "false");
	for (i = 0; i < FK_NR; i++) {
		emit_str(e, i ? ",\"" : "\"");
		emit_str(e, flame_kind_names[i]);
		emit_str(e, "\"");
	}
	emit_str(e, "],\"events\":[");
	for (i = 0; i < t->nr_events; i++) {
		emit_str(e, i ? ",{\"name\":" : "{\"name\":");
		emit_json_str(e, t->events[i].name);
		emit_printf(e, ",\"time\":%s,\"total\":%llu,\"base\":%llu}",
			    t->events[i].time ? "true" : "false",
			    (unsigned long long)t->events[i].total,
			    (unsigned long long)t->events[i].base_total);
	}
	emit_str(e, "]");
}

/*
 * "nodes": per visible node in preorder, its name, kind, number of visible children
 * and its weights; then "names", only those the nodes use, renumbered in order of
 * first use.
 */
static int emit_tree(struct emit *e, const struct flame_tree *t, double min_frac)
{
	struct walk w = {0};
	uint32_t *name_map = calloc(t->nr_names + 1, sizeof(*name_map)), *used = NULL;
	size_t nr_used = 0, cap_used = 0, c, first = 1;
	int64_t k;
	int err = -ENOMEM;

	if (!name_map || pa_grow((void **)&w.stack, &w.cap, 1, sizeof(*w.stack)))
		goto out;
	emit_str(e, ",\"nodes\":[");
	w.stack[w.nr++] = 0;
	while (w.nr && !e->err) {
		uint32_t n = w.stack[--w.nr];
		const struct flame_node *fn = &t->nodes[n];

		if (!name_map[fn->name]) {
			if (pa_grow((void **)&used, &cap_used, nr_used + 1, sizeof(*used)))
				goto out;
			used[nr_used++] = fn->name;
			name_map[fn->name] = nr_used;
		}
		k = push_kids(&w, t, n, min_frac);
		if (k < 0)
			goto out;
		if (!first)
			emit_mem(e, ",", 1);
		first = 0;
		emit_u64(e, name_map[fn->name] - 1);
		emit_mem(e, ",", 1);
		emit_u64(e, fn->kind);
		emit_mem(e, ",", 1);
		emit_u64(e, k);
		for (c = 0; c < t->cols; c++) {
			emit_mem(e, ",", 1);
			emit_u64(e, t->val[n * t->cols + c]);
		}
	}
	emit_str(e, "],\"names\":[");
	for (c = 0; c < nr_used; c++) {
		if (c)
			emit_mem(e, ",", 1);
		emit_json_str(e, t->names[used[c]]);
	}
	emit_str(e, "]}");
	err = 0;
out:
	walk_free(&w);
	free(name_map);
	free(used);
	return err;
}

static int render_html(struct emit *e, const struct flame_tree *t, const struct flame_opts *o)
{
	const char *mark =
		memmem(flamegraph_html, flamegraph_html_len, DATA_MARK, strlen(DATA_MARK));
	size_t head = mark - flamegraph_html;
	int err;

	emit_mem(e, flamegraph_html, head);
	emit_str(e, "<script id=\"pa-data\" type=\"application/json\">");
	emit_meta(e, t, o);
	err = emit_tree(e, t, o->min_frac);
	emit_str(e, "</script>");
	head += strlen(DATA_MARK);
	emit_mem(e, flamegraph_html + head, flamegraph_html_len - head);
	return err;
}

/* ---- SVG ---- */

#define SVG_W	   1200.0
#define SVG_ROW	   16
#define SVG_TOP	   48
#define SVG_CHAR_W 7.0 /* DejaVu Sans Mono at 12 px */

/* The weight the SVG draws: every time event summed when there are several (the
 * page's first view), else the first event's. */
struct svg_view {
	const struct flame_tree *t;
	bool merged;
	double max_delta;
};

static double view_val(const struct svg_view *v, uint32_t n, bool base)
{
	const struct flame_tree *t = v->t;
	size_t off = n * t->cols + (base ? t->nr_events : 0), e;
	double s = 0;

	if (!v->merged)
		return t->val[off];
	for (e = 0; e < t->nr_events; e++)
		if (t->events[e].time)
			s += t->val[off + e];
	return s;
}

static double diff_delta(const struct svg_view *v, uint32_t n, bool abs)
{
	double val = view_val(v, n, false), base = view_val(v, n, true);
	double root = view_val(v, 0, false), broot = view_val(v, 0, true);

	if (abs)
		return (val - base) / fmax(fmax(root, broot), 1);
	return (root > 0 ? val / root : 0) - (broot > 0 ? base / broot : 0);
}

/* FNV-1a of s into [0, 1): the page's hue jitter, so both forms colour alike. */
static double name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h / 4294967296.0;
}

static void svg_fill(struct emit *e, const struct svg_view *v, uint32_t n, const char *name,
		     uint8_t kind, bool abs)
{
	/* hue, saturation, lightness per kind: the page's KIND_COLOR */
	static const int hsl[FK_NR][3] = {
		[FK_ROOT] = {0, 0, 86},		[FK_PROCESS] = {0, 0, 78},
		[FK_KERNEL] = {28, 45, 62},	[FK_NATIVE] = {12, 80, 62},
		[FK_INLINED] = {185, 55, 62},	[FK_JIT] = {120, 50, 55},
		[FK_PYTHON] = {215, 65, 70},	[FK_GPU_LAUNCH] = {280, 55, 70},
		[FK_GPU_KERNEL] = {82, 65, 48}, [FK_OFFCPU] = {245, 45, 78},
		[FK_UNKNOWN] = {0, 0, 66},
	};
	double r = name_hash(name), d, k;
	int c;

	if (v->t->diff) {
		d = diff_delta(v, n, abs);
		k = fmin(1, fabs(d) / v->max_delta);
		c = (int)lround(255 - 200 * k);
		if (d > 0)
			emit_printf(e, "rgb(255,%d,%d)", c, c);
		else if (d < 0)
			emit_printf(e, "rgb(%d,%d,255)", c, c);
		else
			emit_str(e, "rgb(250,250,250)");
		return;
	}
	emit_printf(e, "hsl(%.1f,%d%%,%.1f%%)",
		    kind == FK_NATIVE ? hsl[kind][0] + r * 36 : hsl[kind][0] + (r - 0.5) * 10,
		    hsl[kind][1], hsl[kind][2] + (r - 0.5) * 10);
}

struct svg_item {
	uint32_t n, depth;
	double x;
};

static void svg_value(struct emit *e, const struct flame_tree *t, bool merged, double v)
{
	if (merged || t->events[0].time)
		emit_printf(e, "%.3f ms", v / 1e6);
	else
		emit_printf(e, "%.0f samples", v);
}

static int render_svg(struct emit *e, const struct flame_tree *t, const struct flame_opts *o)
{
	struct svg_view v = {.t = t, .max_delta = 1e-9};
	struct svg_item *st = NULL;
	size_t nr = 0, cap = 0, e_i, nr_time = 0;
	double root, scale, min_px = 0.1;
	uint32_t max_depth = 0, pass, c;
	const char *sep;
	int err = -ENOMEM;

	for (e_i = 0; e_i < t->nr_events; e_i++)
		nr_time += t->events[e_i].time;
	v.merged = nr_time > 1;
	root = view_val(&v, 0, false);
	scale = root > 0 ? SVG_W / root : 0;
	/* Pass 0 finds the depth and the largest change, pass 1 draws. */
	for (pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			double h = SVG_TOP + (max_depth + 1) * SVG_ROW + 8;

			emit_printf(
				e,
				"<?xml version=\"1.0\" standalone=\"no\"?>\n"
				"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" "
				"width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
				"font-family=\"DejaVu Sans Mono, monospace\" font-size=\"12\">\n"
				"<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n"
				"<text x=\"%.0f\" y=\"20\" font-size=\"16\" "
				"text-anchor=\"middle\">",
				SVG_W + 20, h, SVG_W + 20, h, (SVG_W + 20) / 2);
			emit_xml_str(e, o->title ? o->title : "Flame graph");
			emit_str(e, "</text>\n<text x=\"10\" y=\"38\" fill=\"#555\">");
			if (o->cmd) {
				emit_str(e, "command: ");
				emit_xml_str(e, o->cmd);
				emit_str(e, "  ");
			}
			if (o->host) {
				emit_str(e, "host: ");
				emit_xml_str(e, o->host);
				emit_str(e, "  ");
			}
			emit_str(e, "event: ");
			for (e_i = 0, sep = ""; e_i < t->nr_events; e_i++) {
				if (v.merged && !t->events[e_i].time)
					continue;
				emit_str(e, sep);
				emit_xml_str(e, t->events[e_i].name);
				if (!v.merged)
					break;
				sep = " + ";
			}
			emit_str(e, "</text>\n");
		}
		nr = 0;
		if (pa_grow((void **)&st, &cap, 1, sizeof(*st)))
			goto out;
		st[nr++] = (struct svg_item){0, 0, 10};
		while (nr && !e->err) {
			struct svg_item it = st[--nr];
			const struct flame_node *fn = &t->nodes[it.n];
			const char *name = t->names[fn->name];
			double w = view_val(&v, it.n, false) * scale, x = it.x, y;
			size_t max_chars;

			if (pass == 0) {
				if (it.depth > max_depth)
					max_depth = it.depth;
				if (t->diff)
					v.max_delta = fmax(v.max_delta,
							   fabs(diff_delta(&v, it.n, o->abs)));
			} else {
				y = o->inverted ? SVG_TOP + it.depth * SVG_ROW
						: SVG_TOP + (max_depth - it.depth) * SVG_ROW;
				emit_str(e, "<g><title>");
				emit_xml_str(e, name);
				emit_str(e, " (");
				svg_value(e, t, v.merged, view_val(&v, it.n, false));
				emit_printf(e, ", %.2f%%",
					    root > 0 ? 100 * view_val(&v, it.n, false) / root : 0);
				if (t->diff)
					emit_printf(e, ", change %+.2f points",
						    100 * diff_delta(&v, it.n, o->abs));
				emit_printf(e,
					    ")</title><rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" "
					    "height=\"%d\" fill=\"",
					    x, y, w, SVG_ROW - 1);
				svg_fill(e, &v, it.n, name, fn->kind, o->abs);
				emit_str(e, "\"/>");
				max_chars = w > 6 ? (size_t)((w - 6) / SVG_CHAR_W) : 0;
				if (max_chars >= 3) {
					char buf[512];
					size_t len = strlen(name);

					if (len > max_chars) {
						len = max_chars - 2 < sizeof(buf) - 3
							      ? max_chars - 2
							      : sizeof(buf) - 3;
						/* not inside a UTF-8 sequence */
						while (len &&
						       ((unsigned char)name[len] & 0xc0) == 0x80)
							len--;
						memcpy(buf, name, len);
						strcpy(buf + len, "..");
					} else {
						snprintf(buf, sizeof(buf), "%s", name);
					}
					emit_printf(e, "<text x=\"%.2f\" y=\"%.1f\">", x + 3,
						    y + SVG_ROW - 4);
					emit_xml_str(e, buf);
					emit_str(e, "</text>");
				}
				emit_str(e, "</g>\n");
			}
			/* the children, each at its x (the order drawn does not matter) */
			{
				double cx = x;

				for (c = fn->child; c; c = t->nodes[c].next) {
					double cw = view_val(&v, c, false) * scale;

					if (cw >= min_px && flame_visible(t, c, o->min_frac)) {
						if (pa_grow((void **)&st, &cap, nr + 1,
							    sizeof(*st)))
							goto out;
						st[nr++] = (struct svg_item){c, it.depth + 1, cx};
					}
					cx += cw;
				}
			}
		}
	}
	emit_str(e, "</svg>\n");
	err = 0;
out:
	free(st);
	return err;
}

int flamegraph_render(const struct flame_tree *t, const struct flame_opts *o, folded_write_fn write,
		      void *ctx)
{
	struct emit e;
	int err;

	if (!t->nr_nodes || !t->nr_events)
		return -ENODATA; /* nothing to draw: the caller says so first */
	emit_init(&e, write, ctx);
	err = o->svg ? render_svg(&e, t, o) : render_html(&e, t, o);
	if (!err)
		return emit_finish(&e);
	emit_finish(&e);
	return err;
}
