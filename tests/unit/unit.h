/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A minimal unit-test harness printing TAP, so tests/run-all counts unit tests and bats
 * suites alike.  Usage:
 *
 *	static void test_roundtrip(void) { CHECK(x == 1); CHECK_EQ_U64(a, b); }
 *	int main(void) { RUN(test_roundtrip); return unit_done(); }
 *
 * SKIP("libc6-dbg not installed") ends the current test as skipped (TAP "# SKIP"), for
 * what is genuinely optional: a test needing something scripts/install-deps installs
 * fails instead (CHECK) when it is missing.  A test that failed before it skips stays
 * failed.
 */
#ifndef PA_UNIT_H
#define PA_UNIT_H

#include <stdio.h>
#include <stdint.h>
#include <string.h>

static int unit_n, unit_failed, unit_cur_failed, unit_cur_skipped;
static char unit_cur_skip[256];

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("#   %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);        \
			unit_cur_failed = 1;                                                       \
		}                                                                                  \
	} while (0)

#define CHECK_EQ_U64(a, b)                                                                         \
	do {                                                                                       \
		uint64_t _a = (a), _b = (b);                                                       \
		if (_a != _b) {                                                                    \
			printf("#   %s:%d: %s == %s failed: %llu != %llu\n", __FILE__, __LINE__,   \
			       #a, #b, (unsigned long long)_a, (unsigned long long)_b);            \
			unit_cur_failed = 1;                                                       \
		}                                                                                  \
	} while (0)

#define CHECK_STR(a, b)                                                                            \
	do {                                                                                       \
		const char *_a = (a), *_b = (b);                                                   \
		if (!_a || !_b || strcmp(_a, _b)) {                                                \
			printf("#   %s:%d: %s == %s failed: \"%s\" != \"%s\"\n", __FILE__,         \
			       __LINE__, #a, #b, _a ? _a : "(null)", _b ? _b : "(null)");          \
			unit_cur_failed = 1;                                                       \
		}                                                                                  \
	} while (0)

/* SKIP(fmt, ...): printf-style reason (cut if long); returns from the test function. */
#define SKIP(...)                                                                                  \
	do {                                                                                       \
		if (snprintf(unit_cur_skip, sizeof(unit_cur_skip), __VA_ARGS__) < 0)               \
			strcpy(unit_cur_skip, "(bad reason format)");                              \
		unit_cur_skipped = 1;                                                              \
		return;                                                                            \
	} while (0)

#define RUN(fn)                                                                                    \
	do {                                                                                       \
		unit_cur_failed = 0;                                                               \
		unit_cur_skipped = 0;                                                              \
		fn();                                                                              \
		unit_n++;                                                                          \
		if (unit_cur_failed)                                                               \
			unit_failed++;                                                             \
		if (!unit_cur_failed && unit_cur_skipped)                                          \
			printf("ok %d - %s # SKIP %s\n", unit_n, #fn, unit_cur_skip);              \
		else                                                                               \
			printf("%s %d - %s\n", unit_cur_failed ? "not ok" : "ok", unit_n, #fn);    \
		fflush(stdout);                                                                    \
	} while (0)

static inline int unit_done(void)
{
	printf("1..%d\n", unit_n);
	return unit_failed ? 1 : 0;
}

#endif /* PA_UNIT_H */
