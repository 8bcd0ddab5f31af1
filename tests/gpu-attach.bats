#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# pa-gpu-attach and the CUDA adapter it injects, on a machine with the CUDA toolkit
# (CUPTI) but no GPU and no driver: the adapter is built, exports one symbol, carries
# its USDT probes, and backs off with one line where CUPTI cannot run.

load lib/helpers

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	require_bin "$PA_GPU_ATTACH" "$PA_GPU_ADAPTER_LIB" "$PA_WL/cuda_inject"
}

@test "gpu-attach: the adapter exports InitializeInjection alone" {
	run nm -D --defined-only "$PA_GPU_ADAPTER_LIB"
	[ "$status" -eq 0 ] || fail "$output"
	[ "$(awk '$2 ~ /^[TDBRW]$/ { print $3 }' <<<"$output")" = InitializeInjection ] ||
		fail "exports: $output"
}

@test "gpu-attach: the adapter has pa_gpu:launch and pa_gpu:records, each behind a semaphore" {
	run readelf -n "$PA_GPU_ADAPTER_LIB"
	[ "$status" -eq 0 ] || fail "$output"
	for p in launch records; do
		grep -B1 "Name: $p\$" <<<"$output" | grep -q 'Provider: pa_gpu$' ||
			fail "no pa_gpu:$p probe: $output"
		grep -A2 "Name: $p\$" <<<"$output" | grep -Eq 'Semaphore: 0x0*[1-9a-f][0-9a-f]*' ||
			fail "$p has no semaphore"
	done
}

@test "gpu-attach: runs the command with CUDA_INJECTION64_PATH naming the adapter" {
	run -0 "$PA_GPU_ATTACH" -q -- env
	grep -qx "CUDA_INJECTION64_PATH=$PA_GPU_ADAPTER_LIB" <<<"$output" || fail "$output"
	run -0 "$PA_GPU_ATTACH" -- sh -c 'exit 0'
	[[ $output == *"CUDA_INJECTION64_PATH=$PA_GPU_ADAPTER_LIB"* ]] || fail "no note: $output"
}

@test "gpu-attach: an injection already set is refused, not replaced; a missing command is 127" {
	CUDA_INJECTION64_PATH=/opt/other/libinject.so run "$PA_GPU_ATTACH" -- env
	[ "$status" -eq 1 ] || fail "status $status: $output"
	[[ $output == *"CUDA_INJECTION64_PATH is already set (/opt/other/libinject.so)"* ]] || fail "$output"
	run -127 "$PA_GPU_ATTACH" -- ./no-such-program
	[[ $output == *"cannot run ./no-such-program"* ]] || fail "$output"
	run "$PA_GPU_ATTACH"
	[ "$status" -eq 1 ] && [[ $output == *"no command to run"* ]] || fail "$output"
	PA_GPU_ADAPTER=/nonexistent/lib.so run "$PA_GPU_ATTACH" -- true
	[ "$status" -eq 1 ] && [[ $output == *"is not installed"* ]] || fail "$output"
}

@test "gpu-attach: --check names the adapter and libcupti, and says the driver is missing" {
	run "$PA_GPU_ATTACH" --check
	[[ $output == *"adapter: $PA_GPU_ADAPTER_LIB"* ]] || fail "$output"
	[[ $output == *"libcupti: libcupti"* ]] || fail "$output"
	if [ -e /usr/lib/x86_64-linux-gnu/libcuda.so.1 ]; then
		[ "$status" -eq 0 ] || fail "status $status: $output"
	else
		[ "$status" -eq 1 ] || fail "status $status with no driver: $output"
		[[ $output == *"CUDA driver: libcuda.so.1 not found"* ]] || fail "$output"
	fi
}

@test "gpu-attach: loaded as the driver loads it, with no driver, the adapter says once why and the program goes on" {
	run "$PA_GPU_ATTACH" -q -- "$PA_WL/cuda_inject"
	[ "$status" -eq 0 ] || fail "status $status: $output"
	[[ $output == *"InitializeInjection: 1"* ]] || fail "$output"
	# With a driver (and a GPU) CUPTI may well run: then there is nothing to say.
	[ -e /usr/lib/x86_64-linux-gnu/libcuda.so.1 ] && return 0
	[ "$(grep -c '^pa-gpu-adapter: ' <<<"$output")" = 1 ] || fail "not one line: $output"
	[[ $output == *"GPU times are off"* ]] || fail "$output"
}

# gpu_time_under PATTERN: the gpu-time ns of folded lines ending in PATTERN.
gpu_time_under() {
	grep -E "$1 [0-9]+\$" folded.txt | awk '{ t += $NF } END { print t + 0 }'
}

@test "gpu-attach: pa-record --gpu puts the adapter's GPU times under their launch's stack" {
	require_root
	require_bin "$PA_RECORD" "$PA_CONVERT" "$PA_WL/gpu_producer"
	cp "$PA_WL/gpu_producer" .
	pa_record -v --gpu -F 99 -o pa.data -- ./gpu_producer 1000 >out.txt 2>rec.err ||
		fail "pa-record failed: $(grep -v '^libbpf' rec.err | tail -3)"
	grep -q "the CUDA adapter's probes attached in .*gpu_producer" rec.err || fail "not attached"
	grep -q 'gpu: 2020 kernels, copies and sets timed by the CUDA adapter' rec.err ||
		fail "$(grep 'gpu:' rec.err)"
	"$PA_CONVERT" -i pa.data --folded --event gpu-time >folded.txt 2>conv.err ||
		fail "pa-convert: $(cat conv.err)"
	cat folded.txt
	# A runtime launch: the uprobe's stack, taken once (no probe frames above the API).
	n=$(gpu_time_under ';main;step_a;cudaLaunchKernel;\[gpu:launch\];\[gpu:kernel\]_kernA\(float\*,_int\)')
	[ "$n" = 2000000 ] || fail "kernA: $n ns under main;step_a, not 1000 x 2000"
	# A driver launch: the same, by the driver's uprobe.
	n=$(gpu_time_under ';main;step_b;cuLaunchKernel;\[gpu:launch\];\[gpu:kernel\]_kernB\(float\*,_int\)')
	[ "$n" = 5000000 ] || fail "kernB: $n ns under main;step_b, not 1000 x 5000"
	# A copy: the probe took the stack of the call that made it.
	n=$(gpu_time_under ';main;step_c;cudaMemcpy;pa_gpu_launch;\[gpu:launch\];\[gpu:memcpy_HtoD\]')
	[ "$n" = 400000 ] || fail "memcpy: $n ns under main;step_c, not 10 x 40000"
	# Records no launch made, apart; nothing else.
	n=$(gpu_time_under '^gpu_producer;\[gpu:unmatched\];\[gpu:kernel\]_orphan\(\)')
	[ "$n" = 10000 ] || fail "unmatched: $n ns, not 10 x 1000"
	[ "$(awk '{ t += $NF } END { print t }' folded.txt)" = 7410000 ] || fail "other GPU time"
}

# Attached to a running program (-p): the driver gave kernB's handle out before, so
# its first launches are unnamed; kernB's first record names it for the rest.
@test "gpu-attach: a driver handle given out before pa-record attached is named by its kernel's record" {
	local pid n named
	require_root
	require_bin "$PA_RECORD" "$PA_CONVERT" "$PA_WL/gpu_producer"
	cp "$PA_WL/gpu_producer" .
	./gpu_producer 1000 >out.txt 2>&1 &
	pid=$!
	sleep 0.5
	pa_record -v --gpu -F 99 -o pa.data -p "$pid" 2>rec.err ||
		fail "pa-record failed: $(grep -v '^libbpf' rec.err | tail -3)"
	wait "$pid" || fail "gpu_producer: $(cat out.txt)"
	"$PA_CONVERT" -i pa.data --folded --event gpu-launch >folded.txt 2>conv.err ||
		fail "pa-convert: $(cat conv.err)"
	named=$(grep -E ';step_b;cuLaunchKernel;\[gpu:launch\];\[gpu:kernel\]_kernB\(float\*,_int\) [0-9]+$' folded.txt |
		awk '{ t += $NF } END { print t + 0 }')
	n=$(grep -E ';step_b;cuLaunchKernel;\[gpu:launch\];\[gpu:kernel\]_' folded.txt |
		awk '{ t += $NF } END { print t + 0 }')
	echo "$named of $n driver launches named kernB"
	[ "$n" = 1000 ] || fail "$n driver launches, not 1000"
	# Records come in batches of 64 steps' worth.
	[ "$named" -ge 900 ] || fail "$named of 1000 named: $(grep step_b folded.txt)"
	grep -q 'gpu: the driver named 1 kernel handles' rec.err || fail "$(grep gpu: rec.err)"
}

@test "gpu-attach: gpu-time is gpu/nanoseconds in pprof, labelled by device and stream, and GPU time in pa-report and perf report" {
	require_root
	require_bin "$PA_RECORD" "$PA_CONVERT" "$PA_REPORT" "$PA_WL/gpu_producer"
	command -v go >/dev/null || fail "go not installed (make deps installs golang-go)"
	cp "$PA_WL/gpu_producer" .
	pa_record --gpu -F 99 -o pa.data -- ./gpu_producer 200 >out.txt 2>rec.err ||
		fail "pa-record failed: $(grep -v '^libbpf' rec.err | tail -3)"
	"$PA_CONVERT" -i pa.data --pprof -o pa.pb.gz || fail "pa-convert failed"
	go tool pprof -raw pa.pb.gz >raw.txt 2>&1 || fail "$(cat raw.txt)"
	grep -q 'gpu/nanoseconds' raw.txt || fail "$(head -5 raw.txt)"
	# Each GPU sample is labelled with its device and stream (strings: pprof drops a
	# numeric 0).
	go tool pprof -sample_index=gpu -tags pa.pb.gz >tags.txt 2>&1 || fail "$(cat tags.txt)"
	grep -A1 '^ *gpu_device:' tags.txt | grep -qE '100%\): 0$' || fail "$(cat tags.txt)"
	grep -A1 '^ *gpu_stream:' tags.txt | grep -qE '100%\): 7$' || fail "$(cat tags.txt)"
	run -0 "$PA_REPORT" -i pa.data --event gpu-time --no-children --sort sym -g none --stdio
	[[ $output == *"# GPU time: 0.001482 s"* ]] || fail "$output"
	grep -qE '^ +67\.[0-9]+%  \[\.\] \[gpu:kernel\] kernB\(float\*, int\)$' <<<"$output" || fail "$output"
	perf report -i pa.data --no-children --sort sym -g none --stdio 2>/dev/null >perf.txt
	grep -qE "^# Samples: .* of event 'gpu-time'" perf.txt || fail "$(cat perf.txt)"
	grep -qF '[gpu:kernel] kernB(float*, int)' perf.txt || fail "perf does not name the kernel"
}

@test "gpu-attach: pa-report --event gpu sums each kernel's GPU time with its grid and block, and copies' bandwidth" {
	require_root
	require_bin "$PA_RECORD" "$PA_REPORT" "$PA_WL/gpu_producer"
	cp "$PA_WL/gpu_producer" .
	pa_record --gpu -F 99 -o pa.data -- ./gpu_producer 1000 >out.txt 2>rec.err ||
		fail "pa-record failed: $(grep -v '^libbpf' rec.err | tail -3)"
	run -0 "$PA_REPORT" -i pa.data --event gpu
	echo "$output"
	[[ $output == *"# GPU kernels: 3, 2010 instances timed (7.010000 ms on the GPU), 2000 launches"* ]] ||
		fail "header"
	# kernB: launched through the driver API, named by its handle, timed by the adapter.
	grep -qE '^ +71\.33% +5000000 +1000 +5000\.0 +5000 +5000  \(32,2,1\) +\(128,1,1\) +1000  kernB\(float\*, int\)$' \
		<<<"$output" || fail "kernB"
	grep -qE '^ +28\.53% +2000000 +1000 +2000\.0 +2000 +2000  \(64,1,1\) +\(256,1,1\) +1000  kernA\(float\*, int\)$' \
		<<<"$output" || fail "kernA"
	# 10 copies of 1 MiB in 40 us each: 26.214 GB/s.
	grep -qE '^ +100\.00% +400000 +10 +10\.486 +1\.049 +40000 +26\.214  memcpy HtoD$' <<<"$output" ||
		fail "memcpy"
	run -1 "$PA_REPORT" -i pa.data --event gpu --pid 1
	[[ $output == *"no GPU samples match the filters"* ]] || fail "$output"
}

@test "gpu-attach: pa-record --gpu -- CMD runs CMD with the adapter, unless it has another injection" {
	require_root
	require_bin "$PA_RECORD"
	pa_record --gpu -F 99 -o pa.data -- env >env.txt 2>rec.err || fail "$(tail -3 rec.err)"
	grep -qx "CUDA_INJECTION64_PATH=$PA_GPU_ADAPTER_LIB" env.txt || fail "not injected: $(grep CUDA env.txt)"
	CUDA_INJECTION64_PATH=/opt/other/libinject.so pa_record --gpu -F 99 -o pa.data -- env \
		>env.txt 2>rec.err || fail "$(tail -3 rec.err)"
	grep -qx 'CUDA_INJECTION64_PATH=/opt/other/libinject.so' env.txt || fail "replaced: $(grep CUDA env.txt)"
	grep -q 'CUDA_INJECTION64_PATH is set (/opt/other/libinject.so): the CUDA adapter is not injected' rec.err ||
		fail "no warning: $(cat rec.err)"
}

@test "gpu-attach: GPU records the ring buffer had no room for are counted, as lost gpu-time samples" {
	require_root
	require_bin "$PA_RECORD" "$PA_REPORT" "$PA_WL/gpu_producer"
	cp "$PA_WL/gpu_producer" .
	PA_RECORD_DROP_EVERY=7 pa_record --gpu -F 99 -o pa.data -- ./gpu_producer 500 \
		>out.txt 2>rec.err || fail "pa-record failed: $(grep -v '^libbpf' rec.err | tail -3)"
	timed=$(sed -n 's/.*gpu: \([0-9]*\) kernels, copies and sets timed.*/\1/p' rec.err)
	lost=$(sed -n 's/.*gpu: [0-9]* launches and \([0-9]*\) GPU records lost.*/\1/p' rec.err)
	[ -n "$timed" ] && [ -n "$lost" ] && [ "$lost" -gt 0 ] || fail "$(grep 'gpu:' rec.err)"
	# Every record the producer handed over is either written or counted lost.
	[ $((timed + lost)) = 1010 ] || fail "$timed timed + $lost lost, not 1010"
	run -0 "$PA_REPORT" -i pa.data --event gpu-time --stdio
	grep -qx "# Lost samples: $lost" <<<"$output" || fail "$(head -5 <<<"$output")"
}
