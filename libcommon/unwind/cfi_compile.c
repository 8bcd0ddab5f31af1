// SPDX-License-Identifier: Apache-2.0
/*
 * CFI compiler: frame sections of an ELF file -> sorted, merged 8-byte unwind rows.
 * Parsing and the CFA machine live in cfi_parse.c; this file finds the sections, picks
 * which FDE covers which PC, and squeezes each rule into a row or marks it unsupported.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/buildid.h"
#include "unwind/cfi_compile.h"
#include "unwind/cfi_priv.h"
#include "symbolize/debuginfo.h"
#include "base/util.h"

/* DWARF expression opcodes of the patterns we recognise. */
#define OP_DEREF  0x06
#define OP_AND	  0x1a
#define OP_PLUS	  0x22
#define OP_SHL	  0x24
#define OP_GE	  0x2a
#define OP_LIT0	  0x30
#define OP_BREG0  0x70
#define OP_BREG16 0x80

struct elf_file {
	int fd;
	bool own_fd;
	Elf *elf;
};

struct builder {
	struct cfi_table *t;
	size_t cap;
	const struct cfi_cie *cie;
	const struct cfi_fde *fde;
};

static void elf_file_close(struct elf_file *f)
{
	if (f->elf)
		elf_end(f->elf);
	if (f->own_fd && f->fd >= 0)
		close(f->fd);
	f->elf = NULL;
	f->fd = -1;
}

/* 0, or -errno: -ENOEXEC for anything but an x86-64 ET_EXEC/ET_DYN. */
static int elf_file_open(struct elf_file *f, const char *path, int fd)
{
	GElf_Ehdr eh;

	f->fd = fd;
	f->own_fd = false;
	f->elf = NULL;
	if (path) {
		f->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (f->fd < 0)
			return -errno;
		f->own_fd = true;
	}
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF || !gelf_getehdr(f->elf, &eh) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64 ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)) {
		elf_file_close(f);
		return -ENOEXEC;
	}
	return 0;
}

/*
 * Fill sec from the section named name: PROGBITS, or SHT_X86_64_UNWIND as lld types
 * .eh_frame (a debug file's .eh_frame is NOBITS: no data).  Compressed sections are inflated by libelf.  0, or -ENOENT.
 */
static int find_section(Elf *elf, const char *name, struct cfi_section *sec)
{
	uint64_t text = 0, got = 0;
	Elf_Scn *scn = NULL, *found = NULL;
	GElf_Shdr sh;
	size_t shstrndx;
	Elf_Data *d;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return -ENOENT;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(n, ".text"))
			text = sh.sh_addr;
		else if (!strcmp(n, ".got"))
			got = sh.sh_addr;
		else if (!strcmp(n, name) &&
			 (sh.sh_type == SHT_PROGBITS || sh.sh_type == SHT_X86_64_UNWIND))
			found = scn;
	}
	if (!found || !gelf_getshdr(found, &sh))
		return -ENOENT;
	if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(found, 0, 0) < 0)
		return -ENOENT;
	d = elf_getdata(found, NULL);
	if (!d || !d->d_buf || !d->d_size)
		return -ENOENT;
	*sec = (struct cfi_section){
		.data = d->d_buf,
		.size = d->d_size,
		.vaddr = sh.sh_addr,
		.text_vaddr = text,
		.got_vaddr = got,
		.is_eh = !strcmp(name, ".eh_frame"),
	};
	return 0;
}

static int push_row(struct builder *b, uint64_t pc, struct unwind_row r)
{
	struct cfi_table *t = b->t;

	r.pc = pc - t->base;
	if (t->n && t->rows[t->n - 1].pc == r.pc) { /* same pc: the later state wins */
		t->rows[t->n - 1] = r;
		return 0;
	}
	if (t->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 4096;
		struct unwind_row *n = realloc(t->rows, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		t->rows = n;
		b->cap = cap;
	}
	t->rows[t->n++] = r;
	t->stats.rows_raw++;
	return 0;
}

/* DW_OP_bregN off, exactly: 1 and *off, else 0. */
static int match_breg(const uint8_t *e, size_t len, uint8_t reg, int64_t *off, size_t *used)
{
	uint64_t v = 0; /* unsigned: a shift into bit 63 is defined */
	unsigned shift = 0;
	size_t i = 1;
	uint8_t b;

	if (len < 2 || e[0] != OP_BREG0 + reg)
		return 0;
	do {
		if (i >= len || shift > 56)
			return 0;
		b = e[i++];
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if ((b & 0x40) && shift < 64)
		v |= ~0ull << shift;
	*off = (int64_t)v;
	*used = i;
	return 1;
}

/*
 * The lazy-PLT CFA binutils emits: rsp + a + ((rip & 15) >= k) << 3, k = 11 for the
 * classic 16-byte PLT, 10 for the IBT one.  Returns the UNWIND_CFA_* type or 0.
 */
static int match_plt(const uint8_t *e, size_t len, int64_t *off)
{
	static const uint8_t tail[] = {OP_BREG16, 0,	       OP_LIT0 + 15, OP_AND, 0,
				       OP_GE,	  OP_LIT0 + 3, OP_SHL,	     OP_PLUS};
	size_t used;

	if (!match_breg(e, len, CFI_REG_RSP, off, &used) || len - used != sizeof(tail))
		return 0;
	e += used;
	for (size_t i = 0; i < sizeof(tail); i++)
		if (i != 4 && e[i] != tail[i])
			return 0;
	if (e[4] == OP_LIT0 + 11)
		return UNWIND_CFA_PLT;
	if (e[4] == OP_LIT0 + 10)
		return UNWIND_CFA_PLT_IBT;
	return 0;
}

/* The row for st; counts what it cannot express. */
static struct unwind_row to_row(struct builder *b, const struct cfi_state *st)
{
	const struct unwind_row unsup = {.type = UNWIND_CFA_UNSUPPORTED};
	struct cfi_stats *s = &b->t->stats;
	int cfa, rbp = UNWIND_RBP_SAME;
	int64_t cfa_off = 0, rbp_off = 0;
	size_t used;

	if (!st) {
		s->bad_insns++;
		return unsup;
	}
	if (st->ra.kind == CFI_R_UNDEF) {
		s->rows_outermost++;
		return (struct unwind_row){.type = UNWIND_CFA_OUTERMOST};
	}
	if (b->cie->signal) { /* the walker reads the sigcontext, not the CFI */
		s->rows_signal++;
		return (struct unwind_row){.type = UNWIND_CFA_SIGNAL};
	}
	/* glibc's __vfork pops its return address into rdi around the syscall. */
	if (st->ra.kind == CFI_R_REGISTER && st->ra.reg == CFI_REG_RDI && !st->cfa_is_expr &&
	    st->cfa_reg == CFI_REG_RSP && st->rbp.kind == CFI_R_SAME && st->cfa_off >= 0 &&
	    st->cfa_off <= INT16_MAX) {
		s->rows_ra_rdi++;
		return (struct unwind_row){.type = UNWIND_CFA_RA_RDI, .cfa_off = st->cfa_off};
	}
	if (st->ra.kind != CFI_R_OFFSET || st->ra.off != -8) {
		s->unsup_ra++;
		return unsup;
	}
	if (!st->cfa_is_expr) {
		if (st->cfa_reg == CFI_REG_RSP) {
			cfa = UNWIND_CFA_RSP;
		} else if (st->cfa_reg == CFI_REG_RBP) {
			cfa = UNWIND_CFA_RBP;
		} else {
			s->unsup_cfa_reg++;
			return unsup;
		}
		cfa_off = st->cfa_off;
	} else if ((cfa = match_plt(st->cfa_expr, st->cfa_expr_len, &cfa_off))) {
		s->rows_plt++;
	} else if (match_breg(st->cfa_expr, st->cfa_expr_len, CFI_REG_RBP, &cfa_off, &used) &&
		   used + 1 == st->cfa_expr_len && st->cfa_expr[used] == OP_DEREF) {
		cfa = UNWIND_CFA_DEREF_RBP;
		s->rows_deref++;
	} else {
		s->unsup_cfa_expr++;
		return unsup;
	}
	switch (st->rbp.kind) {
	case CFI_R_SAME:
		break;
	case CFI_R_UNDEF:
		rbp = UNWIND_RBP_UNDEFINED;
		break;
	case CFI_R_OFFSET:
		rbp = UNWIND_RBP_CFA_OFF;
		rbp_off = st->rbp.off;
		break;
	case CFI_R_EXPR:
		if (match_breg(st->rbp.expr, st->rbp.expr_len, CFI_REG_RBP, &rbp_off, &used) &&
		    used == st->rbp.expr_len) {
			rbp = UNWIND_RBP_AT_RBP;
			break;
		}
		/* fall through */
	default:
		s->unsup_rbp++;
		return unsup;
	}
	if (cfa_off < INT16_MIN || cfa_off > INT16_MAX || rbp_off % 8 || rbp_off / 8 < INT8_MIN ||
	    rbp_off / 8 > INT8_MAX) {
		s->unsup_range++;
		return unsup;
	}
	return (struct unwind_row){
		.type = cfa | rbp << UNWIND_RBP_SHIFT,
		.rbp_off = rbp_off / 8,
		.cfa_off = cfa_off,
	};
}

static int on_state(void *ctx, uint64_t pc, const struct cfi_state *st)
{
	struct builder *b = ctx;

	if (pc < b->fde->start || pc >= b->fde->end)
		return 0;
	return push_row(b, pc, to_row(b, st));
}

static int cmp_fde(const void *a, const void *b)
{
	const struct cfi_fde *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (int)x->from_debug - (int)y->from_debug; /* .eh_frame first */
}

/*
 * Sort the FDEs so every PC has at most one.  An FDE that reaches into the next one ends
 * where that one starts, as the unwinder's search by start address (.eh_frame_hdr) has
 * it, so a bogus long range hides no later FDE.  Dropped: a second FDE with the same
 * start (a .debug_frame duplicate of an .eh_frame FDE sorts after it), and a .debug_frame
 * FDE that starts inside an .eh_frame one.
 */
static void pick_fdes(struct cfi_entries *e, struct cfi_stats *s)
{
	size_t n = 0;

	if (e->n_fdes)
		qsort(e->fdes, e->n_fdes, sizeof(*e->fdes), cmp_fde);
	for (size_t i = 0; i < e->n_fdes; i++) {
		struct cfi_fde *f = &e->fdes[i], *prev = n ? &e->fdes[n - 1] : NULL;

		if (prev && f->start < prev->end) {
			if (f->start == prev->start || (f->from_debug && !prev->from_debug)) {
				s->fdes_overlap++;
				continue;
			}
			prev->end = f->start;
		}
		e->fdes[n++] = *f;
	}
	e->n_fdes = n;
}

/* Merge neighbours with the same rule; returns the new count. */
static uint32_t merge_rows(struct unwind_row *r, uint32_t n)
{
	uint32_t out = 0;

	for (uint32_t i = 0; i < n; i++) {
		if (out && r[out - 1].type == r[i].type && r[out - 1].cfa_off == r[i].cfa_off &&
		    r[out - 1].rbp_off == r[i].rbp_off)
			continue;
		r[out++] = r[i];
	}
	return out;
}

int cfi_build_rows(struct cfi_table *t, struct cfi_entries *e)
{
	struct builder b = {.t = t};
	const struct unwind_row none = {.type = UNWIND_CFA_NONE};
	uint64_t prev_end = 0;
	int err;

	t->stats.cies = e->n_cies;
	t->stats.fdes = e->n_fdes;
	t->stats.fdes_skipped = e->bad;
	pick_fdes(e, &t->stats);
	t->stats.fdes_skipped += t->stats.fdes_overlap;
	if (!e->n_fdes)
		return 0;
	t->base = e->fdes[e->n_fdes - 1].end <= UINT32_MAX ? 0 : e->fdes[0].start;
	if (e->fdes[e->n_fdes - 1].end - t->base > UINT32_MAX)
		return -E2BIG;
	for (size_t i = 0; i < e->n_fdes; i++) {
		const struct cfi_fde *f = &e->fdes[i];

		if (i && prev_end < f->start && (err = push_row(&b, prev_end, none)))
			return err;
		b.fde = f;
		b.cie = &e->cies[f->cie];
		t->stats.fdes_debug += f->from_debug;
		err = cfi_run(b.cie, f, on_state, &b);
		if (err == -ENOMEM)
			return err;
		prev_end = f->end;
	}
	if ((err = push_row(&b, prev_end, none)))
		return err;
	t->n = merge_rows(t->rows, t->n);
	return 0;
}

/*
 * Rows for .init, which no FDE covers: crti.o's _init is "[endbr64] sub $8,%rsp ...
 * add $8,%rsp; ret" and comes without CFI.  It is the first code of a library or
 * program to run, and the first touch of its page faults, so short processes are
 * sampled there often.  Only that exact shape, and only where no row is: the CFA is
 * rsp+8 at the entry and at the ret, rsp+16 between.
 */
static int add_init_rows(struct cfi_table *t, Elf *elf)
{
	static const uint8_t endbr[] = {0xf3, 0x0f, 0x1e, 0xfa}, sub[] = {0x48, 0x83, 0xec, 0x08},
			     epi[] = {0x48, 0x83, 0xc4, 0x08, 0xc3};
	struct cfi_section init;
	struct unwind_row *rows;
	uint64_t start, end, body;
	size_t pre, at = 0, k = 0;

	if (find_section(elf, ".init", &init))
		return 0;
	pre = init.size >= 4 && !memcmp(init.data, endbr, 4) ? 4 : 0;
	start = init.vaddr;
	end = start + init.size;
	body = start + pre + sizeof(sub);
	if (init.size < pre + sizeof(sub) + sizeof(epi) ||
	    memcmp(init.data + pre, sub, sizeof(sub)) ||
	    memcmp(init.data + init.size - sizeof(epi), epi, sizeof(epi)) || start < t->base ||
	    end - t->base > UINT32_MAX)
		return 0;
	/* Where it goes, and nothing but a gap (or nothing) where it lies. */
	while (at < t->n && t->rows[at].pc <= start - t->base)
		at++;
	if ((at && UNWIND_ROW_CFA(&t->rows[at - 1]) != UNWIND_CFA_NONE) ||
	    (at < t->n && t->rows[at].pc < end - t->base))
		return 0;
	rows = malloc((t->n + 4) * sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	if (at) /* t->rows is NULL in a file with no FDE */
		memcpy(rows, t->rows, at * sizeof(*rows));
	k = at;
	rows[k++] =
		(struct unwind_row){.pc = start - t->base, .type = UNWIND_CFA_RSP, .cfa_off = 8};
	rows[k++] =
		(struct unwind_row){.pc = body - t->base, .type = UNWIND_CFA_RSP, .cfa_off = 16};
	rows[k++] =
		(struct unwind_row){.pc = end - 1 - t->base, .type = UNWIND_CFA_RSP, .cfa_off = 8};
	if (at == t->n || t->rows[at].pc != end - t->base)
		rows[k++] = (struct unwind_row){.pc = end - t->base, .type = UNWIND_CFA_NONE};
	if (t->n > at)
		memcpy(rows + k, t->rows + at, (t->n - at) * sizeof(*rows));
	free(t->rows);
	t->rows = rows;
	t->n = k + t->n - at;
	t->stats.rows_init = k - at;
	return 0;
}

/* .debug_frame from the separate debug file, when the binary has none itself. */
static int debug_file_section(const char *path, const struct cfi_table *t,
			      const struct cfi_opts *opts, struct elf_file *df,
			      struct cfi_section *sec)
{
	char *dpath;
	int err;

	if (!opts || !opts->dbg || opts->no_debug_frame)
		return -ENOENT;
	dpath = dbg_find(opts->dbg, path, t->bid, t->bid_size);
	if (!dpath)
		return -ENOENT;
	err = elf_file_open(df, dpath, -1);
	free(dpath);
	if (err)
		return err;
	return find_section(df->elf, ".debug_frame", sec);
}

/* The executable PT_LOAD segments of elf, what an FDE may cover; 0 (unknown) past max. */
static size_t exec_spans(Elf *elf, struct cfi_span *v, size_t max)
{
	size_t nph, n = 0;

	if (elf_getphdrnum(elf, &nph))
		return 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X) || ph.p_vaddr + ph.p_memsz < ph.p_vaddr)
			continue;
		if (n == max)
			return 0;
		v[n++] = (struct cfi_span){ph.p_vaddr, ph.p_vaddr + ph.p_memsz};
	}
	return n;
}

struct cfi_table *cfi_compile_elf(const char *path, int fd, const struct cfi_opts *opts)
{
	struct elf_file f = {.fd = -1}, df = {.fd = -1};
	struct cfi_section eh, dbg;
	struct cfi_entries e = {0};
	struct cfi_table *t = NULL;
	struct cfi_span exec[16];
	uint64_t t0 = pa_now_ns();
	int err, bid;

	err = elf_file_open(&f, path, fd);
	if (err)
		goto out;
	t = calloc(1, sizeof(*t));
	if (!t) {
		err = -ENOMEM;
		goto out;
	}
	bid = bid_read_fd(f.fd, t->bid);
	t->bid_size = bid > 0 ? bid : 0;
	/* The file's segments, also for a debug file's .debug_frame (the same addresses). */
	e.exec = exec;
	e.n_exec = exec_spans(f.elf, exec, sizeof(exec) / sizeof(exec[0]));

	t->stats.has_eh_frame = !find_section(f.elf, ".eh_frame", &eh);
	if (t->stats.has_eh_frame && (err = cfi_parse_section(&eh, &e)))
		goto out;
	if (!opts || !opts->no_debug_frame) {
		t->stats.has_debug_frame = !find_section(f.elf, ".debug_frame", &dbg) ||
					   !debug_file_section(path, t, opts, &df, &dbg);
		if (t->stats.has_debug_frame && (err = cfi_parse_section(&dbg, &e)))
			goto out;
	}
	err = cfi_build_rows(t, &e);
	if (!err)
		err = add_init_rows(t, f.elf);
out:
	cfi_entries_free(&e);
	elf_file_close(&df);
	elf_file_close(&f);
	if (err) {
		cfi_table_free(t);
		errno = -err;
		return NULL;
	}
	t->stats.compile_ns = pa_now_ns() - t0;
	return t;
}

void cfi_table_free(struct cfi_table *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t);
}

const struct unwind_row *cfi_table_lookup(const struct cfi_table *t, uint64_t vaddr)
{
	uint32_t lo = 0, hi = t->n;
	uint64_t pc;

	if (!t->n || vaddr < t->base || vaddr - t->base > UINT32_MAX)
		return NULL;
	pc = vaddr - t->base;
	if (pc < t->rows[0].pc)
		return NULL;
	while (hi - lo > 1) { /* invariant: rows[lo].pc <= pc, rows[hi].pc > pc or hi == n */
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].pc <= pc)
			lo = mid;
		else
			hi = mid;
	}
	return &t->rows[lo];
}

const char *cfi_row_cfa_str(const struct unwind_row *r, char *buf, size_t len)
{
	switch (UNWIND_ROW_CFA(r)) {
	case UNWIND_CFA_NONE:
		return "none";
	case UNWIND_CFA_RSP:
		snprintf(buf, len, "rsp%+d", r->cfa_off);
		return buf;
	case UNWIND_CFA_RBP:
		snprintf(buf, len, "rbp%+d", r->cfa_off);
		return buf;
	case UNWIND_CFA_PLT:
		return "plt";
	case UNWIND_CFA_PLT_IBT:
		return "plt-ibt";
	case UNWIND_CFA_DEREF_RBP:
		snprintf(buf, len, "*(rbp%+d)", r->cfa_off);
		return buf;
	case UNWIND_CFA_SIGNAL:
		return "signal";
	case UNWIND_CFA_OUTERMOST:
		return "outermost";
	default:
		return "unsupported";
	}
}
