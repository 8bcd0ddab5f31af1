/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one hash index of libcommon: open addressing over 32-bit ids of objects the
 * caller keeps in its own array.  A slot holds the id and the upper 32 bits of the
 * hash (which also pick the slot, so growing needs no caller), so a probe compares
 * the caller's key only on a likely match, and the table is a single array of 8-byte
 * slots (one cache line holds eight).
 *
 *	int64_t id = hidx_find(&idx, h, eq, ctx, key);
 *	if (id < 0) { id = nr++; hidx_insert(&idx, h, id); }
 *
 * Why not uthash: its macros put the links into every object and hide the probe
 * sequence; here the objects stay plain arrays the callers index by id.
 */
#ifndef PA_BASE_HASH_H
#define PA_BASE_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hidx {
	uint64_t *slot; /* (hash >> 32) << 32 | (id + 1); 0: empty */
	size_t cap;	/* power of two, or 0 */
	size_t n;
};

/* Whether object id is the one key names. */
typedef bool (*hidx_eq_fn)(const void *ctx, uint32_t id, const void *key);

/* The id of the object with hash h for which eq holds, or -1. */
static inline int64_t hidx_find(const struct hidx *hi, uint64_t h, hidx_eq_fn eq, const void *ctx,
				const void *key)
{
	uint64_t tag = h >> 32 << 32;
	size_t j;

	if (!hi->cap)
		return -1;
	for (j = (h >> 32) & (hi->cap - 1); hi->slot[j]; j = (j + 1) & (hi->cap - 1))
		if ((hi->slot[j] & ~0xffffffffULL) == tag &&
		    eq(ctx, (uint32_t)hi->slot[j] - 1, key))
			return (uint32_t)hi->slot[j] - 1;
	return -1;
}

/* Start fetching the slot hidx_find(hi, h, ...) will look at first. */
static inline void hidx_prefetch(const struct hidx *hi, uint64_t h)
{
	if (hi->cap)
		__builtin_prefetch(&hi->slot[(h >> 32) & (hi->cap - 1)]);
}

/* Index object id under hash h (not there yet).  0 or -ENOMEM. */
int hidx_insert(struct hidx *hi, uint64_t h, uint32_t id);
void hidx_free(struct hidx *hi);

/* Well-spread 64-bit hashes: combine a value into h, and of a string. */
static inline uint64_t hash_mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return h;
}

uint64_t hash_str(const char *s);

/*
 * Ask for transparent huge pages for a block of len bytes (4 MiB or more).  The
 * tables a report builds from a large capture are hundreds of MB touched at random:
 * with 4 KiB pages a third of the time goes to page faults and TLB misses (THP is
 * "madvise" on Debian).
 */
#define PA_HUGE (2u << 20)
void pa_huge(void *p, size_t len);
/* Set malloc up for a process that grows large tables: call first in main. */
void pa_malloc_tables(void);
/* calloc(n, size) (n may be 0), with pa_huge's advice. */
void *pa_calloc_big(size_t n, size_t size);

/* Grow *arr (elem bytes each, *cap of them) to hold need.  0 or -ENOMEM. */
int pa_grow(void **arr, size_t *cap, size_t need, size_t elem);

#endif /* PA_BASE_HASH_H */
