// SPDX-License-Identifier: Apache-2.0
/*
 * A -e event list (perfdata/evspec.h), looked up in a small fake sysfs (PMU "fake", type
 * 42, with format terms and event aliases) and tracefs (sched:sched_wakeup) made once
 * under /tmp, never in the machine's own.  A refusal must say why, on one line.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"
#include "perfdata/evspec.h"

static char evspec_root[] = "/tmp/pa-fuzz-evspec-XXXXXX";
static char evspec_sysfs[64], evspec_tracefs[64];

static int evspec_rm(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void evspec_cleanup(void)
{
	nftw(evspec_root, evspec_rm, 16, FTW_DEPTH | FTW_PHYS);
}

static void evspec_put(const char *rel, const char *text)
{
	char path[256];
	size_t i;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", evspec_root, rel);
	for (i = strlen(evspec_root) + 1; path[i]; i++)
		if (path[i] == '/') {
			path[i] = '\0';
			mkdir(path, 0755);
			path[i] = '/';
		}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		perror(path);
		abort();
	}
	close(fd);
}

static void evspec_make_tree(void)
{
	if (evspec_sysfs[0])
		return;
	if (!mkdtemp(evspec_root)) {
		perror("mkdtemp");
		abort();
	}
	atexit(evspec_cleanup);
	evspec_put("sys/fake/type", "42\n");
	evspec_put("sys/fake/format/event", "config:0-7\n");
	evspec_put("sys/fake/format/umask", "config:8-15\n");
	evspec_put("sys/fake/format/edge", "config:18\n");
	evspec_put("sys/fake/format/split", "config:32-35,40-43\n");
	evspec_put("sys/fake/format/ldlat", "config1:0-15\n");
	evspec_put("sys/fake/format/wide", "config2:0-63\n");
	evspec_put("sys/fake/format/bad", "config:9-3\n");
	evspec_put("sys/fake/events/loads", "event=0x3c,umask=0x00\n");
	evspec_put("sys/fake/events/loads.scale", "1\n");
	evspec_put("sys/fake/events/stores", "event=0xd0, umask=0x82,ldlat=3\n");
	evspec_put("sys/fake/events/self", "self\n");
	evspec_put("sys/fake/events/nl", "event=1\nx=2\n");
	evspec_put("sys/software/type", "1\n");
	evspec_put("trace/events/sched/sched_wakeup/id", "316\n");
	evspec_put("trace/events/sched/sched_switch/id", "318\n");
	snprintf(evspec_sysfs, sizeof(evspec_sysfs), "%s/sys", evspec_root);
	snprintf(evspec_tracefs, sizeof(evspec_tracefs), "%s/trace", evspec_root);
}

FUZZ_TARGET(evspec)
{
	volatile uint64_t sink = 0;
	struct evspec_env env;
	struct evspec *v = NULL;
	char err[256], *list = malloc(size + 1);
	size_t n = 0, i;
	int ret;

	if (!list)
		abort();
	evspec_make_tree();
	env = (struct evspec_env){.sysfs = evspec_sysfs, .tracefs = evspec_tracefs};
	memcpy(list, data, size);
	list[size] = '\0';
	ret = evspec_parse(list, &env, &v, &n, err, sizeof(err));
	if (!ret && (!v || n == 0 || n > EVSPEC_MAX))
		abort();
	if (ret == -EINVAL && (!err[0] || strchr(err, '\n')))
		abort();
	for (i = 0; !ret && i < n; i++) {
		if (!memchr(v[i].name, '\0', sizeof(v[i].name)))
			abort();
		sink += v[i].attr.type + v[i].attr.config + v[i].attr.config1 + v[i].attr.config2 +
			v[i].period + strlen(v[i].name) + (evspec_missing_pmu(&v[i], &env) != NULL);
	}
	(void)sink;
	free(v);
	free(list);
	return 0;
}
