// SPDX-License-Identifier: Apache-2.0
/*
 * debuginfo + symtab: stripped binaries get their names back from MiniDebugInfo, from a
 * debug file under a .build-id tree and through .gnu_debuglink, and wrong candidates
 * (other build-id, bad CRC, corrupt xz) are refused without breaking the load.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "debug_fixture.h"
#include "symbolize/debuginfo.h"
#include "symbolize/symtab.h"
#include "unit.h"

static char fix[64];
static uint64_t hidden, outer;

static const char *name_at(const char *file, const char *debug, uint64_t addr)
{
	static char buf[128];
	struct symtab *st = symtab_load_elf_debug(file, debug);
	const struct sym *s;

	if (!st)
		return "(load failed)";
	s = symtab_lookup(st, addr);
	snprintf(buf, sizeof(buf), "%s", s ? s->name : "(none)");
	symtab_free(st);
	return buf;
}

static char *fpath(const char *rel)
{
	static char buf[4][PATH_MAX];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", fix, rel);
	return buf[i];
}

static void test_minidebuginfo(void)
{
	CHECK(hidden != 0);
	/* Stripped: the local function is gone. */
	CHECK_STR(name_at(fpath("stripped"), NULL, hidden), "(none)");
	/* .gnu_debugdata brings it back, and outer_fn (global, not exported) too. */
	CHECK_STR(name_at(fpath("mini/prog"), NULL, hidden), "hidden_worker");
	CHECK_STR(name_at(fpath("mini/prog"), NULL, outer), "outer_fn");
	/* A truncated xz payload is ignored: the file still loads. */
	CHECK_STR(name_at(fpath("mini/bad"), NULL, hidden), "(none)");
}

static void test_build_id_dir(void)
{
	struct dbg_opts o = {.debug_dirs = fpath("dbg"), .debuginfod_urls = ""};
	struct dbg_finder *f = dbg_new(&o);
	char *d, want[PATH_MAX], bid[64] = "";
	FILE *b = fopen(fpath("bid"), "r");

	CHECK(b && fscanf(b, "%63s", bid) == 1);
	if (b)
		fclose(b);
	snprintf(want, sizeof(want), "%s/dbg/.build-id/%.2s/%s.debug", fix, bid, bid + 2);
	d = dbg_find(f, fpath("stripped"), NULL, 0);
	CHECK_STR(d, want);
	CHECK_STR(name_at(fpath("stripped"), d, hidden), "hidden_worker");
	free(d);
	dbg_free(f);

	/* Right path, another program's debug file: refused by its build-id. */
	o.debug_dirs = fpath("wrong");
	f = dbg_new(&o);
	errno = 0;
	d = dbg_find(f, fpath("stripped"), NULL, 0);
	CHECK(!d && errno == ENOENT);
	free(d);
	/* Several roots: the first one that has it wins. */
	dbg_free(f);
	snprintf(want, sizeof(want), "%s/wrong:%s/dbg", fix, fix);
	o.debug_dirs = want;
	f = dbg_new(&o);
	d = dbg_find(f, fpath("stripped"), NULL, 0);
	CHECK(d && strstr(d, "/dbg/.build-id/"));
	free(d);
	dbg_free(f);
}

static void test_debuglink(void)
{
	struct dbg_opts o = {.debug_dirs = fpath("root"), .debuginfod_urls = ""};
	struct dbg_finder *f = dbg_new(&o);
	char name[256], *d;
	uint32_t crc = 0, fcrc = 1;

	CHECK(dbg_read_debuglink(fpath("link/prog"), name, sizeof(name), &crc) == 0);
	CHECK_STR(name, "prog.debug");
	CHECK(dbg_file_crc(fpath("link/.debug/prog.debug"), &fcrc) == 0);
	CHECK_EQ_U64(crc, fcrc);
	CHECK(dbg_read_debuglink(fpath("prog"), name, sizeof(name), &crc) == -ENOENT);

	d = dbg_find(f, fpath("link/prog"), NULL, 0);
	CHECK_STR(d, fpath("link/.debug/prog.debug"));
	CHECK_STR(name_at(fpath("link/prog"), d, hidden), "hidden_worker");
	free(d);
	d = dbg_find(f, fpath("same/prog"), NULL, 0);
	CHECK_STR(d, fpath("same/prog.debug"));
	free(d);
	/* /usr/lib/debug/<dir of the file>/name, with the root moved to the fixture. */
	d = dbg_find(f, fpath("under/prog"), NULL, 0);
	CHECK(d && strstr(d, "/root/") && strstr(d, "/under/prog.debug"));
	free(d);
	/* The debug file changed after linking: its CRC no longer matches. */
	errno = 0;
	d = dbg_find(f, fpath("crc/prog"), NULL, 0);
	CHECK(!d && errno == ENOENT);
	free(d);
	dbg_free(f);
}

static void test_offline_never_asks(void)
{
	struct dbg_opts o = {.debug_dirs = fpath("none"), .debuginfod_urls = ""};
	struct dbg_finder *f = dbg_new(&o);
	uint8_t bid[20] = {1, 2, 3};

	/* No URLs: nothing to find, and no library loaded to find it. */
	CHECK(!dbg_find(f, NULL, bid, sizeof(bid)));
	CHECK(!dbg_find_executable(f, bid, sizeof(bid)));
	dbg_free(f);
}

/*
 * A minimal x86-64 ELF file: one function "f" at 0x1000 in .symtab, and a .gnu_debugdata
 * section of size bytes of zeros (not xz), left sparse so the file costs no disk.  0 or -1.
 */
static int write_debugdata_elf(const char *path, uint64_t size)
{
	static const char shnames[] = "\0.text\0.symtab\0.strtab\0.gnu_debugdata\0.shstrtab";
	struct {
		Elf64_Ehdr eh;
		Elf64_Shdr sh[6];
		Elf64_Sym sym[2];
		char strtab[4];
		char shnames[sizeof(shnames)];
	} f = {0};
	const uint64_t data_off = 4096;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int ok;

	memcpy(f.eh.e_ident, ELFMAG, SELFMAG);
	f.eh.e_ident[EI_CLASS] = ELFCLASS64;
	f.eh.e_ident[EI_DATA] = ELFDATA2LSB;
	f.eh.e_ident[EI_VERSION] = EV_CURRENT;
	f.eh.e_type = ET_DYN;
	f.eh.e_machine = EM_X86_64;
	f.eh.e_version = EV_CURRENT;
	f.eh.e_ehsize = sizeof(f.eh);
	f.eh.e_shoff = offsetof(typeof(f), sh);
	f.eh.e_shentsize = sizeof(Elf64_Shdr);
	f.eh.e_shnum = 6;
	f.eh.e_shstrndx = 5;
	f.sh[1] = (Elf64_Shdr){.sh_name = 1,
			       .sh_type = SHT_NOBITS,
			       .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
			       .sh_addr = 0x1000,
			       .sh_offset = data_off,
			       .sh_size = 0x100,
			       .sh_addralign = 16};
	f.sh[2] = (Elf64_Shdr){.sh_name = 7,
			       .sh_type = SHT_SYMTAB,
			       .sh_offset = offsetof(typeof(f), sym),
			       .sh_size = sizeof(f.sym),
			       .sh_link = 3,
			       .sh_info = 1,
			       .sh_addralign = 8,
			       .sh_entsize = sizeof(Elf64_Sym)};
	f.sh[3] = (Elf64_Shdr){.sh_name = 15,
			       .sh_type = SHT_STRTAB,
			       .sh_offset = offsetof(typeof(f), strtab),
			       .sh_size = sizeof(f.strtab),
			       .sh_addralign = 1};
	f.sh[4] = (Elf64_Shdr){.sh_name = 23,
			       .sh_type = SHT_PROGBITS,
			       .sh_offset = data_off,
			       .sh_size = size,
			       .sh_addralign = 1};
	f.sh[5] = (Elf64_Shdr){.sh_name = 38,
			       .sh_type = SHT_STRTAB,
			       .sh_offset = offsetof(typeof(f), shnames),
			       .sh_size = sizeof(shnames),
			       .sh_addralign = 1};
	f.sym[1] = (Elf64_Sym){.st_name = 1,
			       .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
			       .st_shndx = 1,
			       .st_value = 0x1000,
			       .st_size = 0x10};
	memcpy(f.strtab, "\0f", 3);
	memcpy(f.shnames, shnames, sizeof(shnames));
	ok = fd >= 0 && write(fd, &f, sizeof(f)) == (ssize_t)sizeof(f) &&
	     ftruncate(fd, (off_t)(data_off + size)) == 0;
	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

/*
 * A 512 MiB .gnu_debugdata that is not even xz: the output buffer used to be allocated
 * at 4x the input (2 GiB) before the stream was looked at, and under a 1.25 GiB address
 * space limit the whole load failed with ENOMEM.  Now the buffer starts small and the
 * file loads (the bad payload ignored).
 */
static void test_minidebuginfo_size_untrusted(void)
{
	char path[PATH_MAX];
	int status = -1;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/huge_debugdata", fix);
	CHECK(write_debugdata_elf(path, 512ull << 20) == 0);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct rlimit lim = {1280ull << 20, 1280ull << 20};
		struct symtab *st;

#ifndef __SANITIZE_ADDRESS__ /* ASan's shadow needs terabytes of address space */
		setrlimit(RLIMIT_AS, &lim);
#else
		(void)lim;
#endif
		alarm(20);
		st = symtab_load_elf(path);
		if (!st)
			printf("#   symtab_load_elf: %s\n", strerror(errno));
		else if (!symtab_lookup(st, 0x1004) || strcmp(symtab_lookup(st, 0x1004)->name, "f"))
			printf("#   no symbol f at 0x1004\n");
		fflush(stdout);
		_exit(st && symtab_lookup(st, 0x1004) ? 0 : 1);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	unlink(path);
}

/*
 * An x86-64 ELF file with nsyms FUNC symbols at 0x1000 in .symtab, all naming one string
 * of name_len 'x's.  0 or -1.
 */
static int write_shared_name_elf(const char *path, size_t nsyms, size_t name_len)
{
	static const char shnames[] = "\0.text\0.symtab\0.strtab\0.shstrtab";
	Elf64_Ehdr eh = {.e_type = ET_DYN, .e_machine = EM_X86_64, .e_version = EV_CURRENT};
	Elf64_Shdr sh[5] = {{0}};
	Elf64_Sym *syms = calloc(nsyms + 1, sizeof(*syms));
	char *strtab = malloc(name_len + 2);
	uint64_t off = sizeof(eh) + sizeof(sh);
	FILE *f = fopen(path, "w");
	int ok;

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	eh.e_shoff = sizeof(eh);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = 5;
	eh.e_shstrndx = 4;
	sh[1] = (Elf64_Shdr){.sh_name = 1,
			     .sh_type = SHT_NOBITS,
			     .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
			     .sh_addr = 0x1000,
			     .sh_offset = off,
			     .sh_size = 0x100,
			     .sh_addralign = 16};
	sh[2] = (Elf64_Shdr){.sh_name = 7,
			     .sh_type = SHT_SYMTAB,
			     .sh_offset = off,
			     .sh_size = (nsyms + 1) * sizeof(*syms),
			     .sh_link = 3,
			     .sh_info = 1,
			     .sh_addralign = 8,
			     .sh_entsize = sizeof(*syms)};
	off += sh[2].sh_size;
	sh[3] = (Elf64_Shdr){.sh_name = 15,
			     .sh_type = SHT_STRTAB,
			     .sh_offset = off,
			     .sh_size = name_len + 2,
			     .sh_addralign = 1};
	off += sh[3].sh_size;
	sh[4] = (Elf64_Shdr){.sh_name = 23,
			     .sh_type = SHT_STRTAB,
			     .sh_offset = off,
			     .sh_size = sizeof(shnames),
			     .sh_addralign = 1};
	for (size_t i = 1; syms && i <= nsyms; i++)
		syms[i] = (Elf64_Sym){.st_name = 1,
				      .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
				      .st_shndx = 1,
				      .st_value = 0x1000,
				      .st_size = 0x10};
	if (strtab) {
		strtab[0] = 0;
		memset(strtab + 1, 'x', name_len);
		strtab[name_len + 1] = 0;
	}
	ok = f && syms && strtab && fwrite(&eh, sizeof(eh), 1, f) == 1 &&
	     fwrite(sh, sizeof(sh), 1, f) == 1 && fwrite(syms, sh[2].sh_size, 1, f) == 1 &&
	     fwrite(strtab, sh[3].sh_size, 1, f) == 1 &&
	     fwrite(shnames, sizeof(shnames), 1, f) == 1;
	if (f && fclose(f))
		ok = 0;
	free(syms);
	free(strtab);
	return ok ? 0 : -1;
}

/*
 * 20000 symbols sharing one 64 KiB name (a 1.3 MB file) used to copy it into the pool
 * 20000 times: 1.3 GB, ENOMEM under a 1 GiB address space limit, and a sort comparing
 * the long names.  Names from one file now stop at a few times its size, and it loads.
 */
static void test_symtab_shared_long_name(void)
{
	char path[PATH_MAX];
	int status = -1;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/shared_name", fix);
	CHECK(write_shared_name_elf(path, 20000, 64 * 1024) == 0);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct rlimit lim = {1ull << 30, 1ull << 30};
		const struct sym *s;
		struct symtab *st;

#ifndef __SANITIZE_ADDRESS__ /* ASan's shadow needs terabytes of address space */
		setrlimit(RLIMIT_AS, &lim);
#else
		(void)lim;
#endif
		alarm(20);
		st = symtab_load_elf(path);
		s = st ? symtab_lookup(st, 0x1004) : NULL;
		if (!st)
			printf("#   symtab_load_elf: %s\n", strerror(errno));
		else if (!s || strlen(s->name) != 64 * 1024)
			printf("#   no 64 KiB name at 0x1004\n");
		fflush(stdout);
		_exit(s && strlen(s->name) == 64 * 1024 ? 0 : 1);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	if (WIFSIGNALED(status))
		printf("#   killed by signal %d\n", WTERMSIG(status));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	unlink(path);
}

int main(void)
{
	if (fixture_build(fix, sizeof(fix))) {
		printf("not ok 1 - fixture build failed (see %s/mk.log)\n1..1\n", fix);
		return 1;
	}
	hidden = fixture_sym(fix, "hidden_worker");
	outer = fixture_sym(fix, "outer_fn");
	RUN(test_minidebuginfo);
	RUN(test_build_id_dir);
	RUN(test_debuglink);
	RUN(test_offline_never_asks);
	RUN(test_minidebuginfo_size_untrusted);
	RUN(test_symtab_shared_long_name);
	if (!unit_failed)
		fixture_remove(fix);
	return unit_done();
}
