// SPDX-License-Identifier: Apache-2.0
/*
 * diff_work [-b] [SECONDS]: burns CPU for SECONDS (default 1) in rounds of work_a(),
 * work_b() and work_c(), equal work each (a third of the samples each); with -b,
 * work_b does twice the iterations (half the samples, a quarter each for the others):
 * the "slower build" that pa-report --diff must find.  Three functions, not two: with
 * two, one's share grows exactly as much as the other's shrinks, and neither change is
 * the biggest.
 *
 * Work is counted in iterations, not time, so the split holds on a busy machine; only
 * the end is timed.  Each call's length varies (a fixed LCG sequence, 0.5x to 1.5x
 * ROUND_ITERS): with fixed lengths the rounds would beat against the sampling period
 * (999 Hz: 1.001 ms) and bias the split.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROUND_ITERS 200000

static volatile uint64_t sink;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void work_a(long iters)
{
	uint64_t x = sink;

	for (long i = 0; i < iters; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink = x;
}

__attribute__((noinline)) void work_b(long iters)
{
	uint64_t x = sink;

	for (long i = 0; i < iters; i++)
		x = x * 2862933555777941757ULL + 3037000493ULL;
	sink = x;
}

__attribute__((noinline)) void work_c(long iters)
{
	uint64_t x = sink;

	for (long i = 0; i < iters; i++)
		x = x * 3935559000370003845ULL + 2691343689449507681ULL;
	sink = x;
}

/* The next call's iterations: 0.5x to 1.5x ROUND_ITERS, ROUND_ITERS on average. */
static long next_iters(uint64_t *seed)
{
	*seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
	return ROUND_ITERS / 2 + (long)((*seed >> 33) % ROUND_ITERS);
}

int main(int argc, char **argv)
{
	uint64_t seed = 42;
	double secs = 1.0, end;
	long b_times = 1;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-b"))
			b_times = 2;
		else
			secs = atof(argv[i]);
	}
	if (secs <= 0) {
		fprintf(stderr, "usage: diff_work [-b] [SECONDS > 0]\n");
		return 2;
	}
	end = now_s() + secs;
	while (now_s() < end) {
		work_a(next_iters(&seed));
		work_b(b_times * next_iters(&seed));
		work_c(next_iters(&seed));
	}
	return 0;
}
