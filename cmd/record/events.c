// SPDX-License-Identifier: Apache-2.0
/*
 * The sampling events: -e EVENT[,EVENT] as perf names them (cpu-clock by default),
 * -F or -c, -C.  Each is opened on every CPU it samples with the BPF program
 * attached, its index among them the attach cookie (profile_sample.state), and is
 * its own attr in perf.data.  A tracepoint runs on_tp_sample, the rest on_sample.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "profile.skel.h"
#include "record.h"
#include "base/util.h"

/* The CPUs of a list like "0-3,8" into set (a bit per CPU below REC_MAX_CPUS). */
static int parse_cpus(const char *arg, uint64_t *set, size_t words)
{
	const char *p = arg;
	char *end;

	memset(set, 0, words * sizeof(*set));
	while (*p) {
		long a = strtol(p, &end, 10), b = a;

		if (end == p || a < 0)
			return -EINVAL;
		if (*end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
			if (end == p || b < a)
				return -EINVAL;
		}
		if ((unsigned long)b >= words * 64)
			return -ERANGE;
		for (; a <= b; a++)
			set[a / 64] |= 1ULL << (a % 64);
		if (*end == ',')
			end++;
		else if (*end)
			return -EINVAL;
		p = end;
	}
	return 0;
}

int rec_events_parse(struct rec_session *s)
{
	const struct rec_opts *o = &s->opts;
	struct evspec_env env = {0};
	struct evspec *v = NULL;
	char why[256];
	size_t n = 0, i;
	int err;

	if (o->no_cpu)
		return 0;
	err = evspec_parse(o->events ? o->events : "cpu-clock", &env, &v, &n, why, sizeof(why));
	if (err) {
		pa_err("%s", why);
		return err;
	}
	if (n > PROFILE_MAX_EVENTS) {
		pa_err("%zu events given; at most %d can be sampled at once", n,
		       PROFILE_MAX_EVENTS);
		free(v);
		return -E2BIG;
	}
	s->evs = calloc(n, sizeof(*s->evs));
	if (!s->evs) {
		free(v);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		struct rec_event *e = &s->evs[i];
		struct perf_event_attr *a = &e->spec.attr;

		e->spec = v[i];
		e->evidx = -1;
		e->tracepoint = a->type == PERF_TYPE_TRACEPOINT;
		a->size = sizeof(*a);
		a->disabled = 1;
		a->exclude_kernel |= o->no_kernel;
		if (e->tracepoint) {
			/* Every hit is a sample, its stacks taken where it fired. */
			a->freq = 0;
			a->sample_period = 1;
		} else if (e->spec.period) {
			a->freq = 0;
			a->sample_period = e->spec.period;
		} else if (o->count) {
			a->freq = 0;
			a->sample_period = o->count;
		} else {
			a->freq = 1;
			a->sample_freq = o->freq;
		}
	}
	s->nr_evs = n;
	free(v);
	if (o->cpu_list) {
		err = parse_cpus(o->cpu_list, s->cpu_set, REC_MAX_CPUS / 64);
		if (err) {
			pa_err("bad -C '%s': %s; give CPUs like 0-3,8 (below %d)", o->cpu_list,
			       err == -ERANGE ? "CPU number too high" : "not a CPU list",
			       REC_MAX_CPUS);
			return err;
		}
	}
	return 0;
}

/* Whether -C lets the sampling events run on cpu. */
static bool samples_cpu(const struct rec_session *s, int cpu)
{
	if (!s->opts.cpu_list)
		return true;
	return cpu >= 0 && cpu < REC_MAX_CPUS && (s->cpu_set[cpu / 64] >> (cpu % 64)) & 1;
}

/*
 * One line for an event the kernel would not open: one whose PMU this machine lacks
 * gets what exists instead.
 */
static void open_error(const struct rec_event *e, int cpu, int err)
{
	struct evspec_env env = {0};
	const char *why = evspec_missing_pmu(&e->spec, &env);
	char have[1024];

	if (!why && (err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV) &&
	    e->spec.attr.type >= PERF_TYPE_MAX)
		why = "its PMU does not take this configuration";
	if (!why) {
		rec_event_open_error(e->spec.name, cpu, err);
		return;
	}
	if (evspec_available(&env, have, sizeof(have)) <= 0)
		snprintf(have, sizeof(have), "cpu-clock and the software events");
	pa_err("cannot open %s: %s; %s; events here: %s", e->spec.name, strerror(-err), why, have);
}

int rec_events_open_cpu(struct rec_session *s, struct rec_cpu *c)
{
	bool first = true;
	int i, err, fd;

	for (i = 0; i < s->nr_evs; i++) {
		struct rec_event *e = &s->evs[i];
		struct perf_event_attr attr = e->spec.attr;
		struct bpf_perf_event_opts po = {.sz = sizeof(po), .bpf_cookie = i};
		struct bpf_program *prog =
			e->tracepoint ? s->skel->progs.on_tp_sample : s->skel->progs.on_sample;

		if (!samples_cpu(s, c->cpu))
			continue;
		/*
		 * A tracepoint runs its BPF programs on every CPU, and takes one only once:
		 * one event, whose id every CPU's samples carry.
		 */
		if (e->tracepoint && e->opened) {
			c->ev_id[i] = e->tp_id;
			continue;
		}
		fd = syscall(SYS_perf_event_open, &attr, -1, c->cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			err = -errno;
			open_error(e, c->cpu, err);
			return err;
		}
		c->ev_fd[i] = fd;
		if (ioctl(fd, PERF_EVENT_IOC_ID, &c->ev_id[i])) {
			err = -errno;
			pa_err("cannot read the id of the %s event: %s", e->spec.name,
			       strerror(-err));
			return err;
		}
		/* The first attr in perf.data carries the side-band: its id. */
		if (first)
			c->id = c->ev_id[i];
		first = false;
		e->opened = true;
		e->tp_id = c->ev_id[i];
		c->ev_link[i] = bpf_program__attach_perf_event_opts(prog, fd, &po);
		if (!c->ev_link[i]) {
			err = -errno;
			pa_err("cannot attach the BPF program to %s on CPU %d: %s", e->spec.name,
			       c->cpu, strerror(-err));
			return err;
		}
	}
	return 0;
}

int rec_events_start(struct rec_session *s, bool on)
{
	int i, k, err;

	for (i = 0; i < s->nr_cpus; i++)
		for (k = 0; k < s->nr_evs; k++) {
			int fd = s->cpus[i].ev_fd[k];

			if (fd < 0 ||
			    !ioctl(fd, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0))
				continue;
			if (!on)
				continue;
			err = -errno;
			pa_err("cannot enable %s on CPU %d: %s", s->evs[k].spec.name,
			       s->cpus[i].cpu, strerror(-err));
			return err;
		}
	return 0;
}

void rec_events_close(struct rec_cpu *c)
{
	int k;

	for (k = 0; k < PROFILE_MAX_EVENTS; k++) {
		bpf_link__destroy(c->ev_link[k]);
		c->ev_link[k] = NULL;
		if (c->ev_fd[k] >= 0)
			close(c->ev_fd[k]);
		c->ev_fd[k] = -1;
	}
}

void rec_events_free(struct rec_session *s)
{
	free(s->evs);
	s->evs = NULL;
	s->nr_evs = 0;
}
