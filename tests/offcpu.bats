#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# pa-record --offcpu on real workloads (real BPF on sched_switch, needs root): where
# blocked time lands, how much of it, what perf makes of it, and what the threshold
# and the state filter change.  One observable fact per test.

load lib/helpers

# offcpu_ns FILE SYM [KFRAME_RE]: nanoseconds of offcpu-time whose stack holds frame
# SYM (and, with KFRAME_RE, a kernel frame matching it), from pa-convert --folded,
# whose offcpu-time counts are nanoseconds.
offcpu_ns() {
	local out
	out=$("$PA_CONVERT" -i "$1" --folded --event offcpu-time) ||
		fail "pa-convert --folded --event offcpu-time -i $1 failed" || return 1
	awk -v sym="$2" -v kre="${3:-}" '
		{
			n = $NF; stack = $0; sub(/ [0-9]+$/, "", stack)
			k = split(stack, f, ";"); hit = 0; kern = (kre == "")
			for (i = 2; i <= k; i++) {
				if (f[i] == sym) hit = 1
				if (kre != "" && f[i] ~ /_\[k\]$/ && f[i] ~ kre) kern = 1
			}
			if (hit && kern) v += n
		}
		END { printf "%.0f\n", v + 0 }' <<<"$out"
}

# periods FILE: the period of every offcpu-time sample, one per line, as perf reads them.
offcpu_periods() {
	perf script -F event,period -i "$1" 2>/dev/null | awk '$2 == "offcpu-time:" { print $1 }'
}

# ratio A B: A / B with 3 decimals.
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f\n", b ? a / b : 0 }'
}

# rec_ns FILE: how long the recording whose messages FILE holds ran, in nanoseconds
# (from its summary line's seconds, two decimals).
rec_ns() {
	sed -nE 's/.* samples, [0-9]+ lost, ([0-9.]+) s, wrote .*/\1/p' "$1" |
		awk '{ printf "%d\n", $1 * 1e9 } END { exit !NR }' ||
		fail "no summary line in $(cat "$1")"
}

# record_sleep [pa-record args...]: offcpu_sleep 4 (20 sleeps of 200 ms) under
# pa-record -v --offcpu into p.data, pa-record's messages in rec.err (printed, so a
# failing test shows them); its "slept_ns N" line goes to slept.  Twenty sleeps, not
# ten: a sleep whose switch-in the kernel did not trace (pa-record -v counts them)
# and that lost its stack then moves the total by 5%, inside the tests' 10%.
record_sleep() {
	local w
	w=$(wl offcpu_sleep) || return 1
	pa_record -v --offcpu "$@" -o p.data -- "$w" 4 >wl.out 2>rec.err ||
		fail "pa-record --offcpu $* failed: $(cat rec.err)" || return 1
	cat rec.err
	sed -nE 's/^slept_ns ([0-9]+) .*/\1/p' wl.out >slept
	[ -s slept ] || fail "offcpu_sleep printed no slept_ns line"
}

@test "offcpu: nanosleep time lands on sleeper() within 10% of the real sleep time" {
	require_root
	record_sleep
	got=$(offcpu_ns p.data sleeper)
	want=$(cat slept)
	echo "off-CPU under sleeper: $got ns, slept: $want ns"
	in_range "$(ratio "$got" "$want")" 0.90 1.10
}

@test "offcpu: a thread that wakes on another CPU is counted once" {
	require_root
	[ "$(nproc)" -ge 2 ] || skip "needs two CPUs"
	w=$(wl offcpu_sleep)
	pa_record --offcpu -o p.data -- "$w" 4 migrate >wl.out || fail "pa-record --offcpu failed"
	read -r slept calls moved < <(awk '{ print $2, $4, $6 }' wl.out)
	got=$(offcpu_ns p.data sleeper)
	echo "slept $slept ns in $calls sleeps, $moved of them woke on another CPU; recorded $got ns"
	[ "$moved" -ge $((calls / 2)) ] || fail "the sleeper did not migrate ($moved of $calls)"
	in_range "$(ratio "$got" "$slept")" 0.90 1.10
}

@test "offcpu: CPU samples of the same capture land on spinner()" {
	require_root
	record_sleep
	# With its children: a sample taken in the kernel, on the way back from an
	# interrupt, still has spinner() under it.
	out=$("$PA_REPORT" -i p.data --event cpu-clock --children --sort sym -g none)
	pct=$(awk '$3 == "[.]" && $4 == "spinner" { sub(/%/, "", $1); print $1 }' <<<"$out")
	echo "$out" | head -20
	in_range "${pct:-0}" 90 100
}

@test "offcpu: the sleep keeps its kernel path (do_nanosleep) above sleeper()" {
	require_root
	record_sleep
	got=$(offcpu_ns p.data sleeper 'nanosleep')
	all=$(offcpu_ns p.data sleeper)
	echo "under sleeper(): $all ns, with nanosleep kernel frames: $got ns"
	# A stretch whose switch-in the tracepoint missed has no kernel stack (rseq,
	# sys_exit): one in twenty on a bad run, so not all of it, but nearly.
	in_range "$(ratio "$got" "$all")" 0.80 1.00
}

@test "offcpu: mutex wait is under take_lock() with futex kernel frames above it" {
	require_root
	w=$(wl offcpu_mutex)
	pa_record -q --offcpu -o p.data -- "$w" 2
	all=$(offcpu_ns p.data take_lock)
	futex=$(offcpu_ns p.data take_lock 'futex')
	echo "under take_lock: $all ns, with futex kernel frames: $futex ns"
	# Two threads taking turns holding 10 ms each: well over 0.3 s of waiting.
	[ "$futex" -ge 300000000 ] || fail "only $futex ns of futex wait under take_lock"
	in_range "$(ratio "$futex" "$all")" 0.95 1.0
	# The holder's spinning is CPU time, never off-CPU time.
	[ "$(offcpu_ns p.data hold_lock)" -eq 0 ] || fail "off-CPU time under hold_lock()"
}

@test "offcpu: pipe read blocking time is under wait_for_data() with pipe_read above it" {
	require_root
	w=$(wl offcpu_pipe)
	pa_record -q --offcpu -o p.data -- "$w" 2
	got=$(offcpu_ns p.data wait_for_data 'pipe_read')
	echo "under wait_for_data: $got ns"
	# The reader waits for a byte every 50 ms for 2 s: nearly all of it blocked.
	in_range "$(ratio "$got" 2000000000)" 0.85 1.05
}

@test "offcpu: perf report -i shows offcpu-time with the sleep under sleeper()" {
	require_root
	require_perf
	record_sleep
	out=$(perf report -i p.data --stdio --children --sort sym -g none 2>/dev/null) ||
		fail "perf report -i failed"
	# In the offcpu-time section: its event count and sleeper's children percentage.
	read -r count pct < <(awk '
		/^# Samples: .* of event / { sec = ($0 ~ /offcpu-time/) }
		sec && /^# Event count/ { c = $NF }
		sec && $3 == "[.]" && $4 == "sleeper" { sub(/%/, "", $1); p = $1 }
		END { print c + 0, p + 0 }' <<<"$out")
	echo "perf: offcpu-time count $count, sleeper children $pct%"
	got=$(awk -v c="$count" -v p="$pct" 'BEGIN { printf "%.0f\n", c * p / 100 }')
	in_range "$(ratio "$got" "$(cat slept)")" 0.90 1.10
	# perf script sees the same stretches: ~200 ms periods, summed as ns.
	n=$(offcpu_periods p.data | awk '$1 > 190000000 && $1 < 260000000' | wc -l)
	[ "$n" -ge 8 ] || fail "perf script shows $n offcpu-time samples of ~200 ms, want >= 8"
}

@test "offcpu: --offcpu-min drops stretches shorter than the threshold" {
	require_root
	require_perf
	w=$(wl offcpu_pipe)
	# Reader and writer each block ~50 ms per byte.
	pa_record -q --offcpu -o low.data -- "$w" 2
	pa_record -q --offcpu --offcpu-min 100ms -o high.data -- "$w" 2
	low=$(offcpu_periods low.data | awk '$1 > 30000000 && $1 < 100000000' | wc -l)
	short=$(offcpu_periods high.data | awk '$1 < 100000000' | wc -l)
	echo "default: $low stretches of 30-100 ms; --offcpu-min 100ms: $short below 100 ms"
	[ "$low" -ge 40 ] || fail "only $low 50 ms stretches recorded with the default threshold"
	[ "$short" -eq 0 ] || fail "$short stretches under --offcpu-min 100ms were recorded"
}

@test "offcpu: --offcpu-state io leaves out sleeps; the default labels them sleep" {
	require_root
	record_sleep
	out=$("$PA_REPORT" -i p.data --event offcpu-time --no-children --sort state -g none)
	echo "$out"
	grep -qE '^ +[0-9.]+% +sleep *$' <<<"$out" || fail "no 'sleep' state entry"
	record_sleep --offcpu-state io
	# A sleep is a stretch in nanosleep: sleeper() may also wait in D state for a page
	# of its code or stack on a loaded machine, which is I/O and rightly recorded.
	[ "$(offcpu_ns p.data sleeper nanosleep)" -eq 0 ] || fail "--offcpu-state io recorded a sleep"
}

@test "offcpu: time blocked in cudaStreamSynchronize is labelled gpu-wait, other sleeps sleep" {
	require_root
	w=$(wl cuda_sync) || return 1
	pa_record -q --offcpu -o p.data -- "$w" 10 || fail "pa-record --offcpu failed"
	run -0 "$PA_REPORT" -i p.data --event offcpu-time --no-children --sort state -g none
	echo "$output"
	# 10 x 100 ms in each: half and half, give or take a late wakeup.
	grep -qE '^ +(49|50|51)\.[0-9]+% +gpu-wait *$' <<<"$output" || fail "no gpu-wait half"
	grep -qE '^ +(49|50|51)\.[0-9]+% +sleep *$' <<<"$output" || fail "no sleep half"
	# The label comes from the caller: train_step's stacks, and only they.
	"$PA_CONVERT" -i p.data --pprof -o p.pb.gz || fail "pa-convert failed"
	go tool pprof -sample_index=offcpu -tagfocus=thread_state=gpu-wait -top -cum p.pb.gz \
		>top.txt 2>&1 || fail "$(cat top.txt)"
	grep -q ' train_step$' top.txt || fail "$(cat top.txt)"
	grep -q ' load_batch$' top.txt && fail "load_batch is not waiting on the GPU: $(cat top.txt)"
	# The GPU summary says how long the CPU waited: 10 x 100 ms.
	run -0 "$PA_REPORT" -i p.data --event gpu
	[[ $output =~ "# CPU waiting on the GPU: "(0\.9[5-9]|1\.0[0-9])[0-9]*" s off the CPU" ]] ||
		fail "$output"
}

@test "offcpu: preemption is left out by default and labelled preempted with all" {
	require_root
	require_bin "$PA_WL/cpu_split"
	command -v taskset >/dev/null || skip "taskset not installed"
	w=$(wl offcpu_sleep)
	hog=$(wl cpu_split)
	# spinner() shares CPU 0 with a CPU hog: it is preempted every few ms.  The hog
	# outlasts both recordings (each takes a second or more to load its BPF before
	# its 1 s workload); teardown ends it.
	taskset -c 0 "$hog" 30 &
	track $!
	taskset -c 0 "$PA_RECORD" -q --offcpu -o def.data -- "$w" 1 >/dev/null
	taskset -c 0 "$PA_RECORD" -q --offcpu --offcpu-state all -o all.data -- "$w" 1 >/dev/null
	def=$("$PA_REPORT" -i def.data --event offcpu-time --no-children --sort state -g none)
	all=$("$PA_REPORT" -i all.data --event offcpu-time --no-children --sort state -g none)
	echo "$all"
	if grep -qE '^ +[0-9.]+% +preempted' <<<"$def"; then fail "preempted time recorded by default"; fi
	grep -qE '^ +[0-9.]+% +preempted' <<<"$all" || fail "no preempted entry with --offcpu-state all"
	[ "$(offcpu_ns all.data spinner)" -gt 0 ] || fail "no preempted time under spinner()"
}

# The off-CPU methods as pa-record -v names them, cheapest first (PA_RECORD_SWITCH).
declare -gA method_name=(
	[task-work]="tp_btf/sched_switch, user stacks from a task_work"
	[rseq]="tp_btf/sched_switch, rseq threads' user stacks at tp_btf/rseq_update"
	[sys-exit]="tp_btf/sched_switch, sleeps' user stacks at tp_btf/sys_exit"
	[switch-out]="tp_btf/sched_switch, user stacks at switch-out"
	[raw-tp]="raw_tp/sched_switch, stacks at switch-out"
)

# method_used: the off-CPU method pa-record -v reported in rec.err.
method_used() {
	sed -nE 's/^pa-record: off-CPU time from (.*)$/\1/p' rec.err
}

# use_method M: record_sleep with method M forced.  Skips, quoting the kernel's
# words, only where pa-record reports that this kernel refused M; fails where it
# used another method without saying why.
use_method() {
	local m=$1 why
	PA_RECORD_SWITCH=$m record_sleep || return 1
	why=$(grep -F "pa-record: off-CPU: ${method_name[$m]}" rec.err | grep -F refused | tail -1)
	if [ "$(method_used)" != "${method_name[$m]}" ]; then
		[ -n "$why" ] || fail "$m not used and not refused: $(method_used)" || return 1
		skip "this kernel refuses the $m method: $(sed -E 's/.*refused \((.*)\); trying.*/\1/' <<<"$why")"
	fi
}

@test "offcpu: pa-record uses the first method the kernel loads, and says why it passed the others" {
	require_root
	record_sleep
	used=$(method_used)
	[ -n "$used" ] || fail "pa-record -v did not say which method it used"
	for m in task-work rseq sys-exit switch-out raw-tp; do
		[ "${method_name[$m]}" = "$used" ] && break
		grep -F "pa-record: off-CPU: ${method_name[$m]}" rec.err | grep -qE 'refused \(.+\)' ||
			fail "$m was passed over without a refusal: $(grep 'off-CPU' rec.err)"
	done
	[ "${method_name[$m]}" = "$used" ] || fail "unknown method reported: $used"
}

@test "offcpu: the user stack comes from a task_work where the kernel loads that method" {
	require_root
	use_method task-work
	if grep -q 'have no user stack' rec.err; then fail "$(grep 'no user stack' rec.err)"; fi
	in_range "$(ratio "$(offcpu_ns p.data sleeper)" "$(cat slept)")" 0.90 1.10
}

@test "offcpu: user stacks taken at the return to user space (rseq_update) record the same sleep" {
	require_root
	use_method rseq
	if grep -q 'have no user stack' rec.err; then fail "$(grep 'no user stack' rec.err)"; fi
	in_range "$(ratio "$(offcpu_ns p.data sleeper)" "$(cat slept)")" 0.90 1.10
}

@test "offcpu: under the rseq method a thread without rseq keeps its user stack (walked at switch-out)" {
	require_root
	# glibc registers no rseq area with this tunable: no rseq_update for its threads.
	GLIBC_TUNABLES=glibc.pthread.rseq=0 use_method rseq
	if grep -q 'have no user stack' rec.err; then fail "$(grep 'no user stack' rec.err)"; fi
	in_range "$(ratio "$(offcpu_ns p.data sleeper)" "$(cat slept)")" 0.90 1.10
}

@test "offcpu: sleeps' user stacks taken at the system call's exit record the same sleep" {
	require_root
	use_method sys-exit
	if grep -q 'have no user stack' rec.err; then fail "$(grep 'no user stack' rec.err)"; fi
	in_range "$(ratio "$(offcpu_ns p.data sleeper)" "$(cat slept)")" 0.90 1.10
}

@test "offcpu: user stacks taken at switch-out (the pre-6.18 method) record the same sleep" {
	require_root
	PA_RECORD_SWITCH=switch-out record_sleep
	grep -q 'off-CPU time from tp_btf/sched_switch, user stacks at switch-out' rec.err ||
		fail "switch-out method not used: $(grep 'off-CPU time from' rec.err)"
	in_range "$(ratio "$(offcpu_ns p.data sleeper)" "$(cat slept)")" 0.90 1.10
}

@test "offcpu: the raw_tp fallback records the same sleep" {
	require_root
	PA_RECORD_SWITCH=raw-tp record_sleep
	grep -q 'off-CPU time from raw_tp/sched_switch' rec.err || fail "raw_tp was not used"
	got=$(offcpu_ns p.data sleeper)
	in_range "$(ratio "$got" "$(cat slept)")" 0.90 1.10
}

# untraced_count: from rec.err, how many stretches ended by a switch-in the tracepoint
# did not report (pa-record -v), 0 if none.
untraced_count() {
	local n
	n=$(sed -nE 's/.*off-CPU: ([0-9]+) stretches ended by a switch-in .*/\1/p' rec.err)
	echo "${n:-0}"
}

@test "offcpu: a switch-in the tracepoint missed still ends its stretch, time kept (deferred stacks)" {
	require_root
	require_perf
	# The cheapest method this kernel loads, task-work or sys-exit, defers the stack.
	PA_RECORD_SKIP_SWITCH_IN=3 record_sleep
	case $(method_used) in
	"${method_name[task-work]}" | "${method_name[rseq]}" | "${method_name[sys-exit]}") ;;
	*) skip "this kernel loads no method that defers user stacks: $(method_used)" ;;
	esac
	[ "$(untraced_count)" -ge 3 ] || fail "only $(untraced_count) switch-ins were skipped"
	# Under task_work the stacks of those stretches are gone (time under [unknown]):
	# sum by thread, the sleeper being the thread with the most off-CPU samples.
	read -r tid ns < <(perf script -i p.data -F tid,period,event 2>/dev/null | awk '
		/offcpu-time/ { n[$1]++; t[$1] += $2 }
		END { for (k in n) if (n[k] > best) { best = n[k]; b = k }; print b, t[b] }')
	echo "sleeper thread $tid: $ns ns off the CPU, slept $(cat slept) ns"
	in_range "$(ratio "$ns" "$(cat slept)")" 0.90 1.10
}

# untraced_kept M: every third switch-in looks untraced under method M, whose user
# stack is then taken as the thread goes back to user space: the time stays on
# sleeper().
untraced_kept() {
	PA_RECORD_SKIP_SWITCH_IN=3 use_method "$1" || return 1
	[ "$(untraced_count)" -ge 3 ] || fail "only $(untraced_count) switch-ins were skipped"
	in_range "$(ratio "$(offcpu_ns p.data sleeper)" "$(cat slept)")" 0.90 1.10
}

@test "offcpu: rseq: a switch-in the tracepoint missed keeps the user stack the thread went back to" {
	require_root
	untraced_kept rseq
}

@test "offcpu: sys_exit: a switch-in the tracepoint missed keeps the user stack the thread went back to" {
	require_root
	untraced_kept sys-exit
}

@test "offcpu: a switch-in the tracepoint missed keeps the stacks stashed at switch-out" {
	require_root
	for m in switch-out raw-tp; do
		PA_RECORD_SWITCH=$m PA_RECORD_SKIP_SWITCH_IN=3 record_sleep
		[ "$(untraced_count)" -ge 3 ] || fail "$m: only $(untraced_count) switch-ins were skipped"
		in_range "$(ratio "$(offcpu_ns p.data sleeper)" "$(cat slept)")" 0.90 1.10
	done
}

@test "offcpu: PA_RECORD_SKIP_SWITCH_IN takes a count" {
	PA_RECORD_SKIP_SWITCH_IN=x run -1 "$PA_RECORD" --offcpu -o p.data -- true
	[[ $output == "pa-record: error: PA_RECORD_SKIP_SWITCH_IN=x: not a count;"* ]]
}

@test "offcpu: a thread killed in its sleep keeps that last stretch and its user stack" {
	require_root
	require_perf
	w=$(wl offcpu_sleep)
	"$w" 10 >/dev/null &
	pid=$!
	track "$pid"
	# The kill must come while pa-record follows the thread: counted from its attach,
	# not from its start (which a loaded machine can stretch past a second).
	"$PA_RECORD" -v --offcpu -p "$pid" -d 5 -o p.data 2>rec.err &
	rec=$!
	track "$rec"
	wait_attached "$rec"
	sleep 0.6
	# perf.data times are CLOCK_MONOTONIC, as is this stamp, taken just before the kill.
	killed=$(python3 -c 'import time; print(time.monotonic_ns())')
	kill -9 "$pid"
	wait "$rec" || fail "pa-record failed: $(grep -v '^libbpf' rec.err)"
	# The killed thread sleeps no more: a stretch under sleeper() that ends after the
	# kill is the one the kill cut short.  Were it lost, or its user stack, the last
	# stretch under sleeper() would end before the kill.  (A sleep's length says
	# less: on a loaded machine a cut one can outlast 200 ms by its wake-up.)
	last=$(perf script -F time,event,ip,sym -i p.data 2>/dev/null | awk '
		$2 == "offcpu-time:" { t = $1; sub(/:$/, "", t); frames = ""; next }
		NF == 0 && t != "" { if (frames ~ / sleeper( |$)/) lt = t; t = ""; next }
		t != "" { frames = frames " " $NF }
		END { if (t != "" && frames ~ / sleeper( |$)/) lt = t; printf "%.0f\n", lt * 1e9 }')
	echo "last stretch under sleeper() ended at $last ns, the kill was sent after $killed ns"
	[ "$last" -gt 0 ] || fail "no stretch under sleeper()"
	# perf script prints microseconds.
	[ "$last" -ge $((killed - 1000)) ] || {
		grep -v '^libbpf' rec.err
		fail "the cut-short stretch is missing or lost its user stack"
	}
}

@test "offcpu: waits still open when recording stops count up to the stop" {
	require_root
	w=$(wl offcpu_deadlock)
	# Both workers block in lock_second() at once and never come back.
	pa_record --offcpu -d 1 -o p.data -- "$w" >/dev/null 2>rec.err
	ns=$(rec_ns rec.err)
	got=$(offcpu_ns p.data lock_second 'futex')
	echo "under lock_second with futex frames: $got ns in a recording of $ns ns"
	in_range "$(ratio "$got" $((2 * ns)))" 0.85 1.02
}

@test "offcpu: threads blocked since before the recording (a deadlock) count all of it" {
	require_root
	w=$(wl offcpu_deadlock)
	"$w" >dl.out &
	pid=$!
	track "$pid"
	for _ in $(seq 50); do grep -q deadlocked dl.out && break; sleep 0.1; done
	grep -q deadlocked dl.out || fail "offcpu_deadlock did not deadlock"
	pa_record --offcpu -p "$pid" -d 1 -o p.data 2>rec.err
	ns=$(rec_ns rec.err)
	got=$(offcpu_ns p.data lock_second 'futex')
	join=$(offcpu_ns p.data main 'futex')
	echo "under lock_second: $got ns, under main (pthread_join): $join ns, recording $ns ns"
	in_range "$(ratio "$got" $((2 * ns)))" 0.98 1.02
	in_range "$(ratio "$join" "$ns")" 0.98 1.02
}

@test "offcpu: PA_RECORD_SWITCH names an unknown method in one line" {
	PA_RECORD_SWITCH=kprobe run -1 "$PA_RECORD" --offcpu -o p.data -- true
	[[ $output == "pa-record: error: PA_RECORD_SWITCH=kprobe: unknown;"* ]]
}

@test "offcpu: --no-cpu records offcpu-time alone" {
	require_root
	record_sleep --no-cpu
	out=$("$PA_REPORT" -i p.data --no-children --sort sym -g none)
	if grep -q "of event 'cpu-clock'" <<<"$out"; then fail "cpu-clock samples with --no-cpu"; fi
	grep -q "of event 'offcpu-time'" <<<"$out" || fail "no offcpu-time event"
	in_range "$(ratio "$(offcpu_ns p.data sleeper)" "$(cat slept)")" 0.90 1.10
}

@test "offcpu: pprof has offcpu/nanoseconds values and the thread_state label" {
	require_root
	command -v go >/dev/null || skip "go not installed"
	record_sleep
	"$PA_CONVERT" -i p.data --pprof -o p.pb.gz
	raw=$(go tool pprof -raw p.pb.gz 2>/dev/null)
	grep -q 'offcpu/nanoseconds' <<<"$raw" || fail "no offcpu/nanoseconds sample type"
	grep -q 'cpu/nanoseconds' <<<"$raw" || fail "no cpu/nanoseconds sample type"
	grep -q 'thread_state:\[sleep\]' <<<"$raw" || fail "no thread_state label"
	top=$(go tool pprof -sample_index=offcpu -top -cum p.pb.gz 2>/dev/null)
	grep -q ' sleeper$' <<<"$top" || fail "sleeper not in the offcpu view:"$'\n'"$top"
}

@test "offcpu: the summary line adds off-CPU samples and blocked time" {
	require_root
	w=$(wl offcpu_sleep)
	pa_record --offcpu -o p.data -- "$w" 1 >/dev/null 2>sum.err
	cat sum.err
	grep -qE '^pa-record: [0-9]+ samples, [0-9]+ lost, [0-9.]+ s, wrote p.data .*; off-CPU: [1-9][0-9]* samples, [0-9.]+ s blocked, 0 lost' sum.err
}

@test "offcpu: option errors are one line and exit 1" {
	run -1 "$PA_RECORD" --no-cpu -o p.data -- true
	[[ $output == "pa-record: error: --no-cpu needs --offcpu"* ]]
	run -1 "$PA_RECORD" --offcpu --offcpu-state nap -o p.data -- true
	[[ $output == "pa-record: error: unknown --offcpu-state 'nap'"* ]]
	run -1 "$PA_RECORD" --offcpu --offcpu-min soon -o p.data -- true
	[[ $output == "pa-record: error: invalid --offcpu-min 'soon'"* ]]
	[ ! -e p.data ]
}
