// SPDX-License-Identifier: Apache-2.0
/*
 * pa-report --event gpu: the GPU events summed per kernel, as `nsys stats` sums
 * them (cuda_gpu_kern_sum, cuda_gpu_mem_time_sum): kernels by GPU time with their
 * launches and grid and block sizes, then copies and sets with bytes and bandwidth,
 * then the off-CPU time threads spent waiting for the GPU (pa-record --offcpu).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile/gpu_sum.h"
#include "print.h"

/* What a row prints as its name: the leaf's name without its "[gpu:...]" marks. */
static const char *row_name(const struct cg_profile *cg, const struct gpu_sum_row *r, char *buf,
			    size_t len)
{
	const char *name = cg_func(cg, r->func)->name;
	size_t n;

	if (!strncmp(name, "[gpu:kernel] ", 13))
		return name + 13;
	n = strlen(name);
	if (!strncmp(name, "[gpu:", 5) && n > 6 && name[n - 1] == ']') {
		snprintf(buf, len, "%.*s", (int)(n - 6), name + 5);
		return buf;
	}
	return name;
}

static int cmp_rows(const void *pa, const void *pb)
{
	const struct gpu_sum_row *a = *(const struct gpu_sum_row *const *)pa;
	const struct gpu_sum_row *b = *(const struct gpu_sum_row *const *)pb;

	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	if (a->launches != b->launches)
		return a->launches > b->launches ? -1 : 1;
	return a->func < b->func ? -1 : a->func > b->func;
}

static bool is_memory(const struct gpu_sum_row *r)
{
	return r->op == GPU_OP_MEMCPY || r->op == GPU_OP_MEMSET;
}

static void shape(char *buf, size_t len, const struct gpu_sum_row *r, const int32_t *v)
{
	if (!r->count)
		snprintf(buf, len, "-");
	else if (r->shapes_vary)
		snprintf(buf, len, "varies");
	else
		snprintf(buf, len, "(%d,%d,%d)", v[0], v[1], v[2]);
}

static void print_kernels(FILE *out, const struct cg_profile *cg,
			  const struct gpu_sum_row *const *rows, size_t nr, bool header)
{
	uint64_t total = 0, launches = 0, timed = 0;
	char grid[40], block[40], buf[256];
	size_t i;

	for (i = 0; i < nr; i++) {
		total += rows[i]->total_ns;
		launches += rows[i]->launches;
		timed += rows[i]->count;
	}
	if (header) {
		fprintf(out,
			"# GPU kernels: %zu, %" PRIu64
			" instances timed (%.6f ms on the GPU), %" PRIu64
			" launches seen by the launch uprobes%s\n#\n",
			nr, timed, total / 1e6, launches,
			timed ? "" : " (no CUDA adapter records: launches only)");
		fprintf(out, "# %7s %14s %9s %12s %12s %12s  %-14s %-14s %9s  %s\n", "Time(%)",
			"Total (ns)", "Instances", "Avg (ns)", "Min (ns)", "Max (ns)", "Grid",
			"Block", "Launches", "Name");
		fprintf(out, "#\n");
	}
	for (i = 0; i < nr; i++) {
		const struct gpu_sum_row *r = rows[i];

		shape(grid, sizeof(grid), r, r->grid);
		shape(block, sizeof(block), r, r->block);
		if (r->count)
			fprintf(out,
				"  %6.2f%% %14" PRIu64 " %9" PRIu64 " %12.1f %12" PRIu64
				" %12" PRIu64 "  %-14s %-14s %9" PRIu64 "  %s\n",
				total ? 100.0 * r->total_ns / total : 0.0, r->total_ns, r->count,
				(double)r->total_ns / r->count, r->min_ns, r->max_ns, grid, block,
				r->launches, row_name(cg, r, buf, sizeof(buf)));
		else
			fprintf(out,
				"  %7s %14s %9s %12s %12s %12s  %-14s %-14s %9" PRIu64 "  %s\n",
				"-", "-", "0", "-", "-", "-", grid, block, r->launches,
				row_name(cg, r, buf, sizeof(buf)));
	}
}

static void print_memory(FILE *out, const struct cg_profile *cg,
			 const struct gpu_sum_row *const *rows, size_t nr, bool header)
{
	uint64_t total = 0, bytes = 0, count = 0;
	char buf[256];
	size_t i;

	for (i = 0; i < nr; i++) {
		total += rows[i]->total_ns;
		bytes += rows[i]->bytes;
		count += rows[i]->count;
	}
	if (header) {
		fprintf(out, "# GPU copies and sets: %" PRIu64 ", %.3f MB, %.6f ms on the GPU\n#\n",
			count, bytes / 1e6, total / 1e6);
		fprintf(out, "# %7s %14s %9s %12s %12s %12s %10s  %s\n", "Time(%)", "Total (ns)",
			"Count", "Total (MB)", "Avg (MB)", "Max (ns)", "GB/s", "Operation");
		fprintf(out, "#\n");
	}
	for (i = 0; i < nr; i++) {
		const struct gpu_sum_row *r = rows[i];

		/* bytes per ns is GB/s */
		fprintf(out,
			"  %6.2f%% %14" PRIu64 " %9" PRIu64 " %12.3f %12.3f %12" PRIu64
			" %10.3f  %s\n",
			total ? 100.0 * r->total_ns / total : 0.0, r->total_ns, r->count,
			r->bytes / 1e6, r->count ? r->bytes / 1e6 / r->count : 0.0, r->max_ns,
			r->total_ns ? (double)r->bytes / r->total_ns : 0.0,
			row_name(cg, r, buf, sizeof(buf)));
	}
}

int report_gpu_summary(FILE *out, const struct cg_profile *cg, bool header)
{
	const struct gpu_sum *g = cg_gpu_sum(cg);
	const struct gpu_sum_row **rows;
	size_t i, nk = 0, nm = 0;

	if (!g->nr && !g->wait_samples)
		return 0;
	rows = malloc((g->nr ? g->nr : 1) * sizeof(*rows));
	if (!rows)
		return -1;
	/* kernels first, copies and sets after them */
	for (i = 0; i < g->nr; i++)
		if (!is_memory(&g->rows[i]))
			rows[nk++] = &g->rows[i];
	for (i = 0; i < g->nr; i++)
		if (is_memory(&g->rows[i]))
			rows[nk + nm++] = &g->rows[i];
	qsort(rows, nk, sizeof(*rows), cmp_rows);
	qsort(rows + nk, nm, sizeof(*rows), cmp_rows);
	if (nk)
		print_kernels(out, cg, rows, nk, header);
	if (nk && nm)
		fputc('\n', out);
	if (nm)
		print_memory(out, cg, rows + nk, nm, header);
	if (g->wait_samples) {
		if (nk || nm)
			fputc('\n', out);
		fprintf(out,
			"# CPU waiting on the GPU: %.6f s off the CPU in %" PRIu64
			" stretches inside cudaStreamSynchronize and the other synchronize calls\n",
			g->wait_ns / 1e9, g->wait_samples);
	}
	free(rows);
	return 1;
}
