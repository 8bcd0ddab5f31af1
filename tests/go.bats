#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Go binaries, stripped or not: names, files, lines and inlined calls from .gopclntab
# (the table the Go runtime keeps for its own tracebacks, which `-ldflags="-s -w"`
# leaves in place), checked against what the unstripped build's DWARF says; perf
# naming the frames through the build-id cache's copy; cgo stacks.  Built with
# Debian 12's Go 1.19, with sid's current Go and with bullseye's Go 1.15 (lib/sid_go:
# skipped with the reason only when they cannot be fetched).  The Go 1.16-1.17 format,
# for which no Debian release still serves a toolchain, is generated in
# tests/unit/test_gopclntab.c, as are the others.

load lib/helpers
load lib/go
load lib/sid_go

HOT_SRC=$PA_ROOT/tests/workloads/go/hot/main.go
CGO_SRC=$PA_ROOT/tests/workloads/go/cgo
GOSYM_CMP=$PA_BUILD/tests/tools/gosym-cmp
PPROF_DUMP=$PA_BUILD/tests/pprof-dump
GO119=/usr/bin/go

setup_file() {
	export DEBUGINFOD_URLS=
}

# line_of FILE TEXT: the number of FILE's first line holding TEXT.
line_of() {
	grep -nF -- "$2" "$1" | head -1 | cut -d: -f1 | grep . || fail "no '$2' in $1"
}

# rec_go ARGS...: pa-record of the command ARGS into pa.data, its build-id cache in
# ./.debug (HOME is the test's directory).
rec_go() {
	HOME=$PWD pa_record -F 499 -o pa.data -- "$@" >rec.out 2>rec.err ||
		fail "pa-record failed: $(grep -v '^libbpf' rec.err | tail -3)"
}

# folded: pa-convert's folded stacks of pa.data into folded.txt.
folded() {
	HOME=$PWD "$PA_CONVERT" -i pa.data --folded >folded.txt 2>conv.err ||
		fail "pa-convert failed: $(cat conv.err)"
}

# weight RE: the samples of folded.txt whose stack matches RE.
weight() {
	awk -v re="$1" '{ n = $NF; $NF = ""; if ($0 ~ re) t += n } END { print t + 0 }' folded.txt
}

# cmp_dwarf WITH_DWARF [WITHOUT]: gosym-cmp's verdict: every name, >= 99.5% of lines.
cmp_dwarf() {
	local out names lines
	out=$("$GOSYM_CMP" "$@" 2>cmp.err) || fail "gosym-cmp $* failed: $(cat cmp.err)" || return 1
	echo "$*: $out"
	names=$(sed -nE 's/^names [0-9]+\/[0-9]+ \(([0-9.]+)%\).*/\1/p' <<<"$out")
	lines=$(sed -nE 's/.* lines [0-9]+\/[0-9]+ \(([0-9.]+)%\).*/\1/p' <<<"$out")
	grep -qE 'in Go functions [1-9][0-9]{3,}' <<<"$out" || fail "too few addresses compared" || return 1
	[ "$names" = 100.000 ] || fail "names agree on $names% only: $(head -20 cmp.err)" || return 1
	in_range "$lines" 99.5 100 || fail "lines agree on $lines% only: $(head -20 cmp.err)"
}

# agree_all GO: hot built plain, -w, -s -w and PIE by GO; .gopclntab against DWARF.
agree_all() {
	local go=$1
	go_build "$go" "$HOT_SRC" plain hot || return 1
	go_build "$go" "$HOT_SRC" w hot-w || return 1
	go_build "$go" "$HOT_SRC" sw hot-sw || return 1
	go_build "$go" "$HOT_SRC" pie hot-pie || return 1
	readelf -S hot-sw | grep -q '\.symtab' && fail "-s left a .symtab"
	cmp_dwarf hot hot-sw || return 1
	cmp_dwarf hot hot-w || return 1
	cmp_dwarf hot-pie || return 1
	# cgo (external linking): the Go part of a binary that is half C.
	go_build "$go" "$CGO_SRC" plain cgo || return 1
	cmp_dwarf cgo
}

# hot_named GO VARIANT: a recording of hot built by GO in VARIANT names main.hotLeaf
# on top and main.warmMid, each near its share (70% and 25% of the samples).
hot_named() {
	local top hot warm
	go_build "$1" "$HOT_SRC" "$2" hot || return 1
	rec_go ./hot 2 || return 1
	top=$(HOME=$PWD top_sym pa.data) || return 1
	hot=$(HOME=$PWD overhead_of main.hotLeaf pa.data) || return 1
	folded || return 1
	warm=$(weight 'main\.warmMid')
	echo "$1 $2: top $top, main.hotLeaf $hot%, main.warmMid $warm of $(weight .) samples"
	[ "$top" = main.hotLeaf ] || fail "top is $top: $(HOME=$PWD report_flat pa.data | head -20)"
	in_range "$hot" 55 85 || return 1
	in_range "$(awk -v w="$warm" -v a="$(weight .)" 'BEGIN { print 100 * w / a }')" 12 40
}

@test "go: names, files and lines of every line-table address agree with DWARF (Go 1.19: plain, -w, -s -w, PIE, cgo)" {
	require_bin "$GOSYM_CMP"
	agree_all "$GO119"
}

@test "go: the same with sid's current Go (1.20+ table format)" {
	require_bin "$GOSYM_CMP"
	sid_go
	agree_all "$SID_GO"
}

@test "go: Go 1.15 (Debian bullseye), the Go 1.2-1.15 table format: plain, -s -w, cgo" {
	require_bin "$GOSYM_CMP"
	sid_go bullseye
	go_build "$SID_GO" "$HOT_SRC" plain hot
	go_build "$SID_GO" "$HOT_SRC" sw hot-sw
	cmp_dwarf hot hot-sw
	go_build "$SID_GO" "$CGO_SRC" plain cgo
	cmp_dwarf cgo
}

@test "go: a stripped cgo PIE of Go 1.19, whose table has no section of its own, found by its header" {
	require_bin "$GOSYM_CMP"
	go_build "$GO119" "$CGO_SRC" pie cgo-pie
	strip -o cgo-pie-s cgo-pie
	readelf -SW cgo-pie-s | grep -q gopclntab && fail "the linker gave the table a section"
	cmp_dwarf cgo-pie cgo-pie-s
}

@test "go: a stripped Go 1.19 binary (-s -w) is named, main.hotLeaf on top" {
	require_root
	require_bin "$PA_RECORD" "$PA_REPORT" "$PA_CONVERT"
	hot_named "$GO119" sw
}

@test "go: sid's Go, stripped and PIE: named, main.hotLeaf on top" {
	require_root
	require_bin "$PA_RECORD" "$PA_REPORT" "$PA_CONVERT"
	sid_go
	hot_named "$SID_GO" sw
	rm -f pa.data
	# Stripped and PIE at once.
	go_build "$SID_GO" "$HOT_SRC" pie hot-pie
	strip -o hot hot-pie
	rec_go ./hot 2
	[ "$(HOME=$PWD top_sym pa.data)" = main.hotLeaf ]
}

@test "go: inlined calls of a stripped binary are inline frames, at their lines" {
	require_root
	require_bin "$PA_RECORD" "$PA_CONVERT" "$PPROF_DUMP"
	local inner outer out
	go_build "$GO119" "$HOT_SRC" sw hot
	rec_go ./hot 2
	folded
	inner=$(weight 'main\.warmMid;main\.inlinedOuter_\[i\];main\.inlinedInner_\[i\]')
	echo "warmMid > inlinedOuter > inlinedInner: $inner of $(weight .)"
	[ "$inner" -gt 0 ] || fail "no inlined frames: $(sort -k2 -n folded.txt | tail -5)"
	HOME=$PWD "$PA_CONVERT" -i pa.data --pprof -o p.pb.gz || fail "pa-convert --pprof failed"
	out=$("$PPROF_DUMP" p.pb.gz) || fail "pprof-dump failed"
	inner=$(line_of "$HOT_SRC" 'return x ^ (x >> 7)')
	outer=$(line_of "$HOT_SRC" 'return inlinedInner(x) * mulK')
	# One location, three lines: inlinedInner at its body, inlinedOuter at its call of
	# it, warmMid at its call of inlinedOuter.
	grep -qE "main\.inlinedInner .*main\.go:$inner\b" <<<"$out" ||
		fail "no main.inlinedInner at main.go:$inner: $(grep -m5 inlined <<<"$out")"
	grep -qE "main\.inlinedOuter .*main\.go:$outer\b" <<<"$out" ||
		fail "no main.inlinedOuter at main.go:$outer: $(grep -m5 inlined <<<"$out")"
}

@test "go: perf report names a stripped binary's frames from the build-id cache's copy" {
	require_root
	require_perf
	require_bin "$PA_RECORD"
	local bid top copy
	go_build "$GO119" "$HOT_SRC" sw hot
	rec_go ./hot 2
	bid=$(perf buildid-list -i pa.data 2>/dev/null | awk '$2 ~ /\/hot$/ { print $1 }')
	echo "hot's build-id in the capture: $bid"
	[[ $bid == 6730* ]] || fail "hot has no derived build-id ('g0...'): $bid"
	copy=.debug/.build-id/${bid:0:2}/${bid:2}/elf
	readelf -s "$copy" | grep -q ' main\.hotLeaf$' || fail "the cached copy has no symbol main.hotLeaf"
	# Past the ELF header (new section headers), the original's bytes, unchanged.
	cmp -i 64 -n $(($(stat -c %s hot) - 64)) hot "$copy" ||
		fail "the copy differs from hot within hot's bytes"
	top=$(HOME=$PWD perf_top_sym pa.data)
	[ "$top" = main.hotLeaf ] || fail "perf's top is $top"
}

@test "go: cgo stacks run Go -> C -> Go in one stack" {
	require_root
	require_bin "$PA_RECORD" "$PA_CONVERT"
	local all both
	go_build "$GO119" "$CGO_SRC" sw cgo
	rec_go ./cgo 2
	folded
	all=$(weight .)
	both=$(weight 'main\.main;.*c_hot;.*main\.goCallback')
	echo "main.main > c_hot > main.goCallback: $both of $all"
	grep -E 'c_hot' folded.txt | sort -k2 -n | tail -3
	in_range "$(awk -v b="$both" -v a="$all" 'BEGIN { print 100 * b / a }')" 25 100
	[ "$(weight 'main\.main;.*c_hot( |$)')" -gt 0 ] || fail "no main.main > c_hot stack"
}
