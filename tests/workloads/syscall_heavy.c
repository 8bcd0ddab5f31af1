// SPDX-License-Identifier: Apache-2.0
/*
 * syscall_heavy [SECONDS]: for SECONDS (default 3) loops on write() to /dev/null,
 * read() of /dev/zero and getppid(), so most CPU time is spent in the kernel
 * (read of /dev/zero clears the buffer in kernel mode: that dominates).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static char buf[64 * 1024];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

__attribute__((noinline)) void syscall_loop(int null_fd, int zero_fd, uint64_t end)
{
	while (now_ns() < end) {
		for (int i = 0; i < 64; i++) {
			if (read(zero_fd, buf, sizeof(buf)) < 0 ||
			    write(null_fd, buf, sizeof(buf)) < 0) {
				perror("syscall_heavy: read/write");
				exit(1);
			}
			getppid();
		}
	}
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3.0;
	int null_fd = open("/dev/null", O_WRONLY);
	int zero_fd = open("/dev/zero", O_RDONLY);

	if (secs <= 0 || null_fd < 0 || zero_fd < 0) {
		fprintf(stderr,
			"usage: syscall_heavy [SECONDS > 0] (needs /dev/null, /dev/zero)\n");
		return 2;
	}
	syscall_loop(null_fd, zero_fd, now_ns() + (uint64_t)(secs * 1e9));
	return 0;
}
