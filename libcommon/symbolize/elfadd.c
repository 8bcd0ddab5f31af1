// SPDX-License-Identifier: Apache-2.0
/*
 * Appending a symbol table and a build-id note to a copy of an ELF file (elfadd.h).
 * Only the ELF header changes in place (e_shoff, e_shnum, e_shstrndx); everything else
 * is appended, so no offset or address inside the original moves.
 */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "symbolize/elfadd.h"

#define NEW_SECS   4 /* .symtab, .strtab, .note.gnu.build-id, .shstrtab */
#define COPY_CHUNK (1u << 20)

static const char new_names[] = ".symtab\0.strtab\0.note.gnu.build-id\0.shstrtab";
enum { N_SYMTAB = 0, N_STRTAB = 8, N_NOTE = 16, N_SHSTRTAB = 35 };

/* A growing buffer for the appended part. */
struct tail {
	uint8_t *p;
	size_t len, cap;
};

static int tail_put(struct tail *t, const void *src, size_t len)
{
	if (t->len + len > t->cap) {
		size_t ncap = t->cap ? t->cap : 65536;
		uint8_t *np;

		while (ncap < t->len + len)
			ncap *= 2;
		np = realloc(t->p, ncap);
		if (!np)
			return -ENOMEM;
		t->p = np;
		t->cap = ncap;
	}
	if (src)
		memcpy(t->p + t->len, src, len);
	else
		memset(t->p + t->len, 0, len);
	t->len += len;
	return 0;
}

static int tail_align(struct tail *t, uint64_t base, size_t align)
{
	size_t pad = (size_t)((align - (base + t->len) % align) % align);

	return tail_put(t, NULL, pad);
}

static int read_at(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return -EBADMSG;
		done += (size_t)n;
	}
	return 0;
}

static int copy_file(int in_fd, int out_fd, uint64_t size)
{
	uint64_t off = 0;
	void *buf = malloc(COPY_CHUNK);
	int err = 0;

	if (!buf)
		return -ENOMEM;
	while (!err && off < size) {
		size_t len = size - off < COPY_CHUNK ? (size_t)(size - off) : COPY_CHUNK;

		err = read_at(in_fd, buf, len, off);
		if (!err)
			err = pa_write_all(out_fd, buf, len);
		off += len;
	}
	free(buf);
	return err;
}

/* The executable section holding addr, or 0. */
static uint16_t text_section(const Elf64_Shdr *sh, size_t n, uint64_t addr)
{
	size_t i;

	for (i = 1; i < n; i++)
		if ((sh[i].sh_flags & SHF_EXECINSTR) && sh[i].sh_type == SHT_PROGBITS &&
		    addr >= sh[i].sh_addr && addr - sh[i].sh_addr < sh[i].sh_size)
			return (uint16_t)i;
	return 0;
}

/* .symtab (a null symbol, then the functions) and .strtab into t. */
static int put_symbols(struct tail *t, const Elf64_Shdr *sh, size_t nsh,
		       const struct elfadd_sym *syms, size_t n, struct tail *str, size_t *count)
{
	Elf64_Sym s = {0};
	size_t i;
	int err;

	*count = 1;
	err = tail_put(t, &s, sizeof(s));
	if (!err)
		err = tail_put(str, "", 1);
	for (i = 0; !err && i < n; i++) {
		size_t len = strlen(syms[i].name);

		s = (Elf64_Sym){
			.st_name = (Elf64_Word)str->len,
			.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
			.st_shndx = text_section(sh, nsh, syms[i].start),
			.st_value = syms[i].start,
			.st_size = syms[i].size,
		};
		if (!len || !s.st_shndx)
			continue;
		if (str->len + len + 1 > UINT32_MAX)
			return -EFBIG;
		err = tail_put(str, syms[i].name, len + 1);
		if (!err)
			err = tail_put(t, &s, sizeof(s));
		(*count)++;
	}
	return err;
}

int elfadd_write(int in_fd, int out_fd, const struct elfadd_sym *syms, size_t n, const uint8_t *bid,
		 size_t bid_size)
{
	struct tail t = {0}, str = {0};
	Elf64_Shdr *sh = NULL, add[NEW_SECS] = {{0}};
	char *shstr = NULL;
	Elf64_Ehdr eh;
	Elf64_Nhdr nh;
	struct stat sb;
	uint64_t size, base, old_strsz;
	size_t nsym, i;
	int err;

	if (!bid_size || bid_size > 20)
		return -EINVAL;
	if (fstat(in_fd, &sb))
		return -errno;
	size = (uint64_t)sb.st_size;
	err = read_at(in_fd, &eh, sizeof(eh), 0);
	if (err)
		return err;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG))
		return -EBADMSG;
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || !eh.e_shnum || eh.e_shstrndx >= eh.e_shnum ||
	    eh.e_shstrndx == SHN_UNDEF || eh.e_shnum > SHN_LORESERVE - NEW_SECS)
		return -ENOTSUP;
	if (eh.e_shoff > size || (uint64_t)eh.e_shnum * sizeof(*sh) > size - eh.e_shoff)
		return -EBADMSG;
	sh = malloc((eh.e_shnum + NEW_SECS) * sizeof(*sh));
	if (!sh)
		return -ENOMEM;
	err = read_at(in_fd, sh, eh.e_shnum * sizeof(*sh), eh.e_shoff);
	if (err)
		goto out;
	old_strsz = sh[eh.e_shstrndx].sh_size;
	if (sh[eh.e_shstrndx].sh_type != SHT_STRTAB || sh[eh.e_shstrndx].sh_offset > size ||
	    old_strsz > size - sh[eh.e_shstrndx].sh_offset) {
		err = -EBADMSG;
		goto out;
	}
	shstr = malloc(old_strsz + sizeof(new_names));
	if (!shstr) {
		err = -ENOMEM;
		goto out;
	}
	err = read_at(in_fd, shstr, old_strsz, sh[eh.e_shstrndx].sh_offset);
	if (err)
		goto out;
	memcpy(shstr + old_strsz, new_names, sizeof(new_names));

	/* The appended part starts at the first 8-byte boundary past the file. */
	base = (size + 7) & ~7ULL;
	add[0] = (Elf64_Shdr){.sh_name = (Elf64_Word)old_strsz + N_SYMTAB,
			      .sh_type = SHT_SYMTAB,
			      .sh_offset = base,
			      .sh_link = eh.e_shnum + 1,
			      .sh_info = 1, /* the first global */
			      .sh_addralign = 8,
			      .sh_entsize = sizeof(Elf64_Sym)};
	err = put_symbols(&t, sh, eh.e_shnum, syms, n, &str, &nsym);
	if (err)
		goto out;
	add[0].sh_size = nsym * sizeof(Elf64_Sym);
	add[1] = (Elf64_Shdr){.sh_name = (Elf64_Word)old_strsz + N_STRTAB,
			      .sh_type = SHT_STRTAB,
			      .sh_offset = base + t.len,
			      .sh_size = str.len,
			      .sh_addralign = 1};
	err = tail_put(&t, str.p, str.len);
	if (!err)
		err = tail_align(&t, base, 4);
	if (err)
		goto out;
	nh = (Elf64_Nhdr){
		.n_namesz = 4, .n_descsz = (Elf64_Word)bid_size, .n_type = NT_GNU_BUILD_ID};
	add[2] = (Elf64_Shdr){.sh_name = (Elf64_Word)old_strsz + N_NOTE,
			      .sh_type = SHT_NOTE,
			      .sh_offset = base + t.len,
			      .sh_size = sizeof(nh) + 4 + ((bid_size + 3) & ~3u),
			      .sh_addralign = 4};
	err = tail_put(&t, &nh, sizeof(nh));
	if (!err)
		err = tail_put(&t, "GNU", 4);
	if (!err)
		err = tail_put(&t, bid, bid_size);
	if (!err)
		err = tail_align(&t, base, 4);
	add[3] = (Elf64_Shdr){.sh_name = (Elf64_Word)old_strsz + N_SHSTRTAB,
			      .sh_type = SHT_STRTAB,
			      .sh_offset = base + t.len,
			      .sh_size = old_strsz + sizeof(new_names),
			      .sh_addralign = 1};
	if (!err)
		err = tail_put(&t, shstr, old_strsz + sizeof(new_names));
	if (!err)
		err = tail_align(&t, base, 8);
	if (err)
		goto out;
	eh.e_shoff = base + t.len;
	for (i = 0; i < NEW_SECS; i++)
		sh[eh.e_shnum + i] = add[i];
	err = tail_put(&t, sh, (eh.e_shnum + NEW_SECS) * sizeof(*sh));
	if (err)
		goto out;
	eh.e_shstrndx = eh.e_shnum + NEW_SECS - 1;
	eh.e_shnum += NEW_SECS;

	err = copy_file(in_fd, out_fd, size);
	if (!err && base > size)
		err = pa_write_all(out_fd, "\0\0\0\0\0\0\0", (size_t)(base - size));
	if (!err)
		err = pa_write_all(out_fd, t.p, t.len);
	if (!err && pwrite(out_fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh))
		err = errno ? -errno : -EIO;
out:
	free(t.p);
	free(str.p);
	free(shstr);
	free(sh);
	return err;
}
