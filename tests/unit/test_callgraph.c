// SPDX-License-Identifier: Apache-2.0
/* callgraph: stacks, frames and functions are interned; counts and periods add up. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfdata/pd_read.h"
#include "perfdata/pd_write.h"
#include "profile/callgraph.h"
#include "profile/machine.h"
#include "unit.h"

static struct frame fr(uint64_t ip, const char *sym, bool kernel)
{
	struct frame f = {.ip = ip, .sym = sym, .kernel = kernel};

	f.dso_name = kernel ? "[kernel.kallsyms]" : "[unknown]";
	return f;
}

static void test_stacks_interned(void)
{
	struct cg_profile *cg = cg_new();
	struct frame a[] = {fr(0x10, "leaf", false), fr(0x20, "mid", false),
			    fr(0x30, "main", false)};
	struct frame b[] = {fr(0x11, "leaf", false), fr(0x20, "mid", false),
			    fr(0x30, "main", false)};

	CHECK(cg != NULL);
	CHECK(!cg_add_sample(cg, 0, "cpu-clock", 1, 1, "prog", a, 3, 100, 5));
	CHECK(!cg_add_sample(cg, 0, "cpu-clock", 1, 1, "prog", a, 3, 200, 9));
	/* another thread: another stack, same frames */
	CHECK(!cg_add_sample(cg, 0, "cpu-clock", 1, 2, "prog", a, 3, 50, 7));
	/* another address in the same function: another stack and frame, same function */
	CHECK(!cg_add_sample(cg, 0, "cpu-clock", 1, 1, "prog", b, 3, 10, 0));

	CHECK_EQ_U64(cg_nr_stacks(cg), 3);
	CHECK_EQ_U64(cg_stack(cg, 0)->count, 2);
	CHECK_EQ_U64(cg_stack(cg, 0)->period, 300);
	CHECK_EQ_U64(cg_stack(cg, 0)->nr, 3);
	CHECK_EQ_U64(cg_stack(cg, 1)->tid, 2);
	CHECK(cg_stack(cg, 0)->comm == cg_stack(cg, 1)->comm);
	CHECK_EQ_U64(cg_nr_locs(cg), 4);
	CHECK_EQ_U64(cg_nr_frames(cg), 4);
	CHECK_EQ_U64(cg_nr_funcs(cg), 3);
	CHECK_EQ_U64(cg_loc_real(cg, cg_stack(cg, 0)->locs[0])->func,
		     cg_loc_real(cg, cg_stack(cg, 2)->locs[0])->func);
	CHECK(cg_stack(cg, 0)->locs[0] != cg_stack(cg, 2)->locs[0]);
	CHECK_STR(cg_loc_real(cg, cg_stack(cg, 0)->locs[0])->name, "leaf");

	CHECK_EQ_U64(cg_nr_events(cg), 1);
	CHECK_STR(cg_event(cg, 0)->name, "cpu-clock");
	CHECK_EQ_U64(cg_event(cg, 0)->samples, 4);
	CHECK_EQ_U64(cg_event(cg, 0)->period, 360);
	CHECK_EQ_U64(cg_event(cg, 0)->first_time, 5);
	CHECK_EQ_U64(cg_event(cg, 0)->last_time, 9);
	cg_free(cg);
}

/* Samples with other labels are other stacks; equal label sets are one pointer. */
static void test_labels(void)
{
	struct cg_profile *cg = cg_new();
	struct frame a[] = {fr(0x10, "leaf", false), fr(0x30, "main", false)};
	char sleep[] = "sleep";
	struct cg_label s1 = {.key = CG_LABEL_STATE, .str = "sleep"};
	struct cg_label s2 = {.key = CG_LABEL_STATE, .str = sleep}; /* another copy */
	struct cg_label io = {.key = CG_LABEL_STATE, .str = "io"};
	struct cg_label gpu[] = {{.key = CG_LABEL_GPU_DEVICE, .str = "0"}, {.key = "n", .num = 42}};

	CHECK(cg != NULL);
	CHECK(!cg_add_sample_labels(cg, 0, "offcpu-time", 1, 1, "p", a, 2, 10, 0, &s1, 1));
	CHECK(!cg_add_sample_labels(cg, 0, "offcpu-time", 1, 1, "p", a, 2, 20, 0, &s2, 1));
	CHECK(!cg_add_sample_labels(cg, 0, "offcpu-time", 1, 1, "p", a, 2, 40, 0, &io, 1));
	CHECK(!cg_add_sample(cg, 0, "offcpu-time", 1, 1, "p", a, 2, 80, 0));
	CHECK(!cg_add_sample_labels(cg, 0, "offcpu-time", 1, 1, "p", a, 2, 1, 0, gpu, 2));
	CHECK_EQ_U64(cg_nr_stacks(cg), 4);
	CHECK_EQ_U64(cg_stack(cg, 0)->period, 30);
	CHECK_STR(cg_label_str(cg_stack(cg, 0)->labels, CG_LABEL_STATE), "sleep");
	CHECK_STR(cg_label_str(cg_stack(cg, 1)->labels, CG_LABEL_STATE), "io");
	CHECK(cg_stack(cg, 2)->labels == NULL);
	CHECK(cg_label_str(cg_stack(cg, 2)->labels, CG_LABEL_STATE) == NULL);
	CHECK_EQ_U64(cg_stack(cg, 3)->labels->nr, 2);
	CHECK_STR(cg_label_str(cg_stack(cg, 3)->labels, CG_LABEL_GPU_DEVICE), "0");
	CHECK(cg_stack(cg, 3)->labels->v[1].str == NULL);
	CHECK_EQ_U64(cg_stack(cg, 3)->labels->v[1].num, 42);
	cg_free(cg);
}

static void test_events_and_kernel(void)
{
	struct cg_profile *cg = cg_new();
	struct frame k[] = {fr(0xffffffff81000010ULL, "do_sys", true), fr(0x30, "main", false)};

	CHECK(!cg_add_sample(cg, 1, "offcpu-time", 7, 7, "p", k, 2, 1000, 0));
	CHECK(!cg_add_sample(cg, 0, "cpu-clock", 7, 7, "p", k, 2, 1, 0));
	CHECK_EQ_U64(cg_nr_events(cg), 2);
	CHECK_EQ_U64(cg_find_event(cg, "offcpu-time"), 1);
	CHECK(cg_find_event(cg, "nope") == -1);
	/* same frames under two events: two stacks, shared frames */
	CHECK_EQ_U64(cg_nr_stacks(cg), 2);
	CHECK_EQ_U64(cg_nr_frames(cg), 2);
	CHECK(cg_loc_real(cg, cg_stack(cg, 0)->locs[0])->kernel);
	CHECK_STR(cg_loc_real(cg, cg_stack(cg, 0)->locs[0])->dso_name, "[kernel.kallsyms]");
	cg_free(cg);
}

static void test_empty_stack_is_unknown(void)
{
	struct cg_profile *cg = cg_new();

	CHECK(!cg_add_sample(cg, 0, "cpu-clock", 1, 1, NULL, NULL, 0, 1, 0));
	CHECK_EQ_U64(cg_nr_stacks(cg), 1);
	CHECK_EQ_U64(cg_stack(cg, 0)->nr, 1);
	CHECK_STR(cg_stack(cg, 0)->comm, "[unknown]");
	cg_free(cg);
}

static void test_many_stacks(void)
{
	struct cg_profile *cg = cg_new();
	struct frame f[2] = {fr(0, "x", false), fr(0x30, "main", false)};
	uint64_t i;

	/* 100k distinct stacks plus repeats: the hash tables must grow and stay exact. */
	for (i = 0; i < 200000; i++) {
		f[0].ip = 0x1000 + (i % 100000);
		CHECK(!cg_add_sample(cg, 0, "cpu-clock", 1, 1, "p", f, 2, 1, 0));
	}
	CHECK_EQ_U64(cg_nr_stacks(cg), 100000);
	CHECK_EQ_U64(cg_stack(cg, 99999)->count, 2);
	CHECK_EQ_U64(cg_nr_funcs(cg), 2);
	cg_free(cg);
}

static void test_inlined_frames(void)
{
	struct cg_profile *cg = cg_new();
	/* mix and helper inlined into work at 0x40: one location of three frames */
	struct frame a[] = {fr(0x40, "mix", false), fr(0x40, "helper", false),
			    fr(0x40, "work", false), fr(0x30, "main", false)};
	struct frame b[] = {fr(0x40, "work", false), fr(0x30, "main", false)};
	const struct cg_stack *s;
	const struct cg_loc *l;

	a[0].inlined = a[1].inlined = true;
	a[0].srcfile = "w.c";
	a[0].line = 6;
	CHECK(!cg_add_sample(cg, 0, "cpu-clock", 1, 1, "p", a, 4, 1, 0));
	CHECK(!cg_add_sample(cg, 0, "cpu-clock", 1, 1, "p", a, 4, 1, 0));
	/* the real function alone at that ip (--no-inline): another location and stack,
	 * the same function */
	CHECK(!cg_add_sample(cg, 0, "cpu-clock", 1, 1, "p", b, 2, 1, 0));
	CHECK_EQ_U64(cg_nr_stacks(cg), 2);
	CHECK_EQ_U64(cg_nr_locs(cg), 3);
	CHECK_EQ_U64(cg_nr_frames(cg), 5);
	s = cg_stack(cg, 0);
	CHECK_EQ_U64(s->count, 2);
	CHECK_EQ_U64(s->nr, 2);
	l = cg_loc(cg, s->locs[0]);
	CHECK_EQ_U64(l->nr_frames, 3);
	CHECK_EQ_U64(l->ip, 0x40);
	CHECK(cg_frame(cg, l->frame)->inlined);
	CHECK(cg_frame(cg, l->frame + 1)->inlined);
	CHECK(!cg_frame(cg, l->frame + 2)->inlined);
	CHECK_STR(cg_frame(cg, l->frame)->name, "mix");
	CHECK_STR(cg_frame(cg, l->frame)->srcfile, "w.c");
	CHECK_EQ_U64(cg_frame(cg, l->frame)->line, 6);
	CHECK(cg_frame(cg, l->frame + 2)->srcfile == NULL);
	CHECK(cg_loc_real(cg, s->locs[0]) == cg_frame(cg, l->frame + 2));
	CHECK(cg_stack(cg, 1)->locs[0] != s->locs[0]);
	CHECK_EQ_U64(cg_loc_real(cg, cg_stack(cg, 1)->locs[0])->func,
		     cg_loc_real(cg, s->locs[0])->func);
	/* an inlined frame without a name cannot be told apart: it counts as real */
	a[0].sym = NULL;
	CHECK(!cg_add_sample(cg, 0, "cpu-clock", 1, 1, "p", a, 4, 1, 0));
	CHECK(!cg_frame(cg, cg_loc(cg, cg_stack(cg, 2)->locs[0])->frame)->inlined);
	cg_free(cg);
}

#define NR_LOADED 70000 /* several of the counting thread's batches */

/* NR_LOADED samples of 1..24 frames over 3 threads, every 7th a stack seen before, a
 * new comm every 5000; 0 or -1. */
static int write_capture(const char *path)
{
	struct pd_writer_opts o = {.path = path};
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(a),
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN,
		.sample_id_all = 1,
	};
	uint64_t id = 7, ips[24];
	struct pd_writer *w = pd_writer_open(&o);
	size_t i, k;

	if (!w || pd_writer_add_attr(w, &a, "cpu-clock", &id, 1) < 0)
		return -1;
	for (i = 0; i < NR_LOADED; i++) {
		size_t seed = i % 7 ? i : i / 7;
		struct pd_sample s = {.id = 7, .pid = 1, .tid = 1 + i % 3, .period = i + 1};

		s.time = 1000 + i;
		s.nr_ips = 1 + seed % 24;
		for (k = 0; k < s.nr_ips; k++)
			ips[k] = 0x400000 + (seed * 31 + k * 7) % 5000;
		s.ips = ips;
		s.ip = ips[0];
		if (pd_write_sample(w, 0, &s))
			return -1;
		if (i % 5000 == 4999) {
			struct pd_sample_id sid = {.pid = 1, .tid = 1, .id = 7, .time = s.time};
			char comm[16];

			snprintf(comm, sizeof(comm), "w%zu", i / 5000);
			if (pd_write_comm(w, 1, 1, comm, false, &sid))
				return -1;
		}
	}
	return pd_writer_close(w);
}

static struct cg_profile *load(const char *path, bool count_thread)
{
	static const struct machine_opts mo = {.no_kernel_syms = true};
	struct cg_profile *cg = cg_new();
	struct machine *m = machine_new(&mo);
	char err[256];
	struct pd_reader *r = pd_reader_open(path, err, sizeof(err));

	CHECK(cg && m && r);
	if (cg && m && r) {
		pd_reader_set_ordered(r, true);
		cg_set_count_thread(cg, count_thread);
		CHECK(cg_load(cg, r, m, NULL, err, sizeof(err)) == 0);
	}
	machine_free(m);
	pd_reader_close(r);
	return cg;
}

/* Stacks counted in a second thread are the ones counted in place: same order,
 * locations, counts, periods and comms; the event totals too. */
static void test_count_thread(void)
{
	char path[] = "/tmp/pa-cg-XXXXXX";
	int fd = mkstemp(path);
	struct cg_profile *a, *b;
	size_t i, same = 0;

	CHECK(fd >= 0);
	close(fd);
	CHECK(write_capture(path) == 0);
	a = load(path, false);
	b = load(path, true);
	unlink(path);
	if (!a || !b)
		goto out;
	CHECK(cg_nr_stacks(a) > NR_LOADED / 2);
	CHECK(cg_nr_stacks(a) < NR_LOADED);
	CHECK_EQ_U64(cg_nr_stacks(b), cg_nr_stacks(a));
	/* The thread did count them: NR_LOADED samples are several batches. */
	CHECK_EQ_U64(cg_thread_batches(a), 0);
	CHECK(cg_thread_batches(b) >= 4);
	CHECK_EQ_U64(cg_event(b, 0)->samples, NR_LOADED);
	CHECK_EQ_U64(cg_event(b, 0)->period, cg_event(a, 0)->period);
	for (i = 0; i < cg_nr_stacks(a) && i < cg_nr_stacks(b); i++) {
		const struct cg_stack *x = cg_stack(a, i), *y = cg_stack(b, i);

		same += x->pid == y->pid && x->tid == y->tid && x->nr == y->nr &&
			!memcmp(x->locs, y->locs, x->nr * sizeof(*x->locs)) &&
			x->count == y->count && x->period == y->period && !strcmp(x->comm, y->comm);
	}
	CHECK_EQ_U64(same, cg_nr_stacks(a));
out:
	cg_free(a);
	cg_free(b);
}

int main(void)
{
	RUN(test_inlined_frames);
	RUN(test_stacks_interned);
	RUN(test_labels);
	RUN(test_events_and_kernel);
	RUN(test_empty_stack_is_unknown);
	RUN(test_many_stacks);
	RUN(test_count_thread);
	return unit_done();
}
