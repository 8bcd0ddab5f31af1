#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# CUDA kernel launches seen by uprobes on the CUDA runtime (pa-record --gpu), with no
# GPU and no driver: every launch fails, but still enters cudaLaunchKernel.

load lib/helpers

NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}

setup_file() {
	[ -x "$NVCC" ] || return 0
	"$NVCC" -g -o "$BATS_FILE_TMPDIR/launch_static" "$PA_ROOT/tests/workloads/cuda_launch.cu" &&
		"$NVCC" -g -cudart shared -o "$BATS_FILE_TMPDIR/launch_shared" \
			"$PA_ROOT/tests/workloads/cuda_launch.cu"
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

@test "gpu: without --gpu nothing is probed, and --gpu needs the CFI walker" {
	cp "$BATS_FILE_TMPDIR/launch_static" .
	pa_record -v -F 99 -o pa.data -- ./launch_static 100 2>rec.err || fail "pa-record failed"
	run ! grep -q '^pa-record: gpu:' rec.err
	run "$PA_RECORD" --gpu --unwind fp -o pa.data -- ./launch_static 1
	[ "$status" -ne 0 ] && [[ $output == *"--gpu finds the CUDA runtime"* ]] || fail "$output"
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
