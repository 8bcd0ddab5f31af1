// SPDX-License-Identifier: Apache-2.0
/* callgraph's timeline: every kept sample once, in the order read, naming the stack it
 * was counted in; the same whether a second thread counts the stacks or not. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfdata/pd_read.h"
#include "perfdata/pd_write.h"
#include "profile/callgraph.h"
#include "profile/machine.h"
#include "unit.h"

#define NR_SAMPLES 50000 /* several of the counting thread's batches */

/* Sample i's thread, period and time, as write_capture writes them. */
static uint32_t tid_of(size_t i)
{
	return 1 + i % 3;
}

static uint64_t period_of(size_t i)
{
	return 1000 + i % 11;
}

static uint64_t time_of(size_t i)
{
	return 5000 + 10 * i;
}

/* NR_SAMPLES samples of 1..16 frames over 3 threads, many stacks seen before; 0 or -1. */
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
	uint64_t id = 7, ips[16];
	struct pd_writer *w = pd_writer_open(&o);
	size_t i, k;

	if (!w || pd_writer_add_attr(w, &a, "cpu-clock", &id, 1) < 0)
		return -1;
	for (i = 0; i < NR_SAMPLES; i++) {
		size_t seed = i % 5 ? i % 977 : i;
		struct pd_sample s = {.id = 7, .pid = 1, .tid = tid_of(i), .period = period_of(i)};

		s.time = time_of(i);
		s.nr_ips = 1 + seed % 16;
		for (k = 0; k < s.nr_ips; k++)
			ips[k] = 0x400000 + (seed * 13 + k * 5) % 3000;
		s.ips = ips;
		s.ip = ips[0];
		if (pd_write_sample(w, 0, &s))
			return -1;
	}
	return pd_writer_close(w);
}

static struct cg_profile *load(const char *path, bool count_thread, bool timeline)
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
		cg_set_timeline(cg, timeline);
		CHECK(cg_load(cg, r, m, NULL, err, sizeof(err)) == 0);
	}
	machine_free(m);
	pd_reader_close(r);
	return cg;
}

/* The timeline of cg holds the capture's samples in order, each in a stack of its
 * thread, and adds up to every stack's count and period. */
static void check_timeline(const struct cg_profile *cg)
{
	uint64_t *count = calloc(cg_nr_stacks(cg), sizeof(*count));
	uint64_t *period = calloc(cg_nr_stacks(cg), sizeof(*period));
	size_t i, bad = 0;

	CHECK(count && period);
	CHECK_EQ_U64(cg_nr_samples(cg), NR_SAMPLES);
	for (i = 0; count && period && i < cg_nr_samples(cg); i++) {
		struct cg_sample s = cg_sample(cg, i);

		if (s.stack >= cg_nr_stacks(cg)) {
			bad++;
			continue;
		}
		bad += s.time != time_of(i) || s.period != period_of(i) ||
		       cg_stack(cg, s.stack)->tid != tid_of(i);
		count[s.stack]++;
		period[s.stack] += s.period;
	}
	CHECK_EQ_U64(bad, 0);
	for (i = 0; count && period && i < cg_nr_stacks(cg); i++) {
		bad += count[i] != cg_stack(cg, i)->count;
		bad += period[i] != cg_stack(cg, i)->period;
	}
	CHECK_EQ_U64(bad, 0);
	free(count);
	free(period);
}

static void test_timeline_count_thread(void)
{
	char path[] = "/tmp/pa-tl-XXXXXX";
	int fd = mkstemp(path);
	struct cg_profile *a, *b, *off;
	size_t i, same = 0;

	CHECK(fd >= 0);
	close(fd);
	CHECK(write_capture(path) == 0);
	a = load(path, false, true);
	b = load(path, true, true);
	off = load(path, true, false);
	unlink(path);
	if (!a || !b || !off)
		goto out;
	/* The thread did count b's stacks, in several batches. */
	CHECK_EQ_U64(cg_thread_batches(a), 0);
	CHECK(cg_thread_batches(b) >= 3);
	CHECK(cg_nr_stacks(a) > 100);
	CHECK(cg_nr_stacks(a) < NR_SAMPLES / 2);
	check_timeline(a);
	check_timeline(b);
	CHECK_EQ_U64(cg_nr_samples(b), cg_nr_samples(a));
	for (i = 0; i < cg_nr_samples(a) && i < cg_nr_samples(b); i++) {
		struct cg_sample x = cg_sample(a, i), y = cg_sample(b, i);

		same += x.stack == y.stack && x.time == y.time && x.period == y.period;
	}
	CHECK_EQ_U64(same, NR_SAMPLES);
	/* Off: nothing kept, the stacks as with it on. */
	CHECK_EQ_U64(cg_nr_samples(off), 0);
	CHECK_EQ_U64(cg_nr_stacks(off), cg_nr_stacks(b));
out:
	cg_free(a);
	cg_free(b);
	cg_free(off);
}

static struct frame fr(uint64_t ip, const char *sym)
{
	return (struct frame){.ip = ip, .sym = sym, .dso_name = "[unknown]"};
}

/* cg_add_sample keeps its samples too, in the order added, times as given. */
static void test_timeline_add_sample(void)
{
	struct cg_profile *cg = cg_new();
	struct frame a[] = {fr(0x10, "leaf"), fr(0x30, "main")};
	struct frame b[] = {fr(0x20, "other"), fr(0x30, "main")};

	CHECK(cg != NULL);
	if (!cg)
		return;
	CHECK(!cg_add_sample(cg, 0, "cpu-clock", 1, 1, "prog", a, 2, 100, 0));
	CHECK_EQ_U64(cg_nr_samples(cg), 0); /* not on yet */
	cg_set_timeline(cg, true);
	CHECK(!cg_add_sample(cg, 0, "cpu-clock", 1, 1, "prog", b, 2, 7, 30));
	CHECK(!cg_add_sample(cg, 0, "cpu-clock", 1, 1, "prog", a, 2, 5, 20));
	CHECK(!cg_add_sample(cg, 0, "cpu-clock", 1, 1, "prog", b, 2, 3, 0));
	CHECK_EQ_U64(cg_nr_samples(cg), 3);
	CHECK_EQ_U64(cg_sample(cg, 0).stack, 1);
	CHECK_EQ_U64(cg_sample(cg, 0).time, 30);
	CHECK_EQ_U64(cg_sample(cg, 0).period, 7);
	CHECK_EQ_U64(cg_sample(cg, 1).stack, 0);
	CHECK_EQ_U64(cg_sample(cg, 1).time, 20);
	CHECK_EQ_U64(cg_sample(cg, 2).stack, 1);
	CHECK_EQ_U64(cg_sample(cg, 2).time, 0);
	CHECK_EQ_U64(cg_sample(cg, 2).period, 3);
	cg_free(cg);
}

int main(void)
{
	RUN(test_timeline_count_thread);
	RUN(test_timeline_add_sample);
	return unit_done();
}
