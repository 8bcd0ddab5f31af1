// SPDX-License-Identifier: Apache-2.0
/*
 * Read-ahead (pd_reader_read_ahead): the events a second thread hands over are the
 * ones the reader returns by itself, byte for byte and in the same order, across
 * batches, out-of-order rounds, compressed records, a bad record and an early
 * close.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "perfdata/pd_read.h"
#include "perfdata/pd_write.h"
#include "unit.h"

#define NR_SAMPLES 40000 /* several batches, the small first ones and full ones */

/* NR_SAMPLES samples with callchains of 1..16 frames, in rounds whose times overlap
 * (the ordering queue reorders them), a COMM every 1000; compress_level as the
 * writer takes it. */
static int write_samples(const char *path, int compress_level)
{
	struct pd_writer_opts o = {.path = path, .compress_level = compress_level};
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
		struct pd_sample s = {.id = 7, .pid = 1, .tid = 1 + i % 3, .period = i + 1};
		struct pd_sample_id sid = {.pid = 1, .tid = 1, .id = 7};

		/* Within a round of 100, times run backwards. */
		s.time = 1000 + (i / 100) * 100 + (99 - i % 100);
		s.nr_ips = 1 + i % 16;
		for (k = 0; k < s.nr_ips; k++)
			ips[k] = 0x400000 + i * 16 + k;
		s.ips = ips;
		s.ip = ips[0];
		if (pd_write_sample(w, 0, &s))
			return -1;
		if (i % 1000 == 999) {
			sid.time = s.time;
			if (pd_write_comm(w, 1, 1, "worker", false, &sid))
				return -1;
		}
		if (i % 100 == 99 && pd_write_finished_round(w))
			return -1;
	}
	return pd_writer_close(w);
}

/* A new temporary capture (write_samples) at path, a mkstemp template.  0 or -1. */
static int make_capture(char *path, int compress_level)
{
	int fd = mkstemp(path);

	if (fd < 0)
		return -1;
	close(fd);
	return write_samples(path, compress_level);
}

/* Every event of path, read with or without read-ahead, closed after max events. */
struct seq {
	uint8_t *bytes; /* each record's bytes, back to back */
	size_t len, n;
	int ret; /* the last pd_reader_next */
	char err[256];
};

static void read_all(const char *path, bool ahead, size_t max, struct seq *q)
{
	struct pd_event ev;
	struct pd_reader *r;
	char err[256];
	size_t cap = 0;

	memset(q, 0, sizeof(*q));
	r = pd_reader_open(path, err, sizeof(err));
	CHECK(r != NULL);
	if (!r)
		return;
	pd_reader_set_ordered(r, true);
	if (ahead)
		pd_reader_read_ahead(r);
	while (q->n < max && (q->ret = pd_reader_next(r, &ev)) > 0) {
		size_t size = ev.hdr->size;

		/* What the event points at must be its record (ips inside it). */
		if (ev.hdr->type == PERF_RECORD_SAMPLE)
			CHECK(ev.sample.ips > (const uint64_t *)ev.hdr &&
			      ev.sample.ips + ev.sample.nr_ips <=
				      (const uint64_t *)((const uint8_t *)ev.hdr + size));
		if (q->len + size > cap) {
			cap = 2 * (q->len + size);
			q->bytes = realloc(q->bytes, cap);
			if (!q->bytes)
				break;
		}
		memcpy(q->bytes + q->len, ev.hdr, size);
		q->len += size;
		q->n++;
	}
	if (pd_reader_error(r))
		snprintf(q->err, sizeof(q->err), "%s", pd_reader_error(r));
	pd_reader_close(r);
}

/* Both ways alike; returns how the plain read ended. */
static int check_same(const char *path, size_t max)
{
	struct seq a, b;

	read_all(path, false, max, &a);
	read_all(path, true, max, &b);
	CHECK(a.n > 0);
	CHECK_EQ_U64(b.n, a.n);
	CHECK_EQ_U64(b.len, a.len);
	CHECK(a.len == b.len && a.bytes && b.bytes && !memcmp(a.bytes, b.bytes, a.len));
	CHECK(b.ret == a.ret);
	CHECK_STR(b.err, a.err);
	free(a.bytes);
	free(b.bytes);
	return a.ret;
}

static void test_same_events(void)
{
	char path[] = "/tmp/pa-ahead-XXXXXX";

	CHECK(make_capture(path, 0) == 0);
	CHECK(check_same(path, SIZE_MAX) == 0);
	/* Closed while the thread is still reading: no hang, nothing leaked. */
	check_same(path, 10);
	unlink(path);
}

/* Decompressed records live in buffers the reader reuses: they are copied. */
static void test_compressed(void)
{
	char path[] = "/tmp/pa-ahead-z-XXXXXX";

	CHECK(make_capture(path, 3) == 0);
	CHECK(check_same(path, SIZE_MAX) == 0);
	unlink(path);
}

/* A record with a bad size half way: the same events, then the same error. */
static void test_bad_record(void)
{
	char path[] = "/tmp/pa-ahead-t-XXXXXX";
	struct perf_event_header h;
	uint64_t off, end;
	size_t i;
	int fd;

	CHECK(make_capture(path, 0) == 0);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	/* perf_file_header: data.offset at byte 40, data.size at 48. */
	CHECK(pread(fd, &off, 8, 40) == 8 && pread(fd, &end, 8, 48) == 8);
	end += off;
	for (i = 0; i < NR_SAMPLES / 2 && off < end; i++, off += h.size)
		if (pread(fd, &h, sizeof(h), (off_t)off) != sizeof(h) || !h.size)
			break;
	CHECK_EQ_U64(i, NR_SAMPLES / 2);
	h.size = 4; /* shorter than its own header */
	CHECK(pwrite(fd, &h, sizeof(h), (off_t)off) == sizeof(h));
	close(fd);
	CHECK(check_same(path, SIZE_MAX) < 0);
	unlink(path);
}

int main(void)
{
	RUN(test_same_events);
	RUN(test_compressed);
	RUN(test_bad_record);
	return unit_done();
}
