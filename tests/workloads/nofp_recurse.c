// SPDX-License-Identifier: Apache-2.0
/*
 * nofp_recurse [seconds] [depth]: main -> descend x DEPTH (default 300) -> spin: deep
 * stacks, for the walker to follow whole or stop at its frame limit and say so.
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

__attribute__((noinline)) void spin(double end)
{
	while (now() < end)
		sink++;
}

__attribute__((noinline)) void descend(int depth, double end)
{
	volatile char pad[24];

	pad[0] = (char)depth;
	if (depth > 0)
		descend(depth - 1, end);
	else
		spin(end);
	sink += pad[0];
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	int depth = argc > 2 ? atoi(argv[2]) : 300;

	usleep(300000);
	descend(depth, now() + secs);
	return 0;
}
