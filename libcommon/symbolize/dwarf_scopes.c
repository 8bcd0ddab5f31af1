// SPDX-License-Identifier: Apache-2.0
/*
 * Scope index of a compile unit.  dwarf_getscopes walks a CU's DIE tree from its root
 * for every address, and once more per inlined frame to find its parents: on libc that is most of a report's time.  The
 * first lookup in a CU instead records the DIEs with code ranges as a tree (DIE order,
 * so the walk below picks the same DIE libdw's would), and every lookup after descends
 * it: binary search among the top-level functions, then the first child whose ranges
 * hold the address, level by level.
 */
#include <dwarf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/dwarf_scopes.h"

#define NO_NODE UINT32_MAX

struct scope_node {
	Dwarf_Die die;
	uint32_t parent, first_child, last_child, next;
	uint32_t rfirst, rcount; /* its ranges in dws_index.ranges */
	int tag;
};

struct pc_range {
	uint64_t lo, hi;
};

/* A top-level DIE's range; maxhi: the largest hi of this and all before it. */
struct top_range {
	uint64_t lo, hi, maxhi;
	uint32_t node;
};

struct dws_index {
	Dwarf_Off off; /* of the CU DIE: the key */
	struct scope_node *nodes;
	struct pc_range *ranges;
	struct top_range *top;
	uint32_t nr_nodes, nr_ranges, nr_top, cap_nodes, cap_ranges;
};

#define MAX_IMPORT_DEPTH 8 /* imported units importing others: deeper is a cycle */

static void index_free(struct dws_index *ci)
{
	if (!ci)
		return;
	free(ci->nodes);
	free(ci->ranges);
	free(ci->top);
	free(ci);
}

static int grow(void **p, uint32_t *cap, uint32_t need, size_t size)
{
	uint32_t nc;
	void *np;

	if (need <= *cap)
		return 0;
	nc = *cap ? *cap * 2 : 64;
	if (nc < need)
		nc = need;
	np = realloc(*p, (size_t)nc * size);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = nc;
	return 0;
}

/* The DIE tags libdw's scope walk descends into (libdw_visit_scopes.c). */
static bool may_have_scopes(int tag)
{
	switch (tag) {
	case DW_TAG_compile_unit:
	case DW_TAG_module:
	case DW_TAG_lexical_block:
	case DW_TAG_with_stmt:
	case DW_TAG_catch_block:
	case DW_TAG_try_block:
	case DW_TAG_entry_point:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_subprogram:
	case DW_TAG_namespace:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
		return true;
	default:
		return false;
	}
}

/* Record die as a child of parent when it has code ranges; its node or NO_NODE. */
static int add_node(struct dws_index *ci, Dwarf_Die *die, int tag, uint32_t parent, uint32_t *node)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	uint32_t rfirst = ci->nr_ranges, idx;
	struct scope_node *n;

	*node = NO_NODE;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (lo >= hi)
			continue;
		if (grow((void **)&ci->ranges, &ci->cap_ranges, ci->nr_ranges + 1,
			 sizeof(*ci->ranges)))
			return -ENOMEM;
		ci->ranges[ci->nr_ranges++] = (struct pc_range){lo, hi};
	}
	/* No ranges (or unreadable ones): libdw's dwarf_haspc says no, pruning the subtree. */
	if (ci->nr_ranges == rfirst)
		return 0;
	if (grow((void **)&ci->nodes, &ci->cap_nodes, ci->nr_nodes + 1, sizeof(*ci->nodes)))
		return -ENOMEM;
	idx = ci->nr_nodes++;
	n = &ci->nodes[idx];
	*n = (struct scope_node){.die = *die,
				 .parent = parent,
				 .first_child = NO_NODE,
				 .last_child = NO_NODE,
				 .next = NO_NODE,
				 .rfirst = rfirst,
				 .rcount = ci->nr_ranges - rfirst,
				 .tag = tag};
	if (parent != NO_NODE) {
		struct scope_node *p = &ci->nodes[parent];

		if (p->last_child == NO_NODE)
			p->first_child = idx;
		else
			ci->nodes[p->last_child].next = idx;
		p->last_child = idx;
	}
	*node = idx;
	return 0;
}

/* Index the children of die (an imported unit's children stand in its place). */
static int index_children(struct dws_index *ci, Dwarf_Die *die, uint32_t parent, int imports)
{
	Dwarf_Die child;
	int ret;

	if (dwarf_child(die, &child))
		return 0;
	do {
		int tag = dwarf_tag(&child);
		uint32_t node;

		if (tag == DW_TAG_imported_unit) {
			Dwarf_Attribute attr;
			Dwarf_Die unit;

			if (imports < MAX_IMPORT_DEPTH &&
			    dwarf_formref_die(dwarf_attr(&child, DW_AT_import, &attr), &unit) &&
			    dwarf_tag(&unit) != DW_TAG_compile_unit) {
				ret = index_children(ci, &unit, parent, imports + 1);
				if (ret)
					return ret;
			}
			continue;
		}
		ret = add_node(ci, &child, tag, parent, &node);
		if (ret)
			return ret;
		if (node != NO_NODE && may_have_scopes(tag) && dwarf_haschildren(&child) > 0) {
			ret = index_children(ci, &child, node, imports);
			if (ret)
				return ret;
		}
	} while (!dwarf_siblingof(&child, &child));
	return 0;
}

static int top_cmp(const void *a, const void *b)
{
	const struct top_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->node < y->node ? -1 : x->node > y->node;
}

static struct dws_index *index_build(Dwarf_Die *cudie)
{
	struct dws_index *ci = calloc(1, sizeof(*ci));
	uint32_t i, j, n = 0;
	uint64_t maxhi = 0;

	if (!ci)
		return NULL;
	ci->off = dwarf_dieoffset(cudie);
	if (index_children(ci, cudie, NO_NODE, 0))
		goto nomem;
	for (i = 0; i < ci->nr_nodes; i++)
		if (ci->nodes[i].parent == NO_NODE)
			n += ci->nodes[i].rcount;
	ci->top = malloc((n ? n : 1) * sizeof(*ci->top));
	if (!ci->top)
		goto nomem;
	for (i = 0; i < ci->nr_nodes; i++) {
		const struct scope_node *sn = &ci->nodes[i];

		if (sn->parent != NO_NODE)
			continue;
		for (j = 0; j < sn->rcount; j++)
			ci->top[ci->nr_top++] =
				(struct top_range){.lo = ci->ranges[sn->rfirst + j].lo,
						   .hi = ci->ranges[sn->rfirst + j].hi,
						   .node = i};
	}
	qsort(ci->top, ci->nr_top, sizeof(*ci->top), top_cmp);
	for (i = 0; i < ci->nr_top; i++) {
		if (ci->top[i].hi > maxhi)
			maxhi = ci->top[i].hi;
		ci->top[i].maxhi = maxhi;
	}
	return ci;
nomem:
	index_free(ci);
	errno = ENOMEM;
	return NULL;
}

static bool node_haspc(const struct dws_index *ci, uint32_t node, uint64_t va)
{
	const struct scope_node *sn = &ci->nodes[node];
	uint32_t i;

	for (i = 0; i < sn->rcount; i++)
		if (ci->ranges[sn->rfirst + i].lo <= va && va < ci->ranges[sn->rfirst + i].hi)
			return true;
	return false;
}

/* The innermost DIE holding va: the one dwarf_getscopes would put first.  NO_NODE if none. */
static uint32_t index_find(const struct dws_index *ci, uint64_t va)
{
	uint32_t lo = 0, hi = ci->nr_top, best = NO_NODE, cur, c;
	int64_t i;

	/* The last range starting at or below va, then back while any earlier could hold it. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (ci->top[mid].lo <= va)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = (int64_t)lo - 1; i >= 0 && ci->top[i].maxhi > va; i--)
		if (va < ci->top[i].hi && ci->top[i].node < best)
			best = ci->top[i].node; /* overlaps: the first in DIE order wins */
	for (cur = best; cur != NO_NODE; cur = c) {
		for (c = ci->nodes[cur].first_child; c != NO_NODE; c = ci->nodes[c].next)
			if (node_haspc(ci, c, va))
				break;
		if (c == NO_NODE)
			break;
	}
	return cur;
}

static bool is_frame(int tag)
{
	return tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram;
}

size_t dws_scopes(const struct dws_index *ci, uint64_t va, Dwarf_Die *out, size_t max)
{
	uint32_t inner = index_find(ci, va), x;
	size_t len = 0, skip, n = 0;

	/* Lexical blocks and the like on the way out are no frames. */
	for (x = inner; x != NO_NODE; x = ci->nodes[x].parent) {
		if (!is_frame(ci->nodes[x].tag))
			continue;
		len++;
		if (ci->nodes[x].tag == DW_TAG_subprogram)
			break;
	}
	skip = len > max ? len - max : 0;
	for (x = inner; x != NO_NODE && n < len - skip; x = ci->nodes[x].parent) {
		if (!is_frame(ci->nodes[x].tag))
			continue;
		if (skip) {
			skip--;
			continue;
		}
		out[n++] = ci->nodes[x].die;
	}
	return n;
}

const struct dws_index *dws_cache_get(struct dws_cache *c, Dwarf_Die *cudie)
{
	Dwarf_Off off = dwarf_dieoffset(cudie);
	size_t lo = 0, hi = c->n;
	struct dws_index *ci;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->v[mid]->off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < c->n && c->v[lo]->off == off)
		return c->v[lo];
	if (c->n == c->cap) {
		size_t nc = c->cap ? c->cap * 2 : 16;
		struct dws_index **nv = realloc(c->v, nc * sizeof(*nv));

		if (!nv)
			return NULL;
		c->v = nv;
		c->cap = nc;
	}
	ci = index_build(cudie);
	if (!ci)
		return NULL;
	memmove(&c->v[lo + 1], &c->v[lo], (c->n - lo) * sizeof(*c->v));
	c->v[lo] = ci;
	c->n++;
	return ci;
}

void dws_cache_free(struct dws_cache *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		index_free(c->v[i]);
	free(c->v);
	*c = (struct dws_cache){0};
}
