// SPDX-License-Identifier: Apache-2.0
/*
 * pa-gpu-attach: run a command with the CUDA adapter injected (the CUDA driver loads
 * the library CUDA_INJECTION64_PATH names into every CUDA process and calls its
 * InitializeInjection), so pa-record --gpu joins each launch's GPU time to the stack
 * that launched it.  --check says what is there: the adapter, libcupti, the driver.
 */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"

#ifndef PA_VERSION
#define PA_VERSION "0.1.0"
#endif

#define ADAPTER "libpa-gpu-adapter.so"
#define INJECT	"CUDA_INJECTION64_PATH"

static void usage(FILE *f)
{
	fprintf(f, "usage: pa-gpu-attach [-q] [--] CMD [ARGS...]\n"
		   "       pa-gpu-attach --check\n"
		   "Run CMD with the CUDA adapter injected, for pa-record --gpu.\n"
		   "      --check    say whether the adapter, libcupti and the CUDA driver are "
		   "there\n"
		   "  -q, --quiet    no notes\n"
		   "  -h, --help     this text\n"
		   "      --version  print the version\n"
		   "Environment: PA_GPU_ADAPTER (the adapter's path), PA_CUPTI_LIB (libcupti's)\n");
}

/* The adapter's path into buf (pa_find_libfile); false when it is not there. */
static bool find_adapter(char *buf, size_t len)
{
	return pa_find_libfile(ADAPTER, "PA_GPU_ADAPTER", buf, len);
}

/* The first of names dlopen finds, or NULL.  It stays loaded: the process ends
 * soon, and unloading libcupti leaks what its initialisers allocated. */
static const char *loadable(const char *const *names)
{
	for (; *names; names++)
		if (dlopen(*names, RTLD_LAZY | RTLD_LOCAL))
			return *names;
	return NULL;
}

/* --check: one line per part; 0 when all are there. */
static int check(void)
{
	static const char *const cupti[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so",
					    "/usr/local/cuda/lib64/libcupti.so", NULL};
	static const char *const driver[] = {"libcuda.so.1", NULL};
	const char *env = getenv("PA_CUPTI_LIB");
	const char *const cupti_env[] = {env, NULL};
	char path[PATH_MAX];
	const char *lib;
	void *h;
	int missing = 0;

	if (!find_adapter(path, sizeof(path))) {
		printf("adapter: not found (it is built where the CUDA toolkit is; or set "
		       "PA_GPU_ADAPTER)\n");
		missing++;
	} else if (!(h = dlopen(path, RTLD_LAZY | RTLD_LOCAL))) {
		printf("adapter: %s does not load: %s\n", path, dlerror());
		missing++;
	} else {
		bool init = dlsym(h, "InitializeInjection");

		printf("adapter: %s%s\n", path,
		       init ? "" : " (no InitializeInjection: not the adapter)");
		missing += !init;
		dlclose(h);
	}
	lib = env && *env ? loadable(cupti_env) : loadable(cupti);
	if (lib) {
		printf("libcupti: %s\n", lib);
	} else {
		printf("libcupti: not found (install the CUDA toolkit's CUPTI, or set "
		       "PA_CUPTI_LIB): no GPU times\n");
		missing++;
	}
	lib = loadable(driver);
	if (lib) {
		printf("CUDA driver: %s\n", lib);
	} else {
		printf("CUDA driver: libcuda.so.1 not found: no kernel runs here; pa-record --gpu "
		       "still sees launches through its uprobes\n");
		missing++;
	}
	return missing ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"check", no_argument, NULL, 'c'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{},
	};
	char path[PATH_MAX];
	const char *old;
	bool quiet = false;
	int c;

	pa_set_progname("pa-gpu-attach");
	while ((c = getopt_long(argc, argv, "+qh", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			return check();
		case 'q':
			quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("pa-gpu-attach %s\n", PA_VERSION);
			return 0;
		default:
			fprintf(stderr, "Try 'pa-gpu-attach --help' for more information.\n");
			return 1;
		}
	}
	if (optind == argc) {
		pa_err("no command to run; usage: pa-gpu-attach [--] CMD [ARGS...]");
		return 1;
	}
	if (!find_adapter(path, sizeof(path))) {
		pa_err("the CUDA adapter (%s) is not installed: it is built where the CUDA "
		       "toolkit is (make); or set PA_GPU_ADAPTER",
		       ADAPTER);
		return 1;
	}
	old = getenv(INJECT);
	if (old && *old && strcmp(old, path)) {
		pa_err("%s is already set (%s): another tool injects itself into CUDA; unset "
		       "it to run under pa-gpu-attach",
		       INJECT, old);
		return 1;
	}
	if (setenv(INJECT, path, 1)) {
		pa_err("cannot set %s: %s", INJECT, strerror(errno));
		return 1;
	}
	if (!quiet)
		pa_info("%s=%s", INJECT, path);
	execvp(argv[optind], argv + optind);
	pa_err("cannot run %s: %s", argv[optind], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
