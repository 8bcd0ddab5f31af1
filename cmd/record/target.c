// SPDX-License-Identifier: Apache-2.0
/*
 * Who is profiled and when the recording ends: -p PIDs, a started command, or
 * the whole system; plus user space's set of followed pids.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/procfs.h"
#include "record.h"
#include "base/util.h"

static bool pid_eq(const void *ctx, uint32_t id, const void *key)
{
	return ((const struct rec_pidset *)ctx)->pids[id] == *(const pid_t *)key;
}

bool pidset_has(const struct rec_pidset *ps, pid_t pid)
{
	return pid > 0 && hidx_find(&ps->idx, hash_mix(0, (uint32_t)pid), pid_eq, ps, &pid) >= 0;
}

int pidset_add(struct rec_pidset *ps, pid_t pid)
{
	if (pid <= 0)
		return -EINVAL;
	if (pidset_has(ps, pid))
		return 0;
	if (pa_grow((void **)&ps->pids, &ps->cap, ps->n + 1, sizeof(*ps->pids)) ||
	    hidx_insert(&ps->idx, hash_mix(0, (uint32_t)pid), ps->n))
		return -ENOMEM;
	ps->pids[ps->n++] = pid;
	return 0;
}

void pidset_del(struct rec_pidset *ps, pid_t pid)
{
	int64_t id;

	if (pid <= 0)
		return;
	/* No pid is 0: the index keeps the slot, which matches nothing any more. */
	id = hidx_find(&ps->idx, hash_mix(0, (uint32_t)pid), pid_eq, ps, &pid);
	if (id >= 0)
		ps->pids[id] = 0;
}

void pidset_free(struct rec_pidset *ps)
{
	free(ps->pids);
	hidx_free(&ps->idx);
	memset(ps, 0, sizeof(*ps));
}

/* Gone, or a zombie nobody reaps: either way it will not run again. */
static bool pid_alive(pid_t pid)
{
	char path[64], buf[256], *p;
	FILE *f;
	bool alive = true;

	if (kill(pid, 0) && errno == ESRCH)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return errno != ENOENT;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) && p[1] == ' ')
		alive = p[2] != 'Z' && p[2] != 'X';
	fclose(f);
	return alive;
}

int rec_targets_check(const struct rec_opts *o)
{
	size_t i;

	for (i = 0; i < o->nr_pids; i++)
		if (!pid_alive(o->pids[i])) {
			pa_err("no process with PID %d", o->pids[i]);
			return -ESRCH;
		}
	return 0;
}

/*
 * Fork CMD stopped before exec: it waits on a pipe until its pid is a target and
 * sampling runs, so not one instruction of the program goes unseen.
 */
int rec_cmd_fork(struct rec_session *s)
{
	int go[2], ex[2], err;
	pid_t pid;

	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(ex, O_CLOEXEC)) {
		err = -errno;
		close(go[0]);
		close(go[1]);
		return err;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		err = -errno;
		pa_err("cannot fork: %s", strerror(-err));
		close(go[0]);
		close(go[1]);
		close(ex[0]);
		close(ex[1]);
		return err;
	}
	if (pid == 0) {
		char c;
		int e;

		close(go[1]);
		close(ex[0]);
		/* The pipe closing without a byte means pa-record gave up. */
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		/* A user's CMD runs as them (file capabilities leave the ids alone), and
		 * without pa-record's capabilities. */
		if (getuid() != 0) {
			if (geteuid() != getuid() || getegid() != getgid())
				e = EPERM;
			else
				e = -rec_caps_drop();
			if (e) {
				if (write(ex[1], &e, sizeof(e)) < 0)
					_exit(127);
				_exit(127);
			}
		}
		/* Like perf: in pipe mode stdout carries perf.data, CMD's output goes to stderr. */
		if (s->opts.pipe)
			dup2(STDERR_FILENO, STDOUT_FILENO);
		execvp(s->opts.cmd_argv[0], s->opts.cmd_argv);
		e = errno;
		if (write(ex[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ex[1]);
	s->child = pid;
	s->release_fd = go[1];
	s->exec_err_fd = ex[0];
	return 0;
}

/* Let CMD exec; report its exec failure as ours. */
int rec_cmd_release(struct rec_session *s)
{
	int e = 0;
	ssize_t n;

	if (write(s->release_fd, "g", 1) != 1) {
		e = errno;
		pa_err("cannot start '%s': %s", s->opts.cmd_argv[0], strerror(e));
		return -e;
	}
	close(s->release_fd);
	s->release_fd = -1;
	do
		n = read(s->exec_err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(s->exec_err_fd);
	s->exec_err_fd = -1;
	if (n == sizeof(e)) {
		pa_err("cannot run '%s': %s", s->opts.cmd_argv[0], strerror(e));
		waitpid(s->child, &s->child_status, 0);
		s->child_done = true;
		return -e;
	}
	return 0;
}

bool rec_targets_done(struct rec_session *s)
{
	size_t i;

	if (s->child) {
		if (!s->child_done && waitpid(s->child, &s->child_status, WNOHANG) == s->child)
			s->child_done = true;
		return s->child_done;
	}
	if (!s->opts.nr_pids)
		return false;
	for (i = 0; i < s->opts.nr_pids; i++)
		if (pid_alive(s->opts.pids[i]))
			return false;
	return true;
}

static bool wait_child(struct rec_session *s, int ms)
{
	struct timespec ts = {0, 10 * 1000 * 1000};

	for (; ms > 0; ms -= 10) {
		if (waitpid(s->child, &s->child_status, WNOHANG) == s->child)
			return s->child_done = true;
		nanosleep(&ts, NULL);
	}
	return false;
}

/*
 * End CMD if it outlives the recording (-d, or SIGTERM sent to us alone): Ctrl-C
 * from a terminal reaches it directly, so give it a moment first.
 */
void rec_cmd_finish(struct rec_session *s)
{
	if (s->release_fd >= 0) {
		/* Never released: closing the pipe makes it exit. */
		close(s->release_fd);
		s->release_fd = -1;
	}
	if (s->exec_err_fd >= 0) {
		close(s->exec_err_fd);
		s->exec_err_fd = -1;
	}
	if (!s->child || s->child_done)
		return;
	if (wait_child(s, 200))
		return;
	kill(s->child, SIGTERM);
	if (wait_child(s, 2000))
		return;
	kill(s->child, SIGKILL);
	waitpid(s->child, &s->child_status, 0);
	s->child_done = true;
}
