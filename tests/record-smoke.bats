#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# pa-record's side-band and ring-buffer paths, checked with Linux perf as the reader.

load lib/helpers

# A program that dlopen()s a library only after pa-record has attached and then
# spends its time in it: the library is known only from a side-band MMAP2.
build_dlopen_prog() {
	cat >hot.c <<'C'
volatile unsigned long sink;
__attribute__((noinline)) void lib_hot(void)
{
	for (unsigned long i = 0; i < 300000000UL; i++)
		sink += i;
}
C
	cat >dl.c <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	void *h;
	usleep(300000);
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	((void (*)(void))dlsym(h, "lib_hot"))();
	return 0;
}
C
	gcc -O1 -fno-omit-frame-pointer -shared -fPIC -o libpahot.so hot.c &&
		gcc -O1 -fno-omit-frame-pointer -o dl dl.c -ldl
}

@test "record-smoke: a library dlopen()ed after attach gets an MMAP2 with its build-id" {
	require_root
	require_perf
	require_bin "$PA_RECORD"
	build_dlopen_prog || fail "cannot build the dlopen test program (gcc: make deps)"
	pa_record -q -o pa.data -- ./dl "$PWD/libpahot.so"
	perf report -D -i pa.data 2>/dev/null | grep -E 'PERF_RECORD_MMAP2 .*<[0-9a-f]{40}>.*libpahot\.so$'
	top=$(perf report -i pa.data --stdio --no-children -g none --sort dso,sym 2>/dev/null |
		awk '!/^#/ && NF { print $2, $4; exit }')
	[ "$top" = "libpahot.so lib_hot" ]
}

@test "record-smoke: a child exec'd after a fork is named and resolved (side-band in time order)" {
	require_root
	require_perf
	require_bin "$PA_RECORD"
	local forker i top
	forker=$(wl forker)
	# The child may fork on one CPU and exec on another; repeat to catch the race.
	for i in 1 2 3; do
		pa_record -q -F 999 -o pa.data -- "$forker" exec 1 0.2 2>/dev/null
		top=$(perf report -i pa.data --stdio --no-children -g none --sort sym 2>/dev/null |
			awk '!/^#/ && NF { print $3; exit }')
		[ "$top" = child_spin ] || fail "run $i: top symbol '$top', not child_spin"
	done
}

@test "record-smoke: perf reads the file without warnings (no out-of-order events) at 4999 Hz" {
	require_root
	require_perf
	require_bin "$PA_RECORD"
	pa_record -q -F 4999 -o pa.data -- "$(wl threads)" 1
	perf report -i pa.data --stdio >report.txt 2>report.err
	cat report.err
	if grep -qiE 'out of order|warning' report.err; then fail "perf warned reading pa-record's file"; fi
	grep -q 'threads' report.txt
}
