// SPDX-License-Identifier: Apache-2.0
/*
 * perf.data reader.  File mode: header, attrs and features are read with pread at
 * open, records stream from the data section.  Pipe mode: everything streams, and
 * HEADER_ATTR / HEADER_FEATURE / HEADER_BUILD_ID records fill the same tables as
 * they arrive.  The records in PERF_RECORD_COMPRESSED ones (perf record -z) are
 * decompressed (pd_zstd.c) and handed out in their place.  Every size read from the
 * input is checked before use; the first problem ends reading with one line in r->err.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "perfdata/pd_priv.h"
#include "perfdata/pd_read.h"
#include "perfdata/pd_zstd.h"

#define RBUF_SIZE	 (256 * 1024)
#define MAX_FEATURE_SIZE (64ULL << 20)
#define MAX_ATTRS	 65536
#define MAX_ATTR_SIZE	 4096	   /* perf_event_attr is 136 bytes in 6.x; room to grow */
#define MAX_IDS		 (1 << 21) /* per event: one per CPU and thread it was opened on */
/* Most one COMPRESSED record may decompress to: HEADER_COMPRESSED's mmap_len, this
 * without the feature (perf cannot read that at all), never more than the cap. */
#define ZSTD_DEFAULT_OUT (16u << 20)
#define ZSTD_MAX_OUT	 (256u << 20)

/* PERFFILE, perf's pre-2010 magic, and PERFILE2 written big endian. */
#define PERF_MAGIC1	    0x454c494652455050ULL
#define PERF_MAGIC2_SWAPPED 0x50455246494c4532ULL

/* A slot of the id -> event hash table; idx1 is the event's index + 1, 0: empty. */
struct id_ent {
	uint64_t id;
	size_t idx1;
};

struct pd_reader {
	int fd;
	bool own_fd, pipe;
	char *name;
	char err[256];
	int errcode;
	uint64_t data_off, data_size, pos; /* pos: bytes of data consumed */
	const uint8_t *map; /* file mode: the whole file, mapped (NULL: read into buf) */
	size_t map_len;
	size_t map_dropped; /* pages below this offset were handed back */
	size_t map_filled;  /* pages below this offset were faulted in ahead (0: cannot) */
	uint8_t *buf;
	size_t start, end; /* unread bytes are buf[start, end) */
	uint64_t *rec;	   /* aligned copy of a record that is not 8-aligned in buf */
	struct pd_evsel **evsels;
	size_t nr_evsels, cap_evsels;
	struct id_ent *idmap; /* open addressing, at most half full; cap_idmap: power of 2 */
	size_t nr_idmap, cap_idmap;
	uint64_t id_seed; /* ids come from the file: where they land must not be predictable */
	uint64_t nr_unknown_id;
	struct pd_rfeat feat;
	bool ordered, eof;
	struct pd_oqueue oq;
	struct pd_qev *delivered; /* last record released by oq */
	uint64_t last_time;	  /* for records that carry no time */
	struct pd_zstd_dec *zd;	  /* from the first COMPRESSED record on */
	uint64_t zoff;		  /* offset of the last COMPRESSED record */
	uint64_t nr_compressed;
	bool want_ahead;	/* pd_reader_read_ahead: start the thread at the first next */
	struct pd_ahead *ahead; /* the thread reading records, when it runs */
};

static int fail(struct pd_reader *r, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void ahead_stop(struct pd_reader *r);

static int fail(struct pd_reader *r, int code, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (r->errcode)
		return r->errcode;
	n = snprintf(r->err, sizeof(r->err), "%s: ", r->name);
	va_start(ap, fmt);
	vsnprintf(r->err + n, sizeof(r->err) - n, fmt, ap);
	va_end(ap);
	r->errcode = code;
	return code;
}

struct pd_rfeat *pd_reader_feat(struct pd_reader *r)
{
	return &r->feat;
}

/* splitmix64's finalizer over the seeded id. */
static size_t id_slot(const struct pd_reader *r, uint64_t id)
{
	uint64_t x = id ^ r->id_seed;

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return (x ^ (x >> 31)) & (r->cap_idmap - 1);
}

/* Map id to event idx; an id already mapped keeps its first event. */
static void id_put(struct pd_reader *r, uint64_t id, size_t idx)
{
	size_t i = id_slot(r, id);

	for (; r->idmap[i].idx1; i = (i + 1) & (r->cap_idmap - 1))
		if (r->idmap[i].id == id)
			return;
	r->idmap[i] = (struct id_ent){id, idx + 1};
	r->nr_idmap++;
}

/* Room for n more ids, the table rebuilt at twice the size when it would pass half full. */
static int id_reserve(struct pd_reader *r, size_t n)
{
	struct id_ent *old = r->idmap;
	size_t cap = r->cap_idmap ? r->cap_idmap : 64, old_cap = r->cap_idmap;

	while (cap / 2 < r->nr_idmap + n)
		cap *= 2;
	if (cap == old_cap)
		return 0;
	r->idmap = calloc(cap, sizeof(*r->idmap));
	if (!r->idmap) {
		r->idmap = old;
		return -ENOMEM;
	}
	if (!old_cap)
		r->id_seed = pa_now_ns() ^ (uintptr_t)r;
	r->cap_idmap = cap;
	r->nr_idmap = 0;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].idx1)
			id_put(r, old[i].id, old[i].idx1 - 1);
	free(old);
	return 0;
}

/*
 * Events arrive one by one (thousands in a file, one record each in a pipe, between
 * records that look ids up): the array grows geometrically and ids go into a hash
 * table, so no step costs more than the ids it adds.
 */
static int add_evsel(struct pd_reader *r, const void *attr, size_t attr_size, const uint64_t *ids,
		     size_t nr_ids)
{
	struct pd_evsel *e, **v;

	if (r->nr_evsels >= MAX_ATTRS)
		return fail(r, -EINVAL, "more than %d events", MAX_ATTRS);
	if (r->nr_evsels == r->cap_evsels) {
		size_t cap = r->cap_evsels ? 2 * r->cap_evsels : 16;

		v = realloc(r->evsels, cap * sizeof(*v));
		if (!v)
			return fail(r, -ENOMEM, "out of memory");
		r->evsels = v;
		r->cap_evsels = cap;
	}
	if (id_reserve(r, nr_ids))
		return fail(r, -ENOMEM, "out of memory");
	e = calloc(1, sizeof(*e));
	if (!e)
		return fail(r, -ENOMEM, "out of memory");
	memcpy(&e->attr, attr, attr_size < sizeof(e->attr) ? attr_size : sizeof(e->attr));
	e->attr.size = sizeof(e->attr);
	e->ids = malloc((nr_ids ? nr_ids : 1) * 8);
	e->name = pd_default_evname(&e->attr);
	if (!e->ids || !e->name) {
		free(e->ids);
		free(e->name);
		free(e);
		return fail(r, -ENOMEM, "out of memory");
	}
	memcpy(e->ids, ids, nr_ids * 8);
	e->nr_ids = nr_ids;
	e->idx = r->nr_evsels;
	r->evsels[r->nr_evsels++] = e;
	for (size_t i = 0; i < nr_ids; i++)
		id_put(r, ids[i], e->idx);
	return 0;
}

void pd_reader_name_evsel(struct pd_reader *r, const uint64_t *ids, size_t nr_ids, size_t idx,
			  const char *name)
{
	struct pd_evsel *e = NULL;
	char *s;

	if (nr_ids)
		e = (struct pd_evsel *)pd_reader_evsel_by_id(r, ids[0]);
	if (!e && idx < r->nr_evsels && (!nr_ids || r->nr_evsels == 1))
		e = r->evsels[idx];
	if (!e || !name[0] || !(s = strdup(name)))
		return;
	free(e->name);
	e->name = s;
}

/* Exactly len bytes at off, or a message naming what is missing. */
static int pread_exact(struct pd_reader *r, void *p, size_t len, uint64_t off, const char *what)
{
	ssize_t n;
	size_t got = 0;

	while (got < len) {
		n = pread(r->fd, (char *)p + got, len - got, (off_t)(off + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fail(r, -errno, "cannot read %s: %s", what, strerror(errno));
		if (n == 0)
			return fail(r, -EINVAL, "truncated %s (%zu of %zu bytes at offset %llu)",
				    what, got, len, (unsigned long long)off);
		got += n;
	}
	return 0;
}

/*
 * The attrs and their id lists.  perf writes each event's ids once, so together they fit
 * in the file: lists that add up to more (many events pointing at one big list) would
 * cost time and memory quadratic in the file's size, and are refused.
 */
static int read_attrs(struct pd_reader *r, const struct perf_file_header *h, uint64_t file_size)
{
	uint64_t n, ids_total = 0;
	size_t asz;
	uint8_t *a = NULL;
	uint64_t *ids = NULL;
	int err = 0;

	/* attr_size is a divisor below: checked before any use. */
	if (h->attr_size < PERF_ATTR_SIZE_VER0 + sizeof(struct perf_file_section) ||
	    h->attr_size > MAX_ATTR_SIZE + sizeof(struct perf_file_section) || h->attr_size % 8)
		return fail(r, -EINVAL, "unsupported attr_size %llu in header",
			    (unsigned long long)h->attr_size);
	n = h->attrs.size / h->attr_size;
	asz = h->attr_size - sizeof(struct perf_file_section);
	if (h->attrs.size % h->attr_size || n > MAX_ATTRS)
		return fail(r, -EINVAL, "bad attrs section size %llu",
			    (unsigned long long)h->attrs.size);
	if (!n)
		return fail(r, -EINVAL, "no events in the attrs section");
	a = malloc(h->attr_size);
	if (!a)
		return fail(r, -ENOMEM, "out of memory");
	for (uint64_t i = 0; i < n && !err; i++) {
		struct perf_file_section ids_sec;

		err = pread_exact(r, a, h->attr_size, h->attrs.offset + i * h->attr_size,
				  "attrs section");
		if (err)
			break;
		memcpy(&ids_sec, a + asz, sizeof(ids_sec));
		if (ids_sec.size % 8 || ids_sec.size / 8 > MAX_IDS) {
			err = fail(r, -EINVAL, "bad id list of event %llu", (unsigned long long)i);
			break;
		}
		ids_total += ids_sec.size;
		if (ids_total > file_size) {
			err = fail(r, -EINVAL,
				   "id lists of events 0-%llu add up to more than the file (%llu "
				   "bytes): shared or overlapping",
				   (unsigned long long)i, (unsigned long long)file_size);
			break;
		}
		free(ids);
		ids = malloc(ids_sec.size + 8);
		if (!ids) {
			err = fail(r, -ENOMEM, "out of memory");
			break;
		}
		err = pread_exact(r, ids, ids_sec.size, ids_sec.offset, "event id list");
		if (!err)
			err = add_evsel(r, a, asz, ids, ids_sec.size / 8);
	}
	free(a);
	free(ids);
	return err;
}

static int read_features(struct pd_reader *r, const struct perf_file_header *h, uint64_t file_size)
{
	struct perf_file_section sec;
	uint64_t off = h->data.offset + h->data.size;
	size_t i = 0;

	for (int f = 0; f < HEADER_FEAT_BITS; f++) {
		uint8_t *p;

		if (!(h->adds_features[f / 64] & (1ULL << (f % 64))))
			continue;
		/* A bad table entry loses that feature only; features are optional. */
		if (pread_exact(r, &sec, sizeof(sec), off + i++ * sizeof(sec), "feature table"))
			return r->errcode;
		if (f >= HEADER_LAST_FEATURE || !sec.size || sec.size > MAX_FEATURE_SIZE ||
		    sec.offset > file_size || sec.size > file_size - sec.offset)
			continue;
		p = malloc(sec.size);
		if (!p)
			return fail(r, -ENOMEM, "out of memory");
		if (pread_exact(r, p, sec.size, sec.offset, "feature section")) {
			free(p);
			/* Forget the error: perf, too, reads the data without this feature. */
			r->errcode = 0;
			r->err[0] = 0;
			continue;
		}
		pd_rfeat_parse(r, f, p, sec.size);
		free(p);
	}
	return 0;
}

static int open_file_mode(struct pd_reader *r, struct perf_file_header *h)
{
	struct stat st;
	int err;

	if (fstat(r->fd, &st) || !S_ISREG(st.st_mode) || lseek(r->fd, 0, SEEK_CUR) < 0)
		return fail(r, -ESPIPE,
			    "file-mode perf.data on a pipe cannot be read (needs seeking); "
			    "pass it as a file (-i FILE) or record in pipe mode");
	err = pread_exact(r, h, h->size, 0, "header");
	if (err)
		return err;
	if (h->size < sizeof(*h))
		memset(h->adds_features, 0, sizeof(h->adds_features));
	if (h->data.offset > (uint64_t)st.st_size || h->data.size > (uint64_t)st.st_size ||
	    h->data.offset + h->data.size > (uint64_t)st.st_size)
		return fail(r, -EINVAL,
			    "truncated data section (file is %llu bytes, header says %llu)",
			    (unsigned long long)st.st_size,
			    (unsigned long long)(h->data.offset + h->data.size));
	err = read_attrs(r, h, (uint64_t)st.st_size);
	if (!err)
		err = read_features(r, h, (uint64_t)st.st_size);
	if (err)
		return err;
	r->data_off = h->data.offset;
	r->data_size = h->data.size;
	/* Records are used where they lie; a file that cannot be mapped is read. */
	if (st.st_size > 0 && (uint64_t)st.st_size <= SIZE_MAX) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, r->fd, 0);

		if (m != MAP_FAILED) {
			r->map = m;
			r->map_len = (size_t)st.st_size;
			madvise(m, r->map_len, MADV_SEQUENTIAL);
			r->map_filled = 1;
		}
	}
	if (lseek(r->fd, (off_t)r->data_off, SEEK_SET) < 0)
		return fail(r, -errno, "cannot seek: %s", strerror(errno));
	return 0;
}

static int read_header(struct pd_reader *r)
{
	struct perf_file_header h;
	ssize_t n;

	memset(&h, 0, sizeof(h));
	n = pa_read_full(r->fd, &h, sizeof(struct perf_pipe_file_header));
	if (n < 0)
		return fail(r, (int)n, "cannot read: %s", strerror((int)-n));
	if (n == 0)
		return fail(r, -EINVAL, "empty file, not a perf.data file");
	if (n >= 8 && h.magic == PERF_MAGIC2_SWAPPED)
		return fail(r, -EINVAL, "big-endian perf.data is not supported");
	if (n >= 8 && h.magic == PERF_MAGIC1)
		return fail(r, -EINVAL, "old PERFFILE format is not supported");
	if (n < 8 || h.magic != PERF_MAGIC2)
		return fail(r, -EINVAL, "not a perf.data file (bad magic)");
	if (n < 16)
		return fail(r, -EINVAL, "truncated header (%zd of 16 bytes)", n);
	if (h.size == sizeof(struct perf_pipe_file_header)) {
		r->pipe = true;
		r->data_size = UINT64_MAX;
		return 0;
	}
	/* 72: an old header without the feature bitmap, which perf still reads. */
	if (h.size != sizeof(h) && h.size != offsetof(struct perf_file_header, adds_features))
		return fail(r, -EINVAL, "unsupported header size %llu (expected %zu)",
			    (unsigned long long)h.size, sizeof(h));
	return open_file_mode(r, &h);
}

struct pd_reader *pd_reader_open(const char *path, char *err, size_t errlen)
{
	struct pd_reader *r = calloc(1, sizeof(*r));
	bool use_stdin = path ? !strcmp(path, "-") : !isatty(STDIN_FILENO);

	if (!path && !use_stdin)
		path = "perf.data";
	if (!r || !(r->buf = malloc(RBUF_SIZE)) || !(r->rec = malloc(PD_MAX_RECORD + 8)) ||
	    !(r->name = strdup(use_stdin ? "stdin" : path))) {
		if (err && errlen)
			snprintf(err, errlen, "out of memory");
		pd_reader_close(r);
		errno = ENOMEM;
		return NULL;
	}
	if (use_stdin) {
		r->fd = STDIN_FILENO;
	} else {
		r->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (r->fd < 0) {
			int e = errno;

			if (err && errlen)
				snprintf(err, errlen, "cannot open %s: %s", path, strerror(e));
			pd_reader_close(r);
			errno = e;
			return NULL;
		}
		r->own_fd = true;
	}
	if (read_header(r)) {
		int e = -r->errcode;

		if (err && errlen)
			snprintf(err, errlen, "%s", r->err);
		pd_reader_close(r);
		errno = e;
		return NULL;
	}
	return r;
}

void pd_reader_close(struct pd_reader *r)
{
	if (!r)
		return;
	if (r->ahead)
		ahead_stop(r);
	if (r->own_fd)
		close(r->fd);
	for (size_t i = 0; i < r->nr_evsels; i++) {
		free(r->evsels[i]->name);
		free(r->evsels[i]->ids);
		free(r->evsels[i]);
	}
	free(r->evsels);
	free(r->idmap);
	/* The delivered record is the queue's; it goes with it. */
	pd_oq_done(&r->oq, r->delivered);
	pd_oq_free(&r->oq);
	if (r->map)
		munmap((void *)r->map, r->map_len);
	pd_rfeat_free(r);
	pd_zstd_dec_free(r->zd);
	free(r->buf);
	free(r->rec);
	free(r->name);
	free(r);
}

/* Make at least want bytes available at buf+start; returns how many are (<= want at EOF). */
static ssize_t fill(struct pd_reader *r, size_t want)
{
	while (r->end - r->start < want) {
		ssize_t n;

		if (r->start) {
			memmove(r->buf, r->buf + r->start, r->end - r->start);
			r->end -= r->start;
			r->start = 0;
		}
		n = read(r->fd, r->buf + r->end, RBUF_SIZE - r->end);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fail(r, -errno, "read error: %s", strerror(errno));
		if (n == 0)
			break;
		r->end += n;
	}
	return (ssize_t)(r->end - r->start);
}

static int pipe_attr(struct pd_reader *r, const struct perf_event_header *h)
{
	const uint8_t *p = (const uint8_t *)(h + 1);
	size_t body = h->size - sizeof(*h);
	uint32_t asz;
	uint64_t ids[8192];
	size_t nr;

	if (body < PERF_ATTR_SIZE_VER0)
		return fail(r, -EINVAL, "HEADER_ATTR record too short (%u bytes)", h->size);
	memcpy(&asz, p + offsetof(struct perf_event_attr, size), 4);
	if (!asz)
		asz = PERF_ATTR_SIZE_VER0;
	/* The ids follow the attr: u64s at an 8-aligned offset. */
	if (asz < PERF_ATTR_SIZE_VER0 || asz > MAX_ATTR_SIZE || asz % 8 || asz > body)
		return fail(r, -EINVAL, "HEADER_ATTR with bad attr size %u (record of %u bytes)",
			    asz, h->size);
	nr = (body - asz) / 8;
	memcpy(ids, p + asz, nr * 8);
	return add_evsel(r, p, asz, ids, nr);
}

static int pipe_feature(struct pd_reader *r, const struct perf_event_header *h)
{
	uint64_t feat;

	if (h->size < sizeof(*h) + 8)
		return fail(r, -EINVAL, "HEADER_FEATURE record too short (%u bytes)", h->size);
	memcpy(&feat, h + 1, 8);
	if (feat > 0 && feat < HEADER_LAST_FEATURE && feat != HEADER_BUILD_ID)
		pd_rfeat_parse(r, (int)feat, (const uint8_t *)h + 16, h->size - 16);
	return 0;
}

/* The evsel a record's id names; with one event, that one. */
static const struct pd_evsel *evsel_for(struct pd_reader *r, uint64_t id, bool have_id)
{
	if (r->nr_evsels == 1)
		return r->evsels[0];
	return have_id ? pd_reader_evsel_by_id(r, id) : NULL;
}

static int decode_sample(struct pd_reader *r, struct pd_event *ev, uint64_t off)
{
	const struct perf_event_header *h = ev->hdr;
	const struct pd_evsel *e;
	int pos;
	uint64_t id = 0;

	if (!r->nr_evsels)
		return fail(r, -EINVAL, "sample at offset %llu before any event description",
			    (unsigned long long)off);
	/* perf's rule: the id sits where the first event's sample_type puts it. */
	pos = pd_sample_id_pos(r->evsels[0]->attr.sample_type);
	if (pos >= 0 && h->size >= sizeof(*h) + 8 * (size_t)(pos + 1))
		memcpy(&id, (const uint8_t *)(h + 1) + 8 * pos, 8);
	e = evsel_for(r, id, pos >= 0);
	if (!e)
		return 1; /* unknown id: counted and skipped, as perf does */
	ev->evsel = e;
	if (pd_parse_sample(e, h, &ev->sample))
		return fail(r, -EINVAL, "malformed sample record at offset %llu (size %u)",
			    (unsigned long long)off, h->size);
	return 0;
}

static void decode_sid(struct pd_reader *r, struct pd_event *ev)
{
	const struct pd_evsel *f;
	uint64_t t;
	int pos;

	if (!r->nr_evsels)
		return;
	f = r->evsels[0];
	t = f->attr.sample_type;
	ev->evsel = f;
	if (!f->attr.sample_id_all || pd_parse_sid(t, ev->hdr, &ev->sid))
		return;
	pos = pd_sid_id_pos(t);
	if (pos >= 0 && r->nr_evsels > 1) {
		const struct pd_evsel *e = pd_reader_evsel_by_id(r, ev->sid.id);

		if (e)
			ev->evsel = e;
	}
}

/* One COMPRESSED record (at off) into the decoder, for read_next to walk. */
static int inflate(struct pd_reader *r, const struct perf_event_header *h, uint64_t off)
{
	const struct pd_rfeat *f = &r->feat;
	char why[128];
	int err;

	if (!r->zd) {
		size_t max = f->have_comp && f->comp.mmap_len ? f->comp.mmap_len : ZSTD_DEFAULT_OUT;

		if (f->have_comp && f->comp.type != PD_COMP_ZSTD)
			return fail(r, -ENOTSUP,
				    "compressed records of type %u (HEADER_COMPRESSED); only zstd "
				    "(1) is known",
				    f->comp.type);
		r->zd = pd_zstd_dec_new(max < ZSTD_MAX_OUT ? max : ZSTD_MAX_OUT);
		if (!r->zd)
			return fail(r, -ENOMEM, "out of memory");
	}
	r->zoff = off;
	r->nr_compressed++;
	err = pd_zstd_dec_feed(r->zd, h + 1, h->size - sizeof(*h), why, sizeof(why));
	if (err)
		return fail(r, err, "compressed record at offset %llu (size %u): %s",
			    (unsigned long long)off, h->size, why);
	return 0;
}

/* The next record still inside what COMPRESSED records decompressed to: 1, 0 or -errno. */
static int next_inflated(struct pd_reader *r, const uint8_t **p)
{
	const struct perf_event_header *h;
	int ret;

	if (!r->zd)
		return 0;
	ret = pd_zstd_dec_next(r->zd, &h);
	if (ret < 0)
		return fail(r, ret,
			    "bad record size (under 8 bytes) in the data of the compressed record "
			    "at offset %llu",
			    (unsigned long long)r->zoff);
	if (ret > 0)
		*p = (const uint8_t *)h;
	return ret;
}

/* End of data: a record started in compressed data must have ended there. */
static int at_end(struct pd_reader *r)
{
	if (r->zd && pd_zstd_dec_pending(r->zd))
		return fail(r, -EINVAL,
			    "truncated record at the end of the compressed data (%zu bytes of it, "
			    "after the compressed record at offset %llu)",
			    pd_zstd_dec_pending(r->zd), (unsigned long long)r->zoff);
	return 0;
}

#define PD_AHEAD 512

static int read_next(struct pd_reader *r, struct pd_event *ev)
{
	struct perf_event_header h;
	uint64_t off;
	const uint8_t *p = NULL;
	bool inflated;
	ssize_t n;
	int err;

again:
	/* Field by field: a memset of the whole event was a rep stos, a tenth of the
	 * reading (the sample is cleared where it is parsed). */
	ev->hdr = NULL;
	ev->evsel = NULL;
	ev->sid = (struct pd_sample_id){0};
	if (r->errcode)
		return r->errcode;
	err = next_inflated(r, &p);
	if (err < 0)
		return err;
	inflated = err;
	if (inflated) {
		/* Offsets in messages: the COMPRESSED record's, as perf reports them. */
		off = r->zoff;
		memcpy(&h, p, sizeof(h));
		if ((uintptr_t)p % 8) {
			memcpy(r->rec, p, h.size);
			p = (const uint8_t *)r->rec;
		}
		goto decode;
	}
	off = r->data_off + r->pos;
	if (r->pos >= r->data_size)
		return at_end(r);
	if (!r->pipe && r->data_size - r->pos < sizeof(h))
		return fail(r, -EINVAL, "truncated record header at offset %llu",
			    (unsigned long long)off);
	if (r->map) {
		p = r->map + off;
		/* In file order: fetch the records a few ahead while this one is decoded
		 * (about 12% off reading 1M samples). */
		if (r->map_len - off > PD_AHEAD)
			__builtin_prefetch(p + PD_AHEAD);
		memcpy(&h, p, sizeof(h));
		if (h.size < sizeof(h))
			return fail(r, -EINVAL, "bad record size %u at offset %llu (type %u)",
				    h.size, (unsigned long long)off, h.type);
		if (h.size > r->data_size - r->pos)
			return fail(r, -EINVAL,
				    "record at offset %llu (type %u, size %u) runs past the end of "
				    "the data section",
				    (unsigned long long)off, h.type, h.size);
		if ((uintptr_t)p % 8) {
			memcpy(r->rec, p, h.size);
			p = (const uint8_t *)r->rec;
		}
		r->pos += h.size;
		goto decode;
	}
	n = fill(r, sizeof(h));
	if (n < 0)
		return (int)n;
	if (n == 0 && r->pipe)
		return at_end(r);
	if ((size_t)n < sizeof(h))
		return fail(r, -EINVAL, "truncated record header at offset %llu",
			    (unsigned long long)off);
	memcpy(&h, r->buf + r->start, sizeof(h));
	if (h.size < sizeof(h))
		return fail(r, -EINVAL, "bad record size %u at offset %llu (type %u)", h.size,
			    (unsigned long long)off, h.type);
	if (h.size > r->data_size - r->pos)
		return fail(r, -EINVAL,
			    "record at offset %llu (type %u, size %u) runs past the end of the "
			    "data section",
			    (unsigned long long)off, h.type, h.size);
	n = fill(r, h.size);
	if (n < 0)
		return (int)n;
	if ((size_t)n < h.size)
		return fail(r, -EINVAL, "truncated record at offset %llu (%zd of %u bytes)",
			    (unsigned long long)off, n, h.size);
	p = r->buf + r->start;
	if ((uintptr_t)p % 8) {
		memcpy(r->rec, p, h.size);
		p = (const uint8_t *)r->rec;
	}
	r->start += h.size;
	r->pos += h.size;
decode:
	ev->hdr = (const struct perf_event_header *)p;
	if (h.type != PERF_RECORD_SAMPLE)
		ev->sample = (struct pd_sample){0};

	switch (h.type) {
	case PERF_RECORD_SAMPLE:
		err = decode_sample(r, ev, off);
		if (err == 1) {
			r->nr_unknown_id++;
			goto again;
		}
		return err ? err : 1;
	case PERF_RECORD_HEADER_ATTR:
		err = pipe_attr(r, ev->hdr);
		return err ? err : 1;
	case PERF_RECORD_HEADER_FEATURE:
		err = pipe_feature(r, ev->hdr);
		return err ? err : 1;
	case PERF_RECORD_HEADER_BUILD_ID:
		/* A malformed one costs a symbol, not the whole profile. */
		pd_rfeat_add_build_id(r, ev->hdr, h.size);
		return 1;
	case PERF_RECORD_COMPRESSED:
		if (inflated)
			return fail(r, -EINVAL,
				    "compressed record inside the compressed record at offset %llu",
				    (unsigned long long)off);
		/* Its records follow, as if they stood here in the data. */
		err = inflate(r, ev->hdr, off);
		if (err)
			return err;
		goto again;
	default:
		if (h.type < PERF_RECORD_USER_TYPE_START)
			decode_sid(r, ev);
		return 1;
	}
}

void pd_reader_set_ordered(struct pd_reader *r, bool ordered)
{
	r->ordered = ordered;
}

/* The time a record sorts by; records without one keep their place after the last. */
static uint64_t event_time(struct pd_reader *r, const struct pd_event *ev)
{
	const struct pd_evsel *e = ev->evsel;

	if (ev->hdr->type == PERF_RECORD_SAMPLE) {
		if (e && (e->attr.sample_type & PERF_SAMPLE_TIME))
			r->last_time = ev->sample.time;
	} else if (e && e->attr.sample_id_all && (e->attr.sample_type & PERF_SAMPLE_TIME) &&
		   ev->sid.time) {
		r->last_time = ev->sid.time;
	}
	return r->last_time;
}

/* Whether rec lies in the mapped file (else in a buffer that is reused: the read
 * buffer, the aligned copy, decompressed data). */
static bool in_map(const struct pd_reader *r, const void *rec)
{
	const uint8_t *p = rec;

	return r->map && p >= r->map && p < r->map + r->map_len;
}

/*
 * Read-ahead: a second thread runs next_record and hands the events over in batches,
 * two of them, one being filled while the caller works through the other.  An event
 * points into its record: a record in the mapped file stays put, any other (an
 * unaligned copy, decompressed data, the ordering queue's copy) is copied into its
 * batch's arena first.  Only the thread touches the reader until it has handed over
 * its last batch; that handover (under the lock) orders everything it wrote, the
 * error text and the counters included, before the caller reads them.
 */
#define PD_BATCH       8192
#define PD_BATCH_FIRST 256
#define PD_ARENA_MAX   (16u << 20)

struct pd_batch {
	struct pd_event ev[PD_BATCH];
	size_t n, next; /* filled, and handed out */
	int ret;	/* after the n events: 1 more batches follow; 0 end; -errno */
	bool full;	/* the caller's to read (else the thread's to fill) */
	uint8_t *arena; /* copies of records outside the map */
	size_t arena_used, arena_cap, arena_want;
	const uint8_t *low; /* the lowest mapped record among ev[] (NULL: none) */
};

struct pd_ahead {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;		  /* the caller is closing: the thread ends */
	struct pd_batch batch[2]; /* filled in turn */
	size_t cur;		  /* the batch the caller reads */
	bool started;		  /* the caller has taken its first batch */
	/* The thread's own. */
	const uint8_t *floor; /* mapped records from here on may still be read */
	struct pd_event held; /* read, for the next batch (its arena was full) */
	bool have_held;
};

#define PD_DROP_STEP (16u << 20)

/*
 * Hand back the pages of the mapped file that no record in use lies on any more:
 * what has been read and is neither queued nor just delivered.  Without it the whole
 * file would stay resident (and counted) until the end.
 */
static void drop_behind(struct pd_reader *r)
{
	const uint8_t *lo = r->map, *hi = r->map + r->map_len;
	const uint8_t *keep = r->map + r->data_off + r->pos;
	const uint8_t *q = r->ordered ? pd_oq_lowest(&r->oq, lo, hi) : NULL;
	size_t page = 4096, end;

	if (r->delivered && (const uint8_t *)r->delivered->ev.hdr >= lo &&
	    (const uint8_t *)r->delivered->ev.hdr < keep)
		keep = (const uint8_t *)r->delivered->ev.hdr;
	if (q && q < keep)
		keep = q;
	if (r->ahead && r->ahead->floor && r->ahead->floor < keep)
		keep = r->ahead->floor;
	end = (size_t)(keep - lo) / page * page;
	if (end > r->map_dropped + PD_DROP_STEP) {
		madvise((void *)(lo + r->map_dropped), end - r->map_dropped, MADV_DONTNEED);
		r->map_dropped = end;
	}
}

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

/*
 * Fault the next pages of the mapped file in with one call (Linux 5.14+), ahead of
 * the records: one fault per page is most of a report's system time on a VM.
 */
static void fill_ahead(struct pd_reader *r)
{
	size_t from = r->map_filled & ~(size_t)4095, to = from + 2 * PD_DROP_STEP;

	if (to > r->map_len)
		to = r->map_len;
	if (to <= from || madvise((uint8_t *)r->map + from, to - from, MADV_POPULATE_READ))
		r->map_filled = 0; /* not supported, or the file shrank: faults as they come */
	else
		r->map_filled = to;
}

/* pd_reader_next in the thread that reads (the caller's, or the read-ahead one). */
static int next_record(struct pd_reader *r, struct pd_event *ev)
{
	struct pd_qev *qe;
	int ret;

	if (r->map && r->data_off + r->pos > r->map_dropped + 2 * PD_DROP_STEP)
		drop_behind(r);
	if (r->map_filled && r->map_filled < r->map_len &&
	    r->data_off + r->pos + PD_DROP_STEP > r->map_filled)
		fill_ahead(r);
	if (!r->ordered)
		return read_next(r, ev);
	pd_oq_done(&r->oq, r->delivered);
	r->delivered = NULL;
	for (;;) {
		qe = pd_oq_pop(&r->oq, r->eof ? UINT64_MAX : r->oq.limit);
		if (qe) {
			r->delivered = qe;
			*ev = qe->ev;
			return 1;
		}
		if (r->eof)
			return 0;
		ret = read_next(r, ev);
		if (ret < 0)
			return ret;
		if (ret == 0) {
			r->eof = true;
			continue;
		}
		if (ev->hdr->type == PERF_RECORD_FINISHED_ROUND) {
			pd_oq_round(&r->oq);
			continue;
		}
		/* Header records describe the stream, not a moment in it. */
		if (ev->hdr->type >= PERF_RECORD_USER_TYPE_START)
			return 1;
		/* Records in the mapped file stay put; others are copied. */
		ret = pd_oq_push(&r->oq, ev, event_time(r, ev), !in_map(r, ev->hdr));
		if (ret)
			return fail(r, ret, "out of memory ordering records");
		pd_oq_relieve(&r->oq);
	}
}

/* Copy ev's record into b's arena and point ev there.  0 or -ENOMEM. */
static int batch_copy(struct pd_batch *b, struct pd_event *ev)
{
	size_t size = ev->hdr->size, need = b->arena_used + ((size + 7) & ~(size_t)7);
	const uint8_t *old = (const uint8_t *)ev->hdr;
	uint8_t *rec;

	if (need > b->arena_cap) {
		size_t cap = b->arena_cap ? 2 * b->arena_cap : 64 << 10;
		uint8_t *na;

		while (cap < need)
			cap *= 2;
		/* Earlier events point into the arena: it may not move.  It grows when
		 * the batch is filled again, up to PD_ARENA_MAX (records of a
		 * compressed capture are all copied). */
		if (b->arena_used) {
			if (b->arena_cap < PD_ARENA_MAX)
				b->arena_want = cap;
			return -EAGAIN;
		}
		na = realloc(b->arena, cap);
		if (!na)
			return -ENOMEM;
		b->arena = na;
		b->arena_cap = cap;
	}
	rec = b->arena + b->arena_used;
	memcpy(rec, old, size);
	b->arena_used = need;
	ev->hdr = (const struct perf_event_header *)rec;
	if (ev->sample.ips)
		ev->sample.ips = (const uint64_t *)(rec + ((const uint8_t *)ev->sample.ips - old));
	if (ev->sample.raw)
		ev->sample.raw = rec + ((const uint8_t *)ev->sample.raw - old);
	return 0;
}

static const uint8_t *lower(const uint8_t *a, const uint8_t *b)
{
	return !a || (b && b < a) ? b : a;
}

/* Fill b: up to max events, fewer when the data ends or on an error. */
static void batch_fill(struct pd_reader *r, struct pd_batch *b, struct pd_batch *other, size_t max)
{
	struct pd_ahead *a = r->ahead;
	int ret = 1, err;

	b->n = b->next = b->arena_used = 0;
	b->low = NULL;
	if (b->arena_want > b->arena_cap) {
		uint8_t *na = realloc(b->arena, b->arena_want);

		if (na) {
			b->arena = na;
			b->arena_cap = b->arena_want;
		}
	}
	while (b->n < max) {
		struct pd_event *ev = &b->ev[b->n];

		/* What the caller may still read lies above both batches' lowest record. */
		a->floor = lower(other->low, b->low);
		if (a->have_held) {
			*ev = a->held;
			a->have_held = false;
			ret = 1;
		} else {
			ret = next_record(r, ev);
		}
		if (ret <= 0)
			break;
		if (in_map(r, ev->hdr)) {
			b->low = lower(b->low, (const uint8_t *)ev->hdr);
		} else if ((err = batch_copy(b, ev))) {
			if (err == -EAGAIN) {
				/* The arena is full: this event goes first in the next batch. */
				a->held = *ev;
				a->have_held = true;
				ret = 1;
				break;
			}
			ret = fail(r, err, "out of memory reading ahead");
			break;
		}
		b->n++;
		ret = 1;
	}
	b->ret = ret;
}

static void *ahead_run(void *arg)
{
	struct pd_reader *r = arg;
	struct pd_ahead *a = r->ahead;
	size_t i = 0, max = PD_BATCH_FIRST;
	int ret;

	do {
		struct pd_batch *b = &a->batch[i];
		bool stop;

		pthread_mutex_lock(&a->lock);
		while (b->full && !a->stop)
			pthread_cond_wait(&a->cond, &a->lock);
		stop = a->stop;
		pthread_mutex_unlock(&a->lock);
		if (stop)
			break;
		batch_fill(r, b, &a->batch[i ^ 1], max);
		/* Small at first, so the caller starts at once; then large, as each
		 * handover wakes a thread (a futex call, tens of microseconds on a VM). */
		max = max < PD_BATCH / 2 ? 2 * max : PD_BATCH;
		ret = b->ret;
		pthread_mutex_lock(&a->lock);
		b->full = true;
		pthread_cond_broadcast(&a->cond);
		pthread_mutex_unlock(&a->lock);
		i ^= 1;
	} while (ret == 1);
	return NULL;
}

static void ahead_free(struct pd_ahead *a)
{
	pthread_cond_destroy(&a->cond);
	pthread_mutex_destroy(&a->lock);
	free(a->batch[0].arena);
	free(a->batch[1].arena);
	free(a);
}

/* Start the thread; false when it cannot run (the caller reads itself then). */
static bool ahead_start(struct pd_reader *r)
{
	struct pd_ahead *a = calloc(1, sizeof(*a));

	if (!a)
		return false;
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->cond, NULL);
	r->ahead = a;
	if (pthread_create(&a->thread, NULL, ahead_run, r)) {
		r->ahead = NULL;
		ahead_free(a);
		return false;
	}
	return true;
}

static void ahead_stop(struct pd_reader *r)
{
	struct pd_ahead *a = r->ahead;

	pthread_mutex_lock(&a->lock);
	a->stop = true;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->thread, NULL);
	r->ahead = NULL;
	ahead_free(a);
}

static int ahead_next(struct pd_ahead *a, struct pd_event *ev)
{
	struct pd_batch *b = &a->batch[a->cur];

	if (!a->started || b->next == b->n) {
		if (a->started) {
			if (b->ret != 1)
				return b->ret; /* the end, or the error, again */
			/* Done with this one: back to the thread, on to the other. */
			pthread_mutex_lock(&a->lock);
			b->full = false;
			pthread_cond_broadcast(&a->cond);
			pthread_mutex_unlock(&a->lock);
			a->cur ^= 1;
			b = &a->batch[a->cur];
		}
		a->started = true;
		pthread_mutex_lock(&a->lock);
		while (!b->full)
			pthread_cond_wait(&a->cond, &a->lock);
		pthread_mutex_unlock(&a->lock);
		if (b->next == b->n)
			return b->ret;
	}
	*ev = b->ev[b->next++];
	return 1;
}

void pd_reader_read_ahead(struct pd_reader *r)
{
	r->want_ahead = !r->pipe;
}

int pd_reader_next(struct pd_reader *r, struct pd_event *ev)
{
	if (r->want_ahead) {
		r->want_ahead = false;
		ahead_start(r);
	}
	return r->ahead ? ahead_next(r->ahead, ev) : next_record(r, ev);
}

const char *pd_reader_error(const struct pd_reader *r)
{
	return r->err[0] ? r->err : NULL;
}

bool pd_reader_is_pipe(const struct pd_reader *r)
{
	return r->pipe;
}

size_t pd_reader_nr_evsel(const struct pd_reader *r)
{
	return r->nr_evsels;
}

const struct pd_evsel *pd_reader_evsel(const struct pd_reader *r, size_t idx)
{
	return idx < r->nr_evsels ? r->evsels[idx] : NULL;
}

const struct pd_evsel *pd_reader_evsel_by_id(const struct pd_reader *r, uint64_t id)
{
	if (r->nr_evsels == 1)
		return r->evsels[0];
	if (!r->nr_idmap)
		return NULL;
	for (size_t i = id_slot(r, id); r->idmap[i].idx1; i = (i + 1) & (r->cap_idmap - 1))
		if (r->idmap[i].id == id)
			return r->evsels[r->idmap[i].idx1 - 1];
	return NULL;
}

uint64_t pd_reader_nr_unknown_id(const struct pd_reader *r)
{
	return r->nr_unknown_id;
}

uint64_t pd_reader_nr_compressed(const struct pd_reader *r)
{
	return r->nr_compressed;
}
