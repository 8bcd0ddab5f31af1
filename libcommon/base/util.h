/* SPDX-License-Identifier: Apache-2.0 */
/* Small helpers every command uses: messages, number/duration parsing, safe output files. */
#ifndef PA_UTIL_H
#define PA_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Set once by main(); prefixes every message ("pa-record: error: ..."). */
void pa_set_progname(const char *name);
const char *pa_progname(void);

/* One line on stderr.  pa_info is silenced by pa_set_quiet(true). */
void pa_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pa_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pa_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pa_set_quiet(bool quiet);
bool pa_quiet(void);

/*
 * "30s", "500ms", "2m", "1h", "250us", "100ns"; a bare number is seconds.
 * Returns 0 and stores nanoseconds, or -EINVAL.
 */
int pa_parse_duration(const char *s, uint64_t *ns);

/* Decimal (or 0x hex) unsigned; whole string must parse.  0 or -EINVAL/-ERANGE. */
int pa_parse_u64(const char *s, uint64_t *out);

/* Monotonic clock in ns (CLOCK_MONOTONIC, the clock bpf_ktime_get_ns() uses). */
uint64_t pa_now_ns(void);

/*
 * An output file written under a temporary name in the same directory and renamed
 * into place by pa_outfile_commit(), so readers never see a half-written file.  It is
 * created 0600 whatever the umask, as perf creates perf.data.
 * path "-" means stdout (no temp file, commit only flushes).
 */
struct pa_outfile {
	int fd;
	char *path; /* final name, NULL for stdout */
	char *tmp;  /* temporary name, NULL for stdout */
};
int pa_outfile_open(struct pa_outfile *of, const char *path);
/* If keep_old, an existing PATH is first renamed PATH.old (perf's habit). */
int pa_outfile_commit(struct pa_outfile *of, bool keep_old);
void pa_outfile_abort(struct pa_outfile *of);

/* write(2) all of buf, retrying on EINTR/short writes.  0 or -errno. */
int pa_write_all(int fd, const void *buf, size_t len);
/* read(2) exactly len bytes.  len on success, short count at EOF, -errno on error. */
ssize_t pa_read_full(int fd, void *buf, size_t len);

/* Lowercase hex of bytes into out (2*len+1). */
void pa_hex(char *out, const uint8_t *bytes, size_t len);

/*
 * A file the suite installs beside its programs, into buf: the path in environment
 * variable env if set, else name beside this program (a build tree), else in
 * ../lib/perf-agent/ from it (an install).  false when none is readable.
 */
bool pa_find_libfile(const char *name, const char *env, char *buf, size_t len);

#endif /* PA_UTIL_H */
