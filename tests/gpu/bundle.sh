#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/gpu/bundle.sh BUILD DEST: what the GPU check (tests/gpu/check.sh) runs, in
# one folder that can be carried to a bare GPU machine (no packages there): the
# commands and the CUDA adapter from BUILD, every shared library they load (the
# C library and its loader included, so they run whatever the machine's C library
# is), and tests/gpu/matmul.cu built with nvcc (its default static CUDA runtime).
set -euo pipefail
build=$1 dest=$2
nvcc=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
bins=(pa-record pa-report pa-convert pa-gpu-attach)

[ -x "$nvcc" ] || { echo "bundle: no nvcc at $nvcc (set NVCC or CUDA_HOME)" >&2; exit 1; }
[ -r "$build/libpa-gpu-adapter.so" ] ||
	{ echo "bundle: no $build/libpa-gpu-adapter.so (the CUDA toolkit's CUPTI headers are needed)" >&2; exit 1; }
rm -rf "$dest"
mkdir -p "$dest/bin" "$dest/lib"
for b in "${bins[@]}"; do
	cp "$build/$b" "$dest/bin/"
	# "libx.so => /path (addr)" and the loader's "/lib64/ld-linux-x86-64.so.2 (addr)"
	ldd "$build/$b" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'
done | sort -u | while read -r lib; do
	cp -L "$lib" "$dest/lib/"
done
cp "$build/libpa-gpu-adapter.so" "$dest/bin/"
# Native code for Hopper (H100, H200), and PTX the driver compiles for anything newer.
"$nvcc" -O2 -g -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 \
	-o "$dest/bin/matmul" tests/gpu/matmul.cu
du -sh "$dest"
