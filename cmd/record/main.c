// SPDX-License-Identifier: Apache-2.0
/*
 * pa-record: sample the on-CPU stacks of processes (or the whole system) with a
 * BPF program on cpu-clock events, and with --offcpu the time their threads spend
 * blocked (sched_switch), and write them as perf.data.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "profile/input.h"
#include "profile/offcpu.h"
#include "symbolize/bidcache.h"
#include "perfdata/pd_write.h"
#include "perfdata/pd_zstd.h"
#include "record.h"
#include "unwind.h"
#include "base/util.h"

#ifndef PA_VERSION
#define PA_VERSION "0.1"
#endif

static const char usage[] =
	"usage: pa-record [options] [-- CMD [ARGS...]]\n"
	"  -p, --pid PID[,PID...]  profile existing processes and what they start\n"
	"  -a, --all-cpus          profile the whole system\n"
	"  -- CMD ARGS             start CMD and profile it until it exits (with -a:\n"
	"                          the whole system until CMD exits)\n"
	"  -d, --duration DUR      stop after DUR (30s, 500ms, 2m, 1h)\n"
	"  -F, --freq HZ           samples per second per CPU (default 99)\n"
	"  -e, --event EV[,EV...]  sample on these events, named as perf names them\n"
	"                          (default cpu-clock): page-faults, context-switches,\n"
	"                          cycles, L1-dcache-load-misses, rNNNN, pmu/config=N/,\n"
	"                          sched:sched_wakeup; modifiers :u :k :p\n"
	"  -c, --count N           a sample every N events (instead of -F)\n"
	"  -C, --cpu CPUS          sample on these CPUs only (e.g. 0-3,8)\n"
	"  -G, --cgroup PATH[,...] sample only threads in these cgroups (and below)\n"
	"      --no-cgroups        samples carry no cgroup (default: each sample's, as\n"
	"                          perf's --all-cgroups)\n"
	"      --label-env L=VAR[,...]  label a container's samples with these variables\n"
	"                          of its environment, only those read (default\n"
	"                          pod_name=POD_NAME,pod_namespace=POD_NAMESPACE,\n"
	"                          container_name=CONTAINER_NAME; \"\" reads none)\n"
	"      --tag KEY=VALUE     a label on every sample of the capture (pprof), kept\n"
	"                          in its command line; repeatable\n"
	"      --no-kernel         no kernel frames\n"
	"  -N, --no-buildid-cache  don't keep the sampled binaries in ~/.debug\n"
	"      --offcpu            also record off-CPU time (event offcpu-time, period = ns\n"
	"                          blocked) under the stack the thread blocked in\n"
	"      --no-cpu            with --offcpu: no cpu-clock samples\n"
	"      --offcpu-min DUR    ignore off-CPU stretches shorter than DUR (default 1ms;\n"
	"                          0 keeps all; e.g. 100us, 5ms)\n"
	"      --offcpu-state S    sleep, io, preempted, other (comma list) or all;\n"
	"                          default sleep,io: blocking only, not preemption\n"
	"  -o, --output FILE       default perf.data (old one kept as perf.data.old);\n"
	"                          \"-\" writes a perf.data stream to stdout\n"
	"  -z, --compression-level[=N]  zstd-compress the records, level N from 1\n"
	"                          (fastest) to 22 (smallest), as perf record -z; files\n"
	"                          get 1 unless given, pipes 0; -z0: plain records\n"
	"      --unwind MODE       user stacks: auto (default: .eh_frame CFI where the\n"
	"                          binary has it, frame pointers elsewhere), cfi (CFI\n"
	"                          only), fp (frame pointers only), dwarf[,SIZE] (auto,\n"
	"                          and every sample copies up to SIZE bytes of stack,\n"
	"                          default 8192, to walk again in user space)\n"
	"      --unwind-rows N     room for N unwind rows in the kernel (default 4194304,\n"
	"                          8 bytes each)\n"
	"      --gpu               CUDA kernel launches as the gpu-launch event: each\n"
	"                          launch under its stack, with the kernel's name; with\n"
	"                          the CUDA adapter (-- CMD injects it), their GPU time\n"
	"                          as the gpu-time event\n"
	"      --gpu-stacks RATE   launch stacks walked a second per thread (default\n"
	"                          1000, 0: all); a launch over it takes the thread's\n"
	"                          last stack for its kernel\n"
	"      --pmu               count instead of recording: per process, on-CPU time,\n"
	"                          switches, run-queue latency and slice percentiles,\n"
	"                          IPC and cache misses where the CPU has counters\n"
	"      --per-pid           with --pmu: each thread too\n"
	"      --json              with --pmu: one JSON document instead of the table\n"
	"      --no-python         CPython's interpreter frames as they are, not the Python\n"
	"                          functions they ran (walked by default, 3.11 to 3.15)\n"
	"      --dump              with -p: print each thread's stack once and exit\n"
	"                          (kernel, native and CPython 3.11-3.15 frames)\n"
	"  -q, --quiet             no progress, no summary\n"
	"  -v, --verbose           show libbpf's messages\n"
	"  -h, --help, --version\n";

/* The one thing a signal handler may touch: a flag the event loop polls. */
static volatile sig_atomic_t stop_flag;

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

/* SIGCHLD only has to interrupt the poll so that CMD's exit is seen at once. */
static void on_sigchld(int sig)
{
	(void)sig;
}

static int parse_pids(struct rec_opts *o, const char *arg)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	uint64_t v;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		pid_t *np;

		if (pa_parse_u64(tok, &v) || v == 0 || v > INT_MAX) {
			pa_err("invalid PID '%s'; give process ids like -p 1234,5678", tok);
			free(copy);
			return -EINVAL;
		}
		np = realloc(o->pids, (o->nr_pids + 1) * sizeof(*np));
		if (!np) {
			free(copy);
			return -ENOMEM;
		}
		o->pids = np;
		o->pids[o->nr_pids++] = v;
	}
	free(copy);
	if (!o->nr_pids) {
		pa_err("-p needs at least one PID");
		return -EINVAL;
	}
	return 0;
}

/* "all" or a comma list of state names into a PROFILE_STATE_* bit mask. */
static int parse_states(const char *arg, uint32_t *mask)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	unsigned int st;

	if (!copy)
		return -ENOMEM;
	*mask = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "all")) {
			*mask |= (1u << PROFILE_STATE_NR) - 1;
			continue;
		}
		for (st = 0; st < PROFILE_STATE_NR; st++)
			if (!strcmp(tok, offcpu_state_name(st)))
				break;
		if (st == PROFILE_STATE_NR) {
			pa_err("unknown --offcpu-state '%s'; use all, or a comma list of sleep, "
			       "io, "
			       "preempted, other",
			       tok);
			free(copy);
			return -EINVAL;
		}
		*mask |= 1u << st;
	}
	free(copy);
	if (!*mask) {
		pa_err("empty --offcpu-state; use all, or a comma list of sleep, io, preempted, "
		       "other");
		return -EINVAL;
	}
	return 0;
}

static uint64_t max_sample_rate(void)
{
	unsigned long long v = 0;
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "r");

	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/* Test knob NAME, a count >= 1 when set; -EINVAL (said) if it is not one. */
static int env_count(const char *name, uint32_t *out)
{
	const char *env = getenv(name);
	unsigned long n;
	char *end;

	if (!env || !*env)
		return 0;
	n = strtoul(env, &end, 10);
	if (*end || !n || n > UINT32_MAX) {
		pa_err("%s=%s: not a count; give N >= 1", name, env);
		return -EINVAL;
	}
	*out = n;
	return 0;
}

/* --tag KEY=VALUE: kept in the capture's command line (pa_input_tags reads it). */
static int check_tag(const char *t)
{
	const char *eq = strchr(t, '=');

	if (!eq || eq == t || !eq[1])
		return -EINVAL;
	for (const char *p = t; p < eq; p++)
		if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9')))
			return -EINVAL;
	for (const char *p = eq + 1; *p; p++)
		if ((unsigned char)*p < ' ')
			return -EINVAL;
	return 0;
}

static int parse_args(struct rec_opts *o, int argc, char **argv)
{
	enum {
		OPT_NO_KERNEL = 256,
		OPT_NO_CGROUPS,
		OPT_ALL_CGROUPS,
		OPT_LABEL_ENV,
		OPT_TAG,
		OPT_NO_BUILDID_CACHE,
		OPT_VERSION,
		OPT_OFFCPU,
		OPT_NO_CPU,
		OPT_OFFCPU_MIN,
		OPT_OFFCPU_STATE,
		OPT_UNWIND,
		OPT_UNWIND_ROWS,
		OPT_DUMP,
		OPT_NO_PYTHON,
		OPT_GPU,
		OPT_GPU_STACKS,
		OPT_PMU,
		OPT_PER_PID,
		OPT_JSON,
	};
	static const struct option longopts[] = {
		{"pid", required_argument, NULL, 'p'},
		{"all-cpus", no_argument, NULL, 'a'},
		{"duration", required_argument, NULL, 'd'},
		{"freq", required_argument, NULL, 'F'},
		{"event", required_argument, NULL, 'e'},
		{"count", required_argument, NULL, 'c'},
		{"cpu", required_argument, NULL, 'C'},
		{"cgroup", required_argument, NULL, 'G'},
		{"all-cgroups", no_argument, NULL, OPT_ALL_CGROUPS},
		{"no-cgroups", no_argument, NULL, OPT_NO_CGROUPS},
		{"label-env", required_argument, NULL, OPT_LABEL_ENV},
		{"tag", required_argument, NULL, OPT_TAG},
		{"no-kernel", no_argument, NULL, OPT_NO_KERNEL},
		{"no-buildid-cache", no_argument, NULL, OPT_NO_BUILDID_CACHE},
		{"offcpu", no_argument, NULL, OPT_OFFCPU},
		{"no-cpu", no_argument, NULL, OPT_NO_CPU},
		{"offcpu-min", required_argument, NULL, OPT_OFFCPU_MIN},
		{"offcpu-state", required_argument, NULL, OPT_OFFCPU_STATE},
		{"unwind", required_argument, NULL, OPT_UNWIND},
		{"unwind-rows", required_argument, NULL, OPT_UNWIND_ROWS},
		{"dump", no_argument, NULL, OPT_DUMP},
		{"no-python", no_argument, NULL, OPT_NO_PYTHON},
		{"gpu", no_argument, NULL, OPT_GPU},
		{"gpu-stacks", required_argument, NULL, OPT_GPU_STACKS},
		{"pmu", no_argument, NULL, OPT_PMU},
		{"per-pid", no_argument, NULL, OPT_PER_PID},
		{"json", no_argument, NULL, OPT_JSON},
		{"output", required_argument, NULL, 'o'},
		{"compression-level", optional_argument, NULL, 'z'},
		{"quiet", no_argument, NULL, 'q'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, OPT_VERSION},
		{},
	};
	bool have_output = false, have_freq = false, have_gpu_stacks = false;
	const char *offcpu_opt = NULL;
	const char *env;
	uint64_t maxrate;
	int c, modes, nr_tags = 0;

	o->freq = 99;
	o->compress_level = -1; /* files 1, pipes 0, unless -z says */
	o->unwind_mode = UNWIND_MODE_AUTO;
	o->output = "perf.data";
	/* Waits under 1 ms are many and cheap: keep the volume to what explains latency. */
	o->offcpu_min_ns = 1000000;
	o->offcpu_states = 1u << PROFILE_STATE_SLEEP | 1u << PROFILE_STATE_IO;
	o->switch_method = -1;
	o->gpu_stacks = 1000;
	o->argc = argc;
	o->argv = argv;
	opterr = 0;
	/* '+': stop at the first non-option, so CMD's own options stay CMD's. */
	while ((c = getopt_long(argc, argv, "+:p:ad:F:e:c:C:G:o:z::qvhN", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_pids(o, optarg))
				return -EINVAL;
			break;
		case 'a':
			o->system_wide = true;
			break;
		case 'd':
			if (pa_parse_duration(optarg, &o->duration_ns) || !o->duration_ns) {
				pa_err("invalid duration '%s'; use e.g. 30s, 500ms, 2m, 1h",
				       optarg);
				return -EINVAL;
			}
			break;
		case 'F':
			have_freq = true;
			if (pa_parse_u64(optarg, &o->freq) || !o->freq) {
				pa_err("invalid frequency '%s'; give samples per second, e.g. -F "
				       "99",
				       optarg);
				return -EINVAL;
			}
			break;
		case 'e':
			o->events = optarg;
			break;
		case 'c':
			if (pa_parse_u64(optarg, &o->count) || !o->count) {
				pa_err("invalid -c '%s'; give the events per sample, e.g. -c 10000",
				       optarg);
				return -EINVAL;
			}
			break;
		case 'C':
			o->cpu_list = optarg;
			break;
		case 'G':
			o->cgroups = optarg;
			break;
		case OPT_ALL_CGROUPS:
			o->no_cgroups = false; /* the default; perf's name for it */
			break;
		case OPT_NO_CGROUPS:
			o->no_cgroups = true;
			break;
		case OPT_LABEL_ENV:
			o->label_env = optarg;
			break;
		case OPT_TAG:
			if (check_tag(optarg) || ++nr_tags > PA_MAX_TAGS) {
				pa_err("invalid --tag '%s'; give up to %d KEY=VALUE, the key "
				       "letters, "
				       "digits and _, e.g. --tag env=prod",
				       optarg, PA_MAX_TAGS);
				return -EINVAL;
			}
			break;
		case OPT_NO_BUILDID_CACHE:
		case 'N':
			o->no_buildid_cache = true;
			break;
		case OPT_NO_KERNEL:
			o->no_kernel = true;
			break;
		case OPT_OFFCPU:
			o->offcpu = true;
			break;
		case OPT_NO_CPU:
			o->no_cpu = true;
			offcpu_opt = offcpu_opt ? offcpu_opt : "--no-cpu";
			break;
		case OPT_OFFCPU_MIN:
			if (pa_parse_duration(optarg, &o->offcpu_min_ns)) {
				pa_err("invalid --offcpu-min '%s'; use e.g. 1ms, 100us, 0", optarg);
				return -EINVAL;
			}
			offcpu_opt = offcpu_opt ? offcpu_opt : "--offcpu-min";
			break;
		case OPT_OFFCPU_STATE:
			if (parse_states(optarg, &o->offcpu_states))
				return -EINVAL;
			offcpu_opt = offcpu_opt ? offcpu_opt : "--offcpu-state";
			break;
		case OPT_UNWIND:
			if (rec_unwind_parse_mode(optarg, o)) {
				pa_err("invalid --unwind '%s'; use auto, cfi, fp or dwarf[,SIZE] "
				       "(SIZE from 4096 to %u bytes)",
				       optarg, PROFILE_SLICE_BYTES);
				return -EINVAL;
			}
			break;
		case OPT_NO_PYTHON:
			o->no_python = true;
			break;
		case OPT_GPU:
			o->gpu = true;
			break;
		case OPT_GPU_STACKS: {
			uint64_t v;

			if (pa_parse_u64(optarg, &v) || v > 1000000) {
				pa_err("invalid --gpu-stacks '%s'; give walks a second per thread, "
				       "0 (every launch) to 1000000",
				       optarg);
				return -EINVAL;
			}
			o->gpu_stacks = (uint32_t)v;
			have_gpu_stacks = true;
			break;
		}
		case OPT_PMU:
			o->pmu = true;
			break;
		case OPT_PER_PID:
			o->per_pid = true;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_UNWIND_ROWS: {
			uint64_t v;

			if (pa_parse_u64(optarg, &v) || v < 1024 || v > (1u << 28)) {
				pa_err("invalid --unwind-rows '%s'; give a row count from 1024 to "
				       "268435456",
				       optarg);
				return -EINVAL;
			}
			o->unwind_rows = v;
			break;
		}
		case OPT_DUMP:
			o->dump = true;
			break;
		case 'o':
			o->output = optarg;
			have_output = true;
			break;
		case 'z': {
			uint64_t v = PD_ZSTD_MIN_LEVEL;

			if (optarg && (pa_parse_u64(optarg, &v) || (v && v < PD_ZSTD_MIN_LEVEL) ||
				       v > PD_ZSTD_MAX_LEVEL)) {
				pa_err("invalid compression level '%s'; give %d (fastest) to %d "
				       "(smallest), e.g. -z3, or 0 for plain records",
				       optarg, PD_ZSTD_MIN_LEVEL, PD_ZSTD_MAX_LEVEL);
				return -EINVAL;
			}
			o->compress_level = (int)v;
			break;
		}
		case 'q':
			o->quiet = true;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'h':
			fputs(usage, stdout);
			exit(0);
		case OPT_VERSION:
			printf("pa-record %s\n", PA_VERSION);
			exit(0);
		case ':':
			pa_err("option '%s' needs an argument; see --help", argv[optind - 1]);
			return -EINVAL;
		default:
			pa_err("unknown option '%s'; see --help", argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind < argc)
		o->cmd_argv = argv + optind;

	if (offcpu_opt && !o->offcpu) {
		pa_err("%s needs --offcpu; add --offcpu to record off-CPU time", offcpu_opt);
		return -EINVAL;
	}
	env = getenv("PA_RECORD_SWITCH");
	if (env && *env) {
		static const char *const names[REC_SWITCH_NR] = {
			[REC_SWITCH_TASK_WORK] = "task-work",
			[REC_SWITCH_RSEQ] = "rseq",
			[REC_SWITCH_SYS_EXIT] = "sys-exit",
			[REC_SWITCH_SWITCH_OUT] = "switch-out",
			[REC_SWITCH_RAW_TP] = "raw-tp",
		};
		size_t i;

		for (i = 0; i < REC_SWITCH_NR && strcmp(env, names[i]); i++)
			;
		if (i == REC_SWITCH_NR) {
			pa_err("PA_RECORD_SWITCH=%s: unknown; use task-work, rseq, sys-exit, "
			       "switch-out or raw-tp",
			       env);
			return -EINVAL;
		}
		o->switch_method = i;
	}
	/* Tests: act as if every Nth switch-in ending a stretch had not been traced. */
	if (env_count("PA_RECORD_SKIP_SWITCH_IN", &o->skip_switch_in))
		return -EINVAL;
	/* Tests: a smaller table of followed processes, to see it fill up. */
	if (env_count("PA_RECORD_MAX_TARGETS", &o->max_targets))
		return -EINVAL;
	/* Tests: drop every Nth sample as if the ring buffer were full. */
	if (env_count("PA_RECORD_DROP_EVERY", &o->drop_every))
		return -EINVAL;
	/* Tests: finish every stack slice from the side-band's mappings, as for a process
	 * gone before /proc could be read. */
	if (env_count("PA_RECORD_SLICE_GONE", &o->slice_gone))
		return -EINVAL;

	if (o->dump) {
		if (!o->nr_pids || o->system_wide || o->cmd_argv) {
			pa_err("--dump needs -p PID (and no -a or CMD): it prints the stacks of "
			       "running processes");
			return -EINVAL;
		}
		/* A short recording whose last stack per thread is printed (dump.c). */
		o->offcpu = true;
		o->no_cpu = false;
		o->offcpu_min_ns = 0;
		o->offcpu_states = (1u << PROFILE_STATE_NR) - 1;
		if (!o->duration_ns)
			o->duration_ns = DUMP_WINDOW_NS;
		if (!have_freq)
			o->freq = 999;
		o->no_buildid_cache = true;
		o->compress_level = 0;
		o->dump_keep = have_output && strcmp(o->output, "-");
		return 0;
	}
	/* -a -- CMD: the whole system for as long as CMD runs, as perf record -a. */
	modes = !!o->nr_pids + (o->system_wide || o->cmd_argv);
	if (modes != 1) {
		pa_err("%s; give one of -p PID, -a, or -- CMD (or -a -- CMD)",
		       modes ? "conflicting targets" : "nothing to profile");
		return -EINVAL;
	}
	if (have_gpu_stacks && !o->gpu) {
		pa_err("--gpu-stacks rates the walks of --gpu's launch stacks; add --gpu");
		return -EINVAL;
	}
	if (o->gpu && o->unwind_mode == UNWIND_MODE_FP) {
		pa_err("--gpu finds the CUDA runtime in the files the CFI walker loads; use "
		       "--unwind auto (the default) or cfi");
		return -EINVAL;
	}
	if (o->no_cpu && (o->events || o->count || o->cpu_list)) {
		pa_err("--no-cpu samples no event; leave out -e, -c and -C, or --no-cpu");
		return -EINVAL;
	}
	if (have_freq && o->count) {
		pa_err("-F and -c both given; sample by frequency (-F) or every N events (-c)");
		return -EINVAL;
	}
	if (o->cgroups && o->no_cgroups) {
		pa_err("-G needs the cgroups --no-cgroups turns off; leave one out");
		return -EINVAL;
	}
	maxrate = max_sample_rate();
	if (!o->no_cpu && !o->count && maxrate && o->freq > maxrate) {
		pa_err("-F %llu is above kernel.perf_event_max_sample_rate (%llu); lower -F or "
		       "raise "
		       "the sysctl",
		       (unsigned long long)o->freq, (unsigned long long)maxrate);
		return -EINVAL;
	}
	if (!strcmp(o->output, "-") || (!have_output && !isatty(STDOUT_FILENO)))
		o->pipe = true;
	if (o->pipe)
		o->output = "-";
	/* Files 6-14x smaller for under 0.15% of a CPU (bench/compress); a pipe's reader
	 * is often a script that wants plain records. */
	if (o->compress_level < 0)
		o->compress_level = o->pipe ? 0 : PD_ZSTD_MIN_LEVEL;
	return 0;
}

static void install_signals(void)
{
	struct sigaction sa = {};

	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = on_sigchld;
	sa.sa_flags = SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);
	/* A reader that goes away must surface as EPIPE from write, not kill us. */
	signal(SIGPIPE, SIG_IGN);
}

/* ~1/s on a terminal: samples, lost, elapsed, rewritten in place. */
static void progress(struct rec_session *s, uint64_t now, uint64_t *last, bool final)
{
	if (s->opts.quiet || !isatty(STDERR_FILENO))
		return;
	if (final) {
		if (*last != s->start_ns)
			fputs("\r\033[K", stderr);
		return;
	}
	if (now - *last < 1000000000ULL)
		return;
	*last = now;
	fprintf(stderr, "\rpa-record: %llu samples, %llu lost", (unsigned long long)s->samples,
		(unsigned long long)s->lost);
	if (s->opts.offcpu)
		fprintf(stderr, ", %llu off-CPU (%.2f s)", (unsigned long long)s->off_samples,
			s->off_ns / 1e9);
	fprintf(stderr, ", %.0f s ", (now - s->start_ns) / 1e9);
}

/*
 * Take everything the kernel has for us: BPF samples, side-band, lost counts.
 * final: the events are off, write what still waits for a user stack.
 */
static int drain(struct rec_session *s, int timeout_ms, bool final)
{
	int err;

	/*
	 * The BPF side only wakes us when the ring is a quarter full, so after the
	 * poll (a timeout, usually) take what is there: samples must reach the file
	 * in the same round as side-band records of the same time, or perf's
	 * ordering sees them as out of order.
	 */
	err = ring_buffer__poll(s->rb, timeout_ms);
	if (err >= 0 || err == -EINTR)
		err = ring_buffer__consume(s->rb);
	if (s->write_err)
		return s->write_err;
	if (err < 0 && err != -EINTR) {
		pa_err("reading the BPF ring buffer failed: %s", strerror(-err));
		return err;
	}
	err = rec_offcpu_flush(s, final);
	if (!err)
		err = rec_sideband_drain(s);
	if (err)
		return err;
	if (final)
		rec_unwind_collect_final(s);
	else
		rec_unwind_collect(s);
	err = rec_unwind_flush_slices(s, final);
	if (err)
		return err;
	rec_unwind_round(s);
	err = rec_emit_bpf_lost(s);
	/* Samples held for a table are older than this round's: it ends later. */
	if (!err && !rec_unwind_holding(s))
		err = rec_emit_round(s);
	return err;
}

static int record_loop(struct rec_session *s)
{
	uint64_t now, last = s->start_ns;
	int err = 0;

	while (!*s->stop) {
		err = drain(s, 100, false);
		if (err)
			break;
		now = pa_now_ns();
		progress(s, now, &last, false);
		if (s->opts.duration_ns && now - s->start_ns >= s->opts.duration_ns)
			break;
		if (rec_targets_done(s))
			break;
	}
	s->stop_ns = pa_now_ns();
	progress(s, 0, &last, true);
	rec_events_disable(s);
	rec_offcpu_open_waits(s);
	/* Records are complete once the events are off: take the rest. */
	if (!err)
		err = drain(s, 0, true);
	if (err && err != s->write_err)
		return err;
	if (s->write_err)
		pa_err("cannot write %s: %s", s->opts.pipe ? "to the pipe" : s->opts.output,
		       strerror(-s->write_err));
	return s->write_err;
}

/*
 * What the stretches whose switch-in went unreported kept, by method: those that
 * defer the user stack take it as the thread goes back to user space, when it does
 * before blocking again (rseq, sys_exit for sleeps) or never (task_work).
 */
static const char *untraced_stacks(int method)
{
	switch (method) {
	case REC_SWITCH_TASK_WORK:
		return ", without a stack";
	case REC_SWITCH_RSEQ:
	case REC_SWITCH_SYS_EXIT:
		return ", most with the user stack they went back to but no kernel stack";
	default:
		return "";
	}
}

static void summary(struct rec_session *s)
{
	struct stat st;
	char where[PATH_MAX + 64], zstd[48] = "";

	if (s->zstd_out)
		snprintf(zstd, sizeof(zstd), "zstd ratio %.1f",
			 (double)s->zstd_in / (double)s->zstd_out);
	if (s->opts.pipe && zstd[0])
		snprintf(where, sizeof(where), "pipe (%s)", zstd);
	else if (s->opts.pipe)
		snprintf(where, sizeof(where), "pipe");
	else if (!stat(s->opts.output, &st))
		snprintf(where, sizeof(where), "%s (%.3f MB%s%s)", s->opts.output,
			 st.st_size / (1024.0 * 1024.0), zstd[0] ? ", " : "", zstd);
	else
		snprintf(where, sizeof(where), "%s", s->opts.output);
	if (!s->opts.offcpu)
		pa_info("%llu samples, %llu lost, %.2f s, wrote %s", (unsigned long long)s->samples,
			(unsigned long long)s->lost, (s->stop_ns - s->start_ns) / 1e9, where);
	else
		pa_info("%llu samples, %llu lost, %.2f s, wrote %s; off-CPU: %llu samples, %.3f s "
			"blocked, %llu lost",
			(unsigned long long)s->samples, (unsigned long long)s->lost,
			(s->stop_ns - s->start_ns) / 1e9, where, (unsigned long long)s->off_samples,
			s->off_ns / 1e9, (unsigned long long)(s->off_lost + s->off_untracked));
	rec_unwind_summary(s);
	rec_python_summary(s);
	rec_gpu_summary(s);
	rec_files_summary(s);
	rec_cgroups_summary(s);
	if (s->off_untracked)
		pa_warn("%llu off-CPU stretches were not tracked (thread table full)",
			(unsigned long long)s->off_untracked);
	if (s->targets_lost)
		pa_warn("%llu forked processes were not followed (more than %u processes); "
			"record them with -a",
			(unsigned long long)s->targets_lost,
			s->opts.max_targets ? s->opts.max_targets : PROFILE_MAX_TARGETS);
	if (s->kstack_err || s->ustack_err)
		pa_warn("stack capture failed in %llu kernel and %llu user stacks",
			(unsigned long long)s->kstack_err, (unsigned long long)s->ustack_err);
	if (s->opts.verbose && (s->kstack_cut || s->ustack_cut))
		pa_info("%llu kernel and %llu frame-pointer user stacks reached the %d-frame limit "
			"and may be cut",
			(unsigned long long)s->kstack_cut, (unsigned long long)s->ustack_cut,
			PROFILE_MAX_FRAMES);
	/* A few are expected: threads that stop or die before returning to user space. */
	if (s->off_no_ustack && (s->opts.verbose || s->off_no_ustack * 100 > s->off_samples))
		pa_warn("%llu off-CPU samples have no user stack (the thread did not return to "
			"user space before it exited or the recording stopped, or went back "
			"another way than the one it blocked in)",
			(unsigned long long)s->off_no_ustack);
	if (s->off_untraced_in && s->opts.verbose)
		pa_info("off-CPU: %llu stretches ended by a switch-in the sched_switch tracepoint "
			"did not report; timed to the thread's last arrival on a CPU%s",
			(unsigned long long)s->off_untraced_in, untraced_stacks(s->switch_method));
	if (s->opts.offcpu && s->off_short && s->opts.verbose)
		pa_info("off-CPU: %llu stretches under --offcpu-min (%.3f s in all) not recorded",
			(unsigned long long)s->off_short, s->off_short_ns / 1e9);
	if (s->priv.denied)
		pa_warn("%llu process%s ran a setuid, setgid or file-capability program, not "
			"followed from there: only root or an allowed user may profile those "
			"(docs/privileges.md)",
			(unsigned long long)s->priv.denied, s->priv.denied > 1 ? "es" : "");
	if (s->sb_lost)
		pa_warn("%llu side-band records (mmap/comm/fork) were lost; some samples may stay "
			"unresolved",
			(unsigned long long)s->sb_lost);
	if (s->child_done && WIFEXITED(s->child_status) && WEXITSTATUS(s->child_status))
		pa_info("note: '%s' exited with status %d", s->opts.cmd_argv[0],
			WEXITSTATUS(s->child_status));
	else if (s->child_done && WIFSIGNALED(s->child_status))
		pa_info("note: '%s' was killed by signal %d (%s)", s->opts.cmd_argv[0],
			WTERMSIG(s->child_status), strsignal(WTERMSIG(s->child_status)));
}

int main(int argc, char **argv)
{
	struct rec_session s = {
		.stop = &stop_flag,
		.release_fd = -1,
		.exec_err_fd = -1,
		.off_evidx = -1,
		.gpu_evidx = -1,
		.gpu_time_evidx = -1,
	};
	char dump_path[PATH_MAX];
	size_t i;
	int err;

	pa_set_progname("pa-record");
	if (parse_args(&s.opts, argc, argv)) {
		free(s.opts.pids);
		return 1;
	}
	pa_set_quiet(s.opts.quiet);
	if (rec_priv_init(&s)) {
		free(s.opts.pids);
		return 1;
	}
	s.files.gpu = s.opts.gpu;
	if (s.opts.dump && !rec_can_bpf()) {
		pa_warn("--dump: BPF cannot be loaded here (it needs root, or CAP_BPF and "
			"CAP_PERFMON): Python stacks only");
		err = rec_dump(&s.opts);
		free(s.opts.pids);
		return err ? 1 : 0;
	}
	if (s.opts.dump && !s.opts.dump_keep) {
		snprintf(dump_path, sizeof(dump_path), "%s/pa-dump-%d.data",
			 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
		s.opts.output = dump_path;
	}
	s.self = getpid();
	install_signals();
	if (s.opts.pmu || s.opts.per_pid || s.opts.json) {
		err = rec_pmu_main(&s);
		free(s.opts.pids);
		return err ? 1 : 0;
	}

	err = rec_check_privileges(&s.opts);
	if (!err)
		err = rec_targets_check(&s.opts);
	if (!err)
		err = rec_cpus_init(&s);
	if (!err)
		err = rec_events_parse(&s);
	if (!err)
		err = rec_cgroups_init(&s);
	if (!err)
		err = rec_bpf_open_load(&s);
	if (!err)
		err = rec_cgroups_allow(&s);
	if (!err)
		err = rec_sched_range(&s);
	if (err)
		goto cleanup;
	err = rec_output_open(&s);
	if (!err)
		err = rec_events_open(&s);
	if (!err)
		err = rec_output_attr(&s);
	for (i = 0; !err && i < s.opts.nr_pids; i++)
		err = rec_target_add(&s, s.opts.pids[i]);
	if (!err && s.opts.cmd_argv) {
		rec_gpu_inject(&s);
		err = rec_cmd_fork(&s);
		if (!err && !s.opts.system_wide)
			err = rec_target_add(&s, s.child);
	}
	if (!err)
		rec_gpu_preattach(&s);
	if (!err)
		err = rec_synthesize(&s);
	if (!err)
		err = rec_events_enable(&s);
	if (!err && s.child)
		err = rec_cmd_release(&s);
	if (err)
		goto cleanup;

	err = record_loop(&s);
	if (!err)
		err = rec_cgroups_finish(&s);
	rec_cmd_finish(&s);
	if (!err && s.opts.compress_level) {
		/* The last chunk is out after a flush: the figures are final.  A write
		 * error sticks, close returns it. */
		pd_writer_flush(s.w);
		pd_writer_zstd_stats(s.w, &s.zstd_in, &s.zstd_out);
	}
	if (err)
		goto cleanup;
	/* Before perf.data is complete: a report made at once finds the names. */
	rec_synth_finish(&s);
	err = pd_writer_close(s.w);
	s.w = NULL;
	if (err) {
		pa_err("cannot write %s: %s", s.opts.pipe ? "to the pipe" : s.opts.output,
		       strerror(-err));
		goto cleanup;
	}
	if (s.opts.dump) {
		err = rec_dump_print(&s);
		goto cleanup;
	}
	summary(&s);
	if (!s.opts.pipe && !s.opts.no_buildid_cache) {
		struct bidc_stats bst;

		/* As perf record: the binaries stay in ~/.debug by build-id, so a report
		 * made after they are deleted or their container is gone has names. */
		if (bidc_save(s.opts.output, NULL, &bst) < 0 && !s.opts.quiet)
			pa_warn("build-id cache ~/.debug not updated (not writable?); "
				"-N/--no-buildid-cache skips it");
	}

cleanup:
	rec_cmd_finish(&s);
	if (s.w)
		pd_writer_abort(s.w);
	if (s.opts.dump && !s.opts.dump_keep) {
		/* Nothing names the file of Python functions but the capture. */
		unlink(s.opts.output);
		if (rec_synth_path(&s)[0])
			unlink(rec_synth_path(&s));
	}
	rec_session_teardown(&s);
	free(s.opts.pids);
	return err ? 1 : 0;
}
