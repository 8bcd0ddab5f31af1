// SPDX-License-Identifier: Apache-2.0
/*
 * PERF_RECORD_COMPRESSED: the encoder keeps the promises perf's reader relies on, a
 * compressed file or pipe reads back record for record as the plain one, records split
 * over COMPRESSED records anywhere (as perf's writer splits them) are joined, damaged
 * compressed data gives one error line and never a crash, and (when Linux perf is
 * installed) perf reads such splits too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "perfdata/pd_priv.h"
#include "perfdata/pd_read.h"
#include "perfdata/pd_write.h"
#include "perfdata/pd_zstd.h"
#include "unit.h"

static char dir[] = "/tmp/pa-test-pd-zstd.XXXXXX";
static char plain_path[256], zfile_path[256], zpipe_path[256], ppipe_path[256];

static const uint64_t ids[] = {7};
#define NSAMPLES 30000

static struct perf_event_attr mkattr(void)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.size = sizeof(a);
	a.sample_period = 1000000;
	a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			PERF_SAMPLE_CALLCHAIN;
	a.sample_id_all = 1;
	a.mmap = a.comm = a.task = a.mmap2 = 1;
	return a;
}

/* xorshift: deterministic, and random enough that some stacks do not compress. */
static uint64_t rnd_state = 88172645463325252ULL;
static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* Samples over a few stacks (every rand_every-th one random), side-band between them,
 * a round every round_every samples (0: one at the end): several chunks' worth, so
 * files and pipes both carry many COMPRESSED records. */
static int write_capture(const char *path, bool pipe, int level, int round_every, int rand_every)
{
	struct pd_writer_opts o = {.path = path, .pipe = pipe, .compress_level = level};
	struct perf_event_attr a = mkattr();
	struct pd_writer *w = pd_writer_open(&o);
	uint64_t ips[64];
	int err = 0;

	if (!w)
		return -errno;
	rnd_state = 88172645463325252ULL;
	err |= pd_writer_add_attr(w, &a, "cpu-clock", ids, 1) < 0;
	err |= pd_writer_set_host_features(w);
	err |= pd_write_comm(w, 10, 10, "work", true, NULL);
	err |= pd_write_mmap2(w, PERF_RECORD_MISC_USER, 10, 10, 0x400000, 0x10000, 0, 5, 2, NULL, 0,
			      "/bin/work", NULL);
	for (int i = 0; i < NSAMPLES && !err; i++) {
		struct pd_sample s = {.id = 7,
				      .pid = 10,
				      .tid = 10 + i % 3,
				      .time = 1000000ULL * i,
				      .cpu = i % 2,
				      .period = 1000000 + rnd() % 1000,
				      .misc = PERF_RECORD_MISC_USER,
				      .ips = ips};
		uint64_t depth = 4 + i % 23, stack = i % 7;

		ips[0] = PERF_CONTEXT_USER;
		for (uint64_t d = 1; d <= depth; d++)
			ips[d] = i % rand_every == 0 ? rnd() : 0x400000 + 0x100 * stack + 0x10 * d;
		s.nr_ips = depth + 1;
		s.ip = ips[1];
		err |= pd_write_sample(w, 0, &s);
		if (round_every && i % round_every == round_every - 1)
			err |= pd_write_finished_round(w);
		if (i % 4000 == 0)
			err |= pd_write_comm(w, 10, 10 + i % 3, "work", false, NULL);
	}
	err |= pd_write_finished_round(w);
	if (err) {
		pd_writer_abort(w);
		return -EIO;
	}
	return pd_writer_close(w);
}

/* A file's records of kernel types and its rounds, concatenated, as a reader hands them
 * out (unordered); *nz: COMPRESSED records it read.  NULL on a read error. */
static uint8_t *records_of(const char *path, size_t *len, uint64_t *nz, char *err, size_t errlen)
{
	struct pd_reader *r = pd_reader_open(path, err, errlen);
	struct pd_buf b = {0};
	struct pd_event ev;
	int n;

	if (!r)
		return NULL;
	while ((n = pd_reader_next(r, &ev)) > 0)
		if (ev.hdr->type < PERF_RECORD_USER_TYPE_START ||
		    ev.hdr->type == PERF_RECORD_FINISHED_ROUND)
			pd_buf_put(&b, ev.hdr, ev.hdr->size);
	if (n < 0)
		snprintf(err, errlen, "%s", pd_reader_error(r));
	*nz = pd_reader_nr_compressed(r);
	pd_reader_close(r);
	*len = b.len;
	if (n < 0)
		pd_buf_free(&b);
	return n < 0 ? NULL : b.p;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	struct pd_buf b = {0};
	uint8_t chunk[65536];
	size_t n;

	while (f && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		pd_buf_put(&b, chunk, n);
	if (f)
		fclose(f);
	*len = b.len;
	return b.p;
}

static void write_bytes(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "w");

	CHECK(f && fwrite(p, 1, n, f) == n);
	if (f)
		fclose(f);
}

static void check_one_line(const char *err)
{
	CHECK(err[0] != 0);
	CHECK(strchr(err, '\n') == NULL);
}

/* Walk a stream's records (from off) and count those of type. */
static size_t count_type(const uint8_t *p, size_t len, size_t off, uint32_t type, size_t *max)
{
	size_t n = 0;

	*max = 0;
	while (off + sizeof(struct perf_event_header) <= len) {
		struct perf_event_header h;

		memcpy(&h, p + off, sizeof(h));
		if (h.size < sizeof(h))
			break;
		if (h.type == type) {
			n++;
			*max = h.size > *max ? h.size : *max;
		}
		off += h.size;
	}
	return n;
}

/* Each COMPRESSED record fits a u16 size, decompresses to 1..chunk bytes, and the
 * stream gives back what went in, over chunks of very different compressibility. */
static void test_encoder_promises(void)
{
	struct pd_zstd_enc *z = pd_zstd_enc_new(1);
	struct pd_zstd_dec *d = pd_zstd_dec_new(PD_ZSTD_CHUNK);
	struct pd_buf in = {0}, out = {0}, back = {0};
	size_t sizes[] = {8, 4096, PD_ZSTD_CHUNK, 100000, PD_ZSTD_CHUNK - 8, 70000};
	char err[128];

	CHECK(z && d);
	if (!z || !d)
		return;
	for (size_t c = 0; c < sizeof(sizes) / sizeof(sizes[0]); c++) {
		size_t off = 0;

		/* Records of 8..65528 bytes; odd chunks random (incompressible). */
		in.len = out.len = 0;
		while (in.len < sizes[c]) {
			size_t left = sizes[c] - in.len, sz = 8 * (1 + rnd() % 8191);
			struct perf_event_header h = {PERF_RECORD_SAMPLE, 0, 0};

			if (c == 5 && in.len == 0)
				sz = 65528; /* larger than a piece: split between pieces */
			if (sz > left)
				sz = left;
			h.size = (uint16_t)sz;
			pd_buf_put(&in, &h, sizeof(h));
			for (size_t i = sizeof(h); i < sz; i += 8) {
				uint64_t v = c % 2 ? rnd() : i % 64;

				pd_buf_put(&in, &v, 8);
			}
		}
		CHECK(pd_zstd_enc_chunk(z, in.p, in.len, &out) == 0);
		back.len = 0;
		while (off < out.len) {
			struct perf_event_header h;
			const struct perf_event_header *rec;
			size_t before = pd_zstd_dec_pending(d), got = 0;
			int ret;

			memcpy(&h, out.p + off, sizeof(h));
			CHECK(h.type == PERF_RECORD_COMPRESSED);
			CHECK(h.size > sizeof(h) && off + h.size <= out.len);
			CHECK(pd_zstd_dec_feed(d, out.p + off + sizeof(h), h.size - sizeof(h), err,
					       sizeof(err)) == 0);
			while ((ret = pd_zstd_dec_next(d, &rec)) > 0) {
				pd_buf_put(&back, rec, rec->size);
				got += rec->size;
			}
			CHECK(ret == 0);
			got = got + pd_zstd_dec_pending(d) - before;
			CHECK(got >= 1 && got <= in.len);
			off += h.size;
		}
		CHECK(pd_zstd_dec_pending(d) == 0);
		CHECK_EQ_U64(back.len, in.len);
		CHECK(back.len == in.len && !memcmp(back.p, in.p, in.len));
	}
	CHECK(pd_zstd_enc_chunk(z, in.p, 0, &out) == -EINVAL);
	CHECK(pd_zstd_enc_chunk(z, in.p, PD_ZSTD_CHUNK + 1, &out) == -EINVAL);
	CHECK(pd_zstd_enc_new(0) == NULL && errno == EINVAL);
	CHECK(pd_zstd_enc_new(23) == NULL && errno == EINVAL);
	pd_buf_free(&in);
	pd_buf_free(&out);
	pd_buf_free(&back);
	pd_zstd_enc_free(z);
	pd_zstd_dec_free(d);
}

/* The same capture plain and compressed (file and pipe): the same records, in order. */
static void test_roundtrip(void)
{
	const char *paths[] = {zfile_path, zpipe_path};
	uint8_t *plain, *p, *raw;
	size_t plen, len, rlen, max;
	uint64_t nz;
	char err[256] = "";

	CHECK(write_capture(plain_path, false, 0, 500, 101) == 0);
	CHECK(write_capture(zfile_path, false, 1, 500, 101) == 0);
	CHECK(write_capture(zpipe_path, true, 3, 500, 101) == 0);
	plain = records_of(plain_path, &plen, &nz, err, sizeof(err));
	CHECK(plain != NULL && nz == 0);
	for (int i = 0; i < 2; i++) {
		p = records_of(paths[i], &len, &nz, err, sizeof(err));
		if (!p)
			printf("#   %s: %s\n", paths[i], err);
		CHECK(p != NULL);
		CHECK_EQ_U64(len, plen);
		CHECK(p && plain && len == plen && !memcmp(p, plain, len));
		/* Many chunks (file: by size) or rounds (pipe). */
		CHECK(nz >= (i ? 60 : 3));
		raw = slurp(paths[i], &rlen);
		/* Several times smaller, and the stream does hold COMPRESSED records. */
		CHECK(rlen * 4 < plen);
		CHECK(count_type(raw, rlen, i ? 16 : 104, PERF_RECORD_COMPRESSED, &max) == nz);
		CHECK(max <= PD_MAX_RECORD);
		free(raw);
		free(p);
	}
	free(plain);
}

/* One push of perf record -z: data compressed and flushed, the output cut into
 * COMPRESSED records of at most max bytes wherever that falls.  Returns the records. */
static int push_out(ZSTD_CStream *cs, struct pd_buf *data, struct pd_buf *o, size_t max)
{
	ZSTD_inBuffer zin = {data->p, data->len, 0};
	size_t left = 1;
	int n = 0;

	while (data->len && (zin.pos < zin.size || left)) {
		uint8_t buf[65536];
		ZSTD_outBuffer zout = {buf + 8, max - 8, 0};
		struct perf_event_header ch = {PERF_RECORD_COMPRESSED, 0, 0};

		ZSTD_compressStream(cs, &zout, &zin);
		left = ZSTD_flushStream(cs, &zout);
		ch.size = (uint16_t)(8 + zout.pos);
		memcpy(buf, &ch, 8);
		if (zout.pos) {
			pd_buf_put(o, buf, ch.size);
			n++;
		}
	}
	data->len = 0;
	return n;
}

/*
 * perf record -z's way: the records of each push go into one zstd stream, cut into
 * COMPRESSED records anywhere, so records (and zstd blocks) cross from one COMPRESSED
 * record to the next.  From a plain pipe: its header records as they are, the
 * HEADER_FEATURE of COMPRESSED after the attr, pushes of up to push bytes of records
 * (ended early by any record of a user type, which follows them).
 */
static int perf_style_pipe(const char *in, const char *out, size_t max, size_t push,
			   uint32_t mmap_len)
{
	size_t len, off = 16;
	uint8_t *p = slurp(in, &len);
	struct pd_buf o = {0}, data = {0};
	ZSTD_CStream *cs = ZSTD_createCStream();
	int nrec = 0;

	ZSTD_initCStream(cs, 1);
	pd_buf_put(&o, p, 16);
	while (off + 8 <= len) {
		struct perf_event_header h;

		memcpy(&h, p + off, sizeof(h));
		if (h.size < sizeof(h))
			break;
		if (h.type < PERF_RECORD_USER_TYPE_START) {
			pd_buf_put(&data, p + off, h.size);
			if (data.len >= push)
				nrec += push_out(cs, &data, &o, max);
		} else {
			nrec += push_out(cs, &data, &o, max);
			pd_buf_put(&o, p + off, h.size);
		}
		if (h.type == PERF_RECORD_HEADER_ATTR) {
			struct perf_event_header fh = {PERF_RECORD_HEADER_FEATURE, 0, 36};
			uint64_t id = HEADER_COMPRESSED;
			struct pd_comp_feat c = {0, PD_COMP_ZSTD, 1, 0, mmap_len};

			pd_buf_put(&o, &fh, sizeof(fh));
			pd_buf_put(&o, &id, 8);
			pd_buf_put(&o, &c, sizeof(c));
		}
		off += h.size;
	}
	nrec += push_out(cs, &data, &o, max);
	write_bytes(out, o.p, o.len);
	ZSTD_freeCStream(cs);
	pd_buf_free(&o);
	pd_buf_free(&data);
	free(p);
	return nrec;
}

/* COMPRESSED records of a pipe after which a record is left partial (it crosses). */
static int crossings(const char *path)
{
	size_t len, off = 16;
	uint8_t *p = slurp(path, &len);
	struct pd_zstd_dec *d = pd_zstd_dec_new(1 << 20);
	const struct perf_event_header *rec;
	char err[128];
	int n = 0;

	while (d && off + 8 <= len) {
		struct perf_event_header h;

		memcpy(&h, p + off, sizeof(h));
		if (h.size < sizeof(h))
			break;
		if (h.type == PERF_RECORD_COMPRESSED) {
			if (pd_zstd_dec_feed(d, p + off + 8, h.size - 8, err, sizeof(err)))
				break;
			while (pd_zstd_dec_next(d, &rec) > 0)
				;
			n += pd_zstd_dec_pending(d) > 0;
		}
		off += h.size;
	}
	pd_zstd_dec_free(d);
	free(p);
	return n;
}

/*
 * Cut anywhere, even into COMPRESSED records that decompress to nothing (perf refuses
 * those, we need not): zstd hands out whole blocks, so records cross where a block of
 * 128 KiB ends inside one, which pushes larger than that (no rounds) make happen.
 */
static void test_reads_perf_style_splits(void)
{
	static const size_t maxes[] = {9, 100, 4000, 65535};
	char path[300], err[256] = "";
	uint8_t *plain, *p;
	size_t plen, len;
	uint64_t nz;

	snprintf(path, sizeof(path), "%s/split.data", dir);
	for (int rounds = 0; rounds < 2; rounds++) {
		CHECK(write_capture(ppipe_path, true, 0, rounds ? 500 : 0, 101) == 0);
		plain = records_of(ppipe_path, &plen, &nz, err, sizeof(err));
		CHECK(plain != NULL);
		for (size_t i = 0; i < sizeof(maxes) / sizeof(maxes[0]); i++) {
			int n = perf_style_pipe(ppipe_path, path, maxes[i], 300000, 528384);

			CHECK(n > 0);
			if (!rounds && maxes[i] < 65535)
				CHECK(crossings(path) > 0);
			p = records_of(path, &len, &nz, err, sizeof(err));
			if (!p)
				printf("#   max %zu: %s\n", maxes[i], err);
			CHECK(p && plain && len == plen && !memcmp(p, plain, len));
			CHECK_EQ_U64(nz, (uint64_t)n);
			free(p);
		}
		free(plain);
	}
}

/*
 * Linux perf joins records split over COMPRESSED records too (what makes our reader's
 * join necessary and right), when every COMPRESSED record ends at least one zstd block
 * (perf takes one that decompresses to nothing for an error): pushes of 512 KiB that
 * compress about 3:1, cut at 65535 bytes like perf's writer does.
 */
static void test_perf_reads_splits(void)
{
	char path[300], cmd[700], out[64] = "";
	FILE *f;

	if (system("command -v perf >/dev/null 2>&1"))
		SKIP("Linux perf not installed");
	snprintf(path, sizeof(path), "%s/split-perf.data", dir);
	CHECK(write_capture(ppipe_path, true, 0, 0, 3) == 0);
	CHECK(perf_style_pipe(ppipe_path, path, 65535, 512 * 1024, 528384) > 0);
	CHECK(crossings(path) > 0);
	snprintf(cmd, sizeof(cmd),
		 "perf script -F tid -i - <%s 2>/dev/null | grep -c '^ *1[012] *$'", path);
	f = popen(cmd, "r");
	CHECK(f && fgets(out, sizeof(out), f));
	if (f)
		pclose(f);
	CHECK_EQ_U64(strtoull(out, NULL, 10), NSAMPLES);
}

/* What cmd prints on stdout (malloc'd, NUL-terminated). */
static char *run_out(const char *cmd, size_t *len)
{
	FILE *f = popen(cmd, "r");
	struct pd_buf b = {0};
	char chunk[65536];
	size_t n;

	while (f && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		pd_buf_put(&b, chunk, n);
	if (f)
		pclose(f);
	pd_buf_put(&b, "", 1);
	*len = b.len - 1;
	return (char *)b.p;
}

/* perf script prints our compressed file and pipe exactly as the plain ones: every
 * sample, in the same order, with its call chain (printed for pipes only). */
static void test_perf_reads_ours(void)
{
	const char *fields = "-F tid,cpu,time,ip,period";
	const char *paths[4] = {plain_path, zfile_path, ppipe_path, zpipe_path};
	char cmd[4][600];
	char *out[4];
	size_t len[4];

	if (system("command -v perf >/dev/null 2>&1"))
		SKIP("Linux perf not installed");
	CHECK(write_capture(ppipe_path, true, 0, 500, 101) == 0);
	for (int i = 0; i < 4; i++) {
		snprintf(cmd[i], sizeof(cmd[i]), "perf script %s -i %s 2>&1", fields, paths[i]);
		out[i] = run_out(cmd[i], &len[i]);
	}
	for (int i = 0; i < 4; i += 2) {
		CHECK(len[i] > NSAMPLES * 30);
		if (len[i + 1] != len[i] || memcmp(out[i + 1], out[i], len[i]))
			printf("#   '%s' differs from the plain one's (%zu vs %zu bytes): %.200s\n",
			       cmd[i + 1], len[i + 1], len[i], out[i + 1]);
		CHECK(len[i + 1] == len[i] && !memcmp(out[i + 1], out[i], len[i]));
	}
	for (int i = 0; i < 4; i++)
		free(out[i]);
}

/* Push bytes of records (made by fill) as one COMPRESSED record in a pipe, then read. */
static int read_crafted(void (*fill)(struct pd_buf *), uint32_t mmap_len, char *err, size_t errlen)
{
	char path[300];
	struct pd_buf data = {0}, o = {0};
	struct perf_pipe_file_header ph = {PERF_MAGIC2, sizeof(ph)};
	struct perf_event_attr a = mkattr();
	struct perf_event_header ah = {PERF_RECORD_HEADER_ATTR, 0, 8 + sizeof(a) + 8};
	struct perf_event_header fh = {PERF_RECORD_HEADER_FEATURE, 0, 36};
	struct pd_comp_feat c = {0, PD_COMP_ZSTD, 1, 0, mmap_len};
	uint64_t feat = HEADER_COMPRESSED;
	struct perf_event_header ch = {PERF_RECORD_COMPRESSED, 0, 0};
	size_t cap;
	uint8_t *z;
	int nrec;

	fill(&data);
	cap = ZSTD_compressBound(data.len);
	z = malloc(cap);
	cap = ZSTD_compress(z, cap, data.p, data.len, 1);
	pd_buf_put(&o, &ph, sizeof(ph));
	pd_buf_put(&o, &ah, sizeof(ah));
	pd_buf_put(&o, &a, sizeof(a));
	pd_buf_put(&o, ids, 8);
	if (mmap_len) {
		pd_buf_put(&o, &fh, sizeof(fh));
		pd_buf_put(&o, &feat, 8);
		pd_buf_put(&o, &c, sizeof(c));
	}
	ch.size = (uint16_t)(8 + cap);
	CHECK(8 + cap <= PD_MAX_RECORD);
	pd_buf_put(&o, &ch, 8);
	pd_buf_put(&o, z, cap);
	snprintf(path, sizeof(path), "%s/crafted.data", dir);
	write_bytes(path, o.p, o.len);
	free(z);
	pd_buf_free(&o);
	pd_buf_free(&data);
	{
		struct pd_reader *r = pd_reader_open(path, err, errlen);
		struct pd_event ev;
		int n;

		if (!r)
			return -1;
		nrec = 0;
		while ((n = pd_reader_next(r, &ev)) > 0)
			nrec++;
		if (n < 0)
			snprintf(err, errlen, "%s", pd_reader_error(r));
		pd_reader_close(r);
		return n < 0 ? -1 : nrec;
	}
}

static void put_comm(struct pd_buf *b, uint16_t size)
{
	uint64_t rec[16] = {0};
	struct perf_event_header *h = (void *)rec;

	h->type = PERF_RECORD_COMM;
	h->size = size;
	memcpy(rec + 2, "comm", 5);
	/* At least the header, whatever it says. */
	pd_buf_put(b, rec, size < 8 ? 8 : size < sizeof(rec) ? size : sizeof(rec));
}

static void fill_many(struct pd_buf *b)
{
	/* 1 MiB of COMM records: compresses to a few KB, decompresses past 528384. */
	for (int i = 0; i < (1 << 20) / 48; i++)
		put_comm(b, 48);
}

static void fill_truncated(struct pd_buf *b)
{
	put_comm(b, 48);
	put_comm(b, 48);
	b->len -= 8; /* the last record ends past the data */
}

static void fill_bad_size(struct pd_buf *b)
{
	put_comm(b, 48);
	put_comm(b, 4);
}

static void fill_nested(struct pd_buf *b)
{
	struct perf_event_header h = {PERF_RECORD_COMPRESSED, 0, 16};
	uint64_t junk = 0;

	put_comm(b, 48);
	pd_buf_put(b, &h, 8);
	pd_buf_put(b, &junk, 8);
}

static void fill_ok(struct pd_buf *b)
{
	for (int i = 0; i < 100; i++)
		put_comm(b, 48);
}

/* Damaged compressed data: one error line naming the problem, never a crash. */
static void test_bad_compressed(void)
{
	char err[256];
	struct {
		void (*fill)(struct pd_buf *);
		uint32_t mmap_len;
		const char *want;
	} cases[] = {
		{fill_ok, 528384, NULL},
		{fill_ok, 0, NULL}, /* no HEADER_COMPRESSED: a default bound */
		{fill_many, 528384, "decompresses to more than 528384 bytes"},
		{fill_ok, 4096, "decompresses to more than 4096 bytes"},
		{fill_truncated, 528384, "truncated record at the end of the compressed data"},
		{fill_bad_size, 528384, "bad record size"},
		{fill_nested, 528384, "compressed record inside the compressed record"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int n;

		err[0] = 0;
		n = read_crafted(cases[i].fill, cases[i].mmap_len, err, sizeof(err));
		if (!cases[i].want) {
			CHECK(n >= 100);
			continue;
		}
		if (!strstr(err, cases[i].want))
			printf("#   case %zu: got '%s'\n", i, err);
		CHECK(n < 0);
		CHECK(strstr(err, cases[i].want) != NULL);
		check_one_line(err);
	}
}

/* Corrupt zstd bytes, every truncation, random damage: an error or fewer records. */
static void test_damaged_files(void)
{
	const char *srcs[] = {zfile_path, zpipe_path};
	char path[300], err[256];

	snprintf(path, sizeof(path), "%s/damaged.data", dir);
	for (int s = 0; s < 2; s++) {
		size_t len, off = s ? 16 : 104, plen;
		uint8_t *p = slurp(srcs[s], &len), *q = malloc(len);
		uint64_t nz;

		/* The first COMPRESSED record's zstd magic number: corrupt data. */
		while (off + 8 <= len) {
			struct perf_event_header h;

			memcpy(&h, p + off, sizeof(h));
			if (h.type == PERF_RECORD_COMPRESSED || h.size < 8)
				break;
			off += h.size;
		}
		memcpy(q, p, len);
		q[off + 8] ^= 0xff;
		write_bytes(path, q, len);
		err[0] = 0;
		CHECK(records_of(path, &plen, &nz, err, sizeof(err)) == NULL);
		CHECK(strstr(err, "corrupt zstd data") != NULL);
		check_one_line(err);
		/* Truncations (every 997th length), then bytes flipped at random. */
		for (size_t cut = 0; cut < len; cut += 997) {
			uint8_t *r;

			write_bytes(path, p, cut);
			r = records_of(path, &plen, &nz, err, sizeof(err));
			free(r);
		}
		for (int k = 0; k < 200; k++) {
			uint8_t *r;

			memcpy(q, p, len);
			for (int j = 0; j < 4; j++)
				q[off + rnd() % (len - off)] ^= (uint8_t)(1 + rnd() % 255);
			write_bytes(path, q, len);
			r = records_of(path, &plen, &nz, err, sizeof(err));
			free(r);
		}
		free(p);
		free(q);
	}
}

static void test_writer_rejects_bad_level(void)
{
	char path[300];
	struct pd_writer_opts o = {.path = path, .compress_level = 23};

	snprintf(path, sizeof(path), "%s/bad-level.data", dir);
	errno = 0;
	CHECK(pd_writer_open(&o) == NULL && errno == EINVAL);
	o.compress_level = -1;
	CHECK(pd_writer_open(&o) == NULL && errno == EINVAL);
	CHECK(access(path, F_OK) != 0);
}

int main(void)
{
	char cmd[300];

	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	snprintf(plain_path, sizeof(plain_path), "%s/plain.data", dir);
	snprintf(zfile_path, sizeof(zfile_path), "%s/z.data", dir);
	snprintf(zpipe_path, sizeof(zpipe_path), "%s/z.pipe", dir);
	snprintf(ppipe_path, sizeof(ppipe_path), "%s/plain.pipe", dir);
	RUN(test_encoder_promises);
	RUN(test_roundtrip);
	RUN(test_perf_reads_ours);
	RUN(test_reads_perf_style_splits);
	RUN(test_perf_reads_splits);
	RUN(test_bad_compressed);
	RUN(test_damaged_files);
	RUN(test_writer_rejects_bad_level);
	if (getenv("PA_TEST_KEEP")) {
		printf("# kept %s\n", dir);
	} else {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			printf("# could not remove %s\n", dir);
	}
	return unit_done();
}
