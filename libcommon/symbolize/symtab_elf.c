// SPDX-License-Identifier: Apache-2.0
/*
 * ELF symbol loading: FUNC/IFUNC symbols of .symtab and .dynsym, PLT stubs named
 * "name@plt", the .symtab of MiniDebugInfo (.gnu_debugdata) and of separate debug
 * files, the functions of a Go binary's .gopclntab when no .symtab names them, and the
 * PT_LOAD segments that turn mapping file offsets into the link-time addresses the
 * symbols use.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/gopclntab.h"
#include "symbolize/symtab_priv.h"

#ifndef R_X86_64_GLOB_DAT
#define R_X86_64_GLOB_DAT 6
#endif

struct elf_ctx {
	Elf *elf;
	GElf_Ehdr ehdr;
	size_t nsec;
	GElf_Shdr *shdrs; /* by section index */
	size_t shstrndx;
	struct symtab_builder b;
	uint64_t names_left; /* name bytes this file may still add to the pool */
	bool refs;	     /* some names point into elf's data: the table keeps it */
};

/* A GOT slot and the dynamic symbol its relocation binds. */
struct got_slot {
	uint64_t addr;
	uint32_t name; /* pool offset (name without suffix) */
};

struct got_map {
	struct got_slot *v;
	size_t n, cap;
};

/*
 * Every symbol names its string by offset, so thousands can share one long name and
 * copy it into the pool each time: from one file, names may add up to a few times its
 * size (far more than a real table needs), and past that symbols are left out.
 */
static void names_budget(struct elf_ctx *c, uint64_t file_size)
{
	c->names_left = 8 * file_size + (16u << 20);
}

/* Take len bytes (plus a suffix and NUL) from the budget: false when it is spent. */
static bool take_name(struct elf_ctx *c, size_t len)
{
	if (len + 8 > c->names_left)
		return false;
	c->names_left -= len + 8;
	return true;
}

static const char *sec_name(struct elf_ctx *c, size_t i)
{
	const char *n = elf_strptr(c->elf, c->shstrndx, c->shdrs[i].sh_name);

	return n ? n : "";
}

static Elf_Data *sec_data(struct elf_ctx *c, size_t i)
{
	Elf_Scn *scn = elf_getscn(c->elf, i);

	return scn ? elf_getdata(scn, NULL) : NULL;
}

static int load_segments(struct elf_ctx *c, struct symtab *st)
{
	size_t nph, i;

	if (elf_getphdrnum(c->elf, &nph))
		return 0;
	st->segs = calloc(nph ? nph : 1, sizeof(*st->segs));
	if (!st->segs)
		return -ENOMEM;
	for (i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(c->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		st->segs[st->nr_segs].off = ph.p_offset;
		st->segs[st->nr_segs].vaddr = ph.p_vaddr;
		/* bss past filesz is still mapped from the file's last page. */
		st->segs[st->nr_segs].filesz = ph.p_memsz > ph.p_filesz ? ph.p_memsz : ph.p_filesz;
		st->nr_segs++;
	}
	return 0;
}

static bool sec_is_text(struct elf_ctx *c, size_t idx)
{
	return idx > 0 && idx < c->nsec && (c->shdrs[idx].sh_flags & SHF_EXECINSTR);
}

/* Function symbols of one SHT_SYMTAB/SHT_DYNSYM section. */
static int load_symbols(struct elf_ctx *c, size_t si)
{
	const GElf_Shdr *sh = &c->shdrs[si];
	Elf_Data *data, *strs;
	size_t i, n;

	if (!sh->sh_entsize || sh->sh_link >= c->nsec)
		return 0;
	data = sec_data(c, si);
	strs = sec_data(c, sh->sh_link);
	if (!data || !strs || !strs->d_buf)
		return 0;
	n = sh->sh_size / sh->sh_entsize;
	for (i = 1; i < n; i++) {
		const char *name;
		uint64_t start, limit;
		GElf_Sym sym;
		uint32_t bits = 0;
		size_t len;
		int type, bind, err;

		if (!gelf_getsym(data, (int)i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		bind = GELF_ST_BIND(sym.st_info);
		if (type == STT_FUNC || type == STT_GNU_IFUNC)
			bits |= SB_FUNC;
		else if (type != STT_NOTYPE || !sym.st_size)
			continue; /* sized NOTYPE in text: hand-written assembly functions */
		if (!sym.st_value || !sec_is_text(c, sym.st_shndx) || sym.st_name >= strs->d_size)
			continue;
		name = (const char *)strs->d_buf + sym.st_name;
		len = strnlen(name, strs->d_size - sym.st_name);
		if (!len || name[0] == '$' || !strncmp(name, ".L", 2) || !take_name(c, len))
			continue;
		if (bind != STB_LOCAL)
			bits |= SB_GLOBAL;
		if (bind != STB_WEAK)
			bits |= SB_STRONG;
		start = sym.st_value;
		if (c->ehdr.e_machine == EM_ARM)
			start &= ~1ULL; /* Thumb bit */
		limit = c->shdrs[sym.st_shndx].sh_addr + c->shdrs[sym.st_shndx].sh_size;
		/* The name where it is, unless the section ends before its NUL. */
		if (len < strs->d_size - sym.st_name) {
			err = symtab_builder_add_ref(&c->b, start, sym.st_size, limit, name, bits);
			c->refs = true;
		} else {
			err = symtab_builder_add(&c->b, start, sym.st_size, limit, name, len, NULL,
						 bits);
		}
		if (err)
			return err;
	}
	return 0;
}

static int cmp_slot(const void *a, const void *b)
{
	const struct got_slot *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * GOT slots named by the relocations that fill them: JUMP_SLOT entries of .rela.plt
 * (lazy or BIND_NOW) and GLOB_DAT entries (what .plt.got stubs jump through).
 */
static int collect_slots(struct elf_ctx *c, size_t ri, bool plt, struct got_map *gm)
{
	const GElf_Shdr *sh = &c->shdrs[ri];
	Elf_Data *data, *syms, *strs;
	size_t i, n, symsec, len;

	symsec = sh->sh_link;
	if (!sh->sh_entsize || symsec == 0 || symsec >= c->nsec ||
	    c->shdrs[symsec].sh_link >= c->nsec)
		return 0;
	data = sec_data(c, ri);
	syms = sec_data(c, symsec);
	strs = sec_data(c, c->shdrs[symsec].sh_link);
	if (!data || !syms || !strs || !strs->d_buf)
		return 0;
	n = sh->sh_size / sh->sh_entsize;
	for (i = 0; i < n; i++) {
		uint64_t off, info;
		const char *name;
		GElf_Sym sym;
		int64_t poff;

		if (sh->sh_type == SHT_RELA) {
			GElf_Rela r;

			if (!gelf_getrela(data, (int)i, &r))
				break;
			off = r.r_offset;
			info = r.r_info;
		} else {
			GElf_Rel r;

			if (!gelf_getrel(data, (int)i, &r))
				break;
			off = r.r_offset;
			info = r.r_info;
		}
		if (!plt &&
		    (c->ehdr.e_machine != EM_X86_64 || GELF_R_TYPE(info) != R_X86_64_GLOB_DAT))
			continue;
		if (!GELF_R_SYM(info) || !gelf_getsym(syms, (int)GELF_R_SYM(info), &sym) ||
		    sym.st_name >= strs->d_size)
			continue;
		name = (const char *)strs->d_buf + sym.st_name;
		len = strnlen(name, strs->d_size - sym.st_name);
		if (!len || !take_name(c, len))
			continue;
		if (gm->n == gm->cap) {
			size_t ncap = gm->cap ? gm->cap * 2 : 256;
			struct got_slot *nv = realloc(gm->v, ncap * sizeof(*nv));

			if (!nv)
				return -ENOMEM;
			gm->v = nv;
			gm->cap = ncap;
		}
		poff = symtab_builder_str(&c->b, name, len, NULL);
		if (poff < 0)
			return (int)poff;
		gm->v[gm->n].addr = off;
		gm->v[gm->n].name = (uint32_t)poff;
		gm->n++;
	}
	return 0;
}

static const struct got_slot *find_slot(const struct got_map *gm, uint64_t addr)
{
	struct got_slot key = {.addr = addr};

	return gm->n ? bsearch(&key, gm->v, gm->n, sizeof(key), cmp_slot) : NULL;
}

static uint32_t le32(const unsigned char *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/*
 * x86-64 stubs are decoded rather than counted: each one that is "[endbr64] [bnd] jmp
 * *disp(%rip)" names the GOT slot it goes through, which covers .plt, .plt.sec (IBT),
 * .plt.got and BIND_NOW layouts alike; lazy IBT .plt stubs (push; jmp PLT0) are left
 * unnamed, as their .plt.sec twins carry the names.
 */
static int plt_x86_64(struct elf_ctx *c, size_t pi, const struct got_map *gm)
{
	const GElf_Shdr *sh = &c->shdrs[pi];
	size_t ent = sh->sh_entsize >= 8 && sh->sh_entsize <= 32 ? sh->sh_entsize : 16;
	Elf_Data *data = sec_data(c, pi);
	const unsigned char *buf;
	size_t off;

	if (!data || !data->d_buf || data->d_size < ent)
		return 0;
	buf = data->d_buf;
	for (off = 0; off + ent <= data->d_size; off += ent) {
		const unsigned char *p = buf + off, *e = buf + off + ent;
		const struct got_slot *slot;
		uint64_t target;
		int err;

		if (e - p >= 4 && p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa)
			p += 4;
		if (p < e && *p == 0xf2)
			p++;
		if (e - p < 6 || p[0] != 0xff || p[1] != 0x25)
			continue;
		target = sh->sh_addr + (uint64_t)(p + 6 - buf) +
			 (uint64_t)(int64_t)(int32_t)le32(p + 2);
		slot = find_slot(gm, target);
		if (!slot || !take_name(c, strlen(c->b.pool + slot->name)))
			continue;
		err = symtab_builder_add(&c->b, sh->sh_addr + off, ent, 0, c->b.pool + slot->name,
					 strlen(c->b.pool + slot->name), "@plt",
					 SB_FUNC | SB_GLOBAL | SB_STRONG);
		if (err)
			return err;
	}
	return 0;
}

/* Other architectures: stubs follow the header in .rela.plt order (aarch64: 32-byte header). */
static int plt_ordered(struct elf_ctx *c, size_t pi, const struct got_map *gm)
{
	const GElf_Shdr *sh = &c->shdrs[pi];
	uint64_t hdr = c->ehdr.e_machine == EM_AARCH64 ? 32 : 16, ent = 16;
	size_t i;
	int err;

	for (i = 0; i < gm->n && hdr + (i + 1) * ent <= sh->sh_size; i++) {
		const char *name = c->b.pool + gm->v[i].name;

		if (!take_name(c, strlen(name)))
			break;
		err = symtab_builder_add(&c->b, sh->sh_addr + hdr + i * ent, ent, 0, name,
					 strlen(name), "@plt", SB_FUNC | SB_GLOBAL | SB_STRONG);
		if (err)
			return err;
	}
	return 0;
}

static int load_plt(struct elf_ctx *c)
{
	size_t i, plt = 0, plt_sec = 0, plt_got = 0, rel_plt = 0, rel_dyn = 0;
	struct got_map gm = {0}, jump = {0};
	int err = 0;

	for (i = 1; i < c->nsec; i++) {
		const char *n = sec_name(c, i);
		uint32_t t = c->shdrs[i].sh_type;

		if ((t == SHT_RELA || t == SHT_REL) &&
		    (!strcmp(n, ".rela.plt") || !strcmp(n, ".rel.plt")))
			rel_plt = i;
		else if ((t == SHT_RELA || t == SHT_REL) &&
			 (!strcmp(n, ".rela.dyn") || !strcmp(n, ".rel.dyn")))
			rel_dyn = i;
		else if (!strcmp(n, ".plt"))
			plt = i;
		else if (!strcmp(n, ".plt.sec"))
			plt_sec = i;
		else if (!strcmp(n, ".plt.got"))
			plt_got = i;
	}
	if (rel_plt)
		err = collect_slots(c, rel_plt, true, &jump);
	/* GLOB_DAT slots name .plt.got's stubs alone; a large C++ library has no such
	 * stubs and 350k other relocations in .rela.dyn (libLLVM), not worth a pass. */
	if (!err && rel_dyn && plt_got)
		err = collect_slots(c, rel_dyn, false, &gm);
	if (err)
		goto out;
	if (c->ehdr.e_machine == EM_X86_64) {
		struct got_slot *nv;

		if (jump.n) {
			nv = realloc(gm.v, (gm.n + jump.n) * sizeof(*nv));
			if (!nv) {
				err = -ENOMEM;
				goto out;
			}
			memcpy(nv + gm.n, jump.v, jump.n * sizeof(*nv));
			gm.v = nv;
			gm.n += jump.n;
		}
		if (gm.n)
			qsort(gm.v, gm.n, sizeof(*gm.v), cmp_slot);
		if (plt)
			err = plt_x86_64(c, plt, &gm);
		if (!err && plt_sec)
			err = plt_x86_64(c, plt_sec, &gm);
		if (!err && plt_got)
			err = plt_x86_64(c, plt_got, &gm);
	} else if (plt && !plt_sec && jump.n) {
		err = plt_ordered(c, plt, &jump);
	}
out:
	free(gm.v);
	free(jump.v);
	return err;
}

/* Section headers of c->elf into c->shdrs. */
static int read_shdrs(struct elf_ctx *c)
{
	size_t i;

	if (elf_kind(c->elf) != ELF_K_ELF || !gelf_getehdr(c->elf, &c->ehdr))
		return -ENOEXEC;
	if (elf_getshdrnum(c->elf, &c->nsec) || elf_getshdrstrndx(c->elf, &c->shstrndx))
		return -ENOEXEC;
	c->shdrs = calloc(c->nsec ? c->nsec : 1, sizeof(*c->shdrs));
	if (!c->shdrs)
		return -ENOMEM;
	for (i = 1; i < c->nsec; i++) {
		Elf_Scn *scn = elf_getscn(c->elf, i);

		if (!scn || !gelf_getshdr(scn, &c->shdrs[i]))
			return -ENOEXEC;
	}
	return 0;
}

static int load_all_symbols(struct elf_ctx *c)
{
	size_t i;
	int err = 0;

	for (i = 1; !err && i < c->nsec; i++) {
		if (c->shdrs[i].sh_type == SHT_SYMTAB || c->shdrs[i].sh_type == SHT_DYNSYM)
			err = load_symbols(c, i);
		if (c->shdrs[i].sh_type == SHT_SYMTAB && c->shdrs[i].sh_entsize &&
		    c->shdrs[i].sh_size / c->shdrs[i].sh_entsize > 1)
			c->b.full = true;
	}
	return err;
}

/*
 * A separate debug file (objcopy --only-keep-debug) adds the .symtab the shipped file
 * was stripped of; its .plt is NOBITS, so PLT names and segments come from the file.
 */
static int load_debug(struct elf_ctx *c, const char *debug)
{
	struct elf_ctx d = {0};
	struct stat sb;
	int fd, err;

	fd = open(debug, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* optional: the file alone still has .dynsym */
	names_budget(&d, fstat(fd, &sb) ? 0 : (uint64_t)sb.st_size);
	d.elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	d.b = c->b;
	err = d.elf ? read_shdrs(&d) : -ENOEXEC;
	if (!err && d.ehdr.e_machine == c->ehdr.e_machine)
		err = load_all_symbols(&d);
	if (d.refs && symtab_builder_keep(&d.b, d.elf, NULL))
		err = -ENOSPC;
	if (d.refs)
		d.elf = NULL; /* kept, or released by the failed keep */
	c->b = d.b;
	if (d.elf)
		elf_end(d.elf);
	close(fd);
	free(d.shdrs);
	return err == -ENOMEM || err == -ENOSPC ? err : 0;
}

/* A MiniDebugInfo payload never needs more than this; a larger one is corrupt or hostile. */
#define MINIDEBUG_MAX (256u << 20)

/*
 * Inflate an xz stream (MiniDebugInfo) into a malloc'ed buffer.  0 with *out, *outlen
 * set, or -errno (-EBADMSG for a corrupt stream, -EFBIG past MINIDEBUG_MAX).  The
 * buffer starts small and doubles as output arrives: nothing is sized from inlen, which
 * says nothing about what the stream inflates to.
 */
static int xz_inflate(const void *in, size_t inlen, void **out, size_t *outlen)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	uint8_t *buf = NULL, *nb;
	size_t cap = 0, ncap;
	lzma_ret ret;
	int err = 0;

	if (lzma_stream_decoder(&strm, MINIDEBUG_MAX, 0) != LZMA_OK)
		return -ENOMEM;
	strm.next_in = in;
	strm.avail_in = inlen;
	for (;;) {
		if (!strm.avail_out) {
			if (cap >= MINIDEBUG_MAX) {
				err = -EFBIG;
				goto out;
			}
			ncap = cap ? 2 * cap : 65536;
			if (ncap > MINIDEBUG_MAX)
				ncap = MINIDEBUG_MAX;
			nb = realloc(buf, ncap);
			if (!nb) {
				err = -ENOMEM;
				goto out;
			}
			buf = nb;
			strm.next_out = buf + cap;
			strm.avail_out = ncap - cap;
			cap = ncap;
		}
		ret = lzma_code(&strm, LZMA_FINISH);
		if (ret == LZMA_STREAM_END)
			break;
		if (ret != LZMA_OK && ret != LZMA_BUF_ERROR) {
			err = ret == LZMA_MEM_ERROR || ret == LZMA_MEMLIMIT_ERROR ? -ENOMEM
										  : -EBADMSG;
			goto out;
		}
		if (strm.avail_out) {
			err = -EBADMSG; /* input ended before the stream did */
			goto out;
		}
	}
	*out = buf;
	*outlen = strm.total_out;
	buf = NULL;
out:
	free(buf);
	lzma_end(&strm);
	return err;
}

/*
 * MiniDebugInfo (Fedora, RHEL, CentOS...): .gnu_debugdata is an xz-compressed ELF whose
 * .symtab holds the local functions that stripping removed from the shipped file.  A
 * corrupt payload is ignored: the file's own symbols still stand.
 */
static int load_minidebuginfo(struct elf_ctx *c)
{
	struct elf_ctx m = {0};
	Elf_Data *data = NULL;
	size_t i, len;
	void *buf;
	int err;

	for (i = 1; i < c->nsec; i++) {
		if (c->shdrs[i].sh_type == SHT_PROGBITS &&
		    !strcmp(sec_name(c, i), ".gnu_debugdata")) {
			data = sec_data(c, i);
			break;
		}
	}
	if (!data || !data->d_buf || !data->d_size)
		return 0;
	err = xz_inflate(data->d_buf, data->d_size, &buf, &len);
	if (err)
		return err == -ENOMEM ? err : 0;
	names_budget(&m, len);
	m.elf = elf_memory(buf, len);
	m.b = c->b;
	err = m.elf ? read_shdrs(&m) : -ENOEXEC;
	if (!err && m.ehdr.e_machine == c->ehdr.e_machine)
		err = load_all_symbols(&m);
	if (m.refs && symtab_builder_keep(&m.b, m.elf, buf))
		err = -ENOSPC;
	if (m.refs) {
		m.elf = NULL; /* kept, or released by the failed keep */
		buf = NULL;
	}
	c->b = m.b;
	if (m.elf)
		elf_end(m.elf);
	free(m.shdrs);
	free(buf);
	return err == -ENOMEM || err == -ENOSPC ? err : 0;
}

/*
 * A stripped Go binary (`-ldflags=-s`) still has the table its runtime names functions
 * by: every Go function, named where the file's mapping has the name.
 */
static int load_gopclntab(struct elf_ctx *c)
{
	struct gopcln *t = gopcln_open(c->elf);
	size_t i, n;
	int err = 0;

	if (!t)
		return errno == ENOMEM ? -ENOMEM : 0;
	n = gopcln_nr_funcs(t);
	for (i = 0; !err && i < n; i++) {
		uint64_t start, end;
		const char *name;

		if (gopcln_func(t, i, &start, &end, &name) || !name[0])
			continue;
		err = symtab_builder_add_ref(&c->b, start, end - start, 0, name,
					     SB_FUNC | SB_GLOBAL | SB_STRONG);
		c->refs = true;
	}
	/* Every Go function is there; C ones (cgo) only as far as .dynsym names them. */
	if (n)
		c->b.full = true;
	gopcln_free(t);
	return err;
}

static int load_elf(struct elf_ctx *c, struct symtab *st, const char *debug)
{
	int err;

	err = read_shdrs(c);
	if (!err)
		err = load_segments(c, st);
	if (!err)
		err = load_all_symbols(c);
	if (!err)
		err = load_plt(c);
	if (!err)
		err = load_minidebuginfo(c);
	if (!err && debug)
		err = load_debug(c, debug);
	if (!err && !c->b.full)
		err = load_gopclntab(c);
	if (!err && c->refs) {
		err = symtab_builder_keep(&c->b, c->elf, NULL);
		c->elf = NULL;
	}
	if (!err)
		err = symtab_builder_finish(&c->b, st, 1 << 20);
	return err;
}

struct symtab *symtab_load_elf_debug(const char *path, const char *debug)
{
	struct elf_ctx c = {0};
	struct symtab *st;
	struct stat sb;
	int fd, err;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = EINVAL;
		return NULL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	names_budget(&c, fstat(fd, &sb) ? 0 : (uint64_t)sb.st_size);
	st = calloc(1, sizeof(*st));
	c.elf = st ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	if (!st)
		err = -ENOMEM;
	else if (!c.elf)
		err = -ENOEXEC;
	else
		err = load_elf(&c, st, debug);
	if (c.elf)
		elf_end(c.elf);
	close(fd);
	free(c.shdrs);
	symtab_builder_free(&c.b);
	if (err) {
		symtab_free(st);
		errno = -err;
		return NULL;
	}
	return st;
}

struct symtab *symtab_load_elf(const char *path)
{
	return symtab_load_elf_debug(path, NULL);
}
