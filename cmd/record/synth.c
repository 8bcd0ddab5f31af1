// SPDX-License-Identifier: Apache-2.0
/*
 * The state that existed before sampling began, synthesized from /proc as perf
 * record does: COMM for every thread and MMAP2 (with build-ids) for every executable
 * mapping of the targets, and the kernel map.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/buildid.h"
#include "perfdata/pd_write.h"
#include "base/procfs.h"
#include "record.h"
#include "base/util.h"

/* COMM for every thread, MMAP2 for every executable mapping of one process. */
int rec_synthesize_pid(struct rec_session *s, pid_t pid)
{
	struct pd_sample_id sid;
	struct proc_map *maps = NULL;
	pid_t *tids = NULL;
	char comm[64];
	uint8_t bid[BID_MAX];
	int i, n, nb, err = 0;

	n = proc_list_tids(pid, &tids);
	if (n < 0)
		return 0; /* gone already: nothing to say about it */
	for (i = 0; i < n && !err; i++) {
		if (proc_read_comm(pid, tids[i], comm, sizeof(comm)))
			continue;
		rec_sid(s, &sid, pid, tids[i], 0, -1);
		err = pd_write_comm(s->w, pid, tids[i], comm, false, &sid);
	}
	free(tids);
	if (err)
		return err;

	n = proc_read_maps(pid, true, &maps);
	if (n < 0)
		return 0;
	rec_sid(s, &sid, pid, pid, 0, -1);
	for (i = 0; i < n && !err; i++) {
		struct proc_map *m = &maps[i];

		nb = 0;
		if (m->path[0] == '/') {
			struct rec_file_ref r;
			const struct rec_file *f;

			rec_file_ref_map(&r, pid, m);
			f = rec_file_get(s, &r, false);
			if (f && f->bid_size > 0)
				memcpy(bid, f->bid, (nb = f->bid_size));
		}
		err = pd_write_mmap2(s->w, PERF_RECORD_MISC_USER, pid, pid, m->start,
				     m->end - m->start, m->pgoff, m->prot, m->flags,
				     nb > 0 ? bid : NULL, nb > 0 ? nb : 0, m->path, &sid);
		if (!err && nb > 0)
			err = pd_writer_add_build_id(s->w, PERF_RECORD_MISC_USER, -1, bid, nb,
						     m->path);
	}
	proc_maps_free(maps, n);
	return err;
}

/* The address of _text, where perf anchors the kernel map (0 when hidden). */
static uint64_t kernel_text_addr(void)
{
	char line[512], name[256], type;
	unsigned long long addr, found = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (!strcmp(name, "_text")) {
			found = addr;
			break;
		}
		if (!strcmp(name, "_stext") && !found)
			found = addr;
	}
	fclose(f);
	return found;
}

/* PERF_RECORD_MMAP of "[kernel.kallsyms]_text" with pid -1, as perf synthesizes it. */
static int synthesize_kernel(struct rec_session *s)
{
	struct pd_sample_id sid;
	uint8_t bid[BID_MAX];
	uint64_t text = kernel_text_addr();
	int n, err;

	if (s->opts.no_kernel)
		return 0;
	if (!text) {
		pa_warn("no kernel addresses in /proc/kallsyms (kernel.kptr_restrict?); kernel "
			"frames will stay unnamed");
		return 0;
	}
	rec_sid(s, &sid, 0, 0, 0, -1); /* the first attr's id */
	err = pd_write_mmap(s->w, PERF_RECORD_MISC_KERNEL, (uint32_t)-1, 0, text, ~0ULL - text,
			    text, "[kernel.kallsyms]_text", &sid);
	if (err)
		return err;
	n = bid_read_kernel(bid);
	if (n > 0)
		err = pd_writer_add_build_id(s->w, PERF_RECORD_MISC_KERNEL, -1, bid, n,
					     "[kernel.kallsyms]");
	return err;
}

int rec_synthesize(struct rec_session *s)
{
	pid_t *pids = NULL;
	size_t i;
	int n, err;

	err = synthesize_kernel(s);
	if (err)
		goto out;
	if (s->opts.system_wide) {
		n = proc_list_pids(&pids);
		if (n < 0) {
			err = n;
			goto out;
		}
		for (i = 0; i < (size_t)n && !err; i++)
			if (pids[i] != s->self)
				err = rec_synthesize_pid(s, pids[i]);
		free(pids);
	} else {
		for (i = 0; i < s->targets.n && !err; i++)
			err = rec_synthesize_pid(s, s->targets.pids[i]);
	}
out:
	if (err)
		pa_err("cannot write the initial process state: %s", strerror(-err));
	return err;
}
