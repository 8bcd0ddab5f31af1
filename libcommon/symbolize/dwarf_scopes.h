/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The function and inline scopes of an address, from an index of each compile unit's
 * DIE tree built on its first lookup: what dwarf_getscopes answers, without walking
 * the CU from its root for every address.  Private to dwarf_lines.c.
 */
#ifndef PA_DWARF_SCOPES_H
#define PA_DWARF_SCOPES_H

#include <elfutils/libdw.h>
#include <stddef.h>
#include <stdint.h>

struct dws_index;

/* The CU indexes of one Dwarf, by CU DIE offset. */
struct dws_cache {
	struct dws_index **v;
	size_t n, cap;
};

/* cudie's index, built on first use.  NULL with errno ENOMEM. */
const struct dws_index *dws_cache_get(struct dws_cache *c, Dwarf_Die *cudie);
void dws_cache_free(struct dws_cache *c);

/*
 * The DW_TAG_inlined_subroutine and DW_TAG_subprogram DIEs holding va, innermost
 * first, ending with the first subprogram: the concrete scopes dwarf_getscopes and
 * dwarf_getscopes_die give.  At most max (>= 1) are stored, a longer chain losing its
 * innermost ones.  Returns how many were stored.
 */
size_t dws_scopes(const struct dws_index *ci, uint64_t va, Dwarf_Die *out, size_t max);

#endif /* PA_DWARF_SCOPES_H */
