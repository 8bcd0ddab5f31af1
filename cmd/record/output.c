// SPDX-License-Identifier: Apache-2.0
/*
 * What goes into perf.data: the cpu-clock and offcpu-time attrs, the state
 * synthesized from /proc before sampling (COMM, MMAP2 with build-ids, the kernel
 * map), samples from the BPF ring buffer, LOST records and round markers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "buildid.h"
#include "offcpu.h"
#include "pd_write.h"
#include "procfs.h"
#include "record.h"
#include "util.h"

void rec_sid(const struct rec_session *s, struct pd_sample_id *sid, uint32_t pid, uint32_t tid,
	     uint64_t time, int cpu)
{
	const struct rec_cpu *c = NULL;

	if (cpu >= 0 && cpu < s->nr_possible)
		c = s->cpu_by_nr[cpu];
	if (!c)
		c = &s->cpus[0];
	sid->pid = pid;
	sid->tid = tid;
	sid->time = time;
	sid->id = c->id;
	sid->cpu = cpu >= 0 ? (uint32_t)cpu : 0;
}

int rec_output_open(struct rec_session *s)
{
	struct pd_writer_opts wo = {
		.path = s->opts.pipe ? "-" : s->opts.output,
		.pipe = s->opts.pipe,
		.keep_old = true,
		.compress_level = s->opts.compress_level,
	};

	s->w = pd_writer_open(&wo);
	if (!s->w) {
		int err = -errno;

		pa_err("cannot create %s: %s", s->opts.pipe ? "standard output" : s->opts.output,
		       strerror(-err));
		return err;
	}
	return 0;
}

/* Declare one event whose samples carry the per-CPU ids picked by idsel. */
static int add_attr(struct rec_session *s, const struct perf_event_attr *a, const char *name,
		    bool offcpu)
{
	uint64_t *ids = calloc(s->nr_cpus, sizeof(*ids));
	int i, err;

	if (!ids)
		return -ENOMEM;
	for (i = 0; i < s->nr_cpus; i++)
		ids[i] = offcpu ? s->cpus[i].off_id : s->cpus[i].clock_id;
	err = pd_writer_add_attr(s->w, a, name, ids, s->nr_cpus);
	free(ids);
	if (err < 0)
		pa_err("cannot write the perf.data header: %s", strerror(-err));
	return err;
}

/*
 * The attrs perf.data declares: cpu-clock as `perf record -e cpu-clock -g` writes
 * it, and offcpu-time as `perf record --off-cpu` does (a bpf-output software event,
 * period = ns off the CPU), plus RAW for the thread state.  The side-band flags
 * (mmap, comm, task) go on the first one, as perf puts them on its tracking event.
 */
int rec_output_attr(struct rec_session *s)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = s->opts.freq,
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			       PERF_SAMPLE_CALLCHAIN,
		.sample_id_all = 1,
		.exclude_kernel = s->opts.no_kernel,
		.disabled = 1,
		.inherit = !s->opts.system_wide,
		.mmap = 1,
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
	};
	struct perf_event_attr off = a;
	int err;

	if (!s->opts.no_cpu) {
		err = add_attr(s, &a, "cpu-clock", false);
		if (err < 0)
			return err;
		s->evidx = err;
		s->attr = a;
		off.mmap = off.mmap2 = off.comm = off.comm_exec = off.task = 0;
	}
	if (s->opts.offcpu) {
		off.config = PERF_COUNT_SW_BPF_OUTPUT;
		off.freq = 0;
		off.sample_period = 1;
		off.sample_type |= PERF_SAMPLE_RAW;
		err = add_attr(s, &off, OFFCPU_EVENT, true);
		if (err < 0)
			return err;
		s->off_evidx = err;
		if (s->opts.no_cpu)
			s->attr = off;
	}
	pd_writer_set_host_features(s->w);
	pd_writer_set_cmdline(s->w, s->opts.argc, s->opts.argv);
	return 0;
}

/* Build-ids by device and inode: every process maps libc, read it once. */
int rec_mmap2_build_id(struct rec_session *s, pid_t pid, uint64_t start, uint64_t end,
		       const char *path, uint32_t maj, uint32_t min, uint64_t ino, uint8_t *bid)
{
	struct rec_bid_cache *c = &s->bids;
	uint64_t dev = makedev(maj, min);
	char p[4200];
	size_t i;
	int n;

	for (i = 0; i < c->n; i++)
		if (c->v[i].dev == dev && c->v[i].ino == ino && ino) {
			memcpy(bid, c->v[i].bid, BID_MAX);
			return c->v[i].size;
		}
	/* map_files reaches the mapped file even when it was deleted or lives in
	 * another mount namespace; root/PATH is the fallback without CAP_SYS_ADMIN. */
	snprintf(p, sizeof(p), "/proc/%d/map_files/%llx-%llx", pid, (unsigned long long)start,
		 (unsigned long long)end);
	n = bid_read_path(p, bid);
	if (n < 0) {
		snprintf(p, sizeof(p), "/proc/%d/root%s", pid, path);
		n = bid_read_path(p, bid);
	}
	if (n < 0)
		n = bid_read_path(path, bid);
	if (!ino)
		return n;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		struct rec_bid_entry *v = realloc(c->v, cap * sizeof(*v));

		if (!v)
			return n;
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n].dev = dev;
	c->v[c->n].ino = ino;
	c->v[c->n].size = n;
	memcpy(c->v[c->n].bid, bid, BID_MAX);
	c->n++;
	return n;
}

void rec_bid_cache_free(struct rec_bid_cache *c)
{
	free(c->v);
	memset(c, 0, sizeof(*c));
}

/* COMM for every thread, MMAP2 for every executable mapping of one process. */
int rec_synthesize_pid(struct rec_session *s, pid_t pid)
{
	struct pd_sample_id sid;
	struct proc_map *maps = NULL;
	pid_t *tids = NULL;
	char comm[64];
	uint8_t bid[BID_MAX];
	int i, n, nb, err = 0;

	n = proc_list_tids(pid, &tids);
	if (n < 0)
		return 0; /* gone already: nothing to say about it */
	for (i = 0; i < n && !err; i++) {
		if (proc_read_comm(pid, tids[i], comm, sizeof(comm)))
			continue;
		rec_sid(s, &sid, pid, tids[i], 0, -1);
		err = pd_write_comm(s->w, pid, tids[i], comm, false, &sid);
	}
	free(tids);
	if (err)
		return err;

	n = proc_read_maps(pid, true, &maps);
	if (n < 0)
		return 0;
	rec_sid(s, &sid, pid, pid, 0, -1);
	for (i = 0; i < n && !err; i++) {
		struct proc_map *m = &maps[i];

		nb = 0;
		if (m->path[0] == '/')
			nb = rec_mmap2_build_id(s, pid, m->start, m->end, m->path, m->maj, m->min,
						m->ino, bid);
		err = pd_write_mmap2(s->w, PERF_RECORD_MISC_USER, pid, pid, m->start,
				     m->end - m->start, m->pgoff, m->prot, m->flags,
				     nb > 0 ? bid : NULL, nb > 0 ? nb : 0, m->path, &sid);
		if (!err && nb > 0)
			err = pd_writer_add_build_id(s->w, PERF_RECORD_MISC_USER, -1, bid, nb,
						     m->path);
	}
	proc_maps_free(maps, n);
	return err;
}

/* The address of _text, where perf anchors the kernel map (0 when hidden). */
static uint64_t kernel_text_addr(void)
{
	char line[512], name[256], type;
	unsigned long long addr, found = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (!strcmp(name, "_text")) {
			found = addr;
			break;
		}
		if (!strcmp(name, "_stext") && !found)
			found = addr;
	}
	fclose(f);
	return found;
}

/*
 * PERF_RECORD_MMAP of "[kernel.kallsyms]_text" with pid -1, laid out by hand as
 * perf synthesizes it; the trailer follows our attr's sample_id_all layout
 * (TID, TIME, CPU, IDENTIFIER).
 */
static int synthesize_kernel(struct rec_session *s)
{
	static const char name[] = "[kernel.kallsyms]_text";
	struct {
		struct perf_event_header header;
		uint32_t pid, tid;
		uint64_t start, len, pgoff;
		char filename[PERF_ALIGN(sizeof(name), 8)];
		uint32_t sid_pid, sid_tid;
		uint64_t sid_time;
		uint32_t sid_cpu, sid_res;
		uint64_t sid_id;
	} rec = {};
	uint8_t bid[BID_MAX];
	uint64_t text = kernel_text_addr();
	int n, err;

	if (s->opts.no_kernel)
		return 0;
	if (!text) {
		pa_warn("no kernel addresses in /proc/kallsyms (kernel.kptr_restrict?); kernel "
			"frames will stay unnamed");
		return 0;
	}
	rec.header.type = PERF_RECORD_MMAP;
	rec.header.misc = PERF_RECORD_MISC_KERNEL;
	rec.header.size = sizeof(rec);
	rec.pid = (uint32_t)-1;
	rec.start = text;
	rec.len = ~0ULL - text;
	rec.pgoff = text;
	memcpy(rec.filename, name, sizeof(name));
	rec.sid_id = s->cpus[0].id; /* the first attr's */
	err = pd_write_raw(s->w, &rec);
	if (err)
		return err;
	n = bid_read_kernel(bid);
	if (n > 0)
		err = pd_writer_add_build_id(s->w, PERF_RECORD_MISC_KERNEL, -1, bid, n,
					     "[kernel.kallsyms]");
	return err;
}

int rec_synthesize(struct rec_session *s)
{
	pid_t *pids = NULL;
	size_t i;
	int n, err;

	err = synthesize_kernel(s);
	if (err)
		goto out;
	if (s->opts.system_wide) {
		n = proc_list_pids(&pids);
		if (n < 0) {
			err = n;
			goto out;
		}
		for (i = 0; i < (size_t)n && !err; i++)
			if (pids[i] != s->self)
				err = rec_synthesize_pid(s, pids[i]);
		free(pids);
	} else {
		for (i = 0; i < s->targets.cap && !err; i++)
			if (s->targets.slots[i])
				err = rec_synthesize_pid(s, s->targets.slots[i]);
	}
out:
	if (err)
		pa_err("cannot write the initial process state: %s", strerror(-err));
	return err;
}

/*
 * Off-CPU kernel stacks start where the thread waits (do_nanosleep, futex_do_wait,
 * pipe_read...), as the kernel prints a blocked task's stack: taken at switch-in
 * (bpf_get_task_stack) they already do, as the kernel leaves out .sched.text there;
 * taken at switch-out from inside the BPF program (raw_tp) they start with the
 * tracepoint machinery and schedule/__schedule, which are cut here.  Returns how
 * many leading kernel frames to drop.
 */
static uint64_t trim_sched(const struct rec_session *s, const __u64 *ips, uint64_t nk)
{
	uint64_t i, j;

	if (!s->sched_lo)
		return 0;
	for (i = 0; i < nk && i < 16; i++)
		if (ips[i] >= s->sched_lo && ips[i] < s->sched_hi)
			break;
	if (i == nk || i == 16)
		return 0;
	for (j = i; j < nk && ips[j] >= s->sched_lo && ips[j] < s->sched_hi; j++)
		;
	return j < nk ? j : 0;
}

static uint64_t sample_id(const struct rec_session *s, uint32_t cpu, bool offcpu)
{
	const struct rec_cpu *c = cpu < (uint32_t)s->nr_possible && s->cpu_by_nr[cpu]
					  ? s->cpu_by_nr[cpu]
					  : &s->cpus[0];

	return offcpu ? c->off_id : c->clock_id;
}

/*
 * One profile_sample as one PERF_RECORD_SAMPLE, its user stack from uips[0..nu)
 * when uips is set (a deferred off-CPU user stack), else from ps itself.
 */
int rec_write_sample(struct rec_session *s, const struct profile_sample *ps, size_t size,
		     const __u64 *uips, uint64_t nu)
{
	struct pd_sample smp = {};
	struct offcpu_raw raw = {.magic = OFFCPU_RAW_MAGIC, .version = 1};
	uint64_t *cc = s->callchain, nk, room, skip = 0;
	const __u64 *kips;
	bool offcpu;
	int n = 0, evidx, err;

	offcpu = ps->kind == PROFILE_KIND_OFFCPU;
	evidx = offcpu ? s->off_evidx : s->evidx;
	if (evidx < 0)
		return 0;
	room = (size - PROFILE_SAMPLE_HDR_SIZE) / sizeof(uint64_t);
	nk = ps->nr_kernel < room ? ps->nr_kernel : room;
	if (!uips) {
		uips = ps->ips + nk;
		nu = ps->nr_user < room - nk ? ps->nr_user : room - nk;
	}
	if (nu > PROFILE_MAX_FRAMES)
		nu = PROFILE_MAX_FRAMES;
	if (offcpu)
		skip = trim_sched(s, ps->ips, nk);
	kips = ps->ips + skip;
	if (nk > skip) {
		cc[n++] = PERF_CONTEXT_KERNEL;
		memcpy(cc + n, kips, (nk - skip) * sizeof(*cc));
		n += nk - skip;
	}
	if (nu) {
		cc[n++] = PERF_CONTEXT_USER;
		memcpy(cc + n, uips, nu * sizeof(*cc));
		n += nu;
	}
	smp.ip = nk > skip ? kips[0] : nu ? uips[0] : 0;
	smp.misc = nk > skip ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER;
	smp.pid = ps->pid;
	smp.tid = ps->tid;
	smp.time = ps->time;
	smp.cpu = ps->cpu;
	smp.period = ps->period;
	smp.nr_ips = n;
	smp.ips = cc;
	smp.id = sample_id(s, ps->cpu, offcpu);
	if (offcpu) {
		raw.state = ps->state;
		smp.raw = &raw;
		smp.raw_size = sizeof(raw);
	}
	err = pd_write_sample(s->w, evidx, &smp);
	if (err) {
		s->write_err = err;
		return err; /* stops ring_buffer__poll */
	}
	if (offcpu) {
		s->off_samples++;
		s->off_ns += ps->period;
	} else {
		s->samples++;
	}
	s->kstack_err += !!(ps->flags & PROFILE_F_KSTACK_ERR);
	s->ustack_err += !!(ps->flags & PROFILE_F_USTACK_ERR);
	s->records_in_round++;
	return 0;
}

/* ring_buffer callback: a sample, or the user stack some off-CPU samples wait for. */
int rec_handle_sample(void *ctx, void *data, size_t size)
{
	struct rec_session *s = ctx;
	const struct profile_sample *ps = data;

	if (size < PROFILE_SAMPLE_HDR_SIZE)
		return 0;
	if (ps->kind == PROFILE_KIND_USTACK)
		return rec_offcpu_ustack(s, ps, size);
	if (ps->kind == PROFILE_KIND_OFFCPU && (ps->flags & PROFILE_F_USTACK_LATER))
		return rec_offcpu_hold(s, ps, size);
	return rec_write_sample(s, ps, size, NULL, 0);
}

/* The growth of BPF counter slot since the last call, summed over CPUs, per CPU in d. */
static int counter_delta(struct rec_session *s, uint32_t slot, uint64_t *d)
{
	uint64_t vals[s->nr_possible];
	int i;

	if (rec_read_bpf_lost(s, slot, vals))
		return -1;
	for (i = 0; i < s->nr_cpus; i++) {
		struct rec_cpu *c = &s->cpus[i];
		uint64_t v = vals[c->cpu];

		d[i] = v > c->lost_seen[slot] ? v - c->lost_seen[slot] : 0;
		c->lost_seen[slot] = v;
	}
	return 0;
}

/* Add the growth of BPF counter slot since the last call, over all CPUs, to *total. */
static void counter_add(struct rec_session *s, uint32_t slot, uint64_t *total)
{
	uint64_t d[s->nr_cpus];
	int i;

	if (counter_delta(s, slot, d))
		return;
	for (i = 0; i < s->nr_cpus; i++)
		*total += d[i];
}

/* What BPF dropped since the last round, as PERF_RECORD_LOST_SAMPLES per CPU and event. */
int rec_emit_bpf_lost(struct rec_session *s)
{
	static const uint32_t slots[] = {PROFILE_LOST_CPU, PROFILE_LOST_OFFCPU, PROFILE_LOST_STASH,
					 PROFILE_LOST_OFFCPU_MAP};
	uint64_t d[s->nr_cpus];
	struct pd_sample_id sid;
	size_t k;
	int i, err;

	for (k = 0; k < sizeof(slots) / sizeof(slots[0]); k++) {
		bool offcpu = slots[k] != PROFILE_LOST_CPU;

		if ((offcpu && !s->opts.offcpu) || (!offcpu && s->opts.no_cpu))
			continue;
		if (counter_delta(s, slots[k], d))
			return 0;
		for (i = 0; i < s->nr_cpus; i++) {
			struct rec_cpu *c = &s->cpus[i];

			if (!d[i])
				continue;
			rec_sid(s, &sid, 0, 0, pa_now_ns(), c->cpu);
			sid.id = offcpu ? c->off_id : c->clock_id;
			err = pd_write_lost_samples(s->w, d[i], &sid);
			if (err)
				return err;
			if (!offcpu)
				s->lost += d[i];
			else if (slots[k] != PROFILE_LOST_OFFCPU_MAP)
				s->off_lost += d[i];
			else
				s->off_untracked += d[i];
			s->records_in_round++;
		}
	}
	counter_add(s, PROFILE_LOST_TARGETS, &s->targets_lost);
	counter_add(s, PROFILE_KSTACK_CUT, &s->kstack_cut);
	counter_add(s, PROFILE_USTACK_FP_CUT, &s->ustack_cut);
	if (s->opts.offcpu) {
		counter_add(s, PROFILE_SHORT_OFFCPU, &s->off_short);
		counter_add(s, PROFILE_SHORT_OFFCPU_NS, &s->off_short_ns);
		counter_add(s, PROFILE_LOST_USTACK, &s->off_no_ustack);
		counter_add(s, PROFILE_UNTRACED_IN, &s->off_untraced_in);
	}
	return 0;
}

/*
 * .sched.text, the scheduler's own functions: cut from off-CPU kernel stacks taken
 * at switch-out (raw_tp).  Stacks taken at switch-in leave them out already.
 */
int rec_sched_range(struct rec_session *s)
{
	char line[512], name[256], type;
	unsigned long long addr, lo = 0, hi = 0;
	FILE *f;

	if (!s->opts.offcpu || s->opts.no_kernel || s->switch_method != REC_SWITCH_RAW_TP)
		return 0;
	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return 0;
	while ((!lo || !hi) && fgets(line, sizeof(line), f)) {
		/* ~200k lines: parse only the two that can match. */
		if (!strstr(line, " __sched_text_") ||
		    sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (!strcmp(name, "__sched_text_start"))
			lo = addr;
		else if (!strcmp(name, "__sched_text_end"))
			hi = addr;
	}
	fclose(f);
	if (lo && hi > lo) {
		s->sched_lo = lo;
		s->sched_hi = hi;
	}
	return 0;
}

int rec_emit_round(struct rec_session *s)
{
	if (!s->records_in_round)
		return 0;
	s->records_in_round = 0;
	return pd_write_finished_round(s->w);
}
