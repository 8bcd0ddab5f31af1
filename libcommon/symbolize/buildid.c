// SPDX-License-Identifier: Apache-2.0
/*
 * GNU build-ids: the NT_GNU_BUILD_ID note of ELF files and of the running kernel, and
 * the build-id stripped Go binaries are given (see buildid.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

#include "base/hash.h"
#include "symbolize/buildid.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif
#define NT_GO_BUILD_ID 4 /* owner "Go": cmd/link's build ID, a string */

/* What a walk of the notes found besides a GNU build-id. */
struct bid_scan {
	bool go;     /* a Go build ID note */
	uint64_t gh; /* its hash */
	bool symtab; /* a .symtab */
};

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
static int bid_from_data(Elf_Data *data, uint8_t out[BID_MAX], struct bid_scan *sc)
{
	size_t off = 0, name_off, desc_off, next;
	GElf_Nhdr nhdr;

	while ((next = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
		const char *base = data->d_buf;

		if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 &&
		    !memcmp(base + name_off, "GNU", 4))
			return bid_copy(out, base + desc_off, nhdr.n_descsz);
		/* cmd/link names its note "Go\0\0", namesz 4. */
		if (nhdr.n_type == NT_GO_BUILD_ID && nhdr.n_namesz == 4 &&
		    !memcmp(base + name_off, "Go\0\0", 4) && !sc->go && nhdr.n_descsz) {
			size_t i;

			sc->go = true;
			sc->gh = 0x60b1d;
			for (i = 0; i < nhdr.n_descsz; i++)
				sc->gh = hash_mix(sc->gh, (uint8_t)base[desc_off + i]);
		}
		off = next;
	}
	return 0;
}

/*
 * 20 bytes from the Go build ID's hash: "g0" and three 64-bit words of mixing, so two
 * binaries share one only if their Go build IDs (content hashes) do.
 */
static int bid_derive_go(const struct bid_scan *sc, uint8_t out[BID_MAX])
{
	uint64_t w[3];
	int i;

	w[0] = hash_mix(sc->gh, 1);
	for (i = 1; i < 3; i++)
		w[i] = hash_mix(w[i - 1], (uint64_t)i + 1);
	out[0] = 'g';
	out[1] = '0';
	memcpy(out + 2, w, 18);
	return BID_MAX;
}

static int bid_from_elf(Elf *elf, uint8_t out[BID_MAX], bool *derived)
{
	struct bid_scan sc = {0};
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	size_t nph, i;
	int ret;

	*derived = false;
	/* Sections first: cheap, and present in everything but sstripped files. */
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;

		if (!gelf_getshdr(scn, &shdr))
			continue;
		if (shdr.sh_type == SHT_SYMTAB)
			sc.symtab = true;
		if (shdr.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (data && (ret = bid_from_data(data, out, &sc)) > 0)
			return ret;
	}
	if (elf_getphdrnum(elf, &nph))
		nph = 0;
	for (i = 0; i < nph; i++) {
		GElf_Phdr ph;
		Elf_Data *data;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		data = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
					    ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		if (data && (ret = bid_from_data(data, out, &sc)) > 0)
			return ret;
	}
	if (!sc.go || sc.symtab)
		return 0;
	*derived = true;
	return bid_derive_go(&sc, out);
}

int bid_read_fd(int fd, uint8_t out[BID_MAX])
{
	bool derived;

	return bid_read_fd_derived(fd, out, &derived);
}

int bid_read_fd_derived(int fd, uint8_t out[BID_MAX], bool *derived)
{
	Elf *elf;
	int ret;

	*derived = false;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -ENOEXEC;
	if (elf_kind(elf) != ELF_K_ELF)
		ret = -ENOEXEC;
	else
		ret = bid_from_elf(elf, out, derived);
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
