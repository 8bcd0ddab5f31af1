// SPDX-License-Identifier: Apache-2.0
/*
 * fixed_work [MILLIONS]: a fixed amount of CPU work (MILLIONS * 10^6 iterations of an
 * LCG in compute(), default 2000), so that CPU time, not wall time, measures what a
 * profiler adds.  Prints the checksum so the loop cannot be optimized out.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) uint64_t compute(uint64_t iters, uint64_t x)
{
	for (uint64_t i = 0; i < iters; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

int main(int argc, char **argv)
{
	long millions = argc > 1 ? atol(argv[1]) : 2000;
	uint64_t x = 1;

	if (millions <= 0) {
		fprintf(stderr, "usage: fixed_work [MILLIONS > 0]\n");
		return 2;
	}
	/* Chunks of 10^6 keep a realistic call stack: main -> compute. */
	for (long m = 0; m < millions; m++)
		x = compute(1000000, x);
	printf("%016llx\n", (unsigned long long)x);
	return 0;
}
