#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# pa-report --focus RE / --ignore RE (pprof's -focus, -ignore) on cpu_split, whose
# samples run main -> work_loop -> hot_a (~70%) or hot_b (~30%): a sample is kept when a
# frame of its stack matches --focus, and dropped when one matches --ignore.

load lib/helpers

# rec: cpu_split under pa-record (999 Hz, 1 s) into p.data.
rec() {
	require_root
	require_bin "$PA_RECORD" "$PA_REPORT"
	w=$(wl cpu_split) || return 1
	pa_record -q -F 999 -o p.data -- "$w" 1 || fail "pa-record failed"
}

# top_sym_focus RE: the top flat entry of p.data with --focus RE.
top_sym_focus() {
	report_flat p.data --focus "$1" | awk '$2 == "[.]" || $2 == "[k]" { print $3; exit }'
}

# samples ARGS: the "# Samples: N" of pa-report -i p.data ARGS.
samples() {
	local out
	out=$("$PA_REPORT" --no-children --sort sym -g none -i p.data "$@") ||
		fail "pa-report $* failed" || return 1
	sed -nE 's/^# Samples: ([0-9]+).*/\1/p' <<<"$out" | head -1 | grep . ||
		fail "no '# Samples:' header in pa-report $*"
}

@test "focus: --focus hot_b keeps only the stacks through hot_b" {
	rec
	# the default report: children, call graphs (hot_a would show in a caller's tree)
	out=$("$PA_REPORT" -i p.data --focus hot_b)
	echo "$out" | head -30
	grep -q 'hot_b' <<<"$out"
	if grep -q 'hot_a' <<<"$out"; then fail "hot_a in a --focus hot_b report"; fi
	# every sample left went through hot_b: hot_b's children is 100%
	grep -qE '^ +100\.00% +[0-9.]+% .*\[\.\] hot_b$' <<<"$out" || fail "hot_b is not 100%"
	[ "$(top_sym_focus hot_b)" = hot_b ]
}

@test "focus: --ignore hot_b drops every stack through hot_b" {
	rec
	out=$("$PA_REPORT" -i p.data --ignore hot_b)
	echo "$out" | head -30
	grep -q 'hot_a' <<<"$out"
	if grep -q 'hot_b' <<<"$out"; then fail "hot_b in an --ignore hot_b report"; fi
}

@test "focus: --focus and --ignore split the samples, and combine" {
	rec
	all=$(samples)
	f=$(samples --focus '^hot_b$')
	i=$(samples --ignore '^hot_b$')
	echo "all $all focus $f ignore $i"
	[ $((f + i)) -eq "$all" ] || fail "$f + $i != $all"
	# hot_b is ~30% of the CPU
	in_range "$(awk -v f="$f" -v a="$all" 'BEGIN { print 100 * f / a }')" 15 45
	# a caller's name matches too: hot_a and hot_b run under work_loop
	a=$(samples --focus '^hot_a$')
	w=$(samples --focus 'work_lo+p')
	[ "$w" -ge $((a + f)) ] && [ "$w" -le "$all" ] || fail "work_loop $w, hot_a $a, hot_b $f"
	# focus, then ignore: work_loop's samples less hot_a's (all of which are under it)
	[ "$(samples --focus work_loop --ignore hot_a)" -eq $((w - a)) ]
}

@test "focus: a bad regex is one error line naming the option, exit 1" {
	require_bin "$PA_REPORT"
	# patterns are compiled before any file is read
	run -1 --separate-stderr "$PA_REPORT" -i nope.data --focus 'hot_('
	echo "$stderr"
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr == "pa-report: error: bad --focus 'hot_(': "?* ]]
	run -1 --separate-stderr "$PA_REPORT" -i nope.data --ignore '[z-a]'
	echo "$stderr"
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr == "pa-report: error: bad --ignore '[z-a]': "?* ]]
}
