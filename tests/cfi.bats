#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# CFI compiler against readelf --debug-dump=frames-interp (binutils), on binaries built
# here the ways the unwinder must cope with: gcc -O2 without frame pointers, C++ with
# exceptions, .debug_frame only (no .eh_frame), a Rust release build.  The comparison
# itself is in tests/unit/test_cfi.c (`test_cfi --oracle FILE`).

load lib/helpers

TEST_CFI=$PA_BUILD/tests/test_cfi

prog_c() {
	cat >prog.c <<'SRC'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
__attribute__((noinline)) static long leaf(long *v, int n)
{
	long s = 0;
	for (int i = 0; i < n; i++)
		s += v[i] * (i | 1);
	return s;
}
__attribute__((noinline)) static long mid(int n)
{
	long buf[4096], *big = malloc(n * sizeof(*big));
	memset(buf, 1, sizeof(buf));
	for (int i = 0; i < n; i++)
		big[i] = buf[i % 4096] + i;
	long r = leaf(big, n) + leaf(buf, 4096);
	free(big);
	return r;
}
int main(int argc, char **argv)
{
	printf("%ld\n", mid(argc > 1 ? atoi(argv[1]) : 1000));
	return 0;
}
SRC
}

@test "cfi: gcc -O2 -fomit-frame-pointer binary matches readelf" {
	require_bin "$TEST_CFI"
	prog_c
	gcc -O2 -fomit-frame-pointer -o prog prog.c
	run "$TEST_CFI" --oracle "$PWD/prog"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "cfi: .debug_frame-only binary (no .eh_frame) matches readelf" {
	require_bin "$TEST_CFI"
	prog_c
	gcc -O2 -g -fomit-frame-pointer -fno-asynchronous-unwind-tables -fno-exceptions \
		-o prog prog.c
	# the binary's own FDEs must be in .debug_frame; crt objects may add .eh_frame
	readelf -S prog | grep -q '\.debug_frame' || fail "gcc emitted no .debug_frame"
	run "$TEST_CFI" --oracle "$PWD/prog"
	echo "$output"
	[ "$status" -eq 0 ]
	grep -qE ' [1-9][0-9]* \.debug_frame FDEs' <<<"$output"
}

@test "cfi: C++ with exceptions (zPLR CIEs, LSDA) matches readelf" {
	require_bin "$TEST_CFI"
	command -v g++ >/dev/null || skip "g++ not installed"
	cat >prog.cc <<'SRC'
#include <stdexcept>
#include <string>
#include <vector>
__attribute__((noinline)) int thrower(int n)
{
	std::vector<std::string> v(n, "x");
	if (n > 3)
		throw std::runtime_error("n");
	return v.size();
}
int main(int argc, char **)
{
	try {
		return thrower(argc + 5);
	} catch (const std::exception &) {
		return 0;
	}
}
SRC
	g++ -O2 -fomit-frame-pointer -o prog prog.cc
	readelf -wF prog | grep -q 'CIE "zPLR"' || fail "no zPLR CIE in the C++ binary"
	run "$TEST_CFI" --oracle "$PWD/prog"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "cfi: Rust release binary matches readelf" {
	require_bin "$TEST_CFI"
	command -v rustc >/dev/null || skip "rustc not installed"
	cat >prog.rs <<'SRC'
use std::collections::HashMap;
#[inline(never)]
fn work(n: u64) -> u64 {
    let mut m = HashMap::new();
    for i in 0..n {
        *m.entry(i % 97).or_insert(0u64) += i;
    }
    m.values().sum()
}
fn main() {
    let n = std::env::args().count() as u64 * 1000;
    println!("{}", work(n));
}
SRC
	rustc -O -o prog prog.rs
	run "$TEST_CFI" --oracle "$PWD/prog"
	echo "$output"
	[ "$status" -eq 0 ]
}
