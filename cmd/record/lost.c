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
