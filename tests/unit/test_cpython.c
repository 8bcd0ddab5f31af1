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
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
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

/* pyenv's libpython of version v ("3.12.1"): under $PYENV_ROOT, ~/.pyenv, or root's. */
static const char *pyenv_lib(const char *v, char *buf, size_t len)
{
	const char *root = getenv("PYENV_ROOT"), *home = getenv("HOME");
	char minor[16];

	snprintf(minor, sizeof(minor), "%.*s", (int)(strrchr(v, '.') - v), v);
	if (root && *root)
		snprintf(buf, len, "%s/versions/%s/lib/libpython%s.so.1.0", root, v, minor);
	else
		snprintf(buf, len, "%s/.pyenv/versions/%s/lib/libpython%s.so.1.0",
			 home && *home ? home : "/root", v, minor);
	if (access(buf, R_OK) && (!root || !*root))
		snprintf(buf, len, "/root/.pyenv/versions/%s/lib/libpython%s.so.1.0", v, minor);
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

/* What cpython_stacks saw of the thread that ran leaf(). */
struct seen {
	int threads;
	char chain[512]; /* "leaf:4;middle:6;outer:8;<module>:10" */
	char file[256];
};

static void on_thread(void *ctx, uint64_t tid, const struct cpython_frame *f, size_t n, bool cut)
{
	struct seen *s = ctx;
	size_t i, len = 0;

	(void)tid;
	s->threads++;
	if (!n || strcmp(f[0].name, "leaf") || cut)
		return;
	for (i = 0; i < n && len < sizeof(s->chain); i++)
		len += snprintf(s->chain + len, sizeof(s->chain) - len, "%s%s:%d", i ? ";" : "",
				f[i].name, f[i].line);
	snprintf(s->file, sizeof(s->file), "%s", f[0].file);
}

/*
 * A live interpreter read from outside: a script whose main thread sleeps in leaf()
 * under middle() and outer(), and a second thread; its stack, names, file and lines.
 */
static void check_live(const char *python)
{
	static const char script[] =
		"import threading, time\n"   /* 1 */
		"def leaf():\n"		     /* 2 */
		"    while True:\n"	     /* 3 */
		"        time.sleep(0.01)\n" /* 4 */
		"def middle():\n"	     /* 5 */
		"    leaf()\n"		     /* 6 */
		"def outer():\n"	     /* 7 */
		"    middle()\n"	     /* 8 */
		"threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
		"outer()\n"; /* 10 */
	static const char want[] = "leaf:4;middle:6;outer:8;<module>:10";
	char path[] = "/tmp/pa-test-cpython-XXXXXX.py";
	struct cpython_elf py;
	struct cpython_layout l;
	struct seen seen = {0};
	uint64_t runtime = 0;
	int fd = mkstemps(path, 3), err = -1, tries;
	pid_t pid;

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK(write(fd, script, sizeof(script) - 1) == (ssize_t)sizeof(script) - 1);
	close(fd);
	pid = fork();
	if (!pid) {
		execl(python, python, path, (char *)NULL);
		_exit(127);
	}
	/* Until the interpreter runs leaf() (its start-up takes tens of ms) and is seen
	 * in time.sleep, not between two calls (line 3). */
	for (tries = 0; tries < 250 && strcmp(seen.chain, want); tries++) {
		struct timespec ts = {0, 20000000};

		nanosleep(&ts, NULL);
		err = cpython_attach(pid, &py, &l, &runtime);
		if (!err) {
			memset(&seen, 0, sizeof(seen));
			cpython_stacks(pid, &l, runtime, 64, on_thread, &seen);
		}
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	unlink(path);
	printf("#   %s: attach %d, %d threads, %s in %s\n", python, err, seen.threads, seen.chain,
	       seen.file);
	CHECK(err == 0);
	CHECK_STR(seen.chain, want);
	CHECK_STR(seen.file, path);
	CHECK(seen.threads == 2);
}

/* pyenv's python of version v ("3.12.1"), walked live. */
static void check_live_pyenv(const char *v)
{
	char path[4096];
	char *lib;

	pyenv_lib(v, path, sizeof(path));
	lib = strrchr(path, '/') - 3; /* ".../lib/libpythonX.Y.so.1.0" -> ".../bin/pythonX.Y" */
	snprintf(lib, sizeof(path) - (size_t)(lib - path), "bin/python%.*s",
		 (int)(strrchr(v, '.') - v), v);
	check_live(path);
}

static void test_live_311(void)
{
	check_live_pyenv("3.11.7");
}

static void test_live_312(void)
{
	check_live_pyenv("3.12.1");
}

static void test_live_313(void)
{
	check_live_pyenv("3.13.0");
}

/* Debian's: the interpreter in the executable (3.11 on Debian 12). */
static void test_live_debian(void)
{
	glob_t g;

	CHECK(glob("/usr/bin/python3.[0-9]*", 0, NULL, &g) == 0 && g.gl_pathc);
	if (g.gl_pathc)
		check_live(g.gl_pathv[0]);
	globfree(&g);
}

/* co_linetable by hand: a short form (no line change), a one-line form (+2), a
 * no-column form (-1), a long form (+5), then no location. */
static void test_linetable(void)
{
	static const uint8_t tab[] = {
		0x80 | (0 << 3) | 1,  0x05,		/* units 0-1: short form, line 10 */
		0x80 | (12 << 3) | 0, 0x01, 0x02,	/* unit 2: one-line +2: 12 */
		0x80 | (13 << 3) | 2, 0x03,		/* units 3-5: no column, -1: 11 */
		0x80 | (14 << 3) | 0, 0x0a, 0,	  0, 0, /* unit 6: long form, +5: 16 */
		0x80 | (15 << 3) | 1,			/* units 7-8: no location */
	};

	CHECK(cpython_line(tab, sizeof(tab), 10, 0) == 10);
	CHECK(cpython_line(tab, sizeof(tab), 10, 1) == 10);
	CHECK(cpython_line(tab, sizeof(tab), 10, 2) == 12);
	CHECK(cpython_line(tab, sizeof(tab), 10, 5) == 11);
	CHECK(cpython_line(tab, sizeof(tab), 10, 6) == 16);
	CHECK(cpython_line(tab, sizeof(tab), 10, 8) == 0);
	CHECK(cpython_line(tab, sizeof(tab), 10, 9) == 0);
	CHECK(cpython_line(tab, sizeof(tab), 10, -1) == 10);
	CHECK(cpython_line(tab, 3, 10, 2) == 0); /* cut inside an entry */
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
	RUN(test_linetable);
	RUN(test_live_311);
	RUN(test_live_312);
	RUN(test_live_313);
	RUN(test_live_debian);
	return unit_done();
}
