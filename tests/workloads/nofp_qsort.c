// SPDX-License-Identifier: Apache-2.0
/*
 * nofp_qsort [seconds]: main -> sort_round -> qsort (libc) -> ... -> by_key, the
 * comparator being where the time goes, so every hot stack crosses Debian's libc,
 * which has no frame pointers.  Built without frame pointers by tests/unwind.bats.
 */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define N 20000

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) int by_key(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;
	int i;

	/* Some work per comparison, so the comparator dominates the profile. */
	for (i = 0; i < 20; i++) {
		x = (x >> 1) ^ (x << 3);
		y = (y >> 1) ^ (y << 3);
	}
	return x < y ? -1 : x > y;
}

__attribute__((noinline)) void sort_round(unsigned long *v, unsigned long seed)
{
	int i;

	for (i = 0; i < N; i++)
		v[i] = seed = seed * 6364136223846793005UL + 1;
	qsort(v, N, sizeof(*v), by_key);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3, end;
	unsigned long *v = malloc(N * sizeof(*v)), seed = 1;

	if (!v)
		return 1;
	usleep(300000);
	end = now() + secs;
	while (now() < end)
		sort_round(v, seed++);
	free(v);
	return 0;
}
