// SPDX-License-Identifier: Apache-2.0
/*
 * CPython interpreters recognized in their ELF files (cpython.h).  Everything is read
 * from the file, nothing from a process: _PyRuntime's initializer is in the file's
 * .PyRuntime section, _Py_DebugOffsets included, and Py_Version is a constant.  A file
 * without that section (3.9 and older, which have none) is no interpreter here.
 */
#include <errno.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/cpython.h"
#include "symbolize/dwarf_lines.h"

/* The oldest and newest minor versions whose frames pa-record knows how to read. */
#define CPY_MIN_MINOR 11
#define CPY_MAX_MINOR 15

/* The defined symbol name of type (STT_*) in e's .dynsym, else .symtab: its value and
 * size. */
static bool find_symbol(Elf *e, const char *name, int type, uint64_t *value, uint64_t *size)
{
	static const Elf64_Word types[] = {SHT_DYNSYM, SHT_SYMTAB};
	size_t t;

	for (t = 0; t < 2; t++) {
		Elf_Scn *scn = NULL;

		while ((scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			Elf_Data *d;
			size_t i, n;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != types[t] || !sh.sh_entsize)
				continue;
			d = elf_getdata(scn, NULL);
			if (!d)
				continue;
			n = d->d_size / sh.sh_entsize;
			for (i = 0; i < n; i++) {
				GElf_Sym sym;
				const char *s;

				if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
				    GELF_ST_TYPE(sym.st_info) != type)
					continue;
				s = elf_strptr(e, sh.sh_link, sym.st_name);
				if (s && !strcmp(s, name)) {
					*value = sym.st_value;
					*size = sym.st_size;
					return true;
				}
			}
		}
	}
	return false;
}

/* The section named name: its address and size. */
static bool find_section(Elf *e, const char *name, uint64_t *addr, uint64_t *size)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(e, &shstrndx))
		return false;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *s;

		if (!gelf_getshdr(scn, &sh))
			continue;
		s = elf_strptr(e, shstrndx, sh.sh_name);
		if (s && !strcmp(s, name) && sh.sh_type == SHT_PROGBITS) {
			*addr = sh.sh_addr;
			*size = sh.sh_size;
			return true;
		}
	}
	return false;
}

int cpython_read_file(Elf *e, uint64_t addr, void *out, size_t len)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_ALLOC) || addr < sh.sh_addr ||
		    addr - sh.sh_addr >= sh.sh_size || sh.sh_size - (addr - sh.sh_addr) < len)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size != sh.sh_size)
			return -ENOENT;
		memcpy(out, (const char *)d->d_buf + (addr - sh.sh_addr), len);
		return 0;
	}
	return -ENOENT;
}

/*
 * A _PyEval_EvalFrameDefault smaller than this was split by the compiler: Debian's
 * PGO builds leave a few hundred bytes under the symbol and put the loop in a
 * partition of its own, with an FDE but no symbol in a stripped file.
 */
#define CPY_SPLIT_EVAL (16u << 10)
#define CPY_SCAN_MAX   (64u << 10)

/*
 * The partition of a split eval function [lo, hi): the function (FDE) that the most
 * jumps out of it (jmp/jcc rel32) land in, by .eh_frame_hdr's table of FDE starts,
 * which every x86-64 file has.  A byte scan, not a disassembly: a false match lands
 * anywhere, the partition collects the real ones.  0 when no FDE gets 4 or more.
 */
static void split_eval(Elf *e, uint64_t lo, uint64_t hi, uint64_t *plo, uint64_t *phi)
{
	struct {
		size_t k; /* index into starts */
		unsigned int hits;
	} part[16];
	size_t np = 0, i, j, len = hi - lo, nst = 0;
	uint64_t *starts = NULL;
	unsigned int best = 3;
	GElf_Ehdr eh;
	uint8_t *b;

	*plo = *phi = 0;
	if (!gelf_getehdr(e, &eh) || eh.e_machine != EM_X86_64 || len > CPY_SCAN_MAX ||
	    !(b = malloc(len)))
		return;
	if (cpython_read_file(e, lo, b, len) || dwl_fde_starts(e, &starts, &nst) || nst < 2)
		nst = 0;
	for (i = 0; nst && i + 6 <= len; i++) {
		size_t a = 0, z = nst;
		uint64_t to;
		int32_t rel;

		if (b[i] == 0xe9) {
			memcpy(&rel, b + i + 1, 4);
			to = lo + i + 5 + (int64_t)rel;
		} else if (b[i] == 0x0f && (b[i + 1] & 0xf0) == 0x80) {
			memcpy(&rel, b + i + 2, 4);
			to = lo + i + 6 + (int64_t)rel;
		} else {
			continue;
		}
		if ((to >= lo && to < hi) || to < starts[0] || to >= starts[nst - 1])
			continue;
		while (z - a > 1) { /* the last start <= to */
			size_t mid = a + (z - a) / 2;

			if (starts[mid] <= to)
				a = mid;
			else
				z = mid;
		}
		for (j = 0; j < np && part[j].k != a; j++)
			;
		if (j == np) {
			if (np == sizeof(part) / sizeof(part[0]))
				continue;
			part[np++].k = a;
			part[j].hits = 0;
		}
		if (++part[j].hits > best) {
			best = part[j].hits;
			*plo = starts[a];
			*phi = starts[a + 1];
		}
	}
	free(starts);
	free(b);
}

int cpython_probe(Elf *e, struct cpython_elf *py)
{
	struct {
		char cookie[8];
		uint64_t version;
		uint64_t free_threaded;
	} head;
	uint64_t addr, size;
	GElf_Ehdr eh;

	memset(py, 0, sizeof(*py));
	if (!e || !gelf_getehdr(e, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64)
		return -ENOEXEC;
	/* The section first: it costs the section headers, where a symbol lookup reads
	 * the symbol tables of every file a process maps. */
	if (!find_section(e, ".PyRuntime", &addr, &size))
		return -ENOENT;
	if (!find_symbol(e, "_PyRuntime", STT_OBJECT, &py->runtime, &py->runtime_size)) {
		py->runtime = addr;
		py->runtime_size = size;
		py->by_section = true;
	}
	if (find_symbol(e, "Py_Version", STT_OBJECT, &addr, &size) && size >= 4) {
		uint64_t v = 0;

		if (!cpython_read_file(e, addr, &v, size < 8 ? size : 8))
			py->version = (uint32_t)v;
	}
	/* 3.13+: both the 3.13 and the 3.14 layouts begin with these three fields. */
	if (py->runtime_size >= sizeof(head) &&
	    !cpython_read_file(e, py->runtime, &head, sizeof(head)) &&
	    !memcmp(head.cookie, CPY_DEBUG_COOKIE, 8)) {
		py->debug_offsets = true;
		py->free_threaded = head.free_threaded != 0;
		if (!py->version)
			py->version = (uint32_t)head.version;
	}
	/* Exported (a stripped file keeps it); its .cold part only in .symtab. */
	if (find_symbol(e, "_PyEval_EvalFrameDefault", STT_FUNC, &addr, &size)) {
		py->eval[0].lo = addr;
		py->eval[0].hi = addr + size;
	}
	if (find_symbol(e, "_PyEval_EvalFrameDefault.cold", STT_FUNC, &addr, &size)) {
		py->eval[1].lo = addr;
		py->eval[1].hi = addr + size;
	} else if (py->eval[0].lo && py->eval[0].hi - py->eval[0].lo < CPY_SPLIT_EVAL) {
		split_eval(e, py->eval[0].lo, py->eval[0].hi, &py->eval[1].lo, &py->eval[1].hi);
	}
	return 0;
}

int cpython_probe_fd(int fd, struct cpython_elf *py)
{
	Elf *e;
	int err;

	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e) {
		memset(py, 0, sizeof(*py));
		return -ENOEXEC;
	}
	err = cpython_probe(e, py);
	elf_end(e);
	return err;
}

const char *cpython_version_str(uint32_t hex, char *buf, size_t size)
{
	static const char *const levels[16] = {[0xa] = "a", [0xb] = "b", [0xc] = "rc"};
	unsigned int level = (hex >> 4) & 0xf, serial = hex & 0xf;

	if (!hex) {
		snprintf(buf, size, "3.10 or older");
		return buf;
	}
	if (level == 0xf || !levels[level])
		snprintf(buf, size, "%u.%u.%u", hex >> 24, (hex >> 16) & 0xff, (hex >> 8) & 0xff);
	else
		snprintf(buf, size, "%u.%u.%u%s%u", hex >> 24, (hex >> 16) & 0xff,
			 (hex >> 8) & 0xff, levels[level], serial);
	return buf;
}

const char *cpython_unsupported(const struct cpython_elf *py)
{
	unsigned int major = py->version >> 24, minor = (py->version >> 16) & 0xff;

	if (!py->version || (major == 3 && minor < CPY_MIN_MINOR))
		return "end of life (3.10 and older), not supported";
	if (major != 3 || minor > CPY_MAX_MINOR)
		return "this CPython is newer than 3.15: its frame layout is not known to this "
		       "pa-record";
	if (minor >= 13 && !py->debug_offsets)
		return "its _PyRuntime does not start with _Py_DebugOffsets";
	if (py->free_threaded)
		return "free-threaded CPython builds are not supported yet";
	return NULL;
}
