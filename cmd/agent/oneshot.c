// SPDX-License-Identifier: Apache-2.0
/*
 * perf-agent --profile: one capture (pa-record), then its files (pa-convert): a pprof
 * per kind of time (on-CPU, off-CPU, GPU) and one flame graph of all of them, named
 * COMM-YYYYMMDD-hhmmss-KIND, next to the capture itself.  --pmu runs pa-record --pmu
 * beside the capture, over the same time.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "base/util.h"

/*
 * --pmu: pa-record --pmu --json over the same time, its document into path (through
 * a temporary file).  The child's pid, or -1.
 */
static pid_t start_pmu(const struct agent_opts *o, const char *tool, const char *path, char *tmp,
		       size_t tmplen)
{
	struct agent_argv a = {0};
	pid_t pid;
	int fd;

	snprintf(tmp, tmplen, "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		pa_err("cannot create %s: %s", tmp, strerror(errno));
		return -1;
	}
	agent_arg(&a, tool);
	agent_arg(&a, "--pmu");
	agent_arg(&a, "--json");
	agent_arg(&a, "-q");
	/* --pmu counts: no kinds of time, no --tag. */
	agent_record_args(&a, o, false, false);
	pid = agent_spawn(a.v, fd);
	close(fd);
	if (pid < 0)
		unlink(tmp);
	return pid;
}

static int finish_pmu(pid_t pid, const char *tmp, const char *path)
{
	if (agent_wait(pid)) {
		unlink(tmp);
		return -1;
	}
	if (rename(tmp, path)) {
		pa_err("cannot write %s: %s", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* pa-convert -i data FORMAT [--event EV] -o out; 0 when it wrote out. */
static int convert(const char *tool, const char *data, const char *format, const char *event,
		   const char *out)
{
	struct agent_argv a = {0};

	agent_arg(&a, tool);
	agent_arg(&a, "-q");
	agent_arg(&a, "-i");
	agent_arg(&a, data);
	agent_arg(&a, format);
	if (event) {
		agent_arg(&a, "--event");
		agent_arg(&a, event);
	}
	agent_arg(&a, "-o");
	agent_arg(&a, out);
	return agent_run(a.v) ? -1 : 0;
}

/* The pprof files: the kind in the name, the events in it. */
static const struct {
	const char *kind, *events;
} kinds[] = {
	{"on-cpu", "cpu-clock"},
	{"off-cpu", "offcpu-time"},
	{"gpu", "gpu-time,gpu-launch"},
};

int oneshot_run(const struct agent_opts *o)
{
	char record[PATH_MAX], conv[PATH_MAX], name[64], stamp[32], base[PATH_MAX - 64];
	char data[PATH_MAX], out[PATH_MAX], pmu_path[PATH_MAX], pmu_tmp[PATH_MAX + 8];
	const char *dir = o->output_dir ? o->output_dir : ".";
	struct agent_argv a = {0};
	pid_t pmu = -1;
	struct tm tm;
	time_t now = time(NULL);
	int ret, failed = 0;
	size_t i;

	if (!agent_tool("record", record, sizeof(record)) ||
	    !agent_tool("convert", conv, sizeof(conv))) {
		pa_err("pa-record or pa-convert not found next to perf-agent or in $PATH; "
		       "install the suite (make install)");
		return 1;
	}
	if (o->output_dir && mkdir(o->output_dir, 0755) && errno != EEXIST) {
		pa_err("cannot create %s: %s", o->output_dir, strerror(errno));
		return 1;
	}
	agent_target_name(o, name, sizeof(name));
	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	if ((size_t)snprintf(base, sizeof(base), "%s/%s-%s", dir, name, stamp) >= sizeof(base)) {
		pa_err("--output-dir %s: the path is too long", dir);
		return 1;
	}
	snprintf(data, sizeof(data), "%s.perf.data", base);

	if (o->pmu) {
		snprintf(pmu_path, sizeof(pmu_path), "%s-pmu.json", base);
		pmu = start_pmu(o, record, pmu_path, pmu_tmp, sizeof(pmu_tmp));
		if (pmu < 0)
			return 1;
	}
	agent_arg(&a, record);
	agent_arg(&a, "-q");
	agent_arg(&a, "-o");
	agent_arg(&a, data);
	agent_record_args(&a, o, true, true);
	if (!o->quiet)
		fprintf(stderr, "perf-agent: profiling %s for %.1f s\n", name,
			o->duration_ns / 1e9);
	ret = agent_run(a.v);
	if (pmu > 0 && finish_pmu(pmu, pmu_tmp, pmu_path)) {
		pa_warn("pa-record --pmu failed; no %s", pmu_path);
		pmu = -1;
	}
	if (ret) {
		/* pa-record said why; it leaves no file on failure. */
		return ret < 0 ? 1 : ret;
	}

	printf("%s\n", data);
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if ((i == 1 && !o->offcpu) || (i == 2 && !o->gpu))
			continue;
		snprintf(out, sizeof(out), "%s-%s.pb.gz", base, kinds[i].kind);
		if (convert(conv, data, "--pprof", kinds[i].events, out))
			failed++;
		else
			printf("%s\n", out);
	}
	snprintf(out, sizeof(out), "%s-flamegraph.html", base);
	if (convert(conv, data, "--flamegraph", NULL, out))
		failed++;
	else
		printf("%s\n", out);
	if (pmu > 0)
		printf("%s\n", pmu_path);
	return failed ? 1 : 0;
}
