/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The adapter's own per-kernel totals, for checking it where no recorder can attach
 * (a machine without BPF): with PA_GPU_ADAPTER_TOTALS=FILE, every batch of records is
 * summed per kernel (copy, set) as well as handed to the records probe, and FILE is
 * written at exit, one line per name:
 *
 *	COUNT TOTAL_NS NAME
 *
 * NAME is the kernel's mangled name, or [memcpy KIND] / [memset].  Off unless asked.
 */
#ifndef PA_GPU_TOTALS_H
#define PA_GPU_TOTALS_H

#include <stdint.h>

#include "probes.h"

/* A pa_gpu_deliver_fn: sum the batch, then fire the records probe with it. */
void pa_gpu_totals_deliver(const struct pa_gpu_rec *recs, uint32_t n, uint64_t unobserved);
/* Write the totals to path (through a temporary file).  0, or -1 with errno. */
int pa_gpu_totals_write(const char *path);

#endif /* PA_GPU_TOTALS_H */
