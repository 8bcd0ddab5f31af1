#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Every user-causable error: one line "pa-X: error: <cause>; <fix>", exit 1, no crash,
# no corrupt or partial output left behind.

load lib/helpers

# one_error_line PROG: $output is exactly one line starting "PROG: error: ".
one_error_line() {
	echo "status=$status output:"
	echo "$output"
	if is_crash "$status"; then fail "crashed with status $status"; fi
	[ "$status" -eq 1 ] || fail "exit status $status, want 1"
	[ "${#lines[@]}" -eq 1 ] || fail "${#lines[@]} lines of output, want 1"
	[[ ${lines[0]} == "$1: error: "* ]] || fail "not a '$1: error:' line"
}

# A valid perf.data to corrupt, written by Linux perf so these tests do not depend on
# pa-record.
good_file() {
	perf_capture good.data cpu_split 0.5
}

@test "errors: record -p with a PID that does not exist" {
	require_root
	require_bin "$PA_RECORD"
	# pid_max is at most 4194304 on Linux, but check anyway.
	if kill -0 999999 2>/dev/null; then skip "a process with PID 999999 exists here"; fi
	run pa_record -p 999999 -d 1s -o x.data
	one_error_line pa-record
	[ "${lines[0]}" = "pa-record: error: no process with PID 999999" ]
	[ ! -e x.data ]
}

@test "errors: record of a command that does not exist" {
	require_root
	require_bin "$PA_RECORD"
	run pa_record -o x.data -- nosuchcmd-pa-test
	one_error_line pa-record
	[ "${lines[0]}" = "pa-record: error: cannot run 'nosuchcmd-pa-test': No such file or directory" ]
	[ ! -e x.data ]
}

@test "errors: record to a directory that does not exist" {
	require_root
	require_bin "$PA_RECORD"
	w=$(wl cpu_split)
	run pa_record -o "$BATS_TEST_TMPDIR/nodir/x.data" -- "$w" 1
	one_error_line pa-record
	[[ ${lines[0]} == "pa-record: error: cannot create $BATS_TEST_TMPDIR/nodir/x.data: No such file or directory"* ]]
}

@test "errors: record to a read-only file system" {
	require_root
	require_bin "$PA_RECORD"
	w=$(wl cpu_split)
	mkdir ro
	mount -t tmpfs -o ro,size=1m pa-test-ro "$BATS_TEST_TMPDIR/ro" || skip "cannot mount a tmpfs here"
	run pa_record -o "$BATS_TEST_TMPDIR/ro/x.data" -- "$w" 1
	umount "$BATS_TEST_TMPDIR/ro"
	one_error_line pa-record
	[[ ${lines[0]} == "pa-record: error: cannot create $BATS_TEST_TMPDIR/ro/x.data: Read-only file system"* ]]
}

@test "errors: record as an unprivileged user names CAP_BPF and CAP_PERFMON" {
	require_root
	require_bin "$PA_RECORD"
	command -v setpriv >/dev/null || skip "setpriv not installed"
	# A directory nobody can write to, so the only thing missing is privilege.
	d=$(mktemp -d /tmp/pa-nobody.XXXXXX)
	chmod 0777 "$d"
	# nobody, no capabilities at all (not even inheritable/ambient ones).
	run setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$PA_RECORD" -o "$d/x.data" -d 1s -a
	ls -A "$d"
	[ -z "$(ls -A "$d")" ]
	rm -rf "$d"
	one_error_line pa-record
	[[ ${lines[0]} == *CAP_BPF* ]]
	[[ ${lines[0]} == *CAP_PERFMON* ]]
	[[ ${lines[0]} == *setcap* ]]
}

@test "errors: record without -p, -a or CMD is a usage error" {
	require_bin "$PA_RECORD"
	run pa_record -d 1s -o x.data
	one_error_line pa-record
	[[ ${lines[0]} == *-p* && ${lines[0]} == *-a* ]]
}

@test "errors: record with both -p and -a is a usage error" {
	require_bin "$PA_RECORD"
	run pa_record -a -p 1 -d 1s -o x.data
	one_error_line pa-record
}

@test "errors: record with a bad duration names it" {
	require_bin "$PA_RECORD"
	run pa_record -a -d 5x -o x.data
	one_error_line pa-record
	[[ ${lines[0]} == *"'5x'"* || ${lines[0]} == *'"5x"'* || ${lines[0]} == *" 5x"* ]]
}

@test "errors: record with a bad frequency names it" {
	require_bin "$PA_RECORD"
	for f in 0 abc -5; do
		run pa_record -a -F "$f" -d 1s -o x.data
		one_error_line pa-record
		[[ ${lines[0]} == *"$f"* ]]
	done
}

@test "errors: record with an unknown option exits non-zero with one line" {
	require_bin "$PA_RECORD"
	run pa_record --no-such-option -a
	echo "$output"
	[ "$status" -ne 0 ]
	if is_crash "$status"; then fail "crashed with status $status"; fi
	[ "${#lines[@]}" -le 2 ]
}

@test "errors: report of a file that does not exist says how to make one" {
	require_bin "$PA_REPORT"
	run "$PA_REPORT" -i nosuch.data
	one_error_line pa-report
	[ "${lines[0]}" = "pa-report: error: cannot open nosuch.data: No such file or directory (record one with pa-record)" ]
}

@test "errors: report with no perf.data in the current directory" {
	require_bin "$PA_REPORT"
	run "$PA_REPORT" </dev/null
	one_error_line pa-report
	[[ ${lines[0]} == "pa-report: error: cannot open perf.data: No such file or directory"* ]]
}

@test "errors: report of a garbage file: bad magic" {
	require_bin "$PA_REPORT"
	head -c 65536 /dev/urandom >garbage.data
	run "$PA_REPORT" -i garbage.data
	one_error_line pa-report
	[ "${lines[0]}" = "pa-report: error: garbage.data: not a perf.data file (bad magic)" ]
}

@test "errors: report of an empty file" {
	require_bin "$PA_REPORT"
	: >empty.data
	run "$PA_REPORT" -i empty.data
	one_error_line pa-report
	[[ ${lines[0]} == *empty.data* ]]
}

@test "errors: report of a file truncated inside its header" {
	require_bin "$PA_REPORT"
	good_file
	head -c 50 good.data >trunc.data
	run "$PA_REPORT" -i trunc.data
	one_error_line pa-report
	[[ ${lines[0]} == *trunc.data*truncated* ]]
}

@test "errors: report of a file truncated inside its data section" {
	require_bin "$PA_REPORT"
	good_file
	head -c $(($(stat -c %s good.data) / 2)) good.data >half.data
	run "$PA_REPORT" -i half.data
	one_error_line pa-report
	[[ ${lines[0]} == *half.data*truncated* ]]
}

@test "errors: report of a pipe stream cut mid-record never crashes" {
	require_root
	require_bin "$PA_REPORT"
	require_perf
	perf_capture good.pipe cpu_split 0.5 pipe
	for n in 10 200 3001 $(($(stat -c %s good.pipe) - 7)); do
		run "$PA_REPORT" -i - < <(head -c "$n" good.pipe)
		echo "cut at $n: status $status"
		one_error_line pa-report
		[[ ${lines[0]} == *truncated* ]]
	done
}

@test "errors: report of a file with random bytes after a valid header never crashes" {
	require_bin "$PA_REPORT"
	good_file
	# Keep header and attrs, smash the data section: the reader must catch bad sizes.
	size=$(stat -c %s good.data)
	cp good.data smashed.data
	dd if=/dev/urandom of=smashed.data bs=1 seek=400 count=4096 conv=notrunc status=none
	run "$PA_REPORT" -i smashed.data
	echo "status=$status"
	if is_crash "$status"; then fail "crashed with status $status"; fi
	[ "$size" -gt 4496 ]
}

@test "errors: report with an unknown sort key names it" {
	require_bin "$PA_REPORT"
	good_file
	run "$PA_REPORT" -i good.data --sort sym,bogus
	one_error_line pa-report
	[[ ${lines[0]} == *bogus* ]]
}

@test "errors: convert of a garbage file: bad magic, no output file" {
	require_bin "$PA_CONVERT"
	head -c 65536 /dev/urandom >garbage.data
	for fmt in --pprof --folded; do
		run "$PA_CONVERT" -i garbage.data $fmt -o out
		one_error_line pa-convert
		[ "${lines[0]}" = "pa-convert: error: garbage.data: not a perf.data file (bad magic)" ]
		[ ! -e out ]
	done
}

@test "errors: convert of an empty and of a truncated file" {
	require_bin "$PA_CONVERT"
	good_file
	: >empty.data
	head -c $(($(stat -c %s good.data) / 2)) good.data >half.data
	for f in empty.data half.data; do
		run "$PA_CONVERT" -i $f --folded -o out
		one_error_line pa-convert
		[[ ${lines[0]} == *$f* ]]
		[ ! -e out ]
	done
}

@test "errors: convert of a file that does not exist" {
	require_bin "$PA_CONVERT"
	run "$PA_CONVERT" -i nosuch.data --folded
	one_error_line pa-convert
	[[ ${lines[0]} == "pa-convert: error: cannot open nosuch.data: No such file or directory"* ]]
}

@test "errors: convert to a directory that does not exist" {
	require_bin "$PA_CONVERT"
	good_file
	run "$PA_CONVERT" -i good.data --folded -o nodir/out.folded
	one_error_line pa-convert
	[[ ${lines[0]} == *nodir/out.folded*"No such file or directory"* ]]
}
