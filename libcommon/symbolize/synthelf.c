// SPDX-License-Identifier: Apache-2.0
/*
 * The synthetic ELF writer.  The whole file is built in memory, in this order, and
 * written at once:
 *
 *	ELF header, PT_LOAD and PT_NOTE, the build-id note	(what PT_LOAD holds)
 *	.symtab .strtab .debug_abbrev .debug_info .debug_aranges .debug_line .shstrtab
 *	section headers
 *
 * PT_LOAD starts at offset 0 and vaddr 0 and reaches (p_memsz) the end of .text, so a
 * mapping with pgoff 0 turns mapping offset X into vaddr X.  .text is NOBITS with
 * sh_offset equal to sh_addr: perf rebases symbols by sh_addr - sh_offset (or by
 * p_vaddr - p_offset) and both are 0 here.
 */
#include <dwarf.h>
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/util.h"
#include "symbolize/synthelf.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "synthelf writes its ELF and DWARF fields in host order, which must be little-endian"
#endif

/* The host's: perf and our tools match a mapping to the machine they ran on. */
#ifdef __aarch64__
#define SYNTH_MACHINE EM_AARCH64
#else
#define SYNTH_MACHINE EM_X86_64
#endif

#define OUT_MAX (1u << 30)

/* The line program's special opcodes: what GNU as and gcc use. */
#define LINE_BASE   (-5)
#define LINE_RANGE  14
#define OPCODE_BASE 13

enum {
	S_NULL,
	S_NOTE,
	S_TEXT,
	S_SYMTAB,
	S_STRTAB,
	S_ABBREV,
	S_INFO,
	S_ARANGES,
	S_LINE,
	S_SHSTRTAB,
	S_NR,
};

/* The section names, in section order: sh_name is counted along this string. */
static const char shstrtab[] = "\0.note.gnu.build-id\0.text\0.symtab\0.strtab\0.debug_abbrev"
			       "\0.debug_info\0.debug_aranges\0.debug_line\0.shstrtab";

#define HDRS_SIZE (sizeof(Elf64_Ehdr) + 2 * sizeof(Elf64_Phdr))

/* The file being built; err is sticky, so appends need no check each. */
struct obuf {
	uint8_t *p;
	size_t len, cap;
	int err;
	Elf64_Shdr sh[S_NR];
};

struct row {
	uint64_t addr;
	uint32_t file, line;
};

static uint8_t *ob_room(struct obuf *b, size_t n)
{
	uint8_t *p;

	if (b->err)
		return NULL;
	if (n > OUT_MAX - b->len) {
		b->err = -EFBIG;
		return NULL;
	}
	if (pa_grow((void **)&b->p, &b->cap, b->len + n, 1)) {
		b->err = -ENOMEM;
		return NULL;
	}
	p = b->p + b->len;
	b->len += n;
	return p;
}

static void ob_put(struct obuf *b, const void *src, size_t n)
{
	uint8_t *p = ob_room(b, n);

	if (p)
		memcpy(p, src, n);
}

static void ob_zero(struct obuf *b, size_t n)
{
	uint8_t *p = ob_room(b, n);

	if (p)
		memset(p, 0, n);
}

static void ob_u8(struct obuf *b, uint8_t v)
{
	ob_put(b, &v, 1);
}

static void ob_u16(struct obuf *b, uint16_t v)
{
	ob_put(b, &v, 2);
}

static void ob_u32(struct obuf *b, uint32_t v)
{
	ob_put(b, &v, 4);
}

static void ob_u64(struct obuf *b, uint64_t v)
{
	ob_put(b, &v, 8);
}

static void ob_str(struct obuf *b, const char *s)
{
	ob_put(b, s, strlen(s) + 1);
}

static void ob_uleb(struct obuf *b, uint64_t v)
{
	do {
		uint8_t c = v & 0x7f;

		v >>= 7;
		ob_u8(b, v ? c | 0x80 : c);
	} while (v);
}

static void ob_sleb(struct obuf *b, int64_t v)
{
	uint64_t u = (uint64_t)v, sign = v < 0 ? ~(~0ULL >> 7) : 0;
	bool more;

	do {
		uint8_t c = u & 0x7f;

		u = u >> 7 | sign;
		more = !((!u && !(c & 0x40)) || (u == ~0ULL && (c & 0x40)));
		ob_u8(b, more ? c | 0x80 : c);
	} while (more);
}

/* Overwrite a 32-bit field written earlier (a length known only later). */
static void ob_set32(struct obuf *b, size_t off, uint32_t v)
{
	if (!b->err)
		memcpy(b->p + off, &v, 4);
}

static void sec_begin(struct obuf *b, int s, uint32_t type, size_t align)
{
	ob_zero(b, (align - b->len % align) % align);
	b->sh[s].sh_type = type;
	b->sh[s].sh_offset = b->len;
	b->sh[s].sh_addralign = align;
}

static void sec_end(struct obuf *b, int s)
{
	b->sh[s].sh_size = b->len - b->sh[s].sh_offset;
}

static bool name_ok(const char *s, int *err)
{
	size_t len = s ? strnlen(s, SYNTH_NAME_MAX + 1) : 0;

	if (!len)
		*err = -EINVAL;
	else if (len > SYNTH_NAME_MAX)
		*err = -ENAMETOOLONG;
	return len && len <= SYNTH_NAME_MAX;
}

/*
 * The rules of synthelf.h that need no sorting.  *est: about the size of the file (the
 * line program guessed at a few bytes a row), so the buffer is allocated about once.
 */
static int check(const struct synth_elf *se, uint64_t *est)
{
	uint64_t strtab = 1, names = 0;
	int err = 0;
	size_t i;

	if (!se->bid || !se->bid_size || se->bid_size > SYNTH_BID_MAX || !se->text_start ||
	    se->text_start % SYNTH_TEXT_ALIGN || se->text_size > UINT64_MAX - se->text_start ||
	    (se->nr_fns && !se->fns) || (se->nr_files && !se->files) ||
	    (se->nr_lines && !se->lines))
		return -EINVAL;
	if (se->nr_lines > UINT32_MAX || se->nr_files > UINT32_MAX - 1)
		return -EFBIG;
	for (i = 0; i < se->nr_files; i++) {
		if (!name_ok(se->files[i], &err))
			return err;
		names += strlen(se->files[i]) + 4;
	}
	for (i = 0; i < se->nr_fns; i++) {
		const struct synth_fn *f = &se->fns[i];

		if (!name_ok(f->name, &err))
			return err;
		if (f->start < se->text_start || !f->size || f->size > se->text_size ||
		    f->start - se->text_start > se->text_size - f->size)
			return -EINVAL;
		strtab += strlen(f->name) + 1;
		if (strtab > OUT_MAX)
			return -EFBIG;
	}
	*est = 4096 + strtab + names + (se->nr_fns + 1) * (sizeof(Elf64_Sym) + 16) +
	       se->nr_lines * 8;
	return 0;
}

static int cmp_fn(const void *a, const void *b)
{
	const struct synth_fn *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The functions by address in *out; -EINVAL when two overlap. */
static int sort_fns(const struct synth_elf *se, struct synth_fn **out)
{
	struct synth_fn *v = malloc((se->nr_fns ? se->nr_fns : 1) * sizeof(*v));
	size_t i;

	*out = v;
	if (!v)
		return -ENOMEM;
	if (se->nr_fns)
		memcpy(v, se->fns, se->nr_fns * sizeof(*v));
	for (i = 1; i < se->nr_fns && v[i - 1].start <= v[i].start; i++)
		;
	if (i < se->nr_fns)
		qsort(v, se->nr_fns, sizeof(*v), cmp_fn);
	for (i = 1; i < se->nr_fns; i++) {
		if (v[i].start - v[i - 1].start < v[i - 1].size)
			return -EINVAL;
	}
	return 0;
}

#define RADIX_BITS 11
#define RADIX_MASK ((1u << RADIX_BITS) - 1)

/*
 * LSD radix sort by offset into .text (all below span), RADIX_BITS a pass: stable, so
 * rows at one address keep the order given, and a few linear passes beat qsort's
 * n log n compares on a million rows.
 */
static int radix_sort(struct row **v, size_t n, uint64_t base, uint64_t span)
{
	struct row *a = *v, *tmp = malloc(n * sizeof(*tmp)), *t;
	size_t cnt[1u << RADIX_BITS];
	unsigned int shift;

	if (!tmp)
		return -ENOMEM;
	for (shift = 0; shift < 64 && (span - 1) >> shift; shift += RADIX_BITS) {
		size_t i, sum = 0, c;

		memset(cnt, 0, sizeof(cnt));
		for (i = 0; i < n; i++)
			cnt[((a[i].addr - base) >> shift) & RADIX_MASK]++;
		for (i = 0; i <= RADIX_MASK; i++) {
			c = cnt[i];
			cnt[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			tmp[cnt[((a[i].addr - base) >> shift) & RADIX_MASK]++] = a[i];
		t = a;
		a = tmp;
		tmp = t;
	}
	*v = a;
	free(tmp);
	return 0;
}

/*
 * The rows by address, those at one address in the order given, in *out; -EINVAL for
 * an unknown file or an address outside .text.
 */
static int sort_rows(const struct synth_elf *se, struct row **out)
{
	struct row *v = malloc((se->nr_lines ? se->nr_lines : 1) * sizeof(*v));
	bool sorted = true;
	size_t i;

	*out = v;
	if (!v)
		return -ENOMEM;
	for (i = 0; i < se->nr_lines; i++) {
		const struct synth_line *l = &se->lines[i];

		if (l->file >= se->nr_files || l->addr < se->text_start ||
		    l->addr - se->text_start >= se->text_size)
			return -EINVAL;
		v[i] = (struct row){l->addr, l->file, l->line};
		if (i && l->addr < v[i - 1].addr)
			sorted = false;
	}
	if (sorted)
		return 0;
	return radix_sort(out, se->nr_lines, se->text_start, se->text_size);
}

/* The build-id note, inside PT_LOAD like a linker puts it. */
static void put_note(struct obuf *b, const struct synth_elf *se)
{
	Elf64_Nhdr nh = {
		.n_namesz = 4, .n_descsz = (Elf64_Word)se->bid_size, .n_type = NT_GNU_BUILD_ID};

	sec_begin(b, S_NOTE, SHT_NOTE, 4);
	ob_put(b, &nh, sizeof(nh));
	ob_put(b, "GNU", 4);
	ob_put(b, se->bid, se->bid_size);
	ob_zero(b, (4 - se->bid_size % 4) % 4);
	sec_end(b, S_NOTE);
	b->sh[S_NOTE].sh_flags = SHF_ALLOC;
	b->sh[S_NOTE].sh_addr = b->sh[S_NOTE].sh_offset;
}

/* .symtab then .strtab, both in address order; st_name counts along the names. */
static void put_symbols(struct obuf *b, const struct synth_fn *fns, size_t n)
{
	uint32_t name = 1;
	size_t i;

	sec_begin(b, S_SYMTAB, SHT_SYMTAB, 8);
	ob_zero(b, sizeof(Elf64_Sym));
	for (i = 0; i < n; i++) {
		Elf64_Sym s = {
			.st_name = name,
			.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
			.st_other = STV_DEFAULT,
			.st_shndx = S_TEXT,
			.st_value = fns[i].start,
			.st_size = fns[i].size,
		};

		ob_put(b, &s, sizeof(s));
		name += (uint32_t)strlen(fns[i].name) + 1;
	}
	sec_end(b, S_SYMTAB);
	b->sh[S_SYMTAB].sh_link = S_STRTAB;
	b->sh[S_SYMTAB].sh_info = 1; /* first non-local: all are global */
	b->sh[S_SYMTAB].sh_entsize = sizeof(Elf64_Sym);

	sec_begin(b, S_STRTAB, SHT_STRTAB, 1);
	ob_u8(b, 0);
	for (i = 0; i < n; i++)
		ob_str(b, fns[i].name);
	sec_end(b, S_STRTAB);
}

/*
 * One compile unit with no children: it points libdw and addr2line at the line table
 * for the whole of .text; the names come from .symtab.  .debug_aranges says the same,
 * for readers that look there first.
 */
static void put_cu(struct obuf *b, const struct synth_elf *se)
{
	/* Abbrev 1: a compile_unit, no children, these attributes in this order. */
	static const uint16_t attrs[][2] = {
		{DW_AT_producer, DW_FORM_string},
		{DW_AT_language, DW_FORM_data2},
		{DW_AT_name, DW_FORM_string},
		{DW_AT_stmt_list, DW_FORM_sec_offset},
		{DW_AT_low_pc, DW_FORM_addr},
		{DW_AT_high_pc, DW_FORM_data8}, /* a constant: the length from low_pc */
	};
	size_t start, i;

	sec_begin(b, S_ABBREV, SHT_PROGBITS, 1);
	ob_uleb(b, 1);
	ob_uleb(b, DW_TAG_compile_unit);
	ob_u8(b, DW_CHILDREN_no);
	for (i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		ob_uleb(b, attrs[i][0]);
		ob_uleb(b, attrs[i][1]);
	}
	ob_zero(b, 3); /* the list's end, the table's end */
	sec_end(b, S_ABBREV);

	sec_begin(b, S_INFO, SHT_PROGBITS, 1);
	start = b->len;
	ob_u32(b, 0);
	ob_u16(b, 4);
	ob_u32(b, 0); /* abbrev offset */
	ob_u8(b, 8);
	ob_uleb(b, 1);
	ob_str(b, "perf-agent");
	ob_u16(b, DW_LANG_Python);
	ob_str(b, "[synthetic]");
	ob_u32(b, 0); /* the one line program */
	ob_u64(b, se->text_start);
	ob_u64(b, se->text_size);
	ob_set32(b, start, (uint32_t)(b->len - start - 4));
	sec_end(b, S_INFO);

	sec_begin(b, S_ARANGES, SHT_PROGBITS, 1);
	start = b->len;
	ob_u32(b, 0);
	ob_u16(b, 2);
	ob_u32(b, 0); /* the CU's offset in .debug_info */
	ob_u8(b, 8);
	ob_u8(b, 0);
	ob_zero(b, 4); /* tuples start 16-aligned from the set's start */
	ob_u64(b, se->text_start);
	ob_u64(b, se->text_size);
	ob_zero(b, 16);
	ob_set32(b, start, (uint32_t)(b->len - start - 4));
	sec_end(b, S_ARANGES);
}

struct lstate {
	uint64_t addr, line;
	uint32_t file; /* 1-based, as DWARF 4 numbers them */
	bool open;
};

static void seq_start(struct obuf *b, struct lstate *st, uint64_t addr)
{
	ob_u8(b, 0);
	ob_uleb(b, 9);
	ob_u8(b, DW_LNE_set_address);
	ob_u64(b, addr);
	*st = (struct lstate){.addr = addr, .line = 1, .file = 1, .open = true};
}

static void seq_end(struct obuf *b, struct lstate *st, uint64_t end)
{
	ob_u8(b, DW_LNS_advance_pc);
	ob_uleb(b, end - st->addr);
	ob_u8(b, 0);
	ob_uleb(b, 1);
	ob_u8(b, DW_LNE_end_sequence);
	st->open = false;
}

/* One row: a special opcode when the deltas allow, the long forms otherwise. */
static void put_row(struct obuf *b, struct lstate *st, const struct row *r)
{
	const uint64_t const_add = (255 - OPCODE_BASE) / LINE_RANGE;
	int64_t dl = (int64_t)r->line - (int64_t)st->line;
	uint64_t da = r->addr - st->addr, max_da;

	if (r->file + 1 != st->file) {
		ob_u8(b, DW_LNS_set_file);
		ob_uleb(b, r->file + 1);
		st->file = r->file + 1;
	}
	if (dl < LINE_BASE || dl >= LINE_BASE + LINE_RANGE) {
		ob_u8(b, DW_LNS_advance_line);
		ob_sleb(b, dl);
		dl = 0;
	}
	max_da = (uint64_t)(255 - OPCODE_BASE - (dl - LINE_BASE)) / LINE_RANGE;
	if (da > max_da && da >= const_add && da - const_add <= max_da) {
		ob_u8(b, DW_LNS_const_add_pc);
		da -= const_add;
	} else if (da > max_da) {
		ob_u8(b, DW_LNS_advance_pc);
		ob_uleb(b, da);
		da = 0;
	}
	ob_u8(b, (uint8_t)((dl - LINE_BASE) + LINE_RANGE * (int64_t)da + OPCODE_BASE));
	st->addr = r->addr;
	st->line = r->line;
}

/*
 * The line program: one sequence per function that has rows, from its first row to
 * its end.  The directory table is empty: each file name carries its own path.
 */
static int put_lines(struct obuf *b, const struct synth_elf *se, const struct synth_fn *fns,
		     const struct row *rows)
{
	static const uint8_t std_lens[OPCODE_BASE - 1] = {0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1};
	struct lstate st = {0};
	size_t start, hdr, i, j = 0;

	sec_begin(b, S_LINE, SHT_PROGBITS, 1);
	start = b->len;
	ob_u32(b, 0);
	ob_u16(b, 4);
	ob_u32(b, 0);
	hdr = b->len;
	ob_u8(b, 1); /* minimum_instruction_length */
	ob_u8(b, 1); /* maximum_operations_per_instruction */
	ob_u8(b, 1); /* default_is_stmt */
	ob_u8(b, (uint8_t)LINE_BASE);
	ob_u8(b, LINE_RANGE);
	ob_u8(b, OPCODE_BASE);
	ob_put(b, std_lens, sizeof(std_lens));
	ob_u8(b, 0); /* no include_directories */
	for (i = 0; i < se->nr_files; i++) {
		ob_str(b, se->files[i]);
		ob_zero(b, 3); /* directory 0, no mtime, no length */
	}
	ob_u8(b, 0);
	ob_set32(b, hdr - 4, (uint32_t)(b->len - hdr));

	for (i = 0; i < se->nr_lines; i++) {
		const struct row *r = &rows[i];

		if (i && r->addr == rows[i - 1].addr)
			continue;
		while (j < se->nr_fns && r->addr >= fns[j].start + fns[j].size) {
			if (st.open)
				seq_end(b, &st, fns[j].start + fns[j].size);
			j++;
		}
		if (j == se->nr_fns || r->addr < fns[j].start)
			return -EINVAL; /* between or past the functions */
		if (!st.open)
			seq_start(b, &st, r->addr);
		put_row(b, &st, r);
	}
	if (st.open)
		seq_end(b, &st, fns[j].start + fns[j].size);
	ob_set32(b, start, (uint32_t)(b->len - start - 4));
	sec_end(b, S_LINE);
	return 0;
}

static void put_headers(struct obuf *b, const struct synth_elf *se, size_t load_end)
{
	const Elf64_Shdr *note = &b->sh[S_NOTE];
	Elf64_Ehdr eh = {
		.e_ident = {ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT,
			    ELFOSABI_NONE},
		.e_type = ET_DYN,
		.e_machine = SYNTH_MACHINE,
		.e_version = EV_CURRENT,
		.e_phoff = sizeof(Elf64_Ehdr),
		.e_ehsize = sizeof(Elf64_Ehdr),
		.e_phentsize = sizeof(Elf64_Phdr),
		.e_phnum = 2,
		.e_shentsize = sizeof(Elf64_Shdr),
		.e_shnum = S_NR,
		.e_shstrndx = S_SHSTRTAB,
	};
	Elf64_Phdr ph[2] = {
		{
			.p_type = PT_LOAD,
			.p_flags = PF_R | PF_X,
			.p_filesz = load_end,
			.p_memsz = se->text_start + se->text_size,
			.p_align = SYNTH_TEXT_ALIGN,
		},
		{
			.p_type = PT_NOTE,
			.p_flags = PF_R,
			.p_offset = note->sh_offset,
			.p_vaddr = note->sh_addr,
			.p_paddr = note->sh_addr,
			.p_filesz = note->sh_size,
			.p_memsz = note->sh_size,
			.p_align = 4,
		},
	};
	size_t i, name = 0;

	sec_begin(b, S_SHSTRTAB, SHT_STRTAB, 1);
	ob_put(b, shstrtab, sizeof(shstrtab));
	sec_end(b, S_SHSTRTAB);
	for (i = 0; i < S_NR; i++) {
		b->sh[i].sh_name = (Elf64_Word)name;
		name += strlen(shstrtab + name) + 1;
	}

	/* The code: NOBITS, with the nominal offset that makes sh_addr - sh_offset 0. */
	b->sh[S_TEXT].sh_type = SHT_NOBITS;
	b->sh[S_TEXT].sh_flags = SHF_ALLOC | SHF_EXECINSTR;
	b->sh[S_TEXT].sh_addr = se->text_start;
	b->sh[S_TEXT].sh_offset = se->text_start;
	b->sh[S_TEXT].sh_size = se->text_size;
	b->sh[S_TEXT].sh_addralign = 16;

	ob_zero(b, (8 - b->len % 8) % 8);
	eh.e_shoff = b->len;
	ob_put(b, b->sh, sizeof(b->sh));
	if (b->err)
		return;
	memcpy(b->p, &eh, sizeof(eh));
	memcpy(b->p + sizeof(eh), ph, sizeof(ph));
}

static int build(struct obuf *b, const struct synth_elf *se, const struct synth_fn *fns,
		 const struct row *rows, uint64_t est)
{
	size_t load_end;
	int err;

	if (pa_grow((void **)&b->p, &b->cap, est < OUT_MAX ? est : OUT_MAX, 1))
		return -ENOMEM;
	ob_zero(b, HDRS_SIZE);
	put_note(b, se);
	load_end = b->len;
	put_symbols(b, fns, se->nr_fns);
	put_cu(b, se);
	err = put_lines(b, se, fns, rows);
	if (err)
		return err;
	put_headers(b, se, load_end);
	return b->err;
}

int synth_elf_write(const char *path, const struct synth_elf *se)
{
	struct synth_fn *fns = NULL;
	struct row *rows = NULL;
	struct pa_outfile of = {.fd = -1};
	struct obuf b = {0};
	uint64_t est;
	int err;

	if (!path || !se)
		return -EINVAL;
	err = check(se, &est);
	if (!err)
		err = sort_fns(se, &fns);
	if (!err)
		err = sort_rows(se, &rows);
	if (!err)
		err = build(&b, se, fns, rows, est);
	if (!err)
		err = pa_outfile_open(&of, path);
	if (!err) {
		err = pa_write_all(of.fd, b.p, b.len);
		if (err)
			pa_outfile_abort(&of);
		else
			err = pa_outfile_commit(&of, false);
	}
	free(b.p);
	free(rows);
	free(fns);
	return err;
}
