// SPDX-License-Identifier: Apache-2.0
/*
 * Event specs (perfdata/evspec.h).  The names and aliases are perf 6.1's
 * (tools/perf/util/parse-events.c and evsel.c); PMUs and tracepoints are looked up in
 * sysfs and tracefs, every file read whole under a size cap.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/util.h"
#include "perfdata/evspec.h"

#define EVSPEC_SYSFS	"/sys/bus/event_source/devices"
#define EVSPEC_FILE_MAX 4096 /* the longest sysfs or tracefs file read */
#define EVSPEC_DIR_MAX	4096 /* entries of one directory looked at */
#define EVSPEC_ALIASES	6
#define EVSPEC_NO_PMU                                                                              \
	"this machine has no hardware PMU (a VM without PMU passthrough?): sample a software "     \
	"event such as cpu-clock"

static const char *const evspec_tracefs_dirs[] = {"/sys/kernel/tracing",
						  "/sys/kernel/debug/tracing"};

struct evspec_sym {
	const char *name;
	uint32_t type;
	uint64_t config;
	bool alias; /* another name of the entry before: not listed as available */
};

static const struct evspec_sym evspec_syms[] = {
	{"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, false},
	{"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, false},
	{"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, false},
	{"faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, true},
	{"minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, false},
	{"major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, false},
	{"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, false},
	{"cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, true},
	{"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, false},
	{"migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, true},
	{"alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS, false},
	{"emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS, false},
	{"dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, false},
	{"bpf-output", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT, false},
	{"cgroup-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CGROUP_SWITCHES, false},
	{"cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false},
	{"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, true},
	{"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, false},
	{"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, false},
	{"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, false},
	{"branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, false},
	{"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, true},
	{"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, false},
	{"bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, false},
	{"stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND,
	 false},
	{"idle-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, true},
	{"stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND, false},
	{"idle-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND, true},
	{"ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, false},
};

/* perf's evsel__hw_cache*: the first name of a row is the one perf list shows. */
static const char *const evspec_cache_type[PERF_COUNT_HW_CACHE_MAX][EVSPEC_ALIASES] = {
	{"L1-dcache", "l1-d", "l1d", "L1-data"},
	{"L1-icache", "l1-i", "l1i", "L1-instruction"},
	{"LLC", "L2"},
	{"dTLB", "d-tlb", "Data-TLB"},
	{"iTLB", "i-tlb", "Instruction-TLB"},
	{"branch", "branches", "bpu", "btb", "bpc"},
	{"node"},
};

static const char *const evspec_cache_op[PERF_COUNT_HW_CACHE_OP_MAX][EVSPEC_ALIASES] = {
	{"load", "loads", "read"},
	{"store", "stores", "write"},
	{"prefetch", "prefetches", "speculative-read", "speculative-load"},
};

static const char *const evspec_cache_result[PERF_COUNT_HW_CACHE_RESULT_MAX][EVSPEC_ALIASES] = {
	{"refs", "Reference", "ops", "access"},
	{"misses", "miss"},
};

#define EVSPEC_R  (1 << PERF_COUNT_HW_CACHE_OP_READ)
#define EVSPEC_W  (1 << PERF_COUNT_HW_CACHE_OP_WRITE)
#define EVSPEC_PF (1 << PERF_COUNT_HW_CACHE_OP_PREFETCH)

/* The operations perf allows on each cache (evsel__hw_cache_stat). */
static const uint8_t evspec_cache_ops_of[PERF_COUNT_HW_CACHE_MAX] = {
	EVSPEC_R | EVSPEC_W | EVSPEC_PF,
	EVSPEC_R | EVSPEC_PF,
	EVSPEC_R | EVSPEC_W | EVSPEC_PF,
	EVSPEC_R | EVSPEC_W | EVSPEC_PF,
	EVSPEC_R,
	EVSPEC_R,
	EVSPEC_R | EVSPEC_W | EVSPEC_PF,
};

/* What one parse needs to name a failure. */
struct evspec_ctx {
	const char *sysfs;
	const char *tracefs; /* NULL: the defaults */
	char *err;
	size_t errlen;
	const char *tok; /* the event being parsed */
};

static int __attribute__((format(printf, 2, 3)))
evspec_fail(struct evspec_ctx *c, const char *fmt, ...)
{
	va_list ap;
	size_t i;

	if (c->err && c->errlen) {
		va_start(ap, fmt);
		vsnprintf(c->err, c->errlen, fmt, ap);
		va_end(ap);
		/* One line, whatever a sysfs file quoted in it holds. */
		for (i = 0; c->err[i]; i++)
			if ((unsigned char)c->err[i] < ' ' || c->err[i] == 0x7f)
				c->err[i] = ' ';
	}
	return -EINVAL;
}

/* A name that is safe as one path component: [A-Za-z0-9_.-], not led by '.'. */
static bool evspec_ident(const char *s)
{
	size_t i;

	if (!*s || *s == '.')
		return false;
	for (i = 0; s[i]; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '.' || s[i] == '-'))
			return false;
	return true;
}

static int evspec_hex(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* Decimal or 0x hex, the whole string, 64 bits at most (perf's term values). */
static bool evspec_num(const char *s, uint64_t *out)
{
	unsigned base = 10;
	uint64_t v = 0;
	int d;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s)
		return false;
	for (; *s; s++) {
		d = evspec_hex(*s);
		if (d < 0 || (unsigned)d >= base || v > (UINT64_MAX - (unsigned)d) / base)
			return false;
		v = v * base + (unsigned)d;
	}
	*out = v;
	return true;
}

/* The file at the formatted path into buf, trailing whitespace cut: length or -errno. */
static int __attribute__((format(printf, 3, 4)))
evspec_readf(char *buf, size_t len, const char *fmt, ...)
{
	char path[PATH_MAX], extra;
	va_list ap;
	ssize_t n;
	int fd, w;

	va_start(ap, fmt);
	w = vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	if (w < 0 || (size_t)w >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = pa_read_full(fd, buf, len - 1);
	if (n == (ssize_t)len - 1 && pa_read_full(fd, &extra, 1) != 0)
		n = -EFBIG;
	close(fd);
	if (n < 0)
		return (int)n;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' ' || buf[n - 1] == '\t'))
		n--;
	buf[n] = '\0';
	return (int)n;
}

static int evspec_dot_filter(const struct dirent *de)
{
	return de->d_name[0] != '.';
}

/* The entries of a directory, sorted, joined by ", " into out (cut with "..."). */
static void evspec_dir_names(const char *dir, char *out, size_t len)
{
	struct dirent **ents = NULL;
	size_t pos = 0;
	int n, i;

	out[0] = '\0';
	n = scandir(dir, &ents, evspec_dot_filter, alphasort);
	for (i = 0; i < n; i++) {
		size_t need = strlen(ents[i]->d_name) + (pos ? 2 : 0);

		if (i < EVSPEC_DIR_MAX && pos + need + 4 < len)
			pos += snprintf(out + pos, len - pos, "%s%s", pos ? ", " : "",
					ents[i]->d_name);
		else if (pos + 4 < len && !strstr(out, "..."))
			pos += snprintf(out + pos, len - pos, "...");
		free(ents[i]);
	}
	free(ents);
	if (!out[0])
		snprintf(out, len, "none");
}

static const struct evspec_sym *evspec_sym(const char *s)
{
	size_t i;

	for (i = 0; i < sizeof(evspec_syms) / sizeof(evspec_syms[0]); i++)
		if (!strcmp(s, evspec_syms[i].name))
			return &evspec_syms[i];
	return NULL;
}

/* The row whose longest name s starts with, followed by '-' or the end, *len its length. */
static int evspec_alias(const char *s, const char *const names[][EVSPEC_ALIASES], int rows,
			size_t *len)
{
	int r, j, row = -1;
	size_t best = 0;

	for (r = 0; r < rows; r++)
		for (j = 0; j < EVSPEC_ALIASES && names[r][j]; j++) {
			size_t n = strlen(names[r][j]);

			if (n > best && !strncmp(s, names[r][j], n) && (!s[n] || s[n] == '-')) {
				best = n;
				row = r;
			}
		}
	*len = best;
	return row;
}

/* TYPE[-OP][-RESULT], OP and RESULT in either order: 0, 1 when s is no cache name, -EINVAL. */
static int evspec_cache(struct evspec_ctx *c, const char *s, __u64 *config)
{
	int type, op = -1, res = -1, k, i;
	char ops[64] = "";
	size_t n;

	type = evspec_alias(s, evspec_cache_type, PERF_COUNT_HW_CACHE_MAX, &n);
	if (type < 0)
		return 1;
	for (s += n, i = 0; *s && i < 2; s += n, i++) {
		s++; /* the '-' */
		k = evspec_alias(s, evspec_cache_op, PERF_COUNT_HW_CACHE_OP_MAX, &n);
		if (k >= 0 && op < 0) {
			op = k;
			continue;
		}
		if (k >= 0)
			return evspec_fail(
				c, "'%s' names two cache operations: write one, as in %s-%s",
				c->tok, evspec_cache_type[type][0], evspec_cache_op[op][1]);
		k = evspec_alias(s, evspec_cache_result, PERF_COUNT_HW_CACHE_RESULT_MAX, &n);
		if (k < 0 || res >= 0)
			return 1;
		res = k;
	}
	if (*s)
		return 1;
	if (op < 0)
		op = PERF_COUNT_HW_CACHE_OP_READ;
	if (res < 0)
		res = PERF_COUNT_HW_CACHE_RESULT_ACCESS;
	if (!(evspec_cache_ops_of[type] & (1 << op))) {
		for (k = 0; k < PERF_COUNT_HW_CACHE_OP_MAX; k++)
			if (evspec_cache_ops_of[type] & (1 << k))
				snprintf(ops + strlen(ops), sizeof(ops) - strlen(ops), "%s%s",
					 ops[0] ? ", " : "", evspec_cache_op[k][1]);
		return evspec_fail(c, "'%s': perf counts no %s of %s, only %s", c->tok,
				   evspec_cache_op[op][1], evspec_cache_type[type][0], ops);
	}
	*config = (uint64_t)type | (uint64_t)op << 8 | (uint64_t)res << 16;
	return 0;
}

/* u, k, h, p... after an event; perf's rule: the first of u/k/h excludes the other two. */
static int evspec_mods(struct evspec_ctx *c, const char *m, struct perf_event_attr *a)
{
	bool ukh = false;

	if (!*m)
		return evspec_fail(c, "'%s' ends in an empty modifier: write u, k, h or p after it",
				   c->tok);
	for (; *m; m++) {
		if ((*m == 'u' || *m == 'k' || *m == 'h') && !ukh) {
			a->exclude_user = a->exclude_kernel = a->exclude_hv = 1;
			ukh = true;
		}
		if (*m == 'u')
			a->exclude_user = 0;
		else if (*m == 'k')
			a->exclude_kernel = 0;
		else if (*m == 'h')
			a->exclude_hv = 0;
		else if (*m == 'p' && a->precise_ip < 3)
			a->precise_ip++;
		else if (*m == 'p')
			return evspec_fail(c, "'%s': at most ppp (precise_ip 3)", c->tok);
		else
			return evspec_fail(
				c, "unknown modifier '%c' in '%s': modifiers are u, k, h, p", *m,
				c->tok);
	}
	return 0;
}

/* "config1:0-15,21" (a format file) into the word it fills and its bits. */
static bool evspec_format(const char *s, int *word, uint64_t *mask)
{
	unsigned long lo, hi;
	char *end;

	if (strncmp(s, "config", 6))
		return false;
	s += 6;
	*word = 0;
	if (*s == '1' || *s == '2')
		*word = *s++ - '0';
	if (*s++ != ':')
		return false;
	*mask = 0;
	do {
		if (*s < '0' || *s > '9')
			return false;
		lo = hi = strtoul(s, &end, 10);
		if (*end == '-') {
			s = end + 1;
			if (*s < '0' || *s > '9')
				return false;
			hi = strtoul(s, &end, 10);
		}
		if (lo > hi || hi > 63)
			return false;
		*mask |= (hi == 63 ? ~0ULL : (1ULL << (hi + 1)) - 1) & ~((1ULL << lo) - 1);
		s = end;
	} while (*s++ == ',');
	return s[-1] == '\0';
}

/* value into the bits of mask in *word, low bits first (perf's pmu_format_value). */
static bool evspec_place(uint64_t mask, uint64_t value, __u64 *word)
{
	uint64_t bits = 0;
	int b;

	for (b = 0; b < 64; b++)
		if (mask >> b & 1) {
			bits |= (value & 1) << b;
			value >>= 1;
		}
	if (value)
		return false;
	*word = (*word & ~mask) | bits;
	return true;
}

static __u64 *evspec_word(struct perf_event_attr *a, int word)
{
	if (word == 1)
		return &a->config1;
	return word == 2 ? &a->config2 : &a->config;
}

/* period=, name=, and (for a PMU) config=, config1=, config2=: 1 when key is none of them. */
static int evspec_generic(struct evspec_ctx *c, const char *key, const char *val, bool pmu,
			  struct evspec *ev)
{
	static const char *const words[] = {"config", "config1", "config2"};
	bool period = !strcmp(key, "period");
	int word = 0;
	uint64_t v;

	if (!strcmp(key, "name")) {
		if (!val || !*val)
			return evspec_fail(c, "'%s': name= needs a name", c->tok);
		snprintf(ev->name, sizeof(ev->name), "%s", val);
		return 0;
	}
	while (pmu && word < 3 && strcmp(key, words[word]))
		word++;
	if (!period && (!pmu || word == 3))
		return 1;
	if (!val || !evspec_num(val, &v))
		return evspec_fail(c, "'%s': %s= needs a number (decimal or 0x hex)", c->tok, key);
	if (period && !v)
		return evspec_fail(c, "'%s': period= must be above 0", c->tok);
	if (period)
		ev->period = v;
	else
		*evspec_word(&ev->attr, word) = v;
	return 0;
}

static int evspec_terms(struct evspec_ctx *c, const char *pmu, char *terms, int depth,
			struct evspec *ev);

/* One term of PMU pmu: generic, a format/ file, or (depth 0, no value) an events/ alias. */
static int evspec_term(struct evspec_ctx *c, const char *pmu, const char *key, const char *val,
		       int depth, struct evspec *ev)
{
	char buf[EVSPEC_FILE_MAX], names[160], aliases[160];
	uint64_t mask, v = 1;
	int err, word;

	if (!evspec_ident(key))
		return evspec_fail(c, "'%s': bad term '%s'", c->tok, key);
	err = evspec_generic(c, key, val, true, ev);
	if (err <= 0)
		return err;
	err = evspec_readf(buf, sizeof(buf), "%s/%s/format/%s", c->sysfs, pmu, key);
	if (err >= 0) {
		if (!evspec_format(buf, &word, &mask))
			return evspec_fail(c, "'%s': %s/%s/format/%s reads '%s', not configN:BITS",
					   c->tok, c->sysfs, pmu, key, buf);
		if (val && !evspec_num(val, &v))
			return evspec_fail(c, "'%s': %s=%s is not a number (decimal or 0x hex)",
					   c->tok, key, val);
		if (!evspec_place(mask, v, evspec_word(&ev->attr, word)))
			return evspec_fail(c, "'%s': %s=%s does not fit its %d bits (%s)", c->tok,
					   key, val, __builtin_popcountll(mask), buf);
		return 0;
	}
	if (!val && depth == 0) {
		err = evspec_readf(buf, sizeof(buf), "%s/%s/events/%s", c->sysfs, pmu, key);
		if (err >= 0)
			return evspec_terms(c, pmu, buf, depth + 1, ev);
	}
	snprintf(buf, sizeof(buf), "%s/%s/format", c->sysfs, pmu);
	evspec_dir_names(buf, names, sizeof(names));
	snprintf(buf, sizeof(buf), "%s/%s/events", c->sysfs, pmu);
	evspec_dir_names(buf, aliases, sizeof(aliases));
	return evspec_fail(c,
			   "unknown term '%s' in '%s': PMU %s takes %s, config, config1, config2, "
			   "period, name; its events: %s",
			   key, c->tok, pmu, names, aliases);
}

/* "a=1,b,c=0x2" (cut in place), applied in order. */
static int evspec_terms(struct evspec_ctx *c, const char *pmu, char *terms, int depth,
			struct evspec *ev)
{
	char *t = terms, *next, *eq, *end;
	int err;

	while (*t) {
		next = strchr(t, ',');
		if (next)
			*next = '\0';
		/* An alias file may space its terms. */
		while (*t == ' ' || *t == '\t' || *t == '\n')
			t++;
		end = t + strlen(t);
		while (end > t && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n'))
			*--end = '\0';
		if (!*t)
			return evspec_fail(c, "'%s' has an empty term", c->tok);
		eq = strchr(t, '=');
		if (eq)
			*eq = '\0';
		if (pmu)
			err = evspec_term(c, pmu, t, eq ? eq + 1 : NULL, depth, ev);
		else if ((err = evspec_generic(c, t, eq ? eq + 1 : NULL, false, ev)) > 0)
			err = evspec_fail(c,
					  "unknown term '%s' in '%s': this event takes period= "
					  "and name=",
					  t, c->tok);
		if (err)
			return err;
		if (!next)
			break;
		t = next + 1;
	}
	return 0;
}

/* Whether sysfs shows no core PMU: "cpu", or one with a cpus file (hybrid x86, arm64). */
static bool evspec_no_core_pmu(const char *sysfs)
{
	char path[PATH_MAX];
	struct dirent *de;
	bool core = false;
	DIR *d = opendir(sysfs);
	int i;

	if (!d)
		return false; /* no sysfs to tell */
	for (i = 0; !core && i < EVSPEC_DIR_MAX && (de = readdir(d)); i++) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/cpus", sysfs, de->d_name);
		core = !strcmp(de->d_name, "cpu") || !access(path, F_OK);
	}
	closedir(d);
	return !core;
}

/* The type of PMU pmu from sysfs, or -EINVAL naming the PMUs there are. */
static int evspec_pmu_type(struct evspec_ctx *c, const char *pmu, uint32_t *type)
{
	char buf[64], names[160];
	uint64_t v;
	int err;

	if (!evspec_ident(pmu))
		return evspec_fail(c, "'%s': bad PMU name '%s'", c->tok, pmu);
	err = evspec_readf(buf, sizeof(buf), "%s/%s/type", c->sysfs, pmu);
	if (err >= 0 && evspec_num(buf, &v) && v <= UINT32_MAX) {
		*type = (uint32_t)v;
		return 0;
	}
	if (err >= 0)
		return evspec_fail(c, "'%s': %s/%s/type reads '%s', not a PMU type", c->tok,
				   c->sysfs, pmu, buf);
	if (access(c->sysfs, F_OK))
		return evspec_fail(
			c, "unknown PMU '%s' in '%s': %s does not exist (sysfs not mounted?)", pmu,
			c->tok, c->sysfs);
	if (!strcmp(pmu, "cpu") && evspec_no_core_pmu(c->sysfs))
		return evspec_fail(c, "unknown PMU 'cpu' in '%s': %s", c->tok, EVSPEC_NO_PMU);
	evspec_dir_names(c->sysfs, names, sizeof(names));
	return evspec_fail(c, "unknown PMU '%s' in '%s': the PMUs here are %s", pmu, c->tok, names);
}

/*
 * Where tracefs is: 0 with root set, or -ENOENT (not mounted), -EACCES.  The defaults
 * are tried in turn; root is then the first, for the message.
 */
static int evspec_tracefs(const struct evspec_ctx *c, char *root, size_t len)
{
	const char *const *dirs = evspec_tracefs_dirs;
	size_t nr = sizeof(evspec_tracefs_dirs) / sizeof(evspec_tracefs_dirs[0]), i;
	char path[PATH_MAX];
	struct stat st;
	int err = -ENOENT;

	if (c->tracefs) {
		dirs = &c->tracefs;
		nr = 1;
	}
	for (i = 0; i < nr; i++) {
		snprintf(path, sizeof(path), "%s/events", dirs[i]);
		if (stat(path, &st)) {
			if (errno == EACCES)
				err = -EACCES;
		} else if (S_ISDIR(st.st_mode)) {
			snprintf(root, len, "%s", dirs[i]);
			return 0;
		}
	}
	snprintf(root, len, "%s", dirs[0]);
	return err;
}

static int evspec_tracepoint(struct evspec_ctx *c, const char *sys, const char *name,
			     struct evspec *ev)
{
	char root[PATH_MAX], buf[64];
	uint64_t id;
	int err;

	if (strpbrk(sys, "*?[") || strpbrk(name, "*?["))
		return evspec_fail(c, "'%s': tracepoint wildcards are not supported: name each one",
				   c->tok);
	if (!evspec_ident(sys) || !evspec_ident(name))
		return evspec_fail(
			c, "bad tracepoint '%s': write SYSTEM:NAME, as in sched:sched_switch",
			c->tok);
	err = evspec_tracefs(c, root, sizeof(root));
	if (err == -EACCES)
		return evspec_fail(c, "tracepoint '%s': cannot read %s/events: %s (run as root)",
				   c->tok, root, strerror(EACCES));
	if (err)
		return evspec_fail(c,
				   "tracepoint '%s' needs tracefs, which is not mounted at %s: "
				   "mount -t tracefs nodev %s",
				   c->tok, root, root);
	err = evspec_readf(buf, sizeof(buf), "%s/events/%s/%s/id", root, sys, name);
	if (err == -ENOENT)
		return evspec_fail(c,
				   "unknown tracepoint '%s:%s' (no %s/events/%s/%s); see perf list",
				   sys, name, root, sys, name);
	if (err < 0)
		return evspec_fail(c, "tracepoint '%s': cannot read %s/events/%s/%s/id: %s", c->tok,
				   root, sys, name, strerror(-err));
	if (!evspec_num(buf, &id))
		return evspec_fail(c, "tracepoint '%s': its id file reads '%s', not a number",
				   c->tok, buf);
	ev->attr.type = PERF_TYPE_TRACEPOINT;
	ev->attr.config = id;
	return 0;
}

/* rNNNN: 0, 1 when s is not 'r' and hex digits, -EINVAL when they pass 64 bits. */
static int evspec_raw(struct evspec_ctx *c, const char *s, __u64 *config)
{
	size_t i;

	if (s[0] != 'r' || !s[1])
		return 1;
	for (i = 1; s[i]; i++)
		if (evspec_hex(s[i]) < 0)
			return 1;
	if (i > 17)
		return evspec_fail(c, "raw event '%s' has more than 16 hex digits", c->tok);
	*config = 0;
	for (i = 1; s[i]; i++)
		*config = *config << 4 | (uint64_t)evspec_hex(s[i]);
	return 0;
}

/* A symbolic, cache or raw name: 0, 1 when s is none of them, -EINVAL. */
static int evspec_named(struct evspec_ctx *c, const char *s, struct perf_event_attr *a)
{
	const struct evspec_sym *sym = evspec_sym(s);
	int err;

	if (sym) {
		a->type = sym->type;
		a->config = sym->config;
		return 0;
	}
	err = evspec_cache(c, s, &a->config);
	if (err <= 0) {
		a->type = PERF_TYPE_HW_CACHE;
		return err;
	}
	err = evspec_raw(c, s, &a->config);
	if (!err)
		a->type = PERF_TYPE_RAW;
	return err;
}

/* What to say of a name that is no event: the nearest thing it might have meant. */
static int evspec_unknown(struct evspec_ctx *c, const char *s)
{
	size_t i, n;

	for (i = 0; i < sizeof(evspec_syms) / sizeof(evspec_syms[0]); i++)
		if (!strcasecmp(s, evspec_syms[i].name))
			return evspec_fail(c, "unknown event '%s': did you mean '%s'?", s,
					   evspec_syms[i].name);
	if (evspec_alias(s, evspec_cache_type, PERF_COUNT_HW_CACHE_MAX, &n) >= 0)
		return evspec_fail(
			c,
			"unknown cache event '%s': write CACHE-OP or CACHE-OP-misses, as "
			"in L1-dcache-load-misses (CACHE: L1-dcache, L1-icache, LLC, dTLB, "
			"iTLB, branch, node; OP: loads, stores, prefetches)",
			s);
	if (s[0] == 'r' && evspec_hex(s[1]) >= 0)
		return evspec_fail(c, "bad raw event '%s': r is followed by hex digits, as in r1a8",
				   s);
	return evspec_fail(c,
			   "unknown event '%s'; see perf list: cpu-clock, page-faults, cycles, "
			   "L1-dcache-load-misses, rNNN, PMU/term=value/, SYSTEM:TRACEPOINT...",
			   s);
}

/* One event of the list, tok being at most EVSPEC_NAME_MAX - 1 printable characters. */
static int evspec_one(struct evspec_ctx *c, const char *tok, struct evspec *ev)
{
	char buf[EVSPEC_NAME_MAX], *slash, *end, *colon, *mods = NULL, *name;
	int err;

	memset(ev, 0, sizeof(*ev));
	snprintf(ev->name, sizeof(ev->name), "%s", tok);
	snprintf(buf, sizeof(buf), "%s", tok);
	ev->attr.size = sizeof(ev->attr);
	slash = strchr(buf, '/');
	if (slash) {
		*slash = '\0';
		end = strchr(slash + 1, '/');
		if (!end)
			return evspec_fail(
				c, "'%s' lacks its closing '/': write PMU/term=value,.../", tok);
		*end = '\0';
		mods = end + 1;
		if (strchr(mods, '/'))
			return evspec_fail(c, "'%s' has a '/' after the closing one", tok);
		if (*mods == ':')
			return evspec_fail(c,
					   "'%s': modifiers follow the closing '/', as in %s/%s/%s",
					   tok, buf, slash + 1, mods + 1);
		if (!buf[0])
			return evspec_fail(c, "'%s' has no PMU name before the '/'", tok);
		err = evspec_named(c, buf, &ev->attr);
		if (err < 0)
			return err;
		if (err == 0)
			err = evspec_terms(c, NULL, slash + 1, 0, ev);
		else if (!(err = evspec_pmu_type(c, buf, &ev->attr.type)))
			err = evspec_terms(c, buf, slash + 1, 0, ev);
		if (err)
			return err;
		return *mods ? evspec_mods(c, mods, &ev->attr) : 0;
	}
	colon = strchr(buf, ':');
	if (colon) {
		*colon = '\0';
		mods = colon + 1;
	}
	err = evspec_named(c, buf, &ev->attr);
	if (err < 0)
		return err;
	if (err > 0) {
		/* SYSTEM:NAME[:MODS]; NAME:MODS of an unknown NAME is no tracepoint. */
		name = mods;
		if (!name || (*name && strspn(name, "ukhp") == strlen(name)))
			return evspec_unknown(c, buf);
		colon = strchr(name, ':');
		mods = NULL;
		if (colon) {
			*colon = '\0';
			mods = colon + 1;
		}
		err = evspec_tracepoint(c, buf, name, ev);
		if (err)
			return err;
	}
	return mods ? evspec_mods(c, mods, &ev->attr) : 0;
}

static const char *evspec_sysfs(const struct evspec_env *env)
{
	return env && env->sysfs ? env->sysfs : EVSPEC_SYSFS;
}

int evspec_parse(const char *list, const struct evspec_env *env, struct evspec **out, size_t *nr,
		 char *err, size_t errlen)
{
	struct evspec_ctx c = {.sysfs = evspec_sysfs(env),
			       .tracefs = env ? env->tracefs : NULL,
			       .err = err,
			       .errlen = errlen};
	char tok[EVSPEC_NAME_MAX];
	size_t n = 0, len = 0, slashes = 0, i;
	struct evspec *evs;
	int ret = 0;

	*out = NULL;
	*nr = 0;
	if (err && errlen)
		err[0] = '\0';
	if (!list || !*list)
		return evspec_fail(&c, "no event given: name one, as in -e cpu-clock");
	evs = calloc(EVSPEC_MAX, sizeof(*evs));
	if (!evs)
		return -ENOMEM;
	for (i = 0;; i++) {
		unsigned char ch = (unsigned char)list[i];

		/* A comma between a PMU's slashes separates its terms, not events. */
		if (!ch || (ch == ',' && slashes % 2 == 0)) {
			tok[len] = '\0';
			if (!len)
				ret = evspec_fail(&c,
						  "empty event at offset %zu of the event list "
						  "(a doubled or trailing comma?)",
						  i);
			else if (n == EVSPEC_MAX)
				ret = evspec_fail(&c, "more than %d events in the list",
						  EVSPEC_MAX);
			c.tok = tok;
			if (!ret)
				ret = evspec_one(&c, tok, &evs[n]);
			if (ret)
				break;
			n++;
			len = slashes = 0;
			if (!ch)
				break;
			continue;
		}
		if (ch <= ' ' || ch >= 0x7f)
			ret = evspec_fail(&c,
					  "byte 0x%02x at offset %zu of the event list is in no "
					  "event name",
					  ch, i);
		else if (ch == '{' || ch == '}')
			ret = evspec_fail(&c, "event groups ({...}) are not supported: list the "
					      "events with commas");
		else if (len == sizeof(tok) - 1)
			ret = evspec_fail(&c, "event '%.40s...' is longer than %zu characters", tok,
					  sizeof(tok) - 1);
		if (ret)
			break;
		slashes += ch == '/';
		tok[len++] = (char)ch;
	}
	if (ret) {
		free(evs);
		return ret;
	}
	*out = evs;
	*nr = n;
	return 0;
}

/* Whether this thread may open the event, as an unprivileged user could. */
static bool evspec_probe(uint32_t type, uint64_t config)
{
	struct perf_event_attr a = {
		.type = type,
		.size = sizeof(a),
		.config = config,
		.disabled = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	int fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

struct evspec_out {
	char *buf;
	size_t len, pos;
	int nr;
	bool full;
};

/* One name more, if it fits with room left for ",..." after it. */
static void __attribute__((format(printf, 2, 3)))
evspec_add(struct evspec_out *o, const char *fmt, ...)
{
	char name[2 * EVSPEC_NAME_MAX];
	const char *sep = o->pos ? "," : "";
	va_list ap;

	if (o->full)
		return;
	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	if (o->pos + strlen(sep) + strlen(name) + 5 > o->len) {
		o->pos += snprintf(o->buf + o->pos, o->len - o->pos, "%s...", sep);
		o->full = true;
		return;
	}
	o->pos += snprintf(o->buf + o->pos, o->len - o->pos, "%s%s", sep, name);
	o->nr++;
}

/* PMUs whose events are named otherwise (software, tracepoints) or need more than terms. */
static const char *const evspec_pmu_unlisted[] = {"software", "tracepoint", "breakpoint", "kprobe",
						  "uprobe"};

static void evspec_add_pmus(const char *sysfs, struct evspec_out *o)
{
	struct dirent **pmus = NULL, **evs;
	char path[PATH_MAX];
	int n, m, i, j, listed;
	size_t k;

	n = scandir(sysfs, &pmus, evspec_dot_filter, alphasort);
	for (i = 0; i < n; i++) {
		const char *pmu = pmus[i]->d_name;
		bool skip = i >= EVSPEC_DIR_MAX || !evspec_ident(pmu);

		for (k = 0; k < sizeof(evspec_pmu_unlisted) / sizeof(evspec_pmu_unlisted[0]); k++)
			skip = skip || !strcmp(pmu, evspec_pmu_unlisted[k]);
		evs = NULL;
		m = -1;
		if (!skip && snprintf(path, sizeof(path), "%s/%s/events", sysfs, pmu) < PATH_MAX)
			m = scandir(path, &evs, evspec_dot_filter, alphasort);
		for (j = 0, listed = 0; j < m; j++) {
			const char *alias = evs[j]->d_name;

			/* "alias.scale", "alias.unit": how perf stat shows it, not events. */
			if (j < EVSPEC_DIR_MAX && evspec_ident(alias) && !strchr(alias, '.')) {
				evspec_add(o, "%s/%s/", pmu, alias);
				listed++;
			}
			free(evs[j]);
		}
		free(evs);
		if (!skip && !listed)
			evspec_add(o, "%s//", pmu);
		free(pmus[i]);
	}
	free(pmus);
}

int evspec_available(const struct evspec_env *env, char *buf, size_t len)
{
	struct evspec_out o = {.buf = buf, .len = len};
	uint64_t op, res, t;
	size_t i;

	if (!buf || len < 5)
		return -EINVAL;
	buf[0] = '\0';
	for (i = 0; i < sizeof(evspec_syms) / sizeof(evspec_syms[0]); i++)
		if (!evspec_syms[i].alias &&
		    evspec_probe(evspec_syms[i].type, evspec_syms[i].config))
			evspec_add(&o, "%s", evspec_syms[i].name);
	/* perf list's names: L1-dcache-loads, L1-dcache-load-misses... */
	for (t = 0; t < PERF_COUNT_HW_CACHE_MAX; t++)
		for (op = 0; op < PERF_COUNT_HW_CACHE_OP_MAX; op++)
			for (res = 0; res < PERF_COUNT_HW_CACHE_RESULT_MAX; res++) {
				if (!(evspec_cache_ops_of[t] & (1 << op)) ||
				    !evspec_probe(PERF_TYPE_HW_CACHE, t | op << 8 | res << 16))
					continue;
				if (res == PERF_COUNT_HW_CACHE_RESULT_ACCESS)
					evspec_add(&o, "%s-%s", evspec_cache_type[t][0],
						   evspec_cache_op[op][1]);
				else
					evspec_add(&o, "%s-%s-%s", evspec_cache_type[t][0],
						   evspec_cache_op[op][0],
						   evspec_cache_result[res][0]);
			}
	evspec_add_pmus(evspec_sysfs(env), &o);
	return o.nr;
}

const char *evspec_missing_pmu(const struct evspec *ev, const struct evspec_env *env)
{
	if (!ev || (ev->attr.type != PERF_TYPE_HARDWARE && ev->attr.type != PERF_TYPE_HW_CACHE &&
		    ev->attr.type != PERF_TYPE_RAW))
		return NULL;
	return evspec_no_core_pmu(evspec_sysfs(env)) ? EVSPEC_NO_PMU : NULL;
}
