#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# CPython interpreters found from the files a process maps (not its name): pyenv's
# libpython 3.11 to 3.13, Debian's python3 with the interpreter linked in, 3.10 refused.
# The version pa-record reads from the file is the one the interpreter reports.
# The single-threaded busy loops end by the process's CPU time
# (time.process_time), not the wall clock: on this VM the host can take half the CPU
# (steal), and a 1 s wall-clock loop then got 238-508 samples at 499 Hz.

load lib/helpers
load lib/sid_python

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

# thread_block FILE TID: the frames --dump printed for thread TID.
thread_block() {
	awk -v h="^Thread $2: " '$0 ~ h { on = 1; next } on && /^$/ { exit } on' "$1"
}

# dump_until PID PATTERN: --dump -p PID into dump.txt (stderr too), again until a line
# matches PATTERN (the interpreter may not have reached it yet); 20 tries.
dump_until() {
	for _ in $(seq 20); do
		"$PA_RECORD" --dump -p "$1" >dump.txt 2>&1 && grep -q -- "$2" dump.txt && return
		sleep 0.2
	done
}

# The line of thread_block's output where a frame matching PATTERN is, 0 if none.
frame_at() {
	grep -n -m1 -- "$1" | cut -d: -f1 | grep . || echo 0
}

# --dump -p PID: every thread's stack, kernel, native and Python, once.
@test "python: --dump -p prints each thread's stack, native and Python frames (3.11, 3.12, 3.13)" {
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
		for _ in $(seq 20); do
			"$PA_RECORD" --dump -p "$pid" >dump.txt 2>dump.err &&
				thread_block dump.txt "$pid" | grep '/t\.py:' | cmp -s - want.txt && break
			sleep 0.1
		done
		cat dump.txt dump.err
		grep -qE "^Process $pid: CPython $v\.[0-9]+$" dump.txt || fail "$v: no process line"
		grep -qE "^Thread $pid: python$v \((sleeping, S|on CPU|runnable, R)\)$" dump.txt ||
			fail "$v: no main thread"
		thread_block dump.txt "$pid" >main.txt
		diff <(grep '/t\.py:' main.txt) want.txt || fail "$v: main thread's Python frames differ"
		# Native frames in their place: C under Python, Python under the interpreter.
		[ "$(frame_at 'time_sleep (libpython' <main.txt)" -gt 0 ] &&
			[ "$(frame_at 'time_sleep (libpython' <main.txt)" -lt "$(frame_at '^    leaf (' <main.txt)" ] ||
			fail "$v: time_sleep is not above leaf"
		[ "$(frame_at '^    <module> (' <main.txt)" -lt "$(frame_at 'Py_BytesMain (' <main.txt)" ] ||
			fail "$v: Py_BytesMain is not below <module>"
		grep -q 'clock_nanosleep.* (\[kernel.kallsyms\])$' main.txt || grep -q 'nanosleep' main.txt ||
			fail "$v: no sleep frame"
		grep -q '^    Thread.run (.*threading.py:[0-9]*)$' dump.txt ||
			fail "$v: the second thread's Thread.run is missing"
		[ "$(awk '/^TracerPid:/ { print $2 }' "/proc/$pid/status")" = 0 ] ||
			fail "$v: the process was ptraced"
		kill "$pid"
		wait "$pid" 2>/dev/null || true
	done
}

@test "python: --dump of a thread on a CPU: its last sample, under its Python caller" {
	cat >spin.py <<'PY'
def spin():
    x = 0
    while True:
        x += 1
spin()
PY
	py=$(ls -d "$PYENV"/3.12.*/bin/python3.12 | tail -1)
	"$py" spin.py &
	pid=$!
	track "$pid"
	sleep 0.5
	"$PA_RECORD" --dump -p "$pid" >dump.txt 2>dump.err || fail "--dump failed: $(cat dump.err)"
	cat dump.txt
	# Sampled on its CPU, or taken where it was preempted as the recording ended.
	grep -qE "^Thread $pid: python3.12 \((on CPU|runnable, R)\)$" dump.txt || fail "not running"
	thread_block dump.txt "$pid" >main.txt
	# The loop's lines: x += 1, or the jump back at the while.
	diff <(grep '/spin\.py:' main.txt | sed 's/spin\.py:[34])$/spin.py:L)/') \
		<(printf '    %s\n' "spin ($PWD/spin.py:L)" "<module> ($PWD/spin.py:5)") ||
		fail "Python frames differ"
	grep -q 'Py_BytesMain (' main.txt || fail "no native frames"
}

@test "python: --dump without BPF (no capabilities): Python stacks only" {
	command -v setpriv >/dev/null || skip "no setpriv (util-linux)"
	cat >t.py <<'PY'
import time
def f():
    time.sleep(30)
f()
PY
	py=$(ls -d "$PYENV"/3.12.*/bin/python3.12 | tail -1)
	# The target without capabilities too, so one without them may read it.
	setpriv --bounding-set -all --inh-caps -all -- "$py" t.py &
	pid=$!
	track "$pid"
	for _ in $(seq 50); do
		setpriv --bounding-set -all --inh-caps -all -- "$PA_RECORD" --dump -p "$pid" \
			>dump.txt 2>dump.err && grep -q '^    f (' dump.txt && break
		sleep 0.1
	done
	cat dump.txt dump.err
	grep -q 'BPF cannot be loaded here .*: Python stacks only' dump.err || fail "no warning"
	grep -A2 "^Thread $pid:$" dump.txt | tail -2 >got.txt
	printf '    %s\n' "f ($PWD/t.py:3)" "<module> ($PWD/t.py:4)" | diff - got.txt ||
		fail "stack differs"
	run setpriv --bounding-set -all --inh-caps -all -- "$PA_RECORD" --dump -p 1
	[ "$status" -ne 0 ] && [[ $output == *"cannot read process 1's mappings"* ]] ||
		fail "no error for a process it may not read: $output"
}

@test "python: --dump of a process that is not Python: its native stack; errors" {
	sleep 30 &
	pid=$!
	track "$pid"
	run "$PA_RECORD" --dump -p "$pid"
	[ "$status" -eq 0 ] || fail "--dump failed: $output"
	[[ $output == *"Process $pid: sleep"* ]] || fail "no process line: $output"
	[[ $output == *"Thread $pid: sleep (sleeping, S)"* ]] || fail "no thread line: $output"
	[[ $output == *"nanosleep"*"(libc.so.6)"* ]] || fail "no libc frame: $output"
	run "$PA_RECORD" --dump -p 999999999
	[ "$status" -ne 0 ] && [[ $output == *"no process with PID 999999999"* ]] ||
		fail "no process: $output"
	run "$PA_RECORD" --dump
	[ "$status" -ne 0 ] && [[ $output == *"--dump needs -p PID"* ]] || fail "no -p: $output"
	ls "${TMPDIR:-/tmp}"/pa-dump-* 2>/dev/null && fail "a capture was left behind"
	true
}

# --- Python frames walked from BPF -------------------------------------------------

# The interpreters the frame tests run: pyenv's 3.11, 3.12, 3.13 and Debian's 3.11.
interpreters() {
	local v
	for v in 3.11 3.12 3.13; do
		ls -d "$PYENV"/"$v".*/bin/python"$v" | tail -1
	done
	ls /usr/bin/python3.[0-9]* | grep -E 'python3\.[0-9]+$' | head -1
}

# folded FILE [EVENT]: pa-convert's folded stacks of FILE ("frames count" lines).
folded() {
	"$PA_CONVERT" -i "$1" --folded ${2:+--event "$2"} >folded.txt 2>conv.err ||
		fail "pa-convert failed: $(cat conv.err)"
}

# weight RE: the samples (or ns) of folded.txt whose stack matches RE.
weight() {
	awk -v re="$1" '{ n = $NF; $NF = ""; if ($0 ~ re) t += n } END { print t + 0 }' folded.txt
}

# lines_check PY: a 70/30 pure-Python workload under PY: the functions under <module>,
# in their share, with the lines of their loop, named by perf too.
lines_check() {
	local py=$1 all mod hot cold
	cat >w.py <<'PY'
import time
def hot():
    s = 0
    for i in range(300000):
        s += i * i
    return s
def cold():
    s = 0
    for i in range(130000):
        s += i * i
    return s
def main():
    end = time.process_time() + 1.5
    while time.process_time() < end:
        hot()
        cold()
main()
PY
	pa_record -v -F 499 -o pa.data -- "$py" w.py 2>rec.err ||
		fail "$py: pa-record failed: $(grep -v '^libbpf' rec.err | tail -3)"
	grep -E '^pa-record: python: [0-9]+ walks' rec.err || fail "$py: no Python walks"
	folded pa.data
	all=$(weight .)
	# In place of the eval loop PyEval_EvalCode called, not at the root (native frames
	# between have no "(file)"): Debian's stripped executables need the split loop found.
	mod=$(weight 'PyEval_EvalCode;([^;(]*;)*<module>_\(w\.py\);main_\(w\.py\)')
	hot=$(weight '<module>_\(w\.py\);main_\(w\.py\);hot_\(w\.py\)')
	cold=$(weight '<module>_\(w\.py\);main_\(w\.py\);cold_\(w\.py\)')
	echo "$py: $all samples, $mod under <module>;main, hot $hot, cold $cold"
	# Start-up (ld.so, imports) is the rest.
	[ $((mod * 100)) -ge $((all * 90)) ] || fail "$py: $mod of $all under <module>"
	[ $((hot * 100)) -ge $(((hot + cold) * 55)) ] &&
		[ $((hot * 100)) -le $(((hot + cold) * 85)) ] ||
		fail "$py: hot $hot vs cold $cold, not about 70/30"
	# No interpreter loop left where Python frames stand.
	[ "$(weight 'main_\(w\.py\);.*_PyEval_EvalFrameDefault')" = 0 ] ||
		fail "$py: _PyEval_EvalFrameDefault under main"
	# perf names them too, with the lines of the loop.  Only the 4 frames nearest the
	# leaf, where hot() is in most samples: perf asks addr2line for the line of every
	# frame it prints, in a round trip each (45 s for whole stacks here).
	perf report -i pa.data --no-children --stdio -g none --sort sym 2>/dev/null |
		grep -E '%.*hot \(w\.py\)$' || fail "$py: perf report does not name hot"
	perf script --max-stack 4 -i pa.data -F ip,sym,srcline 2>/dev/null |
		grep -A1 ' hot (w\.py)$' | grep -oE 'w\.py:[0-9]+' | sort | uniq -c >lines.txt
	cat lines.txt
	awk '$2 == "w.py:4" || $2 == "w.py:5" { t += $1 } { a += $1 }
		END { exit !(a > 0 && t * 100 >= a * 95) }' lines.txt ||
		fail "$py: hot's lines are not the loop's"
}

# cext_check PY: zlib's and hashlib's C code under the Python functions calling them.
cext_check() {
	local py=$1 defl under sha shaunder
	cat >c.py <<'PY'
import hashlib, os, time, zlib
data = os.urandom(1 << 20)
def squeeze():
    zlib.compress(data, 6)
def digest():
    hashlib.sha256(data * 4).digest()
end = time.process_time() + 1
while time.process_time() < end:
    squeeze()
    digest()
PY
	pa_record -F 499 -o pa.data -- "$py" c.py 2>rec.err ||
		fail "$py: pa-record failed: $(grep -v '^libbpf' rec.err | tail -3)"
	folded pa.data
	defl=$(weight ';deflate')
	under=$(weight '<module>_\(c\.py\);squeeze_\(c\.py\);.*;deflate')
	sha=$(weight '[Ss][Hh][Aa]256')
	shaunder=$(weight '<module>_\(c\.py\);digest_\(c\.py\);.*[Ss][Hh][Aa]256')
	echo "$py: deflate $under of $defl under squeeze, sha256 $shaunder of $sha under digest"
	[ "$defl" -ge 50 ] && [ $((under * 100)) -ge $((defl * 95)) ] ||
		fail "$py: zlib's deflate not under squeeze"
	[ "$sha" -ge 20 ] && [ $((shaunder * 100)) -ge $((sha * 95)) ] ||
		fail "$py: sha256 not under digest"
}

@test "python: Python functions with their lines, in place of _PyEval_EvalFrameDefault (3.11-3.13, Debian 3.11)" {
	require_perf
	for py in $(interpreters); do
		lines_check "$py"
	done
}

@test "python: a C extension sits under the Python function that called it" {
	for py in $(interpreters); do
		cext_check "$py"
	done
}

# Debian's builds split _PyEval_EvalFrameDefault (PGO): the loop has no symbol in the
# stripped executable, and is found by the jumps into it.
@test "python: CPython 3.14 and 3.15 (Debian sid): frames, lines, C extensions, --dump" {
	require_perf
	local v
	for v in 3.14 3.15 3.14-shared 3.15-shared; do
		sid_python "$v"
		lines_check "$SID_PYTHON"
		cext_check "$SID_PYTHON"
	done
	for v in 3.14 3.15; do
		sid_python "$v"
		cat >d.py <<'PY'
import time
def f():
    time.sleep(30)
f()
PY
		"$SID_PYTHON" d.py &
		pid=$!
		track "$pid"
		dump_until "$pid" '^    f ('
		cat dump.txt
		grep -qE "^Process $pid: CPython $v\.[0-9]+" dump.txt || fail "$v: no process line"
		thread_block dump.txt "$pid" >main.txt
		grep '/d\.py:' main.txt >got.txt
		printf '    %s\n' "f ($PWD/d.py:3)" "<module> ($PWD/d.py:4)" | diff - got.txt ||
			fail "$v: --dump's stack differs"
		[ "$(frame_at 'clock_nanosleep (libc' <main.txt)" -gt 0 ] &&
			[ "$(frame_at 'clock_nanosleep (libc' <main.txt)" -lt "$(frame_at '^    f (' <main.txt)" ] ||
			fail "$v: clock_nanosleep is not above f"
		[ "$(frame_at '^    <module> (' <main.txt)" -lt "$(frame_at 'Py_BytesMain (' <main.txt)" ] ||
			fail "$v: Py_BytesMain is not below <module>"
		kill "$pid"
		wait "$pid" 2>/dev/null || true
	done
}

@test "python: threads and sleeps: Thread.run on CPU, the caller of time.sleep off it; never ptraced" {
	cat >t.py <<'PY'
import threading, time
def spin():
    end = time.time() + 1.5
    while time.time() < end:
        pass
def nap():
    for _ in range(15):
        time.sleep(0.1)
t = threading.Thread(target=spin)
t.start()
nap()
t.join()
PY
	# Each interpreter with the off-CPU method the kernel takes, and one with the
	# stacks stashed at switch-out (sent at switch-in) and with raw_tp.
	local runs py12
	py12=$(ls -d "$PYENV"/3.12.*/bin/python3.12 | tail -1)
	runs="$(interpreters | sed 's/$/:/') $py12:switch-out $py12:raw-tp"
	for run in $runs; do
		py=${run%:*}
		cp "$py" ./python
		PA_RECORD_SWITCH=${run##*:} pa_record --offcpu -F 499 -o pa.data -- ./python t.py 2>rec.err &
		local rec=$! pid="" traced=0
		# pa-record starts the command once its tables are loaded: seconds on a busy
		# machine with a cold cache.
		for _ in $(seq 400); do
			pid=$(pgrep -f '^\./python t\.py' | head -1) && [ -n "$pid" ] && break
			kill -0 "$rec" 2>/dev/null || break
			sleep 0.05
		done
		while [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; do
			t=$(awk '/^TracerPid:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
			[ "${t:-0}" = 0 ] || traced=1
			sleep 0.1
		done
		wait "$rec" || fail "$py: pa-record failed: $(grep -v '^libbpf' rec.err | tail -3)"
		[ -n "$pid" ] && [ "$traced" = 0 ] || fail "$py: pid '$pid' traced $traced"
		folded pa.data
		local all spin
		all=$(weight .)
		# Thread.run calls spin through C in 3.11 (_PyEval_Vector): either way.
		spin=$(weight 'Thread\._bootstrap_\(threading\.py\);.*Thread\.run_\(threading\.py\);(.*;)?spin_\(t\.py\)')
		echo "$py: $spin of $all on-CPU samples in spin under Thread.run"
		[ $((spin * 100)) -ge $((all * 80)) ] || fail "$py: spin not under Thread.run"
		folded pa.data offcpu-time
		all=$(weight .)
		nap=$(weight '<module>_\(t\.py\);nap_\(t\.py\);.*(clock_nanosleep|nanosleep)')
		echo "$run: $nap of $all ns off the CPU in nap's sleeps"
		[ $((nap / 1000000)) -ge 1200 ] || fail "$run: nap's sleeps not found off the CPU"
	done
}

# In a container the interpreter's native_thread_id is the tid of its pid namespace.
@test "python: an interpreter in its own pid namespace (a container) has its Python frames" {
	command -v unshare >/dev/null || skip "unshare (util-linux) missing"
	local py all mod
	py=$(ls -d "$PYENV"/3.12.*/bin/python3.12 | tail -1)
	cat >n.py <<'PY'
import time
def spin():
    end = time.process_time() + 1
    while time.process_time() < end:
        pass
spin()
PY
	pa_record -v -F 499 -o pa.data -- unshare --pid --fork --mount-proc "$py" n.py 2>rec.err ||
		fail "pa-record failed: $(grep -v '^libbpf' rec.err | tail -3)"
	grep 'python: [0-9]* walks' rec.err
	folded pa.data
	all=$(weight '^python3\.12;')
	mod=$(weight '<module>_\(n\.py\);spin_\(n\.py\)')
	echo "$mod of $all python3.12 samples under <module>;spin"
	[ "$all" -ge 300 ] && [ $((mod * 100)) -ge $((all * 90)) ] || fail "no Python frames"

	# --dump walks a thread that is not running: its id in the namespace comes from
	# its task, not from the current one's.
	cat >s.py <<'PY'
import time
def nap():
    time.sleep(30)
nap()
PY
	unshare --pid --fork --mount-proc "$py" s.py &
	track $!
	for _ in $(seq 50); do
		pid=$(pgrep -f "^$py s.py" | grep -vx "$!" | head -1)
		[ -n "$pid" ] && grep -q "s.py" "/proc/$pid/cmdline" 2>/dev/null && break
		sleep 0.1
	done
	[ -n "$pid" ] || fail "the namespaced interpreter did not start"
	track "$pid"
	dump_until "$pid" '^    nap ('
	cat dump.txt
	thread_block dump.txt "$pid" | grep '/s\.py:' | diff - <(printf '    %s\n' "nap ($PWD/s.py:3)" "<module> ($PWD/s.py:4)") ||
		fail "--dump in a pid namespace: Python frames missing"
}

@test "python: a forked child and a subprocess have their Python frames; so has -a" {
	local py c sub all
	py=$(ls -d "$PYENV"/3.12.*/bin/python3.12 | tail -1)
	cat >f.py <<'PY'
import os, subprocess, sys, time
def child_work():
    end = time.process_time() + 1
    while time.process_time() < end:
        pass
def parent_wait():
    pid = os.fork()
    if pid == 0:
        child_work()
        os._exit(0)
    os.waitpid(pid, 0)
parent_wait()
subprocess.run([sys.executable, "s.py"])
PY
	cat >s.py <<'PY'
import time
def sub_work():
    end = time.process_time() + 1
    while time.process_time() < end:
        pass
sub_work()
PY
	pa_record -F 499 -o pa.data -- "$py" f.py 2>rec.err ||
		fail "pa-record failed: $(grep -v '^libbpf' rec.err | tail -3)"
	folded pa.data
	c=$(weight '<module>_\(f\.py\);parent_wait_\(f\.py\);child_work_\(f\.py\)')
	sub=$(weight '<module>_\(s\.py\);sub_work_\(s\.py\)')
	echo "forked child: $c samples, subprocess: $sub"
	[ "$c" -ge 400 ] || fail "the forked child's frames: $c samples"
	[ "$sub" -ge 400 ] || fail "the subprocess's frames: $sub samples"

	cp "$py" ./python
	./python -c 'import time
def sysw():
    end = time.time() + 4
    while time.time() < end:
        pass
sysw()' &
	track $!
	sleep 0.5
	pa_record -a -F 499 -d 2s -o a.data 2>rec.err ||
		fail "pa-record -a failed: $(grep -v '^libbpf' rec.err | tail -3)"
	folded a.data
	all=$(weight '^python;')
	sub=$(weight '^python;.*<module>_\(<string>\);sysw_\(<string>\)')
	echo "-a: $sub of $all samples of python under sysw"
	# 998 at best: 2 s at 499 Hz of a loop that runs by the wall clock, as -a must.
	[ "$all" -ge 300 ] && [ $((sub * 100)) -ge $((all * 95)) ] || fail "-a: no Python frames"
}

# asyncio: the running coroutine's frames are in the thread's frame chain.
@test "python: asyncio: the running coroutine under the event loop's frames" {
	local py all co
	py=$(ls -d "$PYENV"/3.12.*/bin/python3.12 | tail -1)
	cat >a.py <<'PY'
import asyncio, time
async def crunch():
    end = time.process_time() + 1
    s = 0
    while time.process_time() < end:
        s += 1
        if s % 1000 == 0:
            await asyncio.sleep(0)
async def main():
    await asyncio.gather(crunch(), crunch())
asyncio.run(main())
PY
	pa_record -F 499 -o pa.data -- "$py" a.py 2>rec.err ||
		fail "pa-record failed: $(grep -v '^libbpf' rec.err | tail -3)"
	folded pa.data
	# Of the samples in asyncio.run (start-up imports are the rest), crunch's.
	all=$(weight '<module>_\(a\.py\);run_\(runners\.py\)')
	co=$(weight '<module>_\(a\.py\);run_\(runners\.py\);.*_run_once_\(base_events\.py\);.*;task_step;.*crunch_\(a\.py\)')
	echo "$co of $all samples in asyncio.run in crunch, under the event loop and task_step"
	[ "$all" -ge 300 ] && [ $((co * 100)) -ge $((all * 85)) ] || fail "crunch not under the loop"
}
