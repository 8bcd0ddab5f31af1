// SPDX-License-Identifier: Apache-2.0
/*
 * cpu_split [SECONDS]: burns CPU for SECONDS (default 3), ~70% of it in hot_a() and
 * ~30% in hot_b(), reached as main -> work_loop -> hot_a/hot_b.
 *
 * The split is by thread CPU time, not wall time, so it holds even when the machine is
 * busy and we get preempted.  Each slice is 10 to 20 ms of CPU, 70% of it in hot_a and
 * 30% in hot_b.  Slice lengths vary (a fixed LCG sequence, so runs are reproducible):
 * with a fixed length the slices would beat against a sampling period such as 99 Hz's
 * 10.1 ms and bias the split.
 * The CPU clock is read only every SPIN_CHUNK iterations so the clock_gettime syscall
 * stays well under 1% of the samples.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define SLICE_MIN_NS 10000000ULL
#define SLICE_VAR_NS 10000000ULL
#define SPIN_CHUNK   50000

/* Results go here so the compiler cannot drop the loops. */
static volatile uint64_t sink;

static uint64_t cpu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Both spin until this thread has used CPU up to `until` (thread CPU clock). */
__attribute__((noinline)) void hot_a(uint64_t until)
{
	uint64_t x = sink;

	do {
		for (int i = 0; i < SPIN_CHUNK; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		sink = x;
	} while (cpu_now_ns() < until);
}

__attribute__((noinline)) void hot_b(uint64_t until)
{
	uint64_t x = sink;

	do {
		for (int i = 0; i < SPIN_CHUNK; i++)
			x = x * 2862933555777941757ULL + 3037000493ULL;
		sink = x;
	} while (cpu_now_ns() < until);
}

__attribute__((noinline)) void work_loop(uint64_t seconds_ns)
{
	uint64_t end = now_ns() + seconds_ns, seed = 42;

	while (now_ns() < end) {
		uint64_t start = cpu_now_ns(), slice;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		slice = SLICE_MIN_NS + (seed >> 33) % SLICE_VAR_NS;
		hot_a(start + slice * 7 / 10);
		hot_b(start + slice);
	}
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3.0;

	if (secs <= 0) {
		fprintf(stderr, "usage: cpu_split [SECONDS > 0]\n");
		return 2;
	}
	work_loop((uint64_t)(secs * 1e9));
	return 0;
}
