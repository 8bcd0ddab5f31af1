#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# CPython interpreters found from the files a process maps (not its name): pyenv's
# libpython 3.11 to 3.13, Debian's python3 with the interpreter linked in, 3.10 refused.
# The version pa-record reads from the file is the one the interpreter reports.

load lib/helpers

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	require_root
	require_bin "$PA_RECORD"
	PYENV=$(pyenv_root)/versions
}

# Where pyenv keeps its interpreters: $PYENV_ROOT, pyenv's own answer, or root's.
pyenv_root() {
	if [ -n "${PYENV_ROOT:-}" ]; then
		echo "$PYENV_ROOT"
	elif command -v pyenv >/dev/null && pyenv root 2>/dev/null; then
		:
	elif [ -d "${HOME:-/root}/.pyenv" ]; then
		echo "${HOME:-/root}/.pyenv"
	else
		echo /root/.pyenv
	fi
}

# found PYTHON: pa-record -v names PYTHON's interpreter with the version it reports.
found() {
	local py=$1 want
	want=$("$py" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])') ||
		fail "$py does not run"
	pa_record -v -F 99 -o pa.data -- "$py" -c 'import time; time.sleep(0.2)' 2>rec.err ||
		fail "pa-record failed: $(grep -v '^libbpf' rec.err | tail -3)"
	grep '^pa-record: python:' rec.err || fail "no interpreter found in $py"
	grep -qE "^pa-record: python: pid [0-9]+: CPython $want in /" rec.err ||
		fail "$py reports $want"
}

@test "python: pyenv's CPython 3.11, 3.12 and 3.13 found in their libpython" {
	for v in 3.11 3.12 3.13; do
		py=$(ls -d "$PYENV"/"$v".*/bin/python"$v" | tail -1)
		[ -x "$py" ] || fail "no pyenv CPython $v under $PYENV"
		found "$py"
		grep -q "in .*/libpython$v\.so" rec.err || fail "$v not found in its libpython"
	done
	grep -q 'with _Py_DebugOffsets' rec.err || fail "3.13's _Py_DebugOffsets not seen"
}

@test "python: Debian's python3, the interpreter linked into the executable" {
	py=$(ls /usr/bin/python3.[0-9]* | grep -E 'python3\.[0-9]+$' | head -1)
	[ -x "$py" ] || fail "no /usr/bin/python3.X"
	found "$py"
	grep -q "in $py " rec.err || fail "not found in $py itself"
}

@test "python: CPython 3.10 is refused by name (end of life)" {
	py=$(ls -d "$PYENV"/3.10.*/bin/python3.10 | tail -1)
	[ -x "$py" ] || fail "no pyenv CPython 3.10 under $PYENV"
	pa_record -v -F 99 -o pa.data -- "$py" -c 'pass' 2>rec.err ||
		fail "pa-record failed: $(grep -v '^libbpf' rec.err | tail -3)"
	grep -E '^pa-record: python: pid [0-9]+: CPython 3.10 or older in .*: end of life' rec.err ||
		fail "3.10 not refused: $(grep python: rec.err)"
}

# --dump -p PID: every thread's Python stack, read from outside the process.
@test "python: --dump -p prints each thread's Python stack (3.11, 3.12, 3.13)" {
	cat >t.py <<'PY'
import threading, time
def leaf():
    while True:
        time.sleep(0.01)
def middle():
    leaf()
def outer():
    middle()
threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
outer()
PY
	for v in 3.11 3.12 3.13; do
		py=$(ls -d "$PYENV"/"$v".*/bin/python"$v" | tail -1)
		[ -x "$py" ] || fail "no pyenv CPython $v under $PYENV"
		cp "$py" "./python$v"
		"./python$v" t.py &
		pid=$!
		track "$pid"
		printf '    %s\n' "leaf ($PWD/t.py:4)" "middle ($PWD/t.py:6)" \
			"outer ($PWD/t.py:8)" "<module> ($PWD/t.py:10)" >want.txt
		# Until leaf() runs, and is caught in time.sleep (not on line 3).
		for _ in $(seq 50); do
			"$PA_RECORD" --dump -p "$pid" >dump.txt 2>dump.err &&
				grep -A4 "^Thread $pid:" dump.txt | tail -4 | cmp -s - want.txt && break
			sleep 0.1
		done
		cat dump.txt dump.err
		grep -qE "^Process $pid: CPython $v\.[0-9]+$" dump.txt || fail "$v: no process line"
		grep -A4 "^Thread $pid:" dump.txt >main.txt || fail "$v: no main thread"
		diff <(tail -4 main.txt) want.txt || fail "$v: main thread's stack differs"
		grep -q '^    Thread.run (.*threading.py:[0-9]*)$' dump.txt ||
			fail "$v: the second thread's Thread.run is missing"
		[ "$(awk '/^TracerPid:/ { print $2 }' "/proc/$pid/status")" = 0 ] ||
			fail "$v: the process was ptraced"
		kill "$pid"
		wait "$pid" 2>/dev/null || true
	done
}

@test "python: --dump errors: not Python, no process, no -p" {
	sleep 5 &
	track $!
	run "$PA_RECORD" --dump -p $!
	[ "$status" -ne 0 ] && [[ $output == *"no CPython 3.10 or later interpreter mapped"* ]] ||
		fail "not Python: $output"
	run "$PA_RECORD" --dump -p 999999999
	[ "$status" -ne 0 ] && [[ $output == *"no such process"* ]] || fail "no process: $output"
	run "$PA_RECORD" --dump
	[ "$status" -ne 0 ] && [[ $output == *"--dump needs -p PID"* ]] || fail "no -p: $output"
}
