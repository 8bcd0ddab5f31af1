// SPDX-License-Identifier: Apache-2.0
/* /proc readers against this process, a thread of it and a child that is gone. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/procfs.h"
#include "unit.h"

__attribute__((noinline)) static int procfs_marker(void)
{
	return getpid();
}

static const struct proc_map *find_map(const struct proc_map *m, int n, uint64_t addr)
{
	int i;

	for (i = 0; i < n; i++)
		if (addr >= m[i].start && addr < m[i].end)
			return &m[i];
	return NULL;
}

static void test_maps_of_self(void)
{
	struct proc_map *maps;
	const struct proc_map *m;
	char exe[4096];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int n, i, stack = 0;

	CHECK(len > 0);
	exe[len > 0 ? len : 0] = '\0';
	n = proc_read_maps(getpid(), false, &maps);
	CHECK(n > 5);
	if (n <= 0)
		return;
	m = find_map(maps, n, (uint64_t)(uintptr_t)&procfs_marker);
	CHECK(m != NULL);
	if (m) {
		CHECK_STR(m->path, exe);
		CHECK(m->prot & PROT_EXEC);
		CHECK(m->flags == MAP_PRIVATE);
		CHECK(m->ino != 0);
		CHECK(!m->deleted);
	}
	for (i = 0; i < n; i++)
		stack += !strcmp(maps[i].path, "[stack]");
	CHECK(stack == 1);
	proc_maps_free(maps, (size_t)n);

	/* exec_only drops the stack. */
	n = proc_read_maps(getpid(), true, &maps);
	CHECK(n > 0);
	for (i = 0; i < n; i++)
		CHECK(maps[i].prot & PROT_EXEC);
	proc_maps_free(maps, n > 0 ? (size_t)n : 0);
}

static void test_maps_odd_paths(void)
{
	char dir[] = "/tmp/pa test dir XXXXXX", path[256];
	const struct proc_map *m;
	struct proc_map *maps;
	void *file_map, *anon;
	int fd, n;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/lib with  spaces.so", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	CHECK(ftruncate(fd, 8192) == 0);
	file_map = mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, 4096);
	close(fd);
	CHECK(file_map != MAP_FAILED);
	CHECK(unlink(path) == 0);
	rmdir(dir);
	anon = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(anon != MAP_FAILED);

	n = proc_read_maps(getpid(), false, &maps);
	CHECK(n > 0);
	m = find_map(maps, n, (uint64_t)(uintptr_t)file_map);
	CHECK(m != NULL);
	if (m) {
		CHECK_STR(m->path, path); /* spaces kept, " (deleted)" not */
		CHECK(m->deleted);
		CHECK_EQ_U64(m->pgoff, 4096);
		CHECK(m->flags == MAP_SHARED);
		CHECK(m->prot == PROT_READ);
	}
	m = find_map(maps, n, (uint64_t)(uintptr_t)anon);
	CHECK(m != NULL);
	if (m)
		CHECK_STR(m->path, "//anon");
	proc_maps_free(maps, n > 0 ? (size_t)n : 0);
	munmap(file_map, 8192);
	munmap(anon, 4096);
}

static void test_vanished_pid_is_esrch(void)
{
	pid_t child = fork(), *ids = NULL;
	struct proc_map *maps;
	char comm[32];
	pid_t ppid, tgid;

	if (child == 0)
		_exit(0);
	CHECK(child > 0);
	waitpid(child, NULL, 0);
	CHECK(!proc_exists(child));
	CHECK(proc_read_maps(child, false, &maps) == -ESRCH);
	CHECK(proc_list_tids(child, &ids) == -ESRCH);
	CHECK(proc_read_comm(child, child, comm, sizeof(comm)) == -ESRCH);
	CHECK(proc_read_ppid_tgid(child, &ppid, &tgid) == -ESRCH);
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int thread_tid, thread_release;

static void *thread_fn(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "pa worker 1");
	pthread_mutex_lock(&lock);
	thread_tid = gettid();
	pthread_cond_broadcast(&cond);
	while (!thread_release)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void test_threads_and_comm(void)
{
	pid_t *tids = NULL, *pids = NULL, ppid = 0, tgid = 0;
	char comm[32];
	pthread_t th;
	int n, i, seen = 0, self = 0;

	CHECK(pthread_create(&th, NULL, thread_fn, NULL) == 0);
	pthread_mutex_lock(&lock);
	while (!thread_tid)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);

	n = proc_list_tids(getpid(), &tids);
	CHECK(n == 2);
	for (i = 0; i < n; i++) {
		seen += tids[i] == thread_tid;
		self += tids[i] == getpid();
	}
	CHECK(seen == 1 && self == 1);
	free(tids);
	CHECK(proc_read_comm(getpid(), thread_tid, comm, sizeof(comm)) == 0);
	CHECK_STR(comm, "pa worker 1");
	CHECK(proc_read_ppid_tgid(thread_tid, &ppid, &tgid) == 0);
	CHECK(tgid == getpid());
	CHECK(proc_read_ppid_tgid(getpid(), &ppid, &tgid) == 0);
	CHECK(ppid == getppid());
	/* Truncation keeps a terminated string. */
	CHECK(proc_read_comm(getpid(), thread_tid, comm, 4) == 0);
	CHECK_STR(comm, "pa ");

	pthread_mutex_lock(&lock);
	thread_release = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	pthread_join(th, NULL);

	n = proc_list_pids(&pids);
	CHECK(n > 1);
	for (i = seen = 0; i < n; i++)
		seen += pids[i] == getpid() || pids[i] == 1;
	CHECK(seen == 2);
	free(pids);
	CHECK(proc_exists(getpid()));
	CHECK(!proc_exists(0));
}

int main(void)
{
	RUN(test_maps_of_self);
	RUN(test_maps_odd_paths);
	RUN(test_vanished_pid_is_esrch);
	RUN(test_threads_and_comm);
	return unit_done();
}
