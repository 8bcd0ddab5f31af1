// SPDX-License-Identifier: Apache-2.0
/*
 * A CUDA driver for tests, built as libcuda.so.1: the calls that give kernels their
 * handles succeed (each name its own handle, as a real driver's are pointers), and
 * launches succeed without running anything.  It plays the driver's part for
 * cuda_driver.c as gpu_producer.c plays CUPTI's: the toolkit's stub libcuda fails
 * every call, so it never hands out a handle.
 */
#include <stddef.h>
#include <stdio.h>

#define MAX_HANDLES 64

struct handle {
	char name[128];
};

static struct handle handles[MAX_HANDLES];
static int nr_handles;

/* CUresult values */
#define CUDA_SUCCESS		 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_OUT_OF_MEMORY 2

static int give(void **out, const char *name)
{
	if (!out || !name)
		return CUDA_ERROR_INVALID_VALUE;
	if (nr_handles == MAX_HANDLES)
		return CUDA_ERROR_OUT_OF_MEMORY;
	snprintf(handles[nr_handles].name, sizeof(handles[0].name), "%s", name);
	*out = &handles[nr_handles++];
	return CUDA_SUCCESS;
}

int cuInit(unsigned flags)
{
	(void)flags;
	return CUDA_SUCCESS;
}

int cuModuleGetFunction(void **f, void *mod, const char *name)
{
	(void)mod;
	return give(f, name);
}

int cuLibraryGetKernel(void **k, void *lib, const char *name)
{
	(void)lib;
	return give(k, name);
}

/* A kernel's function in the current context: a handle of its own. */
int cuKernelGetFunction(void **f, void *k)
{
	return k ? give(f, ((struct handle *)k)->name) : CUDA_ERROR_INVALID_VALUE;
}

int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
		   unsigned bz, unsigned shmem, void *stream, void **params, void **extra)
{
	(void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shmem, (void)stream,
		(void)params, (void)extra;
	return f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

int cuLaunchKernelEx(const void *config, void *f, void **params, void **extra)
{
	(void)params, (void)extra;
	return config && f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
