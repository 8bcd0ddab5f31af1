// SPDX-License-Identifier: Apache-2.0
/*
 * Go pc-line tables: generated here in each format (three functions, one of them with
 * a two-deep inline tree), then damaged; and, where `go` is installed, real binaries
 * against their own DWARF.
 *
 * Built with -DGOPCLN_SEEDS (tests/fuzz/make-corpus does), only the generator is
 * compiled and main writes the seeds of fuzz_gopclntab.c into the directory it is given.
 */
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/gopclntab.h"

/* --- The generator. */

/* GEN_111: the 1.2 magic as Go 1.9-1.11 wrote it; GEN_115: as Go 1.13-1.15 did. */
enum gen_fmt { GEN_111, GEN_115, GEN_116, GEN_118, GEN_120, GEN_NR };

#define GEN_VADDR 0x500000u /* the table's address; inline trees at GEN_TREES */
#define GEN_TREES 0x800u    /* (offset from GEN_VADDR) */
#define GEN_TEXT  0x401000u /* the functions' */

/* A pc-value run: val from the previous run's end (or the entry) to end. */
struct gen_run {
	int32_t val;
	uint32_t end;
};

struct gen_inl {
	int16_t parent;
	uint32_t parent_pc;
	int32_t file, line; /* the call site: Go 1.9-1.11 takes the caller's position here */
	const char *name;
};

struct gen_func {
	const char *name;
	uint32_t size;
	const struct gen_run *file, *line, *inl;
	const struct gen_inl *tree;
	unsigned int ntree;
};

static const char *const gen_files[] = {"a.go", "b.go", "inl.go"};
static const struct gen_run alpha_file[] = {{0, 0x40}, {0, 0}};
static const struct gen_run alpha_line[] = {{10, 0x10}, {11, 0x30}, {12, 0x40}, {0, 0}};
/* beta: inner inlined at 0x10-0x20, innermost (inlined into inner) at 0x20-0x30. */
static const struct gen_run beta_file[] = {{1, 0x10}, {2, 0x30}, {1, 0x60}, {0, 0}};
static const struct gen_run beta_line[] = {{20, 0x08}, {21, 0x10}, {30, 0x18}, {31, 0x20},
					   {40, 0x30}, {22, 0x60}, {0, 0}};
static const struct gen_run beta_inl[] = {{-1, 0x10}, {0, 0x20}, {1, 0x30}, {-1, 0x60}, {0, 0}};
static const struct gen_inl beta_tree[] = {
	{-1, 0x08, 1, 21, "main.inner"},
	{0, 0x18, 2, 31, "main.innermost"},
};
static const struct gen_run gamma_file[] = {{0, 0x20}, {0, 0}};
static const struct gen_run gamma_line[] = {{50, 0x20}, {0, 0}};
static const struct gen_func gen_funcs[] = {
	{"main.alpha", 0x40, alpha_file, alpha_line, NULL, NULL, 0},
	{"main.beta", 0x60, beta_file, beta_line, beta_inl, beta_tree, 2},
	{"main.gamma", 0x20, gamma_file, gamma_line, NULL, NULL, 0},
};
#define GEN_NFUNC 3

/* The memory image: the table at GEN_VADDR (len bytes), the inline trees after it. */
struct gen {
	uint8_t mem[GEN_TREES + 256];
	size_t len, size;
	enum gen_fmt fmt;
	uint8_t quantum;
	uint64_t gofunc;
	/* Where things are, to damage them. */
	size_t names, names_end, cutab, ftab, fsz, func[GEN_NFUNC], tree, tree_sz, pctab, hdr_names;
	uint32_t name_off[GEN_NFUNC + 2]; /* functions', then the inlined ones' */
	uint32_t line_tab[GEN_NFUNC];	  /* pcln offsets (into pctab) */
};

static void gen_u32(struct gen *g, size_t off, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		g->mem[off + i] = (uint8_t)(v >> 8 * i);
}

static void gen_u64(struct gen *g, size_t off, uint64_t v)
{
	gen_u32(g, off, (uint32_t)v);
	gen_u32(g, off + 4, (uint32_t)(v >> 32));
}

static size_t gen_put(struct gen *g, const void *p, size_t n)
{
	size_t off = g->size;

	memcpy(g->mem + off, p, n);
	g->size += n;
	return off;
}

static size_t gen_align(struct gen *g, size_t a)
{
	while (g->size % a)
		g->mem[g->size++] = 0;
	return g->size;
}

static void gen_varint(struct gen *g, uint32_t v)
{
	while (v >= 0x80) {
		g->mem[g->size++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	g->mem[g->size++] = (uint8_t)v;
}

/* A pc-value table (value bias added to each value); its offset from base. */
static uint32_t gen_pcvalue(struct gen *g, const struct gen_run *r, int32_t bias, size_t base)
{
	uint32_t off = (uint32_t)(g->size - base), pc = 0;
	int32_t prev = -1;

	for (; r->end; r++) {
		int32_t v = r->val < 0 ? r->val : r->val + bias, d = v - prev;

		gen_varint(g, d < 0 ? ((uint32_t)-d << 1) - 1 : (uint32_t)d << 1);
		gen_varint(g, (r->end - pc) / g->quantum);
		prev = v;
		pc = r->end;
	}
	g->mem[g->size++] = 0;
	return off;
}

static void gen_table(struct gen *g, enum gen_fmt fmt, uint8_t quantum)
{
	static const uint32_t magic[] = {0xfffffffb, 0xfffffffb, 0xfffffffa, 0xfffffff0,
					 0xfffffff1};
	bool v12 = fmt <= GEN_115, v118 = fmt >= GEN_118;
	unsigned int words = fmt == GEN_116 ? 7 : 8, inl_pc = fmt == GEN_111 ? 1 : 2;
	unsigned int inl_fd = fmt == GEN_111 ? 2 : fmt == GEN_115 ? 4 : 3;
	size_t base, cutab = 0, filetab, files[3], pcfile[GEN_NFUNC], pcinl = 0, fbase, i, k;
	uint64_t entry = GEN_TEXT;

	memset(g, 0, sizeof(*g));
	g->fmt = fmt;
	g->quantum = quantum;
	gen_u32(g, 0, magic[fmt]);
	g->mem[6] = quantum;
	g->mem[7] = 8;
	gen_u64(g, 8, GEN_NFUNC);
	g->fsz = v118 ? 4 : 8;
	if (v12) {
		/* functab and the file table's offset first; the rest anywhere after. */
		g->ftab = 16;
		g->size = g->ftab + (2 * GEN_NFUNC + 1) * 8 + 8;
	} else {
		gen_u64(g, 16, 3);
		if (v118)
			gen_u64(g, 24, GEN_TEXT);
		g->hdr_names = 8 + (words - 5) * 8;
		g->size = 8 + words * 8;
	}
	/* Names (1.2: offsets from the table's start, else from funcnametab). */
	base = v12 ? 0 : g->size;
	g->names = g->size;
	for (i = 0; i < GEN_NFUNC + 2; i++) {
		const char *n = i < GEN_NFUNC ? gen_funcs[i].name : beta_tree[i - GEN_NFUNC].name;

		g->name_off[i] = (uint32_t)(gen_put(g, n, strlen(n) + 1) - base);
	}
	g->names_end = g->size;
	if (!v12) {
		cutab = g->cutab = gen_align(g, 4);
		g->size += 4 * 3;
	}
	/* Files: 1.2 has a table of offsets from the start, entry 0 its length. */
	if (v12) {
		filetab = gen_align(g, 4);
		gen_u32(g, g->ftab + (2 * GEN_NFUNC + 1) * 8, (uint32_t)filetab);
		g->size += 4 * 4;
		gen_u32(g, filetab, 4);
	} else {
		filetab = g->size;
	}
	for (i = 0; i < 3; i++) {
		files[i] = gen_put(g, gen_files[i], strlen(gen_files[i]) + 1);
		if (v12)
			gen_u32(g, filetab + 4 * (i + 1), (uint32_t)files[i]);
		else
			gen_u32(g, cutab + 4 * i, (uint32_t)(files[i] - filetab));
	}
	/* pc-value tables: offset 0 means none, so pctab starts with a pad byte. */
	g->pctab = base = v12 ? 0 : g->size;
	g->mem[g->size++] = 0;
	for (i = 0; i < GEN_NFUNC; i++) {
		pcfile[i] = gen_pcvalue(g, gen_funcs[i].file, v12 ? 1 : 0, base);
		g->line_tab[i] = gen_pcvalue(g, gen_funcs[i].line, 0, base);
		if (gen_funcs[i].inl)
			pcinl = gen_pcvalue(g, gen_funcs[i].inl, 0, base);
	}
	/* functab and the _func records. */
	if (!v12) {
		g->ftab = gen_align(g, 8);
		g->size += (2 * GEN_NFUNC + 1) * g->fsz;
	}
	fbase = v12 ? 0 : g->ftab;
	for (i = 0; i < GEN_NFUNC; i++) {
		const struct gen_func *f = &gen_funcs[i];
		size_t p = g->func[i] = gen_align(g, 8), q;
		uint32_t tree = f->tree ? GEN_TREES : 0;

		if (v118) {
			gen_u32(g, g->ftab + 8 * i, (uint32_t)(entry - GEN_TEXT));
			gen_u32(g, g->ftab + 8 * i + 4, (uint32_t)(p - fbase));
			gen_u32(g, p, (uint32_t)(entry - GEN_TEXT));
			q = p + 4;
		} else {
			gen_u64(g, g->ftab + 16 * i, entry);
			gen_u64(g, g->ftab + 16 * i + 8, p - fbase);
			gen_u64(g, p, entry);
			q = p + 8;
		}
		gen_u32(g, q, g->name_off[i]);
		gen_u32(g, q + 16, (uint32_t)pcfile[i]);
		gen_u32(g, q + 20, g->line_tab[i]);
		gen_u32(g, q + 24, inl_pc + 1);
		q += 28;
		if (!v12)
			q += 4; /* cuOffset 0 */
		if (fmt == GEN_120)
			q += 4; /* startLine */
		/* nfuncdata: an int32 before Go 1.12, since the last byte of 4. */
		if (fmt == GEN_111)
			gen_u32(g, q, inl_fd + 1);
		else
			g->mem[q + 3] = (uint8_t)(inl_fd + 1);
		g->size = q + 4;
		for (k = 0; k <= inl_pc; k++)
			gen_u32(g, g->size + 4 * k, k == inl_pc && f->inl ? (uint32_t)pcinl : 0);
		g->size += 4 * (inl_pc + 1);
		if (!v118)
			gen_align(g, 8);
		for (k = 0; k <= inl_fd; k++) {
			if (v118) {
				/* Offsets from gofunc (16 bytes below the trees), ~0: none. */
				gen_u32(g, g->size, k == inl_fd && tree ? 16 : UINT32_MAX);
				g->size += 4;
			} else {
				gen_u64(g, g->size, k == inl_fd && tree ? GEN_VADDR + tree : 0);
				g->size += 8;
			}
		}
		entry += f->size;
	}
	if (v118)
		gen_u32(g, g->ftab + 8 * GEN_NFUNC, (uint32_t)(entry - GEN_TEXT));
	else
		gen_u64(g, g->ftab + 16 * GEN_NFUNC, entry);
	if (!v12) {
		size_t offs[] = {g->names, cutab, filetab, g->pctab, g->ftab};

		for (i = 0; i < 5; i++)
			gen_u64(g, g->hdr_names + 8 * i, offs[i]);
	}
	g->len = g->size;
	/* The inline tree of beta. */
	g->tree = GEN_TREES;
	g->tree_sz = fmt == GEN_111 || fmt == GEN_120 ? 16 : 20;
	g->gofunc = v118 ? GEN_VADDR + GEN_TREES - 16 : 0;
	for (i = 0; i < 2; i++) {
		const struct gen_inl *n = &beta_tree[i];
		size_t p = g->tree + i * g->tree_sz;
		uint32_t name = g->name_off[GEN_NFUNC + i];

		if (fmt == GEN_111) {
			gen_u32(g, p, (uint32_t)(int32_t)n->parent);
			gen_u32(g, p + 4, (uint32_t)n->file + 1);
			gen_u32(g, p + 8, (uint32_t)n->line);
			gen_u32(g, p + 12, name);
		} else if (fmt == GEN_120) {
			gen_u32(g, p + 4, name);
			gen_u32(g, p + 8, n->parent_pc);
			gen_u32(g, p + 12, (uint32_t)n->line);
		} else {
			g->mem[p] = (uint8_t)n->parent;
			g->mem[p + 1] = (uint8_t)((uint16_t)n->parent >> 8);
			gen_u32(g, p + 4, (uint32_t)n->file);
			gen_u32(g, p + 8, (uint32_t)n->line);
			gen_u32(g, p + 12, name);
			gen_u32(g, p + 16, n->parent_pc);
		}
	}
	g->size = g->tree + 2 * g->tree_sz;
}

static const uint8_t gen_quantum[GEN_NR] = {1, 1, 2, 1, 4};

/*
 * The same table in an ELF file: its text, the table and inline trees, a Go build ID
 * note, and a data segment.  Without section headers (as external linking and strip
 * can leave it), runtime.firstmoduledata in the data segment, after a decoy, tells
 * (1.18+) gofunc.  ELF_GO127: as Go 1.27 links, gofunc 3 words further and no text
 * start in the table's header.  ELF_SECTIONS: a .gopclntab section and a .symtab
 * naming runtime.text and go:func.*, no moduledata; ELF_SYMBOL: the same with the
 * table's section named otherwise and found by runtime.pclntab.
 */
enum { ELF_GO127 = 1, ELF_SECTIONS = 2, ELF_SYMBOL = 4 };

static size_t elf_with_table(const struct gen *g, uint8_t *out, size_t cap, unsigned int how)
{
	static const uint8_t note[] = {4, 0, 0,	  0,   4, 0, 0,	  0,   4,   0,
				       0, 0, 'G', 'o', 0, 0, 'i', 'd', '.', '.'};
	static const char shstr[] = "\0.gopclntab\0.symtab\0.strtab\0.shstrtab\0.data.rel.ro";
	static const char str[] = "\0runtime.pclntab\0runtime.epclntab\0runtime.text\0go:func.*";
	const uint64_t note_off = 0x140, text_off = 0x180, tab_off = 0x300, data_vaddr = 0x600000;
	uint64_t data_off = tab_off + ((g->size + 15) & ~(size_t)15), md = 64, words[48] = {0};
	uint64_t sh_off = data_off + md + sizeof(words), sym_off = sh_off + 5 * sizeof(Elf64_Shdr);
	uint64_t str_off = sym_off + 5 * sizeof(Elf64_Sym), shstr_off = str_off + sizeof(str);
	unsigned int gf = g->fmt == GEN_118 ? 38 : how & ELF_GO127 ? 43 : 40;
	bool sections = how & (ELF_SECTIONS | ELF_SYMBOL);
	uint64_t v = GEN_VADDR, total = sections ? shstr_off + sizeof(shstr) : sh_off;
	Elf64_Ehdr *eh = (Elf64_Ehdr *)out;
	Elf64_Phdr *ph = (Elf64_Phdr *)(out + sizeof(*eh));

	if (total > cap)
		return 0;
	memset(out, 0, total);
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_EXEC;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(*eh);
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 4;
	ph[0] = (Elf64_Phdr){PT_LOAD, PF_R | PF_X, text_off, GEN_TEXT, GEN_TEXT, 0xc0, 0xc0, 16};
	ph[1] = (Elf64_Phdr){PT_LOAD, PF_R, tab_off, v, v, g->size, g->size, 16};
	ph[2] = (Elf64_Phdr){PT_LOAD,	 PF_R | PF_W,	     data_off,		 data_vaddr,
			     data_vaddr, md + sizeof(words), md + sizeof(words), 16};
	ph[3] = (Elf64_Phdr){PT_NOTE, PF_R, note_off, 0, 0, sizeof(note), sizeof(note), 4};
	memcpy(out + note_off, note, sizeof(note));
	memcpy(out + tab_off, g->mem, g->size);
	if (how & ELF_GO127)
		memset(out + tab_off + 24, 0, 8);
	/* A decoy (a pointer to the table, nothing after it), then moduledata. */
	memcpy(out + data_off, &v, 8);
	if (g->fmt >= GEN_116 && !sections) {
		uint64_t hdr[5];

		memcpy(hdr, g->mem + g->hdr_names, sizeof(hdr));
		words[0] = v;
		words[1] = v + hdr[0];
		words[4] = v + hdr[1];
		words[7] = v + hdr[2];
		words[10] = v + hdr[3];
		words[13] = words[16] = v + hdr[4];
		words[22] = GEN_TEXT;
		words[gf - 1] = v;
		words[gf] = g->gofunc;
	}
	memcpy(out + data_off + md, words, sizeof(words));
	if (sections) {
		Elf64_Shdr *sh = (Elf64_Shdr *)(out + sh_off);
		Elf64_Sym *sym = (Elf64_Sym *)(out + sym_off);
		uint32_t name = how & ELF_SYMBOL ? 38 : 1;

		eh->e_shoff = sh_off;
		eh->e_shentsize = sizeof(*sh);
		eh->e_shnum = 5;
		eh->e_shstrndx = 4;
		sh[1] = (Elf64_Shdr){name, SHT_PROGBITS, SHF_ALLOC, v, tab_off, g->len, 0,
				     0,	   32,		 0};
		sh[2] = (Elf64_Shdr){12, SHT_SYMTAB, 0, 0,	     sym_off, 5 * sizeof(*sym),
				     3,	 1,	     8, sizeof(*sym)};
		sh[3] = (Elf64_Shdr){20, SHT_STRTAB, 0, 0, str_off, sizeof(str), 0, 0, 1, 0};
		sh[4] = (Elf64_Shdr){28, SHT_STRTAB, 0, 0, shstr_off, sizeof(shstr), 0, 0, 1, 0};
		sym[1] = (Elf64_Sym){1, STT_OBJECT, 0, 1, v, 0};
		sym[2] = (Elf64_Sym){17, STT_OBJECT, 0, 1, v + g->len, 0};
		sym[3] = (Elf64_Sym){34, STT_FUNC, 0, 1, GEN_TEXT, 0};
		sym[4] = (Elf64_Sym){47, STT_OBJECT, 0, 1, g->gofunc, 0};
		memcpy(out + str_off, str, sizeof(str));
		memcpy(out + shstr_off, shstr, sizeof(shstr));
	}
	return total;
}

#ifdef GOPCLN_SEEDS
/*
 * The fuzz target's input (fuzz_gopclntab.c): u64 vaddr, text, gofunc, u32 table
 * length and flags, then the memory at vaddr.
 */
static size_t gen_fuzz_input(const struct gen *g, uint8_t *out, uint32_t flags)
{
	uint64_t hdr[3] = {GEN_VADDR, 0, g->gofunc};
	uint32_t tail[2] = {(uint32_t)g->len, flags};

	memcpy(out, hdr, sizeof(hdr));
	memcpy(out + 24, tail, sizeof(tail));
	memcpy(out + 32, g->mem, g->size);
	return 32 + g->size;
}

static int write_seed(const char *dir, const char *name, const uint8_t *buf, size_t n)
{
	char path[4096];
	FILE *o;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	o = fopen(path, "wb");
	if (!o || fwrite(buf, 1, n, o) != n || fclose(o)) {
		perror(path);
		return 1;
	}
	return 0;
}

/* Each format as a table in memory (with read() and gofunc) and in an ELF file. */
int main(int argc, char **argv)
{
	static const char *const names[] = {"go1.11", "go1.15", "go1.16", "go1.18", "go1.20"};
	static uint8_t buf[32 + 8192];
	char name[64];
	struct gen g;
	int err = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	for (int f = 0; f < GEN_NR; f++) {
		size_t n;

		gen_table(&g, (enum gen_fmt)f, gen_quantum[f]);
		n = gen_fuzz_input(&g, buf, 7);
		err |= write_seed(argv[1], names[f], buf, n);
		memset(buf, 0, 32);
		buf[28] = 8;
		for (unsigned int how = 0; how < 8; how++) {
			if ((how & ELF_GO127 && f != GEN_120) || (how & 6) == 6)
				continue;
			n = elf_with_table(&g, buf + 32, sizeof(buf) - 32, how);
			snprintf(name, sizeof(name), "%s-elf%s%s%s", names[f],
				 how & ELF_GO127 ? "-go1.27" : "",
				 how & ELF_SECTIONS ? "-sections" : "",
				 how & ELF_SYMBOL ? "-symbol" : "");
			err |= !n || write_seed(argv[1], name, buf, 32 + n);
		}
	}
	return err;
}
#else /* !GOPCLN_SEEDS */

#include <fcntl.h>
#include <gelf.h>
#include <sys/wait.h>
#include <unistd.h>

#include "symbolize/dwarf_lines.h"
#include "unit.h"

static int gen_read(void *ctx, uint64_t vaddr, void *out, size_t len)
{
	const struct gen *g = ctx;

	if (vaddr < GEN_VADDR || vaddr - GEN_VADDR > g->size || len > g->size - (vaddr - GEN_VADDR))
		return -EFAULT;
	memcpy(out, g->mem + (vaddr - GEN_VADDR), len);
	return 0;
}

static struct gopcln *gen_open(struct gen *g)
{
	return gopcln_open_mem(g->mem, g->len, GEN_VADDR, 0, g->gofunc, gen_read, g);
}

/* What a pc should give: frames as "name file:line", innermost first. */
struct want {
	uint32_t pc; /* from GEN_TEXT */
	const char *frames[3];
};

static const struct want wants[] = {
	{0x00, {"main.alpha a.go:10"}},
	{0x10, {"main.alpha a.go:11"}},
	{0x3f, {"main.alpha a.go:12"}},
	{0x40, {"main.beta b.go:20"}},
	{0x48, {"main.beta b.go:21"}},
	{0x50, {"main.inner inl.go:30", "main.beta b.go:21"}},
	{0x58, {"main.inner inl.go:31", "main.beta b.go:21"}},
	{0x64, {"main.innermost inl.go:40", "main.inner inl.go:31", "main.beta b.go:21"}},
	{0x6f, {"main.innermost inl.go:40", "main.inner inl.go:31", "main.beta b.go:21"}},
	{0x70, {"main.beta b.go:22"}},
	{0x9f, {"main.beta b.go:22"}},
	{0xa0, {"main.gamma a.go:50"}},
	{0xbf, {"main.gamma a.go:50"}},
};

/* Frames as the wants write them; "" past n. */
static void frame_str(const struct gopcln_frame *f, int n, int k, char *buf, size_t len)
{
	if (k >= n)
		snprintf(buf, len, "%s", "");
	else
		snprintf(buf, len, "%s %s:%d", f[k].name, f[k].file ? f[k].file : "?", f[k].line);
}

static void check_pc(const struct gopcln *t, const struct want *w, const char *fmt)
{
	struct gopcln_frame f[8];
	char got[128];
	int n = gopcln_lookup(t, GEN_TEXT + w->pc, f, 8), k;

	if (n < 1) {
		printf("#   %s pc +%#x: lookup %d\n", fmt, w->pc, n);
		CHECK(n >= 1);
		return;
	}
	for (k = 0; k < 3; k++) {
		frame_str(f, n, k, got, sizeof(got));
		if (strcmp(got, w->frames[k] ? w->frames[k] : ""))
			printf("#   %s pc +%#x frame %d: \"%s\", want \"%s\"\n", fmt, w->pc, k, got,
			       w->frames[k] ? w->frames[k] : "");
		CHECK_STR(got, w->frames[k] ? w->frames[k] : "");
	}
	CHECK(n <= 3);
}

static void test_formats_names_lines_inlines(void)
{
	static const char *const formats[] = {"1.2", "1.2", "1.16", "1.18", "1.20"};
	struct gen g;

	for (int fmt = 0; fmt < GEN_NR; fmt++) {
		struct gopcln *t;
		uint64_t start, end;
		const char *name;
		size_t i;

		gen_table(&g, (enum gen_fmt)fmt, gen_quantum[fmt]);
		t = gen_open(&g);
		CHECK(t);
		if (!t)
			continue;
		CHECK_STR(gopcln_format(t), formats[fmt]);
		CHECK_EQ_U64(gopcln_nr_funcs(t), GEN_NFUNC);
		for (i = 0, start = GEN_TEXT; i < GEN_NFUNC; i++) {
			uint64_t s, e;

			CHECK(!gopcln_func(t, i, &s, &e, &name));
			CHECK_EQ_U64(s, start);
			CHECK_EQ_U64(e, start + gen_funcs[i].size);
			CHECK_STR(name, gen_funcs[i].name);
			start += gen_funcs[i].size;
		}
		CHECK(gopcln_func(t, GEN_NFUNC, &start, &end, &name) == -ERANGE);
		for (i = 0; i < sizeof(wants) / sizeof(wants[0]); i++)
			check_pc(t, &wants[i], formats[fmt]);
		gopcln_free(t);
	}
}

static void test_outside_functions_enoent(void)
{
	struct gopcln_frame f[4];
	struct gen g;

	for (int fmt = 0; fmt < GEN_NR; fmt++) {
		struct gopcln *t;

		gen_table(&g, (enum gen_fmt)fmt, gen_quantum[fmt]);
		t = gen_open(&g);
		CHECK(t);
		CHECK(gopcln_lookup(t, GEN_TEXT - 1, f, 4) == -ENOENT);
		CHECK(gopcln_lookup(t, GEN_TEXT + 0xc0, f, 4) == -ENOENT);
		CHECK(gopcln_lookup(t, 0, f, 4) == -ENOENT);
		CHECK(gopcln_lookup(t, UINT64_MAX, f, 4) == -ENOENT);
		CHECK(gopcln_lookup(t, GEN_TEXT, f, 0) == -EINVAL);
		gopcln_free(t);
	}
}

/* A quantum of 4 (arm64): pc deltas count instructions, and pcs inside one agree. */
static void test_pc_quantum(void)
{
	struct gopcln_frame a[4], b[4];
	struct gen g;
	struct gopcln *t;
	int n, m;

	gen_table(&g, GEN_120, 4);
	t = gen_open(&g);
	CHECK(t);
	n = gopcln_lookup(t, GEN_TEXT + 0x50, a, 4);
	m = gopcln_lookup(t, GEN_TEXT + 0x53, b, 4);
	CHECK(n == 2 && m == 2);
	CHECK(n == 2 && m == 2 && a[0].line == 30 && b[0].line == 30);
	gopcln_free(t);
	/* The same table read with quantum 1 sees every run a quarter as long. */
	g.mem[6] = 1;
	t = gen_open(&g);
	CHECK(t);
	n = gopcln_lookup(t, GEN_TEXT + 0x48, a, 4);
	CHECK(n >= 1 && a[0].line != 21);
	gopcln_free(t);
}

/* max cuts the innermost frames: the real function always stays. */
static void test_cut_keeps_outermost(void)
{
	struct gopcln_frame f[3];
	struct gen g;
	struct gopcln *t;
	int n;

	gen_table(&g, GEN_118, 1);
	t = gen_open(&g);
	n = gopcln_lookup(t, GEN_TEXT + 0x64, f, 1);
	CHECK(n == 1);
	CHECK(n == 1 && !strcmp(f[0].name, "main.beta") && f[0].line == 21);
	n = gopcln_lookup(t, GEN_TEXT + 0x64, f, 2);
	CHECK(n == 2);
	CHECK(n == 2 && !strcmp(f[0].name, "main.inner") && f[0].line == 31);
	gopcln_free(t);
}

/* Without gofunc (1.18+) or read() (1.16), no inline tree: the function, at pc's line. */
static void test_no_inline_tree_without_memory(void)
{
	struct gopcln_frame f[4];
	struct gen g;
	struct gopcln *t;
	int n;

	gen_table(&g, GEN_118, 1);
	t = gopcln_open_mem(g.mem, g.len, GEN_VADDR, 0, 0, gen_read, &g);
	n = gopcln_lookup(t, GEN_TEXT + 0x64, f, 4);
	CHECK(n == 1 && !strcmp(f[0].name, "main.beta") && f[0].line == 40);
	gopcln_free(t);
	gen_table(&g, GEN_116, 1);
	t = gopcln_open_mem(g.mem, g.len, GEN_VADDR, 0, 0, NULL, NULL);
	n = gopcln_lookup(t, GEN_TEXT + 0x64, f, 4);
	CHECK(n == 1 && !strcmp(f[0].name, "main.beta") && f[0].line == 40);
	gopcln_free(t);
}

/* 1.18+ entries are offsets from the text start: the caller's, where given, wins. */
static void test_text_start_given(void)
{
	struct gopcln_frame f[4];
	uint64_t s, e;
	const char *name;
	struct gen g;
	struct gopcln *t;

	gen_table(&g, GEN_120, 4);
	t = gopcln_open_mem(g.mem, g.len, GEN_VADDR, 0x7000, g.gofunc, gen_read, &g);
	CHECK(t && !gopcln_func(t, 0, &s, &e, &name) && s == 0x7000 && e == 0x7040);
	CHECK(gopcln_lookup(t, 0x7000 + 0x64, f, 4) == 3);
	CHECK(gopcln_lookup(t, GEN_TEXT, f, 4) == -ENOENT);
	gopcln_free(t);
}

/* Every shorter table: an error or answers, never a read past it (ASan under SAN=1). */
static void test_truncated_tables(void)
{
	struct gopcln_frame f[GOPCLN_MAX_INLINE + 1];
	struct gen g;

	for (int fmt = 0; fmt < GEN_NR; fmt++) {
		gen_table(&g, (enum gen_fmt)fmt, gen_quantum[fmt]);
		for (size_t len = 0; len < g.len; len++) {
			/* A copy of exactly len bytes, so a read past it is caught. */
			uint8_t *cut = malloc(len ? len : 1);
			struct gopcln *t;

			memcpy(cut, g.mem, len);
			t = gopcln_open_mem(cut, len, GEN_VADDR, 0, g.gofunc, gen_read, &g);
			if (!t)
				CHECK(errno == ENOENT || errno == EBADMSG);
			for (size_t i = 0; t && i < sizeof(wants) / sizeof(wants[0]); i++) {
				int n = gopcln_lookup(t, GEN_TEXT + wants[i].pc, f, 8);

				CHECK(n >= 1 || n == -EBADMSG || n == -ENOENT);
			}
			if (len < 8)
				CHECK(!t && errno == ENOENT);
			gopcln_free(t);
			free(cut);
		}
	}
}

static void test_bad_offsets_ebadmsg(void)
{
	struct gen g;

	/* A part of the table past its end. */
	gen_table(&g, GEN_118, 1);
	gen_u64(&g, g.hdr_names, g.len + 1);
	CHECK(!gen_open(&g) && errno == EBADMSG);
	/* 1.2: the file table past the end. */
	gen_table(&g, GEN_115, 1);
	gen_u32(&g, g.ftab + (2 * GEN_NFUNC + 1) * 8, (uint32_t)g.len);
	CHECK(!gen_open(&g) && errno == EBADMSG);
	/* More functions than the table has room for. */
	gen_table(&g, GEN_116, 1);
	gen_u64(&g, 8, 1u << 30);
	CHECK(!gen_open(&g) && errno == EBADMSG);
	/* A _func record past the end. */
	gen_table(&g, GEN_120, 4);
	gen_u32(&g, g.ftab + 4, (uint32_t)g.len);
	CHECK(!gen_open(&g) && errno == EBADMSG);
	/* Not a table at all. */
	gen_table(&g, GEN_120, 4);
	g.mem[7] = 6;
	CHECK(!gen_open(&g) && errno == ENOENT);
}

static void test_unsorted_functab_ebadmsg(void)
{
	struct gen g;

	for (int fmt = 0; fmt < GEN_NR; fmt++) {
		uint8_t tmp[8];

		gen_table(&g, (enum gen_fmt)fmt, gen_quantum[fmt]);
		memcpy(tmp, g.mem + g.ftab, g.fsz);
		memcpy(g.mem + g.ftab, g.mem + g.ftab + 2 * g.fsz, g.fsz);
		memcpy(g.mem + g.ftab + 2 * g.fsz, tmp, g.fsz);
		CHECK(!gen_open(&g) && errno == EBADMSG);
	}
}

/* A name whose NUL is not in the names: damaged, and nothing read past them. */
static void test_name_without_nul_ebadmsg(void)
{
	struct gopcln_frame f[4];
	uint64_t s, e;
	const char *name;

	for (int fmt = GEN_116; fmt < GEN_NR; fmt++) {
		struct gen g;
		struct gopcln *t;

		gen_table(&g, (enum gen_fmt)fmt, gen_quantum[fmt]);
		/* The last name ("main.innermost") runs into cutab. */
		memset(g.mem + g.names_end - 1, 'x', g.cutab - (g.names_end - 1));
		t = gen_open(&g);
		CHECK(t);
		CHECK(gopcln_lookup(t, GEN_TEXT + 0x64, f, 4) == -EBADMSG);
		CHECK(gopcln_lookup(t, GEN_TEXT + 0x50, f, 4) == 2);
		CHECK(!gopcln_func(t, 0, &s, &e, &name));
		gopcln_free(t);
		/* gamma named by it. */
		gen_u32(&g, g.func[2] + (fmt >= GEN_118 ? 4 : 8), g.name_off[GEN_NFUNC + 1]);
		t = gen_open(&g);
		CHECK(t && gopcln_func(t, 2, &s, &e, &name) == -EBADMSG);
		CHECK(gopcln_lookup(t, GEN_TEXT + 0xa0, f, 4) == -EBADMSG);
		gopcln_free(t);
	}
}

/* An inlined call whose parent is itself (or later): the chain stops at the function. */
static void test_inline_parent_loop_stops(void)
{
	struct gopcln_frame f[GOPCLN_MAX_INLINE + 1];
	struct gen g;

	for (int fmt = 0; fmt < GEN_NR; fmt++) {
		struct gopcln *t;
		int n;

		gen_table(&g, (enum gen_fmt)fmt, gen_quantum[fmt]);
		/* innermost's caller: itself (parentPc in its own range, or its own index). */
		if (fmt == GEN_111)
			gen_u32(&g, g.tree + g.tree_sz, 1);
		else
			gen_u32(&g, g.tree + g.tree_sz + (fmt == GEN_120 ? 8 : 16), 0x20);
		t = gen_open(&g);
		n = gopcln_lookup(t, GEN_TEXT + 0x64, f, GOPCLN_MAX_INLINE + 1);
		CHECK(n == 2);
		CHECK(n == 2 && !strcmp(f[0].name, "main.innermost") &&
		      !strcmp(f[1].name, "main.beta"));
		gopcln_free(t);
		/* inner's caller: innermost, an index after it. */
		gen_table(&g, (enum gen_fmt)fmt, gen_quantum[fmt]);
		if (fmt == GEN_111)
			gen_u32(&g, g.tree, 1);
		else
			gen_u32(&g, g.tree + (fmt == GEN_120 ? 8 : 16), 0x20);
		t = gen_open(&g);
		n = gopcln_lookup(t, GEN_TEXT + 0x64, f, GOPCLN_MAX_INLINE + 1);
		CHECK(n == 3 && !strcmp(f[2].name, "main.beta"));
		/* A parentPc outside the function. */
		gen_u32(&g, g.tree + (fmt == GEN_120 ? 8 : 16), 0x1000);
		if (fmt != GEN_111)
			CHECK(gopcln_lookup(t, GEN_TEXT + 0x64, f, 4) == 3);
		gopcln_free(t);
	}
}

/* A pc-value table that never ends (varints too long, then the table's end). */
static void test_runaway_pcvalue_ebadmsg(void)
{
	struct gopcln_frame f[4];
	struct gen g;
	struct gopcln *t;
	size_t p;

	gen_table(&g, GEN_118, 1);
	p = g.pctab + g.line_tab[0];
	memset(g.mem + p, 0xff, 6);
	t = gen_open(&g);
	CHECK(gopcln_lookup(t, GEN_TEXT + 0x00, f, 4) == -EBADMSG);
	CHECK(gopcln_lookup(t, GEN_TEXT + 0xa0, f, 4) == 1);
	gopcln_free(t);
}

static void test_elf_sections_symbols_segments(void)
{
	static const unsigned int hows[] = {0,
					    ELF_SECTIONS,
					    ELF_SYMBOL,
					    ELF_GO127,
					    ELF_GO127 | ELF_SECTIONS,
					    ELF_GO127 | ELF_SYMBOL};
	static uint8_t file[8192];
	struct gopcln_frame f[4];

	CHECK(elf_version(EV_CURRENT) != EV_NONE);
	for (int fmt = 0; fmt < GEN_NR; fmt++) {
		for (size_t h = 0; h < sizeof(hows) / sizeof(hows[0]); h++) {
			size_t size;
			struct gen g;
			struct gopcln *t;
			Elf *elf;
			int n;

			if (hows[h] & ELF_GO127 && fmt != GEN_120)
				continue;
			gen_table(&g, (enum gen_fmt)fmt, gen_quantum[fmt]);
			size = elf_with_table(&g, file, sizeof(file), hows[h]);
			CHECK(size);
			elf = elf_memory((char *)file, size);
			CHECK(elf);
			t = gopcln_open(elf);
			CHECK(t);
			n = t ? gopcln_lookup(t, GEN_TEXT + 0x64, f, 4) : -1;
			if (n != 3)
				printf("#   fmt %d, how %u: %d frames\n", fmt, hows[h], n);
			CHECK(n == 3 && !strcmp(f[0].name, "main.innermost") && f[2].line == 21);
			gopcln_free(t);
			elf_end(elf);
		}
	}
	/* No table: ENOENT.  And without Go's build ID note, no search for one. */
	for (int i = 0; i < 2; i++) {
		struct gen g;
		Elf *elf;

		gen_table(&g, GEN_120, 4);
		g.mem[0] = i ? g.mem[0] : 0;
		elf_with_table(&g, file, sizeof(file), 0);
		((Elf64_Ehdr *)file)->e_phnum = i ? 3 : 4;
		elf = elf_memory((char *)file, sizeof(file));
		CHECK(!gopcln_open(elf) && errno == ENOENT);
		elf_end(elf);
	}
	/* A damaged .gopclntab section: EBADMSG, and no search elsewhere. */
	{
		struct gen g;
		Elf *elf;

		gen_table(&g, GEN_118, 1);
		gen_u64(&g, g.hdr_names, g.len + 1);
		elf = elf_memory((char *)file,
				 elf_with_table(&g, file, sizeof(file), ELF_SECTIONS));
		CHECK(!gopcln_open(elf) && errno == EBADMSG);
		elf_end(elf);
	}
}

/* --- Real Go binaries, where `go` is installed: against their DWARF (libdw). */

static const char go_src[] = "package main\n"
			     "\n"
			     "import \"os\"\n"
			     "\n"
			     "type acc struct{ n int }\n"
			     "\n"
			     "func (a *acc) add(v int) { a.n += v * v }\n"
			     "\n"
			     "func sum(xs []int) int {\n"
			     "\tvar a acc\n"
			     "\tfor _, x := range xs {\n"
			     "\t\ta.add(x)\n"
			     "\t}\n"
			     "\treturn a.n\n"
			     "}\n"
			     "\n"
			     "func twice(xs []int) int { return sum(xs) * 2 }\n"
			     "\n"
			     "func main() {\n"
			     "\txs := make([]int, len(os.Args)+3)\n"
			     "\tfor i := range xs {\n"
			     "\t\txs[i] = i\n"
			     "\t}\n"
			     "\tos.Exit(twice(xs) & 1)\n"
			     "}\n";

static int write_file(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(s, f);
	return fclose(f);
}

/* PA_GO names another toolchain than the go on PATH; a GOCACHE set is kept (warm). */
static const char *go_cmd(void)
{
	const char *go = getenv("PA_GO");

	return go && *go ? go : "go";
}

static bool go_build(const char *dir, const char *out, const char *flags)
{
	char cmd[2048], cache[600] = "";

	if (!getenv("GOCACHE"))
		snprintf(cache, sizeof(cache), "GOCACHE=%s/cache", dir);
	snprintf(cmd, sizeof(cmd),
		 "cd %s && %s GOPATH=%s/gopath GOFLAGS=-mod=mod GOTOOLCHAIN=local GOPROXY=off "
		 "timeout 60 %s build %s -o %s . >/dev/null 2>&1",
		 dir, cache, dir, go_cmd(), flags, out);
	return system(cmd) == 0;
}

static Elf *open_elf(const char *path, int *fd)
{
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	return *fd < 0 ? NULL : elf_begin(*fd, ELF_C_READ_MMAP, NULL);
}

static bool same_frames(const struct gopcln_frame *a, int n, const struct dwl_result *r)
{
	if (!r || (uint32_t)n != r->n)
		return false;
	for (int k = 0; k < n; k++)
		if (!r->f[k].name || strcmp(a[k].name, r->f[k].name) || !a[k].file ||
		    !r->f[k].file || strcmp(a[k].file, r->f[k].file) || a[k].line != r->f[k].line)
			return false;
	return true;
}

static void test_real_go_binaries_match_dwarf(void)
{
	char dir[] = "/tmp/pa-gopcln-XXXXXX", path[512], plain[512], stripped[512], cmd[600];
	struct gopcln *t = NULL, *ts = NULL;
	long pcs = 0, agree = 0, inl = 0;
	struct dso_dwarf *dw = NULL;
	Elf *e = NULL, *es = NULL;
	int fd = -1, fds = -1;

	/* Go is a dependency of the tests (make deps installs golang-go): no skip. */
	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", go_cmd());
	if (system(cmd)) {
		printf("#   %s not installed (make deps installs golang-go)\n", go_cmd());
		CHECK(!"go installed");
		return;
	}
	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/main.go", dir);
	CHECK(!write_file(path, go_src));
	snprintf(path, sizeof(path), "%s/go.mod", dir);
	CHECK(!write_file(path, "module gopcln\n\ngo 1.16\n"));
	snprintf(plain, sizeof(plain), "%s/plain", dir);
	snprintf(stripped, sizeof(stripped), "%s/stripped", dir);
	if (!go_build(dir, plain, "") || !go_build(dir, stripped, "-ldflags='-s -w'")) {
		printf("#   go build in %s failed or took over 60 s\n", dir);
		CHECK(!"go build");
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		CHECK(!system(cmd));
		return;
	}
	e = open_elf(plain, &fd);
	es = open_elf(stripped, &fds);
	t = e ? gopcln_open(e) : NULL;
	ts = es ? gopcln_open(es) : NULL;
	dw = dwl_open(plain, NULL, false);
	CHECK(t && ts && dw);
	CHECK(t && ts && gopcln_nr_funcs(t) == gopcln_nr_funcs(ts));
	/* Every pc of the main package, and every 7th of the rest, both ways. */
	for (size_t i = 0; t && ts && dw && i < gopcln_nr_funcs(t); i++) {
		uint64_t s, en, pc;
		const char *name;
		bool mainpkg;

		if (gopcln_func(t, i, &s, &en, &name))
			continue;
		mainpkg = !strncmp(name, "main.", 5);
		for (pc = s; pc < en; pc += mainpkg ? 1 : 7) {
			struct gopcln_frame a[GOPCLN_MAX_INLINE + 1], b[GOPCLN_MAX_INLINE + 1];
			const struct dwl_result *r = dwl_lookup(dw, pc);
			int n = gopcln_lookup(t, pc, a, GOPCLN_MAX_INLINE + 1);
			int m = gopcln_lookup(ts, pc, b, GOPCLN_MAX_INLINE + 1);

			CHECK(n == m);
			if (n < 1 || !r || !r->n || !r->f[0].file || !a[0].file)
				continue; /* padding between functions: DWARF has no line */
			pcs++;
			inl += n > 1;
			agree += same_frames(a, n, r) && same_frames(b, m, r);
		}
	}
	printf("#   %ld pcs with DWARF lines, %ld inlined, %ld agree\n", pcs, inl, agree);
	/* DWARF lacks some inlined wrapper methods' frames; nearly all the rest agree. */
	CHECK(pcs > 1000 && inl > 100);
	CHECK(agree >= pcs - pcs / 100);
	dso_dwarf_free(dw);
	gopcln_free(t);
	gopcln_free(ts);
	if (e)
		elf_end(e);
	if (es)
		elf_end(es);
	if (fd >= 0)
		close(fd);
	if (fds >= 0)
		close(fds);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(!system(cmd));
}

int main(void)
{
	RUN(test_formats_names_lines_inlines);
	RUN(test_outside_functions_enoent);
	RUN(test_pc_quantum);
	RUN(test_cut_keeps_outermost);
	RUN(test_no_inline_tree_without_memory);
	RUN(test_text_start_given);
	RUN(test_truncated_tables);
	RUN(test_bad_offsets_ebadmsg);
	RUN(test_unsorted_functab_ebadmsg);
	RUN(test_name_without_nul_ebadmsg);
	RUN(test_inline_parent_loop_stops);
	RUN(test_runaway_pcvalue_ebadmsg);
	RUN(test_elf_sections_symbols_segments);
	RUN(test_real_go_binaries_match_dwarf);
	return unit_done();
}
#endif /* GOPCLN_SEEDS */
