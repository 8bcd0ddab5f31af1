// SPDX-License-Identifier: Apache-2.0
/*
 * perf-agent's spool: windows come back oldest first whatever order they were put
 * in, the bound drops the oldest (counted), a window over the bound alone is dropped
 * (counted), a failed write leaves no file, the windows outlive a close, damaged and
 * foreign files are skipped without a crash (ours deleted, foreign ones kept), a
 * crash's temp files are cleaned, one spool has one user, and a put and a pusher at
 * once lose nothing.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spool.h"
#include "unit.h"

#define HDR_SIZE 40 /* struct spool_hdr */
#define MIB	 (1ULL << 20)

static char root[] = "/tmp/pa-test-spool.XXXXXX";
static char dir[300];
static int nr_dirs;

/* A fresh spool directory for each test. */
static const char *new_dir(void)
{
	snprintf(dir, sizeof(dir), "%s/%d", root, ++nr_dirs);
	return dir;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void query_of(char *buf, size_t len, uint64_t start)
{
	snprintf(buf, len, "name=app%%7Bhost%%3Dx%%7D&from=%llu&until=%llu&format=pprof",
		 (unsigned long long)start, (unsigned long long)start + 10);
}

/* Window start's data: len bytes that say which window they are. */
static void fill(unsigned char *buf, size_t len, uint64_t start)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)(start * 31 + i);
}

static int put(struct spool *sp, uint64_t start, size_t len)
{
	unsigned char *data = malloc(len ? len : 1);
	char q[128];
	int err;

	query_of(q, sizeof(q), start);
	fill(data, len, start);
	err = spool_put(sp, start, q, data, len);
	free(data);
	return err;
}

/* The size put() gives a window's file. */
static uint64_t file_size(uint64_t start, size_t len)
{
	char q[128];

	query_of(q, sizeof(q), start);
	return HDR_SIZE + strlen(q) + len;
}

/* Peek the oldest, check it is window start of len bytes, and remove it. */
static void take(struct spool *sp, uint64_t start, size_t len)
{
	struct spool_item it;
	unsigned char *want = malloc(len ? len : 1);
	char q[128];
	int err = spool_peek(sp, &it);

	CHECK_EQ_U64(err, 0);
	if (err) {
		free(want);
		return;
	}
	query_of(q, sizeof(q), start);
	fill(want, len, start);
	CHECK_EQ_U64(it.start_ns, start);
	CHECK_STR(it.query, q);
	CHECK_EQ_U64(it.len, len);
	CHECK(it.len == len && !memcmp(it.data, want, len));
	CHECK_EQ_U64(spool_remove(sp, &it), 0);
	spool_item_free(&it);
	free(want);
}

static void check_empty(struct spool *sp)
{
	struct spool_item it;

	CHECK_EQ_U64(spool_peek(sp, &it), -ENOENT);
}

/* The names in dir that are not ".", ".." or ".lock", counted. */
static int count_files(const char *d)
{
	DIR *dd = opendir(d);
	struct dirent *e;
	int n = 0;

	if (!dd)
		return -1;
	while ((e = readdir(dd)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, ".lock"))
			n++;
	closedir(dd);
	return n;
}

/* The path of the spool file of the nth-oldest window (0 first), in buf. */
static int nth_file(const char *d, int nth, char *buf, size_t len)
{
	struct dirent **names;
	int n = scandir(d, &names, NULL, alphasort), found = -1;

	for (int i = 0, k = 0; i < n; i++) {
		const char *s = names[i]->d_name;

		if (found < 0 && strstr(s, ".window") && s[0] != '.' && k++ == nth)
			found = snprintf(buf, len, "%s/%s", d, s) < (int)len ? 0 : -1;
		free(names[i]);
	}
	free(names);
	return found;
}

static void write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK_EQ_U64(write(fd, data, len), len);
	close(fd);
}

static void test_oldest_first(void)
{
	struct spool *sp = spool_open(new_dir(), 64 * MIB);
	struct spool_stats st;

	CHECK(sp);
	if (!sp)
		return;
	/* Out of order (a clock step), two of one start, an empty one. */
	CHECK_EQ_U64(put(sp, 3000, 100), 0);
	CHECK_EQ_U64(put(sp, 1000, 5000), 0);
	CHECK_EQ_U64(put(sp, 2000, 0), 0);
	CHECK_EQ_U64(put(sp, 3000, 101), 0);
	spool_stats(sp, &st);
	CHECK_EQ_U64(st.windows, 4);
	CHECK_EQ_U64(st.bytes, file_size(3000, 100) + file_size(1000, 5000) + file_size(2000, 0) +
				       file_size(3000, 101));
	CHECK_EQ_U64(st.dropped, 0);
	take(sp, 1000, 5000);
	take(sp, 2000, 0);
	take(sp, 3000, 100);
	take(sp, 3000, 101);
	check_empty(sp);
	spool_stats(sp, &st);
	CHECK_EQ_U64(st.windows, 0);
	CHECK_EQ_U64(st.bytes, 0);
	CHECK_EQ_U64(count_files(dir), 0);
	spool_close(sp);
}

static void test_bound_drops_oldest(void)
{
	uint64_t one = file_size(1000, 1000);
	struct spool *sp = spool_open(new_dir(), 3 * one);
	struct spool_stats st;

	CHECK(sp);
	if (!sp)
		return;
	for (uint64_t s = 1000; s <= 5000; s += 1000)
		CHECK_EQ_U64(put(sp, s, 1000), 0);
	spool_stats(sp, &st);
	CHECK_EQ_U64(st.windows, 3);
	CHECK_EQ_U64(st.bytes, 3 * one);
	CHECK_EQ_U64(st.dropped, 2);
	CHECK_EQ_U64(count_files(dir), 3);
	take(sp, 3000, 1000);
	take(sp, 4000, 1000);
	take(sp, 5000, 1000);
	check_empty(sp);
	spool_close(sp);
}

static void test_too_big_dropped(void)
{
	struct spool *sp = spool_open(new_dir(), 10000);
	struct spool_stats st;

	CHECK(sp);
	if (!sp)
		return;
	CHECK_EQ_U64(put(sp, 1000, 100), 0);
	CHECK_EQ_U64(put(sp, 2000, 20000), -EFBIG);
	spool_stats(sp, &st);
	CHECK_EQ_U64(st.windows, 1); /* it made no room: the older one stays */
	CHECK_EQ_U64(st.dropped, 1);
	CHECK_EQ_U64(count_files(dir), 1);
	take(sp, 1000, 100);
	spool_close(sp);
}

/* A write that fails half way (RLIMIT_FSIZE: EFBIG, as ENOSPC would) leaves nothing. */
static void test_write_failure_leaves_nothing(void)
{
	struct spool *sp = spool_open(new_dir(), 64 * MIB);
	struct rlimit old, lim;
	struct spool_stats st;
	int err;

	CHECK(sp);
	if (!sp)
		return;
	CHECK_EQ_U64(put(sp, 1000, 10), 0);
	getrlimit(RLIMIT_FSIZE, &old);
	lim = old;
	lim.rlim_cur = 4096;
	signal(SIGXFSZ, SIG_IGN);
	CHECK_EQ_U64(setrlimit(RLIMIT_FSIZE, &lim), 0);
	err = put(sp, 2000, 100000);
	setrlimit(RLIMIT_FSIZE, &old);
	CHECK(err < 0);
	spool_stats(sp, &st);
	CHECK_EQ_U64(st.windows, 1);
	CHECK_EQ_U64(st.dropped, 1);
	CHECK_EQ_U64(count_files(dir), 1);
	take(sp, 1000, 10);
	spool_close(sp);
}

static void test_reopen_keeps_order(void)
{
	struct spool *sp = spool_open(new_dir(), 64 * MIB);
	struct spool_stats st;
	struct spool_item old;

	CHECK(sp);
	if (!sp)
		return;
	CHECK_EQ_U64(put(sp, 2000, 20), 0);
	CHECK_EQ_U64(put(sp, 1000, 10), 0);
	CHECK_EQ_U64(put(sp, 3000, 30), 0);
	spool_close(sp);

	sp = spool_open(dir, 64 * MIB);
	CHECK(sp);
	if (!sp)
		return;
	spool_stats(sp, &st);
	CHECK_EQ_U64(st.windows, 3);
	CHECK_EQ_U64(st.bytes, file_size(1000, 10) + file_size(2000, 20) + file_size(3000, 30));
	/* A new window of an old one's start is a window more, after it. */
	CHECK_EQ_U64(spool_peek(sp, &old), 0);
	CHECK_EQ_U64(put(sp, 1000, 11), 0);
	CHECK_EQ_U64(spool_remove(sp, &old), 0);
	spool_item_free(&old);
	take(sp, 1000, 11);
	take(sp, 2000, 20);
	take(sp, 3000, 30);
	check_empty(sp);
	spool_close(sp);
}

/* A smaller bound on reopening drops the oldest of what is there. */
static void test_reopen_smaller_bound(void)
{
	struct spool *sp = spool_open(new_dir(), 64 * MIB);
	struct spool_stats st;

	CHECK(sp);
	if (!sp)
		return;
	for (uint64_t s = 1000; s <= 4000; s += 1000)
		CHECK_EQ_U64(put(sp, s, 1000), 0);
	spool_close(sp);
	sp = spool_open(dir, 2 * file_size(1000, 1000));
	CHECK(sp);
	if (!sp)
		return;
	spool_stats(sp, &st);
	CHECK_EQ_U64(st.windows, 2);
	CHECK_EQ_U64(st.dropped, 2);
	take(sp, 3000, 1000);
	take(sp, 4000, 1000);
	spool_close(sp);
}

static void test_damaged_files_skipped(void)
{
	static const char later[] = "PASPOOL9, a later format: more bytes than our header";
	char path[400], name[400];
	struct spool *sp = spool_open(new_dir(), 64 * MIB);
	struct spool_stats st;
	struct stat sb;
	int fd;

	CHECK(sp);
	if (!sp)
		return;
	for (uint64_t s = 1000; s <= 6000; s += 1000)
		CHECK_EQ_U64(put(sp, s, 1000), 0);
	spool_close(sp);
	/* 2000 cut short, 3000 a flipped data byte, 4000 emptied, 5000 a huge length. */
	CHECK_EQ_U64(nth_file(dir, 1, path, sizeof(path)), 0);
	CHECK_EQ_U64(truncate(path, 500), 0);
	CHECK_EQ_U64(nth_file(dir, 2, path, sizeof(path)), 0);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0 && pwrite(fd, "\xff", 1, 700) == 1);
	close(fd);
	CHECK_EQ_U64(nth_file(dir, 3, path, sizeof(path)), 0);
	CHECK_EQ_U64(truncate(path, 0), 0);
	CHECK_EQ_U64(nth_file(dir, 4, path, sizeof(path)), 0);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0 && pwrite(fd, "\xff\xff\xff\xff\xff\xff\xff\x7f", 8, 24) == 8);
	close(fd);
	/* Not ours: a stray file, our name with another magic, a folder of our name. */
	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	write_file(path, "hello", 5);
	/* Seq 6: what the next put would take, were it not for this file. */
	snprintf(name, sizeof(name), "%s/%020llu-%010llu.window", dir, 500ULL, 6ULL);
	write_file(name, later, strlen(later));
	snprintf(path, sizeof(path), "%s/%020llu-%010llu.window", dir, 700ULL, 98ULL);
	CHECK_EQ_U64(mkdir(path, 0700), 0);

	sp = spool_open(dir, 64 * MIB);
	CHECK(sp);
	if (!sp)
		return;
	take(sp, 1000, 1000);
	take(sp, 6000, 1000);
	check_empty(sp);
	spool_stats(sp, &st);
	CHECK_EQ_U64(st.dropped, 4);
	/* The foreign three stay; the damaged ones are gone. */
	CHECK_EQ_U64(count_files(dir), 3);
	CHECK_EQ_U64(stat(name, &sb), 0);
	/* A new window never takes a foreign file's name. */
	CHECK_EQ_U64(put(sp, 500, 10), 0);
	take(sp, 500, 10);
	CHECK_EQ_U64(count_files(dir), 3);
	CHECK(!stat(name, &sb) && sb.st_size == (off_t)strlen(later));
	spool_close(sp);
}

/* A file damaged while the spool is open is skipped by peek, and deleted. */
static void test_damaged_while_open(void)
{
	char path[400];
	struct spool *sp = spool_open(new_dir(), 64 * MIB);
	struct spool_stats st;

	CHECK(sp);
	if (!sp)
		return;
	CHECK_EQ_U64(put(sp, 1000, 1000), 0);
	CHECK_EQ_U64(put(sp, 2000, 1000), 0);
	CHECK_EQ_U64(put(sp, 3000, 1000), 0);
	CHECK_EQ_U64(nth_file(dir, 0, path, sizeof(path)), 0);
	CHECK_EQ_U64(truncate(path, 1500), 0);
	CHECK_EQ_U64(nth_file(dir, 1, path, sizeof(path)), 0);
	CHECK_EQ_U64(unlink(path), 0);
	take(sp, 3000, 1000);
	check_empty(sp);
	spool_stats(sp, &st);
	CHECK_EQ_U64(st.dropped, 2);
	CHECK_EQ_U64(st.bytes, 0);
	CHECK_EQ_U64(count_files(dir), 0);
	spool_close(sp);
}

static void test_temp_files_cleaned(void)
{
	char tmp[400], other[400];
	struct spool *sp = spool_open(new_dir(), 64 * MIB);
	struct stat sb;

	CHECK(sp);
	if (!sp)
		return;
	CHECK_EQ_U64(put(sp, 1000, 10), 0);
	spool_close(sp);
	/* What a crash half way through a put leaves, and a look-alike that is not ours. */
	snprintf(tmp, sizeof(tmp), "%s/.tmp-%020llu-%010llu.window", dir, 2000ULL, 1ULL);
	write_file(tmp, "PASPOOL1", 8);
	snprintf(other, sizeof(other), "%s/.tmp-mine", dir);
	write_file(other, "x", 1);
	sp = spool_open(dir, 64 * MIB);
	CHECK(sp);
	if (!sp)
		return;
	CHECK(stat(tmp, &sb) && errno == ENOENT);
	CHECK_EQ_U64(stat(other, &sb), 0);
	take(sp, 1000, 10);
	check_empty(sp);
	spool_close(sp);
}

static void test_one_user_and_mkdir(void)
{
	char nested[400];
	struct spool *sp, *again;
	struct stat sb;

	snprintf(nested, sizeof(nested), "%s/a/b/spool", new_dir());
	sp = spool_open(nested, MIB);
	CHECK(sp);
	CHECK(!stat(nested, &sb) && S_ISDIR(sb.st_mode) && (sb.st_mode & 0777) == 0700);
	again = spool_open(nested, MIB);
	CHECK(!again && errno == EBUSY);
	spool_close(again);
	spool_close(sp);
	sp = spool_open(nested, MIB);
	CHECK(sp);
	spool_close(sp);
	/* A file where the folder should be: NULL and errno, no crash. */
	snprintf(nested, sizeof(nested), "%s/file", dir);
	write_file(nested, "x", 1);
	CHECK(!spool_open(nested, MIB) && errno == ENOTDIR);
}

/* The window being pushed is deleted by the bound meanwhile: remove says so, no other. */
static void test_remove_after_drop(void)
{
	struct spool *sp = spool_open(new_dir(), 2 * file_size(1000, 100));
	struct spool_item it;
	struct spool_stats st;

	CHECK(sp);
	if (!sp)
		return;
	CHECK_EQ_U64(put(sp, 1000, 100), 0);
	CHECK_EQ_U64(put(sp, 2000, 100), 0);
	CHECK_EQ_U64(spool_peek(sp, &it), 0);
	CHECK_EQ_U64(put(sp, 3000, 100), 0);
	CHECK_EQ_U64(spool_remove(sp, &it), -ENOENT);
	spool_item_free(&it);
	spool_stats(sp, &st);
	CHECK_EQ_U64(st.windows, 2);
	CHECK_EQ_U64(st.dropped, 1);
	take(sp, 2000, 100);
	take(sp, 3000, 100);
	spool_close(sp);
}

#define NR_RACE 2000

static void *race_put(void *arg)
{
	struct spool *sp = arg;

	for (uint64_t s = 1; s <= NR_RACE; s++)
		CHECK_EQ_U64(put(sp, s, s % 300), 0);
	return NULL;
}

/* Puts on one thread, peeks and removes on another: every window pushed or dropped. */
static void test_put_and_push_at_once(void)
{
	struct spool *sp = spool_open(new_dir(), 20 * file_size(1, 299));
	uint64_t taken = 0, last = 0;
	struct spool_stats st;
	pthread_t t;
	bool done = false;

	CHECK(sp);
	if (!sp)
		return;
	pthread_create(&t, NULL, race_put, sp);
	while (!done) {
		struct spool_item it;
		int err = spool_peek(sp, &it);

		if (err == -ENOENT) {
			spool_stats(sp, &st);
			/* Empty, and the last put went in (or was dropped): the end. */
			done = last == NR_RACE || taken + st.dropped == NR_RACE;
			continue;
		}
		CHECK_EQ_U64(err, 0);
		if (err)
			break;
		CHECK(it.start_ns > last); /* oldest first, even against new puts */
		last = it.start_ns;
		if (!spool_remove(sp, &it))
			taken++;
		spool_item_free(&it);
	}
	pthread_join(t, NULL);
	spool_stats(sp, &st);
	CHECK_EQ_U64(taken + st.dropped + st.windows, NR_RACE);
	spool_close(sp);
}

int main(void)
{
	if (!mkdtemp(root)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	RUN(test_oldest_first);
	RUN(test_bound_drops_oldest);
	RUN(test_too_big_dropped);
	RUN(test_write_failure_leaves_nothing);
	RUN(test_reopen_keeps_order);
	RUN(test_reopen_smaller_bound);
	RUN(test_damaged_files_skipped);
	RUN(test_damaged_while_open);
	RUN(test_temp_files_cleaned);
	RUN(test_one_user_and_mkdir);
	RUN(test_remove_after_drop);
	RUN(test_put_and_push_at_once);
	nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return unit_done();
}
