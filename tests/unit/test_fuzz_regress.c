// SPDX-License-Identifier: Apache-2.0
/*
 * Every fuzz target (tests/fuzz/fuzz_*.c) replayed on its seed corpus (made by
 * tests/fuzz/make-corpus under $PA_BUILD/tests/fuzz/corpus/TARGET/) and on the inputs
 * that once crashed it (tests/fuzz/regress/TARGET/), with whatever compiler make check
 * uses: a crash is caught here by the sanitizers under SAN=1, and by the signal it dies
 * of otherwise.  make fuzz runs the same targets under libFuzzer.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"

#define FUZZ_REPLAY
#include "../fuzz/fuzz_buildid.c"
#include "../fuzz/fuzz_cfi.c"
#include "../fuzz/fuzz_cfi_elf.c"
#include "../fuzz/fuzz_container.c"
#include "../fuzz/fuzz_evspec.c"
#include "../fuzz/fuzz_gopclntab.c"
#include "../fuzz/fuzz_perfdata.c"
#include "../fuzz/fuzz_perfdata_pipe.c"
#include "../fuzz/fuzz_perfmap.c"
#include "../fuzz/fuzz_procmaps.c"
#include "../fuzz/fuzz_symtab_elf.c"

/* The source tree's tests/fuzz (regress/), and the build's (corpus/). */
static const char *fuzz_dir(const char *dir)
{
	static char path[PATH_MAX];
	const char *r = getenv(strcmp(dir, "corpus") ? "PA_ROOT" : "PA_BUILD");

	if (!r || !*r)
		r = strcmp(dir, "corpus") ? "." : "build";
	snprintf(path, sizeof(path), "%s/tests/fuzz", r);
	return path;
}

static int read_all(const char *path, uint8_t **out, size_t *len)
{
	struct stat sb;
	ssize_t n;
	size_t off = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) || !(*out = malloc(sb.st_size ? (size_t)sb.st_size : 1))) {
		close(fd);
		return -ENOMEM;
	}
	while (off < (size_t)sb.st_size && (n = read(fd, *out + off, (size_t)sb.st_size - off)) > 0)
		off += (size_t)n;
	close(fd);
	*len = off;
	return 0;
}

/* Each file of DIR/NAME through fn; returns how many, or -1 when one could not be read. */
static int replay_dir(const char *dir, const char *name, int (*fn)(const uint8_t *, size_t))
{
	char path[PATH_MAX];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%s/%s", fuzz_dir(dir), dir, name);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? 0 : -1;
	while ((de = readdir(d))) {
		uint8_t *data = NULL;
		size_t len = 0;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/%s/%s", fuzz_dir(dir), dir, name, de->d_name);
		if (read_all(path, &data, &len)) {
			printf("#   cannot read %s\n", path);
			n = -1;
			break;
		}
		/* Printed first: if the target dies, the last name is the input that killed it. */
		printf("#   %s/%s/%s\n", dir, name, de->d_name);
		fflush(stdout);
		fn(data, len);
		free(data);
		n++;
	}
	closedir(d);
	return n;
}

static void replay(const char *name, int (*fn)(const uint8_t *, size_t))
{
	int seeds = replay_dir("corpus", name, fn);
	int regress = replay_dir("regress", name, fn);

	CHECK(seeds > 0); /* every target has a seed corpus */
	CHECK(regress >= 0);
}

#define REPLAY(name)                                                                               \
	static void test_replay_##name(void)                                                       \
	{                                                                                          \
		replay(#name, fuzz_##name);                                                        \
	}
REPLAY(buildid)
REPLAY(cfi)
REPLAY(cfi_elf)
REPLAY(container)
REPLAY(evspec)
REPLAY(gopclntab)
REPLAY(perfdata)
REPLAY(perfdata_pipe)
REPLAY(perfmap)
REPLAY(procmaps)
REPLAY(symtab_elf)

int main(void)
{
	alarm(300); /* a hang is a failure, not a stuck make check */
	RUN(test_replay_buildid);
	RUN(test_replay_cfi);
	RUN(test_replay_cfi_elf);
	RUN(test_replay_container);
	RUN(test_replay_evspec);
	RUN(test_replay_gopclntab);
	RUN(test_replay_perfdata);
	RUN(test_replay_perfdata_pipe);
	RUN(test_replay_perfmap);
	RUN(test_replay_procmaps);
	RUN(test_replay_symtab_elf);
	return unit_done();
}
