// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

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
		pa_huge(ns, ncap * sizeof(*ns));
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
	pa_huge(p, ncap * elem);
	*arr = p;
	*cap = ncap;
	return 0;
}

void pa_huge(void *p, size_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)p & ~(page - 1);
	uintptr_t end = ((uintptr_t)p + len + page - 1) & ~(page - 1);

	/*
	 * Advice only: where THP is off, nothing changes.  The whole pages of the block,
	 * not just its 2 MiB-aligned part: advice on part of a mapping splits it, and
	 * glibc's realloc can then no longer mremap it and copies instead.
	 */
	if (len >= 2 * PA_HUGE)
		madvise((void *)start, end - start, MADV_HUGEPAGE);
}

void *pa_calloc_big(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (p && n)
		pa_huge(p, n * size);
	return p;
}

void pa_malloc_tables(void)
{
	/*
	 * A fixed threshold: glibc's moving one (it rises each time a mapped block is
	 * freed) puts a growing table back on the heap, where realloc copies it and
	 * faults in every page again, instead of moving its pages with mremap.
	 */
	mallopt(M_MMAP_THRESHOLD, PA_HUGE / 2);
	/* Fixing it fixes the trim threshold too, at 128 KB: a heap that shrinks each
	 * time its top is freed is faulted in again and again.  Keep what was used. */
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
}
