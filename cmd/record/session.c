// SPDX-License-Identifier: Apache-2.0
/*
 * BPF and perf event lifecycle: load the profile program, open one cpu-clock event
 * per online CPU with the program attached, attach sched_switch for off-CPU time,
 * and undo it all in teardown.
 */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "profile.skel.h"
#include "record.h"
#include "unwind.h"
#include "base/util.h"

/*
 * libbpf's print callback takes no user pointer, so what it needs lives here:
 * whether -v was given, the last warning, quoted when loading fails, and from the
 * last verifier log the program it refused and why.
 */
static int libbpf_verbose;
static char libbpf_last[256];
static char refused_prog[64];
static char refused_why[256];

/*
 * The verifier's reason in its log: the first line of the last run of lines that
 * are not instructions or states before its closing statistics ("processed N insns").
 */
static void keep_refusal(const char *log)
{
	const char *p, *nl, *why = NULL;
	bool in_text = false;

	if (sscanf(log, "prog '%63[^']'", refused_prog) != 1)
		refused_prog[0] = '\0';
	refused_why[0] = '\0';
	for (p = log; *p && strncmp(p, "processed ", 10); p = nl + 1) {
		bool stat = !strncmp(p, "verification time", 17) || !strncmp(p, "stack depth", 11);
		bool text = !stat && !(*p >= '0' && *p <= '9') && *p != ';' && *p != '\n';

		if (text && !in_text)
			why = p;
		if (!stat)
			in_text = text;
		nl = strchr(p, '\n');
		if (!nl)
			break;
	}
	if (why)
		snprintf(refused_why, sizeof(refused_why), "%.*s", (int)strcspn(why, "\n"), why);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[sizeof(libbpf_last)];
	size_t n;

	if (level == LIBBPF_WARN && strstr(fmt, "BEGIN PROG LOAD LOG")) {
		char *log;
		va_list aq;

		va_copy(aq, ap);
		if (vasprintf(&log, fmt, aq) >= 0) {
			keep_refusal(strncmp(log, "libbpf: ", 8) ? log : log + 8);
			free(log);
		}
		va_end(aq);
	}
	if (libbpf_verbose > (level == LIBBPF_DEBUG))
		return vfprintf(stderr, fmt, ap);
	if (level != LIBBPF_WARN)
		return 0;
	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n && (line[n - 1] == '\n' || line[n - 1] == ' '))
		line[--n] = '\0';
	/* The verifier log dump is noise in a one-line error; keep libbpf's summary. */
	if (n && strncmp(line, "libbpf: -- BEGIN", 16) && strncmp(line, "-- END", 6))
		memcpy(libbpf_last, line, n + 1);
	return 0;
}

static int parse_cpu_list(const char *path, int **cpus)
{
	char buf[4096], *p, *end;
	int *v = NULL, n = 0, cap = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	for (p = buf; *p && *p != '\n';) {
		long a = strtol(p, &end, 10), b = a;

		if (end == p)
			break;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (; a <= b; a++) {
			if (n == cap) {
				int *nv = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof(*v));

				if (!nv) {
					free(v);
					return -ENOMEM;
				}
				v = nv;
			}
			v[n++] = a;
		}
		p = *end == ',' ? end + 1 : end;
	}
	*cpus = v;
	return n;
}

/* The online CPUs, each of which gets a cpu-clock and a side-band event. */
int rec_cpus_init(struct rec_session *s)
{
	int i, err, *cpus = NULL;

	err = parse_cpu_list("/sys/devices/system/cpu/online", &cpus);
	if (err <= 0) {
		pa_err("cannot read /sys/devices/system/cpu/online: %s",
		       strerror(err ? -err : EINVAL));
		return err ? err : -EINVAL;
	}
	s->nr_cpus = err;
	s->nr_possible = libbpf_num_possible_cpus();
	if (s->nr_possible <= 0) {
		free(cpus);
		pa_err("cannot read the possible CPUs: %s", strerror(-s->nr_possible));
		return s->nr_possible ? s->nr_possible : -EINVAL;
	}
	s->cpus = calloc(s->nr_cpus, sizeof(*s->cpus));
	s->cpu_by_nr = calloc(s->nr_possible, sizeof(*s->cpu_by_nr));
	if (!s->cpus || !s->cpu_by_nr) {
		free(cpus);
		return -ENOMEM;
	}
	for (i = 0; i < s->nr_cpus; i++) {
		s->cpus[i].cpu = cpus[i];
		for (int k = 0; k < PROFILE_MAX_EVENTS; k++)
			s->cpus[i].ev_fd[k] = -1;
		s->cpus[i].off_fd = -1;
		s->cpus[i].gpu_fd = -1;
		s->cpus[i].gpu_time_fd = -1;
		s->cpus[i].sb.fd = -1;
		if (cpus[i] < s->nr_possible)
			s->cpu_by_nr[cpus[i]] = &s->cpus[i];
	}
	free(cpus);

	return 0;
}

static const char *const switch_names[REC_SWITCH_NR] = {
	[REC_SWITCH_TASK_WORK] = "tp_btf/sched_switch, user stacks from a task_work",
	[REC_SWITCH_RSEQ] = "tp_btf/sched_switch, rseq threads' user stacks at tp_btf/rseq_update",
	[REC_SWITCH_SYS_EXIT] = "tp_btf/sched_switch, sleeps' user stacks at tp_btf/sys_exit",
	[REC_SWITCH_SWITCH_OUT] = "tp_btf/sched_switch, user stacks at switch-out",
	[REC_SWITCH_RAW_TP] = "raw_tp/sched_switch, stacks at switch-out",
};

/* Whether a sampling event is a tracepoint (tp) or any other kind. */
static bool has_event(const struct rec_session *s, bool tp)
{
	for (int i = 0; i < s->nr_evs; i++)
		if (s->evs[i].tracepoint == tp)
			return true;
	return false;
}

/* --offcpu-min under which REC_SWITCH_SWITCH_OUT is the default. */
#define DEFER_MIN_NS 100000ULL

/*
 * Open the skeleton and set everything that must be fixed before load: off-CPU
 * time by method, with open_waits the iterator that ends the stretches still open
 * at the end.
 */
static int bpf_open(struct rec_session *s, int method, bool open_waits)
{
	bool raw_tp = method == REC_SWITCH_RAW_TP;
	const struct rec_opts *o = &s->opts;
	struct profile_bpf *skel;
	uint32_t rb_bytes = PROFILE_RINGBUF_BYTES, threads = PROFILE_OFFCPU_THREADS;
	int err;

	skel = profile_bpf__open();
	if (!skel) {
		err = -errno;
		pa_err("cannot open the BPF object: %s", strerror(-err));
		return err;
	}
	s->skel = skel;
	skel->rodata->system_wide = o->system_wide;
	skel->rodata->no_kernel = o->no_kernel;
	skel->rodata->self_tgid = getpid();
	skel->rodata->offcpu_min_ns = o->offcpu_min_ns;
	skel->rodata->offcpu_states = o->offcpu_states;
	skel->rodata->open_runnable = o->dump;
	skel->rodata->offcpu_ustack = method == REC_SWITCH_TASK_WORK  ? PROFILE_USTACK_TASK_WORK
				      : method == REC_SWITCH_RSEQ     ? PROFILE_USTACK_RSEQ
				      : method == REC_SWITCH_SYS_EXIT ? PROFILE_USTACK_SYS_EXIT
								      : PROFILE_USTACK_SWITCH_OUT;
	skel->rodata->offcpu_by_tid = raw_tp;
	skel->rodata->skip_switch_in = o->skip_switch_in;
	skel->rodata->drop_every = o->drop_every;
	skel->rodata->gpu_walk_ns = o->gpu_stacks ? 1000000000ULL / o->gpu_stacks : 0;
	skel->rodata->owner_uid = s->priv.all ? (uint32_t)-1 : s->priv.uid;

	/* ~0.4 s of full-depth samples from every CPU before anything is dropped. */
	while (rb_bytes < (1u << 28) &&
	       (uint64_t)rb_bytes < (o->no_cpu ? 0 : o->freq) * (uint64_t)s->nr_cpus * 1024)
		rb_bytes <<= 1;
	/* Stack slices (up to 32 KiB each) come in bursts while a new program's tables
	 * load, ~100 ms for the biggest: room for one of those on every CPU. */
	if (o->unwind_mode != UNWIND_MODE_FP && rb_bytes < (8u << 20))
		rb_bytes = 8u << 20;
	/* Off-CPU samples come at the targets' switch rate: leave room for bursts. */
	if (o->offcpu && rb_bytes < (16u << 20))
		rb_bytes = 16u << 20;
	bpf_map__set_max_entries(skel->maps.events, rb_bytes);
	skel->rodata->wakeup_bytes = rb_bytes / 4;
	if (o->system_wide)
		bpf_map__set_max_entries(skel->maps.targets, 1);
	else if (o->max_targets)
		bpf_map__set_max_entries(skel->maps.targets, o->max_targets);
	/* Entries are allocated per live thread (NO_PREALLOC): the cap costs nothing. */
	if (o->system_wide)
		threads *= 4;
	bpf_map__set_max_entries(skel->maps.offcpu_tids, o->offcpu && raw_tp ? threads : 1);
	bpf_map__set_max_entries(skel->maps.offcpu_works,
				 o->offcpu && method == REC_SWITCH_TASK_WORK ? threads : 1);
	bpf_map__set_max_entries(skel->maps.offcpu_stacks,
				 o->offcpu && method != REC_SWITCH_TASK_WORK ? threads : 1);
	/* -a needs no fork/exit bookkeeping. */
	bpf_program__set_autoload(skel->progs.on_fork, !o->system_wide);
	bpf_program__set_autoload(skel->progs.on_exit, !o->system_wide);
	bpf_program__set_autoload(skel->progs.on_sample, has_event(s, false));
	bpf_program__set_autoload(skel->progs.on_tp_sample, has_event(s, true));
	skel->rodata->cgroup_mode = s->cgroup_mode;
	skel->rodata->cgroup_filter = o->cgroups != NULL;
	if (o->cgroups)
		bpf_map__set_max_entries(skel->maps.cgroup_allow, rec_cgroups_allow_count(s));
	bpf_program__set_autoload(skel->progs.on_switch_btf, o->offcpu && !raw_tp);
	bpf_program__set_autoload(skel->progs.on_switch_raw, o->offcpu && raw_tp);
	bpf_program__set_autoload(skel->progs.on_rseq_update,
				  o->offcpu && method == REC_SWITCH_RSEQ);
	bpf_program__set_autoload(skel->progs.on_exit_ustack,
				  o->offcpu && method == REC_SWITCH_RSEQ);
	bpf_program__set_autoload(skel->progs.on_sys_exit,
				  o->offcpu && method == REC_SWITCH_SYS_EXIT);
	bpf_program__set_autoload(skel->progs.offcpu_open, o->offcpu && open_waits);
	/* Attached per binary that has the CUDA runtime (gpu.c). */
	bpf_program__set_autoload(skel->progs.on_gpu_launch, o->gpu);
	bpf_program__set_autoattach(skel->progs.on_gpu_launch, false);
	bpf_program__set_autoload(skel->progs.on_gpu_corr, o->gpu);
	bpf_program__set_autoattach(skel->progs.on_gpu_corr, false);
	bpf_program__set_autoload(skel->progs.on_gpu_records, o->gpu);
	bpf_program__set_autoattach(skel->progs.on_gpu_records, false);
	bpf_program__set_autoload(skel->progs.on_gpu_fn, o->gpu);
	bpf_program__set_autoattach(skel->progs.on_gpu_fn, false);
	bpf_program__set_autoload(skel->progs.on_gpu_fn_ret, o->gpu);
	bpf_program__set_autoattach(skel->progs.on_gpu_fn_ret, false);
	/* sched_switch is attached when sampling starts, with the cpu-clock events. */
	bpf_program__set_autoattach(skel->progs.on_switch_btf, false);
	bpf_program__set_autoattach(skel->progs.on_switch_raw, false);
	bpf_program__set_autoattach(skel->progs.on_rseq_update, false);
	bpf_program__set_autoattach(skel->progs.on_exit_ustack, false);
	bpf_program__set_autoattach(skel->progs.on_sys_exit, false);
	rec_unwind_configure(s);
	return 0;
}

/*
 * Load the skeleton with the first off-CPU method (from *method on) the kernel
 * accepts: a kernel without the kfunc, program type or verifier support of a
 * method refuses it, and the next way is tried.  On failure s->skel is gone.
 */
static int load_first(struct rec_session *s, int *method, bool *open_waits)
{
	int err;

	for (;;) {
		refused_prog[0] = refused_why[0] = '\0';
		err = bpf_open(s, *method, *open_waits);
		if (err)
			return err;
		err = profile_bpf__load(s->skel);
		if (!err)
			return 0;
		if (!s->opts.offcpu || (*method == REC_SWITCH_RAW_TP && !*open_waits))
			break;
		if (s->opts.verbose)
			pa_info("off-CPU: %s%s refused (%s%s%s); trying the next way",
				switch_names[*method], *open_waits ? ", iterator at the end" : "",
				refused_prog[0] ? refused_prog : strerror(-err),
				refused_why[0] ? ": " : "", refused_why);
		profile_bpf__destroy(s->skel);
		s->skel = NULL;
		/* The iterator refused (no sleepable iterators): the same method without it. */
		if (*open_waits && (!refused_prog[0] || !strcmp(refused_prog, "offcpu_open")))
			*open_waits = false;
		else if (*method < REC_SWITCH_RAW_TP)
			(*method)++;
		else
			*open_waits = false;
	}
	profile_bpf__destroy(s->skel);
	s->skel = NULL;
	return err;
}

/*
 * -v: how long loading took and how many instructions the verifier went through for
 * each program loaded, the measure of what a change to the BPF code costs at every
 * start ("BPF: loaded in 88 ms; verified: on_sample 10813 insns, ...").
 */
static void report_load(const struct bpf_object *obj, uint64_t ns)
{
	char line[1024];
	struct bpf_program *p;
	size_t n = 0;

	n += snprintf(line, sizeof(line),
		      "BPF: loaded in %llu ms; verified:", (unsigned long long)(ns / 1000000));
	bpf_object__for_each_program(p, obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(p);

		if (fd < 0 || n >= sizeof(line) || bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		n += snprintf(line + n, sizeof(line) - n, " %s %u insns,", bpf_program__name(p),
			      info.verified_insns);
	}
	if (n < sizeof(line) && line[n - 1] == ',')
		line[n - 1] = '\0';
	pa_info("%s", line);
}

int rec_bpf_open_load(struct rec_session *s)
{
	int first = s->opts.switch_method, method, err;
	uint64_t t0 = pa_now_ns();
	bool open_waits = true;

	libbpf_verbose = s->opts.verbose;
	libbpf_set_print(libbpf_print);

	/*
	 * A task_work costs more per emitted stretch than a walk at switch-out
	 * (bench/offcpu: 2.7x against 1.9x the workload alone when every stretch
	 * of a ping-pong is emitted), and saves the walk on every stretch that is
	 * not: below DEFER_MIN_NS nearly all are emitted.
	 */
	if (first < 0)
		first = s->opts.offcpu_min_ns < DEFER_MIN_NS ? REC_SWITCH_SWITCH_OUT
							     : REC_SWITCH_TASK_WORK;
	method = first;
	err = load_first(s, &method, &open_waits);
	/* A kernel that refuses the CFI walker (bpf_loop, its maps) still samples. */
	if (err && err != -ENOMEM && s->opts.unwind_mode == UNWIND_MODE_AUTO) {
		pa_warn("the CFI stack walker did not load (%s%s%s); unwinding by frame "
			"pointers only",
			refused_prog[0] ? refused_prog : strerror(-err), refused_why[0] ? ": " : "",
			refused_why);
		s->opts.unwind_mode = UNWIND_MODE_FP;
		s->opts.slice_always = 0;
		method = first;
		open_waits = true;
		err = load_first(s, &method, &open_waits);
	}
	if (err) {
		pa_err("cannot load the BPF program: %s (%s); run with -v for the verifier log",
		       strerror(-err),
		       refused_why[0]	? refused_why
		       : libbpf_last[0] ? libbpf_last
					: "no libbpf message");
		return err;
	}
	s->open_waits = open_waits;
	s->switch_method = method;
	s->switch_prog = method == REC_SWITCH_RAW_TP ? s->skel->progs.on_switch_raw
						     : s->skel->progs.on_switch_btf;
	if (s->opts.verbose)
		report_load(s->skel->obj, pa_now_ns() - t0);
	if (s->opts.offcpu && s->opts.verbose)
		pa_info("off-CPU time from %s", switch_names[method]);
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.events), rec_handle_sample, s, NULL);
	if (!s->rb) {
		err = -errno;
		pa_err("cannot set up the BPF ring buffer: %s", strerror(-err));
		return err;
	}
	err = rec_unwind_init(s);
	if (!err)
		err = rec_synth_init(s);
	if (!err)
		err = rec_gpu_init(s);
	if (!err && s->uw && !s->opts.no_python)
		err = rec_python_init(s);
	if (err)
		return err;
	if (!s->opts.system_wide) {
		err = profile_bpf__attach(s->skel);
		if (err) {
			pa_err("cannot attach the fork/exit tracepoints: %s (%s)", strerror(-err),
			       libbpf_last[0] ? libbpf_last : "no libbpf message");
			return err;
		}
	}
	return 0;
}

static int perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	int fd = syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* One line naming the event, why it failed and what to do. */
void rec_event_open_error(const char *ev, int cpu, int err)
{
	switch (-err) {
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		pa_err("cannot open %s event on CPU %d: %s; this kernel lacks software perf events "
		       "(needs CONFIG_PERF_EVENTS)",
		       ev, cpu, strerror(-err));
		break;
	case EACCES:
	case EPERM:
		pa_err("cannot open %s event on CPU %d: %s; run as root, grant CAP_PERFMON, or "
		       "lower "
		       "kernel.perf_event_paranoid (sysctl kernel.perf_event_paranoid=-1)",
		       ev, cpu, strerror(-err));
		break;
	case EMFILE:
		pa_err("cannot open %s event on CPU %d: %s; raise the open file limit (ulimit -n)",
		       ev, cpu, strerror(-err));
		break;
	default:
		pa_err("cannot open %s event on CPU %d: %s", ev, cpu, strerror(-err));
	}
}

/*
 * A bpf-output event that never fires, opened only so that the samples of our own
 * events (offcpu-time, gpu-launch) of a CPU carry an id the kernel will not reuse.
 */
static int open_id_event(int cpu, int *fdp, uint64_t *id)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_BPF_OUTPUT,
		.sample_period = 1,
		.sample_type = PERF_SAMPLE_RAW,
		.disabled = 1,
	};
	int fd, err;

	fd = perf_event_open(&attr, -1, cpu);
	if (fd < 0) {
		rec_event_open_error("bpf-output", cpu, fd);
		return fd;
	}
	*fdp = fd;
	if (ioctl(fd, PERF_EVENT_IOC_ID, id)) {
		err = -errno;
		pa_err("cannot read the id of the bpf-output event: %s", strerror(-err));
		return err;
	}
	return 0;
}

int rec_events_open(struct rec_session *s)
{
	int i, err;

	for (i = 0; i < s->nr_cpus; i++) {
		struct rec_cpu *c = &s->cpus[i];

		/* Side-band first: mappings made while we attach must not slip through. */
		err = rec_sideband_open(s, c);
		if (err)
			return err;
		if (s->opts.gpu) {
			err = open_id_event(c->cpu, &c->gpu_fd, &c->gpu_id);
			if (!err)
				err = open_id_event(c->cpu, &c->gpu_time_fd, &c->gpu_time_id);
			if (err)
				return err;
			c->id = c->gpu_id;
		}
		if (s->opts.offcpu) {
			err = open_id_event(c->cpu, &c->off_fd, &c->off_id);
			if (err)
				return err;
			c->id = c->off_id;
		}
		err = rec_events_open_cpu(s, c);
		if (err)
			return err;
	}
	for (i = 0; i < s->nr_cpus && s->nr_evs && s->cpus[i].ev_fd[0] < 0; i++)
		;
	if (i == s->nr_cpus) {
		pa_err("-C %s names no online CPU; see /sys/devices/system/cpu/online",
		       s->opts.cpu_list);
		return -EINVAL;
	}
	/* -C: CPUs that sample nothing name the first attr in their side-band too. */
	for (i = 0; i < s->nr_cpus && !s->cpus[i].id; i++)
		;
	for (int k = 0; i < s->nr_cpus && k < s->nr_cpus; k++)
		if (!s->cpus[k].id)
			s->cpus[k].id = s->cpus[i].id;
	return 0;
}

/* Start sampling on every CPU (events are opened disabled so all start together). */
int rec_events_enable(struct rec_session *s)
{
	int err;

	err = rec_events_start(s, true);
	if (err)
		return err;
	/* The recording's start, for its length and for off-CPU waits already open. */
	s->start_ns = pa_now_ns();
	if (s->opts.offcpu) {
		s->skel->bss->offcpu_start_ns = s->start_ns;
		/* Before sched_switch: every stack it leaves pending has its return seen. */
		if (s->switch_method == REC_SWITCH_RSEQ ||
		    s->switch_method == REC_SWITCH_SYS_EXIT) {
			bool rseq = s->switch_method == REC_SWITCH_RSEQ;

			s->return_link = bpf_program__attach(rseq ? s->skel->progs.on_rseq_update
								  : s->skel->progs.on_sys_exit);
			if (!s->return_link) {
				err = -errno;
				pa_err("cannot attach to the %s tracepoint: %s (%s)",
				       rseq ? "rseq_update" : "sys_exit", strerror(-err),
				       libbpf_last[0] ? libbpf_last : "no libbpf message");
				return err;
			}
			s->exit_link =
				rseq ? bpf_program__attach(s->skel->progs.on_exit_ustack) : NULL;
			if (rseq && !s->exit_link) {
				err = -errno;
				pa_err("cannot attach to the sched_process_exit tracepoint: %s "
				       "(%s)",
				       strerror(-err),
				       libbpf_last[0] ? libbpf_last : "no libbpf message");
				return err;
			}
		}
		s->switch_link = bpf_program__attach(s->switch_prog);
		if (!s->switch_link) {
			err = -errno;
			pa_err("cannot attach to the sched_switch tracepoint: %s (%s)",
			       strerror(-err), libbpf_last[0] ? libbpf_last : "no libbpf message");
			return err;
		}
	}
	return 0;
}

/* Stop producing samples, so the drain that follows sees everything. */
void rec_events_disable(struct rec_session *s)
{
	int i;

	rec_events_start(s, false);
	for (i = 0; i < s->nr_cpus; i++) {
		if (s->cpus[i].sb.fd >= 0)
			ioctl(s->cpus[i].sb.fd, PERF_EVENT_IOC_DISABLE, 0);
	}
	/* Threads still off the CPU now: rec_offcpu_open_waits. */
	bpf_link__destroy(s->switch_link);
	s->switch_link = NULL;
}

int rec_target_add(struct rec_session *s, pid_t pid)
{
	uint32_t key = pid;
	uint8_t v = PROFILE_TARGET_ROOT;
	int err;

	if (bpf_map__update_elem(s->skel->maps.targets, &key, sizeof(key), &v, sizeof(v),
				 BPF_ANY)) {
		err = -errno;
		pa_err("cannot add PID %d to the BPF target map: %s", pid, strerror(-err));
		return err;
	}
	err = pidset_add(&s->targets, pid);
	if (!err && pid != s->child)
		err = rec_unwind_add_pid(s, pid);
	return err;
}

/* BPF counter slot (PROFILE_LOST_*), cumulative, one per possible CPU (vals[nr_possible]). */
int rec_read_bpf_lost(struct rec_session *s, uint32_t slot, uint64_t *vals)
{
	if (bpf_map__lookup_elem(s->skel->maps.lost, &slot, sizeof(slot), vals,
				 s->nr_possible * sizeof(*vals), 0))
		return -errno;
	return 0;
}

void rec_session_teardown(struct rec_session *s)
{
	int i;

	for (i = 0; s->cpus && i < s->nr_cpus; i++) {
		rec_events_close(&s->cpus[i]);
		if (s->cpus[i].off_fd >= 0)
			close(s->cpus[i].off_fd);
		if (s->cpus[i].gpu_fd >= 0)
			close(s->cpus[i].gpu_fd);
		if (s->cpus[i].gpu_time_fd >= 0)
			close(s->cpus[i].gpu_time_fd);
		rec_sideband_close(&s->cpus[i]);
	}
	free(s->cpus);
	free(s->cpu_by_nr);
	s->cpus = NULL;
	s->cpu_by_nr = NULL;
	bpf_link__destroy(s->switch_link);
	s->switch_link = NULL;
	bpf_link__destroy(s->return_link);
	s->return_link = NULL;
	bpf_link__destroy(s->exit_link);
	s->exit_link = NULL;
	ring_buffer__free(s->rb);
	s->rb = NULL;
	rec_unwind_free(s);
	rec_gpu_free(s);
	rec_python_free(s);
	rec_synth_free(s);
	profile_bpf__destroy(s->skel);
	s->skel = NULL;
	pidset_free(&s->targets);
	rec_files_free(&s->files);
	rec_sideband_batch_free(&s->sb_batch);
	rec_offcpu_free(s);
	rec_events_free(s);
	rec_cgroups_free(s);
}
