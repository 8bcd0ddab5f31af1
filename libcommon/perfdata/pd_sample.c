// SPDX-License-Identifier: Apache-2.0
/*
 * PERF_RECORD_SAMPLE and sample_id_all trailer decoding, field order as in
 * <linux/perf_event.h> (and perf's evsel__parse_sample).  Every length read from the
 * record is checked against the record size before it is used.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata/pd_priv.h"
#include "perfdata/pd_read.h"

/* Fields of the trailer, in on-disk order. */
#define SID_MASK                                                                                   \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |             \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

bool pd_feat_is_string(int feat)
{
	switch (feat) {
	case HEADER_HOSTNAME:
	case HEADER_OSRELEASE:
	case HEADER_VERSION:
	case HEADER_ARCH:
	case HEADER_CPUDESC:
	case HEADER_CPUID:
		return true;
	default:
		return false;
	}
}

size_t pd_sid_size(uint64_t type)
{
	return 8 * (size_t)__builtin_popcountll(type & SID_MASK);
}

int pd_sample_id_pos(uint64_t type)
{
	if (type & PERF_SAMPLE_IDENTIFIER)
		return 0;
	if (!(type & PERF_SAMPLE_ID))
		return -1;
	return __builtin_popcountll(
		type & (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR));
}

int pd_sid_id_pos(uint64_t type)
{
	/* Counted from the end: IDENTIFIER is last, ID sits before STREAM_ID and CPU. */
	if (type & PERF_SAMPLE_IDENTIFIER)
		return 1;
	if (!(type & PERF_SAMPLE_ID))
		return -1;
	return 1 + __builtin_popcountll(type & (PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU));
}

int pd_parse_sid(uint64_t type, const struct perf_event_header *h, struct pd_sample_id *sid)
{
	size_t n = pd_sid_size(type);
	const uint8_t *p;

	memset(sid, 0, sizeof(*sid));
	if (h->size < sizeof(*h) + n)
		return -EINVAL;
	p = (const uint8_t *)h + h->size - n;
	if (type & PERF_SAMPLE_TID) {
		memcpy(&sid->pid, p, 4);
		memcpy(&sid->tid, p + 4, 4);
		p += 8;
	}
	if (type & PERF_SAMPLE_TIME) {
		memcpy(&sid->time, p, 8);
		p += 8;
	}
	if (type & PERF_SAMPLE_ID) {
		memcpy(&sid->id, p, 8);
		p += 8;
	}
	if (type & PERF_SAMPLE_STREAM_ID)
		p += 8;
	if (type & PERF_SAMPLE_CPU) {
		memcpy(&sid->cpu, p, 4);
		p += 8;
	}
	if (type & PERF_SAMPLE_IDENTIFIER)
		memcpy(&sid->id, p, 8);
	return 0;
}

/* Cursor over the u64 words of a sample body. */
struct cur {
	const uint8_t *p;
	size_t left; /* bytes */
};

static int take(struct cur *c, void *out, size_t n)
{
	if (c->left < n)
		return -EINVAL;
	if (out)
		memcpy(out, c->p, n);
	c->p += n;
	c->left -= n;
	return 0;
}

static int take_u64(struct cur *c, uint64_t *v)
{
	return take(c, v, 8);
}

/* Skip n u64 words, n read from the record: refuse counts that overflow. */
static int skip_words(struct cur *c, uint64_t n)
{
	if (n > c->left / 8)
		return -EINVAL;
	return take(c, NULL, n * 8);
}

static int skip_read(struct cur *c, uint64_t fmt)
{
	uint64_t nr = 1, per = 1 + !!(fmt & PERF_FORMAT_ID) + !!(fmt & PERF_FORMAT_LOST);
	uint64_t times =
		!!(fmt & PERF_FORMAT_TOTAL_TIME_ENABLED) + !!(fmt & PERF_FORMAT_TOTAL_TIME_RUNNING);

	if (fmt & PERF_FORMAT_GROUP) {
		if (take_u64(c, &nr) || nr > c->left / 8)
			return -EINVAL;
		if (skip_words(c, times))
			return -EINVAL;
		return skip_words(c, nr * per);
	}
	return skip_words(c, per + times);
}

static int skip_regs(struct cur *c, uint64_t mask)
{
	uint64_t abi;

	if (take_u64(c, &abi))
		return -EINVAL;
	return abi ? skip_words(c, __builtin_popcountll(mask)) : 0;
}

/* The fields after RAW; of them only cgroup is returned, the others are walked over. */
static int parse_tail(struct cur *c, const struct perf_event_attr *a, uint64_t t,
		      struct pd_sample *s)
{
	uint64_t v;

	if (t & PERF_SAMPLE_BRANCH_STACK) {
		if (take_u64(c, &v))
			return -EINVAL;
		if ((a->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX) && skip_words(c, 1))
			return -EINVAL;
		/* struct perf_branch_entry is 3 u64. */
		if (v > c->left / 24 || skip_words(c, v * 3))
			return -EINVAL;
	}
	if ((t & PERF_SAMPLE_REGS_USER) && skip_regs(c, a->sample_regs_user))
		return -EINVAL;
	if (t & PERF_SAMPLE_STACK_USER) {
		if (take_u64(c, &v))
			return -EINVAL;
		if (v) {
			if (v % 8 || skip_words(c, v / 8) || skip_words(c, 1))
				return -EINVAL;
		}
	}
	if ((t & PERF_SAMPLE_WEIGHT_TYPE) && skip_words(c, 1))
		return -EINVAL;
	if ((t & PERF_SAMPLE_DATA_SRC) && skip_words(c, 1))
		return -EINVAL;
	if ((t & PERF_SAMPLE_TRANSACTION) && skip_words(c, 1))
		return -EINVAL;
	if ((t & PERF_SAMPLE_REGS_INTR) && skip_regs(c, a->sample_regs_intr))
		return -EINVAL;
	if ((t & PERF_SAMPLE_PHYS_ADDR) && skip_words(c, 1))
		return -EINVAL;
	if ((t & PERF_SAMPLE_CGROUP) && take_u64(c, &s->cgroup))
		return -EINVAL;
	v = t & (PERF_SAMPLE_DATA_PAGE_SIZE | PERF_SAMPLE_CODE_PAGE_SIZE);
	if (skip_words(c, __builtin_popcountll(v)))
		return -EINVAL;
	if (t & PERF_SAMPLE_AUX) {
		if (take_u64(c, &v) || v > c->left || take(c, NULL, v))
			return -EINVAL;
	}
	return 0;
}

int pd_parse_sample(const struct pd_evsel *evsel, const struct perf_event_header *hdr,
		    struct pd_sample *s)
{
	const struct perf_event_attr *a = &evsel->attr;
	uint64_t t = a->sample_type;
	struct cur c = {(const uint8_t *)(hdr + 1), 0};
	uint32_t u32[2];

	/* Field by field: GCC makes a memset of the whole struct a rep stos, which costs
	 * more than the rest of a small sample's parsing. */
	_Static_assert(sizeof(*s) == 104, "a new field of struct pd_sample is cleared here");
	s->id = s->ip = s->time = s->addr = s->period = s->nr_ips = s->cgroup = 0;
	s->pid = s->tid = s->cpu = s->raw_size = 0;
	s->ips = NULL;
	s->raw = NULL;
	s->misc = hdr->misc;
	if (hdr->size < sizeof(*hdr))
		return -EINVAL;
	c.left = hdr->size - sizeof(*hdr);
	if ((t & PERF_SAMPLE_IDENTIFIER) && take_u64(&c, &s->id))
		return -EINVAL;
	if ((t & PERF_SAMPLE_IP) && take_u64(&c, &s->ip))
		return -EINVAL;
	if (t & PERF_SAMPLE_TID) {
		if (take(&c, u32, 8))
			return -EINVAL;
		s->pid = u32[0];
		s->tid = u32[1];
	}
	if ((t & PERF_SAMPLE_TIME) && take_u64(&c, &s->time))
		return -EINVAL;
	if ((t & PERF_SAMPLE_ADDR) && take_u64(&c, &s->addr))
		return -EINVAL;
	if ((t & PERF_SAMPLE_ID) && take_u64(&c, &s->id))
		return -EINVAL;
	if ((t & PERF_SAMPLE_STREAM_ID) && skip_words(&c, 1))
		return -EINVAL;
	if (t & PERF_SAMPLE_CPU) {
		if (take(&c, u32, 8))
			return -EINVAL;
		s->cpu = u32[0];
	}
	if ((t & PERF_SAMPLE_PERIOD) && take_u64(&c, &s->period))
		return -EINVAL;
	if ((t & PERF_SAMPLE_READ) && skip_read(&c, a->read_format))
		return -EINVAL;
	if (t & PERF_SAMPLE_CALLCHAIN) {
		if (take_u64(&c, &s->nr_ips) || s->nr_ips > c.left / 8)
			return -EINVAL;
		s->ips = (const uint64_t *)c.p;
		take(&c, NULL, s->nr_ips * 8);
	}
	if (t & PERF_SAMPLE_RAW) {
		if (take(&c, &s->raw_size, 4) || s->raw_size > c.left)
			return -EINVAL;
		s->raw = c.p;
		take(&c, NULL, s->raw_size);
	}
	/* Past here only the cgroup id is returned; the rest is walked to reject
	 * malformed records. */
	return parse_tail(&c, a, t, s);
}

static const char *const hw_names[] = {
	"cycles",
	"instructions",
	"cache-references",
	"cache-misses",
	"branches",
	"branch-misses",
	"bus-cycles",
	"stalled-cycles-frontend",
	"stalled-cycles-backend",
	"ref-cycles",
};

static const char *const sw_names[] = {
	"cpu-clock",	    "task-clock",   "page-faults",  "context-switches",
	"cpu-migrations",   "minor-faults", "major-faults", "alignment-faults",
	"emulation-faults", "dummy",	    "bpf-output",   "cgroup-switches",
};

char *pd_default_evname(const struct perf_event_attr *a)
{
	char *s = NULL;
	int n;

	if (a->type == PERF_TYPE_HARDWARE && a->config < sizeof(hw_names) / sizeof(hw_names[0]))
		return strdup(hw_names[a->config]);
	if (a->type == PERF_TYPE_SOFTWARE && a->config < sizeof(sw_names) / sizeof(sw_names[0]))
		return strdup(sw_names[a->config]);
	if (a->type == PERF_TYPE_RAW)
		n = asprintf(&s, "r%llx", (unsigned long long)a->config);
	else if (a->type == PERF_TYPE_TRACEPOINT)
		n = asprintf(&s, "tracepoint:%llu", (unsigned long long)a->config);
	else
		n = asprintf(&s, "%u:0x%llx", a->type, (unsigned long long)a->config);
	return n < 0 ? NULL : s;
}
