// SPDX-License-Identifier: Apache-2.0
/*
 * Folded stacks, the input of flamegraph.pl and speedscope: like stackcollapse-perf
 * --all --inline, so existing flame-graph tooling reads it unchanged.  Different stacks can
 * print the same text (two addresses of one function), so lines are merged after
 * rendering, by sorting.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "profile/offcpu.h"

struct line {
	char *text;
	uint64_t count;
};

static int cmp_lines(const void *pa, const void *pb)
{
	return strcmp(((const struct line *)pa)->text, ((const struct line *)pb)->text);
}

/* "comm;root;...;leaf" for stack s. */
static char *render_stack(const struct cg_profile *cg, const struct cg_stack *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	size_t i;

	if (!f)
		return NULL;
	fputs(s->comm, f);
	for (i = s->nr; i-- > 0;) {
		const struct cg_loc *l = cg_loc(cg, s->locs[i]);
		uint32_t k;

		/* Inlined functions as stackcollapse-perf --inline marks them (flamegraph.pl
		 * colours "_[i]" frames as inlined): above their real function. */
		for (k = l->nr_frames; k-- > 0;) {
			const struct cg_frame *fr = cg_frame(cg, l->frame + k);

			fprintf(f, ";%s%s", fr->name,
				fr->kernel    ? "_[k]"
				: fr->inlined ? "_[i]"
					      : "");
		}
	}
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	/* ';' separates frames and ' ' the count: keep names from forging either. */
	for (i = 0; i < len; i++)
		if (buf[i] == ' ' || buf[i] == '\n')
			buf[i] = '_';
	return buf;
}

int folded_render(const struct cg_profile *cg, uint32_t ev, char **out, size_t *len)
{
	size_t ns = cg_nr_stacks(cg), n = 0, i;
	const struct cg_event *e = cg_event(cg, ev);
	/* Off-CPU samples differ in length: what a flame graph must weigh is the time. */
	bool by_time = e && e->name && !strcmp(e->name, OFFCPU_EVENT);
	struct line *lines = calloc(ns ? ns : 1, sizeof(*lines));
	FILE *f = NULL;
	int err = -ENOMEM;

	*out = NULL;
	*len = 0;
	if (!lines)
		return -ENOMEM;
	for (i = 0; i < ns; i++) {
		const struct cg_stack *s = cg_stack(cg, i);

		if (s->event != ev)
			continue;
		lines[n].text = render_stack(cg, s);
		if (!lines[n].text)
			goto out;
		lines[n++].count = by_time ? s->period : s->count;
	}
	qsort(lines, n, sizeof(*lines), cmp_lines);
	f = open_memstream(out, len);
	if (!f)
		goto out;
	for (i = 0; i < n; i++) {
		uint64_t count = lines[i].count;

		while (i + 1 < n && !strcmp(lines[i].text, lines[i + 1].text))
			count += lines[++i].count;
		fprintf(f, "%s %" PRIu64 "\n", lines[i].text, count);
	}
	if (fclose(f) == 0)
		err = 0;
	f = NULL;
out:
	for (i = 0; i < n; i++)
		free(lines[i].text);
	free(lines);
	if (err) {
		free(*out);
		*out = NULL;
		*len = 0;
	}
	return err;
}
