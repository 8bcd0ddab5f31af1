#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The check on a machine with a GPU (issue 13), run from the repository root with the
# bundle of tests/gpu/bundle.sh (make gpu-check-bundle) carried along:
#
#	bash tests/gpu/check.sh [BUNDLE]	(default build/gpu-check)
#
# Such a machine is bare: no packages, no perf, no network; PyTorch on python3.  In
# a few minutes it checks, for the nvcc workload (tests/gpu/matmul.cu) and a PyTorch
# training step (tests/gpu/train.py), under pa-record --gpu (which injects the CUDA
# adapter):
#   - each kernel's GPU time agrees within 5% with the workload's own cudaEvent
#     timing, and its instances are all there;
#   - the kernels sit under the launching function: step() in C, train_step() in
#     Python;
#   - the wall time against the same workload without profiling (printed).
# Where BPF cannot be loaded (gVisor, old kernels) it checks the adapter's own
# records (PA_GPU_ADAPTER_TOTALS) against the cudaEvent timing instead, and says BPF
# was unavailable.  Prints PASS/FAIL lines, then "gpu check: N passed, N failed";
# exits 1 on any failure.  Its files are kept under $OUT when set.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
B=${1:-build/gpu-check}
PY=${PYTHON:-python3}
W=${OUT:-$(mktemp -d)}
LIMIT=${LIMIT:-150} # seconds for any one command
mkdir -p "$W"
passed=0 failed=0

pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
info() { echo "# $*"; }
# pa CMD ARGS...: one of the bundle's commands, with the bundle's C library.
pa() {
	local cmd=$1
	shift
	timeout "$LIMIT" "$B/lib/ld-linux-x86-64.so.2" --library-path "$B/lib" "$B/bin/$cmd" "$@"
}
# within A B PCT: A is within PCT% of B.
within() { awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { exit !(b > 0 && a >= b * (1 - p / 100) && a <= b * (1 + p / 100)) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b > 0 ? a / b : 0 }'; }
# field FILE KEY N: field N of FILE's line starting with KEY.
field() { awk -v k="$2" -v n="$3" '$0 ~ "^" k { print $n; exit }' "$1"; }

export PA_GPU_ADAPTER=$B/bin/libpa-gpu-adapter.so
[ -x "$B/bin/pa-record" ] && [ -r "$PA_GPU_ADAPTER" ] && [ -x "$B/bin/matmul" ] || {
	echo "FAIL: no bundle at $B: make gpu-check-bundle here, carry $B"
	exit 1
}
info "$(uname -sr); $(nvidia-smi -L 2>/dev/null | head -1 || echo 'no nvidia-smi')"
info "python: $($PY -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.is_available())' 2>&1 | tail -1)"
pa pa-gpu-attach --check 2>&1 | sed 's/^/# /'

# --- BPF or not: pa-record's own answer.
bpf=1
if ! pa pa-record -q -F 99 -o "$W/probe.data" -- true 2>"$W/probe.err"; then
	bpf=0
	info "BPF unavailable: $(head -1 "$W/probe.err"); checking the adapter's records alone"
fi

# --- The nvcc workload.
steps=100
timeout "$LIMIT" "$B/bin/matmul" $steps >"$W/matmul.base" 2>&1 || fail "matmul alone: $(tail -1 "$W/matmul.base")"
base_wall=$(field "$W/matmul.base" wall_s 2)
if [ $bpf = 1 ]; then
	pa pa-record --gpu -F 99 -o "$W/matmul.data" -- "$B/bin/matmul" $steps >"$W/matmul.out" \
		2>"$W/matmul.err" || fail "pa-record --gpu -- matmul: $(tail -2 "$W/matmul.err")"
	grep '^pa-record: gpu:' "$W/matmul.err" | sed 's/^/# /'
	pa pa-report -i "$W/matmul.data" --event gpu >"$W/matmul.report" 2>&1
	sed 's/^/# /' "$W/matmul.report"
	pa pa-convert -i "$W/matmul.data" --folded --event gpu-time >"$W/matmul.folded" 2>&1
	for k in matmul scale; do
		want=$(field "$W/matmul.out" "events $k " 4)
		# report rows: Time(%) Total Instances Avg Min Max Grid Block Launches Name...
		got=$(awk -v k=" $k\\\\(" '$0 ~ k && $1 !~ /^#/ { print $2; exit }' "$W/matmul.report")
		n=$(awk -v k=" $k\\\\(" '$0 ~ k && $1 !~ /^#/ { print $3; exit }' "$W/matmul.report")
		info "$k: $got ns in $n instances recorded; cudaEvent: $want ns in $steps (ratio $(ratio "${got:-0}" "${want:-0}"))"
		within "${got:-0}" "${want:-0}" 5 && [ "$n" = $steps ] &&
			pass "matmul: $k's GPU time within 5% of cudaEvent's, all $steps instances" ||
			fail "matmul: $k: $got ns in $n instances, cudaEvent $want ns in $steps"
		under=$(awk -v k="^([^;]*;)*main;([^;]*;)*step[^;]*;.*\\\\[gpu:launch\\\\];\\\\[gpu:kernel\\\\]_$k\\\\(" \
			'{ n = $NF; $NF = ""; if ($0 ~ k) t += n } END { print t + 0 }' "$W/matmul.folded")
		[ "$under" = "$got" ] && pass "matmul: all of $k's GPU time under main -> step" ||
			fail "matmul: $under of $got ns of $k under main -> step"
	done
	wall=$(field "$W/matmul.out" wall_s 2)
	info "matmul wall: $wall s profiled, $base_wall s alone (x$(ratio "$wall" "$base_wall"))"
else
	PA_GPU_ADAPTER_TOTALS=$W/matmul.totals pa pa-gpu-attach -- "$B/bin/matmul" $steps \
		>"$W/matmul.out" 2>&1 || fail "pa-gpu-attach -- matmul: $(tail -1 "$W/matmul.out")"
	sed 's/^/# totals: /' "$W/matmul.totals" 2>/dev/null
	for k in matmul scale; do
		want=$(field "$W/matmul.out" "events $k " 4)
		got=$(awk -v k="_Z[0-9]+${k}" '$3 ~ k { print $2; exit }' "$W/matmul.totals" 2>/dev/null)
		n=$(awk -v k="_Z[0-9]+${k}" '$3 ~ k { print $1; exit }' "$W/matmul.totals" 2>/dev/null)
		within "${got:-0}" "${want:-0}" 5 && [ "$n" = $steps ] &&
			pass "adapter: $k's GPU time within 5% of cudaEvent's (no BPF)" ||
			fail "adapter: $k: $got ns in $n records, cudaEvent $want ns in $steps (no BPF)"
	done
fi

# --- PyTorch.
if ! $PY -c 'import torch, sys; sys.exit(not torch.cuda.is_available())' 2>/dev/null; then
	fail "no PyTorch with CUDA on $PY (set PYTHON)"
else
	timeout "$LIMIT" $PY tests/gpu/train.py 30 >"$W/train.base" 2>&1 ||
		fail "train.py alone: $(tail -1 "$W/train.base")"
	base_wall=$(field "$W/train.base" "train " 7)
	if [ $bpf = 1 ]; then
		# Once to compile the unwind tables of torch's libraries (cached by build-id):
		# a library's launches are walked only once its table is in.
		pa pa-record -q --gpu -F 99 -o "$W/warm.data" -- $PY tests/gpu/train.py 3 \
			>/dev/null 2>"$W/warm.err" || fail "pa-record --gpu -- train.py 3: $(tail -2 "$W/warm.err")"
		pa pa-record --gpu -F 99 -o "$W/train.data" -- $PY tests/gpu/train.py 30 \
			>"$W/train.out" 2>"$W/train.err" || fail "pa-record --gpu -- train.py: $(tail -2 "$W/train.err")"
		grep '^pa-record: ' "$W/train.err" | sed 's/^/# /'
		pa pa-report -i "$W/train.data" --event gpu -q 2>&1 | head -12 | sed 's/^/# /'
		pa pa-convert -i "$W/train.data" --folded --event gpu-time >"$W/train.folded" 2>&1
		want=$(field "$W/train.out" "train " 5)
		# GPU time of the timed steps: under train_step, not under warm_up.
		got=$(awk '{ n = $NF; $NF = ""; if ($0 ~ /train_step_\(train\.py\);/ && $0 !~ /warm_up_\(train\.py\)/) t += n } END { print t + 0 }' "$W/train.folded")
		kinds=$(grep -E 'train_step_\(train\.py\);.*\[gpu:kernel\]' "$W/train.folded" | grep -v warm_up |
			sed -E 's/.*\[gpu:kernel\]_([^ ;]*).*/\1/' | sort -u | wc -l)
		info "train_step: $got ns of GPU time in $kinds kernels; cudaEvent around the steps: $want ns (ratio $(ratio "$got" "$want"))"
		[ "$kinds" -ge 2 ] && pass "train.py: kernels under the Python function train_step" ||
			fail "train.py: $kinds kernels under train_step"
		within "$got" "$want" 5 && pass "train.py: GPU time under train_step within 5% of cudaEvent's" ||
			fail "train.py: $got ns under train_step, cudaEvent $want ns"
		wall=$(field "$W/train.out" "train " 7)
		info "train.py wall: $wall s profiled, $base_wall s alone (x$(ratio "$wall" "$base_wall"))"
	else
		PA_GPU_ADAPTER_TOTALS=$W/train.totals pa pa-gpu-attach -- $PY tests/gpu/train.py 30 \
			>"$W/train.out" 2>&1 || fail "pa-gpu-attach -- train.py: $(tail -1 "$W/train.out")"
		sort -k2,2nr "$W/train.totals" 2>/dev/null | head -5 | sed 's/^/# totals: /'
		[ -s "$W/train.totals" ] && pass "adapter: train.py's kernels recorded (no BPF)" ||
			fail "adapter: no records from train.py (no BPF)"
	fi
fi
[ $bpf = 1 ] || info "BPF was unavailable: only the adapter was checked"
echo "gpu check: $passed passed, $failed failed"
[ $failed = 0 ]
