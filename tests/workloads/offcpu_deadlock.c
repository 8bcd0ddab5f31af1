// SPDX-License-Identifier: Apache-2.0
/*
 * offcpu_deadlock: two threads take two pthread mutexes in opposite orders and
 * deadlock for good in lock_second(); the main thread waits for them forever in
 * pthread_join().  Prints "deadlocked" once both are stuck.  Kill it to end it.
 * lock_second() locks through lock_mutex() so that a frame-pointer walk from inside
 * libc, which loses the direct caller of libc's function, still shows it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both_hold;

__attribute__((noinline)) void lock_mutex(pthread_mutex_t *m)
{
	pthread_mutex_lock(m);
}

__attribute__((noinline)) void lock_second(pthread_mutex_t *m)
{
	lock_mutex(m);
}

static void *worker(void *arg)
{
	pthread_mutex_t *first = arg, *second = first == &a ? &b : &a;

	pthread_mutex_lock(first);
	pthread_barrier_wait(&both_hold);
	lock_second(second);
	return NULL;
}

int main(void)
{
	pthread_t t1, t2;

	pthread_barrier_init(&both_hold, NULL, 2);
	if (pthread_create(&t1, NULL, worker, &a) || pthread_create(&t2, NULL, worker, &b)) {
		perror("offcpu_deadlock: pthread_create");
		return 1;
	}
	/* Past the barrier both block in lock_second() at once. */
	usleep(100000);
	printf("deadlocked\n");
	fflush(stdout);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	return 0;
}
