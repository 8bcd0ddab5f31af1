// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile/input.h"
#include "base/util.h"

int pa_input_load(struct pa_input *in, const char *path, const struct machine_opts *mopts,
		  struct cg_profile *cg, const struct cg_filter *filter)
{
	static const struct machine_opts defaults;
	struct stat st;
	char err[512] = "";
	const char *w;
	int ret;

	memset(in, 0, sizeof(*in));
	if (!path)
		path = !fstat(STDIN_FILENO, &st) && S_ISFIFO(st.st_mode) ? "-" : "perf.data";
	in->name = strcmp(path, "-") ? path : "stdin";
	/* The reader's open error lacks the hint a first-time user needs. */
	if (strcmp(path, "-") && stat(path, &st)) {
		ret = -errno;
		pa_err("cannot open %s: %s%s", path, strerror(-ret),
		       ret == -ENOENT ? " (record one with pa-record)" : "");
		return ret;
	}
	in->r = pd_reader_open(path, err, sizeof(err));
	if (!in->r) {
		ret = errno ? -errno : -EINVAL;
		pa_err("%s", err[0] ? err : strerror(-ret));
		return ret;
	}
	/* Per-CPU buffers interleave: a COMM or MMAP2 may follow samples that need it. */
	pd_reader_set_ordered(in->r, true);
	pd_reader_read_ahead(in->r);
	in->m = machine_new(mopts ? mopts : &defaults);
	if (!in->m) {
		pa_err("out of memory");
		return -ENOMEM;
	}
	if (!pd_reader_is_pipe(in->r))
		machine_add_build_ids(in->m, in->r);
	cg_set_count_thread(cg, true);
	ret = cg_load(cg, in->r, in->m, filter, err, sizeof(err));
	if (ret) {
		pa_err("%s", err);
		return ret;
	}
	w = machine_warning(in->m);
	if (w && !pa_quiet())
		pa_warn("%s", w);
	if (pd_reader_nr_unknown_id(in->r) && !pa_quiet())
		pa_warn("%s: %llu samples name an event id the file does not describe; left out",
			in->name, (unsigned long long)pd_reader_nr_unknown_id(in->r));
	return 0;
}

void pa_input_close(struct pa_input *in)
{
	machine_free(in->m);
	pd_reader_close(in->r);
	in->m = NULL;
	in->r = NULL;
}

int pa_sym_opt(int c, const char *arg, struct machine_opts *o)
{
	switch (c) {
	case PA_OPT_NO_DEMANGLE:
		o->no_demangle = true;
		return 1;
	case PA_OPT_NO_INLINE:
		o->no_inline = true;
		return 1;
	case PA_OPT_DEBUGINFOD:
		o->debuginfod_urls = arg;
		return 1;
	}
	return 0;
}

size_t pa_input_tags(const struct pa_input *in, const char **tags, size_t max)
{
	const char *const *argv;
	const char *prog, *v;
	size_t n = 0;
	int argc, i;

	if (!in->r)
		return 0;
	argv = pd_reader_argv(in->r, &argc);
	if (!argv || argc < 1)
		return 0;
	prog = strrchr(argv[0], '/');
	prog = prog ? prog + 1 : argv[0];
	if (strcmp(prog, "pa-record"))
		return 0;
	for (i = 1; i < argc && n < max && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--tag") && i + 1 < argc)
			v = argv[++i];
		else if (!strncmp(argv[i], "--tag=", 6))
			v = argv[i] + 6;
		else
			continue;
		if (strchr(v, '=') && v[0] != '=')
			tags[n++] = v;
	}
	return n;
}

const char *pa_input_event_names(const struct cg_profile *cg, char *buf, size_t len)
{
	size_t i, off = 0;

	buf[0] = '\0';
	for (i = 0; i < cg_nr_events(cg) && off < len; i++) {
		const char *name = cg_event(cg, i)->name;
		int n = snprintf(buf + off, len - off, "%s%s", i ? ", " : "",
				 name ? name : "[unknown]");

		if (n < 0)
			break;
		off += n;
	}
	return buf;
}

int pa_id_list_parse(struct pa_id_list *l, const char *arg, const char *opt)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;
		uint32_t *ids;

		if (pa_parse_u64(tok, &v) || v > UINT32_MAX) {
			pa_err("bad %s '%s'; give numeric ids separated by commas", opt, tok);
			ret = -EINVAL;
			break;
		}
		ids = realloc(l->ids, (l->nr + 1) * sizeof(*ids));
		if (!ids) {
			ret = -ENOMEM;
			break;
		}
		l->ids = ids;
		l->ids[l->nr++] = v;
	}
	free(copy);
	return ret;
}

int pa_str_list_parse(struct pa_str_list *l, const char *arg)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char **strs = realloc(l->strs, (l->nr + 1) * sizeof(*strs));

		if (!strs) {
			ret = -ENOMEM;
			break;
		}
		l->strs = strs;
		l->strs[l->nr] = strdup(tok);
		if (!l->strs[l->nr]) {
			ret = -ENOMEM;
			break;
		}
		l->nr++;
	}
	free(copy);
	return ret;
}

void pa_id_list_free(struct pa_id_list *l)
{
	free(l->ids);
	l->ids = NULL;
	l->nr = 0;
}

void pa_str_list_free(struct pa_str_list *l)
{
	size_t i;

	for (i = 0; i < l->nr; i++)
		free(l->strs[i]);
	free(l->strs);
	l->strs = NULL;
	l->nr = 0;
}
