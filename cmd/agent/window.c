// SPDX-License-Identifier: Apache-2.0
/*
 * The stream cut into windows (window.h).  The reader thread feeds every record to one
 * machine and every sample to the open window's cg_profile; the caller's thread closes
 * windows on time (win_tick).  A closed window is swapped out under the lock and
 * encoded outside it, so reading never waits for an encoder or for the emitter.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "window.h"
#include "base/util.h"
#include "perfdata/pd_read.h"
#include "profile/callgraph.h"
#include "profile/machine.h"
#include "profile/pprof.h"

struct win_reader {
	struct win_opts o;
	pthread_t thread;
	pthread_mutex_t lock;

	/* Under lock: the open window [start, start + interval) and its samples. */
	struct cg_profile *cur;
	uint64_t cur_start; /* CLOCK_MONOTONIC */
	uint64_t cur_samples;
	bool cur_attrs; /* the stream's events noted in cur */
	bool ended;	/* the reader thread is done */
	int err;	/* its error, -errno */
	char errmsg[256];

	struct pd_reader *r; /* the reader thread's */
	struct machine *m;
	struct win_stats st; /* windows and samples: under lock */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * Under lock: swap out the open window for a fresh one starting at new_start; the old
 * one (NULL when it had no samples) is the caller's to emit, its start in *start.
 */
static struct cg_profile *rotate(struct win_reader *w, uint64_t new_start, uint64_t *start)
{
	struct cg_profile *old = w->cur, *fresh = cg_new();

	if (!fresh)
		return NULL; /* keep filling the open one; try again at the next tick */
	*start = w->cur_start;
	/* What exited a window ago is let go: memory stays flat over days. */
	machine_reap(w->m);
	w->cur = fresh;
	w->cur_start = new_start;
	w->cur_attrs = false;
	if (!w->cur_samples) {
		cg_free(old);
		return NULL;
	}
	w->st.windows++;
	w->st.samples += w->cur_samples;
	w->cur_samples = 0;
	return old;
}

/* Encode and hand over a closed window [start, end); outside the lock. */
static void emit(struct win_reader *w, struct cg_profile *cg, uint64_t start, uint64_t end)
{
	struct pprof_opts po = {
		.time_nanos = (int64_t)start + w->o.wall_minus_mono,
		.duration_nanos = (int64_t)(end - start),
		.tags = w->o.tags,
		.nr_tags = w->o.nr_tags,
	};
	uint64_t wall = start + w->o.wall_minus_mono;
	uint8_t *buf = NULL;
	size_t len = 0;
	int err;

	if (!cg)
		return;
	err = pprof_encode(cg, &po, &buf, &len);
	if (err)
		pa_warn("a window of %llu s is lost: encoding it failed: %s",
			(unsigned long long)(w->o.interval_ns / 1000000000ULL), strerror(-err));
	else
		w->o.emit(w->o.ctx, wall, wall + (end - start), buf, len);
	free(buf);
	cg_free(cg);
}

/* The start of the window time t falls in (t at or after the open one's end). */
static uint64_t window_of(const struct win_reader *w, uint64_t t)
{
	return w->cur_start + (t - w->cur_start) / w->o.interval_ns * w->o.interval_ns;
}

static int add(struct win_reader *w, const struct pd_event *ev)
{
	struct cg_profile *closed = NULL;
	uint64_t t = ev->sample.time, start = 0;
	bool sample = ev->hdr->type == PERF_RECORD_SAMPLE;
	int err;

	pthread_mutex_lock(&w->lock);
	if (sample && t >= w->cur_start + w->o.interval_ns)
		closed = rotate(w, window_of(w, t), &start);
	else if (sample && t < w->cur_start)
		w->st.late++;
	if (sample && !w->cur_attrs) {
		/* Each window's profile knows the stream's events (periods, names). */
		cg_add_events_of(w->cur, w->r);
		w->cur_attrs = true;
	}
	err = cg_add_record(w->cur, w->r, w->m, NULL, ev);
	w->cur_samples += sample;
	pthread_mutex_unlock(&w->lock);
	emit(w, closed, start, start + w->o.interval_ns);
	return err;
}

static void *reader_run(void *arg)
{
	struct win_reader *w = arg;
	struct pd_event ev;
	char err[256] = "";
	int ret = 0;

	w->r = pd_reader_open("-", err, sizeof(err));
	if (!w->r) {
		ret = errno ? -errno : -EINVAL;
		goto out;
	}
	/* Per-CPU buffers interleave: a COMM or MMAP2 may follow samples that need it. */
	pd_reader_set_ordered(w->r, true);
	while ((ret = pd_reader_next(w->r, &ev)) > 0)
		if (add(w, &ev)) {
			ret = -ENOMEM;
			snprintf(err, sizeof(err), "out of memory");
			break;
		}
	if (ret < 0 && !err[0])
		snprintf(err, sizeof(err), "%s", pd_reader_error(w->r));
out:
	pthread_mutex_lock(&w->lock);
	w->ended = true;
	w->err = ret < 0 ? ret : 0;
	snprintf(w->errmsg, sizeof(w->errmsg), "%s", err);
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

struct win_reader *win_start(int fd, const struct win_opts *o)
{
	static const struct machine_opts mopts;
	struct win_reader *w = calloc(1, sizeof(*w));
	int err;

	if (!w)
		return NULL;
	w->o = *o;
	w->cur_start = o->start_mono_ns;
	w->cur = cg_new();
	w->m = machine_new(&mopts);
	if (!w->cur || !w->m || dup2(fd, STDIN_FILENO) < 0)
		goto fail;
	pthread_mutex_init(&w->lock, NULL);
	err = pthread_create(&w->thread, NULL, reader_run, w);
	if (err) {
		pthread_mutex_destroy(&w->lock);
		errno = err;
		goto fail;
	}
	return w;
fail:
	err = errno;
	cg_free(w->cur);
	machine_free(w->m);
	free(w);
	errno = err;
	return NULL;
}

void win_tick(struct win_reader *w)
{
	struct cg_profile *closed = NULL;
	uint64_t now = mono_ns(), start = 0;

	pthread_mutex_lock(&w->lock);
	if (now >= w->cur_start + w->o.interval_ns + w->o.lag_ns)
		closed = rotate(w, window_of(w, now - w->o.lag_ns), &start);
	pthread_mutex_unlock(&w->lock);
	emit(w, closed, start, start + w->o.interval_ns);
}

bool win_ended(struct win_reader *w)
{
	bool ended;

	pthread_mutex_lock(&w->lock);
	ended = w->ended;
	pthread_mutex_unlock(&w->lock);
	return ended;
}

int win_finish(struct win_reader *w, struct win_stats *st, char *errbuf, size_t errlen)
{
	struct cg_profile *closed;
	uint64_t start = 0, end = mono_ns();
	int err;

	pthread_join(w->thread, NULL);
	/* The last window, cut short by the end of the recording. */
	closed = rotate(w, w->cur_start, &start);
	if (end < start || end > start + w->o.interval_ns)
		end = start + w->o.interval_ns;
	emit(w, closed, start, end);
	err = w->err;
	if (err)
		snprintf(errbuf, errlen, "%s", w->errmsg[0] ? w->errmsg : strerror(-err));
	if (st)
		*st = w->st;
	pthread_mutex_destroy(&w->lock);
	cg_free(w->cur);
	machine_free(w->m);
	pd_reader_close(w->r);
	free(w);
	return err;
}
