// SPDX-License-Identifier: Apache-2.0
/* GNU build-ids: the NT_GNU_BUILD_ID note of ELF files and of the running kernel. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/buildid.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

static int bid_copy(uint8_t out[BID_MAX], const void *desc, size_t size)
{
	if (!size)
		return 0;
	if (size > BID_MAX)
		size = BID_MAX;
	memset(out, 0, BID_MAX);
	memcpy(out, desc, size);
	return (int)size;
}

/* Walk one note-typed Elf_Data; 0 when it holds no GNU build-id. */
static int bid_from_data(Elf_Data *data, uint8_t out[BID_MAX])
{
	size_t off = 0, name_off, desc_off, next;
	GElf_Nhdr nhdr;

	while ((next = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
		const char *base = data->d_buf;

		if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 &&
		    !memcmp(base + name_off, "GNU", 4))
			return bid_copy(out, base + desc_off, nhdr.n_descsz);
		off = next;
	}
	return 0;
}

static int bid_from_elf(Elf *elf, uint8_t out[BID_MAX])
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	size_t nph, i;
	int ret;

	/* Sections first: cheap, and present in everything but sstripped files. */
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (data && (ret = bid_from_data(data, out)) > 0)
			return ret;
	}
	if (elf_getphdrnum(elf, &nph))
		return 0;
	for (i = 0; i < nph; i++) {
		GElf_Phdr ph;
		Elf_Data *data;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		data = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
					    ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		if (data && (ret = bid_from_data(data, out)) > 0)
			return ret;
	}
	return 0;
}

int bid_read_fd(int fd, uint8_t out[BID_MAX])
{
	Elf *elf;
	int ret;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -ENOEXEC;
	if (elf_kind(elf) != ELF_K_ELF)
		ret = -ENOEXEC;
	else
		ret = bid_from_elf(elf, out);
	elf_end(elf);
	return ret;
}

int bid_read_path(const char *path, uint8_t out[BID_MAX])
{
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = bid_read_fd(fd, out);
	close(fd);
	return ret;
}

/* /sys/kernel/notes is the kernel's raw note section: 4-byte aligned Elf_Nhdr records. */
int bid_read_kernel(uint8_t out[BID_MAX])
{
	unsigned char buf[4096];
	size_t len = 0, off = 0;
	ssize_t n;
	int fd;

	fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len < sizeof(buf) && (n = read(fd, buf + len, sizeof(buf) - len)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			close(fd);
			return (int)n;
		}
		len += (size_t)n;
	}
	close(fd);

	while (off + sizeof(Elf32_Nhdr) <= len) {
		Elf32_Nhdr nh;
		size_t name, desc;

		memcpy(&nh, buf + off, sizeof(nh));
		name = off + sizeof(nh);
		desc = name + ((nh.n_namesz + 3) & ~3u);
		if (desc + nh.n_descsz > len)
			break;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp(buf + name, "GNU", 4))
			return bid_copy(out, buf + desc, nh.n_descsz);
		off = desc + ((nh.n_descsz + 3) & ~3u);
	}
	return 0;
}

void bid_to_hex(char *out, const uint8_t *bid, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < size; i++) {
		out[2 * i] = hex[bid[i] >> 4];
		out[2 * i + 1] = hex[bid[i] & 15];
	}
	out[2 * size] = '\0';
}
