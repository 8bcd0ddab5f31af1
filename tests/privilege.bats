#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# make install and make setcap, and the rule that makes a setcap'd pa-record safe
# (docs/privileges.md): a user records their own processes and nobody else's unless
# the administrator allows it, their command runs without the capabilities, and every
# output file is 0600.  setup_file installs the suite's build into a scratch PREFIX
# (without rebuilding it), grants the capabilities and creates a user; teardown_file
# removes both.

load lib/helpers

PRIV_USER=pa-priv-test
PRIV_GROUP=pa-priv-grp
# What make setcap grants, as getcap prints it (its order).
PRIV_CAPS="cap_sys_ptrace,cap_syslog,cap_perfmon,cap_bpf,cap_checkpoint_restore=ep"

# A directory the new user can reach, on a mount that honours file capabilities and
# setuid bits (the kernel ignores both on nosuid mounts).
priv_base() {
	local d
	for d in /var/tmp /tmp "$PA_BUILD"; do
		[ -d "$d" ] && ! findmnt -no OPTIONS -T "$d" | grep -qw nosuid && echo "$d" && return 0
	done
	return 1
}

setup_file() {
	local base
	[ "$(id -u)" -eq 0 ] || return 0
	base=$(priv_base) || return 0
	PRIV_DIR=$(mktemp -d "$base/pa-priv.XXXXXX")
	export PRIV_DIR PRIV_DEST=$PRIV_DIR/dest
	chmod 0755 "$PRIV_DIR"
	# A user of this suite only; one left by an interrupted run is ours too.
	if id "$PRIV_USER" >/dev/null 2>&1; then
		pkill -KILL -u "$PRIV_USER" || true
		userdel "$PRIV_USER"
	fi
	getent group "$PRIV_GROUP" >/dev/null && groupdel "$PRIV_GROUP"
	useradd -M -d "$PRIV_DIR/home" -s /bin/sh "$PRIV_USER" || return 1
	groupadd "$PRIV_GROUP" || return 1
	mkdir -p "$PRIV_DIR/home" "$PRIV_DIR/wl"
	chown "$PRIV_USER:" "$PRIV_DIR/home"
	cp "$PA_WL/cpu_split" "$PRIV_DIR/wl/" 2>/dev/null
	# The suite's build as it is: -o all installs what is built, nothing is remade.
	make -C "$PA_ROOT" --no-print-directory O="$PA_BUILD" -o all install \
		DESTDIR="$PRIV_DEST" PREFIX=/usr >"$PRIV_DIR/install.log" 2>&1 &&
		make -C "$PA_ROOT" --no-print-directory O="$PA_BUILD" setcap \
			DESTDIR="$PRIV_DEST" PREFIX=/usr >"$PRIV_DIR/setcap.log" 2>&1 &&
		touch "$PRIV_DIR/installed"
	return 0
}

teardown_file() {
	[ -n "${PRIV_DIR:-}" ] || return 0
	if id "$PRIV_USER" >/dev/null 2>&1; then
		pkill -KILL -u "$PRIV_USER" || true
		userdel "$PRIV_USER"
	fi
	getent group "$PRIV_GROUP" >/dev/null && groupdel "$PRIV_GROUP"
	[ ! -f "$PRIV_DIR/made-perf-agent-group" ] || groupdel perf-agent
	rm -rf "$PRIV_DIR"
}

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	require_root
	[ -n "${PRIV_DIR:-}" ] || fail "no directory on a mount without nosuid for the test user"
	require_bin "$PA_WL/cpu_split"
	[ -e "$PRIV_DIR/installed" ] || {
		cat "$PRIV_DIR/install.log" "$PRIV_DIR/setcap.log" 2>/dev/null
		fail "make install or make setcap failed in setup_file"
	}
	PRA=$PRIV_DEST/usr/bin/pa-record
	# The user's own directory for this test's output.
	OUT=$PRIV_DIR/out-$BATS_TEST_NUMBER
	mkdir -p "$OUT"
	chown "$PRIV_USER:" "$OUT"
	umask 022
}

# setpriv's options that make the suite's user: their groups (or PRIV_GROUPS alone,
# when set), a clean environment (HOME in $PRIV_DIR), and PRIV_SETPRIV.
user_opts() {
	local groups=--init-groups
	[ -z "${PRIV_GROUPS:-}" ] || groups=--groups=$PRIV_GROUPS
	# shellcheck disable=SC2086 # options, split on purpose
	echo --reuid="$PRIV_USER" --regid="$PRIV_USER" "$groups" --reset-env ${PRIV_SETPRIV:-}
}

# as_user CMD...: CMD as the suite's user, with a watchdog.
as_user() {
	# shellcheck disable=SC2046 # options, split on purpose
	timeout -k 5 60 setpriv $(user_opts) -- "$@"
}

# user_workload PROGRAM SECONDS: PROGRAM (in $PRIV_DIR/wl) started as the user, in the
# background; its pid on stdout (setpriv execs it).
user_workload() {
	# shellcheck disable=SC2046 # options, split on purpose
	setpriv $(user_opts) -- "$PRIV_DIR/wl/$1" "$2" >/dev/null 3>&- &
	track $!
	echo $!
}

# refused FILE: $output is pa-record's one error line, and FILE was not written.
refused() {
	echo "status=$status output:"
	echo "$output"
	[ "$status" -eq 1 ] || fail "exit status $status, want 1"
	[ "${#lines[@]}" -eq 1 ] || fail "${#lines[@]} lines, want 1"
	[[ ${lines[0]} == "pa-record: error: "* ]] || fail "not a pa-record error line"
	if compgen -G "$1*" >/dev/null; then fail "$(ls "$1"*) written"; fi
}

@test "install: make install puts the commands, man pages, completions and the adapter under PREFIX" {
	local b m c
	cat "$PRIV_DIR/install.log"
	for b in pa-record pa-report pa-convert pa-gpu-attach perf-agent; do
		[ -x "$PRIV_DEST/usr/bin/$b" ] || fail "no /usr/bin/$b"
	done
	for m in "$PA_ROOT"/man/*.1; do
		cmp "$m" "$PRIV_DEST/usr/share/man/man1/${m##*/}" || fail "man page ${m##*/}"
	done
	c=$PRIV_DEST/usr/share/bash-completion/completions
	cmp "$PA_ROOT/completions/pa.bash" "$c/pa-record" || fail "bash completion"
	for b in pa-report pa-convert pa-gpu-attach perf-agent; do
		[ "$(readlink "$c/$b")" = pa-record ] || fail "$c/$b is not a link to pa-record"
	done
	if [ -f "$PA_ROOT/completions/_pa" ]; then
		cmp "$PA_ROOT/completions/_pa" "$PRIV_DEST/usr/share/zsh/site-functions/_pa" ||
			fail "zsh completion"
	fi
	if [ -e "$PA_BUILD/libpa-gpu-adapter.so" ]; then
		[ -f "$PRIV_DEST/usr/lib/perf-agent/libpa-gpu-adapter.so" ] || fail "no adapter"
		# pa-gpu-attach finds it from where it is installed.
		run env -u PA_GPU_ADAPTER "$PRIV_DEST/usr/bin/pa-gpu-attach" --check
		[[ ${lines[0]} == "adapter: $PRIV_DEST/usr/bin/../lib/perf-agent/libpa-gpu-adapter.so" ]] ||
			fail "$output"
	fi
}

@test "install: make setcap grants the capabilities pa-record names when it lacks them" {
	local want got
	run -0 getcap "$PRA"
	[ "$output" = "$PRA $PRIV_CAPS" ] || fail "getcap: $output"
	# A copy has none: its advice names what make setcap grants.
	cp "$PRA" "$PRIV_DIR/nocaps-pa-record"
	run -1 as_user "$PRIV_DIR/nocaps-pa-record" -d 1s -o "$OUT/x.data" -- true
	echo "$output"
	want=$(tr , '\n' <<<"${PRIV_CAPS%=ep}" | sort)
	got=$(sed -nE 's/.*sudo setcap ([a-z_,]+)\+ep pa-record.*/\1/p' <<<"$output" | tr , '\n' | sort)
	[ -n "$got" ] && [ "$got" = "$want" ] || fail "pa-record names '$got', make setcap grants '$want'"
}

@test "install: make without a build tool names it and the fix, and make clean still works" {
	run -2 make -C "$PA_ROOT" --no-print-directory O="$PRIV_DIR/nobuild" \
		PROTOC_C=pa-no-such-protoc-c all
	echo "$output"
	[ "${#lines[@]}" -eq 1 ] || fail "${#lines[@]} lines"
	[[ ${lines[0]} == *"*** pa-no-such-protoc-c not found; run 'make deps' (installs the Debian packages, needs root).  Stop." ]] ||
		fail "not the expected line"
	[ ! -e "$PRIV_DIR/nobuild" ] || fail "it began building"
	run -0 make -C "$PA_ROOT" --no-print-directory O="$PRIV_DIR/nobuild" \
		PROTOC_C=pa-no-such-protoc-c clean
}

@test "privilege: a user records their own process with the setcap'd pa-record, into a 0600 file" {
	pid=$(user_workload cpu_split 6)
	sleep 0.3
	run -0 as_user "$PRA" -N -F 999 -p "$pid" -d 1s -o "$OUT/own.data"
	echo "$output"
	a=$(overhead_of hot_a "$OUT/own.data")
	echo "hot_a=$a%"
	in_range "$a" 50 90
	[ "$(stat -c '%a %U' "$OUT/own.data")" = "600 $PRIV_USER" ] ||
		fail "$(stat -c '%a %U' "$OUT/own.data")"
}

@test "privilege: the user may not record another user's process: one line, no file" {
	run as_user "$PRA" -N -p 1 -d 1s -o "$OUT/one.data"
	refused "$OUT/one.data"
	[[ ${lines[0]} == "pa-record: error: process 1 is another user's (uid 0): you may profile only your own processes; ask an administrator to allow you (group perf-agent, or allow-users or allow-group in /etc/perf-agent.conf)" ]] ||
		fail "not the expected line"
}

@test "privilege: the user may not record their own process while it runs a setgid program (not dumpable)" {
	# Its uids stay the user's; only /proc/PID, which the kernel gives to root, says so.
	install -m 2755 -g root "$PRIV_DIR/wl/cpu_split" "$PRIV_DIR/wl/sgid_split"
	pid=$(user_workload sgid_split 6)
	sleep 0.3
	grep -E "^Uid:\s+$(id -u "$PRIV_USER")\s" "/proc/$pid/status" || fail "not the user's"
	run as_user "$PRA" -N -p "$pid" -d 1s -o "$OUT/sgid.data"
	refused "$OUT/sgid.data"
	[[ ${lines[0]} == "pa-record: error: process $pid is not dumpable "*"only root or an allowed user may profile it; ask an administrator"* ]] ||
		fail "not the expected line"
}

@test "privilege: the user may not record the whole system (-a): one line, no file" {
	run as_user "$PRA" -N -a -d 1s -o "$OUT/all.data"
	refused "$OUT/all.data"
	[[ ${lines[0]} == "pa-record: error: -a profiles every user's processes, and only root or an allowed user may; "* ]] ||
		fail "not the expected line"
}

# conf_pa_record: a pa-record built from the suite's objects with PA_CONF_FILE in
# $PRIV_DIR (only the files that use it are compiled again, as the suite's build was:
# with the sanitizers if it has them), with the capabilities.
conf_pa_record() {
	local b=$PRIV_DIR/conf-build san=
	if [ ! -x "$b/pa-record" ]; then
		mkdir -p "$b"
		if readelf -d "$PA_BUILD/pa-record" | grep -q libasan; then san=SAN=1; fi
		cp -a "$PA_BUILD"/{cmd,libcommon,libcommon.a,gen,bpf,vmlinux.h} "$PA_BUILD"/*.skel.h "$b/" &&
			make -C "$PA_ROOT" --no-print-directory O="$b" $san \
				PA_CONF_FILE="$PRIV_DIR/perf-agent.conf" "$b/pa-record" >"$b.log" 2>&1 ||
			fail "building pa-record with PA_CONF_FILE: $(tail -5 "$b.log")" || return 1
		setcap "${PRIV_CAPS%=ep}+ep" "$b/pa-record" || return 1
	fi
	echo "$b/pa-record"
}

@test "privilege: allow-users and allow-group in the administrator's file let the user record -a" {
	pr=$(conf_pa_record)
	conf=$PRIV_DIR/perf-agent.conf
	printf '# who may record every process\nallow-users = nobody, %s\n' "$PRIV_USER" >"$conf"
	chmod 0644 "$conf"
	run -0 as_user "$pr" -q -N -a -d 1s -o "$OUT/users.data"
	[ "$(samples_in "$OUT/users.data")" -gt 0 ] || fail "no samples"
	# One others may write is not trusted.
	chmod 0666 "$conf"
	run as_user "$pr" -q -N -a -d 1s -o "$OUT/writable.data"
	[ "$status" -eq 1 ] && [[ $output == *"$conf is ignored: root must own it"* ]] || fail "$output"
	printf 'allow-users = nobody\nallow-group = %s\n' "$PRIV_GROUP" >"$conf"
	chmod 0644 "$conf"
	run as_user "$pr" -q -N -a -d 1s -o "$OUT/nogroup.data"
	refused "$OUT/nogroup.data"
	[[ ${lines[0]} == *"allow-users or allow-group in $conf)" ]] || fail "not the file's path"
	PRIV_GROUPS=$PRIV_GROUP run -0 as_user "$pr" -q -N -a -d 1s -o "$OUT/group.data"
	[ "$(samples_in "$OUT/group.data")" -gt 0 ] || fail "no samples"
}

@test "privilege: members of the group perf-agent may record -a without a config file" {
	if ! getent group perf-agent >/dev/null; then
		groupadd perf-agent
		touch "$PRIV_DIR/made-perf-agent-group"
	fi
	pr=$(conf_pa_record)
	rm -f "$PRIV_DIR/perf-agent.conf"
	run as_user "$pr" -q -N -a -d 1s -o "$OUT/before.data"
	refused "$OUT/before.data"
	PRIV_GROUPS=perf-agent run -0 as_user "$pr" -q -N -a -d 1s -o "$OUT/member.data"
	[ "$(samples_in "$OUT/member.data")" -gt 0 ] || fail "no samples"
}

@test "privilege: -- CMD runs as the user without the capabilities pa-record holds" {
	local u g
	u=$(id -u "$PRIV_USER")
	g=$(id -g "$PRIV_USER")
	# The user's session carries an inheritable capability: CMD must not.
	# shellcheck disable=SC2016 # $PPID is the child shell's
	PRIV_SETPRIV=--inh-caps=+sys_nice run -0 as_user "$PRA" -q -N -o "$OUT/cmd.data" -- \
		sh -c 'sed "s/^/cmd /" /proc/self/status; sed "s/^/rec /" /proc/$PPID/status'
	echo "$output"
	for k in CapInh CapPrm CapEff CapAmb; do
		grep -qE "^cmd $k:\s+0+$" <<<"$output" || fail "CMD's $k is not empty"
	done
	grep -qE "^cmd Uid:\s+$u\s+$u\s+$u\s+$u$" <<<"$output" || fail "CMD's uids"
	grep -qE "^cmd Gid:\s+$g\s+$g\s+$g\s+$g$" <<<"$output" || fail "CMD's gids"
	# pa-record itself has them: CAP_BPF (39), and CAP_SYS_NICE (23) from the session.
	eff=$(sed -nE 's/^rec CapEff:\s+([0-9a-f]+)$/\1/p' <<<"$output")
	inh=$(sed -nE 's/^rec CapInh:\s+([0-9a-f]+)$/\1/p' <<<"$output")
	(((16#${eff:-0} >> 39) & 1)) || fail "pa-record has no CAP_BPF"
	(((16#${inh:-0} >> 23) & 1)) || fail "pa-record's session has no CAP_SYS_NICE"
	[ "$(stat -c %a "$OUT/cmd.data")" = 600 ]
}

@test "privilege: a user's process is not followed into a setuid program" {
	install -m 4755 -o root "$PRIV_DIR/wl/cpu_split" "$PRIV_DIR/wl/suid_split"
	run -0 as_user "$PRA" -N -o "$OUT/exec.data" -- \
		sh -c "$PRIV_DIR/wl/cpu_split 1; $PRIV_DIR/wl/suid_split 1"
	rec=$output
	echo "$rec"
	run -0 "$PA_REPORT" --no-children --sort comm -g none -i "$OUT/exec.data"
	echo "$output"
	grep -qE '^ +[0-9.]+% +cpu_split$' <<<"$output" || fail "the user's own program not recorded"
	if grep -q suid_split <<<"$output"; then fail "the setuid program was recorded"; fi
	[[ $rec == *"pa-record: warning: 1 process ran a setuid, setgid or file-capability program, not followed from there"* ]] ||
		fail "no warning"
}

@test "privilege: a setuid pa-record refuses to run" {
	install -m 4755 -o root "$PRA" "$PRIV_DIR/suid-pa-record"
	run as_user "$PRIV_DIR/suid-pa-record" -N -d 1s -o "$OUT/suid.data" -- true
	refused "$OUT/suid.data"
	[[ ${lines[0]} == *"runs setuid or setgid; remove that (chmod ug-s) and grant it file capabilities instead (make setcap)" ]] ||
		fail "not the expected line"
}

@test "privilege: root's output files are 0600 too (pa-record -o, pa-convert -o)" {
	require_bin "$PA_RECORD" "$PA_CONVERT"
	w=$(wl cpu_split)
	pa_record -q -N -o r.data -- "$w" 0.5
	"$PA_CONVERT" -i r.data --folded -o r.folded
	"$PA_CONVERT" -i r.data --pprof -o r.pb.gz
	"$PA_CONVERT" -i r.data --flamegraph -o r.html
	for f in r.data r.folded r.pb.gz r.html; do
		[ "$(stat -c %a "$f")" = 600 ] || fail "$f is $(stat -c %a "$f")"
	done
}
