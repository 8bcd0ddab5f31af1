/* SPDX-License-Identifier: Apache-2.0 */
/* The events pa-record --gpu writes (docs/gpu.md), as their readers name them. */
#ifndef PA_GPU_EVENTS_H
#define PA_GPU_EVENTS_H

/* One sample per kernel launch under its stack, period 1: launches are counted. */
#define GPU_LAUNCH_EVENT "gpu-launch"
/* One sample per kernel, copy or set the CUDA adapter timed, under its launch's
 * stack: period = ns on the GPU. */
#define GPU_TIME_EVENT "gpu-time"

#endif /* PA_GPU_EVENTS_H */
