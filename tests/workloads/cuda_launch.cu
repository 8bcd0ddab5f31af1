// SPDX-License-Identifier: Apache-2.0
/*
 * CUDA kernel launches, ITERS times two kernels from step(): without a GPU (or a
 * driver) every launch fails, but each still enters the runtime's cudaLaunchKernel,
 * where pa-record --gpu probes it.  Built by tests/gpu.bats with nvcc, with the static
 * runtime (nvcc's default) and with -cudart shared.
 */
#include <cstdio>
#include <cstdlib>
#include <ctime>
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
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < iters; i++)
		step(1 << 20);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* bench/gpu reads the seconds */
	printf("%d launches in %.6f s: %s\n", 2 * iters,
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
	       cudaGetErrorString(cudaGetLastError()));
	return 0;
}
