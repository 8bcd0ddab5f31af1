// SPDX-License-Identifier: Apache-2.0
/*
 * debuginfo + symtab: stripped binaries get their names back from MiniDebugInfo, from a
 * debug file under a .build-id tree and through .gnu_debuglink, and wrong candidates
 * (other build-id, bad CRC, corrupt xz) are refused without breaking the load.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "debug_fixture.h"
#include "debuginfo.h"
#include "symtab.h"
#include "unit.h"

static char fix[64];
static uint64_t hidden, outer;

static const char *name_at(const char *file, const char *debug, uint64_t addr)
{
	static char buf[128];
	struct symtab *st = symtab_load_elf_debug(file, debug);
	const struct sym *s;

	if (!st)
		return "(load failed)";
	s = symtab_lookup(st, addr);
	snprintf(buf, sizeof(buf), "%s", s ? s->name : "(none)");
	symtab_free(st);
	return buf;
}

static char *fpath(const char *rel)
{
	static char buf[4][PATH_MAX];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", fix, rel);
	return buf[i];
}

static void test_minidebuginfo(void)
{
	CHECK(hidden != 0);
	/* Stripped: the local function is gone. */
	CHECK_STR(name_at(fpath("stripped"), NULL, hidden), "(none)");
	/* .gnu_debugdata brings it back, and outer_fn (global, not exported) too. */
	CHECK_STR(name_at(fpath("mini/prog"), NULL, hidden), "hidden_worker");
	CHECK_STR(name_at(fpath("mini/prog"), NULL, outer), "outer_fn");
	/* A truncated xz payload is ignored: the file still loads. */
	CHECK_STR(name_at(fpath("mini/bad"), NULL, hidden), "(none)");
}

static void test_build_id_dir(void)
{
	struct dbg_opts o = {.debug_dirs = fpath("dbg"), .debuginfod_urls = ""};
	struct dbg_finder *f = dbg_new(&o);
	char *d, want[PATH_MAX], bid[64] = "";
	FILE *b = fopen(fpath("bid"), "r");

	CHECK(b && fscanf(b, "%63s", bid) == 1);
	if (b)
		fclose(b);
	snprintf(want, sizeof(want), "%s/dbg/.build-id/%.2s/%s.debug", fix, bid, bid + 2);
	d = dbg_find(f, fpath("stripped"), NULL, 0);
	CHECK_STR(d, want);
	CHECK_STR(name_at(fpath("stripped"), d, hidden), "hidden_worker");
	free(d);
	dbg_free(f);

	/* Right path, another program's debug file: refused by its build-id. */
	o.debug_dirs = fpath("wrong");
	f = dbg_new(&o);
	errno = 0;
	d = dbg_find(f, fpath("stripped"), NULL, 0);
	CHECK(!d && errno == ENOENT);
	free(d);
	/* Several roots: the first one that has it wins. */
	dbg_free(f);
	snprintf(want, sizeof(want), "%s/wrong:%s/dbg", fix, fix);
	o.debug_dirs = want;
	f = dbg_new(&o);
	d = dbg_find(f, fpath("stripped"), NULL, 0);
	CHECK(d && strstr(d, "/dbg/.build-id/"));
	free(d);
	dbg_free(f);
}

static void test_debuglink(void)
{
	struct dbg_opts o = {.debug_dirs = fpath("root"), .debuginfod_urls = ""};
	struct dbg_finder *f = dbg_new(&o);
	char name[256], *d;
	uint32_t crc = 0, fcrc = 1;

	CHECK(dbg_read_debuglink(fpath("link/prog"), name, sizeof(name), &crc) == 0);
	CHECK_STR(name, "prog.debug");
	CHECK(dbg_file_crc(fpath("link/.debug/prog.debug"), &fcrc) == 0);
	CHECK_EQ_U64(crc, fcrc);
	CHECK(dbg_read_debuglink(fpath("prog"), name, sizeof(name), &crc) == -ENOENT);

	d = dbg_find(f, fpath("link/prog"), NULL, 0);
	CHECK_STR(d, fpath("link/.debug/prog.debug"));
	CHECK_STR(name_at(fpath("link/prog"), d, hidden), "hidden_worker");
	free(d);
	d = dbg_find(f, fpath("same/prog"), NULL, 0);
	CHECK_STR(d, fpath("same/prog.debug"));
	free(d);
	/* /usr/lib/debug/<dir of the file>/name, with the root moved to the fixture. */
	d = dbg_find(f, fpath("under/prog"), NULL, 0);
	CHECK(d && strstr(d, "/root/") && strstr(d, "/under/prog.debug"));
	free(d);
	/* The debug file changed after linking: its CRC no longer matches. */
	errno = 0;
	d = dbg_find(f, fpath("crc/prog"), NULL, 0);
	CHECK(!d && errno == ENOENT);
	free(d);
	dbg_free(f);
}

static void test_offline_never_asks(void)
{
	struct dbg_opts o = {.debug_dirs = fpath("none"), .debuginfod_urls = ""};
	struct dbg_finder *f = dbg_new(&o);
	uint8_t bid[20] = {1, 2, 3};

	/* No URLs: nothing to find, and no library loaded to find it. */
	CHECK(!dbg_find(f, NULL, bid, sizeof(bid)));
	CHECK(!dbg_find_executable(f, bid, sizeof(bid)));
	dbg_free(f);
}

int main(void)
{
	if (fixture_build(fix, sizeof(fix))) {
		printf("not ok 1 - fixture build failed (see %s/mk.log)\n1..1\n", fix);
		return 1;
	}
	hidden = fixture_sym(fix, "hidden_worker");
	outer = fixture_sym(fix, "outer_fn");
	RUN(test_minidebuginfo);
	RUN(test_build_id_dir);
	RUN(test_debuglink);
	RUN(test_offline_never_asks);
	if (!unit_failed)
		fixture_remove(fix);
	return unit_done();
}
