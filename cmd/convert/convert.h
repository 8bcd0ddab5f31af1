/* SPDX-License-Identifier: Apache-2.0 */
/* pa-convert's output writers: each renders a cg_profile into a malloc'd buffer. */
#ifndef PA_CONVERT_H
#define PA_CONVERT_H

#include <stddef.h>
#include <stdint.h>

#include "profile/callgraph.h"

/* Where folded_render's text goes, a piece at a time: 0 or -errno. */
typedef int (*folded_write_fn)(void *ctx, const char *buf, size_t len);

/*
 * Folded stacks of event ev: "comm;root;...;leaf COUNT\n" per distinct line, sorted
 * by text; kernel frames end in "_[k]".  COUNT is samples, except for offcpu-time
 * where it is nanoseconds off the CPU.  The text goes to write in pieces of about a
 * MiB.  0, -ENOMEM, or what write returned.
 */
int folded_render(const struct cg_profile *cg, uint32_t ev, folded_write_fn write, void *ctx);

#endif /* PA_CONVERT_H */
