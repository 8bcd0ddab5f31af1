// SPDX-License-Identifier: Apache-2.0
/*
 * runq_pair [-f] [-s SPIN_US] [-z SLEEP_US] [-t PAGES] SECONDS [together|apart|free]:
 * two threads that each spin for SECONDS, sleeping SLEEP_US (default 50) after every
 * SPIN_US (default 2000) of spinning, so each wakes up and is timed entering the run
 * queue that often.  "together" pins both to CPU 0, where each waits while the other
 * spins; "apart" pins them to CPUs 0 and 1, where neither waits for the other;
 * "free" (the default) leaves them be.  -f: the two threads run SCHED_FIFO
 * (priority 1), ahead of everything else on a busy machine.  -t PAGES: the main
 * thread first touches that many new pages (one page fault each).
 *
 * On stderr, at the start: "runq_pair: pid P tids A B"; at the end, per thread:
 * "runq_pair: tid T cpu_ns N sleeps N nvcsw N" (its CPU time, how many sleeps it
 * made, and how many of them blocked: the kernel's count of its voluntary switches).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct worker {
	pthread_t thread;
	int cpu; /* -1: not pinned */
	bool fifo;
	uint64_t end_ns, spin_ns, sleep_ns;
	pid_t tid;
	uint64_t cpu_ns, sleeps, nvcsw;
	pthread_barrier_t *ready;
};

static volatile uint64_t sink;

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

__attribute__((noinline)) static void spin(uint64_t until)
{
	uint64_t x = sink;

	do {
		for (int i = 0; i < 2000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		sink = x;
	} while (clock_ns(CLOCK_MONOTONIC) < until);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct timespec nap = {0, w->sleep_ns};
	struct rusage ru;
	uint64_t now;

	w->tid = syscall(SYS_gettid);
	if (w->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(w->cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			perror("runq_pair: sched_setaffinity");
			exit(1);
		}
	}
	if (w->fifo) {
		struct sched_param sp = {.sched_priority = 1};

		if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp)) {
			fprintf(stderr, "runq_pair: SCHED_FIFO refused (needs root)\n");
			exit(1);
		}
	}
	pthread_barrier_wait(w->ready);
	while ((now = clock_ns(CLOCK_MONOTONIC)) < w->end_ns) {
		spin(now + w->spin_ns < w->end_ns ? now + w->spin_ns : w->end_ns);
		nanosleep(&nap, NULL);
		w->sleeps++;
	}
	w->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	/* A sleep whose timer expired before the thread got to block does not switch. */
	if (!getrusage(RUSAGE_THREAD, &ru))
		w->nvcsw = ru.ru_nvcsw;
	return NULL;
}

static void touch_pages(long pages)
{
	long psz = sysconf(_SC_PAGESIZE), i;
	char *p;

	if (pages <= 0)
		return;
	p = mmap(NULL, pages * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("runq_pair: mmap");
		exit(1);
	}
	/* One fault per page: no huge page may serve many at once. */
	madvise(p, pages * psz, MADV_NOHUGEPAGE);
	for (i = 0; i < pages; i++)
		p[i * psz] = 1;
	munmap(p, pages * psz);
}

static void usage(void)
{
	fprintf(stderr, "usage: runq_pair [-f] [-s SPIN_US] [-z SLEEP_US] [-t PAGES] SECONDS "
			"[together|apart|free]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	uint64_t spin_ns = 2000000, sleep_ns = 50000, end;
	const char *mode = "free";
	long pages = 0;
	bool fifo = false;
	struct worker w[2];
	pthread_barrier_t ready;
	double secs;
	int i, c;

	while ((c = getopt(argc, argv, "fs:z:t:")) != -1) {
		switch (c) {
		case 'f':
			fifo = true;
			break;
		case 's':
			spin_ns = strtoull(optarg, NULL, 10) * 1000;
			break;
		case 'z':
			sleep_ns = strtoull(optarg, NULL, 10) * 1000;
			break;
		case 't':
			pages = atol(optarg);
			break;
		default:
			usage();
		}
	}
	if (optind >= argc)
		usage();
	secs = atof(argv[optind]);
	if (optind + 1 < argc)
		mode = argv[optind + 1];
	if (secs <= 0 || !spin_ns || sleep_ns >= 1000000000 ||
	    (strcmp(mode, "together") && strcmp(mode, "apart") && strcmp(mode, "free")))
		usage();
	touch_pages(pages);
	pthread_barrier_init(&ready, NULL, 3);
	end = clock_ns(CLOCK_MONOTONIC) + (uint64_t)(secs * 1e9);
	for (i = 0; i < 2; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].cpu = !strcmp(mode, "together") ? 0 : !strcmp(mode, "apart") ? i : -1;
		w[i].end_ns = end;
		w[i].spin_ns = spin_ns;
		w[i].sleep_ns = sleep_ns;
		w[i].fifo = fifo;
		w[i].ready = &ready;
		if (pthread_create(&w[i].thread, NULL, worker_main, &w[i])) {
			fprintf(stderr, "runq_pair: cannot create a thread\n");
			return 1;
		}
	}
	pthread_barrier_wait(&ready);
	fprintf(stderr, "runq_pair: pid %d tids %d %d\n", (int)getpid(), (int)w[0].tid,
		(int)w[1].tid);
	for (i = 0; i < 2; i++)
		pthread_join(w[i].thread, NULL);
	for (i = 0; i < 2; i++)
		fprintf(stderr, "runq_pair: tid %d cpu_ns %llu sleeps %llu nvcsw %llu\n",
			(int)w[i].tid, (unsigned long long)w[i].cpu_ns,
			(unsigned long long)w[i].sleeps, (unsigned long long)w[i].nvcsw);
	return 0;
}
