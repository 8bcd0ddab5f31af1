// SPDX-License-Identifier: Apache-2.0
/*
 * Samples: each profile_sample of the BPF ring buffer becomes one PERF_RECORD_SAMPLE
 * whose callchain carries PERF_CONTEXT_KERNEL/USER markers; off-CPU kernel stacks
 * taken at switch-out lose the scheduler's own frames (.sched.text) first.
 */
#include <stdio.h>
#include <string.h>

#include "profile/offcpu.h"
#include "perfdata/pd_write.h"
#include "record.h"

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

/* The id of sampling event ev (-1: offcpu-time) on cpu. */
static uint64_t sample_id(const struct rec_session *s, uint32_t cpu, int ev)
{
	const struct rec_cpu *c = cpu < (uint32_t)s->nr_possible && s->cpu_by_nr[cpu]
					  ? s->cpu_by_nr[cpu]
					  : &s->cpus[0];

	return ev < 0 ? c->off_id : c->ev_id[ev];
}

/* The Python frames (pairs) of record r of size bytes: their number in *n. */
static const __u64 *py_frames(const struct profile_sample *r, size_t size, size_t *n)
{
	size_t room = size > PROFILE_SAMPLE_HDR_SIZE
			      ? (size - PROFILE_SAMPLE_HDR_SIZE) / sizeof(__u64)
			      : 0,
	       at = (size_t)r->nr_kernel + r->nr_user;

	*n = 0;
	if (!r->nr_py || at >= room)
		return NULL;
	*n = r->nr_py < (room - at) / 2 ? r->nr_py : (room - at) / 2;
	return r->ips + at;
}

/*
 * One profile_sample as one PERF_RECORD_SAMPLE, its user stack from uips[0..nu)
 * when uips is set (a deferred off-CPU user stack, or one finished from a slice),
 * else from ps itself; its Python frames from record pys of pys_size bytes (NULL:
 * ps).
 */
int rec_write_sample(struct rec_session *s, const struct profile_sample *ps, size_t size,
		     const __u64 *uips, uint64_t nu, const struct profile_sample *pys,
		     size_t pys_size)
{
	const __u64 *pyf;
	size_t npy;
	struct pd_sample smp = {};
	struct offcpu_raw raw = {.magic = OFFCPU_RAW_MAGIC, .version = 1};
	uint64_t *cc = s->callchain, nk, room, skip = 0;
	const __u64 *kips;
	bool offcpu;
	int n = 0, ev = -1, evidx, err;

	offcpu = ps->kind == PROFILE_KIND_OFFCPU;
	if (!offcpu) {
		/* The attach cookie: which sampling event fired. */
		ev = ps->state;
		if (ev >= s->nr_evs)
			return 0;
	}
	evidx = offcpu ? s->off_evidx : s->evs[ev].evidx;
	if (evidx < 0)
		return 0;
	room = (size - PROFILE_SAMPLE_HDR_SIZE) / sizeof(uint64_t);
	nk = ps->nr_kernel < room ? ps->nr_kernel : room;
	if (nk > PROFILE_MAX_FRAMES)
		nk = PROFILE_MAX_FRAMES;
	if (!uips) {
		uips = ps->ips + nk;
		nu = ps->nr_user < room - nk ? ps->nr_user : room - nk;
	}
	if (nu > PROFILE_MAX_UFRAMES)
		nu = PROFILE_MAX_UFRAMES;
	if (offcpu)
		skip = trim_sched(s, ps->ips, nk);
	kips = ps->ips + skip;
	if (nk > skip) {
		cc[n++] = PERF_CONTEXT_KERNEL;
		memcpy(cc + n, kips, (nk - skip) * sizeof(*cc));
		n += nk - skip;
	}
	pyf = py_frames(pys ? pys : ps, pys ? pys_size : size, &npy);
	if (nu) {
		cc[n++] = PERF_CONTEXT_USER;
		n += rec_python_chain(s, ps->pid, pyf, npy,
				      ((pys ? pys : ps)->flags & PROFILE_F_PY_CUT) != 0, uips, nu,
				      cc + n, sizeof(s->callchain) / sizeof(*cc) - n);
	}
	smp.ip = nk > skip ? kips[0] : nu ? cc[1] : 0;
	smp.misc = nk > skip ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER;
	smp.pid = ps->pid;
	smp.tid = ps->tid;
	smp.time = ps->time;
	smp.cpu = ps->cpu;
	smp.period = ps->period;
	smp.nr_ips = n;
	smp.ips = cc;
	smp.id = sample_id(s, ps->cpu, ev);
	/* Named when it arrived (rec_handle_sample). */
	smp.cgroup = s->cgroup_mode ? ps->cgroup : 0;
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

/* ring_buffer callback: a sample (with its stack slice, to finish its user stack), or
 * the user stack some off-CPU samples wait for. */
int rec_handle_sample(void *ctx, void *data, size_t size)
{
	struct rec_session *s = ctx;
	const struct profile_sample *ps = data;

	if (size < PROFILE_SAMPLE_HDR_SIZE)
		return 0;
	/* Its cgroup named now, ahead of it: a sample held for its unwind table or its
	 * user stack is written later, after samples of the same cgroup taken since. */
	if (ps->kind != PROFILE_KIND_GPU_REC && ps->cgroup)
		rec_cgroup_of(s, ps->pid, ps->tid, ps->time, ps->cgroup);
	if (ps->kind == PROFILE_KIND_USTACK)
		return rec_offcpu_ustack(s, ps, size);
	if (ps->kind == PROFILE_KIND_GPU_LAUNCH)
		return rec_gpu_launch(s, ps, size);
	if (ps->kind == PROFILE_KIND_GPU_CORR)
		return rec_gpu_corr(s, ps, size);
	if (ps->kind == PROFILE_KIND_GPU_REC)
		return rec_gpu_rec(s, data, size);
	if (ps->kind == PROFILE_KIND_GPU_FN)
		return rec_gpu_fn(s, data, size);
	if (ps->kind == PROFILE_KIND_OFFCPU && (ps->flags & PROFILE_F_USTACK_LATER))
		return rec_offcpu_hold(s, ps, size);
	if ((ps->flags & PROFILE_F_SLICE) && size >= PROFILE_SLICE_HDR_SIZE)
		return rec_unwind_slice(s, data, size);
	return rec_write_sample(s, ps, size, NULL, 0, NULL, 0);
}
