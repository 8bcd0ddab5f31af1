// SPDX-License-Identifier: Apache-2.0
/*
 * forker [fork|exec [SECONDS [DELAY|sig]]]: sleeps DELAY seconds (default 0.5) without
 * using CPU (with "sig": until SIGUSR1 arrives), then forks a child that spins in child_spin() for SECONDS (default 2).  With
 * "exec" the child first execs this binary again (as "forker child SECONDS"), so a
 * profiler must follow fork and exec.  The parent only waits.  Prints the child pid on
 * stderr.  Exit status is the child's.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

__attribute__((noinline)) void child_spin(double secs)
{
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9), x = 1;

	while (now_ns() < end) {
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005ULL + 1;
		sink = x;
	}
}

/* Sleep DELAY seconds, or with "sig" block until SIGUSR1 arrives.  Blocking it first
 * means a signal sent before sigwait() is kept pending rather than killing us. */
static int wait_start(const char *delay)
{
	if (!strcmp(delay, "sig")) {
		sigset_t set;
		int sig;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		return sigwait(&set, &sig) ? -1 : 0;
	} else {
		double d = atof(delay);
		struct timespec ts = {(time_t)d, (long)((d - (time_t)d) * 1e9)};

		if (d < 0)
			return -1;
		return nanosleep(&ts, NULL);
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "fork";
	double secs = argc > 2 ? atof(argv[2]) : 2.0;
	const char *delay = argc > 3 ? argv[3] : "0.5";
	int status;
	pid_t pid;

	if (secs <= 0 || (strcmp(mode, "fork") && strcmp(mode, "exec") && strcmp(mode, "child"))) {
		fprintf(stderr, "usage: forker [fork|exec [SECONDS [DELAY|sig]]]\n");
		return 2;
	}
	if (!strcmp(mode, "child")) {
		child_spin(secs);
		return 0;
	}
	if (wait_start(delay)) {
		fprintf(stderr, "forker: bad DELAY '%s'\n", delay);
		return 2;
	}
	pid = fork();
	if (pid < 0) {
		perror("forker: fork");
		return 1;
	}
	if (pid == 0) {
		if (!strcmp(mode, "exec")) {
			execl("/proc/self/exe", "forker", "child", argc > 2 ? argv[2] : "2",
			      (char *)NULL);
			perror("forker: exec /proc/self/exe");
			_exit(127);
		}
		child_spin(secs);
		_exit(0);
	}
	fprintf(stderr, "forker: child %d\n", (int)pid);
	if (waitpid(pid, &status, 0) < 0) {
		perror("forker: waitpid");
		return 1;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
