// SPDX-License-Identifier: Apache-2.0
/*
 * pa-report: perf.data (ours or Linux perf's, file or pipe) in, perf report --stdio
 * out.  Reading and symbolizing live in libcommon (pd_read, machine, callgraph);
 * this file is options and flow, hist.c the aggregation, print.c the layout.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "profile/callgraph.h"
#include "diff.h"
#include "profile/focus.h"
#include "hist.h"
#include "profile/input.h"
#include "profile/machine.h"
#include "perfdata/pd_read.h"
#include "print.h"
#include "base/hash.h"
#include "base/util.h"

#ifndef PA_VERSION
#define PA_VERSION "0.1.0"
#endif

struct report {
	const char *input;
	const char *sort;
	bool sort_given;
	const char *event;
	int children; /* -1: default (children when samples have callchains) */
	int order;    /* -1: default; else enum chain_order */
	double percent_limit;
	double chain_min_percent;
	struct pa_id_list pids, tids;
	struct pa_str_list comms;
	struct pa_str_list pods, containers; /* --pod, --container */
	bool quiet;
	struct machine_opts mopts;
	const char *focus, *ignore; /* --focus, --ignore: regexes, NULL none */
	bool diff;		    /* --diff BASE NEW: the files are argv[optind..] */
	const char *diff_files[2];
	struct diff_opts dopts;
	const char *diff_only; /* the first --diff option given, for the error without it */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pa-report [options]\n"
		"       pa-report --diff [options] BASE NEW\n"
		"  -i, --input FILE          perf.data to read (default perf.data; '-' = stdin)\n"
		"  -s, --sort KEYS           comma list of comm,pid,tid,dso,sym,state,\n"
		"                            cgroup,container,pod (default "
		"comm,dso,sym;\n"
		"                            state: why an offcpu-time sample was off the CPU)\n"
		"      --children            add callees' time to callers (default with call "
		"chains)\n"
		"      --no-children         self time only\n"
		"  -g, --call-graph MODE     caller, callee or none [,MIN_PERCENT]\n"
		"      --percent-limit PCT   hide entries (and call-graph branches) below PCT%%\n"
		"      --event NAME          only this event's section; gpu: per-kernel GPU "
		"summary\n"
		"      --pid PID[,PID...]    only these processes\n"
		"      --tid TID[,TID...]    only these threads\n"
		"      --comm NAME[,NAME...] only these commands\n"
		"      --pod POD[,POD...]    only these Kubernetes pods (UID, or pod_name label)\n"
		"      --container ID[,ID...] only these containers (id, 4+ characters of it, or\n"
		"                            container_name label)\n"
		"      --focus RE            only samples with a function matching RE on the "
		"stack\n"
		"      --ignore RE           no samples with a function matching RE on the "
		"stack\n"
		"      --diff BASE NEW       compare two captures per function (-s self or total)\n"
		"      --diff-abs            --diff: compare samples (ns for time events), not "
		"shares\n"
		"      --rows N              --diff: print the N biggest changes (default 20, 0: "
		"all)\n"
		"      --fail-above PCT      --diff: exit 2 when a function grew more than PCT%%\n"
		"      --min-samples N       --diff: fewer samples in both: no regression (default "
		"50)\n"
		"      --stdio               accepted (the only output mode)\n" PA_SYM_USAGE
		"  -q, --quiet               no header lines, no warnings\n"
		"  -h, --help                this text\n"
		"      --version             print the version\n");
}

static int parse_sort(const char *arg, struct hist_opts *o)
{
	static const char *const names[SK_NR] = {"comm",  "pid",    "tid",	 "dso", "sym",
						 "state", "cgroup", "container", "pod"};
	char *copy = strdup(arg), *tok, *save = NULL;
	int ret = 0;
	size_t k;

	if (!copy)
		return -ENOMEM;
	o->nr_keys = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (k = 0; k < SK_NR; k++)
			if (!strcmp(tok, names[k]))
				break;
		if (k == SK_NR) {
			pa_err("unknown sort key '%s'; use comm, pid, tid, dso, sym, state, "
			       "cgroup, container or pod",
			       tok);
			ret = -EINVAL;
			break;
		}
		if (o->nr_keys < SK_NR)
			o->keys[o->nr_keys++] = k;
	}
	if (!ret && !o->nr_keys) {
		pa_err("empty --sort; use comm, pid, tid, dso, sym, state, cgroup, container or "
		       "pod");
		ret = -EINVAL;
	}
	free(copy);
	return ret;
}

static int parse_call_graph(const char *arg, struct report *rep)
{
	char *copy = strdup(arg), *tok, *save = NULL, *end;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "caller"))
			rep->order = ORDER_CALLER;
		else if (!strcmp(tok, "callee"))
			rep->order = ORDER_CALLEE;
		else if (!strcmp(tok, "none"))
			rep->order = ORDER_NONE;
		else if (!strcmp(tok, "graph"))
			continue;
		else {
			double v = strtod(tok, &end);

			if (end == tok || *end || v < 0 || v > 100) {
				pa_err("bad --call-graph '%s'; use caller, callee or none, "
				       "optionally ,MIN_PERCENT",
				       arg);
				ret = -EINVAL;
				break;
			}
			rep->chain_min_percent = v;
		}
	}
	free(copy);
	return ret;
}

static int parse_percent(const char *arg, double *out)
{
	char *end;
	double v = strtod(arg, &end);

	if (end == arg || (*end && strcmp(end, "%")) || v < 0 || v > 100) {
		pa_err("bad --percent-limit '%s'; give a number from 0 to 100", arg);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

enum {
	OPT_CHILDREN = 256,
	OPT_NO_CHILDREN,
	OPT_PERCENT_LIMIT,
	OPT_EVENT,
	OPT_PID,
	OPT_TID,
	OPT_COMM,
	OPT_POD,
	OPT_CONTAINER,
	OPT_STDIO,
	OPT_VERSION,
	OPT_FOCUS,
	OPT_IGNORE,
	OPT_DIFF,
	OPT_DIFF_ABS,
	OPT_ROWS,
	OPT_FAIL_ABOVE,
	OPT_MIN_SAMPLES,
};

static const struct option long_opts[] = {
	{"input", required_argument, NULL, 'i'},
	{"sort", required_argument, NULL, 's'},
	{"children", no_argument, NULL, OPT_CHILDREN},
	{"no-children", no_argument, NULL, OPT_NO_CHILDREN},
	{"call-graph", required_argument, NULL, 'g'},
	{"percent-limit", required_argument, NULL, OPT_PERCENT_LIMIT},
	{"event", required_argument, NULL, OPT_EVENT},
	{"pid", required_argument, NULL, OPT_PID},
	{"tid", required_argument, NULL, OPT_TID},
	{"comm", required_argument, NULL, OPT_COMM},
	{"pod", required_argument, NULL, OPT_POD},
	{"container", required_argument, NULL, OPT_CONTAINER},
	{"stdio", no_argument, NULL, OPT_STDIO},
	{"focus", required_argument, NULL, OPT_FOCUS},
	{"ignore", required_argument, NULL, OPT_IGNORE},
	{"diff", no_argument, NULL, OPT_DIFF},
	{"diff-abs", no_argument, NULL, OPT_DIFF_ABS},
	{"rows", required_argument, NULL, OPT_ROWS},
	{"fail-above", required_argument, NULL, OPT_FAIL_ABOVE},
	{"min-samples", required_argument, NULL, OPT_MIN_SAMPLES},
	PA_SYM_OPTIONS,
	{"quiet", no_argument, NULL, 'q'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, OPT_VERSION},
	{},
};

/* --fail-above: a growth in percent, 0 or more ("20", "20%", "2.5"). */
static int parse_growth(const char *arg, double *out)
{
	char *end;
	double v = strtod(arg, &end);

	if (end == arg || (*end && strcmp(end, "%")) || !(v >= 0) || isinf(v)) {
		pa_err("bad --fail-above '%s'; give a percentage of growth, 0 or more", arg);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int parse_count(const char *arg, const char *opt, uint64_t *out)
{
	if (pa_parse_u64(arg, out)) {
		pa_err("bad %s '%s'; give a whole number, 0 or more", opt, arg);
		return -EINVAL;
	}
	return 0;
}

/* --diff: two files, and --sort self or total. */
static int diff_args(int argc, char **argv, struct report *rep)
{
	if (argc - optind != 2 || rep->input) {
		pa_err("--diff takes two files: pa-report --diff BASE NEW");
		return -1;
	}
	rep->diff_files[0] = argv[optind];
	rep->diff_files[1] = argv[optind + 1];
	if (!rep->sort_given || !strcmp(rep->sort, "self"))
		rep->dopts.total = false;
	else if (!strcmp(rep->sort, "total"))
		rep->dopts.total = true;
	else {
		pa_err("bad --sort '%s' with --diff; use self or total", rep->sort);
		return -1;
	}
	return 0;
}

/* 0 to go on, 1 to exit 0 (help/version), -1 to exit 1. */
static int parse_args(int argc, char **argv, struct report *rep, struct hist_opts *ho)
{
	int c;

	while ((c = getopt_long(argc, argv, "i:s:g:qh", long_opts, NULL)) != -1) {
		if (pa_sym_opt(c, optarg, &rep->mopts))
			continue;
		switch (c) {
		case 'i':
			rep->input = optarg;
			break;
		case 's':
			rep->sort = optarg;
			rep->sort_given = true;
			break;
		case 'g':
			if (parse_call_graph(optarg, rep))
				return -1;
			break;
		case OPT_CHILDREN:
			rep->children = 1;
			break;
		case OPT_NO_CHILDREN:
			rep->children = 0;
			break;
		case OPT_PERCENT_LIMIT:
			if (parse_percent(optarg, &rep->percent_limit))
				return -1;
			/* perf: the limit applies to call-graph branches too */
			rep->chain_min_percent = rep->percent_limit;
			break;
		case OPT_EVENT:
			rep->event = optarg;
			break;
		case OPT_PID:
			if (pa_id_list_parse(&rep->pids, optarg, "--pid"))
				return -1;
			break;
		case OPT_TID:
			if (pa_id_list_parse(&rep->tids, optarg, "--tid"))
				return -1;
			break;
		case OPT_COMM:
			if (pa_str_list_parse(&rep->comms, optarg))
				return -1;
			break;
		case OPT_POD:
			if (pa_str_list_parse(&rep->pods, optarg))
				return -1;
			break;
		case OPT_CONTAINER:
			if (pa_str_list_parse(&rep->containers, optarg))
				return -1;
			break;
		case OPT_STDIO:
			break;
		case OPT_FOCUS:
			rep->focus = optarg;
			break;
		case OPT_IGNORE:
			rep->ignore = optarg;
			break;
		case OPT_DIFF:
			rep->diff = true;
			break;
		case OPT_DIFF_ABS:
			rep->dopts.abs = true;
			rep->diff_only = "--diff-abs";
			break;
		case OPT_ROWS: {
			uint64_t v;

			if (parse_count(optarg, "--rows", &v))
				return -1;
			rep->dopts.rows = v;
			rep->diff_only = "--rows";
			break;
		}
		case OPT_FAIL_ABOVE:
			if (parse_growth(optarg, &rep->dopts.fail_above))
				return -1;
			rep->diff_only = "--fail-above";
			break;
		case OPT_MIN_SAMPLES:
			if (parse_count(optarg, "--min-samples", &rep->dopts.min_samples))
				return -1;
			rep->diff_only = "--min-samples";
			break;
		case 'q':
			rep->quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case OPT_VERSION:
			printf("pa-report %s\n", PA_VERSION);
			return 1;
		default:
			fprintf(stderr, "Try 'pa-report --help' for more information.\n");
			return -1;
		}
	}
	if (rep->diff)
		return diff_args(argc, argv, rep);
	/* A script's --fail-above without --diff would never fail: say so. */
	if (rep->diff_only) {
		pa_err("%s goes with --diff BASE NEW", rep->diff_only);
		return -1;
	}
	if (optind < argc) {
		pa_err("unexpected argument '%s'; the input file goes after -i", argv[optind]);
		return -1;
	}
	return parse_sort(rep->sort, ho) ? -1 : 0;
}

static int report_event(struct report *rep, const struct cg_profile *cg, size_t idx,
			const struct hist_opts *base)
{
	const struct cg_event *ev = cg_event(cg, idx);
	struct hist_opts ho = *base;
	struct print_opts po = {
		.header = !rep->quiet,
		.percent_limit = rep->percent_limit,
		.chain_min_percent = rep->chain_min_percent,
		.skip_first_sym = rep->sort_given && !strncmp(rep->sort, "sym", 3),
	};
	struct hists h;
	int err;

	/* Like perf: children and graphs need call chains. */
	ho.children = ev->callchain && rep->children != 0;
	if (!ev->callchain)
		ho.order = ORDER_NONE;
	else if (rep->order >= 0)
		ho.order = rep->order;
	else
		ho.order = ho.children ? ORDER_CALLER : ORDER_CALLEE;

	ho.chain_min_percent = rep->chain_min_percent;
	err = hists_build(&h, cg, idx, &ho);
	if (!err) {
		hists_sort(&h);
		if (!h.entries && h.nr_entries)
			err = -ENOMEM;
	}
	if (err) {
		pa_err("out of memory building the report");
		hists_free(&h);
		return err;
	}
	report_print(stdout, &h, ev, &po);
	hists_free(&h);
	return 0;
}

static bool sorts_by(const struct hist_opts *ho, enum sort_key k)
{
	size_t i;

	for (i = 0; i < ho->nr_keys; i++)
		if (ho->keys[i] == k)
			return true;
	return false;
}

/* Whether a filter of the samples' threads, pods or containers is given. */
static bool filtered(const struct report *rep)
{
	return rep->pids.nr || rep->tids.nr || rep->comms.nr || rep->pods.nr || rep->containers.nr;
}

/* --event gpu: the per-kernel summary.  The exit status. */
static int report_gpu(const struct report *rep, const struct cg_profile *cg, const char *name)
{
	switch (report_gpu_summary(stdout, cg, !rep->quiet)) {
	case 0:
		if (filtered(rep))
			pa_err("%s: no GPU samples match the filters", name);
		else
			pa_err("%s: no GPU samples; record them with pa-record --gpu", name);
		return 1;
	case 1:
		break;
	default:
		pa_err("out of memory");
		return 1;
	}
	if (fflush(stdout) || ferror(stdout)) {
		pa_err("writing the report: %s", strerror(errno));
		return 1;
	}
	return 0;
}

/* --diff: both files loaded with the same filters, then compared.  The exit status. */
static int report_diffs(struct report *rep, const struct cg_filter *filter, struct focus *fo)
{
	struct pa_input in[2] = {0};
	struct cg_profile *cg[2] = {NULL, NULL};
	struct diff_input di[2];
	int c, ret = 1, err;

	for (c = 0; c < 2; c++) {
		cg[c] = cg_new();
		if (!cg[c]) {
			pa_err("out of memory");
			goto out;
		}
		if (pa_input_load(&in[c], rep->diff_files[c], &rep->mopts, cg[c], filter))
			goto out;
		if (fo && focus_apply(fo, cg[c]) < 0) {
			pa_err("out of memory");
			goto out;
		}
		di[c] = (struct diff_input){.name = in[c].name, .cg = cg[c]};
	}
	rep->dopts.event = rep->event;
	rep->dopts.header = !rep->quiet;
	err = report_diff(stdout, di, &rep->dopts);
	if (err < 0)
		goto out;
	if (fflush(stdout) || ferror(stdout)) {
		pa_err("writing the report: %s", strerror(errno));
		goto out;
	}
	ret = err;
out:
	for (c = 0; c < 2; c++) {
		pa_input_close(&in[c]);
		cg_free(cg[c]);
	}
	return ret;
}

int main(int argc, char **argv)
{
	struct report rep = {
		.sort = "comm,dso,sym",
		.children = -1,
		.order = -1,
		.chain_min_percent = 0.5,
		.dopts = {.rows = 20, .fail_above = -1, .min_samples = 50},
	};
	struct hist_opts ho = {0};
	struct pa_input in = {0};
	struct cg_profile *cg = NULL;
	struct focus *fo = NULL;
	struct cg_filter filter;
	char names[256], err[512];
	size_t i, shown = 0;
	int ret = 1, sel = -1;
	bool gpu_summary;

	pa_set_progname("pa-report");
	pa_malloc_tables();
	switch (parse_args(argc, argv, &rep, &ho)) {
	case 1:
		ret = 0;
		goto out;
	case -1:
		goto out;
	}
	pa_set_quiet(rep.quiet);

	/* Compiled first: a bad pattern fails before a large file is read. */
	if (rep.focus || rep.ignore) {
		fo = focus_new(rep.focus, rep.ignore, err, sizeof(err));
		if (!fo) {
			pa_err("%s", err);
			goto out;
		}
	}
	filter = (struct cg_filter){
		.pids = rep.pids.ids,
		.nr_pids = rep.pids.nr,
		.tids = rep.tids.ids,
		.nr_tids = rep.tids.nr,
		.comms = (const char *const *)rep.comms.strs,
		.nr_comms = rep.comms.nr,
		.pods = (const char *const *)rep.pods.strs,
		.nr_pods = rep.pods.nr,
		.containers = (const char *const *)rep.containers.strs,
		.nr_containers = rep.containers.nr,
	};
	if (rep.diff) {
		ret = report_diffs(&rep, &filter, fo);
		goto out;
	}
	cg = cg_new();
	if (!cg) {
		pa_err("out of memory");
		goto out;
	}
	/* --event gpu, unless the file has an event of that name: the GPU summary. */
	gpu_summary = rep.event && !strcmp(rep.event, "gpu");
	/* Flat output needs the leaves only: skip symbolizing whole chains.  Not when
	 * sorting by state, nor for the GPU summary: a wait on the GPU is told by a
	 * caller (cudaStreamSynchronize); nor for --focus/--ignore, which match callers. */
	cg_set_leaf_only(cg, rep.children == 0 && rep.order == ORDER_NONE &&
				     !sorts_by(&ho, SK_STATE) && !gpu_summary && !fo);
	if (pa_input_load(&in, rep.input, &rep.mopts, cg, &filter))
		goto out;
	if (fo && focus_apply(fo, cg) < 0) {
		pa_err("out of memory");
		goto out;
	}

	if (gpu_summary && cg_find_event(cg, "gpu") < 0) {
		ret = report_gpu(&rep, cg, in.name);
		goto out;
	}
	if (rep.event) {
		sel = cg_find_event(cg, rep.event);
		if (sel < 0) {
			pa_err("no event '%s' in %s; events: %s", rep.event, in.name,
			       pa_input_event_names(cg, names, sizeof(names)));
			goto out;
		}
	}
	for (i = 0; i < cg_nr_events(cg); i++) {
		const struct cg_event *ev = cg_event(cg, i);

		if (sel >= 0 ? (int)i != sel : !ev->samples)
			continue;
		if (shown++)
			fputs("\n", stdout);
		if (report_event(&rep, cg, i, &ho))
			goto out;
	}
	if (!shown) {
		if (!cg_nr_events(cg)) {
			pa_err("%s: no events recorded; record some with pa-record", in.name);
			goto out;
		}
		if (report_event(&rep, cg, 0, &ho))
			goto out;
		pa_warn("%s: no samples%s", in.name,
			filtered(&rep) || fo ? " match the filters" : "");
	}
	if (fflush(stdout) || ferror(stdout)) {
		pa_err("writing the report: %s", strerror(errno));
		goto out;
	}
	ret = 0;
out:
	pa_input_close(&in);
	cg_free(cg);
	focus_free(fo);
	pa_id_list_free(&rep.pids);
	pa_id_list_free(&rep.tids);
	pa_str_list_free(&rep.comms);
	pa_str_list_free(&rep.pods);
	pa_str_list_free(&rep.containers);
	return ret;
}
