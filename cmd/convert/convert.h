/* SPDX-License-Identifier: Apache-2.0 */
/* pa-convert's output writers: each renders a cg_profile into a malloc'd buffer. */
#ifndef PA_CONVERT_H
#define PA_CONVERT_H

#include <stddef.h>
#include <stdint.h>

#include "profile/callgraph.h"

/*
 * Folded stacks of event ev: "comm;root;...;leaf COUNT\n" per distinct line, sorted
 * by text; kernel frames end in "_[k]".  COUNT is samples, except for offcpu-time
 * where it is nanoseconds off the CPU.  0 or -ENOMEM.
 */
int folded_render(const struct cg_profile *cg, uint32_t ev, char **out, size_t *len);

#endif /* PA_CONVERT_H */
