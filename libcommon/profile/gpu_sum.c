// SPDX-License-Identifier: Apache-2.0
/* The per-kernel GPU summary (gpu_sum.h): one row per function, found by its id. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/gpu_sum.h"

static bool row_eq(const void *ctx, uint32_t id, const void *key)
{
	return ((const struct gpu_sum *)ctx)->rows[id].func == *(const uint32_t *)key;
}

static struct gpu_sum_row *row_of(struct gpu_sum *g, uint32_t func)
{
	uint64_t h = hash_mix(0, func);
	int64_t id = hidx_find(&g->idx, h, row_eq, g, &func);

	if (id >= 0)
		return &g->rows[id];
	if (pa_grow((void **)&g->rows, &g->cap, g->nr + 1, sizeof(*g->rows)) ||
	    hidx_insert(&g->idx, h, g->nr))
		return NULL;
	g->rows[g->nr] = (struct gpu_sum_row){.func = func};
	return &g->rows[g->nr++];
}

int gpu_sum_launch(struct gpu_sum *g, uint32_t func)
{
	struct gpu_sum_row *row = row_of(g, func);

	if (!row)
		return -ENOMEM;
	row->launches++;
	return 0;
}

int gpu_sum_time(struct gpu_sum *g, uint32_t func, uint64_t ns, const struct gpu_raw *r)
{
	struct gpu_sum_row *row = row_of(g, func);

	if (!row)
		return -ENOMEM;
	if (!row->count++) {
		row->op = r->op;
		row->min_ns = ns;
		memcpy(row->grid, r->grid, sizeof(row->grid));
		memcpy(row->block, r->block, sizeof(row->block));
	} else if (memcmp(row->grid, r->grid, sizeof(row->grid)) ||
		   memcmp(row->block, r->block, sizeof(row->block))) {
		row->shapes_vary = true;
	}
	row->total_ns += ns;
	row->min_ns = ns < row->min_ns ? ns : row->min_ns;
	row->max_ns = ns > row->max_ns ? ns : row->max_ns;
	row->bytes += r->bytes;
	return 0;
}

void gpu_sum_free(struct gpu_sum *g)
{
	free(g->rows);
	hidx_free(&g->idx);
	memset(g, 0, sizeof(*g));
}
