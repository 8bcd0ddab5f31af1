#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# perf.data is the contract: Linux perf reads what pa-record writes (file and pipe),
# and pa-report reads what `perf record -g` writes.  Linux perf is the oracle.

load lib/helpers

# record_pa FILE SECONDS [pa-record args]: cpu_split under pa-record into FILE.
record_pa() {
	local f=$1 s=$2 w
	shift 2
	w=$(wl cpu_split) || return 1
	pa_record -q "$@" -o "$f" -- "$w" "$s"
}

@test "compat: perf report reads pa-record's file and names hot_a on top, as pa-report does" {
	require_root
	require_perf
	require_bin "$PA_RECORD" "$PA_REPORT"
	record_pa pa.data 2
	p=$(perf_top_sym pa.data)
	o=$(top_sym pa.data)
	echo "perf: $p  pa-report: $o"
	[ "$p" = hot_a ]
	[ "$o" = "$p" ]
}

@test "compat: perf counts as many samples in pa-record's file as pa-report" {
	require_root
	require_perf
	require_bin "$PA_RECORD" "$PA_REPORT"
	record_pa pa.data 2
	# perf report abbreviates its count ("12K"); perf script prints every sample.
	n=$(perf_samples_in pa.data)
	m=$(samples_in pa.data)
	echo "perf: $n  pa-report: $m"
	[ "$n" -gt 0 ]
	[ "$n" -eq "$m" ]
}

@test "compat: perf report resolves pa-record's call chains (main -> work_loop -> hot_a)" {
	require_root
	require_perf
	require_bin "$PA_RECORD"
	record_pa pa.data 2
	out=$(perf report --stdio -i pa.data --children --sort sym -g none 2>/dev/null)
	echo "$out"
	w=$(awk '$3 == "[.]" && $4 == "work_loop" { sub(/%/, "", $1); print $1; exit }' <<<"$out")
	in_range "${w:-0}" 90 100
}

@test "compat: perf script reads pa-record's file, one line per sample, hot_a most frequent" {
	require_root
	require_perf
	require_bin "$PA_RECORD" "$PA_REPORT"
	record_pa pa.data 2
	perf script -i pa.data -F comm,tid,ip,sym -G >script.txt 2>script.err || { cat script.err; false; }
	[ "$(wc -l <script.txt)" -eq "$(samples_in pa.data)" ]
	top=$(awk '{ print $NF }' script.txt | sort | uniq -c | sort -rn | awk '{ print $2; exit }')
	echo "perf script top leaf: $top"
	[ "$top" = hot_a ]
	grep -q '^ *cpu_split ' script.txt
}

@test "compat: perf report -i - reads pa-record's pipe output and names hot_a on top" {
	require_root
	require_perf
	require_bin "$PA_RECORD" "$PA_REPORT"
	record_pa - 2 >pipe.data
	out=$(perf report --stdio -i - --no-children --sort sym -g none <pipe.data 2>perf.err) ||
		{ cat perf.err; false; }
	p=$(awk '/^#/ || NF == 0 { next } $2 == "[.]" || $2 == "[k]" { print $3; exit }' <<<"$out")
	echo "perf (pipe): $p  pa-report: $(top_sym pipe.data)"
	[ "$p" = hot_a ]
	[ "$(top_sym pipe.data)" = hot_a ]
}

@test "compat: perf script reads pa-record's pipe output" {
	require_root
	require_perf
	require_bin "$PA_RECORD"
	record_pa - 1 | perf script -i - -F comm,ip,sym -G >script.txt 2>script.err || { cat script.err; false; }
	[ "$(wc -l <script.txt)" -gt 30 ]
	grep -q 'hot_a' script.txt
}

@test "compat: perf report --header-only shows hostname, os release, cmdline and event name" {
	require_root
	require_perf
	require_bin "$PA_RECORD"
	record_pa pa.data 1
	out=$(perf report --header-only -i pa.data 2>&1)
	echo "$out"
	grep -qxF "# hostname : $(uname -n)" <<<"$out"
	grep -qxF "# os release : $(uname -r)" <<<"$out"
	grep -qE '^# cmdline : .*pa-record .*cpu_split' <<<"$out"
	grep -qE '^# event : name = cpu-clock' <<<"$out"
	grep -qE '^# arch : ' <<<"$out"
	grep -qE '^# nrcpus online : [0-9]+' <<<"$out"
}

@test "compat: pa-record's file carries the workload's build-id (perf buildid-list)" {
	require_root
	require_perf
	require_bin "$PA_RECORD"
	record_pa pa.data 1
	bid=$(readelf -n "$BATS_TEST_TMPDIR/cpu_split" | sed -nE 's/.*Build ID: ([0-9a-f]+).*/\1/p')
	[ -n "$bid" ]
	out=$(perf buildid-list -i pa.data 2>&1)
	echo "$out"
	grep -qE "^$bid .*cpu_split$" <<<"$out"
}

@test "compat: pa-report reads a perf record -g file and names the top function perf does" {
	require_perf
	require_bin "$PA_REPORT"
	perf_capture perf.data cpu_split 2
	p=$(perf_top_sym perf.data)
	o=$(top_sym perf.data)
	echo "perf: $p  pa-report: $o"
	[ "$p" = hot_a ]
	[ "$o" = "$p" ]
}

@test "compat: pa-report attributes a perf record capture to the same comms as perf" {
	require_perf
	require_bin "$PA_REPORT"
	# perf's COMM (exec) and MMAP2 records can sit in another CPU's buffer than the
	# samples after them: a reader must order records by time, as perf does.
	# syscall_heavy exits to the kernel all the time, which makes that likely.
	perf_capture perf.data syscall_heavy 1
	p=$(perf report --stdio --no-children --sort comm -g none -i perf.data 2>/dev/null |
		awk '/^#/ || NF == 0 { next } { print $1, $2 }')
	o=$("$PA_REPORT" --no-children --sort comm -g none -i perf.data |
		awk '/^#/ || NF == 0 { next } { print $1, $2 }')
	echo "perf:"$'\n'"$p"$'\n'"pa-report:"$'\n'"$o"
	[ -n "$p" ]
	[ "$o" = "$p" ]
}

@test "compat: pa-report counts the samples of a perf record file as perf does" {
	require_perf
	require_bin "$PA_REPORT"
	perf_capture perf.data cpu_split 1
	n=$(perf_samples_in perf.data)
	m=$(samples_in perf.data)
	echo "perf: $n  pa-report: $m"
	[ "$n" -eq "$m" ]
}

@test "compat: pa-report matches perf's hot_a/hot_b percentages within 1 point" {
	require_perf
	require_bin "$PA_REPORT"
	perf_capture perf.data cpu_split 2
	out=$(perf report --stdio --no-children --sort sym -g none -i perf.data 2>/dev/null)
	for s in hot_a hot_b; do
		p=$(awk -v s="$s" '$2 == "[.]" && $3 == s { sub(/%/, "", $1); print $1 }' <<<"$out")
		o=$(overhead_of "$s" perf.data)
		echo "$s: perf $p pa-report $o"
		[ -n "$p" ] || fail "perf report names no $s"
		[ "$o" != 0.00 ] || fail "pa-report names no $s"
		d=$(awk -v a="$p" -v b="$o" 'BEGIN { d = a - b; print (d < 0 ? -d : d) }')
		in_range "$d" 0 1
	done
}

@test "compat: pa-report reads perf record's pipe output and names the top function perf does" {
	require_perf
	require_bin "$PA_REPORT"
	perf_capture perf.pipe cpu_split 2 pipe
	out=$(perf report --stdio --no-children --sort sym -g none -i - <perf.pipe 2>/dev/null)
	p=$(awk '/^#/ || NF == 0 { next } $2 == "[.]" || $2 == "[k]" { print $3; exit }' <<<"$out")
	o=$(top_sym - <perf.pipe)
	echo "perf: $p  pa-report: $o"
	[ "$p" = hot_a ]
	[ "$o" = "$p" ]
}

@test "compat: pa-report names the kernel function perf names on top of syscall_heavy" {
	require_root
	require_perf
	require_bin "$PA_REPORT"
	perf_capture perf.data syscall_heavy 2
	p=$(perf_top_sym perf.data)
	o=$(top_sym perf.data)
	echo "perf: $p  pa-report: $o"
	[ -n "$p" ]
	[ "$o" = "$p" ]
}
