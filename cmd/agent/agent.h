/* SPDX-License-Identifier: Apache-2.0 */
/*
 * perf-agent, the front of the suite: `perf-agent record ...` runs pa-record (like
 * git runs git-record), `--profile` makes the usual files of one capture in one go
 * (oneshot.c), `--continuous` records back-to-back windows and pushes each as pprof
 * to a Pyroscope server (continuous.c, window.c, spool.c, push.c).
 */
#ifndef PA_AGENT_H
#define PA_AGENT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define AGENT_MAX_TAGS 8

struct agent_opts {
	/* What is recorded (both modes). */
	const char *pids;     /* -p PID[,PID...] as given */
	bool system_wide;     /* -a */
	uint64_t duration_ns; /* -d; continuous: 0 = until stopped */
	const char *freq;     /* -F, as given (NULL: pa-record's default) */
	bool offcpu, gpu, pmu;
	const char *tags[AGENT_MAX_TAGS]; /* --tag KEY=VALUE */
	size_t nr_tags;
	bool quiet;

	/* --profile */
	const char *output_dir;

	/* --continuous */
	uint64_t interval_ns;
	const char *push_url; /* the server's base URL; /ingest is appended */
	const char *app;      /* the application name (default: comm or "system") */
	const char *tenant;   /* X-Scope-OrgID */
	const char *basic_auth_file;
	const char *token_file;
	const char *cacert;
	const char *spool_dir;
	uint64_t spool_max;    /* bytes */
	uint64_t retry_max_ns; /* the longest wait between two tries */
};

/* A command line being built for pa-record or pa-convert. */
#define AGENT_MAX_ARGS (24 + 2 * AGENT_MAX_TAGS)
struct agent_argv {
	char *v[AGENT_MAX_ARGS];
	int n;
	char dur[32];
};

void agent_arg(struct agent_argv *a, const char *s);
/* pa-record's target options from o: -p or -a, -d (when set), -F, --offcpu and --gpu
 * (with kinds), --tag (with tags). */
void agent_record_args(struct agent_argv *a, const struct agent_opts *o, bool kinds, bool tags);

/* The path of pa-NAME: next to perf-agent, else found in $PATH (NULL). */
const char *agent_tool(const char *name, char *buf, size_t len);

/* The command of the first pid of o->pids (/proc/PID/comm), or "system" for -a. */
void agent_target_name(const struct agent_opts *o, char *buf, size_t len);

/*
 * SIGINT, SIGTERM and SIGHUP set agent_stopped and are passed on to the child last
 * spawned, so that it ends its recording cleanly (and nothing recorded is lost).
 */
extern volatile sig_atomic_t agent_stopped;
void agent_catch_signals(void);

/* Start argv (argv[0] a path), its stdout on stdout_fd (-1: ours); pid or -1. */
pid_t agent_spawn(char *const argv[], int stdout_fd);
/* Its exit status (128 + signal when killed), or -1. */
int agent_wait(pid_t pid);
/* agent_spawn + agent_wait; -1 with the error printed. */
int agent_run(char *const argv[]);

int oneshot_run(const struct agent_opts *o);
int continuous_run(const struct agent_opts *o);

#endif /* PA_AGENT_H */
