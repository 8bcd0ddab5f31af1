// SPDX-License-Identifier: Apache-2.0
/*
 * Unwind tables compiled off the sample loop.  A binary missing from the CFI cache
 * takes tens to hundreds of milliseconds to compile (libLLVM: ~1M rows); done in the
 * thread that reads the ring buffer, that stalls it while the new process's samples,
 * each with its stack slice, fill the ring.  One worker thread compiles the files
 * queued here, in order, and stores each table in the cache; the main thread takes
 * the finished tables at its next round (uw_compile_take) and loads them.  The worker
 * touches no BPF map, no row array and no rec_file: it works on its own copy of the
 * file descriptor and hands back a struct cfi_table.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unwind/cfi_cache.h"
#include "unwind/cfi_compile.h"
#include "base/util.h"
#include "unwind_priv.h"

struct uw_compiler {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake; /* the worker: a job queued, or stop */
	pthread_cond_t idle; /* uw_compile_wait: a job finished */
	struct uw_job *todo, **todo_tail;
	struct uw_job *done; /* finished, newest first */
	const char *cache_dir;
	bool busy; /* the worker holds a job */
	bool stop;
};

static void *worker(void *arg)
{
	struct uw_compiler *c = arg;
	struct uw_job *j;

	pthread_mutex_lock(&c->lock);
	for (;;) {
		while (!c->todo && !c->stop)
			pthread_cond_wait(&c->wake, &c->lock);
		if (c->stop)
			break;
		j = c->todo;
		c->todo = j->next;
		if (!c->todo)
			c->todo_tail = &c->todo;
		c->busy = true;
		pthread_mutex_unlock(&c->lock);

		j->t0 = pa_now_ns();
		j->t = cfi_compile_elf(NULL, j->fd, NULL);
		j->err = j->t ? 0 : errno;
		/* Best effort: a read-only cache only costs time. */
		if (j->t && c->cache_dir && j->t->bid_size)
			cfi_cache_store(c->cache_dir, j->t);
		j->ns = pa_now_ns() - j->t0;
		close(j->fd);
		j->fd = -1;

		pthread_mutex_lock(&c->lock);
		c->busy = false;
		j->next = c->done;
		c->done = j;
		pthread_cond_broadcast(&c->idle);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

/* The worker, started on first use; NULL if it cannot be (the caller compiles). */
static struct uw_compiler *compiler(struct rec_unwind *u)
{
	struct uw_compiler *c = u->compiler;
	sigset_t all, old;
	int err;

	if (c || u->compiler_failed)
		return c;
	c = calloc(1, sizeof(*c));
	if (!c) {
		u->compiler_failed = true;
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->wake, NULL);
	pthread_cond_init(&c->idle, NULL);
	c->todo_tail = &c->todo;
	c->cache_dir = u->cache_dir;
	/* Ctrl-C and the child's SIGCHLD are the main thread's to take. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = pthread_create(&c->thread, NULL, worker, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pa_warn("unwind: cannot start the table compiler thread: %s; tables are "
			"compiled in the sample loop",
			strerror(err));
		free(c);
		u->compiler_failed = true;
		return NULL;
	}
	u->compiler = c;
	return c;
}

int uw_compile_queue(struct rec_unwind *u, size_t file, int fd, const char *path)
{
	struct uw_compiler *c = compiler(u);
	struct uw_job *j;

	if (!c)
		return -ENOSYS;
	j = calloc(1, sizeof(*j));
	if (!j || !(j->path = strdup(path)) || (j->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0) {
		if (j)
			free(j->path);
		free(j);
		return -ENOMEM;
	}
	j->file = file;
	pthread_mutex_lock(&c->lock);
	*c->todo_tail = j;
	c->todo_tail = &j->next;
	pthread_cond_signal(&c->wake);
	pthread_mutex_unlock(&c->lock);
	u->compiles++;
	return 0;
}

struct uw_job *uw_compile_take(struct rec_unwind *u)
{
	struct uw_compiler *c = u->compiler;
	struct uw_job *done, *rev = NULL;

	if (!c || !u->compiles)
		return NULL;
	pthread_mutex_lock(&c->lock);
	done = c->done;
	c->done = NULL;
	pthread_mutex_unlock(&c->lock);
	/* In the order they were queued. */
	while (done) {
		struct uw_job *next = done->next;

		done->next = rev;
		rev = done;
		done = next;
		u->compiles--;
	}
	return rev;
}

void uw_compile_wait(struct rec_unwind *u, uint64_t timeout_ns)
{
	struct uw_compiler *c = u->compiler;
	uint64_t end = pa_now_ns() + timeout_ns;
	struct uw_job *j;

	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	while ((c->todo || c->busy) && pa_now_ns() < end) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 10000000; /* recheck the deadline every 10 ms */
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&c->idle, &c->lock, &ts);
	}
	/* Past the deadline: what has not started is not compiled. */
	while ((j = c->todo)) {
		c->todo = j->next;
		close(j->fd);
		j->fd = -1;
		j->err = ECANCELED;
		j->next = c->done;
		c->done = j;
	}
	c->todo_tail = &c->todo;
	pthread_mutex_unlock(&c->lock);
}

void uw_job_free(struct uw_job *j)
{
	cfi_table_free(j->t);
	free(j->path);
	free(j);
}

void uw_compile_stop(struct rec_unwind *u)
{
	struct uw_compiler *c = u->compiler;
	struct uw_job *j;

	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->stop = true;
	pthread_cond_signal(&c->wake);
	pthread_mutex_unlock(&c->lock);
	pthread_join(c->thread, NULL);
	while ((j = c->todo)) {
		c->todo = j->next;
		close(j->fd);
		uw_job_free(j);
	}
	while ((j = c->done)) {
		c->done = j->next;
		uw_job_free(j);
	}
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->wake);
	pthread_cond_destroy(&c->idle);
	free(c);
	u->compiler = NULL;
}
