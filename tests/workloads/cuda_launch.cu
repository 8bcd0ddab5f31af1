// SPDX-License-Identifier: Apache-2.0
/*
 * CUDA kernel launches, ITERS times two kernels from step(): without a GPU (or a
 * driver) every launch fails, but each still enters the runtime's cudaLaunchKernel,
 * where pa-record --gpu probes it.  Built by tests/gpu.bats with nvcc, with the static
 * runtime (nvcc's default) and with -cudart shared.
 */
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void vec_add(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		c[i] = a[i] + b[i];
}

__global__ void scale(float *c, float k, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		c[i] *= k;
}

__attribute__((noinline)) static void step(int n)
{
	vec_add<<<(n + 255) / 256, 256>>>(nullptr, nullptr, nullptr, n);
	scale<<<(n + 255) / 256, 256>>>(nullptr, 2.0f, n);
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 1000;

	for (int i = 0; i < iters; i++)
		step(1 << 20);
	printf("%d launches: %s\n", 2 * iters, cudaGetErrorString(cudaGetLastError()));
	return 0;
}
