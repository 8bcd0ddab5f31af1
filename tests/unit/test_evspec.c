// SPDX-License-Identifier: Apache-2.0
/*
 * Event specs (perfdata/evspec.h): perf's names become the attrs perf 6.1 makes of them
 * (the expected configs are what `perf record -e NAME -vv` prints), PMU terms and
 * aliases are read from a fake sysfs and tracepoint ids from a fake tracefs made here,
 * and every bad spec is refused with a line naming what is wrong.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "perfdata/evspec.h"
#include "unit.h"

static char root[] = "/tmp/pa-test-evspec-XXXXXX";
static char sysfs[64], tracefs[64], nowhere[64];

/* root/rel with text, its folders made. */
static void put(const char *rel, const char *text)
{
	char path[256];
	size_t i;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (i = strlen(root) + 1; path[i]; i++)
		if (path[i] == '/') {
			path[i] = '\0';
			mkdir(path, 0755);
			path[i] = '/';
		}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		perror(path);
		exit(1);
	}
	close(fd);
}

static void make_trees(void)
{
	put("sys/fake/type", "42\n");
	put("sys/fake/format/event", "config:0-7\n");
	put("sys/fake/format/umask", "config:8-15\n");
	put("sys/fake/format/edge", "config:18\n");
	put("sys/fake/format/split", "config:32-35,40-43\n");
	put("sys/fake/format/ldlat", "config1:0-15\n");
	put("sys/fake/format/wide", "config2:0-63\n");
	put("sys/fake/format/broken", "config3:0-7\n");
	put("sys/fake/events/loads", "event=0x3c,umask=0x00\n");
	put("sys/fake/events/loads.scale", "1\n");
	put("sys/fake/events/stores", "event=0xd0, umask=0x82 ,ldlat=3\n");
	put("sys/fake/events/bad", "event=0x1,nosuch=2\n");
	put("sys/bare/type", "17\n");
	put("sys/software/type", "1\n");
	put("sys/notype/format/event", "config:0-7\n");
	put("trace/events/sched/sched_wakeup/id", "316\n");
	put("trace/events/sched/sched_switch/id", "318\n");
	put("trace/events/bad/notnum/id", "abc\n");
	put("cpu-sys/cpu/type", "4\n");
	put("arm-sys/armv8_pmuv3_0/type", "8\n");
	put("arm-sys/armv8_pmuv3_0/cpus", "0-3\n");
	snprintf(sysfs, sizeof(sysfs), "%s/sys", root);
	snprintf(tracefs, sizeof(tracefs), "%s/trace", root);
	snprintf(nowhere, sizeof(nowhere), "%s/nowhere", root);
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static char why[512];

/* list parsed against the fake trees: how many events, into evs (or -errno). */
static int parse(const char *list, struct evspec *evs, size_t max)
{
	struct evspec_env env = {.sysfs = sysfs, .tracefs = tracefs};
	struct evspec *v = NULL;
	size_t n = 0;
	int err = evspec_parse(list, &env, &v, &n, why, sizeof(why));

	if (err)
		return err;
	memcpy(evs, v, (n < max ? n : max) * sizeof(*v));
	free(v);
	return (int)n;
}

/* One event: its attr (zeroed when the parse failed). */
static struct evspec one(const char *s)
{
	struct evspec ev;

	memset(&ev, 0, sizeof(ev));
	if (parse(s, &ev, 1) != 1) {
		printf("#   '%s' failed: %s\n", s, why);
		memset(&ev, 0, sizeof(ev));
	}
	return ev;
}

#define CHECK_EV(s, t, cfg)                                                                        \
	do {                                                                                       \
		struct evspec _e = one(s);                                                         \
		CHECK_EQ_U64(_e.attr.type, t);                                                     \
		CHECK_EQ_U64(_e.attr.config, cfg);                                                 \
		CHECK_STR(_e.name, s);                                                             \
		CHECK_EQ_U64(_e.attr.size, sizeof(_e.attr));                                       \
	} while (0)

/* list refused, with err mentioning each of the NULL-ended fragments. */
static int refused(const char *list, ...)
{
	struct evspec ev;
	const char *frag;
	va_list ap;
	int ok = 1;

	why[0] = '\0';
	if (parse(list, &ev, 1) != -EINVAL) {
		printf("#   '%s' was not refused\n", list);
		return 0;
	}
	if (strchr(why, '\n') || !why[0])
		ok = 0;
	va_start(ap, list);
	while ((frag = va_arg(ap, const char *)))
		if (!strstr(why, frag)) {
			printf("#   '%s': no \"%s\" in \"%s\"\n", list, frag, why);
			ok = 0;
		}
	va_end(ap);
	return ok;
}

static void test_software_names(void)
{
	CHECK_EV("cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	CHECK_EV("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
	CHECK_EV("page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);
	CHECK_EV("faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);
	CHECK_EV("minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN);
	CHECK_EV("major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ);
	CHECK_EV("context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES);
	CHECK_EV("cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES);
	CHECK_EV("cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS);
	CHECK_EV("migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS);
	CHECK_EV("alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS);
	CHECK_EV("emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS);
	CHECK_EV("dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
	CHECK_EV("bpf-output", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT);
	CHECK_EV("cgroup-switches", PERF_TYPE_SOFTWARE, 11); /* perf record -vv: config 0xb */
}

static void test_hardware_names(void)
{
	CHECK_EV("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	CHECK_EV("cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	CHECK_EV("instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	CHECK_EV("cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES);
	CHECK_EV("cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES);
	CHECK_EV("branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS);
	CHECK_EV("branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS);
	/* A hardware event, not the cache event branch-misses would read as (BPU). */
	CHECK_EV("branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES);
	CHECK_EV("bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES);
	CHECK_EV("stalled-cycles-frontend", PERF_TYPE_HARDWARE,
		 PERF_COUNT_HW_STALLED_CYCLES_FRONTEND);
	CHECK_EV("idle-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND);
	CHECK_EV("stalled-cycles-backend", PERF_TYPE_HARDWARE,
		 PERF_COUNT_HW_STALLED_CYCLES_BACKEND);
	CHECK_EV("idle-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND);
	CHECK_EV("ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES);
}

/* The configs perf 6.1 prints for these with perf record -vv. */
static void test_cache_names(void)
{
	CHECK_EV("L1-dcache-loads", PERF_TYPE_HW_CACHE, 0x0);
	CHECK_EV("L1-dcache-load-misses", PERF_TYPE_HW_CACHE, 0x10000);
	CHECK_EV("L1-dcache-stores", PERF_TYPE_HW_CACHE, 0x100);
	CHECK_EV("L1-dcache-store-misses", PERF_TYPE_HW_CACHE, 0x10100);
	CHECK_EV("L1-dcache-prefetches", PERF_TYPE_HW_CACHE, 0x200);
	CHECK_EV("L1-dcache-prefetch-misses", PERF_TYPE_HW_CACHE, 0x10200);
	CHECK_EV("L1-icache-loads", PERF_TYPE_HW_CACHE, 0x1);
	CHECK_EV("L1-icache-load-misses", PERF_TYPE_HW_CACHE, 0x10001);
	CHECK_EV("LLC-loads", PERF_TYPE_HW_CACHE, 0x2);
	CHECK_EV("LLC-misses", PERF_TYPE_HW_CACHE, 0x10002);
	CHECK_EV("LLC-prefetch-misses", PERF_TYPE_HW_CACHE, 0x10202);
	CHECK_EV("dTLB-load-misses", PERF_TYPE_HW_CACHE, 0x10003);
	CHECK_EV("dTLB-store-misses", PERF_TYPE_HW_CACHE, 0x10103);
	CHECK_EV("iTLB-load-misses", PERF_TYPE_HW_CACHE, 0x10004);
	CHECK_EV("branch-loads", PERF_TYPE_HW_CACHE, 0x5);
	CHECK_EV("branch-load-misses", PERF_TYPE_HW_CACHE, 0x10005);
	CHECK_EV("node-loads", PERF_TYPE_HW_CACHE, 0x6);
	CHECK_EV("node-store-misses", PERF_TYPE_HW_CACHE, 0x10106);
	/* perf's aliases, either order of operation and result, and the defaults. */
	CHECK_EV("l1d-loads", PERF_TYPE_HW_CACHE, 0x0);
	CHECK_EV("L1-data-write-miss", PERF_TYPE_HW_CACHE, 0x10100);
	CHECK_EV("l1i-read", PERF_TYPE_HW_CACHE, 0x1);
	CHECK_EV("L2-loads", PERF_TYPE_HW_CACHE, 0x2);
	CHECK_EV("Data-TLB-load-refs", PERF_TYPE_HW_CACHE, 0x3);
	CHECK_EV("dTLB-loads-misses", PERF_TYPE_HW_CACHE, 0x10003);
	CHECK_EV("dTLB-speculative-read-miss", PERF_TYPE_HW_CACHE, 0x10203);
	CHECK_EV("Instruction-TLB-misses", PERF_TYPE_HW_CACHE, 0x10004);
	CHECK_EV("L1-dcache-misses-loads", PERF_TYPE_HW_CACHE, 0x10000);
	CHECK_EV("branches-misses", PERF_TYPE_HW_CACHE, 0x10005);
	CHECK_EV("bpu-loads", PERF_TYPE_HW_CACHE, 0x5);
	CHECK_EV("node-prefetch-access", PERF_TYPE_HW_CACHE, 0x206);
	CHECK_EV("L1-dcache", PERF_TYPE_HW_CACHE, 0x0);
	CHECK_EV("node", PERF_TYPE_HW_CACHE, 0x6);
	CHECK_EV("branch", PERF_TYPE_HW_CACHE, 0x5);
	/* What perf refuses: an operation its table has not for that cache, or case. */
	CHECK(refused("L1-icache-stores", "perf counts no stores of L1-icache", "loads, prefetches",
		      NULL));
	CHECK(refused("iTLB-prefetch-misses", "no prefetches of iTLB", NULL));
	CHECK(refused("bpu-speculative-load", "no prefetches of branch", NULL));
	CHECK(refused("l1-dcache-loads", "unknown event 'l1-dcache-loads'", NULL));
	CHECK(refused("L1-dcache-foo", "unknown cache event", "L1-dcache-load-misses", NULL));
	CHECK(refused("L1-dcache-load-misses-misses", "unknown cache event", NULL));
	/* perf takes this as L1-dcache-loads, ignoring "stores": we say it is two. */
	CHECK(refused("L1-dcache-loads-stores", "two cache operations", NULL));
}

static void test_raw_events(void)
{
	struct evspec ev;

	CHECK_EV("r1a8", PERF_TYPE_RAW, 0x1a8);
	CHECK_EV("rC0", PERF_TYPE_RAW, 0xc0);
	CHECK_EV("rffffffffffffffff", PERF_TYPE_RAW, UINT64_MAX);
	ev = one("r1a8:u");
	CHECK_EQ_U64(ev.attr.type, PERF_TYPE_RAW);
	CHECK_EQ_U64(ev.attr.config, 0x1a8);
	CHECK(ev.attr.exclude_kernel);
	CHECK(refused("r1ffffffffffffffff", "more than 16 hex digits", NULL));
	CHECK(refused("r12g", "bad raw event 'r12g'", "r1a8", NULL));
	CHECK(refused("r0x1a8", "bad raw event", NULL)); /* perf refuses it too */
	CHECK(refused("r", "unknown event 'r'", NULL));
}

static void test_modifiers(void)
{
	struct evspec ev;

	/* perf record -vv: cycles:u excludes kernel and hv. */
	ev = one("cycles:u");
	CHECK_EQ_U64(ev.attr.config, PERF_COUNT_HW_CPU_CYCLES);
	CHECK(!ev.attr.exclude_user && ev.attr.exclude_kernel && ev.attr.exclude_hv);
	CHECK_STR(ev.name, "cycles:u");
	ev = one("cpu-clock:k");
	CHECK(ev.attr.exclude_user && !ev.attr.exclude_kernel && ev.attr.exclude_hv);
	ev = one("cpu-clock:h");
	CHECK(ev.attr.exclude_user && ev.attr.exclude_kernel && !ev.attr.exclude_hv);
	ev = one("cpu-clock:uk");
	CHECK(!ev.attr.exclude_user && !ev.attr.exclude_kernel && ev.attr.exclude_hv);
	ev = one("instructions:upp");
	CHECK_EQ_U64(ev.attr.config, PERF_COUNT_HW_INSTRUCTIONS);
	CHECK(!ev.attr.exclude_user && ev.attr.exclude_kernel && ev.attr.exclude_hv);
	CHECK_EQ_U64(ev.attr.precise_ip, 2);
	CHECK_STR(ev.name, "instructions:upp");
	ev = one("cycles:p");
	CHECK_EQ_U64(ev.attr.precise_ip, 1);
	CHECK(!ev.attr.exclude_user && !ev.attr.exclude_kernel && !ev.attr.exclude_hv);
	CHECK_EQ_U64(one("cycles:ppp").attr.precise_ip, 3);
	ev = one("L1-dcache-load-misses:k");
	CHECK_EQ_U64(ev.attr.config, 0x10000);
	CHECK(ev.attr.exclude_user && !ev.attr.exclude_kernel);
	ev = one("cpu-clock");
	CHECK(!ev.attr.exclude_user && !ev.attr.exclude_kernel && !ev.attr.exclude_hv);
	CHECK_EQ_U64(ev.attr.precise_ip, 0);
	CHECK(refused("cpu-clock:z", "unknown modifier 'z' in 'cpu-clock:z'", NULL));
	CHECK(refused("cycles:pppp", "at most ppp", NULL));
	CHECK(refused("cycles:", "empty modifier", NULL));
	CHECK(refused("cycles:u:k", "unknown modifier ':'", NULL));
}

static void test_pmu_terms(void)
{
	struct evspec evs[4], ev;

	ev = one("fake/event=0x3c,umask=1/");
	CHECK_EQ_U64(ev.attr.type, 42);
	CHECK_EQ_U64(ev.attr.config, 0x13c);
	CHECK_STR(ev.name, "fake/event=0x3c,umask=1/");
	/* A bare term is 1; ranges fill low bits first; configN words. */
	CHECK_EQ_U64(one("fake/event=60,edge/").attr.config, 0x4003c);
	CHECK_EQ_U64(one("fake/split=0xab/").attr.config, 0xa0bULL << 32);
	ev = one("fake/ldlat=30,wide=0xffffffffffffffff/");
	CHECK_EQ_U64(ev.attr.config1, 30);
	CHECK_EQ_U64(ev.attr.config2, UINT64_MAX);
	ev = one("fake/config=0x1234,config1=7,config2=8/");
	CHECK_EQ_U64(ev.attr.config, 0x1234);
	CHECK_EQ_U64(ev.attr.config1, 7);
	CHECK_EQ_U64(ev.attr.config2, 8);
	/* A later term overwrites its bits. */
	CHECK_EQ_U64(one("fake/event=0xff,event=1/").attr.config, 1);
	ev = one("fake/event=1,period=1000,name=mine/");
	CHECK_EQ_U64(ev.attr.config, 1);
	CHECK_EQ_U64(ev.period, 1000);
	CHECK_STR(ev.name, "mine");
	ev = one("fake//");
	CHECK_EQ_U64(ev.attr.type, 42);
	CHECK_EQ_U64(ev.attr.config, 0);
	/* The modifiers come right after the closing slash. */
	ev = one("fake/event=2/uppp");
	CHECK(ev.attr.exclude_kernel && !ev.attr.exclude_user);
	CHECK_EQ_U64(ev.attr.precise_ip, 3);
	/* Commas between the slashes are terms, not events. */
	CHECK(parse("fake/event=1,umask=2/,cpu-clock,fake/event=3/k", evs, 4) == 3);
	CHECK_EQ_U64(evs[0].attr.config, 0x201);
	CHECK_STR(evs[0].name, "fake/event=1,umask=2/");
	CHECK_EQ_U64(evs[1].attr.type, PERF_TYPE_SOFTWARE);
	CHECK_EQ_U64(evs[2].attr.config, 3);
	CHECK(evs[2].attr.exclude_user);
	/* Symbolic names take period= and name=. */
	ev = one("cpu-clock/period=1000/");
	CHECK_EQ_U64(ev.attr.type, PERF_TYPE_SOFTWARE);
	CHECK_EQ_U64(ev.period, 1000);
	ev = one("L1-dcache-load-misses/name=l1miss/u");
	CHECK_EQ_U64(ev.attr.config, 0x10000);
	CHECK_STR(ev.name, "l1miss");
	CHECK(ev.attr.exclude_kernel);
	CHECK(refused("cpu-clock/config=1/", "unknown term 'config'", "period= and name=", NULL));

	CHECK(refused("nopmu/event=1/", "unknown PMU 'nopmu'", "bare, fake", NULL));
	CHECK(refused("fake/nosuch=1/", "unknown term 'nosuch'", "PMU fake takes", "event", "umask",
		      "its events: bad, loads", NULL));
	CHECK(refused("fake/event=0x100/", "event=0x100 does not fit its 8 bits", NULL));
	CHECK(refused("fake/event=zz/", "event=zz is not a number", NULL));
	CHECK(refused("fake/event=99999999999999999999/", "not a number", NULL));
	CHECK(refused("fake/config=/", "config= needs a number", NULL));
	CHECK(refused("fake/period=0/", "period= must be above 0", NULL));
	CHECK(refused("fake/name=/", "name= needs a name", NULL));
	CHECK(refused("fake/event=1,,umask=1/", "empty term", NULL));
	CHECK(refused("fake/event=1", "lacks its closing '/'", NULL));
	CHECK(refused("fake/event=1/u/", "'/' after the closing one", NULL));
	CHECK(refused("fake/event=1/:u", "modifiers follow the closing '/'", "fake/event=1/u",
		      NULL));
	CHECK(refused("/event=1/", "no PMU name", NULL));
	CHECK(refused("fake/event=1/x", "unknown modifier 'x'", NULL));
	CHECK(refused("fake/broken=1/", "not configN:BITS", NULL));
	CHECK(refused("notype/event=1/", "unknown PMU 'notype'", NULL));
	CHECK(refused("..fake/event=1/", "bad PMU name", NULL));
	CHECK(refused("fake/..=1/", "bad term '..'", NULL));
}

static void test_pmu_aliases(void)
{
	struct evspec ev;

	/* events/loads: "event=0x3c,umask=0x00". */
	ev = one("fake/loads/");
	CHECK_EQ_U64(ev.attr.type, 42);
	CHECK_EQ_U64(ev.attr.config, 0x3c);
	CHECK_STR(ev.name, "fake/loads/");
	/* Terms after an alias override its own; spaces in the alias file are skipped. */
	CHECK_EQ_U64(one("fake/loads,umask=2/").attr.config, 0x23c);
	ev = one("fake/stores/k");
	CHECK_EQ_U64(ev.attr.config, 0x82d0);
	CHECK_EQ_U64(ev.attr.config1, 3);
	CHECK(ev.attr.exclude_user);
	CHECK(refused("fake/bad/", "unknown term 'nosuch'", NULL));
	CHECK(refused("fake/loads=1/", "unknown term 'loads'", NULL));
	CHECK(refused("fake/nosuch/", "unknown term 'nosuch'", NULL));
}

static void test_tracepoints(void)
{
	struct evspec_env env = {.sysfs = sysfs, .tracefs = nowhere};
	struct evspec *v = NULL, ev;
	size_t n = 99;

	ev = one("sched:sched_wakeup");
	CHECK_EQ_U64(ev.attr.type, PERF_TYPE_TRACEPOINT);
	CHECK_EQ_U64(ev.attr.config, 316);
	CHECK_STR(ev.name, "sched:sched_wakeup");
	ev = one("sched:sched_switch:k");
	CHECK_EQ_U64(ev.attr.config, 318);
	CHECK(ev.attr.exclude_user && !ev.attr.exclude_kernel);
	CHECK(refused("sched:nosuch", "unknown tracepoint 'sched:nosuch'", "see perf list", NULL));
	CHECK(refused("nosys:x", "unknown tracepoint 'nosys:x'", NULL));
	CHECK(refused("sched:*", "wildcards are not supported", NULL));
	CHECK(refused("sched:..", "bad tracepoint", NULL));
	CHECK(refused("bad:notnum", "'abc', not a number", NULL));
	/* An unknown event with modifiers is not taken for a tracepoint. */
	CHECK(refused("foo:u", "unknown event 'foo'", NULL));

	/* tracefs not mounted: say so, and how to mount it. */
	CHECK(evspec_parse("sched:sched_wakeup", &env, &v, &n, why, sizeof(why)) == -EINVAL);
	CHECK(!v && n == 0);
	CHECK(strstr(why, "needs tracefs, which is not mounted") != NULL);
	CHECK(strstr(why, "mount -t tracefs nodev ") != NULL);
	CHECK(strstr(why, nowhere) != NULL);
}

static void test_list_errors(void)
{
	struct evspec evs[EVSPEC_MAX];
	char list[EVSPEC_MAX * 4 + 16] = "", longname[EVSPEC_NAME_MAX + 8];
	int i;

	CHECK(refused("", "no event given", NULL));
	CHECK(refused("cycles,,cs", "empty event at offset 7", NULL));
	CHECK(refused("cycles,", "empty event", NULL));
	CHECK(refused(",cycles", "empty event at offset 0", NULL));
	CHECK(refused("cpu-clock, cs", "byte 0x20 at offset 10", NULL));
	CHECK(refused("cpu-clock\n", "byte 0x0a", NULL));
	CHECK(refused("{cycles,cs}", "event groups", NULL));
	CHECK(refused("foo", "unknown event 'foo'", "perf list", NULL));
	CHECK(refused("CPU-CLOCK", "did you mean 'cpu-clock'", NULL));
	CHECK(refused("cs,foo,cycles", "unknown event 'foo'", NULL));

	for (i = 0; i < EVSPEC_MAX; i++)
		strcat(list, i ? ",cs" : "cs");
	CHECK(parse(list, evs, EVSPEC_MAX) == EVSPEC_MAX);
	strcat(list, ",cs");
	CHECK(refused(list, "more than 16 events", NULL));

	memset(longname, 'a', EVSPEC_NAME_MAX - 1);
	longname[EVSPEC_NAME_MAX - 1] = '\0';
	CHECK(refused(longname, "unknown event", NULL)); /* 127 characters: read, unknown */
	strcat(longname, "a");
	CHECK(refused(longname, "longer than 127 characters", NULL));
	CHECK(parse(NULL, evs, 1) == -EINVAL);
}

/* One name of a comma-separated list, whole. */
static int listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;

	while ((p = strstr(p, name))) {
		if ((p == list || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return 1;
		p++;
	}
	return 0;
}

static int can_open(uint32_t type, uint64_t config)
{
	struct perf_event_attr a = {.type = type,
				    .size = sizeof(a),
				    .config = config,
				    .disabled = 1,
				    .exclude_kernel = 1,
				    .exclude_hv = 1};
	int fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);

	if (fd >= 0)
		close(fd);
	return fd >= 0;
}

static void test_available_here(void)
{
	struct evspec_env fake = {.sysfs = sysfs};
	struct evspec cyc = one("cycles");
	struct {
		char small[25];
		char after[64];
	} cut;
	char buf[8192];
	size_t i;
	int n;

	n = evspec_available(NULL, buf, sizeof(buf));
	printf("#   available here: %s\n", buf);
	CHECK(n > 0);
	CHECK(listed(buf, "cpu-clock"));
	CHECK(listed(buf, "task-clock"));
	CHECK(!listed(buf, "faults")); /* aliases are not listed */
	/* Listed exactly when the kernel opens it: on a VM without a PMU, not at all. */
	CHECK(listed(buf, "cpu-cycles") == can_open(PERF_TYPE_HARDWARE, 0));
	CHECK(listed(buf, "L1-dcache-load-misses") == can_open(PERF_TYPE_HW_CACHE, 0x10000));
	CHECK(!listed(buf, "cycles"));
	if (evspec_missing_pmu(&cyc, NULL)) {
		CHECK(!listed(buf, "cpu-cycles"));
		CHECK(!listed(buf, "instructions"));
		CHECK(!listed(buf, "L1-dcache-loads"));
	}

	n = evspec_available(&fake, buf, sizeof(buf));
	CHECK(n > 2);
	CHECK(listed(buf, "cpu-clock"));
	CHECK(listed(buf, "fake/loads/"));
	CHECK(listed(buf, "fake/stores/"));
	CHECK(listed(buf, "bare//"));
	CHECK(!strstr(buf, "scale"));
	CHECK(!strstr(buf, "software"));

	/* Too small: whole names, then "...", and nothing past the buffer. */
	memset(&cut, 'Z', sizeof(cut));
	n = evspec_available(&fake, cut.small, sizeof(cut.small));
	CHECK_STR(cut.small, "cpu-clock,task-clock,...");
	CHECK_EQ_U64(n, 2);
	for (i = 0; i < sizeof(cut.after); i++)
		CHECK(cut.after[i] == 'Z');
	CHECK(evspec_available(&fake, cut.small, 4) == -EINVAL);
}

static void test_missing_pmu(void)
{
	char cpu_sys[80], arm_sys[80];
	struct evspec_env none = {.sysfs = sysfs}, cpu = {.sysfs = cpu_sys},
			  arm = {.sysfs = arm_sys};
	struct evspec_env gone = {.sysfs = nowhere};
	struct evspec *v = NULL;
	size_t n = 0;
	struct evspec cyc = one("cycles"), l1 = one("L1-dcache-loads"), raw = one("r1a8");
	struct evspec clk = one("cpu-clock"), tp = one("sched:sched_wakeup"), pmu = one("fake//");
	const char *why_not = evspec_missing_pmu(&cyc, &none);

	snprintf(cpu_sys, sizeof(cpu_sys), "%s/cpu-sys", root);
	snprintf(arm_sys, sizeof(arm_sys), "%s/arm-sys", root);
	CHECK(why_not && strstr(why_not, "no hardware PMU (a VM without PMU passthrough?)"));
	CHECK(evspec_missing_pmu(&l1, &none) != NULL);
	CHECK(evspec_missing_pmu(&raw, &none) != NULL);
	CHECK(evspec_missing_pmu(&clk, &none) == NULL);
	CHECK(evspec_missing_pmu(&tp, &none) == NULL);
	CHECK(evspec_missing_pmu(&pmu, &none) == NULL);
	CHECK(evspec_missing_pmu(&cyc, &cpu) == NULL);
	CHECK(evspec_missing_pmu(&cyc, &arm) == NULL);
	CHECK(evspec_missing_pmu(&cyc, &gone) == NULL); /* no sysfs: cannot tell */
	/* cpu/.../ where there is no core PMU says why; where there is, it is a PMU. */
	CHECK(refused("cpu/event=1/", "unknown PMU 'cpu'", "no hardware PMU", NULL));
	CHECK(evspec_parse("cpu//u", &cpu, &v, &n, why, sizeof(why)) == 0 && n == 1);
	CHECK(v && v[0].attr.type == 4 && v[0].attr.exclude_kernel);
	free(v);
	/* This machine: missing exactly when the kernel will not open cycles. */
	if (evspec_missing_pmu(&cyc, NULL))
		CHECK(!can_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES));
}

int main(void)
{
	int rc;

	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	make_trees();
	RUN(test_software_names);
	RUN(test_hardware_names);
	RUN(test_cache_names);
	RUN(test_raw_events);
	RUN(test_modifiers);
	RUN(test_pmu_terms);
	RUN(test_pmu_aliases);
	RUN(test_tracepoints);
	RUN(test_list_errors);
	RUN(test_available_here);
	RUN(test_missing_pmu);
	rc = unit_done();
	nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return rc;
}
