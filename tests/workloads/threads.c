// SPDX-License-Identifier: Apache-2.0
/*
 * threads [SECONDS [DELAY [NTHREADS]]]: sleeps DELAY seconds (default 1) without using
 * CPU, then starts NTHREADS threads (default 2) that each spin in thread_spin() until
 * SECONDS (default 3) after start.  A profiler attached during the delay sees only
 * threads created after it attached.  Main prints the thread ids it created on stderr.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3.0;
	double delay = argc > 2 ? atof(argv[2]) : 1.0;
	int n = argc > 3 ? atoi(argv[3]) : 2;
	uint64_t start = now_ns(), end = start + (uint64_t)(secs * 1e9);
	struct timespec d = {(time_t)delay, (long)((delay - (time_t)delay) * 1e9)};
	pthread_t th[MAX_THREADS];

	if (secs <= 0 || delay < 0 || delay >= secs || n < 1 || n > MAX_THREADS) {
		fprintf(stderr, "usage: threads [SECONDS [DELAY < SECONDS [NTHREADS 1..%d]]]\n",
			MAX_THREADS);
		return 2;
	}
	nanosleep(&d, NULL);
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
