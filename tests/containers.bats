#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Processes in their own mount and pid namespaces, as in a container: the binary
# exists only in a private mount, the JIT map only in a private /tmp under the
# namespaced pid.  pa-record reads them through /proc/PID/root and saves them into
# the build-id cache, so the report names the functions after the "container" is gone.

load lib/helpers

# start_contained WORKLOAD [ARGS]: runs WORKLOAD as the init of a new mount+pid
# namespace, from a tmpfs mounted over ./priv inside it only.  Sets CPID to the
# host pid of the workload.
start_contained() {
	mkdir -p priv
	unshare --mount --pid --fork --propagation private sh -c "
		mount -t tmpfs none '$PWD/priv' && cp '$1' '$PWD/priv/' && exec '$PWD/priv/$(basename "$1")' ${2:-}" &
	local upid=$! i
	track "$upid"
	CPID=
	for i in $(seq 50); do
		CPID=$(pgrep -P "$upid" | head -1)
		[ -n "$CPID" ] && [ "$(readlink "/proc/$CPID/exe")" = "$PWD/priv/$(basename "$1")" ] && break
		sleep 0.1
	done
	[ -n "$CPID" ] && [ "$(readlink "/proc/$CPID/exe")" = "$PWD/priv/$(basename "$1")" ] ||
		fail "the contained workload did not start"
	track "$CPID"
}

@test "containers: a binary visible only in a private mount namespace is named" {
	require_root
	require_bin "$PA_RECORD" "$PA_REPORT"
	command -v unshare >/dev/null || skip "unshare (util-linux) missing"
	start_contained "$(wl cpu_split)" 30
	# The host cannot see the binary at the path its mappings name.
	[ ! -e "$PWD/priv/cpu_split" ]
	HOME=$PWD pa_record -q -p "$CPID" -d 1s -o c.data || fail "pa-record failed"
	# The namespace's init takes only SIGKILL from outside.
	kill -KILL "$CPID"
	wait
	# The namespace is gone now; names come from the build-id cache.
	[ "$(HOME=$PWD top_sym c.data)" = hot_a ]
}

@test "containers: a JIT map in a private /tmp under the namespaced pid is saved and read" {
	require_root
	require_bin "$PA_RECORD" "$PA_REPORT"
	command -v unshare >/dev/null || skip "unshare (util-linux) missing"
	command -v node >/dev/null || skip "node not installed"
	# The script is inline: the private /tmp hides this test's directory.  Without
	# --no-turbo-inlining, TurboFan can inline the loop into the top-level script and
	# the samples land on '[eval]'.
	js='function jsContainedLoop(n) { let s = 0; for (let i = 0; i < n; i++) s = (s * 31 + i) | 0; return s; }
const end = Date.now() + 15000; let t = 0;
while (Date.now() < end) t += jsContainedLoop(100000);'
	unshare --mount --pid --fork --propagation private sh -c "
		mount -t tmpfs none /tmp && exec node --perf-basic-prof --no-turbo-inlining -e '$js'" &
	upid=$!
	track "$upid"
	for i in $(seq 50); do
		CPID=$(pgrep -P "$upid" | head -1)
		[ -n "$CPID" ] && [ "$(cat "/proc/$CPID/comm")" = node ] && break
		sleep 0.1
	done
	[ -n "$CPID" ] && [ "$(cat "/proc/$CPID/comm")" = node ] || fail "node did not start"
	# Record once V8 has compiled the loop (it is in the map): on a loaded machine
	# that can take longer than any fixed wait.
	for i in $(seq 100); do
		grep -q jsContainedLoop "/proc/$CPID/root/tmp/perf-1.map" 2>/dev/null && break
		sleep 0.1
	done
	grep -q jsContainedLoop "/proc/$CPID/root/tmp/perf-1.map" ||
		fail "node wrote no jsContainedLoop to its /tmp/perf-1.map"
	# Inside the namespace node is pid 1 and writes /tmp/perf-1.map in its own /tmp.
	[ ! -e "/tmp/perf-$CPID.map" ]
	HOME=$PWD pa_record -q -F 999 -p "$CPID" -d 1s -o j.data || fail "pa-record failed"
	# The namespace's init takes only SIGKILL from outside.
	kill -KILL "$CPID"
	wait
	out=$(HOME=$PWD "$PA_REPORT" -i j.data --no-children --sort sym -g none)
	echo "$out" | head -8
	grep -q 'jsContainedLoop' <<<"$out"
}
