#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The CFI stack walker end to end (real BPF, root): binaries without frame pointers
# (C and C++ gcc -O2 -fomit-frame-pointer, Rust release), Debian's libc (qsort) and
# liblzma (xz), a library dlopen'ed after attach, recursion deeper than the frame
# limit, and --unwind fp as the control that shows the chain broken without CFI.
# perf record --call-graph dwarf on the same binary is the oracle for the chain.

load lib/helpers

WL_SRC=$PA_ROOT/tests/workloads

# hot_chains FILE HOT: one line per sample whose innermost user frame is HOT: the user
# frames' symbols, innermost first, ';'-joined, up to and including main.  Direct
# recursion (the same symbol twice in a row, e.g. glibc's msort) counts once: its depth
# varies from sample to sample.
hot_chains() {
	perf script -i "$1" -F ip,sym,dso --no-inline 2>/dev/null | awk -v hot="$2" '
	function flush(  i, out) {
		if (n && syms[1] == hot) {
			out = syms[1]
			for (i = 2; i <= n; i++) {
				out = out ";" syms[i]
				if (syms[i] == "main")
					break
			}
			print out
		}
		n = 0
	}
	/^[ \t]*$/ { flush(); next }
	/^[ \t]+[0-9a-f]+ / {
		if (n == 0 && $0 ~ /\[kernel\.kallsyms\]\)$/)
			next
		line = $0
		sub(/^[ \t]+[0-9a-f]+ /, "", line)
		sub(/ \([^()]*\)$/, "", line)
		sub(/\+0x[0-9a-f]+$/, "", line)
		if (n && syms[n] == line)
			next
		syms[++n] = line
		next
	}
	END { flush() }'
}

# dwarf_chain BIN HOT ARGS...: the most common chain of HOT under perf's DWARF unwinder.
dwarf_chain() {
	local bin=$1 hot=$2 try
	shift 2
	for try in 1 2 3; do
		if perf record -q -B --no-bpf-event --call-graph dwarf -F 999 -o dwarf.data -- \
			"$bin" "$@" >/dev/null 2>&1 &&
			perf script -F tid -i dwarf.data >/dev/null 2>&1; then
			hot_chains dwarf.data "$hot" | sort | uniq -c | sort -rn | awk 'NR == 1 { print $2 }'
			return 0
		fi
	done
	fail "perf record --call-graph dwarf failed 3 times on $bin"
}

# check_chain BIN HOT ARGS...: pa-record's stacks of HOT match perf's DWARF chain in
# 99% or more of the samples, and that chain reaches main.
check_chain() {
	local bin=$1 hot=$2 want total good
	shift 2
	want=$(dwarf_chain "$bin" "$hot" "$@") || return 1
	echo "oracle chain: $want"
	[[ $want == *";main" ]] || fail "perf --call-graph dwarf did not reach main: '$want'"
	pa_record -F 999 -o pa.data -- "$bin" "$@" 2>rec.err >/dev/null
	cat rec.err
	grep -q "stacks: .*complete (auto)" rec.err || fail "no unwind summary line"
	hot_chains pa.data "$hot" >chains.txt
	total=$(wc -l <chains.txt)
	good=$(grep -cxF -- "$want" chains.txt || true)
	echo "$good of $total samples of $hot have the oracle chain"
	sort chains.txt | uniq -c | sort -rn | head -3
	[ "$total" -ge 300 ] || fail "only $total samples of $hot"
	[ $((good * 100)) -ge $((total * 99)) ] || fail "$good/$total below 99%"
}

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	require_root
	require_perf
	require_bin "$PA_RECORD"
}

@test "unwind: C -O2 -fomit-frame-pointer: hot chain reaches main as perf dwarf sees it" {
	gcc -O2 -fomit-frame-pointer -o nofp_c "$WL_SRC/nofp_chain.c"
	check_chain ./nofp_c chain_hot 2
}

@test "unwind: C++ g++ -O2 -fomit-frame-pointer (virtual call, exceptions)" {
	command -v g++ >/dev/null || skip "g++ not installed"
	g++ -O2 -fomit-frame-pointer -o nofp_cxx "$WL_SRC/nofp_chain.cc"
	check_chain ./nofp_cxx wl::chain_hot 2
}

@test "unwind: Rust release build (rustc -O)" {
	command -v rustc >/dev/null || skip "rustc not installed"
	rustc -O -o nofp_rs "$WL_SRC/nofp_chain.rs"
	check_chain ./nofp_rs nofp_chain::chain_hot 2
}

@test "unwind: through Debian's libc (qsort comparator)" {
	gcc -O2 -fomit-frame-pointer -o nofp_qsort "$WL_SRC/nofp_qsort.c"
	check_chain ./nofp_qsort by_key 2
}

@test "unwind: Debian's xz and liblzma: 99% of stacks reach __libc_start_main" {
	command -v xz >/dev/null || fail "xz not installed (make deps installs xz-utils)"
	{ head -c 1500000 /dev/urandom | base64; seq 1 300000; } >data.txt
	pa_record -F 999 -o pa.data -- xz -6 -c data.txt 2>rec.err >/dev/null
	cat rec.err
	perf script -i pa.data -F ip,sym,dso --no-inline 2>/dev/null | awk 'BEGIN { RS = "" }
		/liblzma|\/xz\)/ { n++; if ($0 ~ /__libc_start_main/) m++ }
		END { print m + 0, n + 0 }' >share.txt
	read -r good total <share.txt
	echo "$good of $total xz samples reach __libc_start_main"
	[ "$total" -ge 300 ] || fail "only $total xz samples"
	[ $((good * 100)) -ge $((total * 99)) ] || fail "$good/$total below 99%"
	grep -Eq "stacks: (99\.[0-9]|100\.0)% complete" rec.err || fail "summary below 99% complete"
}

@test "unwind: library dlopen'ed after attach unwinds" {
	gcc -O2 -fomit-frame-pointer -o nofp_dlopen "$WL_SRC/nofp_dlopen.c"
	gcc -O2 -fomit-frame-pointer -shared -fPIC -x c -o libhot.so "$WL_SRC/nofp_lib.c.in"
	pa_record -F 999 -o pa.data -- ./nofp_dlopen ./libhot.so 2 2>rec.err
	cat rec.err
	hot_chains pa.data lib_hot >chains.txt
	total=$(wc -l <chains.txt)
	good=$(grep -cxF "lib_hot;lib_outer;call_lib;main" chains.txt || true)
	echo "$good of $total"
	[ "$total" -ge 300 ] || fail "only $total samples of lib_hot"
	[ $((good * 100)) -ge $((total * 99)) ] || fail "$good/$total below 99%"
}

# The library's first samples come before pa-record has loaded its table (the first
# ~4 ms at 4999 Hz): their walks stop there and send a stack slice, which pa-record
# finishes once it has.  Without the slices 12-20 stacks end in the library.  0.3 s
# of it: this VM's timer sometimes delivers half of 4999 Hz.
@test "unwind: a library's samples before its table is loaded finish from a stack slice" {
	gcc -O2 -fomit-frame-pointer -o nofp_dlopen "$WL_SRC/nofp_dlopen.c"
	gcc -O2 -fomit-frame-pointer -shared -fPIC -x c -o libhot.so "$WL_SRC/nofp_lib.c.in"
	pa_record -vv -F 4999 -o pa.data -- ./nofp_dlopen ./libhot.so 0.3 2>rec.err ||
		fail "pa-record failed: $(grep -v '^libbpf' rec.err)"
	grep '^pa-record: stacks:' rec.err
	hot_chains pa.data lib_hot >chains.txt
	total=$(wc -l <chains.txt)
	good=$(grep -cxF "lib_hot;lib_outer;call_lib;main" chains.txt || true)
	finished=$(grep -c 'slice at frame .*: complete' rec.err || true)
	echo "$good of $total; $finished slices finished"
	[ "$total" -ge 300 ] || fail "only $total samples of lib_hot"
	[ "$finished" -ge 1 ] || fail "no stack slice finished"
	[ $((good * 1000)) -ge $((total * 996)) ] || fail "$good/$total below 99.6%"
}

# With an empty CFI cache, clang's tables (libLLVM and libclang-cpp, ~2M rows) take
# ~300 ms to compile.  They compile in pa-record's worker thread: the ring buffer is
# read on meanwhile (compiled in the sample loop, it filled, and ~110 samples went
# without their stack slices), the exec's mappings reach BPF in milliseconds (not
# ~300 ms) and the slices wait for the tables.
@test "unwind: cold tables compile off the sample loop: no slice refused, exec mapped at once" {
	command -v clang >/dev/null || skip "clang not installed"
	awk 'BEGIN { for (i = 0; i < 250; i++) printf "struct s%d { int a[%d]; struct s%d *next; };\n" \
		"int f%d(struct s%d *p, int n) { int t = 0; for (int i = 0; i < n; i++) " \
		"t += p->a[i %% %d] * %d; return t + (p->next ? f%d(p->next, n - 1) : 0); }\n",
		i, i % 7 + 1, i, i, i, i % 7 + 1, i, i }' >big.c
	mkdir cache
	XDG_CACHE_HOME=$PWD/cache pa_record -vv -F 999 -o pa.data -- clang -O2 -g -c big.c \
		-o big.o 2>rec.err || fail "pa-record failed: $(grep -v '^libbpf' rec.err | tail -3)"
	grep -E '^pa-record: (stacks|unwind: [0-9]+ (stack slices|execs))|slices not taken' rec.err
	grep -E 'rows compiled in .* after it was queued' rec.err | grep -E 'libLLVM|libclang' ||
		fail "libLLVM's table was not compiled by the worker"
	run ! grep -q 'stack slices not taken' rec.err
	p99=$(sed -nE 's/^pa-record: unwind: [0-9]+ execs, .* ([0-9.]+) ms \(p99\).*/\1/p' rec.err)
	echo "exec to mappings: ${p99:-none} ms (p99)"
	[ -n "$p99" ] || fail "no exec latency line"
	awk -v v="$p99" 'BEGIN { exit !(v < 100) }' || fail "mappings reached BPF ${p99} ms after the exec"
}

# A program whose file is deleted (or a memfd) is known by no inode, and without a
# build-id a later load of its process cannot find its table again.  Such a table
# compiles in the sample loop, at each of the few loads of its process; in the worker
# its process would wait for it, reload, compile it anew, and so on at every round.
@test "unwind: a deleted program's table is not compiled again at every round" {
	gcc -O2 -fomit-frame-pointer -Wl,--build-id=none -o nofp_c "$WL_SRC/nofp_chain.c"
	./nofp_c 5 &
	pid=$!
	track "$pid"
	sleep 0.3
	rm nofp_c
	grep -q 'nofp_c (deleted)' "/proc/$pid/maps" || fail "the mapping does not show deleted"
	mkdir cache
	XDG_CACHE_HOME=$PWD/cache pa_record -v -F 999 -p "$pid" -d 2 -o pa.data 2>rec.err ||
		fail "pa-record failed: $(grep -v '^libbpf' rec.err | tail -3)"
	grep -E '^pa-record: (stacks|unwind: [0-9]+ walks)' rec.err
	compiled=$(sed -nE 's/.* tables \([0-9]+ rows, [0-9]+ from cache, ([0-9]+) compiled\)/\1/p' rec.err)
	[ -n "$compiled" ] || fail "no table count in the summary"
	[ "$compiled" -le 8 ] || fail "$compiled tables compiled for 3 files"
	pct=$(sed -nE 's/^pa-record: stacks: ([0-9]+)\.[0-9]% complete.*/\1/p' rec.err)
	[ "${pct:-0}" -ge 95 ] || fail "stacks ${pct:-?}% complete"
}

# --unwind dwarf[,SIZE]: every sample sends a slice of up to SIZE bytes, walked again
# in user space.  With 20 KiB of stack in use below call_lib, lib_hot's walk needs more
# than 20 KiB of it: 8192 bytes (the default) fall short and say so; 32768 reach main.
@test "unwind: --unwind dwarf,SIZE copies SIZE bytes of every stack and walks them" {
	gcc -O2 -fomit-frame-pointer -o nofp_dlopen "$WL_SRC/nofp_dlopen.c"
	gcc -O2 -fomit-frame-pointer -shared -fPIC -x c -o libhot.so "$WL_SRC/nofp_lib.c.in"
	for size in "" ,32768; do
		# 1 s of the library's CPU time: ~1000 samples; fewer where this VM's timer
		# falls behind, which it does when the host takes the CPU (steal).
		pa_record -v --unwind "dwarf$size" -F 999 -o pa.data -- ./nofp_dlopen ./libhot.so \
			1 20 2>rec.err || fail "pa-record failed: $(grep -v '^libbpf' rec.err)"
		grep -E '^pa-record: (stacks|unwind: [0-9]+ stack slices)' rec.err
		read -r all done short < <(sed -nE 's/^pa-record: unwind: ([0-9]+) stack slices: ([0-9]+) finished.* ([0-9]+) deeper than the copy.*/\1 \2 \3/p' rec.err)
		[ "${all:-0}" -ge 100 ] || fail "${all:-no} stack slices for ~1000 samples"
		if [ -z "$size" ]; then
			[ $((short * 10)) -ge $((all * 9)) ] ||
				fail "$short of $all slices short of the copy with 8192 bytes"
		else
			[ $((done * 10)) -ge $((all * 9)) ] || fail "$done of $all slices finished"
		fi
	done
	grep -q 'complete (dwarf)' rec.err || fail "the summary does not name the dwarf mode"
}

# The same, as if the process had exited before pa-record read /proc/PID/maps (short
# processes under -a): each slice waits for the side-band of its round and walks by
# the mappings its MMAP2 records showed since the exec.
@test "unwind: stack slices of a process gone from /proc walk by the side-band's mappings" {
	gcc -O2 -fomit-frame-pointer -o nofp_dlopen "$WL_SRC/nofp_dlopen.c"
	gcc -O2 -fomit-frame-pointer -shared -fPIC -x c -o libhot.so "$WL_SRC/nofp_lib.c.in"
	PA_RECORD_SLICE_GONE=1 pa_record -vv -F 4999 -o pa.data -- ./nofp_dlopen ./libhot.so 0.3 \
		2>rec.err || fail "pa-record failed: $(grep -v '^libbpf' rec.err)"
	grep -E '^pa-record: (stacks|unwind: [0-9]+ stack slices)' rec.err
	hot_chains pa.data lib_hot >chains.txt
	total=$(wc -l <chains.txt)
	good=$(grep -cxF "lib_hot;lib_outer;call_lib;main" chains.txt || true)
	sideband=$(grep -c 'gone: its slice walks by the [0-9]* mappings the side-band' rec.err ||
		true)
	echo "$good of $total; $sideband slices walked by the side-band's mappings"
	[ "$total" -ge 300 ] || fail "only $total samples of lib_hot"
	[ "$sideband" -ge 1 ] || fail "no slice walked by the side-band's mappings"
	[ $((good * 1000)) -ge $((total * 996)) ] || fail "$good/$total below 99.6%"
}

# A vfork child sampled on its way back to user space is in glibc's __vfork, which
# keeps its return address in rdi (its CFI says so): the walker takes it from the
# sampled registers.  Without that, 90% of these stacks end there.
@test "unwind: a vfork child's stack goes on from __vfork by the return address in rdi" {
	gcc -O2 -fomit-frame-pointer -o vforker "$WL_SRC/vforker.c"
	pa_record -F 4999 -o pa.data -- ./vforker 1 2>rec.err ||
		fail "pa-record failed: $(grep -v '^libbpf' rec.err)"
	perf script -i pa.data -F ip,sym --no-inline 2>/dev/null |
		awk 'BEGIN { RS = "" } /__vfork/ { n++; if (/spawn_loop/ && /main/) ok++ }
		     END { print n + 0, ok + 0 }' >counts.txt
	read -r n ok <counts.txt
	echo "$ok of $n stacks in __vfork reach spawn_loop and main"
	[ "$n" -ge 300 ] || fail "only $n samples in __vfork"
	[ $((ok * 100)) -ge $((n * 99)) ] || fail "$ok/$n below 99%"
}

# complete_pct: the share of complete stacks pa-record -v reported in rec.err.
complete_pct() {
	sed -nE 's/^pa-record: stacks: ([0-9.]+)% complete.*/\1/p' rec.err
}

# forks_complete [exec]: 80 children of 15 ms each (fork, or fork and exec), without
# frame pointers; 99% or more of all stacks complete.  Unwinding a child only once
# pa-record has loaded its mappings loses its first sample or two: 97-98%.
forks_complete() {
	gcc -O2 -fomit-frame-pointer -o nofp_forks "$WL_SRC/nofp_forks.c"
	pa_record -v -F 999 -o pa.data -- ./nofp_forks 80 15 "$@" 2>rec.err >/dev/null ||
		fail "pa-record failed: $(grep -v '^libbpf' rec.err)"
	grep '^pa-record: stacks:' rec.err
	in_range "$(complete_pct)" 99 100
}

@test "unwind: forked children unwind from their first sample (the parent's tables)" {
	forks_complete
}

@test "unwind: exec'd children unwind from their first sample (known files found by VMA)" {
	forks_complete exec
	grep -q 'more in exec or exit, with no user stack' rec.err ||
		fail "no sample counted in exec: $(grep stacks: rec.err)"
}

@test "unwind: recursion of 900 frames is walked whole (clang's goes that deep)" {
	gcc -O2 -fomit-frame-pointer -o nofp_recurse "$WL_SRC/nofp_recurse.c"
	run pa_record -F 4999 -o pa.data -- ./nofp_recurse 1 900
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output != *"% depth limit"* ]] || fail "a 900-frame stack hit the depth limit"
	# main, 901 descend and spin: the deepest stack has over 900 user frames.
	perf script -i pa.data --max-stack 2000 -F ip 2>/dev/null |
		awk 'BEGIN { RS = "" } { print NF }' | sort -n | tail -1 >max.txt
	[ "$(cat max.txt)" -ge 903 ] || fail "deepest stack has $(cat max.txt) frames"
}

@test "unwind: recursion deeper than 1023 frames is truncated and reported, no crash" {
	gcc -O2 -fomit-frame-pointer -o nofp_recurse "$WL_SRC/nofp_recurse.c"
	run pa_record -F 4999 -o pa.data -- ./nofp_recurse 1 1300
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"% depth limit"* ]] || fail "no depth limit in the summary"
	# Samples in spin() carry the full 1023 user frames (plus their kernel frames).
	perf script -i pa.data --max-stack 2000 -F ip 2>/dev/null |
		awk 'BEGIN { RS = "" } { print NF }' | sort -n | tail -1 >max.txt
	[ "$(cat max.txt)" -ge 1023 ] || fail "deepest stack has $(cat max.txt) frames"
}

@test "unwind: --unwind fp breaks the chain of the no-FP binary (CFI is what completes it)" {
	gcc -O2 -fomit-frame-pointer -o nofp_c "$WL_SRC/nofp_chain.c"
	pa_record -F 999 --unwind fp -o fp.data -- ./nofp_c 1 2>/dev/null
	hot_chains fp.data chain_hot >chains.txt
	total=$(wc -l <chains.txt)
	good=$(grep -cxF "chain_hot;chain_b;chain_a;main" chains.txt || true)
	echo "fp: $good of $total complete"
	[ "$total" -ge 200 ]
	[ $((good * 100)) -lt $((total * 50)) ] || fail "fp completed $good/$total: no-FP build?"
}

@test "unwind: --unwind cfi and -F 4999 load and unwind" {
	gcc -O2 -fomit-frame-pointer -o nofp_c "$WL_SRC/nofp_chain.c"
	pa_record -F 4999 --unwind cfi -o pa.data -- ./nofp_c 1 2>rec.err
	cat rec.err
	grep -q "complete (cfi)" rec.err
	hot_chains pa.data chain_hot >chains.txt
	total=$(wc -l <chains.txt)
	good=$(grep -cxF "chain_hot;chain_b;chain_a;main" chains.txt || true)
	echo "cfi: $good of $total complete"
	[ "$total" -ge 100 ] || fail "only $total samples of chain_hot"
	[ $((good * 100)) -ge $((total * 99)) ] || fail "$good/$total below 99%"
}

@test "unwind: bad --unwind values are one-line errors" {
	run "$PA_RECORD" --unwind frames -- true
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == "pa-record: error: invalid --unwind 'frames'; use auto, cfi, fp or dwarf[,SIZE] (SIZE from 4096 to 32768 bytes)" ]]
	for bad in dwarf,100 dwarf,40000 dwarf,8k dwarfish; do
		run "$PA_RECORD" --unwind "$bad" -- true
		[ "$status" -eq 1 ] || fail "--unwind $bad: exit $status"
		[[ $output == "pa-record: error: invalid --unwind '$bad'"* ]] || fail "$output"
	done
	run "$PA_RECORD" --unwind-rows 5 -- true
	[ "$status" -eq 1 ]
	[[ $output == *"invalid --unwind-rows '5'"* ]]
}

# The walker's state lives in a map, where the verifier takes every value as unknown:
# on the stack, each combination of its flags and counters was checked again, 304,005
# instructions and 2.5 s at every start (9 s with --offcpu).  pa-record -v reports the
# count; it is exact, so a bound holds on any machine.
@test "unwind: the walker's programs verify in under 50,000 instructions each" {
	require_root
	for opt in "" --offcpu; do
		pa_record -v $opt -F 99 -o v.data -- true 2>rec.err || fail "pa-record failed"
		line=$(grep '^pa-record: BPF: loaded in' rec.err) || fail "no BPF load line: $(cat rec.err)"
		echo "$line"
		grep -q " on_sample [0-9]* insns" <<<"$line" || fail "on_sample not reported"
		[ -z "$opt" ] || grep -q " on_switch_[a-z]* [0-9]* insns" <<<"$line" ||
			fail "no sched_switch program reported with --offcpu"
		big=$(grep -oE '[a-z_]+ [0-9]+ insns' <<<"$line" | awk '$2 >= 50000')
		[ -z "$big" ] || fail "verified over 50,000 instructions: $big"
	done
}
