// SPDX-License-Identifier: Apache-2.0
/*
 * nofp_forks N MS [exec]: N short-lived children, one after another, each sorting for
 * MS milliseconds: child_main -> sort_round -> qsort (libc) -> ... -> by_key, so every
 * hot stack crosses this binary and Debian's libc, neither with frame pointers.  With
 * "exec" each child first execs this binary again ("nofp_forks child MS").  A
 * profiler that unwinds a new process only once it has loaded its mappings loses
 * the first samples of every child.  Built without frame pointers by
 * tests/unwind.bats.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define N 4000

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

__attribute__((noinline)) int child_main(double ms)
{
	static unsigned long v[N];
	unsigned long seed = (unsigned long)getpid();
	double end = now() + ms / 1e3;

	while (now() < end)
		sort_round(v, seed++);
	return 0;
}

int main(int argc, char **argv)
{
	int n, i, status, bad = 0;
	double ms;

	if (argc > 2 && !strcmp(argv[1], "child"))
		return child_main(atof(argv[2]));
	if (argc < 3) {
		fprintf(stderr, "usage: nofp_forks N MS [exec]\n");
		return 2;
	}
	n = atoi(argv[1]);
	ms = atof(argv[2]);
	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (!pid) {
			if (argc > 3 && !strcmp(argv[3], "exec")) {
				execl("/proc/self/exe", argv[0], "child", argv[2], (char *)NULL);
				_exit(127);
			}
			_exit(child_main(ms));
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	}
	return bad ? 1 : 0;
}
