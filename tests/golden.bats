#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Golden outputs: what pa-report, pa-convert --folded and pa-convert --pprof print for
# one deterministic capture, compared line for line with tests/golden/expected/MODE.txt
# (stdout, then what the command wrote on stderr).  The capture is written by
# tests/golden/gen-golden.c at the addresses of functions, inlined code and call sites
# of the fixture binaries in tests/golden/fixture/; see tests/golden/README.md.
#
# Only what legitimately differs between machines and checkouts is normalized: the
# build directory ($PA_BUILD -> @BUILD@) and the fixtures' build-ids (@EXE_BUILD_ID@,
# @LIB_BUILD_ID@).  HOME is the test's tmpdir (no ~/.debug), debuginfod is off.
#
# After an intended change of output, rewrite the expected files, then review the diff:
#   UPDATE_GOLDEN=1 bats tests/golden.bats

load lib/helpers

GOLDEN_DIR=$PA_ROOT/tests/golden
GOLDEN_EXP=$GOLDEN_DIR/expected
GOLDEN_BIN=$PA_BUILD/tests/golden
GEN_GOLDEN=$PA_BUILD/tests/gen-golden
PPROF_DUMP=$PA_BUILD/tests/pprof-dump
JIT_PID=4242424 # gen-golden.c's

# These tests start no process that could outlive them: no walk over /proc after each.
teardown() {
	:
}

# golden_capture: golden.data in the tmpdir, its JIT's map in $HOME/.debug/jit (where
# pa-report looks when /tmp has none), and a fixed mtime (pprof's time_nanos).
golden_capture() {
	[ "$(uname -m)" = x86_64 ] || skip "the expected outputs are x86-64 code's"
	require_bin "$PA_REPORT" "$PA_CONVERT" "$GEN_GOLDEN" "$PPROF_DUMP" \
		"$GOLDEN_BIN/golden_main" "$GOLDEN_BIN/libgolden.so" || return 1
	if [ -e "/tmp/perf-$JIT_PID.map" ]; then
		fail "/tmp/perf-$JIT_PID.map exists: pa-report would name the JIT's code from it"
		return 1
	fi
	export HOME=$BATS_TEST_TMPDIR/home
	unset DEBUGINFOD_URLS
	mkdir -p "$HOME/.debug/jit"
	"$GEN_GOLDEN" golden.data "$GOLDEN_BIN/golden_main" "$GOLDEN_BIN/libgolden.so" \
		"$HOME/.debug/jit/perf-$JIT_PID.map" || fail "gen-golden failed" || return 1
	touch -d @1700000000 golden.data
}

# sed_escape STRING: STRING as a literal in a sed pattern.
sed_escape() {
	sed -e 's/[][\.*^$|/]/\\&/g' <<<"$1"
}

build_id() {
	readelf -n "$1" | sed -nE 's/.*Build ID: ([0-9a-f]+).*/\1/p'
}

# golden_check MODE CMD ARGS...: CMD's output, normalized, against expected/MODE.txt
# (rewritten instead with UPDATE_GOLDEN=1).  CMD must exit 0.
golden_check() {
	local mode=$1 exp=$GOLDEN_EXP/$1.txt rc=0
	shift
	"$@" >"$mode.out" 2>"$mode.err" || rc=$?
	if [ $rc -ne 0 ]; then
		cat "$mode.err" >&2
		fail "$* exited $rc"
		return 1
	fi
	if [ -s "$mode.err" ]; then
		echo "--- stderr ---" >>"$mode.out"
		cat "$mode.err" >>"$mode.out"
	fi
	sed -e "s/$(sed_escape "$PA_BUILD")/@BUILD@/g" \
		-e "s/$(build_id "$GOLDEN_BIN/golden_main")/@EXE_BUILD_ID@/g" \
		-e "s/$(build_id "$GOLDEN_BIN/libgolden.so")/@LIB_BUILD_ID@/g" \
		"$mode.out" >"$mode.txt"
	if [ "${UPDATE_GOLDEN:-}" = 1 ]; then
		cp "$mode.txt" "$exp"
		return 0
	fi
	[ -f "$exp" ] || fail "no $exp: make it with UPDATE_GOLDEN=1 bats tests/golden.bats" || return 1
	diff -u "$exp" "$mode.txt" || fail "$mode: output differs from $exp (diff above)"
}

# The options every run shares: no debuginfod, whatever the environment says.
report() {
	"$PA_REPORT" -i golden.data --debuginfod "" "$@"
}

convert() {
	"$PA_CONVERT" -i golden.data --debuginfod "" "$@"
}

# pprof ARGS...: pa-convert --pprof, decoded as text.
pprof() {
	convert --pprof -o golden.pb.gz "$@" && "$PPROF_DUMP" golden.pb.gz
}

@test "golden: the fixtures come from the compiler the expected outputs were made with" {
	golden_capture
	local want=$GOLDEN_EXP/toolchain.txt have
	have=$(for f in golden_main libgolden.so; do
		echo "$f: $(readelf -p .comment "$GOLDEN_BIN/$f" | sed -nE 's/^ +\[ *[0-9a-f]+\] +//p')"
	done)
	if [ "${UPDATE_GOLDEN:-}" = 1 ]; then
		echo "$have" >"$want"
		return 0
	fi
	[ "$have" = "$(cat "$want")" ] ||
		fail "fixtures built by: $have"$'\n'"expected outputs made with: $(cat "$want")"$'\n'"addresses, inlining and lines differ between compilers: regenerate with UPDATE_GOLDEN=1 and review the diff"
}

@test "golden: a zstd-compressed capture (-z) reports, folds and converts the same" {
	golden_capture
	plain=$(stat -c %s golden.data)
	GOLDEN_ZSTD=1 golden_capture
	# Compressed for real: a good deal smaller than the same records plain.
	[ $(($(stat -c %s golden.data) * 2)) -lt "$plain" ] || fail "golden.data not compressed"
	golden_check report-default report
	golden_check report-callee report -g callee
	golden_check folded convert --folded
	golden_check pprof pprof
}

@test "golden: gen-golden writes the same capture twice" {
	golden_capture
	mv golden.data first.data
	golden_capture
	cmp first.data golden.data
}

@test "golden: pa-report (children, caller graph, both events)" {
	golden_capture
	golden_check report-default report
}

@test "golden: pa-report --no-children -g none" {
	golden_capture
	golden_check report-no-children-flat report --no-children -g none
}

@test "golden: pa-report --no-children -g caller" {
	golden_capture
	golden_check report-no-children-caller report --no-children -g caller
}

@test "golden: pa-report -g callee" {
	golden_capture
	golden_check report-callee report -g callee
}

@test "golden: pa-report --sort pid,comm,dso,sym" {
	golden_capture
	golden_check report-sort-pid-comm-dso-sym report --sort pid,comm,dso,sym
}

@test "golden: pa-report --sort dso" {
	golden_capture
	golden_check report-sort-dso report --sort dso
}

@test "golden: pa-report --no-inline" {
	golden_capture
	golden_check report-no-inline report --no-inline
}

@test "golden: pa-report --no-demangle" {
	golden_capture
	golden_check report-no-demangle report --no-demangle
}

@test "golden: pa-report --event offcpu-time" {
	golden_capture
	golden_check report-offcpu report --event offcpu-time
}

@test "golden: pa-report --event offcpu-time --no-children --sort comm,state,sym" {
	golden_capture
	golden_check report-offcpu-state report --event offcpu-time --no-children --sort comm,state,sym
}

@test "golden: pa-report --percent-limit 5" {
	golden_capture
	golden_check report-percent-limit-5 report --percent-limit 5
}

@test "golden: pa-convert --folded" {
	golden_capture
	golden_check folded convert --folded
}

@test "golden: pa-convert --folded --no-inline" {
	golden_capture
	golden_check folded-no-inline convert --folded --no-inline
}

@test "golden: pa-convert --folded --event offcpu-time (nanoseconds)" {
	golden_capture
	golden_check folded-offcpu convert --folded --event offcpu-time
}

@test "golden: pa-convert --pprof" {
	golden_capture
	golden_check pprof pprof
}

@test "golden: pa-convert --pprof --no-inline" {
	golden_capture
	golden_check pprof-no-inline pprof --no-inline
}
