// SPDX-License-Identifier: Apache-2.0
/*
 * bench/compress's helper: copy the records of a perf.data file (plain or compressed)
 * into a new one at zstd LEVEL (0: plain), with the rounds of the original (or, with
 * "norounds", none: chunks by size only), and print
 *
 *	records_bytes data_bytes writer_cpu_ms
 *
 * the bytes of the records, of the data section written, and the CPU time spent in the
 * writer, so levels and chunkings compare on the very same samples (on stderr when OUT
 * is "-": a pipe-mode stream to stdout).  Also a check of perf's reading: perf script
 * prints the same for IN and OUT.
 *
 *	recompress IN OUT|- LEVEL [norounds]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perfdata/pd_read.h"
#include "perfdata/pd_write.h"

static double cpu_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	struct pd_writer_opts o = {0};
	struct pd_writer *w;
	struct pd_reader *r;
	struct pd_event ev;
	char err[256];
	uint64_t bytes = 0, data;
	double ms = 0, t;
	int ret = 0;

	if (argc < 4) {
		fprintf(stderr, "usage: recompress IN OUT LEVEL [norounds]\n");
		return 2;
	}
	r = pd_reader_open(argv[1], err, sizeof(err));
	if (!r) {
		fprintf(stderr, "recompress: %s\n", err);
		return 1;
	}
	o.path = argv[2];
	o.compress_level = atoi(argv[3]);
	w = pd_writer_open(&o);
	if (!w) {
		fprintf(stderr, "recompress: cannot write %s\n", argv[2]);
		return 1;
	}
	for (size_t i = 0; i < pd_reader_nr_evsel(r) && ret >= 0; i++) {
		const struct pd_evsel *e = pd_reader_evsel(r, i);

		ret = pd_writer_add_attr(w, &e->attr, e->name, e->ids, e->nr_ids);
	}
	while (ret >= 0 && pd_reader_next(r, &ev) > 0) {
		uint32_t type = ev.hdr->type;

		if (type == PERF_RECORD_FINISHED_ROUND && argc > 4)
			continue;
		/* The header records of a pipe are the writer's to make. */
		if (type == PERF_RECORD_HEADER_ATTR || type == PERF_RECORD_HEADER_FEATURE ||
		    type == PERF_RECORD_HEADER_BUILD_ID)
			continue;
		bytes += ev.hdr->size;
		t = cpu_ms();
		ret = pd_write_raw(w, ev.hdr);
		ms += cpu_ms() - t;
	}
	if (ret < 0 || pd_reader_error(r)) {
		fprintf(stderr, "recompress: %s\n",
			pd_reader_error(r) ? pd_reader_error(r) : "write failed");
		pd_writer_abort(w);
		return 1;
	}
	t = cpu_ms();
	ret = pd_writer_flush(w);
	ms += cpu_ms() - t;
	data = pd_writer_data_size(w);
	pd_reader_close(r);
	if (ret || pd_writer_close(w)) {
		fprintf(stderr, "recompress: cannot write %s\n", argv[2]);
		return 1;
	}
	fprintf(strcmp(argv[2], "-") ? stdout : stderr, "%llu %llu %.1f\n",
		(unsigned long long)bytes, (unsigned long long)data, ms);
	return 0;
}
