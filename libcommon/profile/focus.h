/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pprof's -focus and -ignore on a loaded profile: keep only the stacks that have a
 * frame whose name matches the focus regex, then drop those that have a frame
 * matching the ignore regex.  A stack's frames are every frame of every location,
 * inlined ones included, matched by the name reports print (cg_frame.name).
 * Patterns are POSIX extended regexes, unanchored (as pprof's are).
 *
 *	struct focus *fo = focus_new(focus_re, ignore_re, err, sizeof(err));
 *	...load cg...
 *	focus_apply(fo, cg);
 *	focus_free(fo);
 */
#ifndef PA_FOCUS_H
#define PA_FOCUS_H

#include <stddef.h>
#include <sys/types.h>

#include "profile/callgraph.h"

struct focus;

/*
 * Compile the patterns (either may be NULL: no such filter).  NULL with errno set on
 * failure, with one line in err naming the option and regerror's text:
 * "bad --focus 'a(': Missing ')'".
 */
struct focus *focus_new(const char *focus_re, const char *ignore_re, char *err, size_t errlen);
void focus_free(struct focus *fo);

/*
 * Drop cg's stacks that the patterns reject (cg_keep_stacks: their count and period
 * become 0 and leave their event's totals).  Each function's name is matched once.
 * The number of stacks dropped, or -ENOMEM.  fo may be used on several profiles.
 */
ssize_t focus_apply(struct focus *fo, struct cg_profile *cg);

#endif /* PA_FOCUS_H */
