// SPDX-License-Identifier: Apache-2.0
/*
 * Go pc-line tables.  Input: u64 vaddr, text, gofunc, u32 table length, u32 flags (all
 * little-endian), then the memory at vaddr, whose first bytes (the table length, or
 * all) are the table.  Flags: bit 0 passes text and bit 1 gofunc (else 0), bit 2 a
 * read() serving the memory, bit 3 reads the memory as an ELF file instead
 * (gopcln_open).  Every function's name and range, then lookups at eight pcs across
 * it and its last byte with room for 1, 3 and all frames, and at two pcs from the
 * input's last 16 bytes.
 */
#include <errno.h>
#include <gelf.h>
#include <string.h>

#include "symbolize/gopclntab.h"
#include "fuzz.h"

struct gopclntab_mem {
	const uint8_t *p;
	size_t len;
	uint64_t vaddr;
};

static int gopclntab_read(void *ctx, uint64_t vaddr, void *out, size_t len)
{
	const struct gopclntab_mem *m = ctx;

	if (vaddr < m->vaddr || vaddr - m->vaddr > m->len || len > m->len - (vaddr - m->vaddr))
		return -EFAULT;
	memcpy(out, m->p + (vaddr - m->vaddr), len);
	return 0;
}

static size_t gopclntab_sink(const struct gopcln *t, const uint64_t *pcs, size_t npcs)
{
	struct gopcln_frame f[GOPCLN_MAX_INLINE + 1];
	static const size_t room[] = {1, 3, GOPCLN_MAX_INLINE + 1};
	size_t sink = strlen(gopcln_format(t)), i, k;

	for (i = 0; i < gopcln_nr_funcs(t) && i < 64; i++) {
		uint64_t s, e;
		const char *name;

		if (gopcln_func(t, i, &s, &e, &name))
			continue;
		sink += strlen(name);
		/* Eight pcs across the function and its last byte, with room for 1, 3, all. */
		for (k = 0; k <= 8; k++) {
			uint64_t pc = k < 8 ? s + (e - s) / 8 * k : e - 1;
			int n = gopcln_lookup(t, pc, f, room[k % 3]);

			for (int j = 0; j < n; j++)
				sink += strlen(f[j].name) + (f[j].file ? strlen(f[j].file) : 0) +
					(size_t)f[j].line;
		}
	}
	for (i = 0; i < npcs; i++)
		sink += (size_t)gopcln_lookup(t, pcs[i], f, GOPCLN_MAX_INLINE + 1);
	return sink;
}

FUZZ_TARGET(gopclntab)
{
	uint64_t hdr[3], pcs[2] = {0, 0};
	uint32_t tlen, flags;
	struct gopclntab_mem m;
	struct gopcln *t;
	volatile size_t sink = 0;

	if (size < 32)
		return 0;
	memcpy(hdr, data, sizeof(hdr));
	memcpy(&tlen, data + 24, 4);
	memcpy(&flags, data + 28, 4);
	m = (struct gopclntab_mem){data + 32, size - 32, hdr[0]};
	if (m.len >= 16)
		memcpy(pcs, m.p + m.len - 16, 16);
	if (flags & 8) {
		/* libelf wants memory it may write to. */
		char *copy = malloc(m.len ? m.len : 1);
		Elf *elf;

		if (!copy)
			abort();
		memcpy(copy, m.p, m.len);
		elf_version(EV_CURRENT);
		elf = elf_memory(copy, m.len);
		t = elf ? gopcln_open(elf) : NULL;
		if (t)
			sink += gopclntab_sink(t, pcs, 2);
		gopcln_free(t);
		if (elf)
			elf_end(elf);
		free(copy);
		return 0;
	}
	t = gopcln_open_mem(m.p, tlen < m.len ? tlen : m.len, m.vaddr, flags & 1 ? hdr[1] : 0,
			    flags & 2 ? hdr[2] : 0, flags & 4 ? gopclntab_read : NULL, &m);
	if (t)
		sink += gopclntab_sink(t, pcs, 2);
	gopcln_free(t);
	(void)sink;
	return 0;
}
