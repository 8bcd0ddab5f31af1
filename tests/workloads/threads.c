// SPDX-License-Identifier: Apache-2.0
/*
 * threads [SECONDS [DELAY|sig [NTHREADS]]]: waits DELAY seconds (default 1) without
 * using CPU, or with "sig" until it gets SIGUSR1, then starts NTHREADS threads
 * (default 2) that each spin in thread_spin() for SECONDS (default 3) and exit.  A
 * profiler attached during the wait sees only threads created after it attached; "sig"
 * lets a test start them exactly when the profiler is ready.  Each thread prints its
 * thread id on stderr ("threads: tid N started").
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64

static volatile uint64_t sink;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

__attribute__((noinline)) void thread_spin(uint64_t end)
{
	uint64_t x = 1;

	while (now_ns() < end) {
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005ULL + 1;
		sink = x;
	}
}

static void *thread_main(void *arg)
{
	fprintf(stderr, "threads: tid %ld started\n", (long)syscall(SYS_gettid));
	thread_spin(*(uint64_t *)arg);
	return NULL;
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
	double secs = argc > 1 ? atof(argv[1]) : 3.0;
	int n = argc > 3 ? atoi(argv[3]) : 2;
	pthread_t th[MAX_THREADS];
	uint64_t end;

	if (secs <= 0 || n < 1 || n > MAX_THREADS) {
		fprintf(stderr, "usage: threads [SECONDS [DELAY|sig [NTHREADS 1..%d]]]\n",
			MAX_THREADS);
		return 2;
	}
	if (wait_start(argc > 2 ? argv[2] : "1"))
		return 2;
	end = now_ns() + (uint64_t)(secs * 1e9);
	for (int i = 0; i < n; i++) {
		if (pthread_create(&th[i], NULL, thread_main, &end)) {
			perror("threads: pthread_create");
			return 1;
		}
	}
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}
