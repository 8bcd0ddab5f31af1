// SPDX-License-Identifier: Apache-2.0
/*
 * offcpu_mutex [SECONDS]: two threads take turns on one pthread mutex for SECONDS
 * (default 2).  Each loop calls take_lock(), which locks the mutex (blocking in the
 * futex while the other thread holds it) and then holds it ~10 ms in
 * hold_lock() spinning, so each thread waits ~10 ms per turn under take_lock().
 * take_lock() locks through lock_mutex() so that a frame-pointer walk from inside
 * libc, which loses the direct caller of libc's function, still shows take_lock().
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile uint64_t sink;
static uint64_t end_ns;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

__attribute__((noinline)) void hold_lock(void)
{
	uint64_t until = now_ns() + 10000000, x = 1;

	while (now_ns() < until)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink += x;
}

__attribute__((noinline)) void lock_mutex(pthread_mutex_t *m)
{
	pthread_mutex_lock(m);
}

__attribute__((noinline)) void take_lock(void)
{
	lock_mutex(&lock);
	hold_lock();
	pthread_mutex_unlock(&lock);
	/* Let the waiter in before trying again. */
	sched_yield();
}

static void *worker(void *arg)
{
	(void)arg;
	while (now_ns() < end_ns)
		take_lock();
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2;
	pthread_t t[2];

	end_ns = now_ns() + (uint64_t)(secs * 1e9);
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, worker, NULL)) {
			perror("offcpu_mutex: pthread_create");
			return 1;
		}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}
