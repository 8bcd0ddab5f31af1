// SPDX-License-Identifier: Apache-2.0
/*
 * Off-CPU samples whose user stack comes later.  With the task_work and sys_exit
 * methods the BPF side sends a stretch at switch-in with its kernel stack only
 * (flag PROFILE_F_USTACK_LATER) and, when the thread returns to user space, one
 * PROFILE_KIND_USTACK record with the user stack it blocked with (or none, when
 * it knows that stack is gone).  The samples are
 * held here until then, and written whole.
 *
 * A thread can block more than once in one system call, so one user stack may
 * complete several samples.  A user stack that never comes (the thread died in the
 * kernel, the record was dropped, the recording stopped first) leaves the sample
 * with its kernel stack alone, written after HOLD_NS or at the end.
 *
 * And the stretches no switch-in ends: threads still off the CPU when recording
 * stops, reported by an iterator over every task (rec_offcpu_open_waits).
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile.skel.h"
#include "record.h"
#include "base/util.h"

/* Longer than any return to user space; short enough to stay in perf's rounds. */
#define HOLD_NS 1000000000ULL

int rec_offcpu_hold(struct rec_session *s, const struct profile_sample *ps, size_t size)
{
	struct rec_held *h = malloc(sizeof(*h) - sizeof(h->ps) + size);

	if (!h)
		return -ENOMEM;
	h->next = NULL;
	h->since = pa_now_ns();
	h->size = size;
	memcpy(&h->ps, ps, size);
	if (!s->held_tail)
		s->held_tail = &s->held;
	*s->held_tail = h;
	s->held_tail = &h->next;
	return 0;
}

/* Unlink *link (h) and write it, with the user stack uips[0..nu) when uips is set,
 * and the Python frames of us (size bytes) when us is set. */
static int release(struct rec_session *s, struct rec_held **link, const __u64 *uips, uint64_t nu,
		   const struct profile_sample *us, size_t size)
{
	struct rec_held *h = *link;
	int err;

	*link = h->next;
	if (s->held_tail == &h->next)
		s->held_tail = link;
	if (!uips)
		s->off_no_ustack++;
	err = rec_write_sample(s, &h->ps, h->size, uips, nu, us, size);
	free(h);
	return err;
}

int rec_offcpu_ustack(struct rec_session *s, const struct profile_sample *us, size_t size)
{
	uint64_t room = (size - PROFILE_SAMPLE_HDR_SIZE) / sizeof(__u64);
	uint64_t nu = us->nr_user < room ? us->nr_user : room;
	struct rec_held **link = &s->held;
	int err;

	while (*link) {
		if ((*link)->ps.tid != us->tid) {
			link = &(*link)->next;
			continue;
		}
		/* An empty stack: the BPF side knows none will come for these. */
		err = release(s, link, nu ? us->ips : NULL, nu, us, size);
		if (err)
			return err;
	}
	return 0;
}

/* Write what waited too long (all: everything) with its kernel stack only. */
int rec_offcpu_flush(struct rec_session *s, bool all)
{
	uint64_t now = pa_now_ns();
	int err;

	while (s->held && (all || now - s->held->since >= HOLD_NS)) {
		err = release(s, &s->held, NULL, 0, NULL, 0);
		if (err)
			return err;
	}
	return 0;
}

/* Drop what is still held (an error ended the recording before the final flush). */
void rec_offcpu_free(struct rec_session *s)
{
	while (s->held) {
		struct rec_held *h = s->held;

		s->held = h->next;
		free(h);
	}
	s->held_tail = NULL;
}

/*
 * Recording stopped and sched_switch is detached: run offcpu_open over every task,
 * so the threads still off the CPU get their stretch up to the stop.  Its samples land
 * in the ring buffer for the final drain.
 */
void rec_offcpu_open_waits(struct rec_session *s)
{
	struct bpf_link *link;
	char buf[64];
	int fd;

	if (!s->opts.offcpu || !s->open_waits)
		return;
	s->skel->bss->offcpu_stop_ns = s->stop_ns;
	link = bpf_program__attach_iter(s->skel->progs.offcpu_open, NULL);
	if (!link) {
		pa_warn("cannot attach the off-CPU iterator (%s); threads still blocked at "
			"the end are not reported",
			strerror(errno));
		return;
	}
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		pa_warn("cannot run the off-CPU iterator (%s); threads still blocked at the end "
			"are not reported",
			strerror(errno));
	} else {
		/* The program writes nothing here: reading runs it over every task. */
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		close(fd);
	}
	bpf_link__destroy(link);
}
