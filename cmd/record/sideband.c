// SPDX-License-Identifier: Apache-2.0
/*
 * Side-band: a dummy perf event per CPU whose ring buffer carries the kernel's
 * MMAP2 (with build-ids), COMM, FORK, EXIT and LOST records.  We keep those of
 * the targets and re-emit them through the writer, so every record in perf.data
 * has the sample_id layout of our single cpu-clock attr.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "perfdata/event.h"
#include "perfdata/pd_write.h"
#include "record.h"
#include "base/util.h"

#define SB_DATA_PAGES 128   /* 512 KiB per CPU: ~100 ms of a busy system's mmaps */
#define SB_MAX_RECORD 65536 /* header.size is a u16 */

/* What the side-band event appends to each record (sample_id_all). */
#define SB_SAMPLE_TYPE (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)

int rec_sideband_open(struct rec_session *s, struct rec_cpu *c)
{
	long page = sysconf(_SC_PAGESIZE);
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.sample_period = 1,
		.sample_type = SB_SAMPLE_TYPE,
		.sample_id_all = 1,
		.mmap = 1,
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		/* No attr.build_id: while any event asks for build-ids, this kernel (6.18)
		 * marks every MMAP2 it emits as carrying one, also to perf sessions that
		 * did not ask and get dev/inode bytes there; perf 6.1 then aborts.  We read
		 * build-ids from the mapped files instead (cached by device and inode). */
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		.watermark = 1,
		.wakeup_watermark = SB_DATA_PAGES * page / 2,
	};
	int fd, err;

	(void)s;
	fd = syscall(SYS_perf_event_open, &attr, -1, c->cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		pa_err("cannot open the side-band (dummy) event on CPU %d: %s; run as root or "
		       "lower kernel.perf_event_paranoid",
		       c->cpu, strerror(-err));
		return err;
	}
	c->sb.fd = fd;
	c->sb.map_len = (SB_DATA_PAGES + 1) * page;
	c->sb.base = mmap(NULL, c->sb.map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (c->sb.base == MAP_FAILED) {
		err = -errno;
		c->sb.base = NULL;
		pa_err("cannot mmap the side-band buffer of CPU %d: %s%s", c->cpu, strerror(-err),
		       err == -EPERM ? "; raise kernel.perf_event_mlock_kb" : "");
		return err;
	}
	c->sb.copy = malloc(SB_MAX_RECORD);
	if (!c->sb.copy)
		return -ENOMEM;
	return 0;
}

void rec_sideband_close(struct rec_cpu *c)
{
	if (c->sb.base)
		munmap(c->sb.base, c->sb.map_len);
	if (c->sb.fd >= 0)
		close(c->sb.fd);
	free(c->sb.copy);
	c->sb.base = NULL;
	c->sb.fd = -1;
	c->sb.copy = NULL;
}

static bool wanted(const struct rec_session *s, uint32_t pid)
{
	if (pid == (uint32_t)s->self)
		return false;
	return s->opts.system_wide || pidset_has(&s->targets, pid);
}

static int sb_mmap2(struct rec_session *s, const struct perf_event_header *h,
		    const struct pd_sample_id *sid)
{
	struct pd_mmap m;
	uint8_t bid[BID_MAX];
	const uint8_t *b = NULL;
	bool table;
	int n = 0, err;

	if (pd_parse_mmap(h, h->size, &m) || !wanted(s, m.pid))
		return 0;
	rec_unwind_sb_mmap(s, &m);
	table = rec_unwind_note_mmap(s, m.pid, m.prot);
	if (m.build_id) {
		n = m.build_id_size;
		memcpy(bid, m.build_id, n);
	} else if (m.filename[0] == '/') {
		/* No build-id in the record (we do not ask the kernel for them): read the
		 * file, and its unwind table while it is open when this round loads the
		 * process's tables anyway.  Without the device and inode (0) the file is
		 * known by its build-id. */
		struct rec_file_ref r = {
			.pid = m.pid,
			.start = m.start,
			.end = m.start + m.len,
			.path = m.filename,
			.maj = m.maj,
			.min = m.min,
			.ino = m.ino,
		};
		const struct rec_file *f = rec_file_get(s, &r, table);

		if (f && f->bid_size > 0)
			memcpy(bid, f->bid, (n = f->bid_size));
	}
	if (n > 0)
		b = bid;
	err = pd_write_mmap2(s->w, m.misc & PERF_RECORD_MISC_CPUMODE_MASK, m.pid, m.tid, m.start,
			     m.len, m.pgoff, m.prot, m.flags, b, b ? n : 0, m.filename, sid);
	if (!err && b)
		err = pd_writer_add_build_id(s->w, PERF_RECORD_MISC_USER, -1, b, n, m.filename);
	return err;
}

static int sb_comm(struct rec_session *s, const struct perf_event_header *h,
		   const struct pd_sample_id *sid)
{
	struct pd_comm c;

	if (pd_parse_comm(h, h->size, &c) || !wanted(s, c.pid))
		return 0;
	if ((c.misc & PERF_RECORD_MISC_COMM_EXEC) && c.pid == c.tid) {
		/* Into a program the user may not profile: not followed from here. */
		if (rec_priv_exec(s, c.pid))
			return 0;
		rec_unwind_sb_exec(s, c.pid, sid->time);
		rec_synth_exec(s, c.pid);
	}
	return pd_write_comm(s->w, c.pid, c.tid, c.comm, c.misc & PERF_RECORD_MISC_COMM_EXEC, sid);
}

static int sb_task(struct rec_session *s, const struct perf_event_header *h,
		   const struct pd_sample_id *sid)
{
	struct pd_task t;

	if (pd_parse_task(h, h->size, &t))
		return 0;
	/* Mirror the BPF fork hook: children of followed processes are followed. */
	if (t.type == PERF_RECORD_FORK && !s->opts.system_wide && t.pid != t.ppid &&
	    pidset_has(&s->targets, t.ppid))
		pidset_add(&s->targets, t.pid);
	if (!wanted(s, t.pid))
		return 0;
	if (t.type == PERF_RECORD_FORK && t.pid != t.ppid && t.pid == t.tid) {
		rec_unwind_sb_fork(s, t.pid, t.ppid, t.time);
		rec_python_fork(s, t.pid, t.ppid);
	}
	if (t.type == PERF_RECORD_EXIT && t.pid == t.tid) {
		rec_unwind_note_exit(s, t.pid);
		rec_unwind_sb_exit(s, t.pid, t.time);
	}
	return pd_write_task(s->w, t.type, t.pid, t.ppid, t.tid, t.ptid, t.time, sid);
}

static int sb_record(struct rec_session *s, struct rec_cpu *c, const struct perf_event_header *h)
{
	struct pd_sample_id id, sid;

	if (pd_parse_sid(SB_SAMPLE_TYPE, h, &id))
		return 0;
	rec_sid(s, &sid, id.pid, id.tid, id.time, id.cpu);
	s->records_in_round++;

	switch (h->type) {
	case PERF_RECORD_MMAP2:
		return sb_mmap2(s, h, &sid);
	case PERF_RECORD_COMM:
		return sb_comm(s, h, &sid);
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return sb_task(s, h, &sid);
	case PERF_RECORD_LOST: {
		struct pd_lost l;

		if (pd_parse_lost(h, h->size, &l))
			return 0;
		s->sb_lost += l.lost;
		rec_sid(s, &sid, 0, 0, id.time, c->cpu);
		return pd_write_lost(s->w, c->id, l.lost, &sid);
	}
	default:
		s->records_in_round--;
		return 0;
	}
}

/* Copy one record into the batch, indexed by its time. */
static int batch_add(struct rec_sb_batch *b, const struct perf_event_header *h, int cpu_idx)
{
	struct pd_sample_id id;

	if (b->len + h->size > b->cap) {
		size_t cap = b->cap ? b->cap : 65536;
		char *nb;

		while (cap < b->len + h->size)
			cap *= 2;
		nb = realloc(b->buf, cap);
		if (!nb)
			return -ENOMEM;
		b->buf = nb;
		b->cap = cap;
	}
	if (b->n == b->cap_idx) {
		size_t cap = b->cap_idx ? 2 * b->cap_idx : 256;
		struct rec_sb_ref *ni = realloc(b->idx, cap * sizeof(*ni));

		if (!ni)
			return -ENOMEM;
		b->idx = ni;
		b->cap_idx = cap;
	}
	pd_parse_sid(SB_SAMPLE_TYPE, h, &id); /* time 0 when it has none */
	b->idx[b->n] = (struct rec_sb_ref){
		.time = id.time, .seq = b->n, .off = b->len, .cpu_idx = cpu_idx};
	b->n++;
	memcpy(b->buf + b->len, h, h->size);
	b->len += h->size;
	return 0;
}

/*
 * Take everything the kernel has published in one CPU's buffer.  data_head is
 * read with acquire so the record bytes are visible; data_tail is stored with
 * release once they are copied, handing the space back to the kernel.
 */
static int sb_collect(struct rec_session *s, int cpu_idx)
{
	struct rec_cpu *c = &s->cpus[cpu_idx];
	struct perf_event_mmap_page *pg = c->sb.base;
	char *data;
	uint64_t head, tail, size;
	int err = 0;

	if (!pg)
		return 0;
	data = (char *)pg + pg->data_offset;
	size = pg->data_size;
	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	tail = pg->data_tail;

	while (tail < head && !err) {
		uint64_t off = tail & (size - 1);
		struct perf_event_header *h = (void *)(data + off);
		uint16_t len = h->size;

		if (len < sizeof(*h) || len > head - tail) {
			pa_warn("side-band buffer of CPU %d is corrupt; skipping it", c->cpu);
			tail = head;
			break;
		}
		if (off + len > size) {
			/* The record wraps the end of the buffer: copy it out whole. */
			size_t first = size - off;

			memcpy(c->sb.copy, data + off, first);
			memcpy(c->sb.copy + first, data, len - first);
			h = (void *)c->sb.copy;
		}
		err = batch_add(&s->sb_batch, h, cpu_idx);
		tail += len;
	}
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
	return err;
}

static int ref_cmp(const void *a, const void *b)
{
	const struct rec_sb_ref *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * All CPUs' side-band records of this round, handled in time order: a child may
 * fork on one CPU and exec on another, and its FORK must make it a target
 * before its COMM and MMAP2 are filtered.
 */
int rec_sideband_drain(struct rec_session *s)
{
	struct rec_sb_batch *b = &s->sb_batch;
	size_t i;
	int err = 0;

	b->len = 0;
	b->n = 0;
	for (i = 0; i < (size_t)s->nr_cpus && !err; i++)
		err = sb_collect(s, i);
	if (b->n) /* idx is NULL until a record arrives */
		qsort(b->idx, b->n, sizeof(*b->idx), ref_cmp);
	for (i = 0; i < b->n && !err; i++)
		err = sb_record(s, &s->cpus[b->idx[i].cpu_idx],
				(const struct perf_event_header *)(b->buf + b->idx[i].off));
	return err;
}

void rec_sideband_batch_free(struct rec_sb_batch *b)
{
	free(b->buf);
	free(b->idx);
	memset(b, 0, sizeof(*b));
}
