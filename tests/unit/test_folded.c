// SPDX-License-Identifier: Apache-2.0
/*
 * pa-convert --folded: the lines folded_render writes are the ones a plain
 * implementation makes (each stack's text; equal texts merged, counts summed; sorted
 * by strcmp), for random stacks over names chosen to trip a token-wise sort: names
 * that are prefixes of others, that sort around ';', that hold spaces, and names
 * holding ';' themselves (written ':', as stackcollapse-perf does).
 */
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "unit.h"

#define NR_STACKS 3000
#define NR_MANY	  100000
#define ONE_RUN	  65536 /* folded.c sorts up to this many lines in one run */
#define MAX_DEPTH 7

static const char *const plain_names[] = {
	"a", "ab", "a_b", "a b", "b", "B", "_", "a:", "a<int>", "a9", "zz", "a_[k]", "",
};
static const char *const semi_names[] = {"a", "a;b", "ab", "a;", ";", "b", "a:b", "a:"};
static const char *const comms[] = {"p", "p2", "q", "p ", "p;"};

/* What folded_render wrote, back to back. */
struct text {
	char *buf;
	size_t len;
};

static int collect(void *ctx, const char *buf, size_t len)
{
	struct text *t = ctx;
	char *nb = realloc(t->buf, t->len + len + 1);

	if (!nb)
		return -1;
	memcpy(nb + t->len, buf, len);
	t->buf = nb;
	t->len += len;
	t->buf[t->len] = 0;
	return 0;
}

/* One stack's text and count, as the reference makes it. */
struct ref_line {
	char text[512];
	uint64_t count;
};

static int cmp_ref(const void *a, const void *b)
{
	return strcmp(((const struct ref_line *)a)->text, ((const struct ref_line *)b)->text);
}

/* name with its mark, ' ' as '_' and ';' as ':', after ';' when not first. */
static void append(char *dst, const char *name, const char *mark, bool first)
{
	char *p = dst + strlen(dst);

	if (!first)
		*p++ = ';';
	for (; *name; name++)
		*p++ = *name == ' ' ? '_' : *name == ';' ? ':' : *name;
	strcpy(p, mark);
}

/* Check folded_render on nr_stacks random samples; returns the number of stacks. */
static size_t check_random(const char *const *names, size_t nr_names, size_t nr_stacks,
			   unsigned int seed)
{
	struct cg_profile *cg = cg_new();
	struct ref_line *ref = calloc(nr_stacks, sizeof(*ref));
	struct text got = {0};
	char *want = malloc(nr_stacks * 600), *w = want;
	size_t i, k, n = 0, nr_cg = 0;

	CHECK(cg && ref && want);
	if (!cg || !ref || !want)
		goto out;
	srand(seed);
	for (i = 0; i < nr_stacks; i++) {
		struct frame f[MAX_DEPTH];
		size_t depth = 1 + rand() % MAX_DEPTH;
		const char *comm = comms[rand() % 5];
		uint64_t period = 1 + rand() % 3;

		memset(f, 0, sizeof(f));
		for (k = 0; k < depth; k++) {
			size_t name = rand() % nr_names;

			f[k].sym = names[name];
			f[k].dso_name = "prog";
			/* Two addresses per name and depth: stacks that differ in addresses
			 * alone print the same line. */
			f[k].ip = 0x1000 + name * 0x10 + (rand() % 2) * 0x1000 + k * 0x10000;
			f[k].kernel = k + 1 == depth && rand() % 5 == 0;
			if (f[k].kernel)
				f[k].dso_name = "[kernel.kallsyms]";
		}
		/* Sometimes the leaf is inlined into the frame after it (same address). */
		if (depth > 1 && !f[1].kernel && rand() % 4 == 0) {
			f[0].inlined = true;
			f[0].ip = f[1].ip;
		}
		CHECK(!cg_add_sample(cg, 0, "cpu-clock", 1, 1 + i % 3, comm, f, depth, period, 0));
		/* the reference: comm, then the frames root first */
		append(ref[i].text, comm, "", true);
		for (k = depth; k-- > 0;)
			append(ref[i].text, f[k].sym,
			       f[k].kernel    ? "_[k]"
			       : f[k].inlined ? "_[i]"
					      : "",
			       false);
		ref[i].count = 1;
	}
	qsort(ref, nr_stacks, sizeof(*ref), cmp_ref);
	for (i = 0; i < nr_stacks; i = k) {
		uint64_t count = 0;

		for (k = i; k < nr_stacks && !strcmp(ref[k].text, ref[i].text); k++)
			count += ref[k].count;
		w += sprintf(w, "%s %llu\n", ref[i].text, (unsigned long long)count);
		n++;
	}
	nr_cg = cg_nr_stacks(cg);
	CHECK(folded_render(cg, 0, collect, &got) == 0);
	CHECK(got.buf != NULL);
	if (got.buf) {
		CHECK(n > nr_stacks / 4); /* merged some, not all */
		CHECK(n < nr_stacks);
		CHECK_EQ_U64(got.len, strlen(want));
		CHECK(!strcmp(got.buf, want));
	}
out:
	free(got.buf);
	free(want);
	free(ref);
	cg_free(cg);
	return nr_cg;
}

/* Names around ';' in the text order. */
static void test_ranked(void)
{
	check_random(plain_names, sizeof(plain_names) / sizeof(plain_names[0]), NR_STACKS, 1);
	check_random(plain_names, sizeof(plain_names) / sizeof(plain_names[0]), NR_STACKS, 2);
}

/* Enough lines to be sorted in two runs at once, merged as they are written. */
static void test_two_runs(void)
{
	CHECK(check_random(plain_names, sizeof(plain_names) / sizeof(plain_names[0]), NR_MANY, 4) >
	      ONE_RUN);
}

/* Names with ';' in them: it becomes ':', and lines that print the same merge. */
static void test_semicolons(void)
{
	check_random(semi_names, sizeof(semi_names) / sizeof(semi_names[0]), NR_STACKS, 3);
}

int main(void)
{
	RUN(test_ranked);
	RUN(test_semicolons);
	RUN(test_two_runs);
	return unit_done();
}
