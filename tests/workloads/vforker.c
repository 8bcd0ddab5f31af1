// SPDX-License-Identifier: Apache-2.0
/*
 * vforker [SECONDS]: vfork children that exit at once, in a loop under main ->
 * spawn_loop for SECONDS (default 1), as a shell or posix_spawn does before an exec.
 * A child sampled on its way out of vfork is in glibc's __vfork, whose return address
 * is in rdi, not on the stack.
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static long spawn_loop(double secs)
{
	double end = now() + secs;
	long n = 0;

	while (now() < end) {
		pid_t pid = vfork();

		if (pid == 0)
			_exit(0);
		if (pid > 0)
			waitpid(pid, NULL, 0);
		n++;
	}
	return n;
}

int main(int argc, char **argv)
{
	return spawn_loop(argc > 1 ? atof(argv[1]) : 1) > 0 ? 0 : 1;
}
