// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"
#include "base/util.h"

static void test_duration(void)
{
	uint64_t ns = 0;

	CHECK(pa_parse_duration("30s", &ns) == 0);
	CHECK_EQ_U64(ns, 30000000000ULL);
	CHECK(pa_parse_duration("500ms", &ns) == 0);
	CHECK_EQ_U64(ns, 500000000ULL);
	CHECK(pa_parse_duration("2m", &ns) == 0);
	CHECK_EQ_U64(ns, 120000000000ULL);
	CHECK(pa_parse_duration("1.5", &ns) == 0);
	CHECK_EQ_U64(ns, 1500000000ULL);
	CHECK(pa_parse_duration("250us", &ns) == 0);
	CHECK_EQ_U64(ns, 250000ULL);
	CHECK(pa_parse_duration("", &ns) == -EINVAL);
	CHECK(pa_parse_duration("10x", &ns) == -EINVAL);
	CHECK(pa_parse_duration("-1s", &ns) == -EINVAL);
	CHECK(pa_parse_duration("s", &ns) == -EINVAL);
}

static void test_u64(void)
{
	uint64_t v = 0;

	CHECK(pa_parse_u64("4999", &v) == 0);
	CHECK_EQ_U64(v, 4999);
	CHECK(pa_parse_u64("0x10", &v) == 0);
	CHECK_EQ_U64(v, 16);
	CHECK(pa_parse_u64("12a", &v) == -EINVAL);
	CHECK(pa_parse_u64("-3", &v) == -EINVAL);
	CHECK(pa_parse_u64("99999999999999999999999", &v) == -ERANGE);
}

static void test_outfile_commit_keeps_old(void)
{
	char dir[] = "/tmp/pa-unit-XXXXXX", path[256], old[300];
	struct pa_outfile of;
	struct stat st;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/perf.data", dir);
	snprintf(old, sizeof(old), "%s.old", path);

	CHECK(pa_outfile_open(&of, path) == 0);
	CHECK(pa_write_all(of.fd, "one", 3) == 0);
	/* Not visible under its final name until committed. */
	CHECK(stat(path, &st) != 0);
	CHECK(pa_outfile_commit(&of, true) == 0);
	CHECK(stat(path, &st) == 0 && st.st_size == 3);

	CHECK(pa_outfile_open(&of, path) == 0);
	CHECK(pa_write_all(of.fd, "second", 6) == 0);
	CHECK(pa_outfile_commit(&of, true) == 0);
	CHECK(stat(path, &st) == 0 && st.st_size == 6);
	CHECK(stat(old, &st) == 0 && st.st_size == 3);

	/* Abort leaves the committed file alone and no temp file behind. */
	CHECK(pa_outfile_open(&of, path) == 0);
	CHECK(pa_write_all(of.fd, "x", 1) == 0);
	pa_outfile_abort(&of);
	CHECK(stat(path, &st) == 0 && st.st_size == 6);

	unlink(path);
	unlink(old);
	CHECK(rmdir(dir) == 0); /* fails if a temp file was left */
}

static void test_outfile_unwritable_dir(void)
{
	struct pa_outfile of;

	CHECK(pa_outfile_open(&of, "/nonexistent-dir/perf.data") == -ENOENT);
}

static void test_hex(void)
{
	const uint8_t b[] = {0x00, 0xab, 0x7f};
	char out[7];

	pa_hex(out, b, sizeof(b));
	CHECK_STR(out, "00ab7f");
}

int main(void)
{
	RUN(test_duration);
	RUN(test_u64);
	RUN(test_outfile_commit_keeps_old);
	RUN(test_outfile_unwritable_dir);
	RUN(test_hex);
	return unit_done();
}
