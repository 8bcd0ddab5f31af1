// SPDX-License-Identifier: Apache-2.0
/*
 * nofp_dlopen LIB [seconds]: after 500 ms (the recorder is attached by then), dlopen
 * LIB and spend the time in its lib_outer -> lib_hot under main -> call_lib, so the
 * library's frames can only unwind if its table is loaded during the recording.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) unsigned long call_lib(unsigned long (*fn)(double), double secs)
{
	return fn(secs) + 1;
}

int main(int argc, char **argv)
{
	unsigned long (*fn)(double);
	void *h;

	if (argc < 2) {
		fprintf(stderr, "usage: nofp_dlopen LIB [seconds]\n");
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
	return call_lib(fn, argc > 2 ? atof(argv[2]) : 2) == 0;
}
