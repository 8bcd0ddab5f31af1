/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Test ELF files for the symbolizer, built at run time with gcc, objcopy, strip and xz
 * the way distributions build them: a -O2 -g program with a static (local) function and
 * an always_inline one, then stripped copies with MiniDebugInfo (Fedora's find-debuginfo
 * recipe), with a debug file under a .build-id tree, with a .gnu_debuglink, and broken
 * variants of each.  Shared by the unit tests that need real debug files.
 */
#ifndef PA_DEBUG_FIXTURE_H
#define PA_DEBUG_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/buildid.h"

static const char fixture_src[] =
	"static int __attribute__((noinline)) hidden_worker(int x)\n"
	"{\n"
	"	volatile int a = 0;\n"
	"	for (int i = 0; i < x; i++)\n"
	"		a += i;\n"
	"	return a;\n"
	"}\n"
	"static inline __attribute__((always_inline)) int inl_leaf(int x)\n"
	"{\n"
	"	int r = x * 3;\n"
	"	r ^= r >> 2;\n"
	"	return r + hidden_worker(x);\n"
	"}\n"
	"int __attribute__((noinline)) outer_fn(int x)\n"
	"{\n"
	"	return inl_leaf(x) + 1;\n"
	"}\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	(void)argv;\n"
	"	return outer_fn(argc) & 1;\n"
	"}\n";

static const char fixture_sh[] =
	"set -e; cd \"$1\"\n"
	"gcc -O2 -g -Wl,--build-id -o prog p.c\n"
	"printf 'int other(int x){return x*5;}\\nint main(void){return other(2);}\\n' > q.c\n"
	"gcc -O2 -g -Wl,--build-id -o prog2 q.c\n"
	"bid=$(readelf -n prog | sed -n 's/.*Build ID: //p')\n"
	"d1=$(echo $bid | cut -c1-2); d2=$(echo $bid | cut -c3-)\n"
	"strip --strip-all -o stripped prog\n"
	/* MiniDebugInfo: function symbols not in .dynsym, xz'ed into .gnu_debugdata. */
	"mkdir -p mini\n"
	"objcopy --only-keep-debug prog mini/full.debug\n"
	"nm -D prog --format=posix --defined-only | awk '{print $1}' | sort > mini/dynsyms\n"
	"nm mini/full.debug --format=posix --defined-only | awk '$2 ~ /^[Tt]$/ {print $1}' "
	"| sort > mini/funcsyms\n"
	"comm -13 mini/dynsyms mini/funcsyms > mini/keep\n"
	"objcopy -S --remove-section .gdb_index --remove-section .comment "
	"--keep-symbols=mini/keep mini/full.debug mini/mini.debug\n"
	"xz -f mini/mini.debug\n"
	"cp stripped mini/prog\n"
	"objcopy --add-section .gnu_debugdata=mini/mini.debug.xz mini/prog\n"
	"head -c 200 mini/mini.debug.xz > mini/bad.xz\n"
	"cp stripped mini/bad\n"
	"objcopy --add-section .gnu_debugdata=mini/bad.xz mini/bad\n"
	/* A debug root with a .build-id tree, and one holding another program's debug file. */
	"mkdir -p dbg/.build-id/$d1 wrong/.build-id/$d1\n"
	"objcopy --only-keep-debug prog dbg/.build-id/$d1/$d2.debug\n"
	"objcopy --only-keep-debug prog2 wrong/.build-id/$d1/$d2.debug\n"
	/* .gnu_debuglink: in .debug/, in the file's dir, under a root, and with a bad CRC. */
	"mkdir -p link/.debug same crc/.debug\n"
	"objcopy --only-keep-debug prog prog.debug\n"
	"objcopy --add-gnu-debuglink=prog.debug stripped linked\n"
	"cp linked link/prog; cp prog.debug link/.debug/prog.debug\n"
	"cp linked same/prog; cp prog.debug same/prog.debug\n"
	"mkdir -p under root/$PWD/under; cp linked under/prog; cp prog.debug root/$PWD/under/\n"
	"cp linked crc/prog; cp prog.debug crc/.debug/prog.debug; printf x >> "
	"crc/.debug/prog.debug\n"
	"echo $bid > bid\n";

/* Build the fixtures into a fresh temporary directory (dir gets its path): 0 or -1. */
static int fixture_build(char *dir, size_t len)
{
	char cmd[512];
	FILE *f;

	snprintf(dir, len, "/tmp/pa-dbgfix.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(cmd, sizeof(cmd), "%s/p.c", dir);
	f = fopen(cmd, "w");
	if (!f)
		return -1;
	fputs(fixture_src, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s/mk.sh", dir);
	f = fopen(cmd, "w");
	if (!f)
		return -1;
	fputs(fixture_sh, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "sh %s/mk.sh %s >%s/mk.log 2>&1", dir, dir, dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void fixture_remove(const char *dir)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

/* Link-time address of a symbol of the unstripped fixture (nm), 0 if absent. */
static uint64_t fixture_sym(const char *dir, const char *name)
{
	char cmd[512], line[256];
	unsigned long long addr = 0, a;
	char type, n[200];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm %s/prog", dir);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, "%llx %c %199s", &a, &type, n) == 3 && !strcmp(n, name))
			addr = a;
	pclose(p);
	return addr;
}

#endif /* PA_DEBUG_FIXTURE_H */
