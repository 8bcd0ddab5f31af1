#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# pa-report --diff BASE NEW on two pa-record captures of diff_work: the base run splits
# its CPU evenly between work_a, work_b and work_c, the new one (-b) gives work_b twice
# the iterations (a third of the samples -> half).  The table, and the exit status benchmark scripts
# test: 0 no regression, 2 a function grew past --fail-above, 1 an error.

load lib/helpers

# cap FILE [diff_work args...]: diff_work under pa-record (999 Hz, 1 s) into FILE.
cap() {
	local f=$1 w
	shift
	require_root
	require_bin "$PA_RECORD" "$PA_REPORT"
	w=$(wl diff_work) || return 1
	pa_record -q -F 999 -o "$f" -- "$w" "$@" 1 || fail "pa-record failed on diff_work $*"
}

# row SYM: the table row of [.] SYM in $output (fields: base new delta change nb nn [.] sym dso).
row() {
	awk -v sym="$1" '!/^#/ && $7 == "[.]" && $8 == sym' <<<"$output"
}

# The values of a row without their % signs.
num() {
	tr -d '%' <<<"$1"
}

@test "diff: a slower work_b is the top row, with a positive delta" {
	cap base.data
	cap new.data -b
	run -0 "$PA_REPORT" --diff base.data new.data
	echo "$output"
	grep -qE '^# +Baseline +New +Delta +Change' <<<"$output" || fail "no column header"
	top=$(grep -v '^#' <<<"$output" | grep -m1 .)
	[[ $top == *"[.] work_b "*diff_work ]] || fail "top row: $top"
	read -r b n d _ <<<"$(num "$(row work_b)")"
	# expected 33% -> 50%: +17 points
	awk -v b="$b" -v n="$n" -v d="$d" 'BEGIN { exit !(d >= 8 && b >= 24 && b <= 42 && n >= 42) }' ||
		fail "work_b: base $b new $n delta $d"
	read -r _ _ d _ <<<"$(num "$(row work_a)")"
	# expected 33% -> 25%
	awk -v d="$d" 'BEGIN { exit !(d < 0) }' || fail "work_a delta $d"
}

@test "diff: --fail-above 20 exits 2 and names work_b, one line per regression" {
	cap base.data
	cap new.data -b
	run -2 --separate-stderr "$PA_REPORT" --diff base.data new.data --fail-above 20
	echo "stderr: $stderr"
	[ "${#stderr_lines[@]}" -ge 1 ] || fail "no regression line"
	grep -q '^pa-report: regression: work_b (diff_work): self share ' <<<"$stderr" ||
		fail "work_b not named"
	if grep -v '^pa-report: regression: ' <<<"$stderr"; then fail "other lines on stderr"; fi
	if grep -q work_a <<<"$stderr"; then fail "work_a shrank, yet is called a regression"; fi
	# the table is printed all the same
	[ -n "$(row work_b)" ]
}

@test "diff: a capture diffed with itself exits 0 with --fail-above, even 0" {
	cap base.data
	run -0 --separate-stderr "$PA_REPORT" --diff base.data base.data --fail-above 0
	[ -z "$stderr" ] || fail "stderr: $stderr"
	read -r _ _ d c _ <<<"$(row work_b)"
	[ "$d" = "+0.00%" ] && [ "$c" = "+0.0%" ] || fail "work_b: delta $d change $c"
}

@test "diff: two runs of the same build exit 0 with --fail-above 20" {
	cap base.data
	cap new.data
	run -0 --separate-stderr "$PA_REPORT" --diff base.data new.data --fail-above 20
	echo "$output"
	[ -z "$stderr" ] || fail "stderr: $stderr"
}

@test "diff: --min-samples above every function's samples: no regression" {
	cap base.data
	cap new.data -b
	run -0 --separate-stderr "$PA_REPORT" --diff base.data new.data --fail-above 20 \
		--min-samples 1000000
	[ -z "$stderr" ] || fail "stderr: $stderr"
	[ -n "$(row work_b)" ]
}

@test "diff: --diff-abs compares samples, --sort total inclusive time, --rows cuts" {
	cap base.data
	cap new.data -b
	run -0 "$PA_REPORT" --diff base.data new.data --diff-abs
	echo "$output"
	grep -q '^# Compared: self samples$' <<<"$output"
	# absolute: the baseline and new values are the sample columns
	read -r b n _ _ nb nn _ <<<"$(row work_b)"
	[ "$b" = "$nb" ] && [ "$n" = "$nn" ] || fail "work_b: $(row work_b)"
	run -0 "$PA_REPORT" --diff base.data new.data --sort total -q --rows 3
	echo "$output"
	[ "${#lines[@]}" -eq 3 ] || fail "${#lines[@]} rows, want 3"
	# main runs both workers: its total is the whole capture in both, no change
	[ -z "$(row main)" ] || fail "main's total changed: $(row main)"
	[ -n "$(row work_b)" ]
	run -1 --separate-stderr "$PA_REPORT" --diff base.data new.data --sort sym
	[ "${#stderr_lines[@]}" -eq 1 ]
}

@test "diff: a missing or bad file is one error line naming it, exit 1" {
	require_bin "$PA_REPORT"
	echo "not perf data" >bad.data
	run -1 --separate-stderr "$PA_REPORT" --diff nope.data bad.data
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr == "pa-report: error: cannot open nope.data: "* ]] || fail "$stderr"
	run -1 --separate-stderr "$PA_REPORT" --diff bad.data nope.data
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr == "pa-report: error: bad.data: "* ]] || fail "$stderr"
	run -1 --separate-stderr "$PA_REPORT" --diff bad.data
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr == *"--diff BASE NEW"* ]] || fail "$stderr"
	# a script's --fail-above without --diff must not pass silently
	run -1 --separate-stderr "$PA_REPORT" -i bad.data --fail-above 10
	[ "$stderr" = "pa-report: error: --fail-above goes with --diff BASE NEW" ] || fail "$stderr"
}

@test "diff: captures without an event in common: one line listing both sets" {
	cap base.data
	pa_record -q --offcpu --no-cpu -o off.data -- sleep 0.2 || fail "pa-record --offcpu failed"
	run -1 --separate-stderr "$PA_REPORT" --diff base.data off.data
	echo "$stderr"
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr == "pa-report: error: "*"base.data has cpu-clock; off.data has offcpu-time" ]]
	run -1 --separate-stderr "$PA_REPORT" --diff base.data base.data --event offcpu-time
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr == *"no event 'offcpu-time' in base.data"* ]]
}
