// SPDX-License-Identifier: Apache-2.0
/*
 * pa-convert: perf.data in, another profile format out (pprof, folded stacks, a
 * flame graph).
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
#include "flamegraph.h"
#include "profile/focus.h"
#include "profile/input.h"
#include "profile/pprof.h"
#include "base/hash.h"
#include "base/util.h"

#ifndef PA_VERSION
#define PA_VERSION "0.1.0"
#endif

enum format { FMT_NONE, FMT_PPROF, FMT_FOLDED, FMT_FLAMEGRAPH, FMT_SPEEDSCOPE };

struct convert {
	const char *input;
	const char *output;
	const char *event;
	const char *base; /* --diff BASE */
	const char *focus, *ignore;
	const char *title;
	double min_width; /* --min-width, percent */
	enum format fmt;
	bool quiet;
	bool inverted, diff_abs;
	bool tid_label;			     /* --tid-label */
	struct pa_str_list pods, containers; /* --pod, --container */
	struct machine_opts mopts;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: pa-convert [-i FILE] (--pprof | --folded) [-o FILE]\n"
		   "  -i, --input FILE   perf.data to read (default perf.data; '-' = stdin)\n"
		   "      --pprof        gzipped pprof profile (go tool pprof, Pyroscope...)\n"
		   "      --folded       folded stacks, one line per stack (flamegraph.pl)\n"
		   "      --speedscope   speedscope JSON: each thread's samples in time order\n"
		   "      --flamegraph   interactive flame graph, one HTML file (-o NAME.svg: "
		   "SVG)\n"
		   "      --diff BASE    flame graph of the input against the capture BASE:\n"
		   "                     red grew, blue shrank (by share of the total)\n"
		   "      --diff-abs     --diff by absolute values, not shares\n"
		   "      --inverted     flame graph drawn as an icicle (root on top)\n"
		   "      --title TEXT   the flame graph's title\n"
		   "      --min-width PCT  leave out frames under PCT%% of the total "
		   "(default 0.001)\n"
		   "      --focus RE     keep only stacks with a frame matching RE\n"
		   "      --ignore RE    drop stacks with a frame matching RE\n"
		   "      --tid-label    pprof: a tid label on each sample (threads apart)\n"
		   "      --pod POD[,POD...]  only these Kubernetes pods (UID or pod_name)\n"
		   "      --container ID[,ID...]  only these containers (id, 4+ characters\n"
		   "                     of it, or container_name)\n"
		   "  -o, --output FILE  write FILE (atomically) instead of stdout\n"
		   "      --event NAME   folded: the event to fold (default: the first sampled);\n"
		   "                     pprof: only these events' samples, EV[,EV...]\n"
		   "                     (default: all)\n"
		   "                     for offcpu-time the count is nanoseconds off the "
		   "CPU\n" PA_SYM_USAGE "  -q, --quiet        no warnings\n"
		   "  -h, --help         this text\n"
		   "      --version      print the version\n");
}

enum {
	OPT_PPROF = 256,
	OPT_FOLDED,
	OPT_FLAMEGRAPH,
	OPT_SPEEDSCOPE,
	OPT_DIFF,
	OPT_DIFF_ABS,
	OPT_INVERTED,
	OPT_TITLE,
	OPT_MIN_WIDTH,
	OPT_FOCUS,
	OPT_IGNORE,
	OPT_POD,
	OPT_CONTAINER,
	OPT_TID_LABEL,
	OPT_EVENT,
	OPT_VERSION,
};

static const struct option long_opts[] = {
	{"input", required_argument, NULL, 'i'},
	{"output", required_argument, NULL, 'o'},
	{"pprof", no_argument, NULL, OPT_PPROF},
	{"folded", no_argument, NULL, OPT_FOLDED},
	{"flamegraph", no_argument, NULL, OPT_FLAMEGRAPH},
	{"speedscope", no_argument, NULL, OPT_SPEEDSCOPE},
	{"diff", required_argument, NULL, OPT_DIFF},
	{"diff-abs", no_argument, NULL, OPT_DIFF_ABS},
	{"inverted", no_argument, NULL, OPT_INVERTED},
	{"title", required_argument, NULL, OPT_TITLE},
	{"min-width", required_argument, NULL, OPT_MIN_WIDTH},
	{"focus", required_argument, NULL, OPT_FOCUS},
	{"ignore", required_argument, NULL, OPT_IGNORE},
	{"pod", required_argument, NULL, OPT_POD},
	{"tid-label", no_argument, NULL, OPT_TID_LABEL},
	{"container", required_argument, NULL, OPT_CONTAINER},
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
		case OPT_FLAMEGRAPH:
		case OPT_SPEEDSCOPE:
			if (cv->fmt != FMT_NONE) {
				pa_err("give one output format (--pprof, --folded, --flamegraph or "
				       "--speedscope)");
				return -1;
			}
			cv->fmt = c == OPT_PPROF	? FMT_PPROF
				  : c == OPT_FOLDED	? FMT_FOLDED
				  : c == OPT_FLAMEGRAPH ? FMT_FLAMEGRAPH
							: FMT_SPEEDSCOPE;
			break;
		case OPT_DIFF:
			cv->base = optarg;
			break;
		case OPT_DIFF_ABS:
			cv->diff_abs = true;
			break;
		case OPT_INVERTED:
			cv->inverted = true;
			break;
		case OPT_TITLE:
			cv->title = optarg;
			break;
		case OPT_MIN_WIDTH: {
			char *end;

			cv->min_width = strtod(optarg, &end);
			if (end == optarg || *end || !(cv->min_width >= 0 && cv->min_width < 100)) {
				pa_err("bad --min-width '%s'; give a percentage, e.g. 0.01",
				       optarg);
				return -1;
			}
			break;
		}
		case OPT_FOCUS:
			cv->focus = optarg;
			break;
		case OPT_IGNORE:
			cv->ignore = optarg;
			break;
		case OPT_TID_LABEL:
			cv->tid_label = true;
			break;
		case OPT_POD:
			if (pa_str_list_parse(&cv->pods, optarg))
				return -1;
			break;
		case OPT_CONTAINER:
			if (pa_str_list_parse(&cv->containers, optarg))
				return -1;
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
	/* --diff BASE NEW: NEW may come as the argument after BASE, as in perf diff. */
	if (cv->base && !cv->input && optind < argc)
		cv->input = argv[optind++];
	if (optind < argc) {
		pa_err("unexpected argument '%s'; the input file goes after -i", argv[optind]);
		return -1;
	}
	if (cv->fmt == FMT_NONE) {
		pa_err("no output format; give --pprof, --folded, --flamegraph or --speedscope");
		return -1;
	}
	if ((cv->base || cv->diff_abs) && cv->fmt != FMT_FLAMEGRAPH) {
		pa_err("--diff draws a flame graph: add --flamegraph (pa-report --diff prints "
		       "the table)");
		return -1;
	}
	if (cv->diff_abs && !cv->base) {
		pa_err("--diff-abs needs --diff BASE");
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

static bool of_events(const struct cg_profile *cg, const struct cg_stack *s, void *ctx)
{
	(void)cg;
	return s->event < 64 && (*(const uint64_t *)ctx & 1ULL << s->event);
}

/* pprof --event EV[,EV...]: keep only their samples. */
static int keep_events(const struct convert *cv, struct cg_profile *cg, const char *src)
{
	char *list = strdup(cv->event), *tok, *save = NULL, names[256];
	uint64_t mask = 0;
	int idx, err = 0;

	if (!list) {
		pa_err("out of memory");
		return -ENOMEM;
	}
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		idx = cg_find_event(cg, tok);
		if (idx < 0 || idx >= 64) {
			pa_err("no event '%s' in %s; events: %s", tok, src,
			       pa_input_event_names(cg, names, sizeof(names)));
			err = -ENOENT;
			break;
		}
		mask |= 1ULL << idx;
	}
	free(list);
	if (!err)
		cg_keep_stacks(cg, of_events, &mask);
	return err;
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

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* Load path into a new profile *cg, with the --focus/--ignore filters applied.  0, or
 * -1 having said why. */
static int load(const struct convert *cv, struct focus *fo, const char *path, struct pa_input *in,
		struct cg_profile **cg)
{
	struct cg_filter filter = {
		.pods = (const char *const *)cv->pods.strs,
		.nr_pods = cv->pods.nr,
		.containers = (const char *const *)cv->containers.strs,
		.nr_containers = cv->containers.nr,
	};

	*cg = cg_new();
	if (!*cg) {
		pa_err("out of memory");
		return -1;
	}
	cg_set_timeline(*cg, cv->fmt == FMT_SPEEDSCOPE);
	if (pa_input_load(in, path, &cv->mopts, *cg, &filter))
		return -1;
	if (!cg_nr_events(*cg)) {
		pa_err("%s: no events recorded; record some with pa-record", in->name);
		return -1;
	}
	if (fo && focus_apply(fo, *cg) < 0) {
		pa_err("out of memory");
		return -1;
	}
	return 0;
}

/* Whether some event sampled in cg was sampled in base too: a diff needs one. */
static bool common_event(const struct cg_profile *cg, const struct cg_profile *base)
{
	size_t i;
	int b;

	for (i = 0; i < cg_nr_events(cg); i++) {
		if (!cg_event(cg, i)->samples)
			continue;
		b = cg_find_event(base, cg_event(cg, i)->name);
		if (b >= 0 && cg_event(base, b)->samples)
			return true;
	}
	return false;
}

/* The flame graph of cg (against base when not NULL) into out. */
static int flamegraph(const struct convert *cv, const struct pa_input *in,
		      const struct cg_profile *cg, const struct pa_input *base_in,
		      const struct cg_profile *base, struct output *out)
{
	struct flame_opts fo = {
		.title = cv->title,
		.cmd = pd_reader_cmdline(in->r),
		.host = pd_reader_feature_string(in->r, HEADER_HOSTNAME),
		.base_name = base_in ? base_in->name : NULL,
		.inverted = cv->inverted,
		.abs = cv->diff_abs,
		.svg = cv->output && ends_with(cv->output, ".svg"),
		.min_frac = cv->min_width / 100,
	};
	struct pprof_opts po = {0};
	struct flame_tree t;
	int err;

	if (!fo.title)
		fo.title = base ? "Differential flame graph" : "Flame graph";
	capture_times(cg, in, &po);
	fo.duration_ns = po.duration_nanos;
	err = flame_tree_build(&t, cg, base);
	if (!err)
		err = flamegraph_render(&t, &fo, output_write, out);
	flame_tree_free(&t);
	return err;
}

int main(int argc, char **argv)
{
	struct convert cv = {.min_width = 0.001};
	struct pa_input in = {0}, base_in = {0};
	struct cg_profile *cg = NULL, *base = NULL;
	struct focus *fo = NULL;
	char errbuf[256];
	struct pprof_opts po = {0};
	const char *tags[PA_MAX_TAGS];
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

	if (cv.focus || cv.ignore) {
		fo = focus_new(cv.focus, cv.ignore, errbuf, sizeof(errbuf));
		if (!fo) {
			pa_err("%s", errbuf);
			goto out;
		}
	}
	if (cv.base && load(&cv, fo, cv.base, &base_in, &base))
		goto out;
	if (load(&cv, fo, cv.input, &in, &cg))
		goto out;
	for (i = 0; i < cg_nr_events(cg); i++)
		nr_samples += cg_event(cg, i)->samples;
	if (!nr_samples && cv.fmt == FMT_FLAMEGRAPH) {
		pa_err("%s: no samples to draw%s", in.name,
		       fo				? " (none is left after --focus/--ignore)"
		       : cv.pods.nr || cv.containers.nr ? " (none is left after --pod/--container)"
							: "; record some with pa-record");
		goto out;
	}
	if (!nr_samples)
		pa_warn("%s: no samples%s; the output is empty", in.name,
			cv.pods.nr || cv.containers.nr ? " match the filters" : "");
	if (base && !common_event(cg, base)) {
		pa_err("%s and %s have no sampled event in common; nothing to compare",
		       base_in.name, in.name);
		goto out;
	}

	if (cv.fmt == FMT_PPROF) {
		if (cv.event && keep_events(&cv, cg, in.name))
			goto out;
		capture_times(cg, &in, &po);
		po.tid_label = cv.tid_label;
		po.nr_tags = pa_input_tags(&in, tags, PA_MAX_TAGS);
		po.tags = tags;
		err = pprof_encode(cg, &po, &buf, &len);
		if (err) {
			pa_err("encoding the profile: %s", strerror(-err));
			goto out;
		}
		if (output_open(&out, &cv))
			goto out;
		err = output_write(&out, (const char *)buf, len);
	} else if (cv.fmt == FMT_FLAMEGRAPH) {
		if (output_open(&out, &cv))
			goto out;
		err = flamegraph(&cv, &in, cg, base ? &base_in : NULL, base, &out);
	} else if (cv.fmt == FMT_SPEEDSCOPE) {
		if (output_open(&out, &cv))
			goto out;
		err = speedscope_render(
			cg, &(struct speedscope_opts){in.name, "pa-convert " PA_VERSION},
			output_write, &out);
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
	pa_input_close(&base_in);
	cg_free(cg);
	cg_free(base);
	focus_free(fo);
	pa_str_list_free(&cv.pods);
	pa_str_list_free(&cv.containers);
	return ret;
}
