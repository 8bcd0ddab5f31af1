// SPDX-License-Identifier: Apache-2.0
/*
 * perf-agent's pusher against tests/lib/ingest_receiver.py: spooled windows arrive
 * oldest first with their bytes, tenant and credentials; a base URL ending in '/'
 * works; a 4xx rejects (one warning per status, the window deleted); a 5xx and a
 * refused connection are retried (one warning, the window kept) until the server is
 * back ("pushed ... again"); pusher_stop abandons a slow request within its grace;
 * bad options fail pusher_start with one line naming the cause.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/util.h"
#include "push.h"
#include "spool.h"
#include "unit.h"

#define MS  1000000ULL
#define MIB (1ULL << 20)

static char root[] = "/tmp/pa-test-push.XXXXXX";
static int nr_dirs;

struct receiver {
	pid_t pid;
	int port;
	char dir[300];
};

/* A new folder under root, its path in buf. */
static void new_dir(char *buf, size_t len, const char *what)
{
	snprintf(buf, len, "%s/%d-%s", root, ++nr_dirs, what);
	mkdir(buf, 0700);
}

/* Start the receiver (port 0: any), and wait until it listens.  0 or -1. */
static int receiver_start(struct receiver *r, int port, const char *status, const char *delay)
{
	char script[512], port_file[400], port_arg[16];
	const char *top = getenv("PA_ROOT");
	uint64_t until = pa_now_ns() + 10000 * MS;
	FILE *f;

	snprintf(script, sizeof(script), "%s/tests/lib/ingest_receiver.py", top ? top : ".");
	if (snprintf(port_file, sizeof(port_file), "%s/port", r->dir) >= (int)sizeof(port_file))
		return -1;
	snprintf(port_arg, sizeof(port_arg), "%d", port);
	unlink(port_file);
	r->pid = fork();
	if (r->pid < 0)
		return -1;
	if (!r->pid) {
		const char *argv[] = {"python3", script,	"--dir",   r->dir,     "--port",
				      port_arg,	 "--port-file", port_file, "--status", status,
				      "--delay", delay,		NULL};

		execvp("python3", (char **)argv);
		_exit(127);
	}
	while (pa_now_ns() < until) {
		f = fopen(port_file, "r");
		if (f && fscanf(f, "%d", &r->port) == 1) {
			fclose(f);
			return 0;
		}
		if (f)
			fclose(f);
		if (waitpid(r->pid, NULL, WNOHANG) == r->pid)
			break;
		usleep(20000);
	}
	printf("#   ingest_receiver.py did not start (python3 missing? make deps installs it)\n");
	return -1;
}

static void receiver_stop(struct receiver *r)
{
	if (r->pid > 0) {
		kill(r->pid, SIGTERM);
		waitpid(r->pid, NULL, 0);
	}
	r->pid = 0;
}

static char *slurp(const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = fopen(path, "r"), *m = open_memstream(&buf, &len);
	int c;

	while (f && (c = fgetc(f)) != EOF)
		fputc(c, m);
	if (f)
		fclose(f);
	fclose(m);
	return buf;
}

/* How many lines of file name in r's folder hold needle. */
static int count_in(const char *dir, const char *name, const char *needle)
{
	char path[512];
	char *text, *line, *save = NULL;
	int n = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	text = slurp(path);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		n += strstr(line, needle) != NULL;
	free(text);
	return n;
}

/* stderr into a file for a while, to count the lines the pusher says. */
static int stderr_to(const char *path)
{
	int saved = dup(STDERR_FILENO), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	dup2(fd, STDERR_FILENO);
	close(fd);
	return saved;
}

static void stderr_back(int saved)
{
	dup2(saved, STDERR_FILENO);
	close(saved);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void fill(unsigned char *buf, size_t len, uint64_t n)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)(n * 7 + i * 13);
}

/* Window n: query from=n, until=n+10, and 3000 bytes that say which window it is. */
static int put(struct spool *sp, uint64_t n)
{
	unsigned char data[3000];
	char q[128];

	fill(data, sizeof(data), n);
	snprintf(q, sizeof(q), "name=app%%7Bhost%%3Dx%%7D&from=%llu&until=%llu&format=pprof",
		 (unsigned long long)n, (unsigned long long)n + 10);
	return spool_put(sp, n * 1000000000ULL, q, data, sizeof(data));
}

/* Whether file path holds window n's bytes, as put() made them. */
static bool same_bytes(const char *path, uint64_t n)
{
	unsigned char want[3000], got[3001];
	FILE *f = fopen(path, "rb");
	size_t len;

	if (!f)
		return false;
	len = fread(got, 1, sizeof(got), f);
	fclose(f);
	fill(want, sizeof(want), n);
	return len == sizeof(want) && !memcmp(got, want, len);
}

/* Wait up to ms for the pusher's stats to satisfy cond. */
#define WAIT_FOR(p, st, ms, cond)                                                                  \
	do {                                                                                       \
		uint64_t _until = pa_now_ns() + (ms)*MS;                                           \
		for (;;) {                                                                         \
			pusher_stats((p), &(st));                                                  \
			if ((cond) || pa_now_ns() > _until)                                        \
				break;                                                             \
			usleep(10000);                                                             \
		}                                                                                  \
	} while (0)

static void url_of(char *buf, size_t len, const struct receiver *r, const char *tail)
{
	snprintf(buf, len, "http://127.0.0.1:%d%s", r->port, tail);
}

static void test_pushed_oldest_first(void)
{
	struct receiver r = {0};
	char url[128], token[512], spool_dir[400], path[600];
	struct push_opts o = {.url = url, .tenant = "team-a", .token_file = token};
	struct push_stats st;
	struct spool_stats ss;
	struct spool *sp;
	struct pusher *p;

	new_dir(r.dir, sizeof(r.dir), "recv");
	new_dir(spool_dir, sizeof(spool_dir), "spool");
	snprintf(token, sizeof(token), "%s/token", spool_dir);
	write_file(token, "s3cret\n");
	if (receiver_start(&r, 0, "200", "0")) {
		CHECK(0);
		return;
	}
	url_of(url, sizeof(url), &r, "/"); /* not //ingest */
	sp = spool_open(spool_dir, 64 * MIB);
	CHECK(sp);
	/* Spooled before the pusher starts (a restart), out of order. */
	CHECK_EQ_U64(put(sp, 1700000030), 0);
	CHECK_EQ_U64(put(sp, 1700000010), 0);
	p = pusher_start(&o, sp);
	CHECK(p);
	if (p) {
		CHECK_EQ_U64(put(sp, 1700000040), 0);
		pusher_kick(p);
		CHECK_EQ_U64(put(sp, 1700000050), 0); /* no kick: found after the others */
		WAIT_FOR(p, st, 10000, st.pushed == 4);
		CHECK_EQ_U64(st.pushed, 4);
		CHECK_EQ_U64(st.failed_tries + st.rejected, 0);
		CHECK_STR(st.last_error, "");
		pusher_stop(p, 1000 * MS);
		pusher_free(p);
	}
	spool_stats(sp, &ss);
	CHECK_EQ_U64(ss.windows, 0);
	spool_close(sp);
	receiver_stop(&r);

	CHECK_EQ_U64(count_in(r.dir, "uploads.jsonl", "\"name\": \"app{host=x}\""), 4);
	CHECK_EQ_U64(count_in(r.dir, "uploads.jsonl", "\"tenant\": \"team-a\""), 4);
	CHECK_EQ_U64(count_in(r.dir, "uploads.jsonl", "\"authorization\": \"Bearer s3cret\""), 4);
	CHECK_EQ_U64(count_in(r.dir, "uploads.jsonl", "\"bytes\": 3000"), 4);
	/* In time order, each with its own bytes. */
	for (int i = 0; i < 4; i++) {
		static const uint64_t order[] = {1700000010, 1700000030, 1700000040, 1700000050};
		char want[128];

		snprintf(want, sizeof(want),
			 "\"n\": %d, \"name\": \"app{host=x}\", \"from\": %llu, \"until\": %llu",
			 i + 1, (unsigned long long)order[i], (unsigned long long)order[i] + 10);
		CHECK_EQ_U64(count_in(r.dir, "uploads.jsonl", want), 1);
		snprintf(path, sizeof(path), "%s/%04d.pb.gz", r.dir, i + 1);
		CHECK(same_bytes(path, order[i]));
	}
}

static void test_basic_auth(void)
{
	struct receiver r = {0};
	char url[128], auth[512], spool_dir[400];
	struct push_opts o = {.url = url, .basic_auth_file = auth};
	struct push_stats st;
	struct spool *sp;
	struct pusher *p;

	new_dir(r.dir, sizeof(r.dir), "recv");
	new_dir(spool_dir, sizeof(spool_dir), "spool");
	snprintf(auth, sizeof(auth), "%s/auth", spool_dir);
	write_file(auth, "user:pa:ss\r\n");
	if (receiver_start(&r, 0, "200", "0")) {
		CHECK(0);
		return;
	}
	url_of(url, sizeof(url), &r, "");
	sp = spool_open(spool_dir, 64 * MIB);
	CHECK_EQ_U64(put(sp, 1700000010), 0);
	p = pusher_start(&o, sp);
	CHECK(p);
	WAIT_FOR(p, st, 10000, st.pushed == 1);
	CHECK_EQ_U64(st.pushed, 1);
	pusher_free(p);
	spool_close(sp);
	receiver_stop(&r);
	CHECK_EQ_U64(count_in(r.dir, "uploads.jsonl", "\"tenant\": null"), 1);
	CHECK_EQ_U64(
		count_in(r.dir, "uploads.jsonl", "\"authorization\": \"Basic dXNlcjpwYTpzcw==\""),
		1);
}

static void test_rejected_401(void)
{
	struct receiver r = {0};
	char url[128], spool_dir[400], log[500];
	struct push_opts o = {.url = url};
	struct push_stats st;
	struct spool_stats ss;
	struct spool *sp;
	struct pusher *p;
	int saved;

	new_dir(r.dir, sizeof(r.dir), "recv");
	new_dir(spool_dir, sizeof(spool_dir), "spool");
	snprintf(log, sizeof(log), "%s/stderr", spool_dir);
	if (receiver_start(&r, 0, "401", "0")) {
		CHECK(0);
		return;
	}
	url_of(url, sizeof(url), &r, "");
	sp = spool_open(spool_dir, 64 * MIB);
	CHECK_EQ_U64(put(sp, 1700000010), 0);
	CHECK_EQ_U64(put(sp, 1700000020), 0);
	CHECK_EQ_U64(put(sp, 1700000030), 0);
	saved = stderr_to(log);
	p = pusher_start(&o, sp);
	CHECK(p);
	WAIT_FOR(p, st, 10000, st.rejected == 3);
	pusher_free(p);
	stderr_back(saved);
	CHECK_EQ_U64(st.rejected, 3);
	CHECK_EQ_U64(st.pushed + st.failed_tries, 0);
	CHECK_STR(st.last_error, "HTTP 401: 401 Unauthorized (ingest_receiver --status)");
	spool_stats(sp, &ss);
	CHECK_EQ_U64(ss.windows, 0);
	spool_close(sp);
	receiver_stop(&r);
	CHECK_EQ_U64(count_in(r.dir, "refused.jsonl", "\"status\": 401"), 3);
	/* One warning for the three, saying what 401 means. */
	CHECK_EQ_U64(count_in(spool_dir, "stderr", "rejected"), 1);
	CHECK_EQ_U64(count_in(spool_dir, "stderr", "credentials are wrong"), 1);
}

/* 503: tried again and again, one warning, the window kept; stop returns in grace. */
static void test_retried_503(void)
{
	struct receiver r = {0};
	char url[128], spool_dir[400], log[500];
	struct push_opts o = {.url = url, .retry_max_ns = 50 * MS};
	struct push_stats st;
	struct spool_stats ss;
	struct spool *sp;
	struct pusher *p;
	uint64_t t0;
	int saved;

	new_dir(r.dir, sizeof(r.dir), "recv");
	new_dir(spool_dir, sizeof(spool_dir), "spool");
	snprintf(log, sizeof(log), "%s/stderr", spool_dir);
	if (receiver_start(&r, 0, "503", "0")) {
		CHECK(0);
		return;
	}
	url_of(url, sizeof(url), &r, "");
	sp = spool_open(spool_dir, 64 * MIB);
	CHECK_EQ_U64(put(sp, 1700000010), 0);
	saved = stderr_to(log);
	p = pusher_start(&o, sp);
	CHECK(p);
	WAIT_FOR(p, st, 10000, st.failed_tries >= 4);
	t0 = pa_now_ns();
	pusher_stop(p, 300 * MS);
	CHECK(pa_now_ns() - t0 < 2000 * MS);
	pusher_stats(p, &st);
	pusher_free(p);
	stderr_back(saved);
	CHECK(st.failed_tries >= 4);
	CHECK_EQ_U64(st.pushed + st.rejected, 0);
	CHECK(!strncmp(st.last_error, "HTTP 503: ", 10));
	spool_stats(sp, &ss);
	CHECK_EQ_U64(ss.windows, 1);
	spool_close(sp);
	receiver_stop(&r);
	CHECK_EQ_U64(count_in(spool_dir, "stderr", "cannot push"), 1);
	CHECK_EQ_U64(count_in(spool_dir, "stderr", "warning"), 1);
}

/* Nothing listens, then the server comes back on its port: pushed, and said so once. */
static void test_unreachable_then_back(void)
{
	struct receiver r = {0};
	char url[128], spool_dir[400], log[500];
	struct push_opts o = {.url = url, .retry_max_ns = 200 * MS};
	struct push_stats st;
	struct spool *sp;
	struct pusher *p;
	int saved;

	new_dir(r.dir, sizeof(r.dir), "recv");
	new_dir(spool_dir, sizeof(spool_dir), "spool");
	snprintf(log, sizeof(log), "%s/stderr", spool_dir);
	if (receiver_start(&r, 0, "200", "0")) {
		CHECK(0);
		return;
	}
	receiver_stop(&r); /* a port nothing listens on now */
	url_of(url, sizeof(url), &r, "");
	sp = spool_open(spool_dir, 64 * MIB);
	CHECK_EQ_U64(put(sp, 1700000010), 0);
	saved = stderr_to(log);
	p = pusher_start(&o, sp);
	CHECK(p);
	WAIT_FOR(p, st, 10000, st.failed_tries >= 2);
	CHECK(st.failed_tries >= 2);
	CHECK(strstr(st.last_error, "onnect") != NULL);
	CHECK_EQ_U64(put(sp, 1700000020), 0);
	pusher_kick(p);
	CHECK(!receiver_start(&r, r.port, "200", "0"));
	WAIT_FOR(p, st, 10000, st.pushed == 2);
	pusher_free(p);
	stderr_back(saved);
	CHECK_EQ_U64(st.pushed, 2);
	spool_close(sp);
	receiver_stop(&r);
	CHECK_EQ_U64(count_in(spool_dir, "stderr", "cannot push"), 1);
	CHECK_EQ_U64(count_in(spool_dir, "stderr", "again after"), 1);
	CHECK_EQ_U64(count_in(r.dir, "uploads.jsonl", "\"from\": 1700000010"), 1);
}

/* A server that answers late: stop abandons the request within its grace. */
static void test_stop_abandons_slow(void)
{
	struct receiver r = {0};
	char url[128], spool_dir[400];
	struct push_opts o = {.url = url};
	struct push_stats st;
	struct spool_stats ss;
	struct spool *sp;
	struct pusher *p;
	uint64_t t0;

	new_dir(r.dir, sizeof(r.dir), "recv");
	new_dir(spool_dir, sizeof(spool_dir), "spool");
	if (receiver_start(&r, 0, "200", "20")) {
		CHECK(0);
		return;
	}
	url_of(url, sizeof(url), &r, "");
	sp = spool_open(spool_dir, 64 * MIB);
	p = pusher_start(&o, sp);
	CHECK(p);
	CHECK_EQ_U64(put(sp, 1700000010), 0);
	pusher_kick(p);
	usleep(300000);
	t0 = pa_now_ns();
	pusher_stop(p, 400 * MS);
	CHECK(pa_now_ns() - t0 < 1000 * MS);
	pusher_stats(p, &st);
	pusher_free(p);
	CHECK_EQ_U64(st.pushed, 0);
	spool_stats(sp, &ss);
	CHECK_EQ_U64(ss.windows, 1); /* left for the next run */
	spool_close(sp);
	receiver_stop(&r);
}

/* pusher_start(o) fails with one line holding want. */
static void check_start_fails(const struct push_opts *o, struct spool *sp, const char *dir,
			      const char *want)
{
	char log[500];
	struct pusher *p;
	int saved;

	snprintf(log, sizeof(log), "%s/stderr", dir);
	saved = stderr_to(log);
	p = pusher_start(o, sp);
	stderr_back(saved);
	CHECK(!p);
	pusher_free(p);
	CHECK_EQ_U64(count_in(dir, "stderr", ""), 1);
	CHECK_EQ_U64(count_in(dir, "stderr", want), 1);
}

static void test_bad_options(void)
{
	char dir[400], nocolon[500], empty[500], twolines[500], missing[500];
	struct spool *sp;

	new_dir(dir, sizeof(dir), "opts");
	snprintf(nocolon, sizeof(nocolon), "%s/nocolon", dir);
	write_file(nocolon, "justauser\n");
	snprintf(empty, sizeof(empty), "%s/empty", dir);
	write_file(empty, "\n");
	snprintf(twolines, sizeof(twolines), "%s/twolines", dir);
	write_file(twolines, "tok\nen\n");
	snprintf(missing, sizeof(missing), "%s/missing", dir);
	sp = spool_open(dir, MIB);
	CHECK(sp);
	check_start_fails(&(struct push_opts){.url = "http://h", .token_file = missing}, sp, dir,
			  "missing': No such file");
	check_start_fails(&(struct push_opts){.url = "http://h", .basic_auth_file = nocolon}, sp,
			  dir, "nocolon' has no ':'");
	check_start_fails(&(struct push_opts){.url = "http://h", .token_file = empty}, sp, dir,
			  "empty' is empty");
	check_start_fails(&(struct push_opts){.url = "http://h", .token_file = twolines}, sp, dir,
			  "twolines' holds a control character");
	check_start_fails(&(struct push_opts){.url = "ftp://h/"}, sp, dir, "not an http://");
	check_start_fails(&(struct push_opts){.url = "http://h", .tenant = "a\r\nX-Evil: 1"}, sp,
			  dir, "--tenant holds a control character");
	spool_close(sp);
}

static int rm_tree(const char *path)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	return system(cmd);
}

int main(void)
{
	if (!mkdtemp(root)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	RUN(test_pushed_oldest_first);
	RUN(test_basic_auth);
	RUN(test_rejected_401);
	RUN(test_retried_503);
	RUN(test_unreachable_then_back);
	RUN(test_stop_abandons_slow);
	RUN(test_bad_options);
	(void)rm_tree(root);
	return unit_done();
}
