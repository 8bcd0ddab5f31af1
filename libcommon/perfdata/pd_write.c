// SPDX-License-Identifier: Apache-2.0
/*
 * perf.data writer.  File mode lays the file out as
 *
 *	header | data records | feature section table | feature payloads | ids | attrs
 *
 * perf finds the feature table right after the data section (data.offset + data.size)
 * and the attrs through header.attrs, so writing attrs last lets records stream out
 * before we know everything.  Pipe mode writes a 16-byte header, HEADER_ATTR and
 * HEADER_FEATURE records ahead of the first data record, and the rest at close.
 * Output is buffered; the first write error sticks and is returned by every later
 * call, close included.  Compressing, records of kernel types gather into a chunk that
 * goes out as PERF_RECORD_COMPRESSED records (pd_zstd.c) when it is full, at close, and
 * before any record of a user type (HEADER_*...), which stays uncompressed as perf
 * record -z writes them.  FINISHED_ROUND ends the chunk in pipe mode, so a reader has
 * each round as soon as it is written; in a file it goes into the chunk like the
 * records of its round (perf handles it there the same), as fewer, larger chunks
 * compress better.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "perfdata/event.h"
#include "perfdata/pd_priv.h"
#include "perfdata/pd_write.h"
#include "perfdata/pd_zstd.h"

#define WBUF_SIZE (64 * 1024)

/* Sample fields this writer can encode from struct pd_sample. */
#define PD_WRITE_SAMPLE_TYPES                                                                      \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |            \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |                \
	 PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | PERF_SAMPLE_CGROUP)

struct pd_writer {
	struct pa_outfile of;
	bool pipe, keep_old;
	int err;      /* sticky first error */
	bool started; /* pipe: header records are out */
	uint8_t *buf;
	size_t buf_len;
	uint64_t off; /* output offset of the next byte */
	uint64_t data_start;
	struct pd_wattr *attrs;
	size_t nr_attrs;
	struct pd_wfeat feat;
	uint64_t feat_sent[HEADER_FEAT_BITS / 64]; /* pipe: HEADER_FEATURE already out */
	struct pd_zstd_enc *zc;			   /* NULL: not compressing */
	struct pd_buf zin, zout;		   /* the chunk, and its COMPRESSED records */
	/* Record under construction; u64 array for alignment. */
	uint64_t rec[(PD_MAX_RECORD + 1) / 8 + 8];
	size_t wrec_len;
};

static int w_flush(struct pd_writer *w)
{
	int err;

	if (w->err || !w->buf_len)
		return w->err;
	err = pa_write_all(w->of.fd, w->buf, w->buf_len);
	w->buf_len = 0;
	if (err)
		w->err = err;
	return w->err;
}

static int w_emit(struct pd_writer *w, const void *p, size_t n)
{
	if (w->err)
		return w->err;
	w->off += n;
	if (w->buf_len + n > WBUF_SIZE && w_flush(w))
		return w->err;
	if (n >= WBUF_SIZE) {
		int err = pa_write_all(w->of.fd, p, n);

		if (err)
			w->err = err;
		return w->err;
	}
	memcpy(w->buf + w->buf_len, p, n);
	w->buf_len += n;
	return 0;
}

/* The chunk waiting to be compressed, out as COMPRESSED records. */
static int z_flush(struct pd_writer *w)
{
	int err;

	if (w->err || !w->zc || !w->zin.len)
		return w->err;
	w->zout.len = 0;
	err = pd_zstd_enc_chunk(w->zc, w->zin.p, w->zin.len, &w->zout);
	w->zin.len = 0;
	if (!err)
		err = w_emit(w, w->zout.p, w->zout.len);
	if (err && !w->err)
		w->err = err;
	return w->err;
}

/* A finished record, into the chunk when it belongs there (see the top). */
static int w_record(struct pd_writer *w, const void *rec, size_t len)
{
	const struct perf_event_header *h = rec;
	bool chunk = h->type < PERF_RECORD_USER_TYPE_START ||
		     (h->type == PERF_RECORD_FINISHED_ROUND && !w->pipe);

	if (w->err)
		return w->err;
	if (!w->zc || !chunk) {
		z_flush(w);
		return w_emit(w, rec, len);
	}
	if (w->zin.len + len > PD_ZSTD_CHUNK && z_flush(w))
		return w->err;
	pd_buf_put(&w->zin, rec, len);
	if (w->zin.err)
		w->err = w->zin.err;
	return w->err;
}

static int start_pipe(struct pd_writer *w);

/* Record assembly in w->rec. */
static void wrec_begin(struct pd_writer *w, uint32_t type, uint16_t misc)
{
	struct perf_event_header *h = (void *)w->rec;

	/* Header records go out first; they are assembled in w->rec too, so now. */
	if (w->pipe && !w->started && type < PERF_RECORD_USER_TYPE_START)
		start_pipe(w);

	h->type = type;
	h->misc = misc;
	h->size = 0;
	w->wrec_len = sizeof(*h);
}

static void wrec_put(struct pd_writer *w, const void *p, size_t n)
{
	/* Overflow is remembered as wrec_len past the limit and refused by wrec_end. */
	if (w->wrec_len + n > PD_MAX_RECORD) {
		w->wrec_len = PD_MAX_RECORD + 1;
		return;
	}
	if (p)
		memcpy((uint8_t *)w->rec + w->wrec_len, p, n);
	else
		memset((uint8_t *)w->rec + w->wrec_len, 0, n);
	w->wrec_len += n;
}

/* The fixed part of a typed record (event.h) after its header, which wrec_begin wrote. */
static void wrec_fixed(struct pd_writer *w, const void *rec, size_t size)
{
	size_t h = sizeof(struct perf_event_header);

	wrec_put(w, (const uint8_t *)rec + h, size - h);
}

static void rec_u64(struct pd_writer *w, uint64_t v)
{
	wrec_put(w, &v, 8);
}

static void rec_u32x2(struct pd_writer *w, uint32_t a, uint32_t b)
{
	uint32_t v[2] = {a, b};

	wrec_put(w, v, 8);
}

/* NUL-terminated, zero padded to 8 like the kernel's COMM/MMAP names. */
static void wrec_str(struct pd_writer *w, const char *s)
{
	size_t n = strlen(s) + 1;

	wrec_put(w, s, n);
	wrec_put(w, NULL, PERF_ALIGN(n, 8) - n);
}

static void wrec_sid(struct pd_writer *w, const struct pd_sample_id *sid)
{
	static const struct pd_sample_id zero;
	uint64_t t;

	if (!w->nr_attrs || !w->attrs[0].attr.sample_id_all)
		return;
	t = w->attrs[0].attr.sample_type;
	if (!sid)
		sid = &zero;
	if (t & PERF_SAMPLE_TID)
		rec_u32x2(w, sid->pid, sid->tid);
	if (t & PERF_SAMPLE_TIME)
		rec_u64(w, sid->time);
	if (t & PERF_SAMPLE_ID)
		rec_u64(w, sid->id);
	if (t & PERF_SAMPLE_CPU)
		rec_u32x2(w, sid->cpu, 0);
	if (t & PERF_SAMPLE_IDENTIFIER)
		rec_u64(w, sid->id);
}

static int wrec_end(struct pd_writer *w)
{
	struct perf_event_header *h = (void *)w->rec;
	size_t len = PERF_ALIGN(w->wrec_len, 8);

	if (w->err)
		return w->err;
	if (len > PD_MAX_RECORD)
		return -E2BIG;
	wrec_put(w, NULL, len - w->wrec_len);
	h->size = (uint16_t)len;
	return w_record(w, w->rec, len);
}

static int emit_attr_rec(struct pd_writer *w, const struct pd_wattr *a)
{
	wrec_begin(w, PERF_RECORD_HEADER_ATTR, 0);
	wrec_put(w, &a->attr, sizeof(a->attr));
	wrec_put(w, a->ids, a->nr_ids * 8);
	return wrec_end(w);
}

/* HEADER_FEATURE record: header, u64 feat_id, the payload, padded to 8. */
static int emit_feature_rec(struct pd_writer *w, int feat)
{
	struct pd_buf b = {0};
	int err;

	err = pd_wfeat_encode(&w->feat, feat, w->attrs, w->nr_attrs, &b);
	if (!err) {
		wrec_begin(w, PERF_RECORD_HEADER_FEATURE, 0);
		rec_u64(w, (uint64_t)feat);
		wrec_put(w, b.p, b.len);
		err = wrec_end(w);
	}
	pd_buf_free(&b);
	if (!err)
		w->feat_sent[feat / 64] |= 1ULL << (feat % 64);
	return err == -ENOENT ? 0 : err;
}

static bool feat_sent(const struct pd_writer *w, int feat)
{
	return w->feat_sent[feat / 64] & (1ULL << (feat % 64));
}

/* Pipe mode: everything perf must know before the first data record. */
static int start_pipe(struct pd_writer *w)
{
	int err = 0;

	w->started = true;
	for (size_t i = 0; i < w->nr_attrs && !err; i++)
		err = emit_attr_rec(w, &w->attrs[i]);
	/* Build-ids travel as HEADER_BUILD_ID records at close (perf cannot read the
	 * BUILD_ID feature from a pipe). */
	for (int f = HEADER_HOSTNAME; f < HEADER_LAST_FEATURE && !err; f++)
		err = emit_feature_rec(w, f);
	if (err && !w->err)
		w->err = err;
	return w->err;
}

struct pd_writer *pd_writer_open(const struct pd_writer_opts *opts)
{
	struct pd_writer *w;
	struct perf_pipe_file_header ph = {PERF_MAGIC2, sizeof(ph)};
	struct perf_file_header fh;
	int err;

	if (!opts || !opts->path) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w || !(w->buf = malloc(WBUF_SIZE))) {
		free(w);
		errno = ENOMEM;
		return NULL;
	}
	w->keep_old = opts->keep_old;
	if (opts->compress_level) {
		w->zc = pd_zstd_enc_new(opts->compress_level);
		if (!w->zc) {
			err = errno;
			free(w->buf);
			free(w);
			errno = err;
			return NULL;
		}
		w->feat.have_comp = true;
		w->feat.comp = (struct pd_comp_feat){.type = PD_COMP_ZSTD,
						     .level = (uint32_t)opts->compress_level,
						     .mmap_len = PD_ZSTD_CHUNK};
	}
	err = pa_outfile_open(&w->of, opts->path);
	if (err) {
		pd_zstd_enc_free(w->zc);
		free(w->buf);
		free(w);
		errno = -err;
		return NULL;
	}
	w->pipe = opts->pipe || !w->of.path;
	if (!w->pipe) {
		struct stat st;

		/* stdout is handled above; a temp file is always seekable, but keep the
		 * rule in one place should pa_outfile ever hand out something else. */
		if (fstat(w->of.fd, &st) == 0 && !S_ISREG(st.st_mode))
			w->pipe = true;
	}
	if (w->pipe) {
		w_emit(w, &ph, sizeof(ph));
	} else {
		/* Placeholder, rewritten at close with the final sections. */
		memset(&fh, 0, sizeof(fh));
		w_emit(w, &fh, sizeof(fh));
	}
	w->data_start = w->off;
	return w;
}

/* perf's evlist__valid_sample_type/valid_sample_id_all: ids must sit at the same
 * place in every event's samples and trailers, or perf cannot tell events apart. */
static int check_layout(const struct pd_writer *w, const struct perf_event_attr *a)
{
	const struct perf_event_attr *f;

	if (a->sample_type & ~(uint64_t)PD_WRITE_SAMPLE_TYPES)
		return -EINVAL;
	if (!w->nr_attrs)
		return 0;
	f = &w->attrs[0].attr;
	if (f->sample_id_all != a->sample_id_all)
		return -EINVAL;
	if (pd_sample_id_pos(f->sample_type) != pd_sample_id_pos(a->sample_type) ||
	    pd_sample_id_pos(a->sample_type) < 0)
		return -EINVAL;
	if (a->sample_id_all && (pd_sid_size(f->sample_type) != pd_sid_size(a->sample_type) ||
				 pd_sid_id_pos(f->sample_type) != pd_sid_id_pos(a->sample_type)))
		return -EINVAL;
	return 0;
}

int pd_writer_add_attr(struct pd_writer *w, const struct perf_event_attr *attr, const char *name,
		       const uint64_t *ids, size_t nr_ids)
{
	struct pd_wattr *attrs, *a;
	int err;

	if (w->err)
		return w->err;
	err = check_layout(w, attr);
	if (err)
		return err;
	/* The id list and the whole attr must fit one HEADER_ATTR record. */
	if (nr_ids > (PD_MAX_RECORD - 8 - sizeof(*attr)) / 8)
		return -E2BIG;
	attrs = realloc(w->attrs, (w->nr_attrs + 1) * sizeof(*attrs));
	if (!attrs)
		return -ENOMEM;
	w->attrs = attrs;
	a = &attrs[w->nr_attrs];
	memset(a, 0, sizeof(*a));
	a->attr = *attr;
	a->attr.size = sizeof(a->attr);
	a->name = name ? strdup(name) : pd_default_evname(attr);
	a->ids = malloc((nr_ids ? nr_ids : 1) * 8);
	if (!a->name || !a->ids) {
		free(a->name);
		free(a->ids);
		return -ENOMEM;
	}
	memcpy(a->ids, ids, nr_ids * 8);
	a->nr_ids = nr_ids;
	w->nr_attrs++;
	/* A late event in pipe mode is announced before any of its samples. */
	if (w->pipe && w->started) {
		err = emit_attr_rec(w, a);
		if (err)
			return err;
	}
	return (int)(w->nr_attrs - 1);
}

int pd_write_raw(struct pd_writer *w, const void *rec)
{
	const struct perf_event_header *h = rec;

	if (w->err)
		return w->err;
	if (h->size < sizeof(*h))
		return -EINVAL;
	wrec_begin(w, h->type, h->misc);
	wrec_put(w, h + 1, h->size - sizeof(*h));
	return wrec_end(w);
}

int pd_write_sample(struct pd_writer *w, int evidx, const struct pd_sample *s)
{
	uint64_t t;

	if (evidx < 0 || (size_t)evidx >= w->nr_attrs)
		return -EINVAL;
	t = w->attrs[evidx].attr.sample_type;
	wrec_begin(w, PERF_RECORD_SAMPLE, s->misc);
	if (t & PERF_SAMPLE_IDENTIFIER)
		rec_u64(w, s->id);
	if (t & PERF_SAMPLE_IP)
		rec_u64(w, s->ip);
	if (t & PERF_SAMPLE_TID)
		rec_u32x2(w, s->pid, s->tid);
	if (t & PERF_SAMPLE_TIME)
		rec_u64(w, s->time);
	if (t & PERF_SAMPLE_ADDR)
		rec_u64(w, s->addr);
	if (t & PERF_SAMPLE_ID)
		rec_u64(w, s->id);
	if (t & PERF_SAMPLE_CPU)
		rec_u32x2(w, s->cpu, 0);
	if (t & PERF_SAMPLE_PERIOD)
		rec_u64(w, s->period);
	if (t & PERF_SAMPLE_CALLCHAIN) {
		if (s->nr_ips > PD_MAX_RECORD / 8)
			return -E2BIG;
		rec_u64(w, s->nr_ips);
		wrec_put(w, s->ips, s->nr_ips * 8);
	}
	if (t & PERF_SAMPLE_RAW) {
		/* The kernel pads the raw blob so that u32 size + data ends 8-aligned and
		 * stores the padded size; perf checks that alignment. */
		uint32_t sz;

		if (s->raw_size > PD_MAX_RECORD)
			return -E2BIG;
		sz = (uint32_t)(PERF_ALIGN(s->raw_size + 4, 8) - 4);
		wrec_put(w, &sz, 4);
		wrec_put(w, s->raw, s->raw_size);
		wrec_put(w, NULL, sz - s->raw_size);
	}
	/* After BRANCH_STACK..PHYS_ADDR, which this writer does not encode. */
	if (t & PERF_SAMPLE_CGROUP)
		rec_u64(w, s->cgroup);
	return wrec_end(w);
}

int pd_write_comm(struct pd_writer *w, uint32_t pid, uint32_t tid, const char *comm, bool exec,
		  const struct pd_sample_id *sid)
{
	struct perf_record_comm r = {.pid = pid, .tid = tid};
	char name[16];

	/* The kernel's TASK_COMM_LEN; perf expects no more. */
	snprintf(name, sizeof(name), "%s", comm);
	wrec_begin(w, PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0);
	wrec_fixed(w, &r, sizeof(r));
	wrec_str(w, name);
	wrec_sid(w, sid);
	return wrec_end(w);
}

int pd_write_mmap(struct pd_writer *w, uint16_t cpumode, uint32_t pid, uint32_t tid, uint64_t start,
		  uint64_t len, uint64_t pgoff, const char *filename,
		  const struct pd_sample_id *sid)
{
	struct perf_record_mmap r = {
		.pid = pid, .tid = tid, .start = start, .len = len, .pgoff = pgoff};

	wrec_begin(w, PERF_RECORD_MMAP, cpumode & PERF_RECORD_MISC_CPUMODE_MASK);
	wrec_fixed(w, &r, sizeof(r));
	wrec_str(w, filename);
	wrec_sid(w, sid);
	return wrec_end(w);
}

int pd_write_mmap2(struct pd_writer *w, uint16_t cpumode, uint32_t pid, uint32_t tid,
		   uint64_t start, uint64_t len, uint64_t pgoff, uint32_t prot, uint32_t flags,
		   const uint8_t *build_id, size_t build_id_size, const char *filename,
		   const struct pd_sample_id *sid)
{
	uint16_t misc = cpumode & PERF_RECORD_MISC_CPUMODE_MASK;
	struct perf_record_mmap2 r = {.pid = pid,
				      .tid = tid,
				      .start = start,
				      .len = len,
				      .pgoff = pgoff,
				      .prot = prot,
				      .flags = flags};

	if (build_id_size > BUILD_ID_SIZE)
		return -EINVAL;
	if (build_id && build_id_size) {
		/* The build-id takes the place of maj..ino_generation. */
		misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
		r.build_id_size = (uint8_t)build_id_size;
		memcpy(r.build_id, build_id, build_id_size);
	}
	wrec_begin(w, PERF_RECORD_MMAP2, misc);
	wrec_fixed(w, &r, sizeof(r));
	wrec_str(w, filename);
	wrec_sid(w, sid);
	return wrec_end(w);
}

int pd_write_task(struct pd_writer *w, uint32_t type, uint32_t pid, uint32_t ppid, uint32_t tid,
		  uint32_t ptid, uint64_t time, const struct pd_sample_id *sid)
{
	struct perf_record_fork r = {
		.pid = pid, .ppid = ppid, .tid = tid, .ptid = ptid, .time = time};

	if (type != PERF_RECORD_FORK && type != PERF_RECORD_EXIT)
		return -EINVAL;
	wrec_begin(w, type, 0);
	wrec_fixed(w, &r, sizeof(r));
	wrec_sid(w, sid);
	return wrec_end(w);
}

int pd_write_lost(struct pd_writer *w, uint64_t id, uint64_t lost, const struct pd_sample_id *sid)
{
	struct perf_record_lost r = {.id = id, .lost = lost};

	wrec_begin(w, PERF_RECORD_LOST, 0);
	wrec_fixed(w, &r, sizeof(r));
	wrec_sid(w, sid);
	return wrec_end(w);
}

int pd_write_lost_samples(struct pd_writer *w, uint64_t lost, const struct pd_sample_id *sid)
{
	struct perf_record_lost_samples r = {.lost = lost};

	wrec_begin(w, PERF_RECORD_LOST_SAMPLES, 0);
	wrec_fixed(w, &r, sizeof(r));
	wrec_sid(w, sid);
	return wrec_end(w);
}

int pd_write_cgroup(struct pd_writer *w, uint64_t id, const char *path,
		    const struct pd_sample_id *sid)
{
	return pd_write_cgroup_labels(w, id, path, NULL, 0, sid);
}

int pd_write_cgroup_labels(struct pd_writer *w, uint64_t id, const char *path, const char *labels,
			   size_t len, const struct pd_sample_id *sid)
{
	struct perf_record_cgroup r = {.id = id};
	size_t n;

	if (!path ||
	    (len && (len < sizeof(PD_CGROUP_LABELS) + 1 || labels[len - 1] || labels[len - 2] ||
		     memcmp(labels, PD_CGROUP_LABELS, sizeof(PD_CGROUP_LABELS)))))
		return -EINVAL;
	wrec_begin(w, PERF_RECORD_CGROUP, 0);
	wrec_fixed(w, &r, sizeof(r));
	n = strlen(path) + 1;
	wrec_put(w, path, n);
	wrec_put(w, labels, len);
	wrec_put(w, NULL, PERF_ALIGN(n + len, 8) - n - len);
	wrec_sid(w, sid);
	return wrec_end(w);
}

int pd_write_finished_round(struct pd_writer *w)
{
	int err;

	wrec_begin(w, PERF_RECORD_FINISHED_ROUND, 0);
	err = wrec_end(w);
	/* A pipe's reader (perf-agent's windows, a live report) gets each round whole
	 * when it ends, not when 64 KiB have piled up: seconds, at a low sample rate. */
	if (err || !w->pipe)
		return err;
	return w_flush(w);
}

uint64_t pd_writer_data_size(const struct pd_writer *w)
{
	return w->off - w->data_start;
}

int pd_writer_flush(struct pd_writer *w)
{
	if (!z_flush(w))
		w_flush(w);
	return w->err;
}

int pd_writer_zstd_stats(const struct pd_writer *w, uint64_t *in, uint64_t *out)
{
	if (!w->zc)
		return -ENOENT;
	pd_zstd_enc_stats(w->zc, in, out);
	return 0;
}

/* File mode tail: feature table + payloads, ids, attrs, then the real header. */
static int finish_file(struct pd_writer *w)
{
	struct perf_file_header fh;
	struct perf_file_section table[HEADER_LAST_FEATURE];
	struct pd_buf payload = {0};
	struct perf_file_attr *fa = NULL;
	size_t nf = 0;
	uint64_t base;
	int err = 0;

	if (z_flush(w))
		return w->err;
	if (w->zc) {
		uint64_t in, out;

		/* perf's comp_ratio: bytes in over bytes out, rounded. */
		pd_zstd_enc_stats(w->zc, &in, &out);
		w->feat.comp.ratio = out ? (uint32_t)((double)in / out + 0.5) : 0;
	}
	memset(&fh, 0, sizeof(fh));
	fh.magic = PERF_MAGIC2;
	fh.size = sizeof(fh);
	fh.attr_size = sizeof(struct perf_file_attr);
	fh.data.offset = w->data_start;
	fh.data.size = w->off - w->data_start;
	for (int f = 1; f < HEADER_LAST_FEATURE; f++)
		if (pd_wfeat_has(&w->feat, f, w->nr_attrs))
			nf++;
	base = w->off + nf * sizeof(table[0]);
	nf = 0;
	for (int f = 1; f < HEADER_LAST_FEATURE && !err; f++) {
		size_t at = payload.len;

		if (!pd_wfeat_has(&w->feat, f, w->nr_attrs))
			continue;
		err = pd_wfeat_encode(&w->feat, f, w->attrs, w->nr_attrs, &payload);
		pd_buf_pad(&payload, 8);
		err = err ? err : payload.err;
		table[nf].offset = base + at;
		table[nf].size = payload.len - at;
		nf++;
		fh.adds_features[f / 64] |= 1ULL << (f % 64);
	}
	if (!err)
		err = w_emit(w, table, nf * sizeof(table[0]));
	if (!err)
		err = w_emit(w, payload.p, payload.len);
	pd_buf_free(&payload);
	if (!err && w->nr_attrs && !(fa = calloc(w->nr_attrs, sizeof(*fa))))
		err = -ENOMEM;
	for (size_t i = 0; i < w->nr_attrs && !err; i++) {
		fa[i].attr = w->attrs[i].attr;
		fa[i].ids.offset = w->off;
		fa[i].ids.size = w->attrs[i].nr_ids * 8;
		err = w_emit(w, w->attrs[i].ids, fa[i].ids.size);
	}
	fh.attrs.offset = w->off;
	fh.attrs.size = w->nr_attrs * sizeof(*fa);
	if (!err && w->nr_attrs)
		err = w_emit(w, fa, fh.attrs.size);
	free(fa);
	if (!err)
		err = w_flush(w);
	if (!err && pwrite(w->of.fd, &fh, sizeof(fh), 0) != (ssize_t)sizeof(fh))
		err = errno ? -errno : -EIO;
	return err;
}

static int finish_pipe(struct pd_writer *w)
{
	struct pd_buf b = {0};
	struct {
		struct perf_event_header h;
		uint64_t feat;
	} last = {{PERF_RECORD_HEADER_FEATURE, 0, 16}, HEADER_LAST_FEATURE};
	int err = z_flush(w);

	if (!err && !w->started)
		err = start_pipe(w);
	for (int f = HEADER_HOSTNAME; f < HEADER_LAST_FEATURE && !err; f++)
		if (!feat_sent(w, f))
			err = emit_feature_rec(w, f);
	for (size_t i = 0; i < w->feat.nr_bids && !err; i++) {
		b.len = 0;
		err = pd_wfeat_build_id_rec(&w->feat.bids[i], PERF_RECORD_HEADER_BUILD_ID, 8, &b);
		if (!err)
			err = w_emit(w, b.p, b.len);
	}
	pd_buf_free(&b);
	/* perf report --header-only stops reading a pipe at this mark. */
	if (!err)
		err = w_emit(w, &last, sizeof(last));
	if (!err)
		err = w_flush(w);
	return err;
}

static void writer_free(struct pd_writer *w)
{
	for (size_t i = 0; i < w->nr_attrs; i++) {
		free(w->attrs[i].name);
		free(w->attrs[i].ids);
	}
	free(w->attrs);
	pd_wfeat_free(&w->feat);
	pd_zstd_enc_free(w->zc);
	pd_buf_free(&w->zin);
	pd_buf_free(&w->zout);
	free(w->buf);
	free(w);
}

int pd_writer_close(struct pd_writer *w)
{
	int err = w->err;

	if (!err)
		err = w->pipe ? finish_pipe(w) : finish_file(w);
	if (!err)
		err = pa_outfile_commit(&w->of, w->keep_old);
	else
		pa_outfile_abort(&w->of);
	writer_free(w);
	return err;
}

void pd_writer_abort(struct pd_writer *w)
{
	pa_outfile_abort(&w->of);
	writer_free(w);
}

struct pd_wfeat *pd_writer_feat(struct pd_writer *w)
{
	return &w->feat;
}
