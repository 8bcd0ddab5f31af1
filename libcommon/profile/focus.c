// SPDX-License-Identifier: Apache-2.0
/*
 * Stacks share their locations and locations their functions, so a pattern is run
 * once per function (frames of one function share its name) and a location's verdict
 * once per location: a large capture's millions of stacks then cost a byte lookup
 * per location each.
 */
#include <errno.h>
#include <regex.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "profile/focus.h"

enum { FOCUS_RE, IGNORE_RE, NR_RE };

/* Per function and per location: matched yet, and by which pattern. */
#define SEEN	 1u
#define M_FOCUS	 2u
#define M_IGNORE 4u

struct focus {
	regex_t re[NR_RE];
	bool has[NR_RE];
	uint8_t *func_bits; /* while applying: per cg function id */
	uint8_t *loc_bits;  /* per cg location id */
};

struct focus *focus_new(const char *focus_re, const char *ignore_re, char *err, size_t errlen)
{
	static const char *const opt[NR_RE] = {"--focus", "--ignore"};
	const char *pat[NR_RE] = {focus_re, ignore_re};
	struct focus *fo = calloc(1, sizeof(*fo));
	int i, rc;

	if (!fo) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < NR_RE; i++) {
		if (!pat[i])
			continue;
		rc = regcomp(&fo->re[i], pat[i], REG_EXTENDED | REG_NOSUB);
		if (rc) {
			char why[256];

			regerror(rc, &fo->re[i], why, sizeof(why));
			snprintf(err, errlen, "bad %s '%s': %s", opt[i], pat[i], why);
			regfree(&fo->re[i]);
			focus_free(fo);
			errno = rc == REG_ESPACE ? ENOMEM : EINVAL;
			return NULL;
		}
		fo->has[i] = true;
	}
	return fo;
}

void focus_free(struct focus *fo)
{
	int i;

	if (!fo)
		return;
	for (i = 0; i < NR_RE; i++)
		if (fo->has[i])
			regfree(&fo->re[i]);
	free(fo->func_bits);
	free(fo->loc_bits);
	free(fo);
}

static uint8_t frame_bits(struct focus *fo, const struct cg_frame *f)
{
	uint8_t *b = &fo->func_bits[f->func];

	if (!*b) {
		*b = SEEN;
		if (f->name && fo->has[FOCUS_RE] &&
		    !regexec(&fo->re[FOCUS_RE], f->name, 0, NULL, 0))
			*b |= M_FOCUS;
		if (f->name && fo->has[IGNORE_RE] &&
		    !regexec(&fo->re[IGNORE_RE], f->name, 0, NULL, 0))
			*b |= M_IGNORE;
	}
	return *b;
}

static uint8_t loc_bits(struct focus *fo, const struct cg_profile *cg, uint32_t id)
{
	uint8_t *b = &fo->loc_bits[id];

	if (!*b) {
		const struct cg_loc *l = cg_loc(cg, id);
		uint32_t k;

		*b = SEEN;
		for (k = 0; k < l->nr_frames; k++)
			*b |= frame_bits(fo, cg_frame(cg, l->frame + k));
	}
	return *b;
}

static bool keep(const struct cg_profile *cg, const struct cg_stack *s, void *ctx)
{
	struct focus *fo = ctx;
	uint8_t any = 0;
	uint32_t i;

	for (i = 0; i < s->nr; i++)
		any |= loc_bits(fo, cg, s->locs[i]);
	if (fo->has[FOCUS_RE] && !(any & M_FOCUS))
		return false;
	return !(fo->has[IGNORE_RE] && (any & M_IGNORE));
}

ssize_t focus_apply(struct focus *fo, struct cg_profile *cg)
{
	ssize_t dropped;

	if (!fo->has[FOCUS_RE] && !fo->has[IGNORE_RE])
		return 0;
	/* Ids are the profile's own: start afresh for each one. */
	free(fo->func_bits);
	free(fo->loc_bits);
	fo->func_bits = calloc(cg_nr_funcs(cg) + 1, 1);
	fo->loc_bits = calloc(cg_nr_locs(cg) + 1, 1);
	if (!fo->func_bits || !fo->loc_bits)
		return -ENOMEM;
	dropped = cg_keep_stacks(cg, keep, fo);
	free(fo->func_bits);
	free(fo->loc_bits);
	fo->func_bits = fo->loc_bits = NULL;
	return dropped;
}
