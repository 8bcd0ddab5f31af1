#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# pa-record -e EVENT: sampling on the events perf names (software ones, tracepoints),
# -c, -C and the :u modifier, each event its own attr that Linux perf reads; and the
# hardware events this VM lacks, refused in one line with what exists instead.

load lib/helpers

# event_sym_share FILE EVENT SYM: SYM's self share of EVENT's samples, percent.
event_sym_share() {
	local out
	out=$("$PA_REPORT" --no-children --sort sym -g none --event "$2" -i "$1") ||
		fail "pa-report --event $2 -i $1 failed" || return 1
	awk -v sym="$3" '
		match($0, /^ +[0-9.]+%/) && ($2 == "[.]" || $2 == "[k]") && $3 == sym {
			sub(/%/, "", $1); v += $1
		}
		END { printf "%.2f\n", v + 0 }' <<<"$out"
}

@test "events: -e page-faults puts the faults in the function that touches fresh memory" {
	require_root
	require_bin "$PA_RECORD" "$PA_REPORT"
	w=$(wl fault_touch)
	pa_record -q -e page-faults -o pf.data -- "$w" 2
	share=$(event_sym_share pf.data page-faults touch_pages)
	echo "touch_pages: $share% of page-faults"
	in_range "$share" 80 100 || fail "page faults not in touch_pages"
	# spin() runs as long but faults nothing.
	spin=$(event_sym_share pf.data page-faults spin)
	in_range "$spin" 0 2 || fail "spin has $spin% of the faults"
}

@test "events: perf report names the event and agrees where its samples are" {
	require_root
	require_perf
	require_bin "$PA_RECORD"
	w=$(wl fault_touch)
	pa_record -q -e page-faults -o pf.data -- "$w" 1
	out=$(perf report --stdio --no-children --sort sym -g none -i pf.data 2>&1)
	grep -qE "of event 'page-faults'" <<<"$out" || fail "perf names no page-faults event:"$'\n'"$out"
	top=$(awk '/^#/ || NF == 0 { next } $2 == "[.]" || $2 == "[k]" { print $3; exit }' <<<"$out")
	[ "$top" = touch_pages ] || fail "perf's top symbol is '$top'"
}

@test "events: -e context-switches on a sleeper samples where it sleeps" {
	require_root
	require_bin "$PA_RECORD" "$PA_CONVERT"
	w=$(wl offcpu_sleep)
	pa_record -q -e context-switches -c 1 -o cs.data -- "$w" 2
	out=$("$PA_CONVERT" -i cs.data --folded --event context-switches) || fail "folded failed"
	total=$(awk '{ v += $NF } END { print v + 0 }' <<<"$out")
	sleeps=$(awk '/sleep_thread/ && /nanosleep/ { v += $NF } END { print v + 0 }' <<<"$out")
	echo "switches: $total, in sleep_thread's nanosleep: $sleeps"
	[ "$sleeps" -ge 5 ] || fail "too few switches in the sleeper's nanosleep"
}

@test "events: two events are two attrs, each with its own samples" {
	require_root
	require_perf
	require_bin "$PA_RECORD"
	w=$(wl fault_touch)
	pa_record -q -e cpu-clock,page-faults -o two.data -- "$w" 1
	out=$(perf script -F event -i two.data 2>/dev/null | sort | uniq -c)
	echo "$out"
	grep -qE '[0-9]+ +cpu-clock:' <<<"$out" || fail "no cpu-clock samples"
	grep -qE '[0-9]+ +page-faults:' <<<"$out" || fail "no page-faults samples"
}

@test "events: -c N makes every sample stand for N events" {
	require_root
	require_perf
	require_bin "$PA_RECORD"
	w=$(wl fault_touch)
	pa_record -q -e page-faults -c 64 -o c.data -- "$w" 1
	periods=$(perf script -F period -i c.data 2>/dev/null | sort -u | tr -d ' ')
	[ "$periods" = 64 ] || fail "periods: $periods"
}

@test "events: :u samples user mode only" {
	require_root
	require_bin "$PA_RECORD" "$PA_REPORT"
	w=$(wl fault_touch)
	pa_record -q -e cpu-clock:u -o u.data -- "$w" 1
	k=$(kernel_share u.data)
	in_range "$k" 0 0.5 || fail "kernel frames lead $k% of :u samples"
	out=$(perf script -F event -i u.data 2>/dev/null | sort -u)
	grep -q 'cpu-clock:u' <<<"$out" || fail "event not named cpu-clock:u: $out"
}

@test "events: -C 0 samples on CPU 0 only" {
	require_root
	require_perf
	require_bin "$PA_RECORD"
	[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
	w=$(wl fixed_work)
	"$w" 100000 >/dev/null &
	p1=$!
	"$w" 100000 >/dev/null &
	p2=$!
	track $p1
	track $p2
	pa_record -q -a -C 0 -d 1 -o c0.data
	cpus=$(perf script -F cpu -i c0.data 2>/dev/null | tr -d ' []' | sort -u)
	[ "$cpus" = 000 ] || [ "$cpus" = 0 ] || fail "samples on CPUs: $cpus"
}

@test "events: a tracepoint event samples at each hit, under its stack" {
	require_root
	require_perf
	require_bin "$PA_RECORD" "$PA_CONVERT"
	[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing ||
		skip "tracefs cannot be mounted"
	w=$(wl offcpu_sleep)
	pa_record -q -e sched:sched_switch -o tp.data -- "$w" 2
	out=$("$PA_CONVERT" -i tp.data --folded --event sched:sched_switch) || fail "folded failed"
	sleeps=$(awk '/sleep_thread/ && /nanosleep/ { v += $NF } END { print v + 0 }' <<<"$out")
	echo "sched_switch hits in sleep_thread's nanosleep: $sleeps"
	[ "$sleeps" -ge 5 ] || fail "too few"
	# Linux perf reads the capture and names the event.
	out=$(perf report --stdio --no-children -g none -i tp.data 2>&1) || fail "perf report failed: $out"
	grep -q "of event 'sched:sched_switch'" <<<"$out" || fail "perf names no sched:sched_switch: $out"
}

@test "events: a hardware event on this VM is one line naming what exists, and no file" {
	require_root
	require_bin "$PA_RECORD"
	[ -d /sys/bus/event_source/devices/cpu ] && skip "this machine has a hardware PMU"
	w=$(wl fixed_work)
	run -1 pa_record -e cycles -o hw.data -- "$w" 10
	echo "$output"
	[ "${#lines[@]}" -eq 1 ] || fail "more than one line"
	grep -q "cannot open cycles" <<<"$output" || fail "does not name the event"
	grep -q "no hardware PMU" <<<"$output" || fail "does not say why"
	grep -q "cpu-clock" <<<"$output" || fail "does not list what exists"
	[ ! -e hw.data ] || fail "hw.data left behind"
}

@test "events: an unknown event is refused before anything runs" {
	require_bin "$PA_RECORD"
	run -1 "$PA_RECORD" -e no-such-event -o x.data -- true
	echo "$output"
	grep -q "no-such-event" <<<"$output" || fail "does not name the event"
	[ ! -e x.data ] || fail "x.data left behind"
}

@test "events: -C of a CPU that is not online, or not a CPU list, is one line and no file" {
	require_root
	require_bin "$PA_RECORD"
	run -1 pa_record -a -C 4000 -d 1 -o c.data
	echo "$output"
	grep -q "names no online CPU" <<<"$output" || fail "not said"
	run -1 pa_record -a -C 1-x -d 1 -o c.data
	grep -q "bad -C '1-x'" <<<"$output" || fail "not said: $output"
	[ ! -e c.data ] || fail "c.data left behind"
}
