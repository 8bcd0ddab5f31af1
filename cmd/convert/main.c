// SPDX-License-Identifier: Apache-2.0
/*
 * pa-convert: perf.data in, another profile format out (pprof, folded stacks).
 * The whole output is rendered in memory first and then written through
 * pa_outfile, so a failure never leaves a half-written file under the final name.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "profile/callgraph.h"
#include "convert.h"
#include "profile/input.h"
#include "profile/pprof.h"
#include "base/hash.h"
#include "base/util.h"

#ifndef PA_VERSION
#define PA_VERSION "0.1.0"
#endif

enum format { FMT_NONE, FMT_PPROF, FMT_FOLDED };

struct convert {
	const char *input;
	const char *output;
	const char *event;
	enum format fmt;
	bool quiet;
	struct machine_opts mopts;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: pa-convert [-i FILE] (--pprof | --folded) [-o FILE]\n"
		   "  -i, --input FILE   perf.data to read (default perf.data; '-' = stdin)\n"
		   "      --pprof        gzipped pprof profile (go tool pprof, Pyroscope...)\n"
		   "      --folded       folded stacks, one line per stack (flamegraph.pl)\n"
		   "  -o, --output FILE  write FILE (atomically) instead of stdout\n"
		   "      --event NAME   folded: the event to fold (default: the first sampled);\n"
		   "                     for offcpu-time the count is nanoseconds off the "
		   "CPU\n" PA_SYM_USAGE "  -q, --quiet        no warnings\n"
		   "  -h, --help         this text\n"
		   "      --version      print the version\n");
}

enum { OPT_PPROF = 256, OPT_FOLDED, OPT_EVENT, OPT_VERSION };

static const struct option long_opts[] = {
	{"input", required_argument, NULL, 'i'},
	{"output", required_argument, NULL, 'o'},
	{"pprof", no_argument, NULL, OPT_PPROF},
	{"folded", no_argument, NULL, OPT_FOLDED},
	{"event", required_argument, NULL, OPT_EVENT},
	PA_SYM_OPTIONS,
	{"quiet", no_argument, NULL, 'q'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, OPT_VERSION},
	{},
};

/* 0 to go on, 1 to exit 0 (help/version), -1 to exit 1. */
static int parse_args(int argc, char **argv, struct convert *cv)
{
	int c;

	while ((c = getopt_long(argc, argv, "i:o:qh", long_opts, NULL)) != -1) {
		if (pa_sym_opt(c, optarg, &cv->mopts))
			continue;
		switch (c) {
		case 'i':
			cv->input = optarg;
			break;
		case 'o':
			cv->output = optarg;
			break;
		case OPT_PPROF:
		case OPT_FOLDED:
			if (cv->fmt != FMT_NONE) {
				pa_err("give one of --pprof or --folded, not both");
				return -1;
			}
			cv->fmt = c == OPT_PPROF ? FMT_PPROF : FMT_FOLDED;
			break;
		case OPT_EVENT:
			cv->event = optarg;
			break;
		case 'q':
			cv->quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case OPT_VERSION:
			printf("pa-convert %s\n", PA_VERSION);
			return 1;
		default:
			fprintf(stderr, "Try 'pa-convert --help' for more information.\n");
			return -1;
		}
	}
	if (optind < argc) {
		pa_err("unexpected argument '%s'; the input file goes after -i", argv[optind]);
		return -1;
	}
	if (cv->fmt == FMT_NONE) {
		pa_err("no output format; give --pprof or --folded");
		return -1;
	}
	return 0;
}

/*
 * Wall-clock start of the capture.  Sample times are on the kernel's monotonic
 * clock, which perf.data does not tie to the epoch here; the file's mtime marks the
 * end of recording (for a pipe: now), so start = end - duration.
 */
static void capture_times(const struct cg_profile *cg, const struct pa_input *in,
			  struct pprof_opts *po)
{
	uint64_t first = 0, last = 0, end_ns;
	struct stat st;
	struct timespec now;
	size_t i;

	for (i = 0; i < cg_nr_events(cg); i++) {
		const struct cg_event *ev = cg_event(cg, i);

		if (!ev->first_time)
			continue;
		if (!first || ev->first_time < first)
			first = ev->first_time;
		if (ev->last_time > last)
			last = ev->last_time;
	}
	po->duration_nanos = last > first ? last - first : 0;
	if (strcmp(in->name, "stdin") && !stat(in->name, &st))
		end_ns = st.st_mtim.tv_sec * 1000000000ULL + st.st_mtim.tv_nsec;
	else {
		clock_gettime(CLOCK_REALTIME, &now);
		end_ns = now.tv_sec * 1000000000ULL + now.tv_nsec;
	}
	po->time_nanos = end_ns - po->duration_nanos;
}

static int pick_event(const struct convert *cv, const struct cg_profile *cg, const char *src)
{
	char names[256];
	size_t i;
	int idx;

	if (cv->event) {
		idx = cg_find_event(cg, cv->event);
		if (idx < 0)
			pa_err("no event '%s' in %s; events: %s", cv->event, src,
			       pa_input_event_names(cg, names, sizeof(names)));
		return idx;
	}
	for (i = 0; i < cg_nr_events(cg); i++)
		if (cg_event(cg, i)->samples)
			return i;
	return 0;
}

/* The output being written: a temporary file renamed at the end, or stdout. */
struct output {
	const char *path;
	struct pa_outfile of;
	int werr; /* the first write error */
};

static int output_open(struct output *out, const struct convert *cv)
{
	int err;

	out->path = cv->output ? cv->output : "-";
	out->werr = 0;
	err = pa_outfile_open(&out->of, out->path);
	if (err)
		pa_err("cannot create %s: %s", out->path, strerror(-err));
	return err;
}

/* A folded_write_fn. */
static int output_write(void *ctx, const char *buf, size_t len)
{
	struct output *out = ctx;

	if (!out->werr)
		out->werr = pa_write_all(out->of.fd, buf, len);
	return out->werr;
}

/* Done: err (from making the output) 0 renames the file into place, else removes
 * it, saying why.  0 or -errno. */
static int output_close(struct output *out, int err)
{
	if (out->werr)
		pa_err("writing %s: %s", out->of.path ? out->of.path : "stdout",
		       strerror(-out->werr));
	else if (err)
		pa_err("encoding the profile: %s", strerror(-err));
	if (err || out->werr) {
		pa_outfile_abort(&out->of);
		return err ? err : out->werr;
	}
	err = pa_outfile_commit(&out->of, false);
	if (err)
		pa_err("writing %s: %s", out->path, strerror(-err));
	return err;
}

int main(int argc, char **argv)
{
	struct convert cv = {0};
	struct pa_input in = {0};
	struct cg_profile *cg = NULL;
	struct pprof_opts po = {0};
	struct output out;
	uint8_t *buf = NULL;
	size_t len = 0, nr_samples = 0, i;
	int ret = 1, err, ev;

	pa_set_progname("pa-convert");
	pa_malloc_tables();
	switch (parse_args(argc, argv, &cv)) {
	case 1:
		return 0;
	case -1:
		return 1;
	}
	pa_set_quiet(cv.quiet);
	/* Checked before reading: a long capture should not be read only to be refused. */
	if (cv.fmt == FMT_PPROF && (!cv.output || !strcmp(cv.output, "-")) &&
	    isatty(STDOUT_FILENO)) {
		pa_err("refusing to write binary pprof to a terminal; use -o FILE or redirect");
		return 1;
	}

	cg = cg_new();
	if (!cg) {
		pa_err("out of memory");
		goto out;
	}
	if (pa_input_load(&in, cv.input, &cv.mopts, cg, NULL))
		goto out;
	if (!cg_nr_events(cg)) {
		pa_err("%s: no events recorded; record some with pa-record", in.name);
		goto out;
	}
	for (i = 0; i < cg_nr_events(cg); i++)
		nr_samples += cg_event(cg, i)->samples;
	if (!nr_samples)
		pa_warn("%s: no samples; the output is empty", in.name);

	if (cv.fmt == FMT_PPROF) {
		capture_times(cg, &in, &po);
		err = pprof_encode(cg, &po, &buf, &len);
		if (err) {
			pa_err("encoding the profile: %s", strerror(-err));
			goto out;
		}
		if (output_open(&out, &cv))
			goto out;
		err = output_write(&out, (const char *)buf, len);
	} else {
		ev = pick_event(&cv, cg, in.name);
		if (ev < 0 || output_open(&out, &cv))
			goto out;
		/* Written as it is made: the text of 1M stacks is 70 MB. */
		err = folded_render(cg, ev, output_write, &out);
	}
	if (output_close(&out, out.werr ? 0 : err))
		goto out;
	ret = 0;
out:
	free(buf);
	pa_input_close(&in);
	cg_free(cg);
	return ret;
}
