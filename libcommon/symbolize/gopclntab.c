// SPDX-License-Identifier: Apache-2.0
/*
 * Go's pc-line table, as the Go runtime reads it (runtime/symtab.go, symtabinl.go,
 * runtime2.go; the linker's cmd/link/internal/ld/pcln.go writes it).  Little-endian
 * tables only.  One header, then, by format:
 *
 *   1.2-1.15   functab {entry, funcoff uintptr}[nfunc], end pc, u32 filetab offset;
 *              everything else as offsets from the table's start
 *   1.16-1.17  nfunc, nfiles, then the offsets of funcnametab, cutab, filetab, pctab
 *              and pclntab (functab + _func records)
 *   1.18+      the same with textStart before them: functab entries become u32
 *              offsets from it and funcdata u32 offsets from moduledata.gofunc
 *              (recent linkers write textStart 0: moduledata.text tells)
 *
 * This data comes from the files we profile: every read is checked against the region
 * it belongs to, every loop is bounded by the bytes it consumes or a checked count.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/gopclntab.h"

#define GOP_MAGIC_12  0xfffffffbu
#define GOP_MAGIC_116 0xfffffffau
#define GOP_MAGIC_118 0xfffffff0u
#define GOP_MAGIC_120 0xfffffff1u

/*
 * Inline parents must have lower indexes than their children (the compiler appends
 * them), which ends every chain; this bounds the decoding a damaged one can cost.
 */
#define GOP_MAX_STEPS 256

enum gop_fmt { GOP_12, GOP_116, GOP_118, GOP_120 };

/* How a function's inline tree links an inlined call to its caller. */
enum gop_inl {
	GOP_INL_NONE,
	GOP_INL_PARENT, /* Go 1.9-1.11: {parent, file, line, name}, caller's position in it */
	GOP_INL_PC20,	/* Go 1.12-1.19: {parent i16, funcID, _, file, line, name, parentPc} */
	GOP_INL_PC16,	/* Go 1.20+: {funcID, _[3], name, parentPc, startLine} */
};

struct gop_rgn {
	uint64_t off, end; /* [off, end) of the table */
};

struct gop_seg {
	uint64_t vaddr, size; /* the file-backed part of a PT_LOAD */
	const uint8_t *data;
	uint32_t flags;
};

struct gopcln {
	const uint8_t *buf;
	uint64_t len, vaddr, text, gofunc;
	gopcln_read_fn read;
	void *ctx;
	enum gop_fmt fmt;
	uint8_t quantum, ptr;
	uint64_t nfunc;
	uint64_t ftab;	 /* functab's offset */
	uint8_t ftab_sz; /* one functab field */
	struct gop_rgn funcs, names, cutab, files, pctab;
	uint64_t filetab, nfiles; /* 1.2: the file table (u32 offsets) and its length */
	/* Where _func keeps what we read, by format. */
	uint8_t f_name, f_pcfile, f_pcln, f_npcdata, f_cu, f_nfuncdata, f_size;
	bool f_nfd32; /* nfuncdata is an int32 (Go 1.2-1.11) */
	enum gop_inl inl;
	uint8_t inl_pcdata, inl_funcdata, inl_size;
	/* gopcln_open: the file's loaded segments, which read() serves. */
	struct gop_seg *segs;
	size_t nsegs;
};

static uint32_t gop_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t gop_uptr(const struct gopcln *t, const uint8_t *p)
{
	return t->ptr == 8 ? gop_u32(p) | (uint64_t)gop_u32(p + 4) << 32 : gop_u32(p);
}

/* len bytes at off into r, or NULL where they are not all inside it. */
static const uint8_t *gop_at(const struct gopcln *t, const struct gop_rgn *r, uint64_t off,
			     uint64_t len)
{
	uint64_t size = r->end - r->off;

	if (off > size || len > size - off)
		return NULL;
	return t->buf + r->off + off;
}

/* The NUL-terminated string at off into r, NULL where its NUL is not inside r. */
static const char *gop_str(const struct gopcln *t, const struct gop_rgn *r, uint64_t off)
{
	const uint8_t *p = gop_at(t, r, off, 1);

	if (!p || !memchr(p, 0, r->end - r->off - off))
		return NULL;
	return (const char *)p;
}

/* Field k of functab (checked at open: k <= 2 * nfunc). */
static uint64_t gop_ftab(const struct gopcln *t, uint64_t k)
{
	const uint8_t *p = t->buf + t->ftab + k * t->ftab_sz;

	return t->ftab_sz == 8 ? gop_u32(p) | (uint64_t)gop_u32(p + 4) << 32 : gop_u32(p);
}

static uint64_t gop_entry(const struct gopcln *t, uint64_t i)
{
	uint64_t v = gop_ftab(t, 2 * i);

	return t->fmt >= GOP_118 ? t->text + v : v;
}

/* Memory at vaddr: the table itself, else what read() serves. */
static int gop_read(const struct gopcln *t, uint64_t vaddr, void *out, size_t len)
{
	if (vaddr >= t->vaddr && vaddr - t->vaddr <= t->len && len <= t->len - (vaddr - t->vaddr)) {
		memcpy(out, t->buf + (vaddr - t->vaddr), len);
		return 0;
	}
	return t->read ? t->read(t->ctx, vaddr, out, len) : -ENOENT;
}

/* One _func, its fixed part and pcdata offsets inside the table. */
struct gop_func {
	const uint8_t *p;
	uint64_t off; /* into t->funcs */
	uint64_t entry, end;
	uint32_t npcdata, nfuncdata;
};

static int gop_func_at(const struct gopcln *t, uint64_t i, struct gop_func *f)
{
	f->off = gop_ftab(t, 2 * i + 1);
	f->p = gop_at(t, &t->funcs, f->off, t->f_size);
	if (!f->p)
		return -EBADMSG;
	f->npcdata = gop_u32(f->p + t->f_npcdata);
	f->nfuncdata = t->f_nfd32 ? gop_u32(f->p + t->f_nfuncdata) : f->p[t->f_nfuncdata];
	if (!gop_at(t, &t->funcs, f->off + t->f_size, 4ull * f->npcdata))
		return -EBADMSG;
	f->entry = gop_entry(t, i);
	f->end = gop_entry(t, i + 1);
	return 0;
}

static uint32_t gop_pcdata(const struct gopcln *t, const struct gop_func *f, unsigned int i)
{
	return i < f->npcdata ? gop_u32(f->p + t->f_size + 4 * i) : 0;
}

/* The address funcdata i of f points to, 0 for none (or unknown). */
static uint64_t gop_funcdata(const struct gopcln *t, const struct gop_func *f, unsigned int i)
{
	uint64_t off = f->off + t->f_size + 4ull * f->npcdata, pad, v;
	const uint8_t *p;

	if (i >= f->nfuncdata)
		return 0;
	if (t->fmt >= GOP_118) {
		p = gop_at(t, &t->funcs, off + 4ull * i, 4);
		v = p ? gop_u32(p) : UINT32_MAX;
		return v == UINT32_MAX || !t->gofunc ? 0 : t->gofunc + v;
	}
	/* Pointers, aligned in memory as the runtime reads them: the table's vaddr counts. */
	pad = (t->ptr - (t->vaddr + t->funcs.off + off) % t->ptr) % t->ptr;
	p = gop_at(t, &t->funcs, off + pad + (uint64_t)i * t->ptr, t->ptr);
	return p ? gop_uptr(t, p) : 0;
}

/* A varint of at most 32 bits (more bytes than 5 is damage) from *p, before end. */
static int gop_varint(const uint8_t **p, const uint8_t *end, uint32_t *v)
{
	unsigned int shift;

	*v = 0;
	for (shift = 0; shift < 35; shift += 7) {
		uint8_t b;

		if (*p >= end)
			return -EBADMSG;
		b = *(*p)++;
		*v |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
	}
	return -EBADMSG;
}

/*
 * The value of the pc-value table at off into pctab for pc in the function at entry:
 * zigzag value deltas from -1 and pc deltas in quanta, ended by a zero value delta
 * (only after the first pair).  -1 where the table does not cover pc, or off is 0.
 */
static int gop_pcvalue(const struct gopcln *t, uint32_t off, uint64_t entry, uint64_t pc,
		       int32_t *val)
{
	const uint8_t *p = gop_at(t, &t->pctab, off, 1), *end = t->buf + t->pctab.end;
	uint64_t cur = entry;
	uint32_t v = UINT32_MAX;

	*val = -1;
	if (!off)
		return 0;
	if (!p)
		return -EBADMSG;
	for (;;) {
		uint32_t uv, pcd;
		uint64_t delta;

		if (p >= end)
			return -EBADMSG;
		if (!*p && cur != entry)
			return 0;
		if (gop_varint(&p, end, &uv) || gop_varint(&p, end, &pcd))
			return -EBADMSG;
		v += uv & 1 ? ~(uv >> 1) : uv >> 1;
		delta = (uint64_t)pcd * t->quantum;
		if (pc < cur || delta > pc - cur) {
			*val = (int32_t)v;
			return 0;
		}
		cur += delta;
	}
}

/* The name of file fno of f, NULL if it has none; -EBADMSG when damaged. */
static int gop_file(const struct gopcln *t, const struct gop_func *f, int32_t fno,
		    const char **file)
{
	const uint8_t *p;
	uint32_t cu, off;

	*file = NULL;
	if (t->fmt == GOP_12) {
		/* Entry 0 of the file table is its length: file numbers start at 1. */
		if (fno <= 0 || (uint64_t)fno >= t->nfiles)
			return 0;
		off = gop_u32(t->buf + t->filetab + 4ull * (uint32_t)fno);
	} else {
		cu = gop_u32(f->p + t->f_cu);
		if (fno < 0 || cu == UINT32_MAX)
			return 0;
		p = gop_at(t, &t->cutab, 4 * ((uint64_t)cu + (uint32_t)fno), 4);
		if (!p)
			return -EBADMSG;
		off = gop_u32(p);
		if (off == UINT32_MAX)
			return 0;
	}
	*file = gop_str(t, &t->files, off);
	return *file ? 0 : -EBADMSG;
}

/* Where a frame's file:line comes from: the tables at pc, or (Go 1.9-1.11) given. */
struct gop_loc {
	uint64_t pc;
	int32_t fno, line;
	bool given;
};

static int gop_fileline(const struct gopcln *t, const struct gop_func *f, const struct gop_loc *l,
			struct gopcln_frame *fr)
{
	int32_t fno = l->fno, line = l->line;
	int err = 0;

	if (!l->given) {
		err = gop_pcvalue(t, gop_u32(f->p + t->f_pcfile), f->entry, l->pc, &fno);
		if (!err)
			err = gop_pcvalue(t, gop_u32(f->p + t->f_pcln), f->entry, l->pc, &line);
	}
	fr->line = line > 0 ? line : 0;
	return err ? err : gop_file(t, f, fno, &fr->file);
}

struct gop_inl_ent {
	int32_t parent, parent_pc, fno, line;
	uint32_t name;
};

static int gop_inl_read(const struct gopcln *t, uint64_t tree, int32_t ix, struct gop_inl_ent *e)
{
	uint8_t b[20];
	uint64_t off = (uint64_t)ix * t->inl_size;

	if (off > UINT64_MAX - tree || gop_read(t, tree + off, b, t->inl_size))
		return -ENOENT;
	switch (t->inl) {
	case GOP_INL_PARENT:
		e->parent = (int32_t)gop_u32(b);
		e->fno = (int32_t)gop_u32(b + 4);
		e->line = (int32_t)gop_u32(b + 8);
		e->name = gop_u32(b + 12);
		break;
	case GOP_INL_PC20:
		e->parent = (int16_t)(b[0] | b[1] << 8);
		e->name = gop_u32(b + 12);
		e->parent_pc = (int32_t)gop_u32(b + 16);
		break;
	default:
		e->name = gop_u32(b + 4);
		e->parent_pc = (int32_t)gop_u32(b + 8);
		break;
	}
	return 0;
}

/* The function covering pc: the last entry <= pc (sorted at open). */
static int gop_find(const struct gopcln *t, uint64_t pc, uint64_t *i)
{
	uint64_t lo = 0, hi = t->nfunc;

	if (pc < gop_entry(t, 0) || pc >= gop_entry(t, t->nfunc))
		return -ENOENT;
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (gop_entry(t, mid) <= pc)
			lo = mid;
		else
			hi = mid;
	}
	*i = lo;
	return 0;
}

/* An inlined frame met walking out: its name and where its file:line comes from. */
struct gop_slot {
	uint32_t name;
	struct gop_loc loc;
};

int gopcln_lookup(const struct gopcln *t, uint64_t pc, struct gopcln_frame *out, size_t max)
{
	struct gop_slot ring[GOPCLN_MAX_INLINE];
	struct gop_loc loc = {.pc = pc};
	struct gop_func f;
	uint64_t i, tree = 0, n = 0, kept, total, skip, k;
	uint32_t ipc = 0;
	int32_t ix = -1;
	int err, steps;

	if (!t || !out || !max)
		return -EINVAL;
	err = gop_find(t, pc, &i);
	if (!err)
		err = gop_func_at(t, i, &f);
	if (err)
		return err;
	if (t->inl != GOP_INL_NONE) {
		ipc = gop_pcdata(t, &f, t->inl_pcdata);
		tree = ipc ? gop_funcdata(t, &f, t->inl_funcdata) : 0;
	}
	if (tree) {
		err = gop_pcvalue(t, ipc, f.entry, pc, &ix);
		if (err)
			return err;
	}
	/* Walk out to the real function; a ring keeps the outermost inlined calls. */
	for (steps = 0; ix >= 0 && steps < GOP_MAX_STEPS; steps++) {
		struct gop_inl_ent e;
		int32_t next;

		if (gop_inl_read(t, tree, ix, &e))
			break;
		ring[n++ % GOPCLN_MAX_INLINE] = (struct gop_slot){e.name, loc};
		if (t->inl == GOP_INL_PARENT) {
			loc = (struct gop_loc){.fno = e.fno, .line = e.line, .given = true};
			next = e.parent;
		} else {
			/* The caller's frame is at an instruction of the call site. */
			if (e.parent_pc < 0 || (uint64_t)e.parent_pc >= f.end - f.entry)
				break;
			loc.pc = f.entry + (uint64_t)e.parent_pc;
			err = gop_pcvalue(t, ipc, f.entry, loc.pc, &next);
			if (err)
				return err;
		}
		if (next >= ix)
			break; /* a parent that does not come first: damaged */
		ix = next;
	}
	kept = n < GOPCLN_MAX_INLINE ? n : GOPCLN_MAX_INLINE;
	total = kept + 1;
	skip = total > max ? total - max : 0;
	for (k = skip; k < total; k++) {
		struct gopcln_frame *fr = &out[k - skip];
		const struct gop_loc *l = &loc;
		uint32_t name = gop_u32(f.p + t->f_name);

		if (k < kept) {
			const struct gop_slot *s = &ring[(n - kept + k) % GOPCLN_MAX_INLINE];

			name = s->name;
			l = &s->loc;
		}
		fr->name = gop_str(t, &t->names, name);
		if (!fr->name)
			return -EBADMSG;
		err = gop_fileline(t, &f, l, fr);
		if (err)
			return err;
	}
	return (int)(total - skip);
}

size_t gopcln_nr_funcs(const struct gopcln *t)
{
	return t ? (size_t)t->nfunc : 0;
}

int gopcln_func(const struct gopcln *t, size_t i, uint64_t *start, uint64_t *end, const char **name)
{
	struct gop_func f;
	int err;

	if (!t || i >= t->nfunc)
		return -ERANGE;
	err = gop_func_at(t, i, &f);
	if (err)
		return err;
	*name = gop_str(t, &t->names, gop_u32(f.p + t->f_name));
	if (!*name)
		return -EBADMSG;
	*start = f.entry;
	*end = f.end;
	return 0;
}

const char *gopcln_format(const struct gopcln *t)
{
	static const char *const names[] = {"1.2", "1.16", "1.18", "1.20"};

	return t ? names[t->fmt] : NULL;
}

/*
 * Go 1.12 turned _func's int32 nfuncdata into funcID, 2 spare bytes and a u8 nfuncdata
 * (a little-endian int32 below 2^24 leaves that last byte 0), and inline trees got
 * parentPc.  Nearly every function has funcdata, so one non-zero byte tells.  Go 1.12
 * itself numbered the inline tables as 1.9-1.11 did; it is read as 1.13-1.15.
 */
static void gop_layout_12(struct gopcln *t)
{
	uint64_t i;

	t->f_nfd32 = true;
	t->f_nfuncdata = t->ptr + 28;
	for (i = 0; i < t->nfunc; i++) {
		const uint8_t *p = gop_at(t, &t->funcs, gop_ftab(t, 2 * i + 1), t->f_size);

		if (p && p[t->ptr + 31]) {
			t->f_nfd32 = false;
			t->f_nfuncdata = t->ptr + 31;
			break;
		}
	}
	t->inl = t->f_nfd32 ? GOP_INL_PARENT : GOP_INL_PC20;
	t->inl_pcdata = t->f_nfd32 ? 1 : 2;
	t->inl_funcdata = t->f_nfd32 ? 2 : 4;
	t->inl_size = t->f_nfd32 ? 16 : 20;
}

/* Region r runs to the next region's start (they are laid out back to back), or the end. */
static void gop_region_ends(struct gopcln *t, struct gop_rgn **r, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		r[i]->end = t->len;
		for (j = 0; j < n; j++)
			if (r[j]->off > r[i]->off && r[j]->off < r[i]->end)
				r[i]->end = r[j]->off;
	}
}

static int gop_header(struct gopcln *t, uint32_t magic)
{
	const uint8_t *h = t->buf;
	uint64_t words = magic == GOP_MAGIC_116 ? 7 : 8, off[5], i;
	struct gop_rgn *r[] = {&t->names, &t->cutab, &t->files, &t->pctab, &t->funcs};

	if (t->len < 8 + words * t->ptr)
		return -EBADMSG;
	t->nfunc = gop_uptr(t, h + 8);
	if (magic != GOP_MAGIC_116 && !t->text)
		t->text = gop_uptr(t, h + 8 + 2 * t->ptr);
	for (i = 0; i < 5; i++) {
		off[i] = gop_uptr(t, h + 8 + (words - 5 + i) * t->ptr);
		if (off[i] < 8 + words * t->ptr || off[i] > t->len)
			return -EBADMSG;
		r[i]->off = off[i];
	}
	gop_region_ends(t, r, 5);
	t->ftab = t->funcs.off;
	t->f_nfd32 = false;
	t->inl_pcdata = 2;
	t->inl_funcdata = 3;
	if (magic == GOP_MAGIC_116) {
		t->fmt = GOP_116;
		t->ftab_sz = t->ptr;
		t->f_size = t->ptr + 36;
		t->f_name = t->ptr;
		t->f_cu = t->ptr + 28;
		t->f_nfuncdata = t->ptr + 35;
		t->inl = GOP_INL_PC20;
		t->inl_size = 20;
	} else {
		t->fmt = magic == GOP_MAGIC_118 ? GOP_118 : GOP_120;
		t->ftab_sz = 4;
		t->f_size = magic == GOP_MAGIC_118 ? 40 : 44;
		t->f_name = 4;
		t->f_cu = 32;
		t->f_nfuncdata = t->f_size - 1;
		t->inl = magic == GOP_MAGIC_118 ? GOP_INL_PC20 : GOP_INL_PC16;
		t->inl_size = magic == GOP_MAGIC_118 ? 20 : 16;
		/* Entries are u32 offsets from text: keep their sum from wrapping. */
		if (t->text > UINT64_MAX - UINT32_MAX)
			return -EBADMSG;
	}
	/* After the name: args, deferreturn, pcsp, then these. */
	t->f_pcfile = t->f_name + 16;
	t->f_pcln = t->f_name + 20;
	t->f_npcdata = t->f_name + 24;
	return 0;
}

static int gop_header_12(struct gopcln *t)
{
	uint64_t fsz;

	t->fmt = GOP_12;
	if (t->len < 8 + (uint64_t)t->ptr)
		return -EBADMSG;
	t->nfunc = gop_uptr(t, t->buf + 8);
	t->ftab = 8 + t->ptr;
	t->ftab_sz = t->ptr;
	t->funcs = t->names = t->files = t->pctab = (struct gop_rgn){0, t->len};
	/* The file table's offset follows functab's end pc. */
	if (t->nfunc > t->len / (2 * t->ptr))
		return -EBADMSG;
	fsz = (2 * t->nfunc + 1) * t->ptr;
	if (fsz + 4 > t->len - t->ftab)
		return -EBADMSG;
	t->filetab = gop_u32(t->buf + t->ftab + fsz);
	if (t->filetab > t->len - 4)
		return -EBADMSG;
	t->nfiles = gop_u32(t->buf + t->filetab);
	if (t->nfiles > (t->len - t->filetab) / 4)
		return -EBADMSG;
	t->f_size = t->ptr + 32;
	t->f_name = t->ptr;
	t->f_pcfile = t->ptr + 16;
	t->f_pcln = t->ptr + 20;
	t->f_npcdata = t->ptr + 24;
	t->f_cu = 0;
	return 0;
}

static int gop_parse(struct gopcln *t)
{
	const uint8_t *h = t->buf;
	uint64_t i, prev;
	uint32_t magic;
	int err;

	if (t->len < 8)
		return -ENOENT;
	magic = gop_u32(h);
	if ((magic != GOP_MAGIC_12 && magic != GOP_MAGIC_116 && magic != GOP_MAGIC_118 &&
	     magic != GOP_MAGIC_120) ||
	    h[4] || h[5] || (h[6] != 1 && h[6] != 2 && h[6] != 4) || (h[7] != 4 && h[7] != 8))
		return -ENOENT;
	t->quantum = h[6];
	t->ptr = h[7];
	err = magic == GOP_MAGIC_12 ? gop_header_12(t) : gop_header(t, magic);
	if (err)
		return err;
	/* functab: nfunc (entry, funcoff) pairs and the end pc, in the pclntab region. */
	if (!t->nfunc || t->nfunc > (t->funcs.end - t->ftab) / (2 * t->ftab_sz) ||
	    (2 * t->nfunc + 1) * t->ftab_sz > t->funcs.end - t->ftab)
		return -EBADMSG;
	for (i = 0, prev = 0; i <= t->nfunc; i++) {
		uint64_t e = gop_entry(t, i);

		if (e < prev ||
		    (i < t->nfunc && gop_ftab(t, 2 * i + 1) > t->funcs.end - t->funcs.off))
			return -EBADMSG;
		prev = e;
	}
	if (t->fmt == GOP_12)
		gop_layout_12(t);
	return 0;
}

static struct gopcln *gop_new(const void *buf, uint64_t len, uint64_t vaddr, uint64_t text,
			      uint64_t gofunc, gopcln_read_fn read, void *ctx, int *err)
{
	struct gopcln *t = calloc(1, sizeof(*t));

	if (!t) {
		*err = -ENOMEM;
		return NULL;
	}
	*t = (struct gopcln){.buf = buf,
			     .len = len,
			     .vaddr = vaddr,
			     .text = text,
			     .gofunc = gofunc,
			     .read = read,
			     .ctx = ctx};
	*err = vaddr > UINT64_MAX - len ? -EBADMSG : gop_parse(t);
	if (*err) {
		free(t);
		return NULL;
	}
	return t;
}

struct gopcln *gopcln_open_mem(const void *buf, size_t len, uint64_t vaddr, uint64_t text,
			       uint64_t gofunc, gopcln_read_fn read, void *ctx)
{
	struct gopcln *t;
	int err;

	if (!buf) {
		errno = EINVAL;
		return NULL;
	}
	t = gop_new(buf, len, vaddr, text, gofunc, read, ctx, &err);
	if (!t)
		errno = -err;
	return t;
}

void gopcln_free(struct gopcln *t)
{
	if (!t)
		return;
	free(t->segs);
	free(t);
}

/*
 * In an ELF file: the .gopclntab section (what `-s -w` keeps; .data.rel.ro.gopclntab
 * in PIE), else runtime.pclntab of .symtab, else a header found in the loaded
 * segments: external linking (cgo) merges the table into .data.rel.ro, and a stripped
 * file keeps no name for it.  1.18+ funcdata are offsets from go:func.* (go.func.* in
 * 1.18-1.19), named in .symtab or read from runtime.firstmoduledata.
 */
struct gop_elf {
	Elf *elf;
	struct gop_seg *segs;
	size_t nsegs;
	bool go_note;	/* the Go linker's build ID note: only then is a scan worth it */
	bool syms_read; /* .symtab is read only where the rest does not tell */
	uint64_t pclntab, epclntab, text, gofunc; /* from .symtab, 0: absent */
};

static const struct gop_seg *gop_seg_of(const struct gop_seg *segs, size_t n, uint64_t vaddr,
					uint64_t len)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (vaddr >= segs[i].vaddr && vaddr - segs[i].vaddr <= segs[i].size &&
		    len <= segs[i].size - (vaddr - segs[i].vaddr))
			return &segs[i];
	return NULL;
}

static int gop_seg_read(void *ctx, uint64_t vaddr, void *out, size_t len)
{
	const struct gopcln *t = ctx;
	const struct gop_seg *s = gop_seg_of(t->segs, t->nsegs, vaddr, len);

	if (!s)
		return -EFAULT;
	memcpy(out, s->data + (vaddr - s->vaddr), len);
	return 0;
}

/* Whether the notes at p (len bytes) hold Go's build ID: owner "Go\0\0", type 4. */
static bool gop_go_note(const uint8_t *p, uint64_t len)
{
	while (len >= 12) {
		uint64_t namesz = gop_u32(p), descsz = gop_u32(p + 4), size;

		size = 12 + ((namesz + 3) & ~3ull) + ((descsz + 3) & ~3ull);
		if (namesz == 4 && len >= 16 && !memcmp(p + 12, "Go\0", 4) && gop_u32(p + 8) == 4)
			return true;
		if (size > len)
			break;
		p += size;
		len -= size;
	}
	return false;
}

static int gop_elf_segs(Elf *elf, struct gop_elf *e)
{
	const uint8_t *raw;
	size_t rawlen, nph, i;

	raw = (const uint8_t *)elf_rawfile(elf, &rawlen);
	if (!raw || elf_getphdrnum(elf, &nph))
		return -ENOENT;
	e->segs = calloc(nph ? nph : 1, sizeof(*e->segs));
	if (!e->segs)
		return -ENOMEM;
	for (i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_offset > rawlen ||
		    ph.p_filesz > rawlen - ph.p_offset)
			continue;
		if (ph.p_type == PT_NOTE && gop_go_note(raw + ph.p_offset, ph.p_filesz))
			e->go_note = true;
		if (ph.p_type != PT_LOAD || ph.p_vaddr > UINT64_MAX - ph.p_filesz)
			continue;
		e->segs[e->nsegs++] =
			(struct gop_seg){ph.p_vaddr, ph.p_filesz, raw + ph.p_offset, ph.p_flags};
	}
	return 0;
}

/* The few symbols that help, when .symtab is there: one pass over it. */
static void gop_elf_syms(struct gop_elf *e)
{
	Elf *elf = e->elf;
	Elf_Scn *scn = NULL;

	if (e->syms_read)
		return;
	e->syms_read = true;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		n = d ? sh.sh_size / sh.sh_entsize : 0;
		for (i = 0; i < n; i++) {
			const char *name;
			GElf_Sym sym;

			if (!gelf_getsym(d, (int)i, &sym) || !sym.st_name || !sym.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || (name[0] != 'r' && name[0] != 'g'))
				continue;
			if (!strcmp(name, "runtime.pclntab"))
				e->pclntab = sym.st_value;
			else if (!strcmp(name, "runtime.epclntab"))
				e->epclntab = sym.st_value;
			else if (!strcmp(name, "runtime.text"))
				e->text = sym.st_value;
			else if (!strcmp(name, "go:func.*") || !strcmp(name, "go.func.*"))
				e->gofunc = sym.st_value;
		}
	}
}

static struct gopcln *gop_elf_section(Elf *elf, int *err)
{
	size_t shstrndx, rawlen;
	const uint8_t *raw = (const uint8_t *)elf_rawfile(elf, &rawlen);
	Elf_Scn *scn = NULL;

	*err = -ENOENT;
	if (!raw || elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    (sh.sh_flags & SHF_COMPRESSED) || sh.sh_offset > rawlen ||
		    sh.sh_size > rawlen - sh.sh_offset)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name &&
		    (!strcmp(name, ".gopclntab") || !strcmp(name, ".data.rel.ro.gopclntab")))
			return gop_new(raw + sh.sh_offset, sh.sh_size, sh.sh_addr, 0, 0, NULL, NULL,
				       err);
	}
	return NULL;
}

static struct gopcln *gop_elf_symbol(struct gop_elf *e, int *err)
{
	const struct gop_seg *s;
	uint64_t len;

	gop_elf_syms(e);
	s = gop_seg_of(e->segs, e->nsegs, e->pclntab, 0);
	*err = -ENOENT;
	if (!e->pclntab || !s)
		return NULL;
	len = s->size - (e->pclntab - s->vaddr);
	if (e->epclntab > e->pclntab && e->epclntab - e->pclntab < len)
		len = e->epclntab - e->pclntab;
	return gop_new(s->data + (e->pclntab - s->vaddr), len, e->pclntab, 0, 0, NULL, NULL, err);
}

/*
 * runtime.firstmoduledata: in a writable segment, a pointer to the table followed by
 * the slices of its parts, then (in words) text at 22 and rodata, gofunc at 37, 38
 * (Go 1.18-1.19), at 39, 40 (1.20 added covctrs, ecovctrs) or at 42, 43 (typedesclen,
 * itaboffset and itabsize came by 1.27, with no new magic: the first pair that is two
 * addresses in the file decides).
 */
static void gop_moduledata(struct gopcln *t)
{
	static const uint8_t idx[] = {0, 1, 4, 7, 10, 13, 16}, gf118[] = {38}, gf120[] = {40, 43};
	uint64_t want[] = {t->vaddr,
			   t->vaddr + t->names.off,
			   t->vaddr + t->cutab.off,
			   t->vaddr + t->files.off,
			   t->vaddr + t->pctab.off,
			   t->vaddr + t->funcs.off,
			   t->vaddr + t->funcs.off};
	const uint8_t *gf = t->fmt == GOP_118 ? gf118 : gf120;
	size_t ngf = t->fmt == GOP_118 ? 1 : 2, i, k;
	uint64_t need = (gf[ngf - 1] + 1ull) * t->ptr;

	for (i = 0; i < t->nsegs; i++) {
		const struct gop_seg *s = &t->segs[i];
		uint64_t off;

		if (!(s->flags & PF_W) || s->size < need)
			continue;
		for (off = (t->ptr - s->vaddr % t->ptr) % t->ptr; off <= s->size - need;
		     off += t->ptr) {
			const uint8_t *p = s->data + off;
			uint64_t text;

			for (k = 0; k < sizeof(idx) && gop_uptr(t, p + idx[k] * t->ptr) == want[k];)
				k++;
			if (k < sizeof(idx))
				continue;
			text = gop_uptr(t, p + 22 * t->ptr);
			if ((t->text && text != t->text) || !text || text > UINT64_MAX - UINT32_MAX)
				continue;
			t->text = text;
			for (k = 0; k < ngf; k++) {
				uint64_t rodata = gop_uptr(t, p + (gf[k] - 1ull) * t->ptr);
				uint64_t gofunc = gop_uptr(t, p + gf[k] * (uint64_t)t->ptr);

				/* Read-only data follows the text, go:func.* inside it. */
				if (rodata > text && rodata <= gofunc &&
				    gop_seg_of(t->segs, t->nsegs, rodata, 1) &&
				    gop_seg_of(t->segs, t->nsegs, gofunc, 1)) {
					t->gofunc = gofunc;
					break;
				}
			}
			return;
		}
	}
}

/*
 * What a table of e needs besides itself: e's segments to read, and for 1.18+ the text
 * start (newer linkers leave the header's 0) and gofunc: from moduledata, else (a data
 * segment relocated at load time) from .symtab.
 */
static int gop_elf_finish(struct gopcln *t, struct gop_elf *e)
{
	t->segs = e->segs;
	t->nsegs = e->nsegs;
	t->read = gop_seg_read;
	t->ctx = t;
	if (t->fmt < GOP_118)
		return 0;
	gop_moduledata(t);
	if (!t->text || !t->gofunc) {
		gop_elf_syms(e);
		if (!t->text && e->text <= UINT64_MAX - UINT32_MAX)
			t->text = e->text;
		if (!t->gofunc)
			t->gofunc = e->gofunc;
	}
	return t->text ? 0 : -EBADMSG;
}

/* Functions, all of them inside one executable segment: a real table's. */
static bool gop_in_text(const struct gopcln *t, const struct gop_elf *e)
{
	uint64_t lo = gop_entry(t, 0), hi = gop_entry(t, t->nfunc);
	const struct gop_seg *s = gop_seg_of(e->segs, e->nsegs, lo, hi - lo);

	return s && (s->flags & PF_X);
}

/*
 * A header in the data segments of a file with Go's build ID note, at a 4-byte
 * boundary, that holds together.  Bytes that only look like one are no error.
 */
static struct gopcln *gop_elf_scan(struct gop_elf *e, int *err)
{
	size_t i;

	*err = -ENOENT;
	for (i = 0; e->go_note && i < e->nsegs; i++) {
		const struct gop_seg *s = &e->segs[i];
		uint64_t off;

		if (s->flags & PF_X)
			continue;
		for (off = (4 - s->vaddr % 4) % 4; s->size >= 16 && off <= s->size - 16; off += 4) {
			const uint8_t *p = s->data + off;
			struct gopcln *t;

			if (p[1] != 0xff || p[2] != 0xff || p[3] != 0xff || p[4] || p[5] ||
			    (p[0] != 0xfb && p[0] != 0xfa && p[0] != 0xf0 && p[0] != 0xf1))
				continue;
			t = gop_new(p, s->size - off, s->vaddr + off, 0, 0, NULL, NULL, err);
			if (t && !gop_elf_finish(t, e) && gop_in_text(t, e))
				return t;
			free(t); /* not its segments: e's */
			if (*err == -ENOMEM)
				return NULL;
			*err = -ENOENT;
		}
	}
	return NULL;
}

struct gopcln *gopcln_open(Elf *elf)
{
	struct gop_elf e = {0};
	struct gopcln *t = NULL;
	int err;

	if (!elf) {
		errno = EINVAL;
		return NULL;
	}
	e.elf = elf;
	err = gop_elf_segs(elf, &e);
	if (err)
		goto out;
	/*
	 * The first place that has a table decides; later ones only where it has none,
	 * and only in a file with Go's build ID note: the symbol table of every other
	 * file without DWARF is not worth a pass.
	 */
	t = gop_elf_section(elf, &err);
	if (!t && err == -ENOENT && e.go_note)
		t = gop_elf_symbol(&e, &err);
	if (t) {
		err = gop_elf_finish(t, &e);
		if (err) {
			free(t);
			t = NULL;
		}
	} else if (err == -ENOENT) {
		t = gop_elf_scan(&e, &err);
	}
	if (t)
		e.segs = NULL; /* the table's now */
out:
	free(e.segs);
	if (!t)
		errno = -err;
	return t;
}
