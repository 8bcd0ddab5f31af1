// SPDX-License-Identifier: Apache-2.0
/*
 * What the CUDA driver does with CUDA_INJECTION64_PATH, for machines without one:
 * load the library it names and call its InitializeInjection.  Prints the result;
 * exits 0 when the library loaded and returned, 2 otherwise.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	const char *path = getenv("CUDA_INJECTION64_PATH");
	void *h = path ? dlopen(path, RTLD_NOW) : NULL;
	int (*init)(void);

	if (!h) {
		printf("no injection: %s\n", path ? dlerror() : "CUDA_INJECTION64_PATH unset");
		return 2;
	}
	*(void **)&init = dlsym(h, "InitializeInjection");
	if (!init) {
		printf("no InitializeInjection in %s\n", path);
		return 2;
	}
	printf("InitializeInjection: %d\n", init());
	return 0;
}
