// SPDX-License-Identifier: Apache-2.0
/*
 * Record decoders (perfdata/event.h): what pd_write_* writes decodes back field for
 * field, and a record cut short, claiming more bytes than there are, or whose string
 * never ends is refused with -EINVAL by every decoder.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfdata/event.h"
#include "perfdata/pd_read.h"
#include "perfdata/pd_write.h"
#include "unit.h"

#define MAX_REC 65536

static char path[] = "/tmp/pa-test-event-XXXXXX";

static const uint8_t bid20[20] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10,
				  11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
static const uint8_t bid8[8] = {0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8};

/* One written record of each type, copied as the reader handed it out. */
enum { K_MMAP, K_MMAP2, K_COMM, K_FORK, K_LOST, K_LOST_SAMPLES, K_BUILD_ID, K_NR };
static uint64_t copies[K_NR][MAX_REC / 8];

static const struct perf_event_header *copy_of(int k)
{
	const void *p = copies[k];

	return p;
}

static struct pd_sample_id sid_at(uint64_t time)
{
	return (struct pd_sample_id){.pid = 10, .tid = 11, .time = time, .id = 7, .cpu = 1};
}

static int write_records(void)
{
	struct pd_writer_opts o = {.path = path, .pipe = true};
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(a),
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD,
		.sample_id_all = 1,
	};
	uint64_t id = 7;
	struct pd_sample_id sid = sid_at(100);
	struct pd_writer *w = pd_writer_open(&o);
	int err = 0;

	if (!w)
		return -errno;
	if (pd_writer_add_attr(w, &a, "cpu-clock", &id, 1) != 0) {
		pd_writer_abort(w);
		return -EINVAL;
	}
	err |= pd_write_mmap(w, PERF_RECORD_MISC_KERNEL, (uint32_t)-1, 0, 0xffffffff81000000ULL,
			     0x1000000, 0xffffffff81000000ULL, "[kernel.kallsyms]_text", &sid);
	err |= pd_write_mmap2(w, PERF_RECORD_MISC_USER, 10, 11, 0x400000, 0x2000, 0x1000, 5, 2,
			      bid20, 20, "/usr/bin/x", &sid);
	err |= pd_write_mmap2(w, PERF_RECORD_MISC_USER, 10, 11, 0x7f0000000000, 0x3000, 0, 5, 2,
			      bid8, 8, "/lib/libshort.so", &sid);
	err |= pd_write_mmap2(w, PERF_RECORD_MISC_USER, 10, 11, 0x7f0000100000, 0x1000, 0, 5, 2,
			      NULL, 0, "/lib/libnone.so", &sid);
	err |= pd_write_comm(w, 10, 11, "worker", true, &sid);
	/* Longer than the kernel's 16 bytes: cut to 15 and the NUL. */
	err |= pd_write_comm(w, 10, 12, "a-very-long-thread-name", false, &sid);
	err |= pd_write_task(w, PERF_RECORD_FORK, 10, 1, 11, 1, 99, &sid);
	err |= pd_write_task(w, PERF_RECORD_EXIT, 10, 1, 11, 1, 200, &sid);
	err |= pd_write_lost(w, 7, 5, &sid);
	err |= pd_write_lost_samples(w, 3, &sid);
	err |= pd_writer_add_build_id(w, PERF_RECORD_MISC_USER, -1, bid20, 20, "/usr/bin/x");
	err |= pd_writer_add_build_id(w, PERF_RECORD_MISC_KERNEL, -1, bid8, 8, "[kernel.kallsyms]");
	if (err) {
		pd_writer_abort(w);
		return err;
	}
	return pd_writer_close(w);
}

static void keep(int k, const struct perf_event_header *h)
{
	if (!copy_of(k)->size)
		memcpy(copies[k], h, h->size);
}

static void check_mmap(const struct perf_event_header *h, int n)
{
	struct pd_mmap m;

	CHECK(pd_parse_mmap(h, h->size, &m) == 0);
	CHECK_EQ_U64(m.type, h->type);
	CHECK_EQ_U64(m.tid, h->type == PERF_RECORD_MMAP ? 0 : 11);
	if (h->type == PERF_RECORD_MMAP) {
		CHECK_EQ_U64(m.misc, PERF_RECORD_MISC_KERNEL);
		CHECK_EQ_U64(m.pid, (uint32_t)-1);
		CHECK_EQ_U64(m.start, 0xffffffff81000000ULL);
		CHECK_EQ_U64(m.len, 0x1000000);
		CHECK_EQ_U64(m.pgoff, 0xffffffff81000000ULL);
		CHECK_STR(m.filename, "[kernel.kallsyms]_text");
		CHECK(m.build_id == NULL);
		CHECK_EQ_U64(m.prot, 0);
		return;
	}
	CHECK_EQ_U64(m.pid, 10);
	CHECK_EQ_U64(m.prot, 5);
	CHECK_EQ_U64(m.flags, 2);
	CHECK_EQ_U64(m.misc & PERF_RECORD_MISC_CPUMODE_MASK, PERF_RECORD_MISC_USER);
	CHECK_EQ_U64(m.maj + m.min + m.ino + m.ino_generation, 0);
	switch (n) {
	case 0:
		CHECK_EQ_U64(m.start, 0x400000);
		CHECK_EQ_U64(m.len, 0x2000);
		CHECK_EQ_U64(m.pgoff, 0x1000);
		CHECK_EQ_U64(m.build_id_size, 20);
		CHECK(m.build_id && !memcmp(m.build_id, bid20, 20));
		CHECK_STR(m.filename, "/usr/bin/x");
		break;
	case 1:
		CHECK_EQ_U64(m.build_id_size, 8);
		CHECK(m.build_id && !memcmp(m.build_id, bid8, 8));
		CHECK_STR(m.filename, "/lib/libshort.so");
		break;
	default:
		CHECK(!(m.misc & PERF_RECORD_MISC_MMAP_BUILD_ID));
		CHECK(m.build_id == NULL);
		CHECK_EQ_U64(m.build_id_size, 0);
		CHECK_EQ_U64(m.len, 0x1000);
		CHECK_STR(m.filename, "/lib/libnone.so");
	}
}

static void check_build_id(const struct perf_event_header *h, int n)
{
	struct pd_header_build_id b;

	CHECK(pd_parse_header_build_id(h, h->size, &b) == 0);
	CHECK(b.pid == -1);
	CHECK(b.misc & PERF_RECORD_MISC_BUILD_ID_SIZE);
	if (n == 0) {
		CHECK_EQ_U64(b.misc & PERF_RECORD_MISC_CPUMODE_MASK, PERF_RECORD_MISC_USER);
		CHECK_EQ_U64(b.size, 20);
		CHECK(!memcmp(b.build_id, bid20, 20));
		CHECK_STR(b.filename, "/usr/bin/x");
	} else {
		CHECK_EQ_U64(b.misc & PERF_RECORD_MISC_CPUMODE_MASK, PERF_RECORD_MISC_KERNEL);
		CHECK_EQ_U64(b.size, 8);
		CHECK(!memcmp(b.build_id, bid8, 8));
		CHECK_STR(b.filename, "[kernel.kallsyms]");
	}
}

/* Everything written comes back through the decoders as it went in. */
static void test_roundtrip(void)
{
	char err[256];
	struct pd_reader *r;
	struct pd_event ev;
	int n[256] = {0}, ret;

	CHECK(write_records() == 0);
	r = pd_reader_open(path, err, sizeof(err));
	CHECK(r != NULL);
	if (!r)
		return;
	while ((ret = pd_reader_next(r, &ev)) > 0) {
		const struct perf_event_header *h = ev.hdr;
		int i = n[h->type & 0xff]++;

		switch (h->type) {
		case PERF_RECORD_MMAP:
			keep(K_MMAP, h);
			check_mmap(h, i);
			break;
		case PERF_RECORD_MMAP2:
			keep(K_MMAP2, h);
			check_mmap(h, i);
			CHECK_EQ_U64(ev.sid.time, 100);
			break;
		case PERF_RECORD_COMM: {
			struct pd_comm c;

			keep(K_COMM, h);
			CHECK(pd_parse_comm(h, h->size, &c) == 0);
			CHECK_EQ_U64(c.pid, 10);
			CHECK_EQ_U64(c.tid, i ? 12 : 11);
			CHECK_EQ_U64(!!(c.misc & PERF_RECORD_MISC_COMM_EXEC), !i);
			CHECK_STR(c.comm, i ? "a-very-long-thr" : "worker");
			break;
		}
		case PERF_RECORD_FORK:
		case PERF_RECORD_EXIT: {
			struct pd_task t;

			keep(K_FORK, h);
			CHECK(pd_parse_task(h, h->size, &t) == 0);
			CHECK_EQ_U64(t.type, h->type);
			CHECK_EQ_U64(t.pid, 10);
			CHECK_EQ_U64(t.ppid, 1);
			CHECK_EQ_U64(t.tid, 11);
			CHECK_EQ_U64(t.ptid, 1);
			CHECK_EQ_U64(t.time, h->type == PERF_RECORD_FORK ? 99 : 200);
			break;
		}
		case PERF_RECORD_LOST: {
			struct pd_lost l;

			keep(K_LOST, h);
			CHECK(pd_parse_lost(h, h->size, &l) == 0);
			CHECK_EQ_U64(l.id, 7);
			CHECK_EQ_U64(l.lost, 5);
			break;
		}
		case PERF_RECORD_LOST_SAMPLES: {
			struct pd_lost_samples l;

			keep(K_LOST_SAMPLES, h);
			CHECK(pd_parse_lost_samples(h, h->size, &l) == 0);
			CHECK_EQ_U64(l.lost, 3);
			break;
		}
		case PERF_RECORD_HEADER_BUILD_ID:
			keep(K_BUILD_ID, h);
			check_build_id(h, i);
			break;
		}
	}
	CHECK_EQ_U64(ret, 0);
	CHECK_EQ_U64(n[PERF_RECORD_MMAP], 1);
	CHECK_EQ_U64(n[PERF_RECORD_MMAP2], 3);
	CHECK_EQ_U64(n[PERF_RECORD_COMM], 2);
	CHECK_EQ_U64(n[PERF_RECORD_FORK] + n[PERF_RECORD_EXIT], 2);
	CHECK_EQ_U64(n[PERF_RECORD_LOST], 1);
	CHECK_EQ_U64(n[PERF_RECORD_LOST_SAMPLES], 1);
	CHECK_EQ_U64(n[PERF_RECORD_HEADER_BUILD_ID], 2);
	pd_reader_close(r);
}

/* Every decoder behind one signature, and where each record's string starts. */
static int parse(int k, const struct perf_event_header *h, size_t avail)
{
	union {
		struct pd_mmap m;
		struct pd_comm c;
		struct pd_task t;
		struct pd_lost l;
		struct pd_lost_samples ls;
		struct pd_header_build_id b;
	} out;

	switch (k) {
	case K_MMAP:
	case K_MMAP2:
		return pd_parse_mmap(h, avail, &out.m);
	case K_COMM:
		return pd_parse_comm(h, avail, &out.c);
	case K_FORK:
		return pd_parse_task(h, avail, &out.t);
	case K_LOST:
		return pd_parse_lost(h, avail, &out.l);
	case K_LOST_SAMPLES:
		return pd_parse_lost_samples(h, avail, &out.ls);
	default:
		return pd_parse_header_build_id(h, avail, &out.b);
	}
}

static const size_t fixed[K_NR] = {
	[K_MMAP] = sizeof(struct perf_record_mmap),
	[K_MMAP2] = sizeof(struct perf_record_mmap2),
	[K_COMM] = sizeof(struct perf_record_comm),
	[K_FORK] = sizeof(struct perf_record_fork),
	[K_LOST] = sizeof(struct perf_record_lost),
	[K_LOST_SAMPLES] = sizeof(struct perf_record_lost_samples),
	[K_BUILD_ID] = sizeof(struct perf_record_header_build_id),
};
static const bool has_str[K_NR] = {
	[K_MMAP] = true, [K_MMAP2] = true, [K_COMM] = true, [K_BUILD_ID] = true};

/*
 * header.size cut anywhere before the fixed part ends, or before the string's NUL:
 * -EINVAL; from there on the record is whole again.
 */
static void test_truncated(void)
{
	static uint64_t buf[MAX_REC / 8];
	struct perf_event_header *h = (void *)buf;

	for (int k = 0; k < K_NR; k++) {
		const struct perf_event_header *orig = copy_of(k);
		size_t end = fixed[k];

		CHECK(orig->size > 0);
		if (!orig->size)
			continue;
		if (has_str[k])
			end += strlen((const char *)orig + fixed[k]) + 1;
		for (size_t size = 0; size <= orig->size; size++) {
			memcpy(buf, orig, orig->size);
			h->size = (uint16_t)size;
			if (size < end && parse(k, h, orig->size) != -EINVAL) {
				printf("#   kind %d: header.size %zu of %zu accepted\n", k, size,
				       end);
				CHECK(0);
			} else if (size >= end && parse(k, h, orig->size) != 0) {
				printf("#   kind %d: header.size %zu refused\n", k, size);
				CHECK(0);
			}
		}
		/* Fewer bytes than a header. */
		CHECK(parse(k, orig, 0) == -EINVAL);
		CHECK(parse(k, orig, sizeof(*orig) - 1) == -EINVAL);
	}
}

/* A header.size past the bytes there are: -EINVAL, even by one byte. */
static void test_oversized(void)
{
	for (int k = 0; k < K_NR; k++) {
		const struct perf_event_header *orig = copy_of(k);

		if (!orig->size)
			continue;
		CHECK(parse(k, orig, orig->size) == 0);
		CHECK(parse(k, orig, orig->size - 1) == -EINVAL);
		CHECK(parse(k, orig, fixed[k]) == -EINVAL);
	}
}

/* A string running to the end of the record without its NUL: -EINVAL. */
static void test_unterminated(void)
{
	static uint64_t buf[MAX_REC / 8];
	struct perf_event_header *h = (void *)buf;

	for (int k = 0; k < K_NR; k++) {
		const struct perf_event_header *orig = copy_of(k);

		if (!has_str[k] || !orig->size)
			continue;
		memcpy(buf, orig, orig->size);
		memset((char *)buf + fixed[k], 'x', orig->size - fixed[k]);
		CHECK(parse(k, h, h->size) == -EINVAL);
		/* The NUL in the last byte is inside: accepted. */
		((char *)buf)[h->size - 1] = '\0';
		CHECK(parse(k, h, h->size) == 0);
	}
}

/* Each decoder takes only its own types. */
static void test_wrong_type(void)
{
	static uint64_t buf[MAX_REC / 8];
	struct perf_event_header *h = (void *)buf;

	for (int k = 0; k < K_BUILD_ID; k++) {
		const struct perf_event_header *orig = copy_of(k);

		if (!orig->size)
			continue;
		memcpy(buf, orig, orig->size);
		h->type = PERF_RECORD_SAMPLE;
		CHECK(parse(k, h, h->size) == -EINVAL);
	}
}

/* MMAP2 flagged as carrying a build-id with a size byte over 20 (seen on 6.18, with
 * the device and inode behind it): neither a build-id nor ids. */
static void test_mmap2_bad_build_id_size(void)
{
	static uint64_t buf[MAX_REC / 8];
	struct perf_record_mmap2 *e = (void *)buf;
	struct pd_mmap m;

	memcpy(buf, copies[K_MMAP2], copy_of(K_MMAP2)->size);
	CHECK(e->header.misc & PERF_RECORD_MISC_MMAP_BUILD_ID);
	e->build_id_size = 0xfd;
	CHECK(pd_parse_mmap(&e->header, e->header.size, &m) == 0);
	CHECK(m.build_id == NULL);
	CHECK_EQ_U64(m.build_id_size, 0);
	CHECK_EQ_U64(m.maj + m.min + m.ino, 0);
	CHECK_STR(m.filename, "/usr/bin/x");
	/* Size 0: the kernel could not read it; flagged, but empty. */
	e->build_id_size = 0;
	CHECK(pd_parse_mmap(&e->header, e->header.size, &m) == 0);
	CHECK(m.build_id != NULL);
	CHECK_EQ_U64(m.build_id_size, 0);
	/* Without the flag the same bytes are the device and inode. */
	e->header.misc &= ~PERF_RECORD_MISC_MMAP_BUILD_ID;
	e->maj = 8;
	e->min = 1;
	e->ino = 1234;
	CHECK(pd_parse_mmap(&e->header, e->header.size, &m) == 0);
	CHECK(m.build_id == NULL);
	CHECK_EQ_U64(m.maj, 8);
	CHECK_EQ_U64(m.min, 1);
	CHECK_EQ_U64(m.ino, 1234);
}

/* The size byte counts only with PERF_RECORD_MISC_BUILD_ID_SIZE and 1..20. */
static void test_build_id_size_byte(void)
{
	static uint64_t buf[MAX_REC / 8];
	struct perf_record_header_build_id *e = (void *)buf;
	struct pd_header_build_id b;

	memcpy(buf, copies[K_BUILD_ID], copy_of(K_BUILD_ID)->size);
	e->size = 7;
	CHECK(pd_parse_header_build_id(&e->header, e->header.size, &b) == 0);
	CHECK_EQ_U64(b.size, 7);
	e->size = 0;
	CHECK(pd_parse_header_build_id(&e->header, e->header.size, &b) == 0);
	CHECK_EQ_U64(b.size, 20);
	e->size = 21;
	CHECK(pd_parse_header_build_id(&e->header, e->header.size, &b) == 0);
	CHECK_EQ_U64(b.size, 20);
	e->size = 7;
	e->header.misc &= ~PERF_RECORD_MISC_BUILD_ID_SIZE;
	CHECK(pd_parse_header_build_id(&e->header, e->header.size, &b) == 0);
	CHECK_EQ_U64(b.size, 20);
}

/* Records need not be 8-aligned: decoders copy, never cast. */
static void test_unaligned(void)
{
	static uint64_t buf[MAX_REC / 8 + 1];
	const struct perf_event_header *orig = copy_of(K_MMAP2);
	const struct perf_event_header *h = (const void *)((char *)buf + 3);
	struct pd_mmap m;

	memcpy((char *)buf + 3, orig, orig->size);
	CHECK(pd_parse_mmap(h, orig->size, &m) == 0);
	CHECK_EQ_U64(m.start, 0x400000);
	CHECK_STR(m.filename, "/usr/bin/x");
}

int main(void)
{
	int fd = mkstemp(path);

	if (fd < 0)
		return 1;
	close(fd);
	RUN(test_roundtrip);
	RUN(test_truncated);
	RUN(test_oversized);
	RUN(test_unterminated);
	RUN(test_wrong_type);
	RUN(test_mmap2_bad_build_id_size);
	RUN(test_build_id_size_byte);
	RUN(test_unaligned);
	unlink(path);
	return unit_done();
}
