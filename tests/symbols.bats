#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Symbolization for real machines: stripped binaries get their names back from
# MiniDebugInfo, debug files (perf's build-id cache, .gnu_debuglink) and a local
# debuginfod; C++/Rust names are demangled; unnamed functions add up by their
# .eh_frame start.  Captures are made with Linux perf so only the reading side is tested.

load lib/helpers

# A workload whose hot function is static (gone when stripped) and whose time is spent
# in an always_inline helper inside it.
hot_src() {
	cat >w.c <<'SRC'
#include <stdlib.h>
#include <time.h>
static volatile unsigned long sink;
static inline __attribute__((always_inline)) void mix_inl(long i) { sink += i * 7; sink ^= i >> 3; }
static __attribute__((noinline)) void spin_hidden(long n) { for (long i = 0; i < n; i++) mix_inl(i); }
int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.5;
	struct timespec a, b;
	long n = 100000 + argc;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		spin_hidden(n);
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < secs);
	return 0;
}
SRC
	gcc -O2 -g -o w.full w.c
}

bid_of() {
	readelf -n "$1" | sed -n 's/.*Build ID: //p'
}

# rec BIN: perf record -g of BIN for 0.5 s into p.data.  perf 6.1 can abort, or write a
# capture it cannot read back, when another profiler loads BPF programs meanwhile:
# retried, as perf_capture does (which runs only tests/workloads programs).
rec() {
	local try
	for try in 1 2 3; do
		rm -f p.data p.data.old
		if perf record -q -F 999 -g -o p.data -- "$@" 0.5 >/dev/null 2>&1 &&
			perf script -F tid -i p.data >/dev/null 2>&1; then
			rm -f p.data.old
			return 0
		fi
		echo "rec: perf record failed or wrote an unreadable capture (try $try)" >&2
	done
	fail "perf record failed 3 times on $*"
}

# names FILE: every frame name pa-report prints for FILE (entries and call graph).
# Inlined frames come first in a sample's stack, so the hot static function may show
# as the caller of its inlined helper rather than as the top entry.
names() {
	HOME=$PWD "$PA_REPORT" -i "$1" --children --sort sym -g caller ||
		fail "pa-report -i $1 failed"
}

setup_file() {
	export DEBUGINFOD_URLS= DEBUGINFOD_CACHE_PATH=$BATS_FILE_TMPDIR/dcache
}

@test "symbols: a stripped binary is unnamed, grouped by function start (w+0xFDE)" {
	require_root
	require_perf
	require_bin "$PA_REPORT"
	hot_src
	strip -o w w.full
	HOME=$PWD rec ./w
	top=$(HOME=$PWD top_sym p.data)
	start=$(nm w.full | awk '$3 ~ /^spin_hidden/ { print $1 }' | sed 's/^0*//')
	echo "top: $top, spin_hidden at 0x$start"
	[ "$top" = "w+0x$start" ]
}

@test "symbols: .gnu_debugdata (MiniDebugInfo) brings back a stripped static function" {
	require_root
	require_perf
	require_bin "$PA_REPORT"
	hot_src
	objcopy --only-keep-debug w.full full.debug
	nm full.debug --format=posix --defined-only | awk '$2 ~ /^[Tt]$/ { print $1 }' >keep
	objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbols=keep \
		full.debug mini
	xz -f mini
	strip -o w w.full
	objcopy --add-section .gnu_debugdata=mini.xz w
	HOME=$PWD rec ./w
	top=$(HOME=$PWD top_sym p.data)
	echo "top: $top"
	[[ $top == spin_hidden* ]]
}

@test "symbols: debug file in perf's build-id cache (~/.debug/.build-id/xx/rest/debug)" {
	require_root
	require_perf
	require_bin "$PA_REPORT"
	hot_src
	strip -o w w.full
	bid=$(bid_of w.full)
	mkdir -p ".debug/.build-id/${bid:0:2}/${bid:2}"
	objcopy --only-keep-debug w.full ".debug/.build-id/${bid:0:2}/${bid:2}/debug"
	HOME=$PWD rec ./w
	out=$(names p.data)
	echo "$out" | head -20
	grep -q 'spin_hidden' <<<"$out"
}

@test "symbols: .gnu_debuglink finds .debug/NAME; a debug file with a bad CRC is refused" {
	require_root
	require_perf
	require_bin "$PA_REPORT"
	hot_src
	objcopy --only-keep-debug w.full w.debug
	strip -o w w.full
	objcopy --add-gnu-debuglink=w.debug w
	mkdir .debug && mv w.debug .debug/
	HOME=$PWD rec ./w
	out=$(names p.data)
	echo "$out" | head -20
	grep -q 'spin_hidden' <<<"$out"
	printf x >>.debug/w.debug
	top=$(HOME=$PWD top_sym p.data)
	echo "after corrupting: $top"
	[[ $top == w+0x* ]]
}

@test "symbols: inlined function shows as its own frame in the call graph" {
	require_root
	require_perf
	require_bin "$PA_REPORT"
	hot_src
	HOME=$PWD rec ./w.full
	out=$(HOME=$PWD "$PA_REPORT" -i p.data --children --sort sym -g caller)
	echo "$out" | head -40
	grep -q 'mix_inl' <<<"$out"
	grep -q 'spin_hidden' <<<"$out"
}

@test "symbols: C++ names are demangled" {
	require_root
	require_perf
	require_bin "$PA_REPORT"
	cat >c.cc <<'SRC'
#include <cstdlib>
#include <ctime>
namespace geo {
struct Spinner {
	volatile unsigned long v = 0;
	__attribute__((noinline)) void turn(long n) { for (long i = 0; i < n; i++) v += i; }
};
}
int main(int, char **argv)
{
	geo::Spinner s;
	time_t end = time(nullptr) + 1;
	double secs = atof(argv[1]);
	(void)secs;
	while (time(nullptr) < end)
		s.turn(100000);
}
SRC
	g++ -O2 -o c c.cc
	HOME=$PWD rec ./c
	out=$(HOME=$PWD report_flat p.data)
	echo "$out" | head -12
	grep -q 'geo::Spinner::turn(long)' <<<"$out"
	out=$(HOME=$PWD report_flat p.data --no-demangle)
	grep -q '_ZN3geo7Spinner4turnEl' <<<"$out" || fail "no mangled name with --no-demangle"
	if grep -q 'geo::Spinner' <<<"$out"; then fail "demangled name with --no-demangle"; fi
}

@test "symbols: Rust (v0) names are demangled" {
	require_root
	require_perf
	require_bin "$PA_REPORT"
	command -v rustc >/dev/null || PATH=$PATH:$HOME/.cargo/bin
	command -v rustc >/dev/null || skip "rustc not installed"
	cat >r.rs <<'SRC'
use std::time::{Duration, Instant};
#[inline(never)]
fn churn(n: u64) -> u64 {
    let mut a = n;
    for i in 0..n { a = std::hint::black_box(a.wrapping_mul(31).wrapping_add(i)); }
    a
}
fn main() {
    let t = Instant::now();
    let mut s = 0;
    while t.elapsed() < Duration::from_millis(500) { s += churn(100000); }
    println!("{}", s);
}
SRC
	rustc -O -C symbol-mangling-version=v0 -o r r.rs
	nm r | grep -q '_RNv.*5churn' || fail "rustc did not emit a v0 name"
	HOME=$PWD rec ./r
	out=$(HOME=$PWD report_flat p.data)
	echo "$out" | head -12
	grep -qE '\[\.\] r::churn' <<<"$out"
}

# serve DIR PORT: a local debuginfod on 127.0.0.1:PORT indexing DIR; waits until it answers.
serve() {
	command -v debuginfod >/dev/null || fail "debuginfod not installed (make deps installs it)"
	debuginfod -p "$2" -F "$1" -d "$PWD/dfd.sqlite" >dfd.log 2>&1 &
	track $!
	for _ in $(seq 50); do
		grep -q 'scanned=' dfd.log && (: <"/dev/tcp/127.0.0.1/$2") 2>/dev/null && return 0
		sleep 0.1
	done
	cat dfd.log
	fail "debuginfod did not come up"
}

@test "symbols: debuginfod on 127.0.0.1 serves the debug file of a stripped binary" {
	require_root
	require_perf
	require_bin "$PA_REPORT"
	hot_src
	mkdir srv
	objcopy --only-keep-debug w.full srv/w.debug
	strip -o w w.full
	HOME=$PWD rec ./w
	port=$((20000 + RANDOM % 20000))
	serve srv "$port"
	out=$(DEBUGINFOD_URLS=http://127.0.0.1:$port names p.data)
	echo "$out" | head -20
	grep -q 'spin_hidden' <<<"$out"
	grep -q "GET /buildid/$(bid_of w.full)/debuginfo 200" dfd.log
}

@test "symbols: with the debuginfod server down the report still completes quickly" {
	require_root
	require_perf
	require_bin "$PA_REPORT"
	hot_src
	strip -o w w.full
	HOME=$PWD rec ./w
	port=$((20000 + RANDOM % 20000))
	t0=$(ms_now)
	top=$(HOME=$PWD DEBUGINFOD_URLS=http://127.0.0.1:$port top_sym p.data)
	t1=$(ms_now)
	echo "top: $top in $((t1 - t0)) ms"
	[[ $top == w+0x* ]]
	[ $((t1 - t0)) -lt 3000 ]
}

# A tiny JIT: a counting loop copied into anonymous executable memory, named in its own
# /tmp/perf-PID.map as node --perf-basic-prof would.
jit_src() {
	cat >jit.c <<'SRC'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
/* mov %rdi,%rax; 1: dec %rax; jnz 1b; ret */
static const unsigned char code[] = { 0x48, 0x89, 0xf8, 0x48, 0xff, 0xc8, 0x75, 0xfb, 0xc3 };
int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.5;
	struct timespec a, b;
	char path[64];
	FILE *f;
	unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	memcpy(p, code, sizeof(code));
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	if (!(f = fopen(path, "w")))
		return 1;
	fprintf(f, "%lx %zx jit_hot_loop\n", (unsigned long)p, sizeof(code));
	fclose(f);
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		((long (*)(long))p)(1000000);
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < secs);
	return 0;
}
SRC
	gcc -O2 -o jit jit.c
}

@test "symbols: JIT names from the saved perf map once /tmp/perf-PID.map is gone" {
	require_root
	require_bin "$PA_RECORD" "$PA_REPORT"
	[ "$(uname -m)" = x86_64 ] || skip "the JIT fixture is x86-64 machine code"
	jit_src
	HOME=$PWD pa_record -q -F 999 -o p.data -- ./jit 0.6 || fail "pa-record failed"
	pid=$(HOME=$PWD "$PA_REPORT" -i p.data --sort pid --no-children -g none -q |
		awk '{ print $2; exit }')
	[ -n "$pid" ] || fail "no samples"
	[ -f "/tmp/perf-$pid.map" ] || fail "the fixture wrote no /tmp/perf-$pid.map"
	rm -f "/tmp/perf-$pid.map"
	[ -f ".debug/jit/perf-$pid.map" ] || fail "pa-record did not save the JIT map"
	out=$(HOME=$PWD "$PA_REPORT" -i p.data --no-children --sort sym -g none)
	echo "$out" | head -8
	grep -q 'jit_hot_loop' <<<"$out"
	# Control: without the saved copy either, the JIT code has no name.
	rm -f ".debug/jit/perf-$pid.map"
	out=$(HOME=$PWD "$PA_REPORT" -i p.data --no-children --sort sym -g none)
	! grep -q 'jit_hot_loop' <<<"$out"
}
