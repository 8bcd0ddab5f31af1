// SPDX-License-Identifier: Apache-2.0
/*
 * pa-convert's flame graph: the tree (weights summed along paths, children in name
 * order, kinds, the base column of a diff, narrow frames left out) and the escaping
 * of names into JSON and XML (quotes, control bytes, "</script>", bad UTF-8).
 */
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "flametree.h"
#include "unit.h"

struct text {
	char buf[4096];
	size_t len;
};

static int collect(void *ctx, const char *buf, size_t len)
{
	struct text *t = ctx;

	if (t->len + len >= sizeof(t->buf))
		return -1;
	memcpy(t->buf + t->len, buf, len);
	t->len += len;
	t->buf[t->len] = 0;
	return 0;
}

static const char *json(const char *s)
{
	static struct text t;
	struct emit e;

	t.len = 0;
	emit_init(&e, collect, &t);
	emit_json_str(&e, s);
	CHECK(!emit_finish(&e));
	return t.buf;
}

static const char *xml(const char *s)
{
	static struct text t;
	struct emit e;

	t.len = 0;
	emit_init(&e, collect, &t);
	emit_xml_str(&e, s);
	CHECK(!emit_finish(&e));
	return t.buf;
}

static void test_json_escapes(void)
{
	CHECK_STR(json("a\"b\\c"), "\"a\\\"b\\\\c\"");
	CHECK_STR(json("x\ny\t\x01"), "\"x\\ny\\t\\u0001\"");
	/* a name cannot end the page's <script> */
	CHECK_STR(json("</script>"), "\"\\u003c/script\\u003e\"");
	CHECK_STR(json("caf\xc3\xa9 \xe2\x82\xac"), "\"caf\xc3\xa9 \xe2\x82\xac\"");
	/* bad UTF-8: a lone continuation, a truncated sequence, an overlong '/', a surrogate */
	CHECK_STR(json("a\x80z"), "\"a\xef\xbf\xbdz\"");
	CHECK_STR(json("a\xe2\x82"), "\"a\xef\xbf\xbd\xef\xbf\xbd\"");
	CHECK_STR(json("\xc0\xaf"), "\"\xef\xbf\xbd\xef\xbf\xbd\"");
	CHECK_STR(json("\xed\xa0\x80"), "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
	CHECK_STR(json(NULL), "null");
}

static void test_xml_escapes(void)
{
	CHECK_STR(xml("a<b>&'\"c"), "a&lt;b&gt;&amp;&#39;&quot;c");
	CHECK_STR(xml("x\x01y"), "x\xef\xbf\xbdy");
	CHECK_STR(xml("\xff"), "\xef\xbf\xbd");
}

/* Sample leaf-first names into cg under event ev, with weight period. */
static void add(struct cg_profile *cg, const char *ev, const char *comm, const char *const *names,
		size_t nr, uint64_t period)
{
	struct frame f[8];
	size_t k;

	memset(f, 0, sizeof(f));
	for (k = 0; k < nr; k++) {
		f[k].sym = names[k];
		f[k].dso_name = "prog";
		f[k].kind = PA_FRAME_NATIVE;
		f[k].ip = 0x1000 + 0x100 * (names[k][0] + 256 * k);
		f[k].kernel = !strncmp(names[k], "k_", 2);
		if (f[k].kernel)
			f[k].dso_name = "[kernel.kallsyms]";
	}
	CHECK(!cg_add_sample(cg, 0, ev, 1, 1, comm, f, nr, period, 0));
}

/* The node at path from the root ("all"), or -1. */
static int64_t find(const struct flame_tree *t, const char *const *path, size_t nr)
{
	uint32_t n = 0, c;
	size_t k;

	for (k = 0; k < nr; k++) {
		for (c = t->nodes[n].child; c; c = t->nodes[c].next)
			if (!strcmp(t->names[t->nodes[c].name], path[k]))
				break;
		if (!c)
			return -1;
		n = c;
	}
	return n;
}

static void test_tree(void)
{
	struct cg_profile *cg = cg_new();
	struct flame_tree t;
	const char *s1[] = {"leaf_b", "mid", "main"}, *s2[] = {"leaf_a", "mid", "main"};
	const char *s3[] = {"k_irq", "leaf_a", "mid", "main"};
	const char *p_a[] = {"prog", "main", "mid", "leaf_a"},
		   *p_k[] = {"prog", "main", "mid", "leaf_a", "k_irq"};
	int64_t n;
	uint32_t c;

	add(cg, "cpu-clock", "prog", s1, 3, 1000000);
	add(cg, "cpu-clock", "prog", s2, 3, 1000000);
	add(cg, "cpu-clock", "prog", s2, 3, 1000000);
	add(cg, "cpu-clock", "prog", s3, 4, 1000000);
	CHECK(!flame_tree_build(&t, cg, NULL));
	CHECK_EQ_U64(t.nr_events, 1);
	CHECK(t.events[0].time); /* cpu-clock: nanoseconds */
	CHECK_EQ_U64(t.events[0].total, 4000000);
	n = find(&t, p_a, 4);
	CHECK(n > 0);
	if (n > 0) {
		CHECK_EQ_U64(t.val[n * t.cols], 3000000); /* itself twice, and under k_irq */
		CHECK_EQ_U64(t.nodes[n].kind, FK_NATIVE);
	}
	n = find(&t, p_k, 5);
	CHECK(n > 0 && t.nodes[n].kind == FK_KERNEL);
	CHECK(find(&t, p_a, 1) > 0 && t.nodes[find(&t, p_a, 1)].kind == FK_PROCESS);
	/* children in name order: leaf_a before leaf_b */
	n = find(&t, p_a, 3);
	c = n > 0 ? t.nodes[n].child : 0;
	CHECK(c && !strcmp(t.names[t.nodes[c].name], "leaf_a"));
	CHECK(c && t.nodes[c].next && !strcmp(t.names[t.nodes[t.nodes[c].next].name], "leaf_b"));
	/* leaf_b is a quarter: visible above a fifth, not above a third */
	n = find(&t, (const char *[]){"prog", "main", "mid", "leaf_b"}, 4);
	CHECK(n > 0 && flame_visible(&t, n, 0.2) && !flame_visible(&t, n, 0.3));
	flame_tree_free(&t);
	cg_free(cg);
}

static void test_diff(void)
{
	struct cg_profile *base = cg_new(), *cg = cg_new();
	struct flame_tree t;
	const char *a[] = {"work_a", "main"}, *b[] = {"work_b", "main"}, *gone[] = {"old", "main"};
	int64_t n;

	add(base, "cpu-clock", "p", a, 2, 10);
	add(base, "cpu-clock", "p", b, 2, 10);
	add(base, "cpu-clock", "p", gone, 2, 10);
	add(cg, "cpu-clock", "p", a, 2, 10);
	add(cg, "cpu-clock", "p", b, 2, 30);
	CHECK(!flame_tree_build(&t, cg, base));
	CHECK(t.diff && t.cols == 2);
	CHECK_EQ_U64(t.events[0].total, 40);
	CHECK_EQ_U64(t.events[0].base_total, 30);
	n = find(&t, (const char *[]){"p", "main", "work_b"}, 3);
	CHECK(n > 0);
	if (n > 0) {
		CHECK_EQ_U64(t.val[n * 2], 30);
		CHECK_EQ_U64(t.val[n * 2 + 1], 10);
	}
	/* only in base: a node with no new weight, still visible for its base weight */
	n = find(&t, (const char *[]){"p", "main", "old"}, 3);
	CHECK(n > 0 && t.val[n * 2] == 0 && t.val[n * 2 + 1] == 10 && flame_visible(&t, n, 0.1));
	flame_tree_free(&t);
	cg_free(cg);
	cg_free(base);
}

int main(void)
{
	RUN(test_json_escapes);
	RUN(test_xml_escapes);
	RUN(test_tree);
	RUN(test_diff);
	return unit_done();
}
