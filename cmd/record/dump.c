// SPDX-License-Identifier: Apache-2.0
/*
 * pa-record --dump -p PID: every thread's stack, printed once, as py-spy dump does,
 * for a process that is stuck: kernel, native and Python frames.
 *
 * It is a short recording (main.c sets it up: off-CPU time, -F 999, DUMP_WINDOW).
 * When it ends, the off-CPU iterator takes the stack of every thread that is not on
 * a CPU from its saved registers (bpf/profile.bpf.c offcpu_open, with
 * open_runnable); a thread on a CPU, whose saved registers are stale, has its last
 * cpu-clock sample instead.  The capture is read back through the machine, as
 * pa-report reads it, and each thread's last stack is printed, innermost first.
 *
 * Without BPF (no root or capabilities) only the Python stacks are printed, read
 * from outside the process (process_vm_readv, libcommon/symbolize/cpython_stack.c).
 * Neither way ptraces the process or writes into it.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record.h"
#include "base/hash.h"
#include "base/procfs.h"
#include "base/util.h"
#include "perfdata/pd_read.h"
#include "profile/machine.h"
#include "profile/offcpu.h"

#define DUMP_MAX_FRAMES 1024
/* Room for a stack's frames with their inlined ones. */
#define DUMP_MAX_RESOLVED (4 * DUMP_MAX_FRAMES)

/* --- Python stacks only, without BPF ------------------------------------------- */

static void print_thread(void *ctx, uint64_t tid, const struct cpython_frame *f, size_t n, bool cut)
{
	size_t i;

	(void)ctx;
	printf("\nThread %llu:\n", (unsigned long long)tid);
	if (!n)
		printf("    (no Python frame)\n");
	for (i = 0; i < n; i++) {
		if (f[i].line)
			printf("    %s (%s:%d)\n", f[i].name, f[i].file, f[i].line);
		else
			printf("    %s (%s)\n", f[i].name, f[i].file);
	}
	if (cut)
		printf("    ... (more than %d frames)\n", DUMP_MAX_FRAMES);
}

/*
 * The process's CPython version into ver ("" when it runs none).  With report,
 * why its stacks cannot be read is printed; returns 0 when they can.
 */
static int python_of(pid_t pid, struct cpython_layout *l, uint64_t *runtime, char *ver, size_t len,
		     bool report)
{
	struct cpython_elf py;
	int err = cpython_attach(pid, &py, l, runtime);

	ver[0] = 0;
	if (err == -ENOENT || err == -ESRCH) {
		if (report)
			pa_err("--dump: process %d: %s", pid,
			       err == -ESRCH ? "no such process; check the PID"
					     : "no CPython interpreter mapped");
		return err;
	}
	if (err && err != -ENOTSUP) {
		if (report)
			pa_err("--dump: cannot read process %d's mappings: %s; run as its user, "
			       "as root, or with CAP_SYS_PTRACE",
			       pid, strerror(-err));
		return err;
	}
	cpython_version_str(py.version, ver, len);
	if (err && report)
		pa_err("--dump: process %d runs CPython %s: %s", pid, ver,
		       cpython_unsupported(&py) ? cpython_unsupported(&py)
						: "its frame layout is not known");
	return err;
}

static int dump_python(pid_t pid)
{
	struct cpython_layout l;
	uint64_t runtime;
	char ver[32];
	int err = python_of(pid, &l, &runtime, ver, sizeof(ver), true);

	if (err)
		return err;
	printf("Process %d: CPython %s\n", pid, ver);
	fflush(stdout);
	err = cpython_stacks(pid, &l, runtime, DUMP_MAX_FRAMES, print_thread, NULL);
	if (err == -EPERM || err == -EACCES)
		pa_err("--dump: cannot read process %d's memory: %s; run as its user, as root, "
		       "or with CAP_SYS_PTRACE",
		       pid, strerror(-err));
	else if (err == -ESRCH)
		pa_err("--dump: process %d has no Python thread yet (or has finalized)", pid);
	else if (err)
		pa_err("--dump: reading process %d failed: %s", pid, strerror(-err));
	return err;
}

int rec_dump(const struct rec_opts *o)
{
	size_t i;
	int err = 0;

	for (i = 0; i < o->nr_pids; i++) {
		if (i)
			printf("\n");
		if (dump_python(o->pids[i]))
			err = -1;
	}
	return err;
}

/* --- Every stack, from the recording ------------------------------------------- */

/* A thread's last sample: found in the first pass, printed into text in the second. */
struct dump_thread {
	uint32_t pid, tid;
	uint64_t time;
	uint64_t nth; /* which of the thread's samples is the last */
	uint64_t seen;
	char *text;
	size_t text_len;
};

struct dump {
	struct dump_thread *th;
	size_t nr, cap;
	struct frame *frames;
};

static struct dump_thread *thread_of(struct dump *d, uint32_t pid, uint32_t tid)
{
	size_t i;

	for (i = 0; i < d->nr; i++)
		if (d->th[i].tid == tid && d->th[i].pid == pid)
			return &d->th[i];
	if (pa_grow((void **)&d->th, &d->cap, d->nr + 1, sizeof(*d->th)))
		return NULL;
	d->th[d->nr] = (struct dump_thread){.pid = pid, .tid = tid};
	return &d->th[d->nr++];
}

/* A frame of the synthetic file of Python functions (cmd/record/synthsym.c). */
static bool synthetic(const struct frame *f)
{
	return f->dso_name && !strncmp(f->dso_name, "pa-frames-", 10);
}

static void print_frame(FILE *out, const struct frame *f)
{
	char buf[96];
	const char *name = frame_name(f, buf, sizeof(buf));
	size_t len = strlen(name);
	const char *paren;

	if (synthetic(f)) {
		/* "qualname (file.py)": the qualified name, then the whole path and line,
		 * as the Python-only dump and py-spy print them. */
		paren = strstr(name, " (");
		if (paren)
			len = paren - name;
		if (f->srcfile && f->line)
			fprintf(out, "    %.*s (%s:%d)\n", (int)len, name, f->srcfile, f->line);
		else
			fprintf(out, "    %.*s (%s)\n", (int)len, name,
				f->srcfile ? f->srcfile : "?");
		return;
	}
	fprintf(out, "    %s (%s)%s\n", name, f->dso_name ? f->dso_name : "[unknown]",
		f->inlined ? " [inlined]" : "");
}

/* What the thread was doing, from its sample's state (NULL: a cpu-clock sample). */
static const char *state_name(const char *state)
{
	if (!state)
		return "on CPU";
	if (!strcmp(state, "sleep"))
		return "sleeping, S";
	if (!strcmp(state, "io"))
		return "uninterruptible, D";
	if (!strcmp(state, "preempted"))
		return "runnable, R";
	return "stopped or parked";
}

/* The stack of sample s of thread t into t->text, innermost first. */
static int format_stack(struct dump *d, struct machine *m, const struct pd_event *ev,
			struct dump_thread *t)
{
	const struct pd_sample *s = &ev->sample;
	const char *state = NULL;
	size_t n, i;
	FILE *out;

	if (ev->evsel && (ev->evsel->attr.sample_type & PERF_SAMPLE_RAW))
		state = offcpu_raw_state(s->raw, s->raw_size);
	free(t->text);
	t->text = NULL;
	out = open_memstream(&t->text, &t->text_len);
	if (!out)
		return -ENOMEM;
	fprintf(out, "\nThread %u: %s (%s)\n", t->tid, machine_comm(m, t->pid, t->tid),
		state_name(state));
	n = machine_resolve(m, s, d->frames, DUMP_MAX_RESOLVED);
	for (i = 0; i < n; i++)
		print_frame(out, &d->frames[i]);
	if (!n)
		fprintf(out, "    (no stack)\n");
	return fclose(out) ? -ENOMEM : 0;
}

/*
 * One pass over the capture.  Without m: count each thread's samples, so that the
 * pass with m (fed every other record) formats only each thread's last one.
 */
static int read_pass(struct dump *d, const char *path, struct machine *m)
{
	char err[256];
	struct pd_reader *r = pd_reader_open(path, err, sizeof(err));
	struct dump_thread *t;
	struct pd_event ev;
	int ret;

	if (!r) {
		pa_err("--dump: %s", err);
		return -EINVAL;
	}
	pd_reader_set_ordered(r, true);
	if (m)
		machine_add_build_ids(m, r);
	while ((ret = pd_reader_next(r, &ev)) > 0) {
		if (ev.hdr->type != PERF_RECORD_SAMPLE) {
			if (m && machine_process_event(m, &ev) == -ENOMEM)
				ret = -ENOMEM;
		} else if (!(t = thread_of(d, ev.sample.pid, ev.sample.tid))) {
			ret = -ENOMEM;
		} else if (!m) {
			t->nth++;
		} else if (++t->seen == t->nth) {
			ret = format_stack(d, m, &ev, t);
		}
		if (ret < 0)
			break;
	}
	if (ret < 0)
		pa_err("--dump: %s", ret == -ENOMEM ? "out of memory" : pd_reader_error(r));
	pd_reader_close(r);
	return ret < 0 ? ret : 0;
}

static int by_tid(const void *a, const void *b)
{
	const struct dump_thread *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	/* The main thread first, then the others as the process created them. */
	if ((x->tid == x->pid) != (y->tid == y->pid))
		return x->tid == x->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Threads of pid alive now that had no sample: on a CPU all along, never sampled. */
static void print_unsampled(const struct dump *d, pid_t pid)
{
	char path[64];
	struct dirent *de;
	size_t i;
	DIR *dir;
	long tid;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return;
	while ((de = readdir(dir))) {
		tid = strtol(de->d_name, NULL, 10);
		if (tid <= 0)
			continue;
		for (i = 0; i < d->nr; i++)
			if (d->th[i].tid == (uint32_t)tid)
				break;
		if (i == d->nr)
			printf("\nThread %ld: (no stack: it started, or ran on a CPU all along, "
			       "after its last sample)\n",
			       tid);
	}
	closedir(dir);
}

static void print_process(const struct dump *d, pid_t pid)
{
	struct cpython_layout l;
	uint64_t runtime;
	char ver[32], comm[64] = "";
	size_t i;

	python_of(pid, &l, &runtime, ver, sizeof(ver), false);
	if (ver[0])
		printf("Process %d: CPython %s\n", pid, ver);
	else if (proc_read_comm(pid, pid, comm, sizeof(comm)) == 0)
		printf("Process %d: %s\n", pid, comm);
	else
		printf("Process %d\n", pid);
	for (i = 0; i < d->nr; i++)
		if (d->th[i].pid == (uint32_t)pid && d->th[i].text)
			fputs(d->th[i].text, stdout);
	print_unsampled(d, pid);
}

int rec_dump_print(struct rec_session *s)
{
	struct machine_opts mo = {0};
	struct machine *m;
	struct dump d = {0};
	size_t i;
	int err;

	d.frames = calloc(DUMP_MAX_RESOLVED, sizeof(*d.frames));
	m = machine_new(&mo);
	if (!d.frames || !m) {
		free(d.frames);
		machine_free(m);
		return -ENOMEM;
	}
	err = read_pass(&d, s->opts.output, NULL);
	if (!err)
		err = read_pass(&d, s->opts.output, m);
	machine_free(m);
	if (!err) {
		qsort(d.th, d.nr, sizeof(*d.th), by_tid);
		for (i = 0; i < s->opts.nr_pids; i++) {
			if (i)
				printf("\n");
			print_process(&d, s->opts.pids[i]);
		}
		fflush(stdout);
	}
	for (i = 0; i < d.nr; i++)
		free(d.th[i].text);
	free(d.th);
	free(d.frames);
	return err;
}
