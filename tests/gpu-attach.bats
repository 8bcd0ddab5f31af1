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
