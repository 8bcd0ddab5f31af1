// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"

/*
 * The program name and quiet flag are process-wide by nature (every message of the
 * process carries them); they are set once by main before anything else runs.
 */
static const char *progname = "perf-agent";
static bool quiet;

void pa_set_progname(const char *name)
{
	const char *slash = strrchr(name, '/');

	progname = slash ? slash + 1 : name;
}

const char *pa_progname(void)
{
	return progname;
}

void pa_set_quiet(bool q)
{
	quiet = q;
}

bool pa_quiet(void)
{
	return quiet;
}

static void vmsg(const char *level, const char *fmt, va_list ap)
{
	char buf[1024];
	int n;

	n = snprintf(buf, sizeof(buf), "%s: %s", progname, level);
	if (n < 0 || (size_t)n >= sizeof(buf))
		n = 0;
	vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	/* One write per line, so lines from several processes do not interleave. */
	n = strlen(buf);
	if (n && buf[n - 1] != '\n' && (size_t)n < sizeof(buf) - 1) {
		buf[n++] = '\n';
		buf[n] = '\0';
	}
	(void)!write(STDERR_FILENO, buf, n);
}

void pa_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("error: ", fmt, ap);
	va_end(ap);
}

void pa_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

void pa_info(const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

int pa_parse_u64(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno == ERANGE)
		return -ERANGE;
	if (end == s || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

int pa_parse_duration(const char *s, uint64_t *ns)
{
	static const struct {
		const char *suffix;
		uint64_t mult;
	} units[] = {
		{"ns", 1ULL},	      {"us", 1000ULL},	     {"ms", 1000000ULL},
		{"s", 1000000000ULL}, {"m", 60000000000ULL}, {"h", 3600000000000ULL},
		{"", 1000000000ULL},
	};
	double v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix))
			continue;
		if (v * units[i].mult > (double)UINT64_MAX / 2)
			return -ERANGE;
		*ns = (uint64_t)(v * units[i].mult + 0.5);
		return 0;
	}
	return -EINVAL;
}

uint64_t pa_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int pa_outfile_open(struct pa_outfile *of, const char *path)
{
	memset(of, 0, sizeof(*of));
	of->fd = -1;
	if (!strcmp(path, "-")) {
		of->fd = STDOUT_FILENO;
		return 0;
	}
	of->path = strdup(path);
	if (!of->path || asprintf(&of->tmp, "%s.tmp.XXXXXX", path) < 0) {
		of->tmp = NULL;
		pa_outfile_abort(of);
		return -ENOMEM;
	}
	of->fd = mkostemp(of->tmp, O_CLOEXEC);
	if (of->fd < 0) {
		int err = -errno;

		free(of->tmp);
		of->tmp = NULL;
		pa_outfile_abort(of);
		return err;
	}
	/* mkostemp creates it 0600, and so it stays, as perf leaves perf.data: a profile
	 * holds stacks, file names and command lines (docs/privileges.md). */
	return 0;
}

int pa_outfile_commit(struct pa_outfile *of, bool keep_old)
{
	int err = 0;

	if (!of->path) {
		of->fd = -1;
		return 0;
	}
	if (fsync(of->fd) && errno != EINVAL)
		err = -errno;
	if (close(of->fd) && !err)
		err = -errno;
	of->fd = -1;
	if (!err && keep_old) {
		char *old;

		if (asprintf(&old, "%s.old", of->path) < 0) {
			err = -ENOMEM;
		} else {
			if (rename(of->path, old) && errno != ENOENT)
				err = -errno;
			free(old);
		}
	}
	if (!err && rename(of->tmp, of->path))
		err = -errno;
	if (err)
		unlink(of->tmp);
	free(of->tmp);
	free(of->path);
	of->tmp = of->path = NULL;
	return err;
}

void pa_outfile_abort(struct pa_outfile *of)
{
	if (of->tmp) {
		if (of->fd >= 0)
			close(of->fd);
		unlink(of->tmp);
	}
	free(of->tmp);
	free(of->path);
	of->tmp = of->path = NULL;
	of->fd = -1;
}

int pa_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= n;
	}
	return 0;
}

ssize_t pa_read_full(int fd, void *buf, size_t len)
{
	char *p = buf;
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, p + got, len - got);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		got += n;
	}
	return got;
}

void pa_hex(char *out, const uint8_t *bytes, size_t len)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[bytes[i] >> 4];
		out[2 * i + 1] = digits[bytes[i] & 0xf];
	}
	out[2 * len] = '\0';
}

bool pa_find_libfile(const char *name, const char *env, char *buf, size_t len)
{
	const char *e = env ? getenv(env) : NULL;
	char self[PATH_MAX], *slash;
	ssize_t n;

	if (e && *e)
		return snprintf(buf, len, "%s", e) < (int)len && !access(buf, R_OK);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return false;
	self[n] = 0;
	slash = strrchr(self, '/');
	if (!slash)
		return false;
	*slash = 0;
	if (snprintf(buf, len, "%s/%s", self, name) < (int)len && !access(buf, R_OK))
		return true;
	return snprintf(buf, len, "%s/../lib/perf-agent/%s", self, name) < (int)len &&
	       !access(buf, R_OK);
}
