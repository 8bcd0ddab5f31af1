// SPDX-License-Identifier: Apache-2.0
/*
 * offcpu_sleep [SECONDS]: one thread loops on a 200 ms nanosleep() in sleeper(), one
 * spins in spinner(), for SECONDS (default 2).  At exit it prints the time the
 * sleeper spent inside nanosleep, measured around each call:
 *   slept_ns N calls N
 * so a test can compare recorded off-CPU time with real sleep time.
 *
 * sleeper() reaches nanosleep through nap(): a frame-pointer walk from inside libc
 * (built without frame pointers) loses the direct caller of the libc function, so
 * the extra call keeps sleeper() itself on the stack until CFI unwinding lands.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;
static uint64_t end_ns;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

__attribute__((noinline)) void nap(const struct timespec *ts)
{
	nanosleep(ts, NULL);
}

__attribute__((noinline)) void sleeper(uint64_t *slept, uint64_t *calls)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = 200000000};
	uint64_t t0 = now_ns();

	nap(&ts);
	*slept += now_ns() - t0;
	(*calls)++;
}

__attribute__((noinline)) void spinner(void)
{
	uint64_t x = 1;

	for (int i = 0; i < 200000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink += x;
}

static void *sleep_thread(void *arg)
{
	uint64_t *res = arg;

	while (now_ns() < end_ns)
		sleeper(&res[0], &res[1]);
	return NULL;
}

static void *spin_thread(void *arg)
{
	(void)arg;
	while (now_ns() < end_ns)
		spinner();
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2;
	uint64_t res[2] = {0, 0};
	pthread_t a, b;

	end_ns = now_ns() + (uint64_t)(secs * 1e9);
	if (pthread_create(&a, NULL, sleep_thread, res) ||
	    pthread_create(&b, NULL, spin_thread, NULL)) {
		perror("offcpu_sleep: pthread_create");
		return 1;
	}
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("slept_ns %llu calls %llu\n", (unsigned long long)res[0],
	       (unsigned long long)res[1]);
	return 0;
}
