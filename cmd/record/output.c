// SPDX-License-Identifier: Apache-2.0
/*
 * The perf.data stream pa-record writes: the writer opened, the events declared (the
 * cpu-clock and offcpu-time attrs, host features), the sample_id trailer of our
 * records and the round markers.  What goes into it: synth.c (state before
 * sampling), sideband.c (the kernel's records), samples.c, lost.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "profile/offcpu.h"
#include "perfdata/pd_write.h"
#include "record.h"
#include "base/util.h"

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

/* Our own events' ids; the sampling events' are IDS_EVENT + their index. */
enum ids { IDS_OFFCPU, IDS_GPU, IDS_GPU_TIME, IDS_EVENT };

/* Declare one event whose samples carry the per-CPU ids of which. */
static int add_attr(struct rec_session *s, const struct perf_event_attr *a, const char *name,
		    int which)
{
	uint64_t *ids = calloc(s->nr_cpus, sizeof(*ids));
	int i, n = 0, err;

	if (!ids)
		return -ENOMEM;
	for (i = 0; i < s->nr_cpus; i++) {
		const struct rec_cpu *c = &s->cpus[i];

		if (which >= IDS_EVENT && c->ev_fd[which - IDS_EVENT] < 0)
			continue; /* -C: not sampled here */
		ids[n++] = which == IDS_OFFCPU	   ? c->off_id
			   : which == IDS_GPU	   ? c->gpu_id
			   : which == IDS_GPU_TIME ? c->gpu_time_id
						   : c->ev_id[which - IDS_EVENT];
	}
	err = pd_writer_add_attr(s->w, a, name, ids, n);
	free(ids);
	if (err < 0)
		pa_err("cannot write the perf.data header: %s", strerror(-err));
	return err;
}

/*
 * The attrs perf.data declares: each sampling event as `perf record -e EVENT -g`
 * writes it (cpu-clock by default), and offcpu-time as `perf record --off-cpu` does (a bpf-output software event,
 * period = ns off the CPU), plus RAW for the thread state.  The side-band flags
 * (mmap, comm, task) go on the first one, as perf puts them on its tracking event.
 */
int rec_output_attr(struct rec_session *s)
{
	/* The side-band flags: on the first attr only. */
	struct perf_event_attr base = {
		.size = sizeof(base),
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			       PERF_SAMPLE_CALLCHAIN | (s->cgroup_mode ? PERF_SAMPLE_CGROUP : 0),
		.sample_id_all = 1,
		.exclude_kernel = s->opts.no_kernel,
		.disabled = 1,
		.inherit = !s->opts.system_wide,
		.mmap = 1,
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		.cgroup = s->cgroup_mode != 0,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
	};
	struct perf_event_attr off = {0};
	int i, err;

	for (i = 0; i < s->nr_evs; i++) {
		const struct perf_event_attr *e = &s->evs[i].spec.attr;
		struct perf_event_attr a = base;

		a.type = e->type;
		a.config = e->config;
		a.config1 = e->config1;
		a.config2 = e->config2;
		a.freq = e->freq;
		a.sample_period = e->sample_period; /* or sample_freq: one union */
		a.exclude_user = e->exclude_user;
		a.exclude_kernel = e->exclude_kernel;
		a.exclude_hv = e->exclude_hv;
		a.precise_ip = e->precise_ip;
		/*
		 * perf reads a tracepoint attr only with the tracepoint's format data
		 * (HEADER_TRACING_DATA), for fields our samples do not carry: declared as
		 * what its samples are, BPF output under the tracepoint's name.
		 */
		if (s->evs[i].tracepoint) {
			a.type = PERF_TYPE_SOFTWARE;
			a.config = PERF_COUNT_SW_BPF_OUTPUT;
		}
		err = add_attr(s, &a, s->evs[i].spec.name, IDS_EVENT + i);
		if (err < 0)
			return err;
		s->evs[i].evidx = err;
		base.mmap = base.mmap2 = base.comm = base.comm_exec = base.task = base.cgroup = 0;
	}
	off = base;
	off.type = PERF_TYPE_SOFTWARE;
	if (s->opts.offcpu) {
		off.config = PERF_COUNT_SW_BPF_OUTPUT;
		off.freq = 0;
		off.sample_period = 1;
		off.sample_type |= PERF_SAMPLE_RAW;
		err = add_attr(s, &off, OFFCPU_EVENT, IDS_OFFCPU);
		if (err < 0)
			return err;
		s->off_evidx = err;
		off.mmap = off.mmap2 = off.comm = off.comm_exec = off.task = off.cgroup = 0;
	}
	if (s->opts.gpu) {
		/* One sample per kernel launch, under the stack that launched it. */
		struct perf_event_attr gpu = off;

		gpu.config = PERF_COUNT_SW_BPF_OUTPUT;
		gpu.freq = 0;
		gpu.sample_period = 1;
		gpu.sample_type &= ~(uint64_t)PERF_SAMPLE_RAW;
		err = add_attr(s, &gpu, GPU_LAUNCH_EVENT, IDS_GPU);
		if (err < 0)
			return err;
		s->gpu_evidx = err;
		gpu.mmap = gpu.mmap2 = gpu.comm = gpu.comm_exec = gpu.task = gpu.cgroup = 0;
		/* One sample per kernel, copy or set the CUDA adapter timed: period = ns on
		 * the GPU, under the stack of its launch; RAW: the rest of its record. */
		gpu.sample_type |= PERF_SAMPLE_RAW;
		err = add_attr(s, &gpu, GPU_TIME_EVENT, IDS_GPU_TIME);
		if (err < 0)
			return err;
		s->gpu_time_evidx = err;
	}
	pd_writer_set_host_features(s->w);
	pd_writer_set_cmdline(s->w, s->opts.argc, s->opts.argv);
	return 0;
}

int rec_emit_round(struct rec_session *s)
{
	if (!s->records_in_round)
		return 0;
	s->records_in_round = 0;
	return pd_write_finished_round(s->w);
}
