// SPDX-License-Identifier: Apache-2.0
/*
 * cuda_driver [STEPS [all|drv|rt|sites]]: kernels launched through the CUDA driver API, as
 * Triton, CuPy and JAX launch theirs.  Their handles come from cuModuleGetFunction
 * and, for a library's kernel, cuLibraryGetKernel then cuKernelGetFunction; each step
 * (default 1000) launches them with cuLaunchKernel and cuLaunchKernelEx, and makes one
 * runtime launch that calls into the driver for its own, as libcudart does
 * (cudaLaunchKernel here stands in for the runtime's).  drv: the driver's three
 * launches only; rt: the runtime's only (bench/gpu); sites: vec_add only, three times
 * from site_a() and once from site_b().  Prints the launch loop's time.
 *
 * Built against the toolkit's stub libcuda (every call fails: no handle is given out)
 * or tests/workloads/fake_libcuda.c (every call succeeds); without a GPU either way.
 */
#include <cuda.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static CUfunction add_fn, scale_fn, reduce_fn;

__attribute__((noinline)) void launch_add(void)
{
	cuLaunchKernel(add_fn, 64, 1, 1, 256, 1, 1, 0, NULL, NULL, NULL);
}

__attribute__((noinline)) void launch_scale(void)
{
	CUlaunchConfig cfg = {.gridDimX = 8,
			      .gridDimY = 1,
			      .gridDimZ = 1,
			      .blockDimX = 128,
			      .blockDimY = 1,
			      .blockDimZ = 1};

	cuLaunchKernelEx(&cfg, scale_fn, NULL, NULL);
}

__attribute__((noinline)) void launch_reduce(void)
{
	cuLaunchKernel(reduce_fn, 1, 1, 1, 1024, 1, 1, 0, NULL, NULL, NULL);
}

/* The host-side function of the runtime's kernel, as nvcc makes one per kernel. */
__attribute__((noinline)) void rt_kernel(void)
{
}

/* The runtime's launch, as far as it matters here: through the driver, deeper. */
__attribute__((noinline)) int cudaLaunchKernel(const void *func, CUfunction f)
{
	volatile char frame[256];

	frame[0] = 0;
	(void)func;
	return cuLaunchKernel(f, frame[0] + 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
}

__attribute__((noinline)) void launch_rt(void)
{
	cudaLaunchKernel((const void *)rt_kernel, add_fn);
}

/* One kernel launched from two places. */
__attribute__((noinline)) void site_a(void)
{
	launch_add();
}

__attribute__((noinline)) void site_b(void)
{
	launch_add();
}

static bool drv = true, rt = true, sites;

__attribute__((noinline)) void step(void)
{
	if (sites) {
		site_a();
		site_a();
		site_a();
		site_b();
		return;
	}
	if (drv) {
		launch_add();
		launch_scale();
		launch_reduce();
	}
	if (rt)
		launch_rt();
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	CUmodule mod = (CUmodule)(uintptr_t)0x1000;
	CUlibrary lib = (CUlibrary)(uintptr_t)0x2000;
	CUkernel reduce = NULL;
	int i, n = argc > 1 ? atoi(argv[1]) : 1000;
	CUresult rc;
	double t0;

	if (argc > 2) {
		sites = !strcmp(argv[2], "sites");
		drv = strcmp(argv[2], "rt");
		rt = strcmp(argv[2], "drv");
	}

	rc = cuInit(0);
	cuModuleGetFunction(&add_fn, mod, "_Z7vec_addPKfS0_Pfi");
	cuModuleGetFunction(&scale_fn, mod, "scale_kernel");
	cuLibraryGetKernel(&reduce, lib, "_Z6reducePfi");
	cuKernelGetFunction(&reduce_fn, reduce);
	t0 = now();
	for (i = 0; i < n; i++)
		step();
	printf("%d launches in %.6f s\n", sites ? 4 * n : n * (3 * drv + rt), now() - t0);
	printf("cuda_driver: %d steps, cuInit %d, handles %s\n", n, (int)rc,
	       add_fn && scale_fn && reduce_fn ? "given" : "none");
	return 0;
}
