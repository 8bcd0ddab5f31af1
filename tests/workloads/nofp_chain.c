// SPDX-License-Identifier: Apache-2.0
/*
 * nofp_chain [seconds]: main -> chain_a -> chain_b -> chain_hot, each noinline, for
 * the CFI unwinder tests.  Built by tests/unwind.bats with gcc -O2
 * -fomit-frame-pointer (and as C++), so only .eh_frame can walk it; the Makefile's
 * frame-pointer build of it is the control.  Sleeps 300 ms first so the recorder has
 * loaded the tables before the hot loop starts (start-up latency is the benchmark's
 * business, not this test's).
 */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Arrays on the stack so each frame has a real, rsp-based CFA of its own. */
__attribute__((noinline)) unsigned long chain_hot(unsigned long seed)
{
	volatile unsigned long v[8];
	unsigned long i, x = seed;

	for (i = 0; i < 200000; i++) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		v[i & 7] = x;
	}
	return x ^ v[3];
}

__attribute__((noinline)) unsigned long chain_b(unsigned long seed)
{
	volatile char pad[40];

	pad[0] = (char)seed;
	return chain_hot(seed + pad[0]) + 1;
}

__attribute__((noinline)) unsigned long chain_a(unsigned long seed)
{
	volatile char pad[72];

	pad[5] = (char)seed;
	return chain_b(seed ^ pad[5]) + 3;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3, end;

	usleep(300000);
	end = now() + secs;
	while (now() < end)
		sink += chain_a(sink);
	return 0;
}
