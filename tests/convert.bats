#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# pa-convert: pprof that `go tool pprof` decodes, folded stacks, and safe output.
# Input is a `perf record -g` capture of cpu_split unless the test is about pa-record,
# so a pa-record bug does not hide (or fake) a pa-convert result.

load lib/helpers

require_go() {
	command -v go >/dev/null || fail "go not installed (make deps installs golang-go)"
}

# pprof_top FILE: pprof's -top table, symbols exactly as pa-convert wrote them (no
# re-symbolization from local binaries).
pprof_top() {
	go tool pprof -symbolize=none -sample_index=samples -top "$1" 2>pprof.err ||
		{ cat pprof.err >&2; return 1; }
}

# pprof_top_sym FILE: the function with the largest flat value.
pprof_top_sym() {
	local out
	out=$(pprof_top "$1") || return 1
	awk 'seen && NF >= 6 { print $6; exit } /flat%/ { seen = 1 }' <<<"$out"
}

@test "convert: --pprof output decodes with go tool pprof and hot_a is on top" {
	require_go
	require_bin "$PA_CONVERT"
	perf_capture cpu.data cpu_split 2
	"$PA_CONVERT" -i cpu.data --pprof -o cpu.pb.gz
	[ "$(od -An -tx1 -N2 cpu.pb.gz | tr -d ' ')" = 1f8b ]
	pprof_top cpu.pb.gz
	[ "$(pprof_top_sym cpu.pb.gz)" = hot_a ]
}

@test "convert: --pprof keeps the 70/30 split within 5 points" {
	require_go
	require_bin "$PA_CONVERT"
	perf_capture cpu.data cpu_split 2
	"$PA_CONVERT" -i cpu.data --pprof -o cpu.pb.gz
	out=$(pprof_top cpu.pb.gz)
	echo "$out"
	a=$(awk '$6 == "hot_a" { sub(/%/, "", $2); print $2 }' <<<"$out")
	b=$(awk '$6 == "hot_b" { sub(/%/, "", $2); print $2 }' <<<"$out")
	in_range "${a:-0}" 65 75
	in_range "${b:-0}" 25 35
}

@test "convert: --pprof has samples/count and cpu/nanoseconds, period type cpu/nanoseconds" {
	require_go
	require_bin "$PA_CONVERT"
	perf_capture cpu.data cpu_split 1
	"$PA_CONVERT" -i cpu.data --pprof -o cpu.pb.gz
	out=$(go tool pprof -raw cpu.pb.gz 2>&1)
	head -20 <<<"$out"
	grep -qx 'PeriodType: cpu nanoseconds' <<<"$out"
	grep -qE '^samples/count cpu/nanoseconds(\[dflt\])?$' <<<"$out"
	grep -qE '^Duration: [0-9.]*[1-9]' <<<"$out"
	grep -qE '^Time: [0-9]{4}-' <<<"$out"
}

@test "convert: --pprof samples carry pid and comm labels, tid with --tid-label" {
	require_go
	require_bin "$PA_CONVERT"
	perf_capture cpu.data cpu_split 1
	"$PA_CONVERT" -i cpu.data --pprof -o cpu.pb.gz
	out=$(go tool pprof -raw cpu.pb.gz 2>&1)
	grep -qE '^\s+comm:\[cpu_split\]' <<<"$out" || fail "no comm label"
	grep -qE '^\s+.*pid:\[[0-9]+' <<<"$out" || fail "no pid label"
	# A tid label keeps each thread's samples apart: only when asked for.
	grep -qE '^\s+.*tid:\[[0-9]+' <<<"$out" && fail "a tid label without --tid-label"
	"$PA_CONVERT" -i cpu.data --pprof --tid-label -o tid.pb.gz
	out=$(go tool pprof -raw tid.pb.gz 2>&1)
	grep -qE '^\s+.*tid:\[[0-9]+' <<<"$out" || fail "no tid label with --tid-label"
}

@test "convert: --pprof mapping of the workload has its file name and build-id" {
	require_root
	require_go
	require_bin "$PA_RECORD" "$PA_CONVERT"
	# pa-record's capture: it records build-ids (our perf captures use -B, see perf_capture).
	w=$(wl cpu_split)
	pa_record -q -o cpu.data -- "$w" 1
	"$PA_CONVERT" -i cpu.data --pprof -o cpu.pb.gz
	bid=$(readelf -n "$BATS_TEST_TMPDIR/cpu_split" | sed -nE 's/.*Build ID: ([0-9a-f]+).*/\1/p')
	out=$(go tool pprof -raw cpu.pb.gz 2>&1)
	sed -n '/^Mappings/,$p' <<<"$out"
	grep -qE "^[0-9]+: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ $BATS_TEST_TMPDIR/cpu_split $bid" <<<"$out"
}

@test "convert: --pprof locations are leaf first (hot_a called from work_loop from main)" {
	require_go
	require_bin "$PA_CONVERT"
	perf_capture cpu.data cpu_split 1
	"$PA_CONVERT" -i cpu.data --pprof -o cpu.pb.gz
	# -traces prints each stack leaf first; a hot_a stack must read hot_a, work_loop, main.
	out=$(go tool pprof -symbolize=none -traces cpu.pb.gz 2>&1)
	awk '/-----------/ { if (s) print s; s = ""; next } NF { sub(/ \(inline\)$/, ""); s = s " " $NF } END { print s }' <<<"$out" |
		grep -qE '(^| )hot_a work_loop main( |$)'
}

@test "convert: pa-record | pa-convert --pprof > cpu.pb.gz works end to end" {
	require_root
	require_go
	require_bin "$PA_RECORD" "$PA_CONVERT"
	w=$(wl cpu_split)
	pa_record -q -- "$w" 2 | "$PA_CONVERT" --pprof >cpu.pb.gz
	[ "$(pprof_top_sym cpu.pb.gz)" = hot_a ]
}

@test "convert: --folded lines are 'comm;outer;...;leaf COUNT', root first, sorted" {
	require_bin "$PA_CONVERT"
	perf_capture cpu.data cpu_split 1
	"$PA_CONVERT" -i cpu.data --folded -o cpu.folded
	head -5 cpu.folded
	[ -s cpu.folded ]
	# Every line: frames joined by ';' then one space and a positive count.
	if grep -vE '^[^;]+(;[^;]+)* [1-9][0-9]*$' cpu.folded; then fail "malformed folded lines above"; fi
	# The comm is the first frame, main before work_loop before the leaf.
	grep -qE '^cpu_split;(.*;)?main;work_loop;hot_a [0-9]+$' cpu.folded
	sort -c cpu.folded
	# One line per distinct stack.
	[ -z "$(sed -E 's/ [0-9]+$//' cpu.folded | sort | uniq -d)" ]
}

@test "convert: --folded counts add up to the sample count, hot_a ~70% of them" {
	require_perf
	require_bin "$PA_CONVERT"
	perf_capture cpu.data cpu_split 2
	"$PA_CONVERT" -i cpu.data --folded >cpu.folded
	total=$(awk '{ n += $NF } END { print n + 0 }' cpu.folded)
	a=$(awk '/;hot_a [0-9]+$/ { n += $NF } END { print n + 0 }' cpu.folded)
	echo "total=$total hot_a=$a perf=$(perf_samples_in cpu.data)"
	[ "$total" -eq "$(perf_samples_in cpu.data)" ]
	in_range "$(awk -v a="$a" -v t="$total" 'BEGIN { print 100 * a / t }')" 65 75
}

@test "convert: --folded suffixes kernel frames with _[k]" {
	require_root
	require_bin "$PA_CONVERT"
	perf_capture sys.data syscall_heavy 1
	"$PA_CONVERT" -i sys.data --folded -o sys.folded
	# (syscall_loop itself may be missing: libc's read() keeps no frame, so a frame-
	# pointer walk from inside it skips its caller.)
	grep -qE '^syscall_heavy;(.*;)?main;.*_\[k\];.*_\[k\] [0-9]+$' sys.folded
	# User frames are never suffixed.
	! grep -qE '(main|syscall_loop)_\[k\]' sys.folded
}

@test "convert: --pprof refuses to write binary to a terminal" {
	require_bin "$PA_CONVERT"
	perf_capture cpu.data cpu_split 1
	run script -qec "'$PA_CONVERT' -i cpu.data --pprof" /dev/null </dev/null
	echo "$output"
	[ "$status" -eq 1 ]
	grep -q 'pa-convert: error: refusing to write binary pprof to a terminal' <<<"$output"
	# Nothing binary reached the terminal.
	! grep -qaP '\x1f\x8b' <<<"$output"
}

@test "convert: -o replaces the file only on success (temp + rename)" {
	require_bin "$PA_CONVERT"
	perf_capture cpu.data cpu_split 1
	echo precious >out.pb.gz
	head -c 4096 /dev/urandom >garbage.data
	run "$PA_CONVERT" -i garbage.data --pprof -o out.pb.gz
	[ "$status" -eq 1 ]
	[ "$(cat out.pb.gz)" = precious ]
	# A failed conversion leaves no file where there was none, and no temp files.
	run "$PA_CONVERT" -i garbage.data --folded -o new.folded
	[ "$status" -eq 1 ]
	[ ! -e new.folded ]
	"$PA_CONVERT" -i cpu.data --pprof -o out.pb.gz
	[ "$(od -An -tx1 -N2 out.pb.gz | tr -d ' ')" = 1f8b ]
	ls -A
	[ "$(ls -A | sort | tr '\n' ' ')" = "cpu.data cpu_split garbage.data out.pb.gz " ]
}

@test "convert: a full disk ends pa-convert with one line naming it, and a failure" {
	require_bin "$PA_CONVERT"
	perf_capture cpu.data cpu_split 1
	for fmt in --folded --pprof; do
		run bash -c '"$0" -i cpu.data "$1" >/dev/full' "$PA_CONVERT" "$fmt"
		[ "$status" -eq 1 ] || fail "$fmt: exit $status"
		[ "${#lines[@]}" -eq 1 ] || fail "$fmt: $output"
		[[ $output == "pa-convert: error: writing stdout: No space left on device" ]] ||
			fail "$fmt: $output"
	done
}

@test "convert: reads stdin when it is a pipe" {
	require_bin "$PA_CONVERT"
	# A pipe carries pipe-mode streams (file mode needs seeking, as for perf).
	perf_capture cpu.pipe cpu_split 1 pipe
	cat cpu.pipe | "$PA_CONVERT" --folded >a.folded
	"$PA_CONVERT" -i cpu.pipe --folded >b.folded
	[ -s a.folded ]
	cmp a.folded b.folded
}

@test "convert: --pprof and --folded are both rejected together, and one is required" {
	require_bin "$PA_CONVERT"
	run "$PA_CONVERT" -i /dev/null
	[ "$status" -eq 1 ]
	grep -qE 'pa-convert: error: .*(--pprof|--folded)' <<<"$output"
	run "$PA_CONVERT" -i /dev/null --pprof --folded -o x
	[ "$status" -eq 1 ]
}
