// SPDX-License-Identifier: Apache-2.0
/*
 * matmul [STEPS]: the CUDA workload of the GPU check (tests/gpu/check.sh).  Each of
 * STEPS steps (default 100) launches, from step(), two kernels on one stream, each
 * between two cudaEvents: matmul (a naive 1024 x 1024 product, about a millisecond)
 * and scale (65536 dependent multiply-adds per element of the result, some hundreds
 * of microseconds on a Hopper GPU).  At the end it prints each kernel's GPU time as the events measured
 * it, an independent measure of what the CUDA adapter reports, and the loop's wall
 * time:
 *
 *	events matmul COUNT TOTAL_NS
 *	events scale COUNT TOTAL_NS
 *	wall_s SECONDS
 */
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cuda_runtime.h>

#define N 1024

#define CK(x)                                                                              \
	do {                                                                               \
		cudaError_t e_ = (x);                                                      \
		if (e_ != cudaSuccess) {                                                   \
			fprintf(stderr, "matmul: %s: %s\n", #x, cudaGetErrorString(e_));    \
			exit(1);                                                           \
		}                                                                          \
	} while (0)

__global__ void matmul(const float *a, const float *b, float *c, int n)
{
	int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
	float sum = 0;

	if (row >= n || col >= n)
		return;
	for (int k = 0; k < n; k++)
		sum += a[row * n + k] * b[k * n + col];
	c[row * n + col] = sum;
}

__global__ void scale(float *c, float s, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float v;

	if (i >= n)
		return;
	v = c[i];
	for (int k = 0; k < 65536; k++)
		v = v * s + 1e-6f;
	c[i] = v;
}

struct pair {
	cudaEvent_t before, after;
};

static pair new_pair()
{
	pair p;

	CK(cudaEventCreate(&p.before));
	CK(cudaEventCreate(&p.after));
	return p;
}

__attribute__((noinline)) static void step(const float *a, const float *b, float *c, pair *mm,
					   pair *sc)
{
	dim3 block(16, 16), grid(N / 16, N / 16);

	CK(cudaEventRecord(mm->before));
	matmul<<<grid, block>>>(a, b, c, N);
	CK(cudaEventRecord(mm->after));
	CK(cudaEventRecord(sc->before));
	scale<<<N * N / 256, 256>>>(c, 0.999f, N * N);
	CK(cudaEventRecord(sc->after));
}

static double total_ns(pair *v, int n)
{
	double t = 0;

	for (int i = 0; i < n; i++) {
		float ms;

		CK(cudaEventElapsedTime(&ms, v[i].before, v[i].after));
		t += ms * 1e6;
	}
	return t;
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 100;
	pair *mm = new pair[steps], *sc = new pair[steps];
	float *a, *b, *c;
	timespec t0, t1;

	CK(cudaMalloc(&a, N * N * sizeof(float)));
	CK(cudaMalloc(&b, N * N * sizeof(float)));
	CK(cudaMalloc(&c, N * N * sizeof(float)));
	CK(cudaMemset(a, 0, N * N * sizeof(float)));
	CK(cudaMemset(b, 0, N * N * sizeof(float)));
	for (int i = 0; i < steps; i++) {
		mm[i] = new_pair();
		sc[i] = new_pair();
	}
	CK(cudaDeviceSynchronize());
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < steps; i++)
		step(a, b, c, &mm[i], &sc[i]);
	CK(cudaDeviceSynchronize());
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("events matmul %d %.0f\n", steps, total_ns(mm, steps));
	printf("events scale %d %.0f\n", steps, total_ns(sc, steps));
	printf("wall_s %.6f\n", (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	return 0;
}
