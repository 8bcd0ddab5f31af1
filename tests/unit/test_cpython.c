// SPDX-License-Identifier: Apache-2.0
/*
 * CPython interpreters recognized in their ELF files: pyenv's libpython 3.10 to 3.13,
 * Debian's python3 (the interpreter linked into the executable), a file with only a
 * .PyRuntime section, and files that are no interpreter.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/cpython.h"
#include "unit.h"

static int probe(const char *path, struct cpython_elf *py)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = cpython_probe_fd(fd, py);
	close(fd);
	return err;
}

/* pyenv's libpython of version v ("3.12.1"), found under $PYENV_ROOT or ~/.pyenv. */
static const char *pyenv_lib(const char *v, char *buf, size_t len)
{
	const char *root = getenv("PYENV_ROOT"), *home = getenv("HOME");
	char minor[16];

	snprintf(minor, sizeof(minor), "%.*s", (int)(strrchr(v, '.') - v), v);
	if (root && *root)
		snprintf(buf, len, "%s/versions/%s/lib/libpython%s.so.1.0", root, v, minor);
	else
		snprintf(buf, len, "%s/.pyenv/versions/%s/lib/libpython%s.so.1.0",
			 home ? home : "/root", v, minor);
	return buf;
}

static void check_pyenv(const char *v, uint32_t hex, bool debug_offsets)
{
	struct cpython_elf py;
	char path[4096], ver[32];
	int err = probe(pyenv_lib(v, path, sizeof(path)), &py);

	printf("#   %s: %d\n", path, err);
	CHECK(err == 0);
	CHECK_EQ_U64(py.version, hex);
	CHECK_STR(cpython_version_str(py.version, ver, sizeof(ver)), v);
	CHECK(py.runtime != 0 && py.runtime_size >= 256);
	CHECK(!py.by_section);
	CHECK(py.debug_offsets == debug_offsets);
	CHECK(!py.free_threaded);
	CHECK(cpython_unsupported(&py) == NULL);
}

static void test_pyenv_311(void)
{
	check_pyenv("3.11.7", 0x030b07f0, false);
}

static void test_pyenv_312(void)
{
	check_pyenv("3.12.1", 0x030c01f0, false);
}

static void test_pyenv_313(void)
{
	check_pyenv("3.13.0", 0x030d00f0, true);
}

/* 3.10 has _PyRuntime but no Py_Version: recognized, and refused by name. */
static void test_pyenv_310_refused(void)
{
	struct cpython_elf py;
	char path[4096], ver[32];
	const char *why;

	CHECK(probe(pyenv_lib("3.10.13", path, sizeof(path)), &py) == 0);
	CHECK_EQ_U64(py.version, 0);
	CHECK_STR(cpython_version_str(py.version, ver, sizeof(ver)), "3.10 or older");
	why = cpython_unsupported(&py);
	CHECK(why && strstr(why, "3.10"));
}

/* Debian's python3.X: the interpreter in the executable itself. */
static void test_debian_static(void)
{
	struct cpython_elf py;
	glob_t g;

	CHECK(glob("/usr/bin/python3.[0-9]*", 0, NULL, &g) == 0 && g.gl_pathc);
	if (!g.gl_pathc)
		return;
	CHECK(probe(g.gl_pathv[0], &py) == 0);
	CHECK((py.version >> 24) == 3 && ((py.version >> 16) & 0xff) >= 11);
	CHECK(py.runtime != 0);
	globfree(&g);
}

/* Not interpreters: libc, and an extension module, which only refers to _PyRuntime. */
static void test_not_python(void)
{
	struct cpython_elf py;
	char path[4096];
	glob_t g;

	CHECK(probe("/lib/x86_64-linux-gnu/libc.so.6", &py) == -ENOENT);
	pyenv_lib("3.12.1", path, sizeof(path));
	strcpy(strrchr(path, '/'), "/python3.12/lib-dynload/_json*.so");
	CHECK(glob(path, 0, NULL, &g) == 0 && g.gl_pathc == 1);
	if (g.gl_pathc == 1)
		CHECK(probe(g.gl_pathv[0], &py) == -ENOENT);
	globfree(&g);
	CHECK(probe("/etc/passwd", &py) == -ENOEXEC);
}

/*
 * A stripped interpreter keeps its .PyRuntime section: a shared object with only that
 * (3.14's _Py_DebugOffsets head: cookie, version, free_threaded), built with gcc.
 */
static void test_by_section(void)
{
	char dir[] = "/tmp/pa-test-cpython.XXXXXX", cmd[512], src[128], so[128], ver[32];
	struct cpython_elf py;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(src, sizeof(src), "%s/rt.c", dir);
	snprintf(so, sizeof(so), "%s/rt.so", dir);
	f = fopen(src, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs("__attribute__((section(\".PyRuntime\"), used)) static struct {\n"
	      "\tchar cookie[8]; unsigned long version, free_threaded, pad[8];\n"
	      "} rt = {{'x', 'd', 'e', 'b', 'u', 'g', 'p', 'y'}, 0x030e02f0, 1};\n",
	      f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cc -shared -fPIC -o %s %s", so, src);
	CHECK(system(cmd) == 0);
	CHECK(probe(so, &py) == 0);
	CHECK(py.by_section);
	CHECK(py.debug_offsets);
	CHECK(py.free_threaded);
	CHECK_EQ_U64(py.version, 0x030e02f0);
	CHECK_STR(cpython_version_str(py.version, ver, sizeof(ver)), "3.14.2");
	CHECK(cpython_unsupported(&py) && strstr(cpython_unsupported(&py), "free-threaded"));
	unlink(src);
	unlink(so);
	rmdir(dir);
}

static void test_version_str(void)
{
	char b[32];

	CHECK_STR(cpython_version_str(0x030e00c2, b, sizeof(b)), "3.14.0rc2");
	CHECK_STR(cpython_version_str(0x030f00a1, b, sizeof(b)), "3.15.0a1");
	CHECK_STR(cpython_version_str(0x030f02f0, b, sizeof(b)), "3.15.2");
}

static void test_newer_refused(void)
{
	struct cpython_elf py = {.version = 0x031000f0, .debug_offsets = true};

	CHECK(cpython_unsupported(&py) && strstr(cpython_unsupported(&py), "newer than 3.15"));
}

int main(void)
{
	RUN(test_pyenv_311);
	RUN(test_pyenv_312);
	RUN(test_pyenv_313);
	RUN(test_pyenv_310_refused);
	RUN(test_debian_static);
	RUN(test_not_python);
	RUN(test_by_section);
	RUN(test_version_str);
	RUN(test_newer_refused);
	return unit_done();
}
