// SPDX-License-Identifier: Apache-2.0
/* focus: --focus keeps stacks through a matching frame, --ignore drops them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "profile/callgraph.h"
#include "profile/focus.h"
#include "profile/machine.h"
#include "unit.h"

static struct frame fr(uint64_t ip, const char *sym)
{
	struct frame f = {.ip = ip, .sym = sym, .dso_name = "prog"};

	return f;
}

/*
 * cpu-clock: main->loop->hot_a (7 samples of 10), main->loop->hot_b (3),
 * main->other with helper_inl inlined at its leaf (1), hot_bb (1);
 * offcpu-time: main->loop->hot_b (2 samples of 100).
 */
static struct cg_profile *make_profile(void)
{
	struct cg_profile *cg = cg_new();
	struct frame a[] = {fr(0x10, "hot_a"), fr(0x20, "loop"), fr(0x30, "main")};
	struct frame b[] = {fr(0x11, "hot_b"), fr(0x20, "loop"), fr(0x30, "main")};
	struct frame c[] = {fr(0x40, "helper_inl"), fr(0x40, "other"), fr(0x30, "main")};
	struct frame d[] = {fr(0x50, "hot_bb"), fr(0x30, "main")};
	int i;

	c[0].inlined = true;
	if (!cg)
		return NULL;
	for (i = 0; i < 7; i++)
		CHECK(!cg_add_sample(cg, 0, "cpu-clock", 1, 1, "prog", a, 3, 10, 0));
	for (i = 0; i < 3; i++)
		CHECK(!cg_add_sample(cg, 0, "cpu-clock", 1, 1, "prog", b, 3, 10, 0));
	CHECK(!cg_add_sample(cg, 0, "cpu-clock", 1, 1, "prog", c, 3, 10, 0));
	CHECK(!cg_add_sample(cg, 0, "cpu-clock", 1, 1, "prog", d, 2, 10, 0));
	for (i = 0; i < 2; i++)
		CHECK(!cg_add_sample(cg, 1, "offcpu-time", 1, 1, "prog", b, 3, 100, 0));
	return cg;
}

/* The sum of the counts of the stacks whose leaf function is named leaf. */
static uint64_t count_of(const struct cg_profile *cg, uint32_t ev, const char *leaf)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < cg_nr_stacks(cg); i++) {
		const struct cg_stack *s = cg_stack(cg, i);
		const struct cg_loc *l = cg_loc(cg, s->locs[0]);

		if (s->event == ev && !strcmp(cg_frame(cg, l->frame)->name, leaf))
			n += s->count;
	}
	return n;
}

/* focus, ignore, both: what survives, and the events' totals follow. */
static ssize_t apply(struct cg_profile *cg, const char *focus, const char *ignore)
{
	char err[256] = "";
	struct focus *fo = focus_new(focus, ignore, err, sizeof(err));
	ssize_t n;

	CHECK(fo != NULL);
	if (!fo)
		return -1;
	n = focus_apply(fo, cg);
	focus_free(fo);
	return n;
}

static void test_focus_keeps_matching(void)
{
	struct cg_profile *cg = make_profile();

	CHECK(cg != NULL);
	/* unanchored, like pprof: hot_b matches hot_bb too */
	CHECK_EQ_U64(apply(cg, "hot_b", NULL), 2);
	CHECK_EQ_U64(count_of(cg, 0, "hot_a"), 0);
	CHECK_EQ_U64(count_of(cg, 0, "hot_b"), 3);
	CHECK_EQ_U64(count_of(cg, 0, "hot_bb"), 1);
	CHECK_EQ_U64(count_of(cg, 1, "hot_b"), 2);
	CHECK_EQ_U64(cg_event(cg, 0)->samples, 4);
	CHECK_EQ_U64(cg_event(cg, 0)->period, 40);
	CHECK_EQ_U64(cg_event(cg, 1)->samples, 2);
	CHECK_EQ_U64(cg_event(cg, 1)->period, 200);
	/* applied again: nothing more to drop, dropped stacks stay dropped */
	CHECK_EQ_U64(apply(cg, "hot", NULL), 0);
	CHECK_EQ_U64(cg_event(cg, 0)->samples, 4);
	cg_free(cg);

	cg = make_profile();
	CHECK_EQ_U64(apply(cg, "^hot_b$", NULL), 3);
	CHECK_EQ_U64(count_of(cg, 0, "hot_bb"), 0);
	CHECK_EQ_U64(cg_event(cg, 0)->samples, 3);
	cg_free(cg);

	/* a caller's frame matches: every stack through loop */
	cg = make_profile();
	CHECK_EQ_U64(apply(cg, "^loop$", NULL), 2);
	CHECK_EQ_U64(count_of(cg, 0, "hot_a"), 7);
	CHECK_EQ_U64(count_of(cg, 0, "hot_b"), 3);
	cg_free(cg);
}

static void test_ignore_drops_matching(void)
{
	struct cg_profile *cg = make_profile();

	CHECK(cg != NULL);
	CHECK_EQ_U64(apply(cg, NULL, "hot_b"), 3);
	CHECK_EQ_U64(count_of(cg, 0, "hot_a"), 7);
	CHECK_EQ_U64(count_of(cg, 0, "helper_inl"), 1);
	CHECK_EQ_U64(cg_event(cg, 0)->samples, 8);
	CHECK_EQ_U64(cg_event(cg, 0)->period, 80);
	CHECK_EQ_U64(cg_event(cg, 1)->samples, 0);
	CHECK_EQ_U64(cg_event(cg, 1)->period, 0);
	cg_free(cg);
}

/* focus first, then ignore: what is left goes through main and not through hot_. */
static void test_focus_then_ignore(void)
{
	struct cg_profile *cg = make_profile();

	CHECK(cg != NULL);
	CHECK_EQ_U64(apply(cg, "main", "hot_"), 4);
	CHECK_EQ_U64(cg_event(cg, 0)->samples, 1);
	CHECK_EQ_U64(count_of(cg, 0, "helper_inl"), 1);
	cg_free(cg);
}

/* Inlined frames are frames: their names match. */
static void test_inlined_frames_match(void)
{
	struct cg_profile *cg = make_profile();

	CHECK(cg != NULL);
	CHECK_EQ_U64(apply(cg, "helper_.nl", NULL), 4);
	CHECK_EQ_U64(cg_event(cg, 0)->samples, 1);
	CHECK_EQ_U64(count_of(cg, 0, "helper_inl"), 1);
	cg_free(cg);
}

static void test_bad_regex(void)
{
	char err[256] = "";
	struct focus *fo;

	errno = 0;
	fo = focus_new("hot_(", NULL, err, sizeof(err));
	CHECK(fo == NULL);
	CHECK(errno == EINVAL);
	CHECK(!strncmp(err, "bad --focus 'hot_(': ", 21));
	CHECK(strlen(err) > 21 && !strchr(err, '\n'));
	err[0] = 0;
	fo = focus_new("ok", "[z-a]", err, sizeof(err));
	CHECK(fo == NULL);
	CHECK(!strncmp(err, "bad --ignore '[z-a]': ", 22));
	/* none at all: a no-op */
	fo = focus_new(NULL, NULL, err, sizeof(err));
	CHECK(fo != NULL);
	if (fo) {
		struct cg_profile *cg = make_profile();

		CHECK_EQ_U64(focus_apply(fo, cg), 0);
		CHECK_EQ_U64(cg_event(cg, 0)->samples, 12);
		cg_free(cg);
	}
	focus_free(fo);
}

/* Many stacks over few functions: the patterns run per function, not per frame. */
static void test_many_stacks(void)
{
	struct cg_profile *cg = cg_new();
	struct frame st[8];
	char names[8][16];
	struct timespec t0, t1;
	uint64_t kept = 0;
	size_t i, k;

	CHECK(cg != NULL);
	for (k = 0; k < 8; k++) {
		snprintf(names[k], sizeof(names[k]), "fn%zu", k);
		st[k] = fr(0x1000 * (k + 1), names[k]);
	}
	/* 200000 distinct stacks: leaf ips differ, one in 10 goes through fn3 */
	for (i = 0; i < 200000; i++) {
		st[0].ip = 0x100000 + i;
		st[3].sym = i % 10 ? "fn9" : "fn3";
		kept += i % 10 == 0;
		CHECK(!cg_add_sample(cg, 0, "cpu-clock", 1, 1, "p", st, 8, 1, 0));
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_EQ_U64(apply(cg, "^fn3$", "^fn5x$"), 200000 - kept);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK_EQ_U64(cg_event(cg, 0)->samples, kept);
	/* a few ms; a regexec per frame would take a second */
	CHECK((t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9 < 0.5);
	cg_free(cg);
}

int main(void)
{
	RUN(test_focus_keeps_matching);
	RUN(test_ignore_drops_matching);
	RUN(test_focus_then_ignore);
	RUN(test_inlined_frames_match);
	RUN(test_bad_regex);
	RUN(test_many_stacks);
	return unit_done();
}
