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
#include <string.h>

#include "symbolize/cpython.h"

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
