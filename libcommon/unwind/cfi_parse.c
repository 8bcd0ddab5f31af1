// SPDX-License-Identifier: Apache-2.0
/*
 * .eh_frame / .debug_frame reader and CFA program interpreter (DWARF 5 section 6.4,
 * LSB "Exception Frames").  Input is untrusted: every read is bounds-checked and a bad
 * entry costs that entry only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/cfi_priv.h"

/* Pointer encodings (DW_EH_PE_*). */
#define PE_ABSPTR   0x00
#define PE_ULEB128  0x01
#define PE_UDATA2   0x02
#define PE_UDATA4   0x03
#define PE_UDATA8   0x04
#define PE_SIGNED   0x08
#define PE_SLEB128  0x09
#define PE_SDATA2   0x0a
#define PE_SDATA4   0x0b
#define PE_SDATA8   0x0c
#define PE_PCREL    0x10
#define PE_TEXTREL  0x20
#define PE_DATAREL  0x30
#define PE_FUNCREL  0x40
#define PE_ALIGNED  0x50
#define PE_INDIRECT 0x80
#define PE_OMIT	    0xff

#define CFI_STACK_MAX 32 /* remember_state depth; compilers nest 1-2 */

struct rd {
	const uint8_t *p, *end;
	bool err;
};

static uint64_t rd_fixed(struct rd *r, int size)
{
	uint64_t v = 0;

	if (r->err || r->end - r->p < size) {
		r->err = true;
		return 0;
	}
	for (int i = 0; i < size; i++) /* little-endian: x86-64 only */
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += size;
	return v;
}

static uint8_t rd_u8(struct rd *r)
{
	return rd_fixed(r, 1);
}

/* LEB128; a signed value is sign-extended from its last byte's bit 6. */
static uint64_t rd_leb(struct rd *r, bool is_signed)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (r->err || r->p >= r->end) {
			r->err = true;
			return 0;
		}
		b = *r->p++;
		if (shift < 64) {
			v |= (uint64_t)(b & 0x7f) << shift;
			shift += 7;
		}
	} while (b & 0x80);
	if (is_signed && shift < 64 && (b & 0x40))
		v |= ~0ull << shift;
	return v;
}

static uint64_t rd_uleb(struct rd *r)
{
	return rd_leb(r, false);
}

static int64_t rd_sleb(struct rd *r)
{
	return (int64_t)rd_leb(r, true);
}

/* A ULEB128 operand that is an offset: above INT64_MAX it is garbage. */
static int64_t rd_uoff(struct rd *r)
{
	uint64_t v = rd_uleb(r);

	if (v > INT64_MAX) {
		r->err = true;
		return 0;
	}
	return (int64_t)v;
}

/* v times a CIE alignment factor; a product that overflows is an error, not a wrap. */
static int64_t rd_factored(struct rd *r, int64_t v, int64_t align)
{
	int64_t out;

	if (__builtin_mul_overflow(v, align, &out)) {
		r->err = true;
		return 0;
	}
	return out;
}

static void rd_skip(struct rd *r, uint64_t n)
{
	if (r->err || (uint64_t)(r->end - r->p) < n) {
		r->err = true;
		return;
	}
	r->p += n;
}

/* The value part of an encoded pointer, no base applied. */
static uint64_t rd_enc_value(struct rd *r, uint8_t enc, uint8_t addr_size)
{
	switch (enc & 0x0f) {
	case PE_ABSPTR:
		return rd_fixed(r, addr_size);
	case PE_SIGNED:
		return addr_size == 4 ? (uint64_t)(int32_t)rd_fixed(r, 4) : rd_fixed(r, 8);
	case PE_ULEB128:
		return rd_uleb(r);
	case PE_UDATA2:
		return rd_fixed(r, 2);
	case PE_UDATA4:
		return rd_fixed(r, 4);
	case PE_UDATA8:
		return rd_fixed(r, 8);
	case PE_SLEB128:
		return rd_sleb(r);
	case PE_SDATA2:
		return (uint64_t)(int16_t)rd_fixed(r, 2);
	case PE_SDATA4:
		return (uint64_t)(int32_t)rd_fixed(r, 4);
	case PE_SDATA8:
		return rd_fixed(r, 8);
	default:
		r->err = true;
		return 0;
	}
}

/*
 * An encoded pointer with its base applied.  *indirect is set for DW_EH_PE_indirect: the
 * result is then the address of the pointer, which only personality routines use.
 */
static uint64_t rd_enc_ptr(struct rd *r, const struct cfi_section *s, uint8_t enc,
			   uint8_t addr_size, bool *indirect)
{
	uint64_t base = 0, v;

	*indirect = enc & PE_INDIRECT;
	switch (enc & 0x70) {
	case 0:
		break;
	case PE_PCREL:
		base = s->vaddr + (uint64_t)(r->p - s->data);
		break;
	case PE_TEXTREL:
		base = s->text_vaddr;
		break;
	case PE_DATAREL:
		base = s->got_vaddr;
		break;
	case PE_ALIGNED: {
		size_t pos = r->p - s->data;
		size_t pad = (addr_size - (s->vaddr + pos) % addr_size) % addr_size;

		rd_skip(r, pad);
		break;
	}
	default: /* funcrel has no meaning for the pointers we decode */
		r->err = true;
		return 0;
	}
	v = rd_enc_value(r, enc, addr_size);
	return base + v;
}

/* Entry header: length (32 or 64-bit) and the CIE id / CIE pointer field. */
struct entry {
	size_t off, end; /* entry and its end in the section */
	size_t id_off;	 /* where the id field is */
	uint64_t id;
	bool is_cie;
	const uint8_t *body; /* after the id field */
};

/* 1: entry read, 0: end of section, -EINVAL: bad length (the rest is unreadable). */
static int next_entry(const struct cfi_section *s, size_t off, struct entry *e)
{
	struct rd r = {s->data + off, s->data + s->size, false};
	uint64_t len;
	int osize = 4;

	if (s->size - off < 4)
		return 0;
	len = rd_fixed(&r, 4);
	if (len == 0xffffffff) {
		len = rd_fixed(&r, 8);
		osize = 8;
	}
	if (r.err || len > (uint64_t)(r.end - r.p))
		return -EINVAL;
	e->off = off;
	e->end = (r.p - s->data) + len;
	if (len == 0) { /* terminator (or padding): an empty entry */
		e->is_cie = false;
		e->body = NULL;
		return 1;
	}
	r.end = s->data + e->end;
	e->id_off = r.p - s->data;
	e->id = rd_fixed(&r, osize);
	if (r.err)
		return -EINVAL;
	if (s->is_eh)
		e->is_cie = e->id == 0;
	else
		e->is_cie = osize == 4 ? e->id == 0xffffffffu : e->id == ~0ull;
	e->body = r.p;
	return 1;
}

static int parse_cie(const struct cfi_section *s, const struct entry *en, struct cfi_cie *c)
{
	struct rd r = {en->body, s->data + en->end, false};
	const char *aug;
	const uint8_t *aug_end = NULL;
	uint8_t version;
	bool indirect;

	memset(c, 0, sizeof(*c));
	c->off = en->off;
	c->addr_size = 8;
	c->fde_enc = PE_ABSPTR;
	version = rd_u8(&r);
	if (r.err || (version != 1 && version != 3 && version != 4))
		return -EINVAL;
	aug = (const char *)r.p;
	while (r.p < r.end && *r.p)
		r.p++;
	rd_skip(&r, 1);
	if (r.err)
		return -EINVAL;
	if (!strncmp(aug, "eh", 2)) /* gcc 2.x: an eh_ptr follows */
		rd_skip(&r, c->addr_size);
	if (version == 4) {
		c->addr_size = rd_u8(&r);
		rd_u8(&r); /* segment selector size */
		if (c->addr_size != 4 && c->addr_size != 8)
			return -EINVAL;
	}
	c->code_align = rd_uleb(&r);
	c->data_align = rd_sleb(&r);
	c->ra_reg = version == 1 ? rd_u8(&r) : rd_uleb(&r);
	if (aug[0] == 'z') {
		uint64_t alen = rd_uleb(&r);

		c->aug_z = true;
		if (r.err || alen > (uint64_t)(r.end - r.p))
			return -EINVAL;
		aug_end = r.p + alen;
	}
	for (const char *a = aug[0] == 'z' ? aug + 1 : aug; *a && !r.err; a++) {
		switch (*a) {
		case 'R':
			c->fde_enc = rd_u8(&r);
			break;
		case 'L':
			rd_u8(&r); /* LSDA encoding: the FDE's augmentation data, skipped by 'z' */
			break;
		case 'P': {
			uint8_t enc = rd_u8(&r);

			rd_enc_ptr(&r, s, enc, c->addr_size, &indirect);
			break;
		}
		case 'S':
			c->signal = true;
			break;
		case 'B': /* aarch64 BTI, MTE: no data */
		case 'G':
			break;
		case 'h':
		case 'e': /* "eh", handled above */
			break;
		default:
			if (!c->aug_z) /* no way to know what follows */
				return -EINVAL;
			r.p = aug_end; /* 'z' says how much to skip */
			goto done;
		}
	}
done:
	if (aug_end) {
		if (r.err || r.p > aug_end)
			return -EINVAL;
		r.p = aug_end;
	}
	if (r.err || c->code_align == 0)
		return -EINVAL;
	c->insns = r.p;
	c->insns_len = r.end - r.p;
	return 0;
}

static int push_cie(struct cfi_entries *e, const struct cfi_cie *c)
{
	if (e->n_cies == e->cap_cies) {
		size_t cap = e->cap_cies ? 2 * e->cap_cies : 16;
		struct cfi_cie *n = realloc(e->cies, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		e->cies = n;
		e->cap_cies = cap;
	}
	e->cies[e->n_cies++] = *c;
	return 0;
}

static int push_fde(struct cfi_entries *e, const struct cfi_fde *f)
{
	if (e->n_fdes == e->cap_fdes) {
		size_t cap = e->cap_fdes ? 2 * e->cap_fdes : 256;
		struct cfi_fde *n = realloc(e->fdes, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		e->fdes = n;
		e->cap_fdes = cap;
	}
	e->fdes[e->n_fdes++] = *f;
	return 0;
}

/* Index of the CIE at off among cies[lo, hi) (sorted by off), or -1. */
static long find_cie(const struct cfi_entries *e, size_t lo, size_t hi, size_t off)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e->cies[mid].off == off)
			return mid;
		if (e->cies[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/*
 * Can [start, start + range) be code?  Within CFI_FDE_MAX_RANGE and inside one executable
 * segment when those are known: one huge bogus range would otherwise cover the FDEs after
 * it, or spread the table past what a row's 32-bit pc can hold.
 */
static bool fde_range_ok(const struct cfi_entries *e, uint64_t start, uint64_t range)
{
	if (range > CFI_FDE_MAX_RANGE || start + range < start)
		return false;
	for (size_t i = 0; i < e->n_exec; i++)
		if (start >= e->exec[i].lo && start + range <= e->exec[i].hi)
			return true;
	return !e->n_exec;
}

static int parse_fde(const struct cfi_section *s, const struct cfi_entries *e,
		     const struct entry *en, const struct cfi_cie *c, struct cfi_fde *f)
{
	struct rd r = {en->body, s->data + en->end, false};
	bool indirect;
	uint64_t range;

	f->start = rd_enc_ptr(&r, s, c->fde_enc, c->addr_size, &indirect);
	range = rd_enc_value(&r, c->fde_enc & 0x0f, c->addr_size);
	if (c->aug_z)
		rd_skip(&r, rd_uleb(&r));
	if (r.err || indirect || !fde_range_ok(e, f->start, range))
		return -EINVAL;
	f->end = f->start + range;
	f->insns = r.p;
	f->insns_len = r.end - r.p;
	f->sec = s;
	f->from_debug = !s->is_eh;
	return 0;
}

int cfi_parse_section(const struct cfi_section *s, struct cfi_entries *e)
{
	size_t first_cie = e->n_cies, off;
	struct entry en;
	struct cfi_cie c;
	int err;

	/* Pass 1: CIEs (a .debug_frame FDE may point forward). */
	for (off = 0; (err = next_entry(s, off, &en)) > 0; off = en.end) {
		if (!en.is_cie)
			continue;
		if (parse_cie(s, &en, &c)) {
			e->bad++;
			continue;
		}
		if ((err = push_cie(e, &c)))
			return err;
	}
	if (err < 0)
		e->bad++;
	/* Pass 2: FDEs. */
	for (off = 0; next_entry(s, off, &en) > 0; off = en.end) {
		struct cfi_fde f = {0};
		size_t cie_off;
		long ci;

		if (en.is_cie || !en.body)
			continue;
		if (s->is_eh) { /* relative to the id field, pointing back */
			if (en.id > en.id_off) {
				e->bad++;
				continue;
			}
			cie_off = en.id_off - en.id;
		} else {
			cie_off = en.id;
		}
		ci = find_cie(e, first_cie, e->n_cies, cie_off);
		if (ci < 0 || parse_fde(s, e, &en, &e->cies[ci], &f)) {
			e->bad++;
			continue;
		}
		f.cie = ci;
		if (f.end > f.start && (err = push_fde(e, &f)))
			return err;
	}
	return 0;
}

void cfi_entries_free(struct cfi_entries *e)
{
	free(e->cies);
	free(e->fdes);
	memset(e, 0, sizeof(*e));
}

/* The interpreter. */

struct interp {
	const struct cfi_cie *cie;
	const struct cfi_fde *fde;
	struct cfi_state st, init;
	struct cfi_state stack[CFI_STACK_MAX];
	int sp;
	uint64_t loc;
	bool emit;
	cfi_row_fn fn;
	void *ctx;
};

static struct cfi_rule *rule_of(struct interp *in, uint64_t reg)
{
	if (reg == CFI_REG_RBP)
		return &in->st.rbp;
	if (reg == in->cie->ra_reg)
		return &in->st.ra;
	return NULL;
}

static void set_rule(struct interp *in, uint64_t reg, uint8_t kind, int64_t off)
{
	struct cfi_rule *r = rule_of(in, reg);

	if (r)
		*r = (struct cfi_rule){.kind = kind, .off = off};
}

static void restore_rule(struct interp *in, uint64_t reg)
{
	struct cfi_rule *r = rule_of(in, reg);

	if (r)
		*r = reg == CFI_REG_RBP ? in->init.rbp : in->init.ra;
}

static int advance(struct interp *in, uint64_t newloc)
{
	int err;

	if (newloc < in->loc)
		return -EINVAL;
	if (in->emit && newloc > in->loc && in->loc < in->fde->end &&
	    (err = in->fn(in->ctx, in->loc, &in->st)))
		return err;
	in->loc = newloc;
	return 0;
}

/* Advance by delta code_align units read from r (nothing happens if that read failed). */
static int advance_by(struct interp *in, const struct rd *r, uint64_t delta)
{
	uint64_t d, loc;

	if (r->err || __builtin_mul_overflow(delta, in->cie->code_align, &d) ||
	    __builtin_add_overflow(in->loc, d, &loc))
		return -EINVAL;
	return advance(in, loc);
}

/* A DWARF expression block: uleb length then bytes. */
static void rd_block(struct rd *r, const uint8_t **p, size_t *len)
{
	uint64_t n = rd_uleb(r);

	*p = r->p;
	*len = n;
	rd_skip(r, n);
}

static int exec(struct interp *in, const uint8_t *p, size_t len)
{
	const struct cfi_cie *c = in->cie;
	struct rd r = {p, p + len, false};
	struct cfi_rule *rule;
	uint64_t reg;
	int err = 0;

	/* Every operand read fails at the end of the program, and a failed read ends it. */
	while (!err && !r.err && r.p < r.end) {
		uint8_t op = rd_u8(&r);

		switch (op >> 6) {
		case 1: /* DW_CFA_advance_loc */
			err = advance_by(in, &r, op & 0x3f);
			continue;
		case 2: /* DW_CFA_offset */
			set_rule(in, op & 0x3f, CFI_R_OFFSET,
				 rd_factored(&r, rd_uoff(&r), c->data_align));
			continue;
		case 3: /* DW_CFA_restore */
			restore_rule(in, op & 0x3f);
			continue;
		}
		switch (op) {
		case 0x00: /* nop */
			break;
		case 0x01: { /* set_loc */
			bool ind;
			uint64_t a = rd_enc_ptr(&r, in->fde->sec, c->fde_enc, c->addr_size, &ind);

			err = r.err || ind ? -EINVAL : advance(in, a);
			break;
		}
		case 0x02: /* advance_loc1 */
			err = advance_by(in, &r, rd_fixed(&r, 1));
			break;
		case 0x03: /* advance_loc2 */
			err = advance_by(in, &r, rd_fixed(&r, 2));
			break;
		case 0x04: /* advance_loc4 */
			err = advance_by(in, &r, rd_fixed(&r, 4));
			break;
		case 0x1d: /* MIPS_advance_loc8 */
			err = advance_by(in, &r, rd_fixed(&r, 8));
			break;
		case 0x05: /* offset_extended */
			reg = rd_uleb(&r);
			set_rule(in, reg, CFI_R_OFFSET,
				 rd_factored(&r, rd_uoff(&r), c->data_align));
			break;
		case 0x11: /* offset_extended_sf */
			reg = rd_uleb(&r);
			set_rule(in, reg, CFI_R_OFFSET,
				 rd_factored(&r, rd_sleb(&r), c->data_align));
			break;
		case 0x2f: /* GNU_negative_offset_extended */
			reg = rd_uleb(&r);
			set_rule(in, reg, CFI_R_OFFSET,
				 rd_factored(&r, -rd_uoff(&r), c->data_align));
			break;
		case 0x14: /* val_offset */
			reg = rd_uleb(&r);
			set_rule(in, reg, CFI_R_VAL_OFFSET,
				 rd_factored(&r, rd_uoff(&r), c->data_align));
			break;
		case 0x15: /* val_offset_sf */
			reg = rd_uleb(&r);
			set_rule(in, reg, CFI_R_VAL_OFFSET,
				 rd_factored(&r, rd_sleb(&r), c->data_align));
			break;
		case 0x06: /* restore_extended */
			restore_rule(in, rd_uleb(&r));
			break;
		case 0x07: /* undefined */
			set_rule(in, rd_uleb(&r), CFI_R_UNDEF, 0);
			break;
		case 0x08: /* same_value */
			set_rule(in, rd_uleb(&r), CFI_R_SAME, 0);
			break;
		case 0x09: /* register */
			reg = rd_uleb(&r);
			rule = rule_of(in, reg);
			reg = rd_uleb(&r);
			if (rule)
				*rule = (struct cfi_rule){.kind = CFI_R_REGISTER, .reg = reg};
			break;
		case 0x10: /* expression */
		case 0x16: /* val_expression */
			rule = rule_of(in, rd_uleb(&r));
			if (rule) {
				*rule = (struct cfi_rule){.kind = op == 0x10 ? CFI_R_EXPR
									     : CFI_R_VAL_EXPR};
				rd_block(&r, &rule->expr, &rule->expr_len);
			} else {
				rd_skip(&r, rd_uleb(&r));
			}
			break;
		case 0x0a: /* remember_state: CFA included, as gcc and binutils do */
			if (in->sp == CFI_STACK_MAX)
				return -EINVAL;
			in->stack[in->sp++] = in->st;
			break;
		case 0x0b: /* restore_state */
			if (in->sp == 0)
				return -EINVAL;
			in->st = in->stack[--in->sp];
			break;
		case 0x0c: /* def_cfa */
			in->st.cfa_is_expr = false;
			in->st.cfa_reg = rd_uleb(&r);
			in->st.cfa_off = rd_uoff(&r);
			break;
		case 0x12: /* def_cfa_sf */
			in->st.cfa_is_expr = false;
			in->st.cfa_reg = rd_uleb(&r);
			in->st.cfa_off = rd_factored(&r, rd_sleb(&r), c->data_align);
			break;
		case 0x0d: /* def_cfa_register */
			in->st.cfa_is_expr = false;
			in->st.cfa_reg = rd_uleb(&r);
			break;
		case 0x0e: /* def_cfa_offset */
			in->st.cfa_off = rd_uoff(&r);
			break;
		case 0x13: /* def_cfa_offset_sf */
			in->st.cfa_off = rd_factored(&r, rd_sleb(&r), c->data_align);
			break;
		case 0x0f: /* def_cfa_expression */
			in->st.cfa_is_expr = true;
			rd_block(&r, &in->st.cfa_expr, &in->st.cfa_expr_len);
			break;
		case 0x2e: /* GNU_args_size: only matters to exception handling */
			rd_uleb(&r);
			break;
		case 0x2d: /* GNU_window_save / AArch64 negate_ra_state: no x86 meaning */
			break;
		default:
			return -EINVAL;
		}
	}
	return err ? err : r.err ? -EINVAL : 0;
}

int cfi_run(const struct cfi_cie *cie, const struct cfi_fde *fde, cfi_row_fn fn, void *ctx)
{
	struct interp in = {
		.cie = cie,
		.fde = fde,
		.fn = fn,
		.ctx = ctx,
		.loc = fde->start,
		.st.cfa_reg = UINT32_MAX, /* no CFA until the CIE defines one */
	};
	int err;

	err = exec(&in, cie->insns, cie->insns_len);
	in.loc = fde->start; /* a CIE has no business advancing */
	if (!err) {
		in.init = in.st;
		in.emit = true;
		err = exec(&in, fde->insns, fde->insns_len);
	}
	if (in.loc >= fde->end)
		return err;
	if (err == -EINVAL) /* rows before the bad instruction stand; after it: nothing */
		return fn(ctx, in.loc, NULL) ?: err;
	return err ?: fn(ctx, in.loc, &in.st);
}
