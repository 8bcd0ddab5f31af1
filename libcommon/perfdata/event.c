// SPDX-License-Identifier: Apache-2.0
/*
 * Record decoders: the fixed part is copied out of the record once it is known to be
 * there, and what follows it is checked against header.size before it is pointed at.
 */
#include <errno.h>
#include <string.h>

#include "perfdata/event.h"

/* The layouts are the kernel's and perf's: a field out of place writes corrupt files. */
#define ASSERT_SIZE(type, n) _Static_assert(sizeof(struct type) == (n), "sizeof(" #type ")")
#define ASSERT_AT(type, field, off)                                                                \
	_Static_assert(offsetof(struct type, field) == (off), #type "." #field)

ASSERT_SIZE(perf_event_header, 8);
ASSERT_SIZE(perf_record_mmap, 40);
ASSERT_AT(perf_record_mmap, pid, 8);
ASSERT_AT(perf_record_mmap, start, 16);
ASSERT_AT(perf_record_mmap, pgoff, 32);
ASSERT_AT(perf_record_mmap, filename, 40);
ASSERT_SIZE(perf_record_mmap2, 72);
ASSERT_AT(perf_record_mmap2, start, 16);
ASSERT_AT(perf_record_mmap2, maj, 40);
ASSERT_AT(perf_record_mmap2, ino, 48);
ASSERT_AT(perf_record_mmap2, ino_generation, 56);
ASSERT_AT(perf_record_mmap2, build_id_size, 40);
ASSERT_AT(perf_record_mmap2, build_id, 44);
ASSERT_AT(perf_record_mmap2, prot, 64);
ASSERT_AT(perf_record_mmap2, filename, 72);
ASSERT_SIZE(perf_record_comm, 16);
ASSERT_AT(perf_record_comm, comm, 16);
ASSERT_SIZE(perf_record_fork, 32);
ASSERT_AT(perf_record_fork, tid, 16);
ASSERT_AT(perf_record_fork, time, 24);
ASSERT_SIZE(perf_record_lost, 24);
ASSERT_AT(perf_record_lost, lost, 16);
ASSERT_SIZE(perf_record_lost_samples, 16);
ASSERT_SIZE(perf_record_cgroup, 16);
ASSERT_AT(perf_record_cgroup, id, 8);
ASSERT_AT(perf_record_cgroup, path, 16);
ASSERT_SIZE(perf_record_header_build_id, 36);
ASSERT_AT(perf_record_header_build_id, build_id, 12);
ASSERT_AT(perf_record_header_build_id, size, 12 + BUILD_ID_SIZE);
ASSERT_AT(perf_record_header_build_id, filename, 36);

/* h's header if the record lies within avail and holds at least fixed bytes. */
static int whole(const struct perf_event_header *h, size_t avail, size_t fixed,
		 struct perf_event_header *hd)
{
	if (avail < sizeof(*hd))
		return -EINVAL;
	memcpy(hd, h, sizeof(*hd));
	if (hd->size < fixed || hd->size > avail)
		return -EINVAL;
	return 0;
}

/* The string at off in a record of size bytes if its NUL lies inside, else NULL. */
static const char *str_at(const struct perf_event_header *h, size_t size, size_t off)
{
	const char *p = (const char *)h + off;

	return off < size && memchr(p, '\0', size - off) ? p : NULL;
}

int pd_parse_mmap(const struct perf_event_header *h, size_t avail, struct pd_mmap *m)
{
	struct perf_record_mmap2 r = {0};
	struct perf_event_header hd;
	size_t fixed;

	memset(m, 0, sizeof(*m));
	if (avail < sizeof(hd))
		return -EINVAL;
	memcpy(&hd, h, sizeof(hd));
	if (hd.type == PERF_RECORD_MMAP)
		fixed = sizeof(struct perf_record_mmap);
	else if (hd.type == PERF_RECORD_MMAP2)
		fixed = sizeof(struct perf_record_mmap2);
	else
		return -EINVAL;
	if (whole(h, avail, fixed, &hd) || !(m->filename = str_at(h, hd.size, fixed)))
		return -EINVAL;
	/* MMAP is MMAP2 up to pgoff. */
	memcpy(&r, h, fixed);
	m->type = hd.type;
	m->misc = hd.misc;
	m->pid = r.pid;
	m->tid = r.tid;
	m->start = r.start;
	m->len = r.len;
	m->pgoff = r.pgoff;
	if (hd.type == PERF_RECORD_MMAP)
		return 0;
	m->prot = r.prot;
	m->flags = r.flags;
	if (!(hd.misc & PERF_RECORD_MISC_MMAP_BUILD_ID)) {
		m->maj = r.maj;
		m->min = r.min;
		m->ino = r.ino;
		m->ino_generation = r.ino_generation;
	} else if (r.build_id_size <= BUILD_ID_SIZE) {
		m->build_id = (const uint8_t *)h + offsetof(struct perf_record_mmap2, build_id);
		m->build_id_size = r.build_id_size;
	}
	return 0;
}

int pd_parse_comm(const struct perf_event_header *h, size_t avail, struct pd_comm *c)
{
	struct perf_record_comm r;
	struct perf_event_header hd;

	memset(c, 0, sizeof(*c));
	if (whole(h, avail, sizeof(r), &hd) || hd.type != PERF_RECORD_COMM ||
	    !(c->comm = str_at(h, hd.size, sizeof(r))))
		return -EINVAL;
	memcpy(&r, h, sizeof(r));
	c->misc = hd.misc;
	c->pid = r.pid;
	c->tid = r.tid;
	return 0;
}

int pd_parse_task(const struct perf_event_header *h, size_t avail, struct pd_task *t)
{
	struct perf_record_fork r;
	struct perf_event_header hd;

	memset(t, 0, sizeof(*t));
	if (whole(h, avail, sizeof(r), &hd) ||
	    (hd.type != PERF_RECORD_FORK && hd.type != PERF_RECORD_EXIT))
		return -EINVAL;
	memcpy(&r, h, sizeof(r));
	t->type = hd.type;
	t->pid = r.pid;
	t->ppid = r.ppid;
	t->tid = r.tid;
	t->ptid = r.ptid;
	t->time = r.time;
	return 0;
}

int pd_parse_lost(const struct perf_event_header *h, size_t avail, struct pd_lost *l)
{
	struct perf_record_lost r;
	struct perf_event_header hd;

	memset(l, 0, sizeof(*l));
	if (whole(h, avail, sizeof(r), &hd) || hd.type != PERF_RECORD_LOST)
		return -EINVAL;
	memcpy(&r, h, sizeof(r));
	l->id = r.id;
	l->lost = r.lost;
	return 0;
}

int pd_parse_lost_samples(const struct perf_event_header *h, size_t avail,
			  struct pd_lost_samples *l)
{
	struct perf_record_lost_samples r;
	struct perf_event_header hd;

	memset(l, 0, sizeof(*l));
	if (whole(h, avail, sizeof(r), &hd) || hd.type != PERF_RECORD_LOST_SAMPLES)
		return -EINVAL;
	memcpy(&r, h, sizeof(r));
	l->misc = hd.misc;
	l->lost = r.lost;
	return 0;
}

/* PD_CGROUP_LABELS after c->path, if all of them are before end: c->labels. */
static void labels_after(struct pd_cgroup *c, const char *end)
{
	const char *p = c->path + strlen(c->path) + 1, *q;
	size_t n = sizeof(PD_CGROUP_LABELS);

	if ((size_t)(end - p) <= n || memcmp(p, PD_CGROUP_LABELS, n))
		return;
	/* Each "key=value\0" within the record, up to the empty string. */
	for (q = p + n; q < end && *q; q += strnlen(q, end - q) + 1) {
		const char *eq = memchr(q, '=', strnlen(q, end - q));

		if (!eq || eq == q || !memchr(q, '\0', end - q))
			return;
	}
	if (q >= end)
		return;
	c->labels = p + n;
	c->labels_len = q + 1 - c->labels;
}

int pd_parse_cgroup(const struct perf_event_header *h, size_t avail, struct pd_cgroup *c)
{
	struct perf_record_cgroup r;
	struct perf_event_header hd;

	memset(c, 0, sizeof(*c));
	if (whole(h, avail, sizeof(r), &hd) || hd.type != PERF_RECORD_CGROUP ||
	    !(c->path = str_at(h, hd.size, sizeof(r))))
		return -EINVAL;
	memcpy(&r, h, sizeof(r));
	c->id = r.id;
	labels_after(c, (const char *)h + hd.size);
	return 0;
}

int pd_parse_header_build_id(const struct perf_event_header *h, size_t avail,
			     struct pd_header_build_id *b)
{
	struct perf_record_header_build_id r;
	struct perf_event_header hd;

	memset(b, 0, sizeof(*b));
	if (whole(h, avail, sizeof(r), &hd) || !(b->filename = str_at(h, hd.size, sizeof(r))))
		return -EINVAL;
	memcpy(&r, h, sizeof(r));
	b->misc = hd.misc;
	b->pid = r.pid;
	b->build_id = (const uint8_t *)h + offsetof(struct perf_record_header_build_id, build_id);
	b->size = BUILD_ID_SIZE;
	if ((hd.misc & PERF_RECORD_MISC_BUILD_ID_SIZE) && r.size && r.size <= BUILD_ID_SIZE)
		b->size = r.size;
	return 0;
}
