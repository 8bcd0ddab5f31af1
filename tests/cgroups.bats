#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Cgroup, container and pod labels of each sample, taken for the sampled process
# itself in -a mode: real cgroups named the way the kubelet names them (cgroupfs and
# systemd drivers), workloads moved into them, and what pa-report, pprof and Linux
# perf say about each process's samples.  cgroup v1 (this machine's cpu hierarchy)
# and cgroup2 (its unified mount, chosen with PA_RECORD_CGROUP).

load lib/helpers

V1=/sys/fs/cgroup/cpu
V2=/sys/fs/cgroup/unified
UID_A=1f2e3d4c-5b6a-4798-8a7b-6c5d4e3f2a1b
UID_B=0a1b2c3d-4e5f-4a6b-9c8d-7e6f5a4b3c2d
CID_A=aaaa1111bbbb2222cccc3333dddd4444eeee5555ffff6666aaaa7777bbbb8888
CID_B=bbbb2222cccc3333dddd4444eeee5555ffff6666aaaa7777bbbb8888cccc9999

eval "$(declare -f teardown | sed '1s/^teardown/helpers_teardown/')"

teardown() {
	local d
	helpers_teardown
	# Leaves first: a cgroup goes only once it has no children and no tasks.
	if [ -f "$BATS_TEST_TMPDIR/.cgroups" ]; then
		sleep 0.2
		sort -r "$BATS_TEST_TMPDIR/.cgroups" | while read -r d; do
			rmdir "$d" 2>/dev/null
		done
	fi
	return 0
}

# mk_cgroup ROOT REL: make ROOT/REL (every level noted for teardown).
mk_cgroup() {
	local p=$1 part
	[ -d "$1" ] || skip "$1 is not mounted"
	for part in $(tr '/' ' ' <<<"$2"); do
		p=$p/$part
		[ -d "$p" ] || { mkdir "$p" && echo "$p" >>"$BATS_TEST_TMPDIR/.cgroups"; } ||
			fail "cannot make cgroup $p" || return 1
	done
}

# start_in ROOT REL NAME [VAR=VALUE...]: a copy of fixed_work named NAME, moved into
# ROOT/REL before it works, with these variables in its environment; its pid in
# $STARTED.
start_in() {
	mk_cgroup "$1" "$2" || return 1
	cp "$(wl fixed_work)" "$BATS_TEST_TMPDIR/$3"
	# A shell moves itself in, then becomes the workload.
	env "${@:4}" sh -c "echo \$\$ > '$1/$2/cgroup.procs' && exec '$BATS_TEST_TMPDIR/$3' 100000" >/dev/null &
	STARTED=$!
	track "$STARTED"
	sleep 0.2
	grep -q "$2\$" "/proc/$STARTED/cgroup" || fail "$3 is not in $2:"$'\n'"$(cat /proc/$STARTED/cgroup)"
}

# pods_of FILE: "comm pod container" of each pa-report entry sorted that way.
pods_of() {
	"$PA_REPORT" --no-children -g none --sort comm,pod,container -i "$1" |
		awk '/^#/ || NF < 4 { next } { print $2, $3, $4 }'
}

@test "cgroups: -a labels each process's samples with its own pod and container (cgroupfs and systemd names, v1)" {
	require_root
	require_bin "$PA_RECORD" "$PA_REPORT"
	start_in $V1 "kubepods/burstable/pod$UID_A/$CID_A" wa
	start_in $V1 "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod${UID_B//-/_}.slice/cri-containerd-$CID_B.scope" wb
	pa_record -q -a -d 2 -o k.data
	out=$(pods_of k.data)
	echo "$out"
	grep -qx "wa $UID_A ${CID_A:0:12}" <<<"$out" || fail "wa's samples not labelled with pod A"
	grep -qx "wb $UID_B ${CID_B:0:12}" <<<"$out" || fail "wb's samples not labelled with pod B"
	[ "$(grep -c '^wa ' <<<"$out")" -eq 1 ] || fail "wa under more than one pod"
}

@test "cgroups: perf report --sort cgroup shows the paths pa-record wrote" {
	require_root
	require_perf
	require_bin "$PA_RECORD"
	start_in $V1 "kubepods/burstable/pod$UID_A/$CID_A" wa
	pa_record -q -a -d 1 -o k.data
	out=$(perf report --stdio --no-children --sort comm,cgroup -g none -i k.data 2>&1)
	echo "$out" | head -20
	grep -qE "wa +/kubepods/burstable/pod$UID_A/$CID_A" <<<"$out" ||
		fail "perf shows no cgroup path for wa"
}

@test "cgroups: pprof samples carry cgroup, container and pod labels" {
	require_root
	require_bin "$PA_RECORD" "$PA_CONVERT" "$PA_BUILD/tests/pprof-dump"
	start_in $V1 "kubepods/pod$UID_A/$CID_A" wa
	pa_record -q -a -d 1 -o k.data
	"$PA_CONVERT" -i k.data --pprof -o k.pb.gz
	out=$("$PA_BUILD/tests/pprof-dump" k.pb.gz)
	grep -qx "  label cgroup=\"/kubepods/pod$UID_A/$CID_A\"" <<<"$out" || fail "no cgroup label"
	grep -qx "  label container=\"${CID_A:0:12}\"" <<<"$out" || fail "no container label"
	grep -qx "  label pod=\"$UID_A\"" <<<"$out" || fail "no pod label"
}

@test "cgroups: pod names from the container's environment, and nothing else of it" {
	require_root
	require_bin "$PA_RECORD" "$PA_REPORT" "$PA_CONVERT" "$PA_BUILD/tests/pprof-dump"
	start_in $V1 "kubepods/burstable/pod$UID_A/$CID_A" wa POD_NAME=web-1 POD_NAMESPACE=shop \
		DB_PASSWORD=hunter2
	start_in $V1 "kubepods/burstable/pod$UID_B/$CID_B" wb POD_NAME=api-7 POD_NAMESPACE=shop
	pa_record -q -a -z0 -d 1 -o e.data
	"$PA_CONVERT" -i e.data --pprof -o e.pb.gz
	out=$("$PA_BUILD/tests/pprof-dump" e.pb.gz)
	grep -qx '  label pod_name="web-1"' <<<"$out" || fail "no pod_name label"
	grep -qx '  label pod_namespace="shop"' <<<"$out" || fail "no pod_namespace label"
	grep -q hunter2 e.data && fail "a variable not asked for is in the capture"
	# --pod takes the name as well as the UID.
	comms=$("$PA_REPORT" --no-children -g none --sort comm --pod web-1 -i e.data |
		awk '/^#/ || NF < 2 { next } { print $2 }')
	[ "$comms" = wa ] || fail "--pod web-1 kept: $comms"
	comms=$("$PA_REPORT" --no-children -g none --sort comm --pod "$UID_B" -i e.data |
		awk '/^#/ || NF < 2 { next } { print $2 }')
	[ "$comms" = wb ] || fail "--pod $UID_B kept: $comms"
}

@test "cgroups: short-lived processes of a pod are labelled with it" {
	require_root
	require_bin "$PA_RECORD" "$PA_REPORT"
	mk_cgroup $V1 "kubepods/besteffort/pod$UID_B/$CID_B"
	cp "$(wl fixed_work)" "$BATS_TEST_TMPDIR/short"
	# Processes of a few milliseconds each, started in the pod's cgroup until the
	# recording is over.
	sh -c "echo \$\$ > '$V1/kubepods/besteffort/pod$UID_B/$CID_B/cgroup.procs'
		while [ ! -e stop ]; do '$BATS_TEST_TMPDIR/short' 3 >/dev/null; done" &
	track $!
	pa_record -q -a -F 999 -d 2 -o s.data
	touch stop
	wait
	out=$("$PA_REPORT" --no-children -g none --sort comm,pod,cgroup -i s.data |
		awk '/^#/ || NF < 4 { next } $2 == "short" { print $3, $4 }' | sort -u)
	echo "$out"
	[ -n "$out" ] || fail "no samples of the short processes"
	[ "$out" = "$UID_B /kubepods/besteffort/pod$UID_B/$CID_B" ] || fail "not all in pod B"
}

@test "cgroups: -G records only the threads of that cgroup and below" {
	require_root
	require_bin "$PA_RECORD" "$PA_REPORT"
	start_in $V1 "kubepods/burstable/pod$UID_A/$CID_A" wa
	start_in $V1 "kubepods/besteffort/pod$UID_B/$CID_B" wb
	pa_record -q -a -G "kubepods/burstable/pod$UID_A" -d 1 -o g.data
	comms=$("$PA_REPORT" --no-children -g none --sort comm -i g.data | awk '/^#/ || NF < 2 { next } { print $2 }')
	echo "$comms"
	[ "$comms" = wa ] || fail "-G let through: $comms"
}

@test "cgroups: -G of a cgroup that does not exist is one line and no file" {
	require_root
	require_bin "$PA_RECORD"
	run -1 pa_record -a -G /no/such/cgroup -d 1 -o g.data
	echo "$output"
	[ "${#lines[@]}" -eq 1 ] && grep -q "no cgroup /no/such/cgroup" <<<"$output" ||
		fail "not one line naming the cgroup"
	[ ! -e g.data ] || fail "g.data left behind"
}

@test "cgroups: cgroup2 ids name the process's unified cgroup" {
	require_root
	require_bin "$PA_RECORD" "$PA_REPORT"
	start_in $V2 "kubepods.slice/kubepods-pod${UID_A//-/_}.slice/crio-$CID_A.scope" wa
	PA_RECORD_CGROUP=cgroup2 pa_record -q -a -d 1 -o v2.data
	out=$(pods_of v2.data)
	echo "$out"
	grep -qx "wa $UID_A ${CID_A:0:12}" <<<"$out" || fail "wa's samples not labelled from cgroup2"
}

@test "cgroups: --no-cgroups leaves the samples without cgroups" {
	require_root
	require_perf
	require_bin "$PA_RECORD"
	pa_record -q --no-cgroups -o n.data -- "$(wl fixed_work)" 50
	run -0 perf report --header-only -i n.data
	grep -q "sample_type.*CGROUP" <<<"$output" && fail "samples still carry cgroups"
	return 0
}

@test "cgroups: --tag labels every sample of the capture, file and pipe" {
	require_root
	require_bin "$PA_RECORD" "$PA_CONVERT" "$PA_BUILD/tests/pprof-dump"
	w=$(wl fixed_work)
	pa_record -q --tag env=prod --tag team=perf -o t.data -- "$w" 100 >/dev/null
	"$PA_CONVERT" -i t.data --pprof -o t.pb.gz
	out=$("$PA_BUILD/tests/pprof-dump" t.pb.gz)
	[ "$(grep -c '^  label env="prod"$' <<<"$out")" -eq "$(grep -c '^  label pid=' <<<"$out")" ] ||
		fail "not every sample has env=prod"
	grep -qx '  label team="perf"' <<<"$out" || fail "no team label"
	pa_record -q --tag env=staging -o - -- "$w" 100 2>/dev/null | "$PA_CONVERT" --pprof -o p.pb.gz
	grep -qx '  label env="staging"' <<<"$("$PA_BUILD/tests/pprof-dump" p.pb.gz)" ||
		fail "no tag through a pipe"
	run -1 "$PA_RECORD" --tag 'no key' -o bad.data -- true
	[ "${#lines[@]}" -eq 1 ] && grep -q "invalid --tag" <<<"$output" || fail "$output"
	[ ! -e bad.data ] || fail "bad.data left behind"
}
