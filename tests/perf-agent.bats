#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# perf-agent: the commands it runs, --profile's files, and --continuous pushing
# windows to a stand-in for Pyroscope's ingest API (tests/lib/ingest_receiver.py: no
# Pyroscope server can be installed here, so this checks our side of the documented
# protocol).

load lib/helpers

PERF_AGENT=$PA_BUILD/perf-agent
PPROF_DUMP=$PA_BUILD/tests/pprof-dump
RECEIVER=$PA_ROOT/tests/lib/ingest_receiver.py

# receiver_start DIR [PORT] [ARGS...]: the ingest stand-in, saving into DIR; its port
# in $PORT (a free one unless given).
receiver_start() {
	local dir=$1 port=${2:-0} tries=50
	shift 2 || shift $#
	mkdir -p "$dir"
	rm -f "$dir/port"
	/usr/bin/python3 "$RECEIVER" --dir "$dir" --port "$port" --port-file "$dir/port" "$@" &
	RECEIVER_PID=$!
	track $RECEIVER_PID
	while [ ! -s "$dir/port" ] && [ $tries -gt 0 ]; do
		sleep 0.1
		tries=$((tries - 1))
	done
	PORT=$(cat "$dir/port") || fail "the receiver did not start"
}

# pprof_samples FILE: the sum of the first value column (samples) of a pprof.
pprof_samples() {
	"$PPROF_DUMP" "$1" | awk '/^sample [0-9]+: values/ { n += $4 } END { print n + 0 }'
}

# windows DIR: "from until file" per upload, in time order.
windows() {
	jq -r '"\(.from) \(.until) \(.file)"' "$1/uploads.jsonl" | sort -n
}

# start WORKLOAD ARGS...: a private copy in the background, $pid once it runs as
# itself (perf-agent names its files and labels by the command it finds).
start() {
	local w n=50
	w=$(wl "$1") || return 1
	shift
	"$w" "$@" &
	pid=$!
	track $pid
	while [ "$(cat /proc/$pid/comm 2>/dev/null)" != "${w##*/}" ] && [ $n -gt 0 ]; do
		sleep 0.05
		n=$((n - 1))
	done
}

require_agent() {
	require_root
	require_bin "$PERF_AGENT" "$PA_RECORD" "$PA_CONVERT" "$PPROF_DUMP"
}

@test "perf-agent: COMMAND runs pa-COMMAND; an unknown one is named" {
	require_bin "$PERF_AGENT" "$PA_REPORT"
	run "$PERF_AGENT" report --help
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == "usage: pa-report"* ]] || fail "not pa-report's help: ${lines[0]}"
	run "$PERF_AGENT" frobnicate
	[ "$status" -eq 1 ]
	[[ $output == "perf-agent: error: no command 'frobnicate'; commands: record,"* ]] ||
		fail "$output"
}

@test "perf-agent: --profile -p PID -d 2s writes a pprof naming the hot function, and a flame graph" {
	require_agent
	command -v go >/dev/null || fail "go not installed (make deps installs golang-go)"
	start cpu_split 30
	run "$PERF_AGENT" --profile -p $pid -d 2s -o out
	echo "$output"
	[ "$status" -eq 0 ]
	pb=$(ls out/cpu_split-*-on-cpu.pb.gz) || fail "no on-CPU pprof"
	[[ $pb =~ ^out/cpu_split-[0-9]{8}-[0-9]{6}-on-cpu\.pb\.gz$ ]] || fail "name: $pb"
	grep -qx "$pb" <<<"$output" || fail "the path is not printed"
	html=${pb%-on-cpu.pb.gz}-flamegraph.html
	[ -s "$html" ] || fail "no $html"
	grep -qx "$html" <<<"$output" || fail "the flame graph's path is not printed"
	grep -q hot_a "$html" || fail "hot_a not in the flame graph"
	top=$(go tool pprof -symbolize=none -sample_index=samples -top "$pb" 2>&1)
	echo "$top"
	[ "$(awk 'seen && NF >= 6 { print $6; exit } /flat%/ { seen = 1 }' <<<"$top")" = hot_a ]
	[ ! -e "${pb%-on-cpu.pb.gz}-off-cpu.pb.gz" ] || fail "an off-CPU file without --offcpu"
}

@test "perf-agent: --profile --offcpu: each kind of time in its own pprof" {
	require_agent
	start offcpu_sleep 30
	run "$PERF_AGENT" --profile --offcpu -p $pid -d 2s -o out
	echo "$output"
	[ "$status" -eq 0 ]
	on=$(ls out/offcpu_sleep-*-on-cpu.pb.gz) || fail "no on-CPU pprof"
	off=$(ls out/offcpu_sleep-*-off-cpu.pb.gz) || fail "no off-CPU pprof"
	"$PPROF_DUMP" "$off" | grep -qx 'sample_type 1: offcpu/nanoseconds' || fail "off-CPU types"
	run ! grep -qE '^sample_type [0-9]+: cpu/' <("$PPROF_DUMP" "$off")
	"$PPROF_DUMP" "$on" | grep -qx 'sample_type 1: cpu/nanoseconds' || fail "on-CPU types"
	run ! grep -qE '^sample_type [0-9]+: offcpu/' <("$PPROF_DUMP" "$on")
	[ "$(pprof_samples "$off")" -gt 0 ] || fail "no off-CPU samples"
}

@test "perf-agent: --profile of a pid that does not exist: one line, no files" {
	require_agent
	run "$PERF_AGENT" --profile -p 999999999 -d 1s -o out
	echo "$output"
	[ "$status" -ne 0 ]
	grep -q '999999999' <<<"$output" || fail "the pid is not named"
	[ -z "$(ls out 2>/dev/null)" ] || fail "files left: $(ls out)"
}

@test "perf-agent: option errors name the fix" {
	require_bin "$PERF_AGENT"
	run "$PERF_AGENT" --continuous -p 1
	[ "$status" -eq 1 ]
	[ "$output" = "perf-agent: error: --continuous needs --push URL (the Pyroscope server)" ]
	run "$PERF_AGENT" --continuous -p 1 --push http://127.0.0.1:9 --interval 1500ms
	[ "$status" -eq 1 ]
	[[ $output == *"--interval must be whole seconds"* ]] || fail "$output"
	run "$PERF_AGENT" --profile
	[ "$status" -eq 1 ]
	[[ $output == *"give -p PID or -a"* ]] || fail "$output"
	run "$PERF_AGENT" --profile --continuous -a
	[ "$status" -eq 1 ]
	run "$PERF_AGENT" --continuous -a --push ftp://x
	[ "$status" -eq 1 ]
	[[ $output == *"bad --push 'ftp://x'"* ]] || fail "$output"
}

# One 60 s run: windows contiguous, every upload well formed, a receiver down for 30 s
# loses nothing, and the windows add up to one 60 s recording of the same workload.
@test "perf-agent: --continuous: contiguous windows, none lost while the server is down 12 s, same samples as one recording" {
	require_agent
	command -v jq >/dev/null || fail "jq not installed (make deps installs it)"
	receiver_start recv
	start cpu_split 40
	PA_TIMEOUT=60 pa_record -q -p $pid -d 24s -o single.data &
	single=$!
	timeout -k 5 60 "$PERF_AGENT" --continuous -p $pid -d 24s --interval 2s \
		--push "http://127.0.0.1:$PORT" --spool spool --retry-max 1s 2>agent.err &
	agent=$!
	sleep 5
	kill $RECEIVER_PID
	wait $RECEIVER_PID || true
	sleep 12
	receiver_start recv "$PORT"
	wait $agent || fail "perf-agent failed: $(cat agent.err)"
	wait $single || fail "pa-record failed"
	cat agent.err
	windows recv >w.txt
	cat w.txt
	n=$(wc -l <w.txt)
	[ "$n" -ge 11 ] && [ "$n" -le 13 ] || fail "$n windows for 24 s of 2 s windows"
	awk 'NR > 1 && $1 != until { print "gap or overlap before " $0; bad = 1 }
	     $2 - $1 > 2 || $2 <= $1 { print "not a 2 s window: " $0; bad = 1 }
	     { until = $2 } END { exit bad }' w.txt || fail "windows are not contiguous"
	[ -z "$(cat recv/errors.log 2>/dev/null)" ] || fail "bad uploads: $(cat recv/errors.log)"
	jq -e 'select(.name | test("^cpu_split\\{host=[^,]+,process=cpu_split\\}$") | not)' \
		recv/uploads.jsonl && fail "a name without its labels"
	total=0
	while read -r from until file; do
		s=$(pprof_samples "recv/$file") || fail "recv/$file does not decode"
		[ "$s" -gt 0 ] || fail "recv/$file has no samples"
		total=$((total + s))
	done <w.txt
	one=$(samples_in single.data)
	echo "windows: $total samples, one recording: $one"
	in_range "$total" "$(awk -v n="$one" 'BEGIN { print n * 0.98 }')" \
		"$(awk -v n="$one" 'BEGIN { print n * 1.02 }')"
	grep -q 'dropped 0\|0 dropped' agent.err || fail "windows dropped: $(cat agent.err)"
	grep -q '0 left in the spool' agent.err || fail "windows left behind"
}

@test "perf-agent: --continuous: a full spool drops the oldest windows, counted; the rest is pushed at the next start" {
	require_agent
	command -v jq >/dev/null || fail "jq not installed (make deps installs it)"
	start cpu_split 60
	# No server: every window waits in a spool too small for all of them.
	run timeout -k 5 60 "$PERF_AGENT" --continuous -p $pid -d 8s --interval 1s \
		--push http://127.0.0.1:9 --spool spool --spool-max 4K --retry-max 1s
	echo "$output"
	[ "$status" -eq 0 ]
	dropped=$(sed -nE 's/.* ([0-9]+) dropped$/\1/p' <<<"$output")
	left=$(sed -nE 's/.* ([0-9]+) left in the spool.*/\1/p' <<<"$output")
	[ "${dropped:-0}" -gt 0 ] || fail "nothing dropped"
	[ "${left:-0}" -gt 0 ] || fail "nothing left in the spool"
	[ "$(du -sb spool | cut -f1)" -le $((4 * 1024 + 4096)) ] || fail "spool over its bound"
	# The next start pushes what was left, oldest first, before its own windows.
	receiver_start recv
	run timeout -k 5 60 "$PERF_AGENT" --continuous -p $pid -d 2s --interval 1s \
		--push "http://127.0.0.1:$PORT" --spool spool
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(jq -s length recv/uploads.jsonl)" -ge $((left + 1)) ] || fail "left windows not pushed"
	first=$(jq -r .from recv/uploads.jsonl | head -1)
	last=$(jq -r .from recv/uploads.jsonl | tail -1)
	[ "$first" -lt "$last" ] || fail "not oldest first"
}

@test "perf-agent: --continuous sends the tenant, the token and the tags" {
	require_agent
	command -v jq >/dev/null || fail "jq not installed (make deps installs it)"
	receiver_start recv
	start cpu_split 30
	printf 'sekrit-token\n' >token
	run timeout -k 5 60 "$PERF_AGENT" --continuous -p $pid -d 2s --interval 1s \
		--push "http://127.0.0.1:$PORT/" --spool spool --tenant team-a --token-file token \
		--tag env=test --app shop
	echo "$output"
	[ "$status" -eq 0 ]
	cat recv/uploads.jsonl
	jq -e 'select(.tenant == "team-a" and .authorization == "Bearer sekrit-token")' \
		recv/uploads.jsonl >/dev/null || fail "no tenant or token"
	jq -e 'select(.name | test("^shop\\{host=[^,]+,process=cpu_split,env=test\\}$"))' \
		recv/uploads.jsonl >/dev/null || fail "name or labels wrong"
	f=$(jq -r .file recv/uploads.jsonl | head -1)
	"$PPROF_DUMP" "recv/$f" | grep -q 'env.*test' || fail "the tag is not on the samples"
}

@test "perf-agent: --continuous: a window the server refuses (400) is dropped and counted, not retried" {
	require_agent
	command -v jq >/dev/null || fail "jq not installed (make deps installs it)"
	receiver_start recv 0 --status 400
	start cpu_split 30
	run timeout -k 5 60 "$PERF_AGENT" --continuous -p $pid -d 3s --interval 1s \
		--push "http://127.0.0.1:$PORT" --spool spool
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q 'rejected a window (HTTP 400' <<<"$output" || fail "the status is not said"
	rejected=$(sed -nE 's/.*rejected ([0-9]+),.*/\1/p' <<<"$output")
	[ "${rejected:-0}" -ge 2 ] || fail "rejections not counted"
	[ -z "$(ls spool)" ] || fail "rejected windows kept: $(ls spool)"
}

@test "perf-agent: --continuous stopped by SIGTERM pushes the window it was in" {
	require_agent
	command -v jq >/dev/null || fail "jq not installed (make deps installs it)"
	receiver_start recv
	start cpu_split 30
	timeout -k 5 60 "$PERF_AGENT" --continuous -p $pid --interval 60s \
		--push "http://127.0.0.1:$PORT" --spool spool 2>agent.err &
	agent=$!
	sleep 4
	kill -TERM $agent
	wait $agent || fail "perf-agent exited $?: $(cat agent.err)"
	cat agent.err
	[ "$(jq -s length recv/uploads.jsonl)" -eq 1 ] || fail "not one window"
	f=$(jq -r .file recv/uploads.jsonl)
	[ "$(pprof_samples "recv/$f")" -gt 100 ] || fail "the window lost its samples"
	jq -e '.until - .from >= 2 and .until - .from < 60' recv/uploads.jsonl >/dev/null ||
		fail "until is not where the recording stopped"
}

@test "perf-agent: --continuous on a pid that does not exist: pa-record's one line, exit 1" {
	require_agent
	run timeout -k 5 30 "$PERF_AGENT" --continuous -p 999999999 --push http://127.0.0.1:9 \
		--spool spool
	echo "$output"
	[ "$status" -eq 1 ]
	grep -q 'pa-record: error: no process with PID 999999999' <<<"$output" || fail "not said"
	run ! grep -q "stream" <<<"$output"
}
