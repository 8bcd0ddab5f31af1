// SPDX-License-Identifier: Apache-2.0
/*
 * offcpu_pingpong [ROUNDS]: two threads pass one byte back and forth over two pipes
 * ROUNDS times (default 100000), so each round blocks each thread once in read():
 * a context-switch-heavy load for bench/offcpu.  Prints the exchange's wall time
 * (thread start-up excluded) and the CPU time of the whole process:
 *   rounds N elapsed_ns N cpu_ns N
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static int ping[2], pong[2];
static long rounds = 100000;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static uint64_t tv_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000000ULL + tv->tv_usec * 1000ULL;
}

__attribute__((noinline)) static int bounce(int in, int out)
{
	char c;

	if (read(in, &c, 1) != 1)
		return -1;
	return write(out, &c, 1) == 1 ? 0 : -1;
}

static void *responder(void *arg)
{
	(void)arg;
	for (long i = 0; i < rounds; i++)
		if (bounce(ping[0], pong[1]))
			break;
	return NULL;
}

int main(int argc, char **argv)
{
	struct rusage ru;
	pthread_t t;
	uint64_t t0, elapsed;
	char c = 'x';
	long i;

	if (argc > 1)
		rounds = atol(argv[1]);
	if (rounds <= 0 || pipe(ping) || pipe(pong)) {
		fprintf(stderr, "offcpu_pingpong: bad ROUNDS or pipe failed\n");
		return 1;
	}
	if (pthread_create(&t, NULL, responder, NULL)) {
		perror("offcpu_pingpong: pthread_create");
		return 1;
	}
	t0 = now_ns();
	for (i = 0; i < rounds; i++) {
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
			break;
	}
	elapsed = now_ns() - t0;
	pthread_join(t, NULL);
	getrusage(RUSAGE_SELF, &ru);
	printf("rounds %ld elapsed_ns %llu cpu_ns %llu\n", i, (unsigned long long)elapsed,
	       (unsigned long long)(tv_ns(&ru.ru_utime) + tv_ns(&ru.ru_stime)));
	return 0;
}
