// SPDX-License-Identifier: Apache-2.0
/*
 * Seeds for the perf.data targets, written by our own writer (make-corpus builds and
 * runs it): every record type and feature the writer knows, a few records each, in
 * file or pipe mode.  Deterministic: fixed ids, times, strings and build-ids.
 *
 *	gen-perfdata OUT file|pipe [one|two] [zstd] [cgroup]
 *
 * two: two events (ids matter); zstd: the records as PERF_RECORD_COMPRESSED (level 1),
 * the COMPRESSED feature with them; cgroup: samples carry PERF_SAMPLE_CGROUP, and
 * PERF_RECORD_CGROUP records name their cgroups.
 */
#include <stdio.h>
#include <string.h>

#include "perfdata/pd_write.h"

static const uint8_t gen_bid[20] = {0xde, 0xad, 0xbe, 0xef, 1,	2,  3,	4,  5,	6,
				    7,	  8,	9,    10,   11, 12, 13, 14, 15, 16};

/* The cgroups of the cgroup seeds: the root, a docker container, a Kubernetes pod's. */
static const struct {
	uint64_t id;
	const char *path;
} gen_cgroups[] = {
	{1, "/"},
	{0x1234, "/system.slice/docker-"
		 "3f4e5d6c7b8a99887766554433221100ffeeddccbbaa00112233445566778899.scope"},
	{0x5678, "/kubepods.slice/kubepods-burstable.slice/"
		 "kubepods-burstable-pod2c8e6b4a_1f3d_4e5a_9b7c_0d1e2f3a4b5c.slice/cri-containerd-"
		 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope"},
};

static int gen_write(struct pd_writer *w, int two, int cgroup)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 1000000,
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			       PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW,
		.sample_id_all = 1,
	};
	static const uint64_t ids0[] = {11, 12}, ids1[] = {21};
	uint64_t ips[] = {PERF_CONTEXT_KERNEL, 0xffffffff81000100, PERF_CONTEXT_USER, 0x401010,
			  0x401020};
	char raw[12] = "offcpu-raw";
	char *argv[] = {"pa-record", "-F", "99", "--", "./w"};
	struct pd_sample_id sid = {.pid = 100, .tid = 101, .time = 1000, .id = 11, .cpu = 1};
	int err = 0, e1 = 0;

	if (cgroup) {
		a.sample_type |= PERF_SAMPLE_CGROUP;
		a.cgroup = 1;
	}
	if (pd_writer_add_attr(w, &a, "cpu-clock", ids0, 2) < 0)
		return -1;
	if (two) {
		a.config = PERF_COUNT_SW_TASK_CLOCK;
		e1 = pd_writer_add_attr(w, &a, "offcpu-time", ids1, 1);
		if (e1 < 0)
			return -1;
	}
	err |= pd_writer_set_string(w, HEADER_HOSTNAME, "fuzz");
	err |= pd_writer_set_string(w, HEADER_OSRELEASE, "6.1.0");
	err |= pd_writer_set_string(w, HEADER_ARCH, "x86_64");
	err |= pd_writer_set_string(w, HEADER_VERSION, "6.1");
	err |= pd_writer_set_nrcpus(w, 2, 2);
	err |= pd_writer_set_cmdline(w, 5, argv);
	err |= pd_writer_set_total_mem(w, 1 << 20);
	err |= pd_write_comm(w, 100, 100, "w", true, &sid);
	err |= pd_write_task(w, PERF_RECORD_FORK, 100, 1, 101, 1, 1001, &sid);
	err |= pd_write_mmap2(w, PERF_RECORD_MISC_USER, 100, 100, 0x400000, 0x2000, 0, 5, 2,
			      gen_bid, 20, "/w", &sid);
	err |= pd_write_mmap2(w, PERF_RECORD_MISC_USER, 100, 100, 0x7f0000000000, 0x1000, 0x1000, 5,
			      2, NULL, 0, "/lib/libc.so.6", &sid);
	for (size_t i = 0; cgroup && i < sizeof(gen_cgroups) / sizeof(gen_cgroups[0]); i++) {
		/* The last with labels, as pa-record --label-env writes them. */
		if (i + 1 == sizeof(gen_cgroups) / sizeof(gen_cgroups[0]))
			err |= pd_write_cgroup_labels(w, gen_cgroups[i].id, gen_cgroups[i].path,
						      "pa-labels\0pod_name=web-1\0", 26, &sid);
		else
			err |= pd_write_cgroup(w, gen_cgroups[i].id, gen_cgroups[i].path, &sid);
	}
	for (int i = 0; i < 4; i++) {
		struct pd_sample s = {
			.id = two && (i & 1) ? 21 : 11 + (i & 2) / 2,
			.ip = 0x401010 + 16 * i,
			.pid = 100,
			.tid = 100 + (i & 1),
			.time = 3000 - 100 * i, /* out of order within the round */
			.cpu = (uint32_t)i & 1,
			.period = 1000000,
			.misc = PERF_RECORD_MISC_USER,
			.nr_ips = 5,
			.ips = ips,
			.raw_size = sizeof(raw),
			.raw = raw,
			.cgroup = gen_cgroups[i % 3].id,
		};

		err |= pd_write_sample(w, two && (i & 1) ? e1 : 0, &s);
		if (i == 1)
			err |= pd_write_finished_round(w);
	}
	sid.time = 4000;
	err |= pd_write_lost(w, 11, 3, &sid);
	err |= pd_write_lost_samples(w, 2, &sid);
	err |= pd_write_task(w, PERF_RECORD_EXIT, 100, 1, 101, 1, 5000, &sid);
	err |= pd_write_finished_round(w);
	err |= pd_writer_add_build_id(w, PERF_RECORD_MISC_USER, 100, gen_bid, 20, "/w");
	return err ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct pd_writer_opts o = {0};
	struct pd_writer *w;
	int cgroup = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: gen-perfdata OUT file|pipe [one|two] [zstd] [cgroup]\n");
		return 2;
	}
	o.path = argv[1];
	o.pipe = !strcmp(argv[2], "pipe");
	for (int i = 4; i < argc; i++) {
		if (!strcmp(argv[i], "zstd"))
			o.compress_level = 1;
		else if (!strcmp(argv[i], "cgroup"))
			cgroup = 1;
	}
	w = pd_writer_open(&o);
	if (!w || gen_write(w, argc > 3 && !strcmp(argv[3], "two"), cgroup)) {
		fprintf(stderr, "gen-perfdata: cannot write %s\n", argv[1]);
		if (w)
			pd_writer_abort(w);
		return 1;
	}
	return pd_writer_close(w) ? 1 : 0;
}
