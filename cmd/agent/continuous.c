// SPDX-License-Identifier: Apache-2.0
/*
 * perf-agent --continuous: one pa-record session writing a perf.data stream into a
 * pipe, cut here into back-to-back windows (window.c), each window spooled on disk as
 * a pprof (spool.c) and pushed from there to Pyroscope's ingest API (push.c).  The
 * recorder never waits for the network: a slow or absent server fills the spool,
 * whose bound drops the oldest windows, counted.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "push.h"
#include "spool.h"
#include "window.h"
#include "base/util.h"

#define NS		1000000000ULL
#define TICK_US		100000
#define WINDOW_LAG_NS	(2 * NS)  /* the recorder's buffering and ordering */
#define PUSH_GRACE_NS	(10 * NS) /* at exit, for what the spool still holds */
#define PUSH_TIMEOUT_NS (30 * NS) /* one request */
#define MMAP_THRESHOLD	(256 << 10)

struct agent_push {
	struct spool *sp;
	struct pusher *p;
	char query[2048];      /* name=...&spyName=...&format=pprof */
	uint64_t spool_failed; /* windows the spool could not take: said once */
};

/* The default spool: /var/spool/perf-agent for root, else under XDG_STATE_HOME. */
static const char *spool_dir(const struct agent_opts *o, char *buf, size_t len)
{
	const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");

	if (o->spool_dir)
		return o->spool_dir;
	if (!geteuid())
		return "/var/spool/perf-agent";
	if (state && *state)
		snprintf(buf, len, "%s/perf-agent/spool", state);
	else
		snprintf(buf, len, "%s/.local/state/perf-agent/spool", home ? home : ".");
	return buf;
}

/* Append s to out, percent-encoded as a query value. */
static void url_encode(char *out, size_t len, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(out);

	for (; *s && n + 4 < len; s++) {
		unsigned char c = *s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '_' || c == '.' || c == '~') {
			out[n++] = c;
		} else {
			out[n++] = '%';
			out[n++] = hex[c >> 4];
			out[n++] = hex[c & 15];
		}
	}
	out[n] = '\0';
}

/* A label key or value as Pyroscope's name syntax takes it: no ,{}= or spaces. */
static void label_part(char *out, size_t len, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n && i + 1 < len; i++)
		out[i] = strchr(",{}=\" ", s[i]) ? '_' : s[i];
	out[i] = '\0';
}

static void add_label(char *name, size_t len, const char *key, size_t klen, const char *value)
{
	char k[64], v[128];
	size_t n = strlen(name);

	label_part(k, sizeof(k), key, klen);
	label_part(v, sizeof(v), value, strlen(value));
	snprintf(name + n, len - n, "%s%s=%s", name[n - 1] == '{' ? "" : ",", k, v);
}

/*
 * The query every window of this run shares: the application name with the
 * capture's labels (host, process, --tag), as Pyroscope writes a series:
 * APP{host=h,process=p,k=v}.
 */
static void build_query(const struct agent_opts *o, char *query, size_t len)
{
	char name[1024], target[64], host[HOST_NAME_MAX + 1] = "";
	size_t i;

	agent_target_name(o, target, sizeof(target));
	gethostname(host, sizeof(host) - 1);
	label_part(name, sizeof(name) - 2, o->app ? o->app : target,
		   strlen(o->app ? o->app : target));
	strcat(name, "{");
	if (host[0])
		add_label(name, sizeof(name), "host", 4, host);
	if (!o->system_wide)
		add_label(name, sizeof(name), "process", 7, target);
	for (i = 0; i < o->nr_tags; i++) {
		const char *eq = strchr(o->tags[i], '=');

		add_label(name, sizeof(name), o->tags[i], eq - o->tags[i], eq + 1);
	}
	strncat(name, "}", sizeof(name) - strlen(name) - 1);
	snprintf(query, len, "name=");
	url_encode(query, len, name);
	strncat(query, "&spyName=perf-agent&format=pprof", len - strlen(query) - 1);
}

/* A closed window: into the spool, then the pusher is told. */
static void spool_window(void *ctx, uint64_t start_ns, uint64_t end_ns, const uint8_t *pprof,
			 size_t len)
{
	struct agent_push *ap = ctx;
	uint64_t from = start_ns / NS, until = end_ns / NS;
	char query[2200];
	int err;

	/* Windows are whole seconds: until is the next one's from.  The last one may be
	 * cut short. */
	if (until <= from)
		until = from + 1;
	snprintf(query, sizeof(query), "%s&from=%llu&until=%llu", ap->query,
		 (unsigned long long)from, (unsigned long long)until);
	err = spool_put(ap->sp, start_ns, query, pprof, len);
	if (err) {
		if (!ap->spool_failed++)
			pa_warn("cannot keep a window in the spool: %s (it is dropped, and "
				"counted)",
				strerror(-err));
		return;
	}
	pusher_kick(ap->p);
}

/* pa-record -o - with o's target, its stream on fd. */
static pid_t start_record(const struct agent_opts *o, const char *tool, int fd)
{
	struct agent_argv a = {0};

	agent_arg(&a, tool);
	agent_arg(&a, "-q");
	agent_arg(&a, "-o");
	agent_arg(&a, "-");
	agent_record_args(&a, o, true, true);
	return agent_spawn(a.v, fd);
}

static void print_summary(const struct win_stats *ws, struct agent_push *ap)
{
	struct spool_stats ss;
	struct push_stats ps;

	spool_stats(ap->sp, &ss);
	pusher_stats(ap->p, &ps);
	fprintf(stderr,
		"perf-agent: %llu windows, %llu samples; pushed %llu, rejected %llu, %llu left "
		"in the spool, %llu dropped\n",
		(unsigned long long)ws->windows, (unsigned long long)ws->samples,
		(unsigned long long)ps.pushed, (unsigned long long)ps.rejected,
		(unsigned long long)ss.windows, (unsigned long long)ss.dropped);
	if (ws->late)
		fprintf(stderr,
			"perf-agent: %llu samples came after their window was closed (the "
			"recording fell behind); they are in the next one\n",
			(unsigned long long)ws->late);
}

int continuous_run(const struct agent_opts *o)
{
	struct push_opts po = {
		.url = o->push_url,
		.tenant = o->tenant,
		.basic_auth_file = o->basic_auth_file,
		.token_file = o->token_file,
		.cacert = o->cacert,
		.retry_max_ns = o->retry_max_ns,
		.timeout_ns = PUSH_TIMEOUT_NS,
	};
	struct win_opts wo = {
		.interval_ns = o->interval_ns,
		.lag_ns = WINDOW_LAG_NS,
		.tags = o->tags,
		.nr_tags = o->nr_tags,
		.emit = spool_window,
	};
	struct agent_push ap = {0};
	struct win_stats ws = {0};
	struct timespec mono, wall;
	char tool[PATH_MAX], dirbuf[PATH_MAX], errbuf[256];
	const char *dir = spool_dir(o, dirbuf, sizeof(dirbuf));
	struct win_reader *w;
	int fds[2], status, err;
	pid_t rec;

	/*
	 * Each window allocates and frees its tables: a fixed threshold keeps the large
	 * ones mmap'ed, given back when freed, where glibc's moving one would let them
	 * pile up in the heap over a long run.
	 */
	mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD);
	if (o->interval_ns % NS) {
		pa_err("--interval must be whole seconds (Pyroscope's windows are)");
		return 1;
	}
	if (strncmp(o->push_url, "http://", 7) && strncmp(o->push_url, "https://", 8)) {
		pa_err("bad --push '%s'; give the server's http:// or https:// URL", o->push_url);
		return 1;
	}
	if (!agent_tool("record", tool, sizeof(tool))) {
		pa_err("pa-record not found next to perf-agent or in $PATH; install the suite "
		       "(make install)");
		return 1;
	}
	ap.sp = spool_open(dir, o->spool_max);
	if (!ap.sp) {
		pa_err("cannot use the spool %s: %s; choose another with --spool DIR", dir,
		       strerror(errno));
		return 1;
	}
	ap.p = pusher_start(&po, ap.sp);
	if (!ap.p) {
		spool_close(ap.sp);
		return 1;
	}
	build_query(o, ap.query, sizeof(ap.query));

	if (pipe2(fds, O_CLOEXEC)) {
		pa_err("cannot make a pipe: %s", strerror(errno));
		goto fail;
	}
	/* Windows start now: the recorder's first sample comes after this. */
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &wall);
	wo.start_mono_ns = mono.tv_sec * NS + mono.tv_nsec;
	/* Aligned on whole seconds of the wall clock, as from and until are. */
	wo.start_mono_ns -= wall.tv_nsec;
	wo.wall_minus_mono = (int64_t)(wall.tv_sec * NS) - (int64_t)wo.start_mono_ns;
	wo.ctx = &ap;
	rec = start_record(o, tool, fds[1]);
	close(fds[1]);
	if (rec < 0) {
		close(fds[0]);
		goto fail;
	}
	w = win_start(fds[0], &wo);
	close(fds[0]);
	if (!w) {
		pa_err("cannot start reading the recording: %s", strerror(errno));
		kill(rec, SIGTERM);
		agent_wait(rec);
		goto fail;
	}
	if (!o->quiet)
		fprintf(stderr, "perf-agent: pushing %llu s windows to %s (spool %s)\n",
			(unsigned long long)(o->interval_ns / NS), o->push_url, dir);
	while (!win_ended(w)) {
		usleep(TICK_US);
		win_tick(w);
	}
	err = win_finish(w, &ws, errbuf, sizeof(errbuf));
	status = agent_wait(rec);
	/* pa-record said why it failed; its stream's end is no news then. */
	if (err && !status)
		pa_err("the recording's stream: %s", errbuf);
	pusher_stop(ap.p, PUSH_GRACE_NS);
	if (!o->quiet && (ws.windows || !status))
		print_summary(&ws, &ap);
	pusher_free(ap.p);
	spool_close(ap.sp);
	if (status)
		return status < 0 ? 1 : status;
	return err ? 1 : 0;
fail:
	pusher_stop(ap.p, 0);
	pusher_free(ap.p);
	spool_close(ap.sp);
	return 1;
}
