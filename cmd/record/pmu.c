// SPDX-License-Identifier: Apache-2.0
/*
 * pa-record --pmu: count instead of sample.  pmu.bpf.c keeps, per process (and
 * per thread with --per-pid), on-CPU time, voluntary and involuntary switches,
 * histograms of run-queue latency and of on-CPU slices, and the hardware counters'
 * changes over each slice where the CPU has them; this file opens the counters,
 * loads and attaches the programs, waits, and prints the table or one JSON document.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pmu.skel.h"
#include "pmu.h"
#include "record.h"
#include "base/hash.h"
#include "base/procfs.h"
#include "base/util.h"

/* One counter: the hardware event, or with PA_PMU_STANDIN a software one. */
struct pmu_counter {
	const char *name;  /* as in the output: "cycles" */
	const char *event; /* what was opened */
	bool standin;
	bool available; /* open on every CPU */
	char reason[160];
	int *fds; /* [nr_cpus] */
};

/* A row of the output: a process (key.tid 0) or one of its threads. */
struct pmu_row {
	struct pmu_key key;
	struct pmu_stats st;
};

struct pmu_run {
	struct rec_session *s;
	struct pmu_bpf *skel;
	const char *method; /* "tp_btf" or "raw_tp" */
	struct pmu_counter ctr[PMU_NR_COUNTERS];
	uint64_t start_ns, end_ns;
	struct pmu_row *procs, *threads;
	size_t nprocs, nthreads;
};

static const struct {
	const char *name, *json;
	uint64_t config;	 /* PERF_TYPE_HARDWARE */
	const char *standin;	 /* PA_PMU_STANDIN: the software event in its place */
	uint64_t standin_config; /* PERF_TYPE_SOFTWARE */
} pmu_events[PMU_NR_COUNTERS] = {
	[PMU_CYCLES] = {"cycles", "cycles", PERF_COUNT_HW_CPU_CYCLES, "cpu-clock",
			PERF_COUNT_SW_CPU_CLOCK},
	[PMU_INSTRUCTIONS] = {"instructions", "instructions", PERF_COUNT_HW_INSTRUCTIONS,
			      "cpu-clock", PERF_COUNT_SW_CPU_CLOCK},
	[PMU_CACHE_MISSES] = {"cache-misses", "cache_misses", PERF_COUNT_HW_CACHE_MISSES,
			      "page-faults", PERF_COUNT_SW_PAGE_FAULTS},
};

/*
 * libbpf's print callback takes no user pointer: -v, and why the last load failed:
 * the verifier's last line before its statistics, else libbpf's first warning.
 */
static int pmu_libbpf_verbose;
static char pmu_libbpf_last[256];

static int pmu_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *msg = NULL, *end, *line;
	va_list aq;
	size_t n;

	va_copy(aq, ap);
	if (level == LIBBPF_WARN && vasprintf(&msg, fmt, aq) >= 0) {
		end = strstr(msg, "BEGIN PROG LOAD LOG") ? strstr(msg, "\nprocessed ") : NULL;
		if (end) {
			*end = '\0';
			line = strrchr(msg, '\n');
			snprintf(pmu_libbpf_last, sizeof(pmu_libbpf_last), "%.*s",
				 (int)sizeof(pmu_libbpf_last) - 1, line ? line + 1 : msg);
		} else if (!pmu_libbpf_last[0]) {
			n = strlen(msg);
			while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
				msg[--n] = '\0';
			snprintf(pmu_libbpf_last, sizeof(pmu_libbpf_last), "%.*s",
				 (int)sizeof(pmu_libbpf_last) - 1, msg);
		}
		free(msg);
	}
	va_end(aq);
	if (pmu_libbpf_verbose > (level == LIBBPF_DEBUG))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

static int pmu_event_open(uint32_t type, uint64_t config, int cpu)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = type,
		.config = config,
		.disabled = 1,
		.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING,
	};
	int fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static void counter_close(struct pmu_counter *c, int nr_cpus)
{
	int i;

	for (i = 0; c->fds && i < nr_cpus; i++)
		if (c->fds[i] >= 0)
			close(c->fds[i]);
	free(c->fds);
	c->fds = NULL;
}

static bool no_pmu_errno(int err)
{
	return err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV;
}

/*
 * Counter k on every online CPU, or not at all, with the reason.  A machine without
 * a PMU (most VMs) refuses every hardware event alike: after cycles, the others
 * are not tried and carry its reason.
 */
static int counter_open(struct pmu_run *r, int k, bool standin, const char *no_pmu)
{
	struct rec_session *s = r->s;
	struct pmu_counter *c = &r->ctr[k];
	int i, fd;

	c->name = pmu_events[k].name;
	c->standin = standin;
	c->event = standin ? pmu_events[k].standin : pmu_events[k].name;
	if (no_pmu) {
		snprintf(c->reason, sizeof(c->reason), "%s", no_pmu);
		return 0;
	}
	c->fds = malloc(s->nr_cpus * sizeof(*c->fds));
	if (!c->fds)
		return -ENOMEM;
	for (i = 0; i < s->nr_cpus; i++)
		c->fds[i] = -1;
	for (i = 0; i < s->nr_cpus; i++) {
		fd = standin ? pmu_event_open(PERF_TYPE_SOFTWARE, pmu_events[k].standin_config,
					      s->cpus[i].cpu)
			     : pmu_event_open(PERF_TYPE_HARDWARE, pmu_events[k].config,
					      s->cpus[i].cpu);
		if (fd >= 0) {
			c->fds[i] = fd;
			continue;
		}
		if (fd == -EMFILE) {
			pa_err("cannot open the %s counter on CPU %d: %s; raise the open file "
			       "limit (ulimit -n)",
			       c->event, s->cpus[i].cpu, strerror(EMFILE));
			return fd;
		}
		if (!standin && no_pmu_errno(fd))
			snprintf(c->reason, sizeof(c->reason), "no hardware PMU: %s: %s", c->name,
				 strerror(-fd));
		else if (fd == -EACCES || fd == -EPERM)
			snprintf(c->reason, sizeof(c->reason),
				 "%s: %s (grant CAP_PERFMON or lower kernel.perf_event_paranoid)",
				 c->event, strerror(-fd));
		else
			snprintf(c->reason, sizeof(c->reason), "%s on CPU %d: %s", c->event,
				 s->cpus[i].cpu, strerror(-fd));
		counter_close(c, s->nr_cpus);
		return !standin && no_pmu_errno(fd) ? 1 : 0;
	}
	c->available = true;
	return 0;
}

static int counters_open(struct pmu_run *r)
{
	const char *env = getenv("PA_PMU_STANDIN");
	bool standin = env && *env && strcmp(env, "0");
	const char *no_pmu = NULL;
	int k, err;

	for (k = 0; k < PMU_NR_COUNTERS; k++) {
		err = counter_open(r, k, standin, no_pmu);
		if (err < 0)
			return err;
		if (err > 0)
			no_pmu = r->ctr[k].reason;
	}
	return 0;
}

/*
 * Open the skeleton with the tp_btf programs (btf) or their raw_tp twins, set what
 * must be fixed before load, and load.  On failure the skeleton is gone.
 */
static int bpf_load(struct pmu_run *r, bool btf)
{
	const struct rec_opts *o = &r->s->opts;
	struct pmu_bpf *skel;
	uint32_t mask = 0;
	int k, err;

	skel = pmu_bpf__open();
	if (!skel) {
		err = -errno;
		pa_err("cannot open the BPF object: %s", strerror(-err));
		return err;
	}
	skel->rodata->system_wide = o->system_wide;
	skel->rodata->self_tgid = getpid();
	skel->rodata->per_thread = o->per_pid;
	for (k = 0; k < PMU_NR_COUNTERS; k++)
		if (r->ctr[k].available)
			mask |= 1u << k;
	skel->rodata->counters_mask = mask;
	bpf_map__set_max_entries(skel->maps.cycles_events, r->s->nr_possible);
	bpf_map__set_max_entries(skel->maps.instructions_events, r->s->nr_possible);
	bpf_map__set_max_entries(skel->maps.cache_misses_events, r->s->nr_possible);
	if (o->system_wide)
		bpf_map__set_max_entries(skel->maps.targets, 1);
	/* Threads too, and -a sees every process of the machine. */
	if (o->per_pid || o->system_wide)
		bpf_map__set_max_entries(skel->maps.stats, 4 * PMU_MAX_KEYS);

	bpf_program__set_autoload(skel->progs.on_switch_btf, btf);
	bpf_program__set_autoload(skel->progs.on_wakeup_btf, btf);
	bpf_program__set_autoload(skel->progs.on_wakeup_new_btf, btf);
	bpf_program__set_autoload(skel->progs.on_fork_btf, btf);
	bpf_program__set_autoload(skel->progs.on_switch_raw, !btf);
	bpf_program__set_autoload(skel->progs.on_wakeup_raw, !btf);
	bpf_program__set_autoload(skel->progs.on_wakeup_new_raw, !btf);
	bpf_program__set_autoload(skel->progs.on_fork_raw, !btf);
	/* Tests: the verifier refuses the tp_btf programs, as some kernels do. */
	skel->rodata->test_refuse_btf = btf && getenv("PA_PMU_TEST_NO_BTF");
	pmu_libbpf_last[0] = '\0';
	err = pmu_bpf__load(skel);
	if (err) {
		pmu_bpf__destroy(skel);
		return err;
	}
	r->skel = skel;
	r->method = btf ? "tp_btf" : "raw_tp";
	return 0;
}

/* tp_btf, or where the kernel refuses to load it, raw_tp (PA_RECORD_SWITCH=raw-tp: raw_tp). */
static int bpf_setup(struct pmu_run *r)
{
	struct rec_session *s = r->s;
	bool btf = s->opts.switch_method != REC_SWITCH_RAW_TP;
	uint32_t key;
	int err, k, i;

	pmu_libbpf_verbose = s->opts.verbose;
	libbpf_set_print(pmu_libbpf_print);
	err = bpf_load(r, btf);
	if (err && btf) {
		if (s->opts.verbose)
			pa_info("pmu: the tp_btf programs did not load (%s); trying raw_tp",
				pmu_libbpf_last[0] ? pmu_libbpf_last : strerror(-err));
		err = bpf_load(r, false);
	}
	if (err) {
		pa_err("cannot load the BPF programs of --pmu: %s (%s); run with -v for the "
		       "verifier log",
		       strerror(-err), pmu_libbpf_last[0] ? pmu_libbpf_last : "no libbpf message");
		return err;
	}
	if (s->opts.verbose)
		pa_info("pmu: sched_wakeup, sched_wakeup_new and sched_switch from %s", r->method);
	for (k = 0; k < PMU_NR_COUNTERS; k++) {
		struct bpf_map *map = k == PMU_CYCLES	      ? r->skel->maps.cycles_events
				      : k == PMU_INSTRUCTIONS ? r->skel->maps.instructions_events
							      : r->skel->maps.cache_misses_events;

		for (i = 0; r->ctr[k].available && i < s->nr_cpus; i++) {
			key = s->cpus[i].cpu;
			if (bpf_map__update_elem(map, &key, sizeof(key), &r->ctr[k].fds[i],
						 sizeof(int), BPF_ANY)) {
				err = -errno;
				pa_err("cannot put the %s counter of CPU %u in its BPF map: %s",
				       r->ctr[k].event, key, strerror(-err));
				return err;
			}
		}
	}
	return 0;
}

/*
 * The entry of (tgid, tid) made now, so that the switch that first needs it does
 * not have to: the BPF allocator has one spare per CPU between two switches.
 * -E2BIG once the map is full.
 */
static int entry_make(struct pmu_run *r, pid_t tgid, pid_t tid)
{
	struct pmu_key key = {.tgid = tgid, .tid = tid};
	struct pmu_stats st;

	memset(&st, 0, sizeof(st));
	if (proc_read_comm(tgid, tid ? tid : tgid, st.comm, sizeof(st.comm)))
		return 0; /* gone already */
	if (bpf_map__update_elem(r->skel->maps.stats, &key, sizeof(key), &st, sizeof(st),
				 BPF_NOEXIST) &&
	    errno != EEXIST)
		return -errno;
	return 0;
}

/* tgid's entry, and with --per-pid those of its threads, bounded by the map's room. */
static int entries_make(struct pmu_run *r, pid_t tgid)
{
	pid_t *tids = NULL;
	int i, n, err;

	err = entry_make(r, tgid, 0);
	if (err || !r->s->opts.per_pid)
		return err;
	n = proc_list_tids(tgid, &tids);
	for (i = 0; !err && i < n; i++)
		err = entry_make(r, tgid, tids[i]);
	free(tids);
	return err;
}

static int target_add(struct pmu_run *r, pid_t pid)
{
	pid_t ppid, tgid;
	uint32_t key;
	uint8_t one = 1;
	int err;

	/* A thread id given to -p stands for its process. */
	if (!proc_read_ppid_tgid(pid, &ppid, &tgid) && tgid > 0)
		pid = tgid;
	key = pid;

	if (bpf_map__update_elem(r->skel->maps.targets, &key, sizeof(key), &one, sizeof(one),
				 BPF_ANY)) {
		err = -errno;
		pa_err("cannot add PID %d to the BPF target map: %s", pid, strerror(-err));
		return err;
	}
	return entries_make(r, pid) == -ENOMEM ? -ENOMEM : 0;
}

/* -a: entries for what runs now, leaving half of the map for what starts later. */
static void system_entries_make(struct pmu_run *r)
{
	size_t room = bpf_map__max_entries(r->skel->maps.stats) / 2, made = 0;
	pid_t *pids = NULL, self = getpid();
	int i, n;

	n = proc_list_pids(&pids);
	for (i = 0; i < n && made < room; i++)
		if (pids[i] != self && !entries_make(r, pids[i]))
			made += 1 + r->s->opts.per_pid;
	free(pids);
}

/* Counters from 0 now, the programs attached, then CMD released. */
static int start(struct pmu_run *r)
{
	struct rec_session *s = r->s;
	int err, k, i;

	for (k = 0; k < PMU_NR_COUNTERS; k++)
		for (i = 0; r->ctr[k].available && i < s->nr_cpus; i++)
			if (ioctl(r->ctr[k].fds[i], PERF_EVENT_IOC_ENABLE, 0)) {
				err = -errno;
				pa_err("cannot enable the %s counter on CPU %d: %s",
				       r->ctr[k].event, s->cpus[i].cpu, strerror(-err));
				return err;
			}
	r->start_ns = pa_now_ns();
	r->skel->bss->start_ns = r->start_ns;
	err = pmu_bpf__attach(r->skel);
	if (err) {
		pa_err("cannot attach to the scheduler tracepoints: %s (%s)", strerror(-err),
		       pmu_libbpf_last[0] ? pmu_libbpf_last : "no libbpf message");
		return err;
	}
	if (s->child)
		return rec_cmd_release(s);
	return 0;
}

static void wait_end(struct pmu_run *r)
{
	struct rec_session *s = r->s;
	struct timespec ts = {0, 100 * 1000 * 1000};
	uint64_t now;

	while (!*s->stop) {
		/* A signal cuts the sleep short: SIGCHLD when CMD ends, SIGINT. */
		nanosleep(&ts, NULL);
		now = pa_now_ns();
		if (s->opts.duration_ns && now - r->start_ns >= s->opts.duration_ns)
			break;
		if (rec_targets_done(s))
			break;
	}
	r->end_ns = pa_now_ns();
	pmu_bpf__detach(r->skel);
}

static int cmp_key(const void *a, const void *b)
{
	const struct pmu_key *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Most on-CPU time first, then by pid. */
static int cmp_oncpu(const void *a, const void *b)
{
	const struct pmu_row *x = a, *y = b;

	if (x->st.oncpu_ns != y->st.oncpu_ns)
		return x->st.oncpu_ns > y->st.oncpu_ns ? -1 : 1;
	return cmp_key(&x->key, &y->key);
}

/* Threads grouped by process, each group by on-CPU time. */
static int cmp_thread(const void *a, const void *b)
{
	const struct pmu_row *x = a, *y = b;

	if (x->key.tgid != y->key.tgid)
		return x->key.tgid < y->key.tgid ? -1 : 1;
	return cmp_oncpu(a, b);
}

static int rows_add(struct pmu_row **v, size_t *n, size_t *cap, const struct pmu_row *row)
{
	if (pa_grow((void **)v, cap, *n + 1, sizeof(**v)))
		return -ENOMEM;
	(*v)[(*n)++] = *row;
	return 0;
}

static struct pmu_row *row_find(struct pmu_row *v, size_t n, const struct pmu_key *key)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].key.tgid == key->tgid && v[i].key.tid == key->tid)
			return &v[i];
	return NULL;
}

static bool followed(struct pmu_run *r, uint32_t tgid)
{
	uint8_t v;

	if (!tgid)
		return false;
	if (r->s->opts.system_wide)
		return tgid != (uint32_t)getpid();
	return !bpf_map__lookup_elem(r->skel->maps.targets, &tgid, sizeof(tgid), &v, sizeof(v), 0);
}

/* Every entry of `stats`, split into processes and threads. */
static int collect(struct pmu_run *r)
{
	struct bpf_map *map = r->skel->maps.stats;
	size_t capp = 0, capt = 0, guard = bpf_map__max_entries(map) + 1;
	struct pmu_key key, next, *prev = NULL;
	struct pmu_row row;
	int err = 0;

	/* Nothing writes the map any more: the walk ends within max_entries steps. */
	while (guard-- && !bpf_map__get_next_key(map, prev, &next, sizeof(next))) {
		key = next;
		prev = &key;
		if (bpf_map__lookup_elem(map, &key, sizeof(key), &row.st, sizeof(row.st), 0))
			continue;
		row.key = key;
		/* -a made an entry for every process at the start: those that ran. */
		if (r->s->opts.system_wide && !row.st.oncpu_ns && !row.st.voluntary &&
		    !row.st.involuntary && !row.st.runq.count)
			continue;
		err = key.tid ? rows_add(&r->threads, &r->nthreads, &capt, &row)
			      : rows_add(&r->procs, &r->nprocs, &capp, &row);
		if (err)
			return err;
	}
	return 0;
}

static void read_comm(pid_t pid, char *comm, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "r");
	if (!f || !fgets(comm, len, f))
		snprintf(comm, len, "?");
	else
		comm[strcspn(comm, "\n")] = '\0';
	if (f)
		fclose(f);
}

/* key's row, made (named from /proc) if it never left a CPU. */
static struct pmu_row *row_get(struct pmu_run *r, const struct pmu_key *key)
{
	struct pmu_row **v = key->tid ? &r->threads : &r->procs, row = {.key = *key};
	size_t *n = key->tid ? &r->nthreads : &r->nprocs, cap = *n;
	struct pmu_row *found = row_find(*v, *n, key);

	if (found)
		return found;
	read_comm(key->tid ? key->tid : key->tgid, row.st.comm, sizeof(row.st.comm));
	return rows_add(v, n, &cap, &row) ? NULL : &(*v)[*n - 1];
}

/*
 * The slices still open at the end: each CPU's last switch-in until the end, and
 * the counters' change since, read from their fds.  A CPU that never switched has
 * nobody known on it.
 */
static int add_open_slices(struct pmu_run *r)
{
	struct rec_session *s = r->s;
	struct pmu_cpu *pc;
	uint32_t zero = 0;
	int i, k, err = 0;

	pc = calloc(s->nr_possible, sizeof(*pc));
	if (!pc)
		return -ENOMEM;
	if (bpf_map__lookup_elem(r->skel->maps.cpus, &zero, sizeof(zero), pc,
				 s->nr_possible * sizeof(*pc), 0)) {
		free(pc);
		return 0;
	}
	for (i = 0; i < s->nr_cpus; i++) {
		const struct pmu_cpu *c = &pc[s->cpus[i].cpu];
		struct pmu_key keys[2] = {{c->tgid, 0}, {c->tgid, c->tid}};
		uint64_t delta[PMU_NR_COUNTERS] = {};
		int j;

		if (!c->since_ns || c->since_ns >= r->end_ns || !followed(r, c->tgid))
			continue;
		for (k = 0; k < PMU_NR_COUNTERS; k++) {
			uint64_t v[3];

			if (!r->ctr[k].available ||
			    read(r->ctr[k].fds[i], v, sizeof(v)) != sizeof(v) || v[0] < c->last[k])
				continue;
			delta[k] = v[0] - c->last[k];
			if (v[2] > c->running[k] && v[2] - c->running[k] < v[1] - c->enabled[k])
				delta[k] = (double)delta[k] * (v[1] - c->enabled[k]) /
					   (v[2] - c->running[k]);
		}
		for (j = 0; j < (s->opts.per_pid ? 2 : 1); j++) {
			struct pmu_row *row = row_get(r, &keys[j]);

			if (!row) {
				err = -ENOMEM;
				break;
			}
			row->st.oncpu_ns += r->end_ns - c->since_ns;
			for (k = 0; k < PMU_NR_COUNTERS; k++)
				row->st.counters[k] += delta[k];
		}
	}
	free(pc);
	return err;
}

/* Slot i holds values up to this one (the last slot: anything longer). */
static uint64_t slot_high(uint32_t i)
{
	uint32_t g = i / PMU_SUBS, sub = i % PMU_SUBS;

	if (i < PMU_SUBS)
		return i;
	if (i == PMU_HIST_SLOTS - 1)
		return UINT64_MAX;
	return ((uint64_t)(PMU_SUBS + sub + 1) << (g - 1)) - 1;
}

/* The q-quantile (0 < q <= 1): the top of the slot that reaches it, at most the max. */
static uint64_t hist_pct(const struct pmu_hist *h, double q)
{
	uint64_t total = 0, want, seen = 0, hi;
	uint32_t i;

	for (i = 0; i < PMU_HIST_SLOTS; i++)
		total += h->slots[i];
	if (!total)
		return 0;
	want = (uint64_t)(q * total);
	if (want < q * total)
		want++;
	if (!want)
		want = 1;
	for (i = 0; i < PMU_HIST_SLOTS; i++) {
		seen += h->slots[i];
		if (seen >= want)
			break;
	}
	hi = slot_high(i < PMU_HIST_SLOTS ? i : PMU_HIST_SLOTS - 1);
	return hi < h->max ? hi : h->max;
}

static void hist_merge(struct pmu_hist *to, const struct pmu_hist *h)
{
	uint32_t i;

	to->count += h->count;
	to->sum += h->sum;
	if (h->max > to->max)
		to->max = h->max;
	for (i = 0; i < PMU_HIST_SLOTS; i++)
		to->slots[i] += h->slots[i];
}

static void stats_merge(struct pmu_stats *to, const struct pmu_stats *st)
{
	int k;

	to->oncpu_ns += st->oncpu_ns;
	to->voluntary += st->voluntary;
	to->involuntary += st->involuntary;
	for (k = 0; k < PMU_NR_COUNTERS; k++)
		to->counters[k] += st->counters[k];
	hist_merge(&to->runq, &st->runq);
	hist_merge(&to->slice, &st->slice);
}

/* "850ns", "12.3us", "3.10ms", "1.25s" */
static const char *fmt_ns(char *buf, size_t len, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, len, "%lluns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1fus", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.2fms", ns / 1e6);
	else
		snprintf(buf, len, "%.2fs", ns / 1e9);
	return buf;
}

static bool have(const struct pmu_run *r, int k)
{
	return r->ctr[k].available;
}

static void text_hist(FILE *f, const struct pmu_hist *h)
{
	static const double qs[] = {0.5, 0.99, 0.999};
	char b[32];
	size_t i;

	for (i = 0; i < 3; i++)
		fprintf(f, " %8s", h->count ? fmt_ns(b, sizeof(b), hist_pct(h, qs[i])) : "-");
	fprintf(f, " %8s", h->count ? fmt_ns(b, sizeof(b), h->max) : "-");
}

static void text_row(FILE *f, const struct pmu_run *r, const char *id, const char *comm,
		     const struct pmu_stats *st)
{
	const __u64 *c = st->counters;

	fprintf(f, "%9s %-16.16s %11.1f %7llu %7llu", id, comm, st->oncpu_ns / 1e6,
		(unsigned long long)st->voluntary, (unsigned long long)st->involuntary);
	text_hist(f, &st->runq);
	text_hist(f, &st->slice);
	if (have(r, PMU_CYCLES) && have(r, PMU_INSTRUCTIONS) && c[PMU_CYCLES])
		fprintf(f, " %6.2f", (double)c[PMU_INSTRUCTIONS] / c[PMU_CYCLES]);
	else
		fprintf(f, " %6s", "n/a");
	if (have(r, PMU_CACHE_MISSES) && have(r, PMU_INSTRUCTIONS) && c[PMU_INSTRUCTIONS])
		fprintf(f, " %8.2f", c[PMU_CACHE_MISSES] * 1000.0 / c[PMU_INSTRUCTIONS]);
	else
		fprintf(f, " %8s", "n/a");
	fputc('\n', f);
}

/* The threads of process tgid: threads[*first .. *first + returned). */
static size_t threads_of(const struct pmu_run *r, uint32_t tgid, size_t *first)
{
	size_t lo = 0, hi = r->nthreads, n = 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->threads[mid].key.tgid < tgid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*first = lo;
	while (lo + n < r->nthreads && r->threads[lo + n].key.tgid == tgid)
		n++;
	return n;
}

static void print_text(FILE *f, const struct pmu_run *r, const struct pmu_stats *total)
{
	char id[24];
	size_t i, j, first, n;
	int k;

	fprintf(f, "%-27s %11s %15s %35s %35s\n", "", "", "switches", "run-queue latency",
		"on-CPU slice");
	fprintf(f, "%9s %-16s %11s %7s %7s %8s %8s %8s %8s %8s %8s %8s %8s %6s %8s\n",
		r->s->opts.per_pid ? "PID/TID" : "PID", "COMM", "on-CPU ms", "vol", "invol", "p50",
		"p99", "p99.9", "max", "p50", "p99", "p99.9", "max", "IPC", "miss/ki");
	for (i = 0; i < r->nprocs; i++) {
		snprintf(id, sizeof(id), "%u", r->procs[i].key.tgid);
		text_row(f, r, id, r->procs[i].st.comm, &r->procs[i].st);
		n = r->s->opts.per_pid ? threads_of(r, r->procs[i].key.tgid, &first) : 0;
		for (j = 0; j < n; j++) {
			const struct pmu_row *t = &r->threads[first + j];
			char comm[sizeof(t->st.comm) + 2];

			snprintf(id, sizeof(id), "%u", t->key.tid);
			snprintf(comm, sizeof(comm), "  %.*s", (int)sizeof(t->st.comm), t->st.comm);
			text_row(f, r, id, comm, &t->st);
		}
	}
	snprintf(id, sizeof(id), "%zu process%s", r->nprocs, r->nprocs == 1 ? "" : "es");
	text_row(f, r, "total", id, total);
	fprintf(f, "counted %.2f s", (r->end_ns - r->start_ns) / 1e9);
	if (r->ctr[PMU_CYCLES].standin)
		fprintf(f, "; counters are stand-ins (PA_PMU_STANDIN): cycles = cpu-clock, "
			   "instructions = cpu-clock, cache-misses = page-faults");
	fputc('\n', f);
	/* Each reason once: without a PMU all three share cycles'. */
	for (k = 0; k < PMU_NR_COUNTERS; k++) {
		int j2;

		if (have(r, k))
			continue;
		for (j2 = 0; j2 < k && (have(r, j2) || strcmp(r->ctr[j2].reason, r->ctr[k].reason));
		     j2++)
			;
		if (j2 == k)
			fprintf(f, "IPC and cache misses n/a: %s\n", r->ctr[k].reason);
	}
}

/* comm as a JSON string: quotes, backslashes and controls escaped, invalid UTF-8 as U+FFFD. */
static void json_str(FILE *f, const char *str, size_t max)
{
	const unsigned char *p = (const unsigned char *)str, *end = p + strnlen(str, max);

	fputc('"', f);
	while (p < end) {
		size_t len = *p < 0x80		   ? 1
			     : (*p & 0xe0) == 0xc0 ? 2
			     : (*p & 0xf0) == 0xe0 ? 3
			     : (*p & 0xf8) == 0xf0 ? 4
						   : 0;
		size_t i;

		if (*p == '"' || *p == '\\') {
			fprintf(f, "\\%c", *p++);
			continue;
		}
		if (*p < 0x20 || *p == 0x7f) {
			fprintf(f, "\\u%04x", *p++);
			continue;
		}
		for (i = 1; len && i < len; i++)
			if (p + i >= end || (p[i] & 0xc0) != 0x80)
				len = 0;
		if (!len || (len == 2 && *p < 0xc2)) {
			fputs("\\ufffd", f);
			p++;
			continue;
		}
		fwrite(p, 1, len, f);
		p += len;
	}
	fputc('"', f);
}

static void json_hist(FILE *f, const char *name, const struct pmu_hist *h)
{
	fprintf(f, "\"%s\":{\"count\":%llu,\"p50\":%llu,\"p99\":%llu,\"p999\":%llu,\"max\":%llu}",
		name, (unsigned long long)h->count, (unsigned long long)hist_pct(h, 0.5),
		(unsigned long long)hist_pct(h, 0.99), (unsigned long long)hist_pct(h, 0.999),
		(unsigned long long)h->max);
}

static void json_stats(FILE *f, const struct pmu_run *r, const struct pmu_stats *st)
{
	const __u64 *c = st->counters;
	int k;

	fprintf(f, "\"oncpu_ns\":%llu,\"switches\":{\"voluntary\":%llu,\"involuntary\":%llu},",
		(unsigned long long)st->oncpu_ns, (unsigned long long)st->voluntary,
		(unsigned long long)st->involuntary);
	json_hist(f, "runq_latency_ns", &st->runq);
	fputc(',', f);
	json_hist(f, "slice_ns", &st->slice);
	for (k = 0; k < PMU_NR_COUNTERS; k++)
		if (have(r, k))
			fprintf(f, ",\"%s\":%llu", pmu_events[k].json, (unsigned long long)c[k]);
		else
			fprintf(f, ",\"%s\":null", pmu_events[k].json);
	if (have(r, PMU_CYCLES) && have(r, PMU_INSTRUCTIONS) && c[PMU_CYCLES])
		fprintf(f, ",\"ipc\":%.4f", (double)c[PMU_INSTRUCTIONS] / c[PMU_CYCLES]);
	else
		fputs(",\"ipc\":null", f);
	if (have(r, PMU_CACHE_MISSES) && have(r, PMU_INSTRUCTIONS) && c[PMU_INSTRUCTIONS])
		fprintf(f, ",\"cache_misses_per_kinstr\":%.4f",
			c[PMU_CACHE_MISSES] * 1000.0 / c[PMU_INSTRUCTIONS]);
	else
		fputs(",\"cache_misses_per_kinstr\":null", f);
}

static void print_json(FILE *f, const struct pmu_run *r, const struct pmu_stats *total)
{
	size_t i, j, first, n;
	int k;

	fprintf(f, "{\"duration_ns\":%llu,\"method\":\"%s\",\"counters\":{",
		(unsigned long long)(r->end_ns - r->start_ns), r->method);
	for (k = 0; k < PMU_NR_COUNTERS; k++) {
		const struct pmu_counter *c = &r->ctr[k];

		fprintf(f, "%s\"%s\":{\"available\":%s", k ? "," : "", pmu_events[k].json,
			c->available ? "true" : "false");
		if (c->available)
			fprintf(f, ",\"event\":\"%s\",\"standin\":%s", c->event,
				c->standin ? "true" : "false");
		else {
			fputs(",\"reason\":", f);
			json_str(f, c->reason, sizeof(c->reason));
		}
		fputc('}', f);
	}
	fputs("},\"processes\":[", f);
	for (i = 0; i < r->nprocs; i++) {
		fprintf(f, "%s\n{\"pid\":%u,\"comm\":", i ? "," : "", r->procs[i].key.tgid);
		json_str(f, r->procs[i].st.comm, sizeof(r->procs[i].st.comm));
		fputc(',', f);
		json_stats(f, r, &r->procs[i].st);
		if (r->s->opts.per_pid) {
			n = threads_of(r, r->procs[i].key.tgid, &first);
			fputs(",\"threads\":[", f);
			for (j = 0; j < n; j++) {
				const struct pmu_row *t = &r->threads[first + j];

				fprintf(f, "%s{\"tid\":%u,\"comm\":", j ? "," : "", t->key.tid);
				json_str(f, t->st.comm, sizeof(t->st.comm));
				fputc(',', f);
				json_stats(f, r, &t->st);
				fputc('}', f);
			}
			fputc(']', f);
		}
		fputc('}', f);
	}
	fputs("],\n\"total\":{", f);
	fprintf(f, "\"processes\":%zu,", r->nprocs);
	json_stats(f, r, total);
	fputs("}}\n", f);
}

static int report(struct pmu_run *r)
{
	struct pmu_stats *total;
	size_t i;

	if (r->nprocs)
		qsort(r->procs, r->nprocs, sizeof(*r->procs), cmp_oncpu);
	if (r->nthreads)
		qsort(r->threads, r->nthreads, sizeof(*r->threads), cmp_thread);
	total = calloc(1, sizeof(*total));
	if (!total)
		return -ENOMEM;
	for (i = 0; i < r->nprocs; i++)
		stats_merge(total, &r->procs[i].st);
	if (r->s->opts.json)
		print_json(stdout, r, total);
	else
		print_text(stdout, r, total);
	free(total);
	if (r->skel->bss->stats_full)
		pa_warn("%llu switches of processes or threads beyond the first %u were not "
			"counted",
			(unsigned long long)r->skel->bss->stats_full,
			bpf_map__max_entries(r->skel->maps.stats));
	if (r->skel->bss->stats_nomem && r->s->opts.verbose)
		pa_info("pmu: %llu switches not counted: the BPF allocator had no room for a "
			"new entry at the time",
			(unsigned long long)r->skel->bss->stats_nomem);
	if (r->skel->bss->targets_full)
		pa_warn("%llu forked processes were not followed (more than %u); count them "
			"with -a",
			(unsigned long long)r->skel->bss->targets_full, PMU_MAX_TARGETS);
	if (fflush(stdout)) {
		pa_err("cannot write the counts: %s", strerror(errno));
		return -EIO;
	}
	return 0;
}

/* Options that only mean something to a recording. */
static int check_opts(const struct rec_opts *o)
{
	const char *bad = o->offcpu						     ? "--offcpu"
			  : o->gpu						     ? "--gpu"
			  : o->dump						     ? "--dump"
			  : o->events						     ? "-e"
			  : o->count						     ? "-c"
			  : o->cpu_list						     ? "-C"
			  : o->cgroups						     ? "-G"
			  : strcmp(o->output, "perf.data") && strcmp(o->output, "-") ? "-o"
										     : NULL;

	if (!o->pmu) {
		pa_err("%s needs --pmu; add --pmu to count instead of recording",
		       o->per_pid ? "--per-pid" : "--json");
		return -EINVAL;
	}
	if (bad) {
		pa_err("--pmu counts and writes no perf.data; drop %s", bad);
		return -EINVAL;
	}
	return 0;
}

int rec_pmu_main(struct rec_session *s)
{
	struct pmu_run r = {.s = s};
	struct rec_opts quiet_check;
	size_t i;
	int err, k;

	err = check_opts(&s->opts);
	if (err)
		return err;
	/* Kernel symbols and build-ids are not read here: no warnings about those. */
	quiet_check = s->opts;
	quiet_check.no_kernel = true;
	quiet_check.system_wide = false;
	quiet_check.nr_pids = 0;
	err = rec_check_privileges(&quiet_check);
	if (!err)
		err = rec_targets_check(&s->opts);
	if (!err)
		err = rec_cpus_init(s);
	if (!err)
		err = counters_open(&r);
	if (!err)
		err = bpf_setup(&r);
	for (i = 0; !err && !s->opts.system_wide && i < s->opts.nr_pids; i++)
		err = target_add(&r, s->opts.pids[i]);
	if (!err && s->opts.system_wide)
		system_entries_make(&r);
	if (!err && s->opts.cmd_argv) {
		/* CMD's output stays on stdout: ours is printed after it ends. */
		s->opts.pipe = false;
		err = rec_cmd_fork(s);
		if (!err && !s->opts.system_wide)
			err = target_add(&r, s->child);
	}
	if (!err)
		err = start(&r);
	if (!err) {
		wait_end(&r);
		rec_cmd_finish(s);
		err = collect(&r);
		if (!err)
			err = add_open_slices(&r);
		if (!err)
			err = report(&r);
		if (!err && s->child_done && WIFEXITED(s->child_status) &&
		    WEXITSTATUS(s->child_status))
			pa_info("note: '%s' exited with status %d", s->opts.cmd_argv[0],
				WEXITSTATUS(s->child_status));
	}
	rec_cmd_finish(s);
	pmu_bpf__destroy(r.skel);
	for (k = 0; k < PMU_NR_COUNTERS; k++)
		counter_close(&r.ctr[k], s->nr_cpus);
	free(r.procs);
	free(r.threads);
	rec_session_teardown(s);
	return err;
}
