# SPDX-License-Identifier: Apache-2.0
# Shared helpers for the bats suites: where the binaries are, a per-test scratch
# directory, workloads, and readers for pa-report / perf report output.
#
# Load with:  load lib/helpers
# Every test runs in its own $BATS_TEST_TMPDIR (cwd), so default output names such as
# perf.data never collide and nothing lands in the source tree.

bats_require_minimum_version 1.5.0

PA_ROOT=${PA_ROOT:-$(cd "$BATS_TEST_DIRNAME/.." && pwd)}
PA_BUILD=${PA_BUILD:-$PA_ROOT/build}
PA_RECORD=$PA_BUILD/pa-record
PA_REPORT=$PA_BUILD/pa-report
PA_CONVERT=$PA_BUILD/pa-convert
PA_GPU_ATTACH=$PA_BUILD/pa-gpu-attach
PA_GPU_ADAPTER_LIB=$PA_BUILD/libpa-gpu-adapter.so
PA_WL=$PA_BUILD/tests/workloads
export LC_ALL=C

# Fail (not skip) with a message: a missing binary is a broken build, not an excuse.
fail() {
	echo "FAIL: $*" >&2
	return 1
}

require_root() {
	[ "$(id -u)" -eq 0 ] || skip "needs root (BPF and perf_event)"
}

require_perf() {
	command -v perf >/dev/null || fail "Linux perf not installed (make deps installs linux-perf)"
}

require_bin() {
	local b
	for b in "$@"; do
		[ -x "$b" ] || fail "$b not built (run: make O=${O:-build} tests)"
	done
}

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
}

# pa_record ARGS: pa-record with a watchdog, so a recording that never ends fails the
# test (status 124) instead of hanging the suite.
pa_record() {
	timeout -k 5 "${PA_TIMEOUT:-60}" "$PA_RECORD" "$@"
}

# track PID: a background process this test started; teardown ends it if still alive.
track() {
	echo "$1" >>"$BATS_TEST_TMPDIR/.pids"
}

# Every workload a test runs is a copy inside its tmpdir, so teardown can end exactly
# the processes this test started (by PID, found through /proc/PID/exe), plus the
# ones it tracked.
teardown() {
	local p exe
	if [ -f "$BATS_TEST_TMPDIR/.pids" ]; then
		while read -r p; do
			kill -KILL "$p" 2>/dev/null
		done <"$BATS_TEST_TMPDIR/.pids"
	fi
	for p in /proc/[0-9]*; do
		exe=$(readlink "$p/exe" 2>/dev/null) || continue
		case $exe in
		"$BATS_TEST_TMPDIR"/*) kill -KILL "${p#/proc/}" 2>/dev/null ;;
		esac
	done
	return 0
}

# wl NAME: path of a private copy of workload NAME (its comm stays NAME).
wl() {
	require_bin "$PA_WL/$1" || return 1
	[ -x "$BATS_TEST_TMPDIR/$1" ] || cp "$PA_WL/$1" "$BATS_TEST_TMPDIR/$1"
	echo "$BATS_TEST_TMPDIR/$1"
}

# report_flat FILE [pa-report args...]: flat per-symbol report on stdout.  Fails if
# pa-report fails or prints no entry line, so callers never mistake "nothing
# reported" for "0%".
report_flat() {
	local file=$1 out
	shift
	out=$("$PA_REPORT" --no-children --sort sym -g none -i "$file" "$@") ||
		fail "pa-report -i $file failed" || return 1
	grep -qE '^\s+[0-9.]+%\s+\[[.k]\] ' <<<"$out" ||
		fail "pa-report -i $file printed no entries:"$'\n'"$out" || return 1
	echo "$out"
}

# overhead_of SYM FILE: SYM's self overhead in percent (0 when absent).
overhead_of() {
	local out
	out=$(report_flat "$2") || return 1
	awk -v sym="$1" '
		match($0, /^ +[0-9.]+%/) && ($2 == "[.]" || $2 == "[k]") && $3 == sym {
			sub(/%/, "", $1); v += $1
		}
		END { printf "%.2f\n", v + 0 }' <<<"$out"
}

# kernel_share FILE: sum of the [k] entries, percent.
kernel_share() {
	local out
	out=$(report_flat "$1") || return 1
	awk '$2 == "[k]" { sub(/%/, "", $1); v += $1 } END { printf "%.2f\n", v + 0 }' <<<"$out"
}

# top_sym FILE: the symbol of pa-report's first (largest) entry.
top_sym() {
	local out
	out=$(report_flat "$1") || return 1
	awk '$2 == "[.]" || $2 == "[k]" { print $3; exit }' <<<"$out"
}

# perf_top_sym FILE: the same, as Linux perf reports it.
perf_top_sym() {
	local out
	out=$(perf report --stdio --no-children --sort sym -g none -i "$1" 2>/dev/null) ||
		fail "perf report -i $1 failed" || return 1
	awk '/^#/ || NF == 0 { next } $2 == "[.]" || $2 == "[k]" { print $3; exit }' <<<"$out"
}

# samples_in FILE: pa-report's "# Samples: N" header value.
samples_in() {
	local out
	out=$("$PA_REPORT" --no-children --sort sym -g none -i "$1") ||
		fail "pa-report -i $1 failed" || return 1
	sed -nE 's/^# Samples: ([0-9]+).*/\1/p' <<<"$out" | head -1 | grep . ||
		fail "no '# Samples:' header in pa-report output"
}

# perf_samples_in FILE: samples as Linux perf counts them (one perf script line each).
perf_samples_in() {
	local out
	out=$(perf script -F tid -i "$1" 2>/dev/null) || fail "perf script -i $1 failed" || return 1
	grep -c . <<<"$out"
}

# in_range VALUE LO HI: LO <= VALUE <= HI (decimals allowed), with a message if not.
in_range() {
	awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v >= lo && v <= hi) }' ||
		fail "$1 not in [$2, $3]"
}

# wait_attached PID [TIMEOUT_S]: wait until pa-record PID holds perf_event and BPF fds
# (its sampling is set up), then a little more for the attach to finish.
wait_attached() {
	local pid=$1 tries=$((${2:-10} * 10)) fds
	while [ $tries -gt 0 ]; do
		kill -0 "$pid" 2>/dev/null || fail "pa-record (pid $pid) exited before attaching" || return 1
		# ls fails (set -e would end the test, silently) when an fd closes while it
		# lists them, as pa-record opens and closes files while it loads tables.
		fds=$(ls -l "/proc/$pid/fd" 2>/dev/null || true)
		if grep -q 'perf_event' <<<"$fds" && grep -qE 'bpf[-_](prog|link)' <<<"$fds"; then
			sleep 0.5
			return 0
		fi
		sleep 0.1
		tries=$((tries - 1))
	done
	fail "pa-record (pid $pid) did not attach in ${2:-10}s"
}

# perf_capture FILE WORKLOAD SECONDS [pipe]: WORKLOAD under `perf record -g` into FILE
# (with "pipe": perf's pipe-mode stream).  This makes fixtures from the oracle, so it
# retries when perf cannot read back its own capture: perf 6.1 aborts ("assertion
# failed at util/build-id.c") on captures during which some BPF program was loaded,
# which another profiler on the machine can cause at any time.  -B skips perf's
# end-of-record build-id pass (same abort), --no-bpf-event skips synthesizing BPF
# programs that are already loaded.
#
# perf keeps an existing output file as FILE.old; a retry would leave one behind (and
# break tests that list their directory), so FILE is removed before every try and a
# FILE.old that was not there before the call is removed at the end.
# PA_PERF_ARGS adds options to perf record (e.g. -z).
perf_capture() {
	local f=$1 w try old_existed=0 rc=1
	require_root
	require_perf || return 1
	w=$(wl "$2") || return 1
	[ -e "$f.old" ] && old_existed=1
	for try in 1 2 3; do
		rm -f -- "$f"
		if [ "${4:-}" = pipe ]; then
			# shellcheck disable=SC2086 # options, split on purpose
			perf record -q -B --no-bpf-event -g ${PA_PERF_ARGS:-} -o - -- "$w" "$3" \
				>"$f" 2>/dev/null &&
				perf script -F tid -i - <"$f" >/dev/null 2>&1 && rc=0
		else
			# shellcheck disable=SC2086 # options, split on purpose
			perf record -q -B --no-bpf-event -g ${PA_PERF_ARGS:-} -o "$f" -- "$w" "$3" \
				2>/dev/null &&
				perf script -F tid -i "$f" >/dev/null 2>&1 && rc=0
		fi
		[ $rc -eq 0 ] && break
		echo "perf_capture: perf could not read back its capture (try $try)" >&2
	done
	[ $old_existed -eq 1 ] || rm -f -- "$f.old"
	[ $rc -eq 0 ] || fail "perf record/perf script failed 3 times on $2"
}

# ms_now: monotonic-enough wall clock in milliseconds.
ms_now() {
	echo $(($(date +%s%N) / 1000000))
}

# is_crash STATUS: a status that means a signal killed the process (SEGV, ABRT, BUS...).
is_crash() {
	[ "$1" -ge 128 ]
}
