// SPDX-License-Identifier: Apache-2.0
/* bidcache: perf's ~/.debug layout, link-or-copy, build-id check, idempotence. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/bidcache.h"
#include "symbolize/buildid.h"
#include "unit.h"
#include "base/util.h"

static char tmpdir[] = "/tmp/test_bidcache.XXXXXX";

static void test_add_layout(void)
{
	char dir[256], hex[2 * BID_MAX + 1], link[1024], target[1024], elf[2048], want[1024];
	uint8_t bid[BID_MAX];
	struct stat a, b;
	const char *self = "/proc/self/exe";
	char exe[256];
	ssize_t n;
	int len;

	n = readlink(self, exe, sizeof(exe) - 1);
	CHECK(n > 0);
	if (n <= 0)
		return;
	exe[n] = '\0';
	len = bid_read_path(exe, bid);
	CHECK(len > 0);
	if (len <= 0)
		return;
	pa_hex(hex, bid, len);
	snprintf(dir, sizeof(dir), "%s/debug", tmpdir);
	CHECK(!mkdir(dir, 0755));
	CHECK_EQ_U64(bidc_add(dir, bid, len, exe, exe), 1);
	snprintf(link, sizeof(link), "%s/.build-id/%.2s/%s", dir, hex, hex + 2);
	n = readlink(link, target, sizeof(target) - 1);
	CHECK(n > 0);
	target[n > 0 ? n : 0] = '\0';
	snprintf(want, sizeof(want), "../..%s/%s", exe, hex);
	CHECK_STR(target, want);
	snprintf(elf, sizeof(elf), "%s%s/%s/elf", dir, exe, hex);
	CHECK(!stat(elf, &a) && !stat(exe, &b));
	CHECK_EQ_U64(a.st_size, b.st_size);
	/* the reader's path: .build-id/xx/rest/elf through the link */
	snprintf(elf, sizeof(elf), "%s/elf", link);
	CHECK(!access(elf, R_OK));
	/* cached already: nothing done */
	CHECK_EQ_U64(bidc_add(dir, bid, len, exe, exe), 0);
	/* a file is never cached under a build-id it does not carry */
	bid[0] ^= 0xff;
	CHECK(bidc_add(dir, bid, len, exe, exe) == -ESTALE);
	/* relative names are refused */
	CHECK(bidc_add(dir, bid, len, "rel/x", exe) == -EINVAL);
	/* deleted files keep their name without perf's " (deleted)" suffix */
	bid[0] ^= 0xff;
	snprintf(dir, sizeof(dir), "%s/debug2", tmpdir);
	CHECK(!mkdir(dir, 0755));
	snprintf(want, sizeof(want), "%s (deleted)", exe);
	CHECK_EQ_U64(bidc_add(dir, bid, len, want, exe), 1);
	snprintf(elf, sizeof(elf), "%s%s/%s/elf", dir, exe, hex);
	CHECK(!access(elf, R_OK));
}

static void test_jit_map_path(void)
{
	char buf[128];

	CHECK_STR(bidc_jit_map_path("/h/.debug", 42, buf, sizeof(buf)),
		  "/h/.debug/jit/perf-42.map");
}

static void test_save_bad_input(void)
{
	struct bidc_stats st;
	char path[256], dir[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/not.data", tmpdir);
	snprintf(dir, sizeof(dir), "%s/debug3", tmpdir);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs("not a perf.data file at all, just text that is long enough", f);
	fclose(f);
	CHECK(bidc_save(path, dir, &st) < 0);
	CHECK_EQ_U64(st.added, 0);
}

int main(void)
{
	char cmd[300];

	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_add_layout);
	RUN(test_jit_map_path);
	RUN(test_save_bad_input);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd))
		fprintf(stderr, "# could not remove %s\n", tmpdir);
	return unit_done();
}
