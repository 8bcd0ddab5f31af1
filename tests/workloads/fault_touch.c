// SPDX-License-Identifier: Apache-2.0
/*
 * fault_touch [SECONDS]: page faults in one function, CPU time in another.  Each
 * round maps 16 MiB of fresh anonymous memory and writes one byte per page in
 * touch_pages() (every write a page fault), then spins in spin() about as long, for
 * SECONDS (default 3).  A page-faults profile lands in touch_pages, a cpu-clock one
 * in both.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define ROUND_BYTES (16u << 20)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void touch_pages(volatile char *p, size_t len, long page)
{
	for (size_t off = 0; off < len; off += page)
		p[off] = 1;
}

__attribute__((noinline)) uint64_t spin(uint64_t iters, uint64_t x)
{
	for (uint64_t i = 0; i < iters; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3, end;
	long page = sysconf(_SC_PAGESIZE);
	uint64_t x = 1, rounds = 0;

	if (secs <= 0) {
		fprintf(stderr, "usage: fault_touch [SECONDS > 0]\n");
		return 2;
	}
	for (end = now() + secs; now() < end; rounds++) {
		char *p = mmap(NULL, ROUND_BYTES, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		touch_pages(p, ROUND_BYTES, page);
		munmap(p, ROUND_BYTES);
		x = spin(2000000, x);
	}
	printf("%llu rounds %016llx\n", (unsigned long long)rounds, (unsigned long long)x);
	return 0;
}
