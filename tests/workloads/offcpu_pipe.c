// SPDX-License-Identifier: Apache-2.0
/*
 * offcpu_pipe [SECONDS]: a writer thread sends one byte down a pipe every 50 ms; the
 * main thread blocks in read() inside wait_for_data() until each arrives, for
 * SECONDS (default 2).  Nearly all of the reader's time is blocked under
 * wait_for_data() (which reads through read_byte(), so that a frame-pointer walk
 * from inside libc, which loses the direct caller of read(), still shows it).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int fds[2];
static uint64_t end_ns;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void *writer(void *arg)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = 50000000};
	char c = 'x';

	(void)arg;
	while (now_ns() < end_ns) {
		nanosleep(&ts, NULL);
		if (write(fds[1], &c, 1) != 1)
			break;
	}
	close(fds[1]);
	return NULL;
}

__attribute__((noinline)) ssize_t read_byte(int fd, char *buf)
{
	return read(fd, buf, 1);
}

__attribute__((noinline)) ssize_t wait_for_data(char *buf)
{
	return read_byte(fds[0], buf);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2;
	pthread_t w;
	char buf;

	if (pipe(fds)) {
		perror("offcpu_pipe: pipe");
		return 1;
	}
	end_ns = now_ns() + (uint64_t)(secs * 1e9);
	if (pthread_create(&w, NULL, writer, NULL)) {
		perror("offcpu_pipe: pthread_create");
		return 1;
	}
	while (wait_for_data(&buf) == 1)
		;
	pthread_join(w, NULL);
	return 0;
}
