// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <stdlib.h>

#include "base/hash.h"

static void hidx_put(uint64_t *slot, size_t cap, uint64_t s)
{
	size_t j;

	for (j = (s >> 32) & (cap - 1); slot[j]; j = (j + 1) & (cap - 1))
		;
	slot[j] = s;
}

int hidx_insert(struct hidx *hi, uint64_t h, uint32_t id)
{
	if (id == UINT32_MAX)
		return -ENOMEM; /* id + 1 must fit */
	if ((hi->n + 1) * 2 > hi->cap) {
		size_t ncap = hi->cap ? hi->cap * 2 : 256, i;
		uint64_t *ns = calloc(ncap, sizeof(*ns));

		if (!ns || ncap > (1ULL << 32)) {
			free(ns);
			return -ENOMEM;
		}
		for (i = 0; i < hi->cap; i++)
			if (hi->slot[i])
				hidx_put(ns, ncap, hi->slot[i]);
		free(hi->slot);
		hi->slot = ns;
		hi->cap = ncap;
	}
	hidx_put(hi->slot, hi->cap, (h >> 32 << 32) | ((uint64_t)id + 1));
	hi->n++;
	return 0;
}

void hidx_free(struct hidx *hi)
{
	free(hi->slot);
	hi->slot = NULL;
	hi->cap = hi->n = 0;
}

uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return hash_mix(h, 0);
}

int pa_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 64;
	void *p;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	p = realloc(*arr, ncap * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}
