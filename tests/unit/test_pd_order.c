// SPDX-License-Identifier: Apache-2.0
/* Time-ordered reading: records written out of order across rounds come back sorted. */
#include <stdlib.h>
#include <unistd.h>

#include "perfdata/pd_read.h"
#include "perfdata/pd_write.h"
#include "unit.h"

static char path[] = "/tmp/pa-order-XXXXXX";

static void write_file(void)
{
	struct pd_writer_opts o = {.path = path};
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(a),
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD,
		.sample_id_all = 1,
	};
	uint64_t id = 7;
	struct pd_writer *w;
	/* Round 1: times 30, 10 and a COMM at 20.  Round 2: 25 (older than round 1's
	 * newest, so it must still sort before 30), 40.  End: 35. */
	struct pd_sample s = {.id = 7, .pid = 1, .tid = 1, .period = 1};
	struct pd_sample_id sid = {.pid = 1, .tid = 1, .time = 20, .id = 7};

	w = pd_writer_open(&o);
	CHECK(w != NULL);
	if (!w)
		return;
	CHECK(pd_writer_add_attr(w, &a, "cpu-clock", &id, 1) == 0);
	s.time = 30, s.ip = 30;
	CHECK(pd_write_sample(w, 0, &s) == 0);
	s.time = 10, s.ip = 10;
	CHECK(pd_write_sample(w, 0, &s) == 0);
	CHECK(pd_write_comm(w, 1, 1, "late", false, &sid) == 0);
	CHECK(pd_write_finished_round(w) == 0);
	s.time = 25, s.ip = 25;
	CHECK(pd_write_sample(w, 0, &s) == 0);
	s.time = 40, s.ip = 40;
	CHECK(pd_write_sample(w, 0, &s) == 0);
	CHECK(pd_write_finished_round(w) == 0);
	s.time = 35, s.ip = 35;
	CHECK(pd_write_sample(w, 0, &s) == 0);
	CHECK(pd_writer_close(w) == 0);
}

static void test_ordered(void)
{
	const uint64_t want[] = {10, 20, 25, 30, 35, 40};
	struct pd_event ev;
	struct pd_reader *r;
	char err[256];
	size_t n = 0;

	r = pd_reader_open(path, err, sizeof(err));
	CHECK(r != NULL);
	if (!r)
		return;
	pd_reader_set_ordered(r, true);
	while (pd_reader_next(r, &ev) > 0) {
		uint64_t t = ev.hdr->type == PERF_RECORD_SAMPLE ? ev.sample.time : ev.sid.time;

		CHECK(ev.hdr->type != PERF_RECORD_FINISHED_ROUND);
		if (n < 6)
			CHECK_EQ_U64(t, want[n]);
		if (ev.hdr->type == PERF_RECORD_SAMPLE)
			CHECK_EQ_U64(ev.sample.ip, t); /* the sample's own bytes, re-decoded */
		n++;
	}
	CHECK_EQ_U64(n, 6);
	CHECK(pd_reader_error(r) == NULL);
	pd_reader_close(r);
}

static void test_unordered_is_file_order(void)
{
	struct pd_event ev;
	struct pd_reader *r;
	char err[256];
	uint64_t first = 0;

	r = pd_reader_open(path, err, sizeof(err));
	CHECK(r != NULL);
	if (!r)
		return;
	while (pd_reader_next(r, &ev) > 0) {
		if (ev.hdr->type == PERF_RECORD_SAMPLE) {
			first = ev.sample.time;
			break;
		}
	}
	CHECK_EQ_U64(first, 30);
	pd_reader_close(r);
}

int main(void)
{
	int fd = mkstemp(path);

	if (fd >= 0)
		close(fd);
	write_file();
	RUN(test_ordered);
	RUN(test_unordered_is_file_order);
	unlink(path);
	return unit_done();
}
