#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# pa-report and pa-convert on what real machines give them: inlined functions
# (entries by the real function, inlined frames in the call graph as perf --inline
# shows them, pprof Lines inlined-first), C++ names with and without demangling,
# and binaries that are gone by report time (perf's build-id cache in ~/.debug).
# Captures are made with pa-record; Linux perf reads the same cache as an oracle.

load lib/helpers

# w: the hot noinline spin_hidden() spends its time in the always_inline mix_inl().
inline_src() {
	cat >w.c <<'SRC'
#include <stdlib.h>
#include <time.h>
static volatile unsigned long sink;
static inline __attribute__((always_inline)) void mix_inl(long i) { sink += i * 7; sink ^= i >> 3; }
__attribute__((noinline)) void spin_hidden(long n) { for (long i = 0; i < n; i++) mix_inl(i); }
int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		spin_hidden(100000 + argc);
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < secs);
	return 0;
}
SRC
	gcc -O2 -g -fno-omit-frame-pointer -o w w.c
}

# rec_w: inline_src's binary recorded for 1 s into p.data (cache in the tmpdir).
rec_w() {
	require_root
	require_bin "$PA_RECORD" "$PA_REPORT" "$PA_CONVERT"
	inline_src
	HOME=$PWD pa_record -q -F 999 -o p.data -- ./w 1 || fail "pa-record failed"
}

@test "report: the entry of inlined code is the real function, not the inlined helper" {
	rec_w
	out=$(HOME=$PWD report_flat p.data)
	echo "$out" | head -5
	top=$(grep -m1 -E '^\s+[0-9.]+%' <<<"$out")
	[[ $top == *"[.] spin_hidden"* ]] || fail "top entry: $top"
	if grep -q '\[.\] mix_inl' <<<"$out"; then fail "mix_inl stole an entry"; fi
}

@test "report: the call graph shows the inlined function as 'mix_inl (inlined)' under it" {
	rec_w
	out=$(HOME=$PWD "$PA_REPORT" -i p.data --no-children --sort sym -g caller)
	echo "$out" | head -30
	grep -qE '^ +[0-9.]+% +\[\.\] spin_hidden' <<<"$out"
	# caller order: the inlined helper's line comes below the function it is inlined in
	names=$(grep -vE '^ +[0-9.]+% +\[' <<<"$out" | grep -oE '(spin_hidden|mix_inl \(inlined\))$' | head -2 | tr '\n' ,)
	[ "$names" = "spin_hidden,mix_inl (inlined)," ] || fail "call-graph lines: $names"
	out=$(HOME=$PWD "$PA_REPORT" -i p.data --children --sort sym -g caller)
	if grep -qE '^ +[0-9.]+% +[0-9.]+% +\[\.\] mix_inl' <<<"$out"; then fail "children entry for an inlined frame"; fi
}

@test "report: --no-inline drops inlined frames and file:line lookups" {
	rec_w
	out=$(HOME=$PWD "$PA_REPORT" -i p.data --no-children --sort sym -g caller --no-inline)
	grep -q 'spin_hidden' <<<"$out"
	if grep -q 'mix_inl' <<<"$out"; then fail "inlined frame with --no-inline"; fi
	out=$(HOME=$PWD "$PA_CONVERT" -i p.data --folded --no-inline)
	! grep -q 'mix_inl' <<<"$out"
}

@test "convert: folded marks inlined frames with _[i] above their real function" {
	rec_w
	out=$(HOME=$PWD "$PA_CONVERT" -i p.data --folded)
	echo "$out" | head -5
	grep -qE '^w;.*;spin_hidden;mix_inl_\[i\] [0-9]+$' <<<"$out"
}

@test "convert: pprof Location of inlined code has Lines inlined-first, with file:line" {
	rec_w
	command -v go >/dev/null || fail "go not installed (go tool pprof is the oracle)"
	HOME=$PWD "$PA_CONVERT" -i p.data --pprof -o p.pb.gz
	raw=$(go tool pprof -raw p.pb.gz 2>/dev/null)
	# -raw prints a Location's Lines one per line, the first after the address.
	loc=$(sed -n '/^Locations/,/^Mappings/p' <<<"$raw" | grep -A1 -E '^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ mix_inl ' | head -2)
	echo "$loc"
	grep -qE 'mix_inl .*w\.c:[0-9]+' <<<"$loc"
	grep -qE '^ +spin_hidden .*w\.c:[0-9]+' <<<"$loc"
	traces=$(go tool pprof -traces p.pb.gz 2>/dev/null)
	grep -q 'mix_inl (inline)' <<<"$traces"
	# The inlined function is no sample Location of its own: no "(inline)" leaf without spin_hidden.
	if sed -n '/mix_inl (inline)/{n;p}' <<<"$traces" | grep -v 'spin_hidden'; then
		fail "mix_inl (inline) followed by the lines above, not by spin_hidden"
	fi
}

@test "report: --no-demangle shows a C++ function's mangled name" {
	require_root
	require_bin "$PA_RECORD" "$PA_REPORT" "$PA_CONVERT"
	cat >c.cc <<'SRC'
#include <ctime>
namespace geo {
struct Spinner {
	volatile unsigned long v = 0;
	__attribute__((noinline)) void turn(long n) { for (long i = 0; i < n; i++) v += i; }
};
}
int main()
{
	geo::Spinner s;
	time_t end = time(nullptr) + 1;
	while (time(nullptr) <= end)
		s.turn(100000);
}
SRC
	g++ -O2 -fno-omit-frame-pointer -o c c.cc
	HOME=$PWD pa_record -q -F 999 -o p.data -- ./c || fail "pa-record failed"
	out=$(HOME=$PWD report_flat p.data)
	grep -q 'geo::Spinner::turn(long)' <<<"$out"
	out=$(HOME=$PWD report_flat p.data --no-demangle)
	grep -q '_ZN3geo7Spinner4turnEl' <<<"$out"
	if grep -q 'geo::Spinner' <<<"$out"; then fail "demangled name with --no-demangle"; fi
	out=$(HOME=$PWD "$PA_CONVERT" -i p.data --folded --no-demangle)
	grep -q ';_ZN3geo7Spinner4turnEl ' <<<"$out"
}

@test "report: symbolizer options are in --help and --debuginfod needs its URL" {
	require_bin "$PA_REPORT" "$PA_CONVERT"
	for b in "$PA_REPORT" "$PA_CONVERT"; do
		h=$("$b" --help)
		grep -q -- '--no-inline' <<<"$h"
		grep -q -- '--no-demangle' <<<"$h"
		grep -q -- '--debuginfod URL' <<<"$h"
		run "$b" --debuginfod
		[ "$status" -eq 1 ]
	done
}

@test "buildid-cache: a deleted binary still has names (pa-report and perf report read ~/.debug)" {
	require_root
	require_perf
	require_bin "$PA_RECORD" "$PA_REPORT"
	cp "$(wl cpu_split)" gone
	HOME=$PWD pa_record -q -F 999 -o p.data -- ./gone 1 || fail "pa-record failed"
	bid=$(readelf -n gone | sed -n 's/.*Build ID: //p')
	rm gone
	# perf's layout: .build-id/xx/rest -> ../../PATH/HEX, the file as PATH/HEX/elf
	link=$(readlink ".debug/.build-id/${bid:0:2}/${bid:2}")
	[ "$link" = "../..$PWD/gone/$bid" ] || fail "link: $link"
	[ -f ".debug$PWD/gone/$bid/elf" ]
	out=$(HOME=$PWD report_flat p.data)
	echo "$out" | head -4
	grep -qE '^\s+[0-9.]+%\s+\[\.\] hot_a' <<<"$out"
	pout=$(HOME=$PWD perf report -i p.data --stdio --no-children --sort sym -g none 2>/dev/null)
	grep -qE '^\s+[0-9.]+%\s+\[\.\] hot_a' <<<"$pout" || fail "perf report does not name hot_a"
	# Without the cache the names are gone: the test above is not vacuous.
	out=$(HOME=$PWD/nohome "$PA_REPORT" -i p.data --no-children --sort sym -g none -q)
	! grep -q 'hot_a' <<<"$out"
}

@test "buildid-cache: a second recording finds the file cached; -N leaves ~/.debug alone" {
	require_root
	require_bin "$PA_RECORD"
	cp "$(wl cpu_split)" cs
	HOME=$PWD pa_record -q -F 99 -o a.data -- ./cs 0.3 || fail "pa-record failed"
	bid=$(readelf -n cs | sed -n 's/.*Build ID: //p')
	elf=".debug$PWD/cs/$bid/elf"
	[ -f "$elf" ]
	cmp -s "$elf" cs
	ino=$(stat -c %i "$elf")
	HOME=$PWD pa_record -q -F 99 -o b.data -- ./cs 0.3 || fail "pa-record failed"
	[ "$(stat -c %i "$elf")" = "$ino" ]
	mkdir n
	HOME=$PWD/n pa_record -q -N -F 99 -o c.data -- ./cs 0.3 || fail "pa-record -N failed"
	[ ! -e n/.debug ]
}

@test "buildid-cache: node --perf-basic-prof JS names after the process exited" {
	require_root
	require_bin "$PA_RECORD" "$PA_REPORT"
	command -v node >/dev/null || skip "node not installed"
	cat >hot.js <<'SRC'
function jsHotLoop(n) { let s = 0; for (let i = 0; i < n; i++) s = (s * 31 + i) | 0; return s; }
const end = Date.now() + 1500;
let t = 0;
while (Date.now() < end) t += jsHotLoop(100000);
console.log(t > 0 ? "" : "");
SRC
	HOME=$PWD pa_record -q -F 999 -o p.data -- node --perf-basic-prof --no-turbo-inlining hot.js || fail "pa-record failed"
	pid=$(HOME=$PWD "$PA_REPORT" -i p.data --sort pid --no-children -g none -q | awk '{print $2; exit}')
	[ -f ".debug/jit/perf-$pid.map" ] || fail "JIT map not saved into the cache"
	out=$(HOME=$PWD "$PA_REPORT" -i p.data --no-children --sort sym -g none)
	echo "$out" | head -8
	grep -q 'jsHotLoop' <<<"$out"
	rm -f "/tmp/perf-$pid.map"
}
