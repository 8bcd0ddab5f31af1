// SPDX-License-Identifier: Apache-2.0
/*
 * nofp_dlopen LIB [seconds [KiB]]: after 500 ms (the recorder is attached by then),
 * dlopen LIB and spend seconds of CPU time in its lib_outer -> lib_hot under main -> call_lib, so
 * the library's frames can only unwind if its table is loaded during the recording.
 * KiB: call_lib keeps that much of the stack in use below it (a deep stack).
 */
#include <alloca.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) unsigned long call_lib(unsigned long (*fn)(double), double secs,
						 size_t pad)
{
	volatile char *p = alloca(pad + 1);

	memset((char *)p, 1, pad + 1);
	return fn(secs) + 1 + p[pad / 2];
}

int main(int argc, char **argv)
{
	unsigned long (*fn)(double);
	void *h;

	if (argc < 2) {
		fprintf(stderr, "usage: nofp_dlopen LIB [seconds [KiB]]\n");
		return 2;
	}
	usleep(500000);
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "nofp_dlopen: %s\n", dlerror());
		return 1;
	}
	fn = (unsigned long (*)(double))dlsym(h, "lib_outer");
	if (!fn) {
		fprintf(stderr, "nofp_dlopen: %s\n", dlerror());
		return 1;
	}
	return call_lib(fn, argc > 2 ? atof(argv[2]) : 2, argc > 3 ? atol(argv[3]) << 10 : 0) == 0;
}
