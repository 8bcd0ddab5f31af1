// SPDX-License-Identifier: Apache-2.0
/*
 * offcpu_migrate [SECONDS]: one thread loops on a 100 ms nanosleep() in sleeper()
 * for SECONDS (default 2) while the main thread moves it between CPU 0 and CPU 1
 * every 100 ms, so it mostly wakes on another CPU than the one it slept on.  At
 * exit it prints the time spent inside nanosleep, the number of sleeps and how
 * many of them ended on another CPU:
 *   slept_ns N calls N moved N
 * Needs two CPUs.  sleeper() reaches nanosleep through nap(), as in offcpu_sleep.
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

__attribute__((noinline)) void sleeper(uint64_t *res)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = 100000000};
	uint64_t t0 = now_ns();
	int cpu = sched_getcpu();

	nap(&ts);
	res[0] += now_ns() - t0;
	res[1]++;
	res[2] += sched_getcpu() != cpu;
}

static void *sleep_thread(void *arg)
{
	while (now_ns() < end_ns)
		sleeper(arg);
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2;
	struct timespec flip = {.tv_sec = 0, .tv_nsec = 100000000};
	uint64_t res[3] = {0, 0, 0};
	pthread_t t;
	cpu_set_t set;
	int cpu = 0;

	end_ns = now_ns() + (uint64_t)(secs * 1e9);
	if (pthread_create(&t, NULL, sleep_thread, res)) {
		perror("offcpu_migrate: pthread_create");
		return 1;
	}
	/* Half a sleep in, so each move lands while the sleeper is asleep. */
	nanosleep(&(struct timespec){.tv_nsec = 50000000}, NULL);
	while (now_ns() < end_ns) {
		cpu ^= 1;
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (pthread_setaffinity_np(t, sizeof(set), &set)) {
			fprintf(stderr, "offcpu_migrate: cannot move the sleeper to CPU %d\n", cpu);
			return 1;
		}
		nanosleep(&flip, NULL);
	}
	pthread_join(t, NULL);
	printf("slept_ns %llu calls %llu moved %llu\n", (unsigned long long)res[0],
	       (unsigned long long)res[1], (unsigned long long)res[2]);
	return 0;
}
