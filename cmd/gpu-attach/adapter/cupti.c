// SPDX-License-Identifier: Apache-2.0
/*
 * The CUDA adapter, libpa-gpu-adapter.so.  The CUDA driver loads it into a process
 * started by pa-gpu-attach (CUDA_INJECTION64_PATH) and calls InitializeInjection,
 * its one exported symbol.  It subscribes to CUPTI and fires the probes of
 * bpf/gpu.h: launch at each kernel launch, in the launching thread, and records
 * with the GPU times of kernels, copies and sets, flushed every 100 ms.
 *
 * libcupti is opened at run time, not linked: a PyTorch install carries its own
 * copy, the toolkit another.  PA_CUPTI_LIB names one; else the loader's path, then
 * the toolkit's lib64.  Where CUPTI cannot be had, or another tool (Nsight,
 * torch.profiler) holds its subscription, the adapter says so once and stays out
 * of the way: the application runs as it would without it.
 */
#include <cupti.h>
#include <cupti_activity_deprecated.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes.h"
#include "totals.h"

#define EXPORT __attribute__((visibility("default")))

#define ACT_BUF (1u << 20) /* one CUPTI activity buffer */

/* The CUPTI functions the adapter uses, from dlopen. */
static struct {
	CUptiResult (*Subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
	CUptiResult (*EnableCallback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
				      CUpti_CallbackId);
	CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc,
						 CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*ActivityEnable)(CUpti_ActivityKind);
	CUptiResult (*ActivityGetNextRecord)(uint8_t *, size_t, CUpti_Activity **);
	CUptiResult (*ActivityFlushAll)(uint32_t);
	CUptiResult (*ActivityFlushPeriod)(uint32_t);
	CUptiResult (*GetTimestamp)(uint64_t *);
	CUptiResult (*GetResultString)(CUptiResult, const char **);
} cupti;

static struct pa_gpu_batcher batcher;
static int64_t clock_offset; /* CLOCK_MONOTONIC - CUPTI's clock */
static __thread int in_runtime_launch;

/* One line on stderr: the adapter speaks once, when it cannot do its job. */
static void __attribute__((format(printf, 1, 2))) say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "pa-gpu-adapter: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static const char *cupti_error(CUptiResult r)
{
	const char *s = NULL;

	if (cupti.GetResultString && cupti.GetResultString(r, &s) == CUPTI_SUCCESS && s)
		return s;
	return "CUPTI error";
}

static const CUpti_CallbackId runtime_launches[] = {
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernelMultiDevice_v9000,
	CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
	CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000,
};

static const CUpti_CallbackId driver_launches[] = {
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
	CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
	CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
};

/* Copies and sets: their records carry the call's correlation id as well, so the
 * call's stack is taken like a launch's. */
static const CUpti_CallbackId runtime_copies[] = {
	CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000,
	CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000,
	CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2D_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DAsync_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy3D_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy3DAsync_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeer_v4000,
	CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeerAsync_v4000,
	CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyToSymbol_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyFromSymbol_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaMemset_ptds_v7000,
	CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_ptsz_v7000,
};

static const CUpti_CallbackId driver_copies[] = {
	CUPTI_DRIVER_TRACE_CBID_cuMemcpy,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2,
	CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2,
	CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async,
	CUPTI_DRIVER_TRACE_CBID_cuMemsetD32_v2,
	CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async,
};

/* Launch (copy, set) callbacks: runtime calls, and driver calls not made by one. */
static void CUPTIAPI on_launch(void *ud, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
			       const void *data)
{
	const CUpti_CallbackData *cb = data;
	bool enter = cb->callbackSite == CUPTI_API_ENTER;

	(void)ud;
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
		in_runtime_launch += enter ? 1 : -1;
		if (!enter)
			return;
	} else if (domain != CUPTI_CB_DOMAIN_DRIVER_API || !enter || in_runtime_launch) {
		return;
	}
	pa_gpu_launch(cb->correlationId, cbid, cb->functionName);
}

static void CUPTIAPI buffer_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
	*buf = aligned_alloc(8, ACT_BUF);
	*size = *buf ? ACT_BUF : 0;
	*max_records = 0;
}

/*
 * A libcupti writes its kernel records in the layout of its own version: CUDA 11.0's
 * CUpti_ActivityKernel5 to CUDA 13's CUpti_ActivityKernel10.  They are read as the
 * last; every field read sits at one offset in all of them.
 */
#define SAME_AT(v, f)                                                                              \
	_Static_assert(offsetof(CUpti_ActivityKernel##v, f) ==                                     \
			       offsetof(CUpti_ActivityKernel10, f),                                \
		       "CUpti_ActivityKernel" #v "." #f " moved")
#define KERNEL_FIELDS_AT(v)                                                                        \
	SAME_AT(v, start);                                                                         \
	SAME_AT(v, end);                                                                           \
	SAME_AT(v, deviceId);                                                                      \
	SAME_AT(v, streamId);                                                                      \
	SAME_AT(v, correlationId);                                                                 \
	SAME_AT(v, name);                                                                          \
	SAME_AT(v, gridX);                                                                         \
	SAME_AT(v, gridY);                                                                         \
	SAME_AT(v, gridZ);                                                                         \
	SAME_AT(v, blockX);                                                                        \
	SAME_AT(v, blockY);                                                                        \
	SAME_AT(v, blockZ);                                                                        \
	SAME_AT(v, graphId);                                                                       \
	SAME_AT(v, graphNodeId)
KERNEL_FIELDS_AT(5);
KERNEL_FIELDS_AT(6);
KERNEL_FIELDS_AT(7);
KERNEL_FIELDS_AT(8);
KERNEL_FIELDS_AT(9);

/* One CUPTI activity record as a pa_gpu_rec; false for kinds not handed over. */
static bool convert(const CUpti_Activity *a, struct pa_gpu_rec *r)
{
	uint64_t last = pa_gpu_last_launch();

	memset(r, 0, sizeof(*r));
	switch (a->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
		const CUpti_ActivityKernel10 *k = (const void *)a;

		r->kind = PA_GPU_KERNEL;
		r->corr = pa_gpu_corr_near(last, k->correlationId);
		r->start = k->start;
		r->end = k->end;
		r->name = (uintptr_t)k->name;
		r->device = k->deviceId;
		r->stream = k->streamId;
		r->graph = k->graphId;
		r->graph_node = k->graphNodeId;
		r->grid[0] = k->gridX, r->grid[1] = k->gridY, r->grid[2] = k->gridZ;
		r->block[0] = k->blockX, r->block[1] = k->blockY, r->block[2] = k->blockZ;
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *m = (const void *)a;

		r->kind = PA_GPU_MEMCPY;
		r->copy_kind = m->copyKind;
		r->corr = pa_gpu_corr_near(last, m->correlationId);
		r->start = m->start;
		r->end = m->end;
		r->bytes = m->bytes;
		r->device = m->deviceId;
		r->stream = m->streamId;
		r->graph = m->graphId;
		r->graph_node = m->graphNodeId;
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *m = (const void *)a;

		r->kind = PA_GPU_MEMSET;
		r->corr = pa_gpu_corr_near(last, m->correlationId);
		r->start = m->start;
		r->end = m->end;
		r->bytes = m->bytes;
		r->device = m->deviceId;
		r->stream = m->streamId;
		r->graph = m->graphId;
		r->graph_node = m->graphNodeId;
		break;
	}
	default:
		return false;
	}
	r->start = pa_gpu_to_mono(r->start, clock_offset);
	r->end = pa_gpu_to_mono(r->end, clock_offset);
	return true;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
				      size_t valid)
{
	CUpti_Activity *a = NULL;
	struct pa_gpu_rec r;

	(void)ctx, (void)stream, (void)size;
	while (valid && cupti.ActivityGetNextRecord(buf, valid, &a) == CUPTI_SUCCESS)
		if (convert(a, &r))
			pa_gpu_batch_add(&batcher, &r);
	pa_gpu_batch_flush(&batcher);
	free(buf);
}

/* What is still in CUPTI's buffers goes out while the recorder is attached. */
static void flush_at_exit(void)
{
	cupti.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

static const char *totals_path; /* PA_GPU_ADAPTER_TOTALS */

/* Registered before flush_at_exit, so it runs after it. */
static void totals_at_exit(void)
{
	if (pa_gpu_totals_write(totals_path))
		say("cannot write %s: %s", totals_path, strerror(errno));
}

static bool open_cupti(void)
{
	static const char *const libs[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so",
					   "/usr/local/cuda/lib64/libcupti.so"};
	const char *env = getenv("PA_CUPTI_LIB");
	void *h = env && *env ? dlopen(env, RTLD_NOW | RTLD_GLOBAL) : NULL;
	size_t i;

	for (i = 0; !h && i < sizeof(libs) / sizeof(libs[0]); i++)
		h = dlopen(libs[i], RTLD_NOW | RTLD_GLOBAL);
	if (!h) {
		say("no libcupti (set PA_CUPTI_LIB to its path): GPU times are off");
		return false;
	}
#define SYM(f) (*(void **)&cupti.f = dlsym(h, "cupti" #f))
	if (!SYM(Subscribe) || !SYM(EnableCallback) || !SYM(ActivityRegisterCallbacks) ||
	    !SYM(ActivityEnable) || !SYM(ActivityGetNextRecord) || !SYM(ActivityFlushAll) ||
	    !SYM(GetTimestamp)) {
		say("libcupti lacks %s: GPU times are off", "the activity API");
		return false;
	}
	SYM(ActivityFlushPeriod);
	SYM(GetResultString);
#undef SYM
	return true;
}

EXPORT int InitializeInjection(void)
{
	CUpti_SubscriberHandle sub;
	uint64_t before, after, mono;
	CUptiResult r;
	size_t i;

	totals_path = getenv("PA_GPU_ADAPTER_TOTALS");
	if (totals_path && *totals_path) {
		/* Every record is summed, a recorder or not. */
		pa_gpu_batcher_init(&batcher, pa_gpu_totals_deliver, NULL);
		atexit(totals_at_exit);
	} else {
		pa_gpu_batcher_init(&batcher, pa_gpu_deliver, pa_gpu_records_observed);
	}
	if (!open_cupti())
		return 1;
	r = cupti.Subscribe(&sub, on_launch, NULL);
	if (r != CUPTI_SUCCESS) {
		if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
			say("another tool (Nsight, torch.profiler) holds CUPTI: GPU times are off");
		else
			say("cannot subscribe to CUPTI (%s): GPU times are off", cupti_error(r));
		return 1;
	}
	for (i = 0; i < sizeof(runtime_launches) / sizeof(runtime_launches[0]); i++)
		cupti.EnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API, runtime_launches[i]);
	for (i = 0; i < sizeof(driver_launches) / sizeof(driver_launches[0]); i++)
		cupti.EnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, driver_launches[i]);
	for (i = 0; i < sizeof(runtime_copies) / sizeof(runtime_copies[0]); i++)
		cupti.EnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API, runtime_copies[i]);
	for (i = 0; i < sizeof(driver_copies) / sizeof(driver_copies[0]); i++)
		cupti.EnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, driver_copies[i]);
	cupti.GetTimestamp(&before);
	mono = pa_gpu_mono_ns();
	cupti.GetTimestamp(&after);
	clock_offset = pa_gpu_clock_offset(before, mono, after);
	r = cupti.ActivityRegisterCallbacks(buffer_requested, buffer_completed);
	if (r == CUPTI_SUCCESS)
		r = cupti.ActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	if (r != CUPTI_SUCCESS) {
		say("CUPTI activity records unavailable (%s): launches only", cupti_error(r));
		return 1;
	}
	cupti.ActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY);
	cupti.ActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET);
	/* Records arrive within 100 ms even when the GPU goes idle. */
	if (cupti.ActivityFlushPeriod)
		cupti.ActivityFlushPeriod(100);
	atexit(flush_at_exit);
	return 1;
}
