// SPDX-License-Identifier: Apache-2.0
/*
 * perf-agent: `perf-agent COMMAND ARGS` runs pa-COMMAND; `--profile` writes one
 * capture's pprof files and flame graph; `--continuous` pushes back-to-back windows
 * to a Pyroscope server.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent.h"
#include "base/util.h"

#ifndef PA_VERSION
#define PA_VERSION "0.1.0"
#endif

static const char *const commands[] = {"record", "report", "convert", "gpu-attach", NULL};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: perf-agent COMMAND [ARGS...]    run pa-COMMAND: record, report, convert, "
		"gpu-attach\n"
		"       perf-agent --profile (-p PID | -a) [-d 30s] [--offcpu] [--gpu] [--pmu]\n"
		"       perf-agent --continuous (-p PID | -a) --push URL [--interval 10s]\n"
		"What is recorded:\n"
		"  -p, --pid PID[,PID...]  these processes\n"
		"  -a, --all-cpus          the whole system\n"
		"  -d, --duration TIME     how long (--profile: default 30s; --continuous:\n"
		"                          default until SIGINT or SIGTERM); 500ms, 10s, 2m\n"
		"  -F, --freq HZ           samples per second (default pa-record's, 99)\n"
		"      --offcpu            also where threads block (off-CPU time)\n"
		"      --gpu               also CUDA kernels under the stacks that launched them\n"
		"      --pmu               --profile: also run-queue latency, switches and\n"
		"                          counters (pa-record --pmu), as COMM-...-pmu.json\n"
		"      --tag KEY=VALUE     a label on every sample (repeatable)\n"
		"One capture (--profile):\n"
		"      --profile           write COMM-YYYYMMDD-hhmmss-on-cpu.pb.gz (and\n"
		"                          -off-cpu, -gpu) and -flamegraph.html; print them\n"
		"  -o, --output-dir DIR    where (default: the current directory)\n"
		"Continuous profiling (--continuous):\n"
		"      --continuous        record in back-to-back windows, push each as pprof\n"
		"      --interval TIME     the window (default 10s)\n"
		"      --push URL          the Pyroscope server (its /ingest API)\n"
		"      --app NAME          the application name (default: the process's\n"
		"                          command, or \"system\" with -a)\n"
		"      --tenant ID         sent as X-Scope-OrgID\n"
		"      --basic-auth-file FILE  USER:PASSWORD for HTTP basic auth, from FILE\n"
		"      --token-file FILE   a bearer token, from FILE\n"
		"      --cacert FILE       CA certificates for TLS\n"
		"      --spool DIR         windows not pushed yet wait here (default:\n"
		"                          /var/spool/perf-agent as root, else\n"
		"                          $XDG_STATE_HOME/perf-agent/spool)\n"
		"      --spool-max SIZE    the spool's bound; the oldest windows go (default "
		"256M)\n"
		"      --retry-max TIME    the longest wait between two tries (default 30s)\n"
		"  -q, --quiet             no notes\n"
		"  -h, --help              this text\n"
		"      --version           print the version\n");
}

enum {
	OPT_PROFILE = 256,
	OPT_CONTINUOUS,
	OPT_OFFCPU,
	OPT_GPU,
	OPT_PMU,
	OPT_TAG,
	OPT_INTERVAL,
	OPT_PUSH,
	OPT_APP,
	OPT_TENANT,
	OPT_BASIC_AUTH_FILE,
	OPT_TOKEN_FILE,
	OPT_CACERT,
	OPT_SPOOL,
	OPT_SPOOL_MAX,
	OPT_RETRY_MAX,
	OPT_VERSION,
};

static const struct option long_opts[] = {
	{"pid", required_argument, NULL, 'p'},
	{"all-cpus", no_argument, NULL, 'a'},
	{"duration", required_argument, NULL, 'd'},
	{"freq", required_argument, NULL, 'F'},
	{"offcpu", no_argument, NULL, OPT_OFFCPU},
	{"gpu", no_argument, NULL, OPT_GPU},
	{"pmu", no_argument, NULL, OPT_PMU},
	{"tag", required_argument, NULL, OPT_TAG},
	{"profile", no_argument, NULL, OPT_PROFILE},
	{"output-dir", required_argument, NULL, 'o'},
	{"continuous", no_argument, NULL, OPT_CONTINUOUS},
	{"interval", required_argument, NULL, OPT_INTERVAL},
	{"push", required_argument, NULL, OPT_PUSH},
	{"app", required_argument, NULL, OPT_APP},
	{"tenant", required_argument, NULL, OPT_TENANT},
	{"basic-auth-file", required_argument, NULL, OPT_BASIC_AUTH_FILE},
	{"token-file", required_argument, NULL, OPT_TOKEN_FILE},
	{"cacert", required_argument, NULL, OPT_CACERT},
	{"spool", required_argument, NULL, OPT_SPOOL},
	{"spool-max", required_argument, NULL, OPT_SPOOL_MAX},
	{"retry-max", required_argument, NULL, OPT_RETRY_MAX},
	{"quiet", no_argument, NULL, 'q'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, OPT_VERSION},
	{NULL, 0, NULL, 0},
};

const char *agent_tool(const char *name, char *buf, size_t len)
{
	char self[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	const char *path = getenv("PATH");

	if (n > 0) {
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			snprintf(buf, len, "%s/pa-%s", self, name);
			if (!access(buf, X_OK))
				return buf;
		}
	}
	while (path && *path) {
		size_t dlen = strcspn(path, ":");

		snprintf(buf, len, "%.*s/pa-%s", (int)dlen, path, name);
		if (dlen && !access(buf, X_OK))
			return buf;
		path += dlen + (path[dlen] == ':');
	}
	return NULL;
}

/* The children a stop signal is passed on to (Ctrl-C reaches them anyway, SIGTERM
 * sent to perf-agent alone does not), so that each ends its recording as if stopped
 * itself. */
#define MAX_CHILDREN 4
static volatile pid_t children[MAX_CHILDREN];
volatile sig_atomic_t agent_stopped;

static void on_stop_signal(int sig)
{
	int i;

	agent_stopped = 1;
	for (i = 0; i < MAX_CHILDREN; i++)
		if (children[i] > 0)
			kill(children[i], sig);
}

void agent_catch_signals(void)
{
	struct sigaction sa = {.sa_handler = on_stop_signal};

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

pid_t agent_spawn(char *const argv[], int stdout_fd)
{
	pid_t pid = fork();
	int i;

	if (pid < 0) {
		pa_err("cannot start %s: %s", argv[0], strerror(errno));
		return -1;
	}
	if (!pid) {
		if (stdout_fd >= 0 && dup2(stdout_fd, STDOUT_FILENO) < 0)
			_exit(127);
		execv(argv[0], argv);
		pa_err("cannot run %s: %s", argv[0], strerror(errno));
		_exit(127);
	}
	for (i = 0; i < MAX_CHILDREN; i++)
		if (!children[i]) {
			children[i] = pid;
			break;
		}
	return pid;
}

int agent_wait(pid_t pid)
{
	int status, i;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	for (i = 0; i < MAX_CHILDREN; i++)
		if (children[i] == pid)
			children[i] = 0;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

int agent_run(char *const argv[])
{
	pid_t pid = agent_spawn(argv, -1);

	return pid < 0 ? -1 : agent_wait(pid);
}

void agent_arg(struct agent_argv *a, const char *s)
{
	if (a->n < AGENT_MAX_ARGS - 1)
		a->v[a->n++] = (char *)s;
	a->v[a->n] = NULL;
}

void agent_record_args(struct agent_argv *a, const struct agent_opts *o, bool kinds, bool tags)
{
	size_t i;

	if (o->system_wide) {
		agent_arg(a, "-a");
	} else {
		agent_arg(a, "-p");
		agent_arg(a, o->pids);
	}
	if (o->duration_ns) {
		snprintf(a->dur, sizeof(a->dur), "%lluns", (unsigned long long)o->duration_ns);
		agent_arg(a, "-d");
		agent_arg(a, a->dur);
	}
	if (o->freq) {
		agent_arg(a, "-F");
		agent_arg(a, o->freq);
	}
	if (kinds && o->offcpu)
		agent_arg(a, "--offcpu");
	if (kinds && o->gpu)
		agent_arg(a, "--gpu");
	for (i = 0; tags && i < o->nr_tags; i++) {
		agent_arg(a, "--tag");
		agent_arg(a, o->tags[i]);
	}
}

void agent_target_name(const struct agent_opts *o, char *buf, size_t len)
{
	char path[64];
	FILE *f;
	long pid;

	snprintf(buf, len, "system");
	if (o->system_wide || !o->pids)
		return;
	pid = strtol(o->pids, NULL, 10);
	snprintf(buf, len, "pid%ld", pid);
	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(buf, len, f)) {
		char *p;

		buf[strcspn(buf, "\n")] = '\0';
		/* A file name: no slashes, no spaces. */
		for (p = buf; *p; p++)
			if (*p == '/' || *p == ' ')
				*p = '_';
	}
	fclose(f);
	if (!buf[0])
		snprintf(buf, len, "pid%ld", pid);
}

/* "256M", "1G", "4096": bytes. */
static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		break;
	case 'm':
	case 'M':
		shift = 20;
		break;
	case 'g':
	case 'G':
		shift = 30;
		break;
	case '\0':
		break;
	default:
		return -EINVAL;
	}
	if (shift && end[1])
		return -EINVAL;
	if (v > (UINT64_MAX >> shift))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

/* perf-agent record ARGS: pa-record ARGS, as if run by name. */
static int dispatch(const char *cmd, int argc, char **argv)
{
	char tool[PATH_MAX];
	int i;

	for (i = 0; commands[i]; i++)
		if (!strcmp(commands[i], cmd))
			break;
	if (!commands[i]) {
		pa_err("no command '%s'; commands: record, report, convert, gpu-attach (see "
		       "perf-agent --help)",
		       cmd);
		return 1;
	}
	if (!agent_tool(cmd, tool, sizeof(tool))) {
		pa_err("pa-%s not found next to perf-agent or in $PATH; install the suite "
		       "(make install)",
		       cmd);
		return 1;
	}
	argv[0] = tool;
	(void)argc;
	execv(tool, argv);
	pa_err("cannot run %s: %s", tool, strerror(errno));
	return 1;
}

static int parse_duration_opt(const char *arg, const char *opt, uint64_t *ns)
{
	if (pa_parse_duration(arg, ns) || !*ns) {
		pa_err("bad %s '%s'; give a time like 500ms, 10s or 2m", opt, arg);
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct agent_opts o = {
		.interval_ns = 10000000000ULL,
		.spool_max = 256ULL << 20,
		.retry_max_ns = 30000000000ULL,
	};
	bool profile = false, continuous = false;
	int c;

	pa_set_progname("perf-agent");
	if (argc > 1 && argv[1][0] != '-')
		return dispatch(argv[1], argc - 1, argv + 1);

	while ((c = getopt_long(argc, argv, "p:ad:F:o:qh", long_opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			o.pids = optarg;
			break;
		case 'a':
			o.system_wide = true;
			break;
		case 'd':
			if (parse_duration_opt(optarg, "--duration", &o.duration_ns))
				return 1;
			break;
		case 'F':
			o.freq = optarg;
			break;
		case OPT_OFFCPU:
			o.offcpu = true;
			break;
		case OPT_GPU:
			o.gpu = true;
			break;
		case OPT_PMU:
			o.pmu = true;
			break;
		case OPT_TAG:
			if (!strchr(optarg, '=') || optarg[0] == '=') {
				pa_err("bad --tag '%s'; give KEY=VALUE", optarg);
				return 1;
			}
			if (o.nr_tags == AGENT_MAX_TAGS) {
				pa_err("too many --tag (at most %d)", AGENT_MAX_TAGS);
				return 1;
			}
			o.tags[o.nr_tags++] = optarg;
			break;
		case OPT_PROFILE:
			profile = true;
			break;
		case 'o':
			o.output_dir = optarg;
			break;
		case OPT_CONTINUOUS:
			continuous = true;
			break;
		case OPT_INTERVAL:
			if (parse_duration_opt(optarg, "--interval", &o.interval_ns))
				return 1;
			break;
		case OPT_PUSH:
			o.push_url = optarg;
			break;
		case OPT_APP:
			o.app = optarg;
			break;
		case OPT_TENANT:
			o.tenant = optarg;
			break;
		case OPT_BASIC_AUTH_FILE:
			o.basic_auth_file = optarg;
			break;
		case OPT_TOKEN_FILE:
			o.token_file = optarg;
			break;
		case OPT_CACERT:
			o.cacert = optarg;
			break;
		case OPT_SPOOL:
			o.spool_dir = optarg;
			break;
		case OPT_SPOOL_MAX:
			if (parse_size(optarg, &o.spool_max) || !o.spool_max) {
				pa_err("bad --spool-max '%s'; give a size like 64M or 1G", optarg);
				return 1;
			}
			break;
		case OPT_RETRY_MAX:
			if (parse_duration_opt(optarg, "--retry-max", &o.retry_max_ns))
				return 1;
			break;
		case 'q':
			o.quiet = true;
			pa_set_quiet(true);
			break;
		case 'h':
			usage(stdout);
			return 0;
		case OPT_VERSION:
			printf("perf-agent %s\n", PA_VERSION);
			return 0;
		default:
			fprintf(stderr, "Try 'perf-agent --help' for more information.\n");
			return 1;
		}
	}
	if (optind < argc) {
		pa_err("unexpected argument '%s'; a command goes first (perf-agent record ...)",
		       argv[optind]);
		return 1;
	}
	if (profile == continuous) {
		pa_err(profile ? "--profile and --continuous are two modes; give one"
			       : "nothing to do; give --profile, --continuous or a command "
				 "(see perf-agent --help)");
		return 1;
	}
	if (!o.pids == !o.system_wide) {
		pa_err("give -p PID or -a (not both)");
		return 1;
	}
	agent_catch_signals();
	if (profile) {
		if (!o.duration_ns)
			o.duration_ns = 30000000000ULL;
		return oneshot_run(&o);
	}
	if (!o.push_url) {
		pa_err("--continuous needs --push URL (the Pyroscope server)");
		return 1;
	}
	if (o.pmu) {
		pa_err("--pmu goes with --profile only");
		return 1;
	}
	return continuous_run(&o);
}
