// SPDX-License-Identifier: Apache-2.0
/*
 * pa-record --dump -p PID: every thread's Python stack, printed once, as py-spy dump
 * does, for a process that is stuck.  Read from outside the process (process_vm_readv,
 * libcommon/symbolize/cpython_stack.c): no BPF, no ptrace, nothing written into it.
 * Native frames are not printed yet.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "record.h"
#include "base/util.h"

#define DUMP_MAX_FRAMES 1024

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

static int dump_pid(pid_t pid)
{
	struct cpython_elf py;
	struct cpython_layout l;
	uint64_t runtime;
	char ver[32];
	int err = cpython_attach(pid, &py, &l, &runtime);

	if (err == -ENOENT || err == -ESRCH) {
		pa_err("--dump: process %d: %s", pid,
		       err == -ESRCH ? "no such process; check the PID"
				     : "no CPython 3.10 or later interpreter mapped");
		return err;
	}
	if (err && err != -ENOTSUP) {
		pa_err("--dump: cannot read process %d's mappings: %s; run as its user, as root, "
		       "or with CAP_SYS_PTRACE",
		       pid, strerror(-err));
		return err;
	}
	cpython_version_str(py.version, ver, sizeof(ver));
	if (err) {
		pa_err("--dump: process %d runs CPython %s: %s", pid, ver,
		       cpython_unsupported(&py) ? cpython_unsupported(&py)
						: "its frame layout is not known");
		return err;
	}
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
		if (dump_pid(o->pids[i]))
			err = -1;
	}
	return err;
}
