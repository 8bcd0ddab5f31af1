#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# CUDA kernel launches seen by uprobes on the CUDA runtime (pa-record --gpu), with no
# GPU and no driver: every launch fails, but still enters cudaLaunchKernel.

load lib/helpers

NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}

setup_file() {
	local d=$BATS_FILE_TMPDIR
	[ -x "$NVCC" ] || return 0
	"$NVCC" -g -o "$d/launch_static" "$PA_ROOT/tests/workloads/cuda_launch.cu" &&
		"$NVCC" -g -cudart shared -o "$d/launch_shared" \
			"$PA_ROOT/tests/workloads/cuda_launch.cu" || return 1
	# The driver API (cuda_driver) runs with the toolkit's stub libcuda, every call of
	# which fails, or with the tests' driver ($PA_WL/fake, from fake_libcuda.c).
	mkdir -p "$d/stub"
	ln -sf "$(realpath "$(dirname "$NVCC")/../lib64/stubs/libcuda.so")" "$d/stub/libcuda.so.1"
}

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	require_root
	require_bin "$PA_RECORD"
	[ -x "$NVCC" ] || fail "no nvcc at $NVCC (the CUDA toolkit; set NVCC)"
}

# launches BIN: BIN's 2 x 3000 launches recorded; each kernel under step(), once per launch.
launches() {
	local bin=$1 k
	cp "$BATS_FILE_TMPDIR/$bin" .
	pa_record -v --gpu -F 99 -o pa.data -- "./$bin" 3000 2>rec.err ||
		fail "$bin: pa-record failed: $(grep -v '^libbpf' rec.err | tail -3)"
	grep '^pa-record: gpu:' rec.err || fail "$bin: no gpu summary"
	"$PA_CONVERT" -i pa.data --folded --event gpu-launch >folded.txt 2>conv.err ||
		fail "$bin: pa-convert: $(cat conv.err)"
	# Folded frames have their spaces as "_".
	for k in 'vec_add\(float_const\*,_float_const\*,_float\*,_int\)' 'scale\(float\*,_float,_int\)'; do
		n=$(grep -E ";main;step\(int\);.*;cudaLaunchKernel;\[gpu:launch\];\[gpu:kernel\]_$k [0-9]+\$" folded.txt |
			awk '{ t += $NF } END { print t + 0 }')
		echo "$bin: $n launches of $k under main;step"
		[ "$n" = 3000 ] || fail "$bin: $n launches of $k under step, not 3000"
	done
	perf report -i pa.data --no-children --stdio -g none --sort sym 2>/dev/null |
		grep -F '[gpu:kernel] vec_add(float const*, float const*, float*, int)' ||
		fail "$bin: perf report does not name the kernel"
}

@test "gpu: launches through nvcc's static CUDA runtime, each under its stack with the kernel's name" {
	launches launch_static
}

@test "gpu: pa-report --event gpu counts each kernel's launches when no adapter timed them" {
	launches launch_static
	run -0 "$PA_REPORT" -i pa.data --event gpu
	[[ $output == *"launches seen by the launch uprobes (no CUDA adapter records: launches only)"* ]] ||
		fail "$output"
	grep -qE '^ +- +- +0 +- +- +- +- +- +3000  vec_add\(float const\*, float const\*, float\*, int\)$' \
		<<<"$output" || fail "$output"
}

@test "gpu: launches through libcudart.so (-cudart shared)" {
	launches launch_shared
	grep -q 'gpu: .* launch APIs probed in .*libcudart\.so' rec.err || fail "libcudart.so not probed"
}

@test "gpu: without --gpu nothing is probed, --gpu needs the CFI walker, --gpu-stacks needs --gpu" {
	cp "$BATS_FILE_TMPDIR/launch_static" .
	pa_record -v -F 99 -o pa.data -- ./launch_static 100 2>rec.err || fail "pa-record failed"
	run ! grep -q '^pa-record: gpu:' rec.err
	run "$PA_RECORD" --gpu --unwind fp -o pa.data -- ./launch_static 1
	[ "$status" -ne 0 ] && [[ $output == *"--gpu finds the CUDA runtime"* ]] || fail "$output"
	run "$PA_RECORD" --gpu-stacks 100 -o pa.data -- ./launch_static 1
	[ "$status" -ne 0 ] && [[ $output == *"--gpu-stacks rates the walks of --gpu's launch stacks; add --gpu"* ]] ||
		fail "$output"
	run "$PA_RECORD" --gpu --gpu-stacks 1x -o pa.data -- ./launch_static 1
	[ "$status" -ne 0 ] && [[ $output == *"invalid --gpu-stacks '1x'"* ]] || fail "$output"
}

# Python calling the runtime through ctypes: its frames sit above [gpu:launch].  The
# "kernel" is libc's qsort, a host function the runtime is handed like any other.
@test "gpu: a launch from Python (ctypes) sits under the Python function that made it" {
	local py cudart n
	py=$(ls -d "$(pyenv root 2>/dev/null || echo /root/.pyenv)"/versions/3.12.*/bin/python3.12 | tail -1)
	cudart=$(dirname "$NVCC")/../lib64/libcudart.so
	[ -e "$cudart" ] || fail "no $cudart"
	cat >l.py <<'PY'
import ctypes, sys, time
rt = ctypes.CDLL(sys.argv[1])
libc = ctypes.CDLL("libc.so.6")
class dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]
rt.cudaLaunchKernel.argtypes = [ctypes.c_void_p, dim3, dim3, ctypes.c_void_p, ctypes.c_size_t,
                                ctypes.c_void_p]
kernel = ctypes.cast(libc.qsort, ctypes.c_void_p)
def train_step():
    return rt.cudaLaunchKernel(kernel, dim3(1, 1, 1), dim3(32, 1, 1), None, 0, None)
time.sleep(0.5)  # ctypes' libffi is mapped at import: its unwind table loads meanwhile
for _ in range(500):
    train_step()
time.sleep(0.3)  # names are read from the live process
PY
	pa_record -v --gpu -F 99 -o pa.data -- "$py" l.py "$cudart" 2>rec.err ||
		fail "pa-record failed: $(grep -v '^libbpf' rec.err | tail -3)"
	"$PA_CONVERT" -i pa.data --folded --event gpu-launch >folded.txt 2>conv.err ||
		fail "pa-convert: $(cat conv.err)"
	cut -c1-600 folded.txt
	n=$(grep -E 'PyEval_EvalCode;([^;(]*;)*<module>_\(l\.py\);train_step_\(l\.py\);.*;cudaLaunchKernel;\[gpu:launch\];\[gpu:kernel\]_qsort [0-9]+$' folded.txt |
		awk '{ t += $NF } END { print t + 0 }')
	[ "$n" = 500 ] || fail "$n of 500 launches under train_step, with qsort as the kernel"
}

# driver DIR: cuda_driver's 1000 steps recorded, with DIR's libcuda.so.1; its
# launches per kernel frame, "stack;...;[gpu:kernel]_NAME N", in launches.txt.
driver() {
	require_bin "$PA_WL/cuda_driver" "$PA_WL/fake/libcuda.so.1"
	cp "$PA_WL/cuda_driver" .
	LD_LIBRARY_PATH=$1 pa_record -v --gpu -F 99 -o pa.data -- ./cuda_driver 1000 \
		>out.txt 2>rec.err || fail "pa-record failed: $(grep -v '^libbpf' rec.err | tail -3)"
	cat out.txt
	grep -q "gpu: .* launch APIs probed in .*libcuda\.so.*, with the driver calls naming kernels" \
		rec.err || fail "libcuda not probed: $(grep gpu: rec.err)"
	"$PA_CONVERT" -i pa.data --folded --event gpu-launch >folded.txt 2>conv.err ||
		fail "pa-convert: $(cat conv.err)"
	sed -E 's/^.*;main;/main;/' folded.txt |
		awk '{ n[$1] += $2 } END { for (k in n) print k, n[k] }' | sort >launches.txt
	cat launches.txt
}

# launches_of PATTERN: the launches of the lines of launches.txt matching PATTERN (ERE).
launches_of() {
	grep -E "$1" launches.txt | awk '{ t += $2 } END { print t + 0 }'
}

# What the driver's probes add: launches through cuLaunchKernel and cuLaunchKernelEx
# under the function that made them, each kernel named by the name the driver was
# given for its handle (cuModuleGetFunction; cuLibraryGetKernel then
# cuKernelGetFunction).  The runtime's launch calls into the driver too: one launch,
# counted once, under the runtime's API.
@test "gpu: launches through the driver API, named by their handles, the runtime's counted once" {
	local k n
	driver "$PA_WL/fake"
	grep -q 'handles given' out.txt || fail "the tests' driver gave no handles"
	for k in 'launch_add;cuLaunchKernel;\[gpu:launch\];\[gpu:kernel\]_vec_add\(float_const\*,_float_const\*,_float\*,_int\)' \
		'launch_scale;cuLaunchKernelEx;\[gpu:launch\];\[gpu:kernel\]_scale_kernel' \
		'launch_reduce;cuLaunchKernel;\[gpu:launch\];\[gpu:kernel\]_reduce\(float\*,_int\)' \
		';cudaLaunchKernel;\[gpu:launch\];\[gpu:kernel\]_rt_kernel'; do
		n=$(launches_of "$k ")
		[ "$n" = 1000 ] || fail "$n launches of $k, not 1000"
	done
	n=$(launches_of .)
	[ "$n" = 4000 ] || fail "$n launches in all, not 4000: the runtime's counted twice?"
	grep -q 'gpu: the driver named 4 kernel handles; 1000 of its launches were the runtime' rec.err ||
		fail "$(grep gpu: rec.err)"
}

# The same program with NVIDIA's stub libcuda, a real driver's symbols: every call fails,
# no handle is given, but each launch still enters the driver and is counted.
@test "gpu: the toolkit's libcuda is probed: launches without a handle are counted, unnamed" {
	local n
	driver "$BATS_FILE_TMPDIR/stub"
	grep -q 'handles none' out.txt || fail "the stub gave handles"
	n=$(launches_of ';launch_(add|reduce);cuLaunchKernel;\[gpu:launch\];\[gpu:kernel\]_<unknown> ')
	[ "$n" = 2000 ] || fail "$n unnamed cuLaunchKernel launches, not 2000"
	n=$(launches_of ';launch_scale;cuLaunchKernelEx;\[gpu:launch\];\[gpu:kernel\]_<unknown> ')
	[ "$n" = 1000 ] || fail "$n unnamed cuLaunchKernelEx launches, not 1000"
	n=$(launches_of .)
	[ "$n" = 4000 ] || fail "$n launches in all, not 4000"
}

# sites_of FILE: "A B", the launches under site_a() and site_b() in folded FILE.
sites_of() {
	awk '/;site_a;/ { a += $NF } /;site_b;/ { b += $NF } END { print a + 0, b + 0 }' "$1"
}

# vec_add launched 3 times from site_a() for each time from site_b(), 200000 times in
# under a second: over 1000 walks a second, a launch takes the last stack walked in
# its thread for its kernel, so each walk stands for the launches after it: every
# launch counted, each site's share sampled.  --gpu-stacks 0 walks every launch.
@test "gpu: over --gpu-stacks, launches are counted under the last stack walked for their kernel" {
	local a b
	require_bin "$PA_WL/cuda_driver" "$PA_WL/fake/libcuda.so.1"
	cp "$PA_WL/cuda_driver" .
	LD_LIBRARY_PATH=$PA_WL/fake pa_record -v --gpu -F 99 -o pa.data -- ./cuda_driver 50000 sites \
		>out.txt 2>rec.err || fail "pa-record failed: $(grep -v '^libbpf' rec.err | tail -3)"
	cat out.txt
	grep -qE 'gpu: [1-9][0-9]* launches over 1000 stack walks a second in their thread took' rec.err ||
		fail "no launch over the rate: $(grep gpu: rec.err)"
	"$PA_CONVERT" -i pa.data --folded --event gpu-launch >folded.txt || fail "pa-convert failed"
	read -r a b < <(sites_of folded.txt)
	echo "sampled: site_a $a, site_b $b"
	[ $((a + b)) = 200000 ] || fail "$((a + b)) launches under the sites, not 200000"
	[ "$a" -ge 130000 ] && [ "$a" -le 170000 ] || fail "site_a's share: $a of 200000, not about 3/4"

	LD_LIBRARY_PATH=$PA_WL/fake pa_record -v --gpu-stacks 0 --gpu -F 99 -o pa0.data -- \
		./cuda_driver 50000 sites >out.txt 2>rec.err || fail "pa-record --gpu-stacks 0 failed"
	run ! grep -q 'stack walks a second' rec.err
	"$PA_CONVERT" -i pa0.data --folded --event gpu-launch >folded0.txt || fail "pa-convert failed"
	read -r a b < <(sites_of folded0.txt)
	[ "$a" = 150000 ] && [ "$b" = 50000 ] || fail "every launch walked: site_a $a, site_b $b"
}
