// SPDX-License-Identifier: Apache-2.0
/*
 * bench/report's capture: a perf.data of N cpu-clock samples with 8-deep user
 * callchains over the functions of real shared objects (so both pa-report and
 * perf report open, parse and symbolize them), as pa-record would write it.
 *
 *   report_gen OUT N FUNCS_FILE
 * FUNCS_FILE lines: "PATH VADDR SIZE" for each function (from nm -S), grouped by
 * PATH.  Function popularity is skewed (a few hot functions, a long tail), stacks
 * repeat as real ones do; the PRNG is fixed so every run writes the same file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "symbolize/buildid.h"
#include "perfdata/pd_write.h"

#define DEPTH 8
#define BASE  0x7f0000000000ULL
#define SLOT  0x10000000ULL /* address space per DSO */
#define PID   4242

struct func {
	int dso;
	uint64_t vaddr, size;
};

struct dso {
	char *path;
	uint64_t len;
};

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Skewed pick in [0, n): squaring a uniform value favours the low indices. */
static size_t pick(size_t n)
{
	double u = (double)(next() >> 11) / (double)(1ULL << 53);

	return (size_t)(u * u * u * n) % n;
}

int main(int argc, char **argv)
{
	struct pd_writer_opts wo = {0};
	struct perf_event_attr attr = {0};
	struct func *funcs = NULL;
	struct dso *dsos = NULL;
	size_t nf = 0, nd = 0, i, k;
	uint64_t n, id = 1, ips[DEPTH + 1];
	struct pd_writer *w;
	char path[4096];
	FILE *f;
	int ev;

	if (argc != 4 || !(n = strtoull(argv[2], NULL, 0))) {
		fprintf(stderr, "usage: report_gen OUT N FUNCS_FILE\n");
		return 1;
	}
	f = fopen(argv[3], "r");
	if (!f) {
		perror(argv[3]);
		return 1;
	}
	for (;;) {
		unsigned long long va, sz;
		struct func *nfp;

		if (fscanf(f, "%4095s %llx %llx", path, &va, &sz) != 3)
			break;
		if (!nd || strcmp(dsos[nd - 1].path, path)) {
			struct dso *d = realloc(dsos, (nd + 1) * sizeof(*d));
			struct stat st;

			if (!d || stat(path, &st))
				return 1;
			dsos = d;
			dsos[nd].path = strdup(path);
			dsos[nd].len = (st.st_size + 0xfff) & ~0xfffULL;
			nd++;
		}
		nfp = realloc(funcs, (nf + 1) * sizeof(*nfp));
		if (!nfp)
			return 1;
		funcs = nfp;
		funcs[nf++] = (struct func){nd - 1, va, sz ? sz : 1};
	}
	fclose(f);
	if (!nf) {
		fprintf(stderr, "report_gen: no functions in %s\n", argv[3]);
		return 1;
	}
	/* Shuffle so the hot functions are spread over the DSOs. */
	for (i = nf - 1; i > 0; i--) {
		struct func t = funcs[i];

		k = next() % (i + 1);
		funcs[i] = funcs[k];
		funcs[k] = t;
	}

	wo.path = argv[1];
	w = pd_writer_open(&wo);
	if (!w) {
		perror(argv[1]);
		return 1;
	}
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_period = 4999;
	attr.freq = 1;
	attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			   PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			   PERF_SAMPLE_CALLCHAIN;
	attr.sample_id_all = 1;
	attr.exclude_kernel = 1;
	attr.mmap = attr.mmap2 = attr.comm = attr.task = 1;
	ev = pd_writer_add_attr(w, &attr, "cpu-clock", &id, 1);
	if (ev < 0 || pd_writer_set_host_features(w) ||
	    pd_write_comm(w, PID, PID, "bench", true, NULL))
		goto fail;
	for (i = 0; i < nd; i++) {
		uint8_t bid[BID_MAX];
		int nb = bid_read_path(dsos[i].path, bid);

		if (pd_write_mmap2(w, PERF_RECORD_MISC_USER, PID, PID, BASE + i * SLOT, dsos[i].len,
				   0, 5, 2, nb > 0 ? bid : NULL, nb > 0 ? nb : 0, dsos[i].path,
				   NULL))
			goto fail;
		if (nb > 0 &&
		    pd_writer_add_build_id(w, PERF_RECORD_MISC_USER, -1, bid, nb, dsos[i].path))
			goto fail;
	}
	for (i = 0; i < n; i++) {
		struct pd_sample s = {.id = id,
				      .pid = PID,
				      .tid = PID + (i & 3),
				      .time = 1000000000ULL + i * 200000ULL,
				      .cpu = i & 1,
				      .period = 200000,
				      .misc = PERF_RECORD_MISC_USER};

		ips[0] = PERF_CONTEXT_USER;
		for (k = 1; k <= DEPTH; k++) {
			/* Outer frames come from a small set of callers: stacks repeat. */
			const struct func *fn = &funcs[k == 1 ? pick(nf) : pick(nf / k + 1)];

			ips[k] = BASE + fn->dso * SLOT + fn->vaddr +
				 (k == 1 ? next() % fn->size : 1);
		}
		s.ip = ips[1];
		s.ips = ips;
		s.nr_ips = DEPTH + 1;
		if (pd_write_sample(w, ev, &s))
			goto fail;
		if ((i & 4095) == 4095 && pd_write_finished_round(w))
			goto fail;
	}
	if (pd_writer_close(w)) {
		perror("report_gen: close");
		return 1;
	}
	for (i = 0; i < nd; i++)
		free(dsos[i].path);
	free(dsos);
	free(funcs);
	return 0;
fail:
	fprintf(stderr, "report_gen: cannot write %s\n", argv[1]);
	pd_writer_abort(w);
	return 1;
}
