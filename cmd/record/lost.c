// SPDX-License-Identifier: Apache-2.0
/*
 * What BPF dropped or cut, from its per-CPU counters: samples the ring buffer had no
 * room for become PERF_RECORD_LOST_SAMPLES of their event and CPU, every round; the
 * other counters (stacks cut, targets not followed, short off-CPU stretches...) are
 * summed for the summary.
 */
#include "perfdata/pd_write.h"
#include "record.h"
#include "base/util.h"

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

/* The event a lost-counter slot's samples belong to, and the id of CPU c's. */
static bool slot_event(struct rec_session *s, uint32_t slot, const struct rec_cpu *c, uint64_t *id,
		       uint64_t **total)
{
	switch (slot) {
	case PROFILE_LOST_CPU:
		/* BPF counts them for all sampling events: the first one's. */
		*id = c->ev_id[0];
		*total = &s->lost;
		return s->nr_evs > 0;
	case PROFILE_LOST_OFFCPU:
	case PROFILE_LOST_STASH:
		*id = c->off_id;
		*total = &s->off_lost;
		return s->opts.offcpu;
	case PROFILE_LOST_OFFCPU_MAP:
		*id = c->off_id;
		*total = &s->off_untracked;
		return s->opts.offcpu;
	case PROFILE_LOST_GPU:
		*id = c->gpu_id;
		*total = &s->gpu_lost;
		return s->opts.gpu;
	case PROFILE_LOST_GPU_REC:
		*id = c->gpu_time_id;
		*total = &s->gpu_rec_lost;
		return s->opts.gpu;
	}
	return false;
}

/* What BPF dropped since the last round, as PERF_RECORD_LOST_SAMPLES per CPU and event. */
int rec_emit_bpf_lost(struct rec_session *s)
{
	static const uint32_t slots[] = {PROFILE_LOST_CPU,   PROFILE_LOST_OFFCPU,
					 PROFILE_LOST_STASH, PROFILE_LOST_OFFCPU_MAP,
					 PROFILE_LOST_GPU,   PROFILE_LOST_GPU_REC};
	uint64_t d[s->nr_cpus], id, *total;
	struct pd_sample_id sid;
	size_t k;
	int i, err;

	for (k = 0; k < sizeof(slots) / sizeof(slots[0]); k++) {
		if (!slot_event(s, slots[k], &s->cpus[0], &id, &total))
			continue;
		if (counter_delta(s, slots[k], d))
			return 0;
		for (i = 0; i < s->nr_cpus; i++) {
			struct rec_cpu *c = &s->cpus[i];

			if (!d[i])
				continue;
			slot_event(s, slots[k], c, &id, &total);
			rec_sid(s, &sid, 0, 0, pa_now_ns(), c->cpu);
			sid.id = id;
			err = pd_write_lost_samples(s->w, d[i], &sid);
			if (err)
				return err;
			*total += d[i];
			s->records_in_round++;
		}
	}
	counter_add(s, PROFILE_LOST_TARGETS, &s->targets_lost);
	counter_add(s, PROFILE_KSTACK_CUT, &s->kstack_cut);
	counter_add(s, PROFILE_USTACK_FP_CUT, &s->ustack_cut);
	if (s->opts.gpu) {
		counter_add(s, PROFILE_GPU_NESTED, &s->gpu_nested);
		counter_add(s, PROFILE_GPU_REUSED, &s->gpu_reused);
	}
	if (s->opts.offcpu) {
		counter_add(s, PROFILE_SHORT_OFFCPU, &s->off_short);
		counter_add(s, PROFILE_SHORT_OFFCPU_NS, &s->off_short_ns);
		counter_add(s, PROFILE_LOST_USTACK, &s->off_no_ustack);
		counter_add(s, PROFILE_UNTRACED_IN, &s->off_untraced_in);
	}
	return 0;
}
