/* SPDX-License-Identifier: Apache-2.0 */
/* The perf.data targets (file and pipe mode): read everything a reader hands out. */
#ifndef PA_FUZZ_PD_H
#define PA_FUZZ_PD_H

#include <string.h>

#include "perfdata/event.h"
#include "perfdata/pd_read.h"

/* Touch every byte a pointer claims, so ASan sees a pointer past the record. */
static inline uint64_t fuzz_pd_sum(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t s = 0;

	for (size_t i = 0; i < n; i++)
		s += b[i];
	return s;
}

static inline uint64_t fuzz_pd_event(const struct pd_reader *r, const struct pd_event *ev)
{
	uint64_t s = fuzz_pd_sum(ev->hdr, ev->hdr->size);

	if (ev->evsel)
		s += ev->evsel->attr.type;
	if (ev->hdr->type == PERF_RECORD_SAMPLE) {
		const struct pd_sample *smp = &ev->sample;

		if (smp->nr_ips)
			s += fuzz_pd_sum(smp->ips, smp->nr_ips * sizeof(*smp->ips));
		if (smp->raw_size)
			s += fuzz_pd_sum(smp->raw, smp->raw_size);
		s += pd_reader_evsel_by_id(r, smp->id) != NULL;
	} else if (ev->hdr->type == PERF_RECORD_CGROUP) {
		struct pd_cgroup c;

		/* Its path and labels must lie within the record. */
		if (!pd_parse_cgroup(ev->hdr, ev->hdr->size, &c)) {
			s += c.id + fuzz_pd_sum(c.path, strlen(c.path) + 1);
			if (c.labels)
				s += fuzz_pd_sum(c.labels, c.labels_len);
		}
	}
	return s;
}

static inline uint64_t fuzz_pd_meta(const struct pd_reader *r)
{
	uint32_t online, avail;
	uint64_t s = 0, kb;
	const char *str;

	for (size_t i = 0; i < pd_reader_nr_evsel(r); i++) {
		const struct pd_evsel *e = pd_reader_evsel(r, i);

		s += strlen(e->name) + fuzz_pd_sum(e->ids, e->nr_ids * sizeof(*e->ids));
		for (size_t j = 0; j < e->nr_ids; j++)
			s += pd_reader_evsel_by_id(r, e->ids[j]) != NULL;
	}
	for (int f = 0; f < HEADER_LAST_FEATURE; f++) {
		str = pd_reader_feature_string(r, f);
		s += str ? strlen(str) : 0;
	}
	str = pd_reader_cmdline(r);
	s += str ? strlen(str) : 0;
	{
		int argc;
		const char *const *argv = pd_reader_argv(r, &argc);

		for (int i = 0; argv && i < argc; i++)
			s += strlen(argv[i]);
	}
	if (!pd_reader_nrcpus(r, &online, &avail))
		s += online + avail;
	if (!pd_reader_total_mem(r, &kb))
		s += kb;
	for (size_t i = 0; i < pd_reader_nr_build_ids(r); i++) {
		const struct pd_build_id *b = pd_reader_build_id(r, i);

		s += b->size + (b->filename ? strlen(b->filename) : 0);
	}
	return s + pd_reader_nr_unknown_id(r) + pd_reader_is_pipe(r);
}

/* Every record (ordered or not), then the metadata pipe mode collected on the way. */
static inline uint64_t fuzz_pd_read(const char *path, bool ordered)
{
	struct pd_reader *r;
	struct pd_event ev;
	const char *msg;
	char err[256];
	uint64_t s;

	r = pd_reader_open(path, err, sizeof(err));
	if (!r)
		return strlen(err);
	pd_reader_set_ordered(r, ordered);
	s = fuzz_pd_meta(r);
	while (pd_reader_next(r, &ev) > 0)
		s += fuzz_pd_event(r, &ev);
	msg = pd_reader_error(r); /* NULL: no error */
	s += fuzz_pd_meta(r) + (msg ? strlen(msg) : 0);
	pd_reader_close(r);
	return s;
}

#endif /* PA_FUZZ_PD_H */
