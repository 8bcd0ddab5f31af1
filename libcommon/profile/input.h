/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What pa-report and pa-convert do first: open the perf.data named on the command
 * line (or stdin when it is a pipe), replay it through a machine, and aggregate the
 * samples into a cg_profile; plus the parsing of their filter lists.  Errors are
 * printed here, once, in the commands' one-line style.
 */
#ifndef PA_INPUT_H
#define PA_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "profile/callgraph.h"
#include "profile/machine.h"
#include "perfdata/pd_read.h"

struct pa_input {
	const char *name; /* the path, or "stdin": for messages */
	struct pd_reader *r;
	struct machine *m;
};

/*
 * path NULL: "perf.data", or stdin when stdin is a pipe; "-": stdin.  Prints the
 * error (missing file with the hint to record one, bad magic, truncation) and
 * returns -errno on failure; the machine's warnings are printed unless quiet.
 * mopts: the symbolizer's options (NULL: defaults).
 */
int pa_input_load(struct pa_input *in, const char *path, const struct machine_opts *mopts,
		  struct cg_profile *cg, const struct cg_filter *filter);
void pa_input_close(struct pa_input *in);

/*
 * The symbolizer options pa-report and pa-convert share, as getopt_long entries:
 * splice PA_SYM_OPTIONS into the long options and hand every option to
 * pa_sym_opt first.  Values are above both commands' own option codes.
 */
enum { PA_OPT_NO_DEMANGLE = 512, PA_OPT_NO_INLINE, PA_OPT_DEBUGINFOD };
#define PA_SYM_OPTIONS                                                                             \
	{"no-demangle", no_argument, NULL, PA_OPT_NO_DEMANGLE},                                    \
		{"no-inline", no_argument, NULL, PA_OPT_NO_INLINE},                                \
	{                                                                                          \
		"debuginfod", required_argument, NULL, PA_OPT_DEBUGINFOD                           \
	}
#define PA_SYM_USAGE                                                                               \
	"      --no-demangle         keep C++/Rust symbol names mangled\n"                         \
	"      --no-inline           no inlined-function frames, no DWARF line lookup\n"           \
	"      --debuginfod URL      fetch debug info from URL (\"\": none; default: "             \
	"$DEBUGINFOD_URLS)\n"
/* 1 when c was one of PA_SYM_OPTIONS (applied to o), else 0. */
int pa_sym_opt(int c, const char *arg, struct machine_opts *o);

/*
 * The capture's labels, pa-record's --tag KEY=VALUE: from the recorder's command line
 * (the CMDLINE header, which perf report --header shows too), up to the "--" before
 * a command.  Up to max "KEY=VALUE" strings into tags (the reader's); how many.
 */
#define PA_MAX_TAGS 8
size_t pa_input_tags(const struct pa_input *in, const char **tags, size_t max);

/* "a, b, c": the event names of cg, into buf. */
const char *pa_input_event_names(const struct cg_profile *cg, char *buf, size_t len);

/* Comma-separated lists given with repeatable options (--pid 1,2 --pid 3). */
struct pa_id_list {
	uint32_t *ids;
	size_t nr;
};
struct pa_str_list {
	char **strs;
	size_t nr;
};
/* Append arg's items; on a bad item prints "bad OPT 'x'; ..." and returns -EINVAL. */
int pa_id_list_parse(struct pa_id_list *l, const char *arg, const char *opt);
int pa_str_list_parse(struct pa_str_list *l, const char *arg);
void pa_id_list_free(struct pa_id_list *l);
void pa_str_list_free(struct pa_str_list *l);

#endif /* PA_INPUT_H */
