// SPDX-License-Identifier: Apache-2.0
/*
 * offcpu_sleep [SECONDS [migrate]]: one thread loops on a 200 ms nanosleep() in
 * sleeper(), one spins in spinner(), for SECONDS (default 2).  With migrate, the
 * main thread moves the sleeper between CPU 0 and CPU 1 halfway through each
 * sleep, so it wakes on another CPU than the one it slept on (needs two CPUs).  At
 * exit it prints the time the sleeper spent inside nanosleep, measured around each
 * call, the number of calls and how many of them woke on another CPU:
 *   slept_ns N calls N moved N
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
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* res: ns slept, calls, calls that woke on another CPU */
__attribute__((noinline)) void sleeper(uint64_t *res)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = 200000000};
	uint64_t t0 = now_ns();
	int cpu = sched_getcpu();

	nap(&ts);
	res[0] += now_ns() - t0;
	res[1]++;
	res[2] += sched_getcpu() != cpu;
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
	while (now_ns() < end_ns)
		sleeper(arg);
	return NULL;
}

static void *spin_thread(void *arg)
{
	(void)arg;
	while (now_ns() < end_ns)
		spinner();
	return NULL;
}

/* Move thread t between CPU 0 and 1 every 200 ms, half a sleep out of phase. */
static int migrate(pthread_t t)
{
	struct timespec half = {.tv_nsec = 100000000}, period = {.tv_nsec = 200000000};
	cpu_set_t set;
	int cpu = 0;

	nanosleep(&half, NULL);
	while (now_ns() < end_ns) {
		cpu ^= 1;
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (pthread_setaffinity_np(t, sizeof(set), &set)) {
			fprintf(stderr, "offcpu_sleep: cannot move the sleeper to CPU %d\n", cpu);
			return -1;
		}
		nanosleep(&period, NULL);
	}
	return 0;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2;
	uint64_t res[3] = {0, 0, 0};
	pthread_t a, b;

	end_ns = now_ns() + (uint64_t)(secs * 1e9);
	if (pthread_create(&a, NULL, sleep_thread, res) ||
	    pthread_create(&b, NULL, spin_thread, NULL)) {
		perror("offcpu_sleep: pthread_create");
		return 1;
	}
	if (argc > 2 && !strcmp(argv[2], "migrate") && migrate(a))
		return 1;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("slept_ns %llu calls %llu moved %llu\n", (unsigned long long)res[0],
	       (unsigned long long)res[1], (unsigned long long)res[2]);
	return 0;
}
