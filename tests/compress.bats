#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# pa-record -z: zstd-compressed records (PERF_RECORD_COMPRESSED) and the COMPRESSED
# feature, as perf record -z writes them.  Linux perf reads ours, pa-report reads
# ours and perf's, in files and pipes.

load lib/helpers

# record_pa FILE SECONDS [pa-record args]: cpu_split under pa-record into FILE.
record_pa() {
	local f=$1 s=$2 w
	shift 2
	w=$(wl cpu_split) || return 1
	pa_record -q "$@" -o "$f" -- "$w" "$s"
}

# perf_stat FILE TYPE: perf's count of TYPE records (COMPRESSED, SAMPLE...) in FILE
# ("-": stdin); 0 when there are none.  perf report -D ends with the counts.
perf_stat() {
	local out
	if [ "$1" = - ]; then
		out=$(perf report -D -i - 2>/dev/null | grep -E "^ +$2 events:")
	else
		out=$(perf report -D -i "$1" 2>/dev/null | grep -E "^ +$2 events:")
	fi
	awk 'NF { print $3; n = 1; exit } END { if (!n) print 0 }' <<<"$out"
}

@test "compress: -z writes COMPRESSED records and the compressed feature perf shows" {
	require_root
	require_perf
	require_bin "$PA_RECORD"
	record_pa z.data 1 -z
	h=$(perf report --header-only -i z.data 2>&1)
	grep '^# compressed' <<<"$h"
	grep -qE '^# compressed : Zstd, level = 1, ratio = [0-9]+$' <<<"$h"
	n=$(perf_stat z.data COMPRESSED)
	echo "COMPRESSED records: $n"
	[ "$n" -gt 0 ]
	# No sample is left outside: all of them came out of COMPRESSED records.
	python3 - z.data <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
off, size = struct.unpack_from('<QQ', d, 40)
p, types = off, set()
while p < off + size:
    t, _, s = struct.unpack_from('<IHH', d, p)
    types.add(t)
    p += s
assert 81 in types and 9 not in types, types
PY
}

@test "compress: files are compressed by default (level 1), pipes and -z0 are plain" {
	require_root
	require_perf
	require_bin "$PA_RECORD"
	record_pa d.data 1
	grep -qE '^# compressed : Zstd, level = 1, ratio = [0-9]+$' \
		<<<"$(perf report --header-only -i d.data 2>&1)" || fail "the default file is not -z1"
	[ "$(perf_stat d.data COMPRESSED)" -gt 0 ] || fail "no COMPRESSED record by default"
	record_pa p.data 1 -z0
	if grep -q '^# compressed' <<<"$(perf report --header-only -i p.data 2>&1)"; then
		fail "-z0 wrote a compressed file"
	fi
	[ "$(perf_stat p.data COMPRESSED)" -eq 0 ] || fail "-z0 wrote COMPRESSED records"
	[ "$(perf_stat p.data SAMPLE)" -gt 0 ] || fail "-z0: no plain samples"
	record_pa - 1 >d.pipe
	[ "$(perf_stat - COMPRESSED <d.pipe)" -eq 0 ] || fail "the pipe is compressed"
	[ "$(perf_stat - SAMPLE <d.pipe)" -gt 0 ] || fail "no samples in the pipe"
}

@test "compress: -z file is at least 5 times smaller per sample than the plain one" {
	require_root
	require_perf
	require_bin "$PA_RECORD" "$PA_REPORT"
	record_pa plain.data 2 -z0 -F 999
	record_pa z.data 2 -z -F 999
	p=$(($(stat -c %s plain.data) / $(samples_in plain.data)))
	z=$(($(stat -c %s z.data) / $(samples_in z.data)))
	echo "bytes per sample: plain $p, -z $z"
	[ $((z * 5)) -le "$p" ]
}

@test "compress: -z9 and --compression-level=9 set the level perf shows" {
	require_root
	require_perf
	require_bin "$PA_RECORD"
	record_pa a.data 1 -z9
	record_pa b.data 1 --compression-level=9
	for f in a.data b.data; do
		perf report --header-only -i "$f" 2>&1 | grep -E '^# compressed : Zstd, level = 9,'
	done
}

@test "compress: perf report reads pa-record -z's file and names hot_a on top, as pa-report does" {
	require_root
	require_perf
	require_bin "$PA_RECORD" "$PA_REPORT"
	record_pa z.data 2 -z
	[ "$(perf_stat z.data COMPRESSED)" -gt 0 ]
	p=$(perf_top_sym z.data)
	o=$(top_sym z.data)
	echo "perf: $p  pa-report: $o"
	[ "$p" = hot_a ]
	[ "$o" = "$p" ]
}

@test "compress: perf script reads pa-record -z's file, one line per sample, as many as pa-report counts" {
	require_root
	require_perf
	require_bin "$PA_RECORD" "$PA_REPORT"
	record_pa z.data 2 -z -F 999
	[ "$(perf_stat z.data COMPRESSED)" -gt 0 ]
	perf script -i z.data -F comm,tid,ip,sym -G >script.txt 2>script.err || { cat script.err; false; }
	n=$(wc -l <script.txt)
	m=$(samples_in z.data)
	echo "perf script: $n lines, pa-report: $m samples"
	[ "$n" -gt 100 ]
	[ "$n" -eq "$m" ]
	top=$(awk '{ print $NF }' script.txt | sort | uniq -c | sort -rn | awk '{ print $2; exit }')
	[ "$top" = hot_a ]
}

@test "compress: perf report -i - and pa-report read pa-record -z -o - and name hot_a on top" {
	require_root
	require_perf
	require_bin "$PA_RECORD" "$PA_REPORT"
	record_pa - 2 -z >z.pipe
	perf report --header-only -i - <z.pipe 2>&1 | grep -E '^# compressed : Zstd, level = 1,'
	n=$(perf_stat - COMPRESSED <z.pipe)
	echo "COMPRESSED records: $n"
	[ "$n" -gt 0 ]
	out=$(perf report --stdio -i - --no-children --sort sym -g none <z.pipe 2>perf.err) ||
		{ cat perf.err; false; }
	p=$(awk '/^#/ || NF == 0 { next } $2 == "[.]" || $2 == "[k]" { print $3; exit }' <<<"$out")
	o=$(top_sym - <z.pipe)
	echo "perf (pipe): $p  pa-report: $o"
	[ "$p" = hot_a ]
	[ "$o" = hot_a ]
	[ "$(samples_in - <z.pipe)" -eq "$(perf_stat - SAMPLE <z.pipe)" ]
}

@test "compress: pa-convert --folded reads pa-record -z's file and pipe: every sample, hot_a on top" {
	require_root
	require_bin "$PA_RECORD" "$PA_CONVERT" "$PA_REPORT"
	record_pa z.data 2 -z -F 999
	record_pa - 2 -z -F 999 >z.pipe
	"$PA_CONVERT" -i z.data --folded -o z.folded
	"$PA_CONVERT" -i - --folded <z.pipe >p.folded
	for f in z.folded p.folded; do
		top=$(sort -t' ' -k2 -rn "$f" | awk '{ print $1; exit }')
		echo "$f: $(awk '{ n += $NF } END { print n }' "$f") samples, top $top"
		[[ $top == *";hot_a" ]]
	done
	[ "$(awk '{ n += $NF } END { print n }' z.folded)" -eq "$(samples_in z.data)" ]
	[ "$(awk '{ n += $NF } END { print n }' p.folded)" -eq "$(samples_in - <z.pipe)" ]
}

@test "compress: pa-report reads perf record -z -g (cpu-clock) and agrees with perf" {
	require_perf
	require_bin "$PA_REPORT"
	PA_PERF_ARGS="-z -e cpu-clock" perf_capture perf.data cpu_split 2
	perf report --header-only -i perf.data 2>&1 | grep -E '^# compressed : Zstd'
	[ "$(perf_stat perf.data COMPRESSED)" -gt 0 ]
	p=$(perf_top_sym perf.data)
	o=$(top_sym perf.data)
	n=$(perf_stat perf.data SAMPLE)
	m=$(samples_in perf.data)
	echo "perf: $p ($n samples)  pa-report: $o ($m samples)"
	[ "$p" = hot_a ]
	[ "$o" = "$p" ]
	[ "$m" -eq "$n" ]
}

@test "compress: pa-report reads perf record -z -g's pipe output and agrees with perf" {
	require_perf
	require_bin "$PA_REPORT"
	PA_PERF_ARGS="-z -e cpu-clock" perf_capture perf.pipe cpu_split 2 pipe
	[ "$(perf_stat - COMPRESSED <perf.pipe)" -gt 0 ]
	out=$(perf report --stdio --no-children --sort sym -g none -i - <perf.pipe 2>/dev/null)
	p=$(awk '/^#/ || NF == 0 { next } $2 == "[.]" || $2 == "[k]" { print $3; exit }' <<<"$out")
	o=$(top_sym - <perf.pipe)
	echo "perf: $p  pa-report: $o"
	[ "$p" = hot_a ]
	[ "$o" = "$p" ]
	[ "$(samples_in - <perf.pipe)" -eq "$(perf_stat - SAMPLE <perf.pipe)" ]
}

@test "compress: a bad -z level is one error line, exit 1, no file" {
	require_bin "$PA_RECORD"
	for arg in -z23 -zx -z1x --compression-level=23 --compression-level=abc; do
		run -1 --separate-stderr "$PA_RECORD" "$arg" -o bad.data -- true
		echo "$arg: $stderr"
		[ "${#stderr_lines[@]}" -eq 1 ]
		[[ $stderr == *"invalid compression level"* ]]
		[ ! -e bad.data ]
	done
}

@test "compress: damaged compressed data in a file is one pa-report error line, exit 1" {
	require_root
	require_bin "$PA_RECORD" "$PA_REPORT"
	record_pa z.data 1 -z
	# The zstd magic number at the start of the first COMPRESSED record's payload.
	off=$(python3 - z.data <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
off, size = struct.unpack_from('<QQ', d, 40)
p = off
while p < off + size:
    t, _, s = struct.unpack_from('<IHH', d, p)
    if t == 81:
        print(p + 8)
        break
    p += s
PY
)
	[ -n "$off" ]
	printf '\xff' | dd of=z.data bs=1 seek="$off" conv=notrunc status=none
	run -1 --separate-stderr "$PA_REPORT" -i z.data
	echo "$stderr"
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr == *"corrupt zstd data"* ]]
}
