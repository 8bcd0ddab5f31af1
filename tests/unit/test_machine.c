// SPDX-License-Identifier: Apache-2.0
/*
 * machine: hand-built MMAP2/COMM/FORK/EXIT/BUILD_ID records and samples, resolved
 * against this test binary (a real file with a real build-id) and a kallsyms fixture.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/buildid.h"
#include "debug_fixture.h"
#include "perfdata/event.h"
#include "symbolize/dwarf_lines.h"
#include "profile/machine.h"
#include "symbolize/dso.h"
#include "base/procfs.h"
#include "symbolize/symtab.h"
#include "unit.h"

#define K_BASE 0xffffffff81000000ULL

__attribute__((noinline)) int machine_test_target(int x)
{
	volatile int acc = 0;
	int i;

	for (i = 0; i < x; i++)
		acc += i * 7;
	return acc;
}

/* Records are built in 8-byte aligned storage, as a reader would hand them out. */
struct rec {
	uint64_t buf[128];
	struct pd_event ev;
};

static struct perf_event_header *rec_init(struct rec *r, uint32_t type, uint16_t misc, size_t size)
{
	struct perf_event_header *h = (struct perf_event_header *)r->buf;

	memset(r, 0, sizeof(*r));
	h->type = type;
	h->misc = misc;
	h->size = (uint16_t)((size + 7) & ~7UL);
	r->ev.hdr = h;
	return h;
}

static int mmap2(struct machine *m, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		 const char *path, const uint8_t *bid, size_t bid_size)
{
	struct rec r;
	size_t plen = strlen(path) + 1;
	struct perf_record_mmap2 *e =
		(void *)rec_init(&r, PERF_RECORD_MMAP2,
				 PERF_RECORD_MISC_USER | (bid ? PERF_RECORD_MISC_MMAP_BUILD_ID : 0),
				 sizeof(*e) + plen);

	e->pid = e->tid = pid;
	e->start = start;
	e->len = len;
	e->pgoff = pgoff;
	if (bid) {
		e->build_id_size = (uint8_t)bid_size;
		memcpy(e->build_id, bid, bid_size);
	}
	e->prot = 5;  /* PROT_READ|PROT_EXEC */
	e->flags = 2; /* MAP_PRIVATE */
	memcpy(e->filename, path, plen);
	return machine_process_event(m, &r.ev);
}

static int kmmap(struct machine *m, uint64_t start, uint64_t len, uint64_t pgoff, const char *name)
{
	struct rec r;
	size_t plen = strlen(name) + 1;
	struct perf_record_mmap *e =
		(void *)rec_init(&r, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL, sizeof(*e) + plen);

	e->pid = (uint32_t)-1;
	e->start = start;
	e->len = len;
	e->pgoff = pgoff;
	memcpy(e->filename, name, plen);
	return machine_process_event(m, &r.ev);
}

static int comm(struct machine *m, uint32_t pid, uint32_t tid, const char *name, bool exec)
{
	struct rec r;
	size_t nlen = strlen(name) + 1;
	struct perf_record_comm *e = (void *)rec_init(
		&r, PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0, sizeof(*e) + nlen);

	e->pid = pid;
	e->tid = tid;
	memcpy(e->comm, name, nlen);
	return machine_process_event(m, &r.ev);
}

static int fork_exit(struct machine *m, uint32_t type, uint32_t pid, uint32_t ppid, uint32_t tid,
		     uint32_t ptid)
{
	struct rec r;
	struct perf_record_fork *e = (void *)rec_init(&r, type, 0, sizeof(*e));

	e->pid = pid;
	e->ppid = ppid;
	e->tid = tid;
	e->ptid = ptid;
	return machine_process_event(m, &r.ev);
}

static int build_id_rec(struct machine *m, const char *path, const uint8_t *bid, size_t size)
{
	struct rec r;
	size_t plen = strlen(path) + 1;
	struct perf_record_header_build_id *e = (void *)rec_init(
		&r, PERF_RECORD_HEADER_BUILD_ID,
		PERF_RECORD_MISC_USER | PERF_RECORD_MISC_BUILD_ID_SIZE, sizeof(*e) + plen);

	e->pid = -1;
	memcpy(e->data, bid, size);
	e->size = (uint8_t)size;
	memcpy(e->filename, path, plen);
	return machine_process_event(m, &r.ev);
}

/* This binary's executable mapping, to replay as if process `pid` had it. */
static struct proc_map self_map;
static char self_exe[4096];
static uint8_t self_bid[BID_MAX];
static int self_bid_size;
static uint64_t target_ip;

static int setup_self(void)
{
	struct proc_map *maps;
	int n, i;

	target_ip = (uint64_t)(uintptr_t)&machine_test_target + 5;
	n = proc_read_maps(getpid(), true, &maps);
	for (i = 0; i < n; i++) {
		if (target_ip >= maps[i].start && target_ip < maps[i].end) {
			self_map = maps[i];
			snprintf(self_exe, sizeof(self_exe), "%s", maps[i].path);
		}
	}
	proc_maps_free(maps, n > 0 ? (size_t)n : 0);
	self_bid_size = bid_read_path(self_exe, self_bid);
	return self_map.end && self_bid_size > 0 ? 0 : -1;
}

static const char *kallsyms_fixture(bool zeroed)
{
	static char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/pa-test-machine-%d-%d", (int)getpid(), zeroed);
	f = fopen(path, "w");
	if (!f)
		return NULL;
	if (zeroed) {
		fputs("0000000000000000 T _text\n0000000000000000 T k_entry\n", f);
	} else {
		fprintf(f, "%llx T _text\n", K_BASE);
		fprintf(f, "%llx T k_entry\n", K_BASE + 0x100);
		fprintf(f, "%llx T k_syscall\n", K_BASE + 0x201);
		fprintf(f, "%llx t k_modfn\t[mymod]\n", 0xffffffffc0001000ULL);
	}
	fclose(f);
	return path;
}

static size_t resolve(struct machine *m, uint32_t pid, uint32_t tid, const uint64_t *ips, size_t nr,
		      struct frame *fr, size_t max)
{
	struct pd_sample s = {.pid = pid, .tid = tid, .ips = ips, .nr_ips = nr};

	s.ip = nr ? ips[nr > 1 ? 1 : 0] : 0;
	s.misc = PERF_RECORD_MISC_USER;
	return machine_resolve(m, &s, fr, max);
}

static struct machine *new_machine(const char *kallsyms)
{
	struct machine_opts o = {
		.kallsyms = kallsyms, .no_kernel_syms = !kallsyms, .buildid_dir = "/nonexistent"};

	return machine_new(&o);
}

static void test_callchain_kernel_and_user(void)
{
	const char *ks = kallsyms_fixture(false);
	struct machine *m = new_machine(ks);
	uint64_t ips[] = {(uint64_t)PERF_CONTEXT_KERNEL,
			  K_BASE + 0x105, /* leaf: exact */
			  K_BASE + 0x201, /* return address: ip-1 is still k_entry */
			  0xffffffffc0001010ULL,
			  (uint64_t)PERF_CONTEXT_USER,
			  target_ip,
			  0x10, /* nothing mapped there */
			  (uint64_t)-4000 /* an unknown marker is skipped */};
	struct frame fr[16];
	char buf[128];
	size_t n;

	CHECK(m != NULL);
	if (!m)
		return;
	CHECK(kmmap(m, K_BASE, 0x1000000, K_BASE, "[kernel.kallsyms]_text") == 0);
	CHECK(mmap2(m, 100, self_map.start, self_map.end - self_map.start, self_map.pgoff, self_exe,
		    NULL, 0) == 0);
	CHECK(comm(m, 100, 100, "worker", false) == 0);
	n = resolve(m, 100, 100, ips, sizeof(ips) / sizeof(ips[0]), fr, 16);
	CHECK_EQ_U64(n, 5);
	if (n == 5) {
		CHECK(fr[0].kernel && fr[1].kernel && fr[2].kernel && !fr[3].kernel);
		CHECK_STR(fr[0].sym, "k_entry");
		CHECK_EQ_U64(fr[0].sym_off, 5);
		CHECK_STR(fr[1].sym, "k_entry");
		CHECK_STR(fr[0].dso_name, "[kernel.kallsyms]");
		CHECK_STR(fr[2].sym, "k_modfn");
		CHECK_STR(fr[2].dso_name, "[mymod]");
		CHECK_STR(fr[3].sym, "machine_test_target");
		CHECK_EQ_U64(fr[3].sym_off, 5);
		CHECK_EQ_U64(fr[3].ip, target_ip);
		CHECK_STR(dso_path(fr[3].dso), self_exe);
		CHECK(fr[4].dso == NULL && fr[4].sym == NULL);
		CHECK_STR(frame_name(&fr[4], buf, sizeof(buf)), "[unknown]");
	}
	/* max bounds the output. */
	CHECK_EQ_U64(resolve(m, 100, 100, ips, sizeof(ips) / sizeof(ips[0]), fr, 2), 2);
	CHECK_STR(machine_comm(m, 100, 100), "worker");
	CHECK(machine_warning(m) == NULL);

	/* An unknown process: kernel frames still resolve, user frames are [unknown]. */
	n = resolve(m, 999, 999, ips, sizeof(ips) / sizeof(ips[0]), fr, 16);
	CHECK_EQ_U64(n, 5);
	CHECK_STR(fr[0].sym, "k_entry");
	CHECK(fr[3].sym == NULL && fr[3].dso == NULL);
	CHECK_STR(machine_comm(m, 999, 1000), ":1000");
	CHECK_STR(machine_comm(m, 0, 0), "swapper");
	machine_free(m);
	unlink(ks);
}

static void test_no_callchain_uses_ip(void)
{
	struct machine *m = new_machine(NULL);
	struct pd_sample s = {.pid = 7, .tid = 7, .ip = target_ip, .misc = PERF_RECORD_MISC_USER};
	struct frame fr[2];
	char buf[64];

	CHECK(mmap2(m, 7, self_map.start, self_map.end - self_map.start, self_map.pgoff, self_exe,
		    NULL, 0) == 0);
	CHECK_EQ_U64(machine_resolve(m, &s, fr, 2), 1);
	CHECK_STR(fr[0].sym, "machine_test_target");
	/* Kernel ip without kallsyms: "[kernel.kallsyms]+0xADDR". */
	s.ip = K_BASE + 0x10;
	s.misc = PERF_RECORD_MISC_KERNEL;
	CHECK_EQ_U64(machine_resolve(m, &s, fr, 2), 1);
	CHECK(fr[0].kernel);
	CHECK_STR(frame_name(&fr[0], buf, sizeof(buf)), "[kernel.kallsyms]+0xffffffff81000010");
	machine_free(m);
}

static void test_fork_exec_exit(void)
{
	struct machine *m = new_machine(NULL);
	uint64_t ips[] = {(uint64_t)PERF_CONTEXT_USER, target_ip};
	struct frame fr[4];

	CHECK(comm(m, 100, 100, "parent", false) == 0);
	CHECK(mmap2(m, 100, self_map.start, self_map.end - self_map.start, self_map.pgoff, self_exe,
		    NULL, 0) == 0);
	/* A thread shares the maps and inherits the comm. */
	CHECK(fork_exit(m, PERF_RECORD_FORK, 100, 100, 101, 100) == 0);
	CHECK_STR(machine_comm(m, 100, 101), "parent");
	CHECK(resolve(m, 100, 101, ips, 2, fr, 4) == 1 && fr[0].sym &&
	      !strcmp(fr[0].sym, "machine_test_target"));
	/* A new process gets a copy. */
	CHECK(fork_exit(m, PERF_RECORD_FORK, 200, 100, 200, 100) == 0);
	CHECK_STR(machine_comm(m, 200, 200), "parent");
	CHECK(resolve(m, 200, 200, ips, 2, fr, 4) == 1 && fr[0].sym &&
	      !strcmp(fr[0].sym, "machine_test_target"));
	/* exec in the child clears only the child's maps. */
	CHECK(comm(m, 200, 200, "child", true) == 0);
	CHECK_STR(machine_comm(m, 200, 200), "child");
	CHECK(resolve(m, 200, 200, ips, 2, fr, 4) == 1 && fr[0].dso == NULL);
	CHECK(resolve(m, 100, 100, ips, 2, fr, 4) == 1 && fr[0].sym &&
	      !strcmp(fr[0].sym, "machine_test_target"));
	/* After EXIT the thread keeps its comm and maps: late samples still resolve. */
	CHECK(fork_exit(m, PERF_RECORD_EXIT, 100, 100, 101, 101) == 0);
	CHECK_STR(machine_comm(m, 100, 101), "parent");
	CHECK(resolve(m, 100, 101, ips, 2, fr, 4) == 1 && fr[0].sym != NULL);
	machine_free(m);
}

/* machine_reap: a process dead at two calls loses its maps and comm; one alive, or
 * dead only since the last call, keeps them. */
static void test_reap_exited(void)
{
	struct machine *m = new_machine(NULL);
	uint64_t ips[] = {(uint64_t)PERF_CONTEXT_USER, target_ip};
	struct frame fr[4];

	CHECK(comm(m, 300, 300, "gone", false) == 0);
	CHECK(mmap2(m, 300, self_map.start, self_map.end - self_map.start, self_map.pgoff, self_exe,
		    NULL, 0) == 0);
	CHECK(comm(m, 400, 400, "alive", false) == 0);
	CHECK(mmap2(m, 400, self_map.start, self_map.end - self_map.start, self_map.pgoff, self_exe,
		    NULL, 0) == 0);
	CHECK(fork_exit(m, PERF_RECORD_EXIT, 300, 300, 300, 300) == 0);
	machine_reap(m);
	/* Dead since this call only: late samples still resolve. */
	CHECK(resolve(m, 300, 300, ips, 2, fr, 4) == 1 && fr[0].sym != NULL);
	CHECK_STR(machine_comm(m, 300, 300), "gone");
	machine_reap(m);
	CHECK(resolve(m, 300, 300, ips, 2, fr, 4) == 1 && fr[0].dso == NULL);
	CHECK_STR(machine_comm(m, 300, 300), ":300");
	CHECK(resolve(m, 400, 400, ips, 2, fr, 4) == 1 && fr[0].sym &&
	      !strcmp(fr[0].sym, "machine_test_target"));
	CHECK_STR(machine_comm(m, 400, 400), "alive");
	/* The pid comes back as a new process: mapped and named again. */
	CHECK(comm(m, 300, 300, "again", false) == 0);
	CHECK(mmap2(m, 300, self_map.start, self_map.end - self_map.start, self_map.pgoff, self_exe,
		    NULL, 0) == 0);
	machine_reap(m);
	machine_reap(m);
	CHECK(resolve(m, 300, 300, ips, 2, fr, 4) == 1 && fr[0].sym != NULL);
	CHECK_STR(machine_comm(m, 300, 300), "again");
	machine_free(m);
}

static void test_overlapping_maps_split(void)
{
	struct machine *m = new_machine(NULL);
	uint64_t ips[] = {(uint64_t)PERF_CONTEXT_USER, 0x1500, 0x2500, 0x3500, 0x5000};
	struct frame fr[8];
	char buf[64];

	CHECK(mmap2(m, 5, 0x1000, 0x4000, 0x10000, "/nonexistent/liba.so", NULL, 0) == 0);
	CHECK(mmap2(m, 5, 0x2000, 0x1000, 0, "/nonexistent/libb.so", NULL, 0) == 0);
	CHECK_EQ_U64(resolve(m, 5, 5, ips, 5, fr, 8), 4);
	CHECK_STR(frame_name(&fr[0], buf, sizeof(buf)), "liba.so+0x10500");
	CHECK_STR(frame_name(&fr[1], buf, sizeof(buf)), "libb.so+0x500");
	/* The right remainder of liba keeps its file offsets. */
	CHECK_STR(frame_name(&fr[2], buf, sizeof(buf)), "liba.so+0x12500");
	CHECK_STR(frame_name(&fr[3], buf, sizeof(buf)), "[unknown]");
	/* Replacing the whole range. */
	CHECK(mmap2(m, 5, 0x1000, 0x4000, 0, "/nonexistent/libc.so", NULL, 0) == 0);
	CHECK_EQ_U64(resolve(m, 5, 5, ips, 4, fr, 8), 3);
	CHECK_STR(frame_name(&fr[1], buf, sizeof(buf)), "libc.so+0x1500");
	CHECK(fr[0].dso == fr[2].dso);
	machine_free(m);
}

static void test_build_id_mismatch_unnamed(void)
{
	struct machine *m = new_machine(NULL);
	uint64_t ips[] = {(uint64_t)PERF_CONTEXT_USER, target_ip};
	uint8_t wrong[BID_MAX];
	const uint8_t *got;
	struct frame fr[2];
	char buf[256], want[256];
	const char *base = strrchr(self_exe, '/') + 1;

	memcpy(wrong, self_bid, sizeof(wrong));
	wrong[0] ^= 0xff;
	CHECK(mmap2(m, 9, self_map.start, self_map.end - self_map.start, self_map.pgoff, self_exe,
		    wrong, (size_t)self_bid_size) == 0);
	CHECK(resolve(m, 9, 9, ips, 2, fr, 2) == 1);
	CHECK(fr[0].sym == NULL);
	snprintf(want, sizeof(want), "%s+0x%llx", base,
		 (unsigned long long)(target_ip - self_map.start + self_map.pgoff));
	CHECK_STR(frame_name(&fr[0], buf, sizeof(buf)), want);
	CHECK(machine_warning(m) && strstr(machine_warning(m), self_exe));
	CHECK_EQ_U64(dso_build_id(fr[0].dso, &got), (size_t)self_bid_size);
	machine_free(m);

	/* The right build-id on the same path resolves. */
	m = new_machine(NULL);
	CHECK(mmap2(m, 9, self_map.start, self_map.end - self_map.start, self_map.pgoff, self_exe,
		    self_bid, (size_t)self_bid_size) == 0);
	CHECK(resolve(m, 9, 9, ips, 2, fr, 2) == 1 && fr[0].sym &&
	      !strcmp(fr[0].sym, "machine_test_target"));
	CHECK(machine_warning(m) == NULL);
	machine_free(m);

	/* A HEADER_BUILD_ID record (pipe mode) naming another build-id for the path. */
	m = new_machine(NULL);
	CHECK(build_id_rec(m, self_exe, wrong, (size_t)self_bid_size) == 0);
	CHECK(mmap2(m, 9, self_map.start, self_map.end - self_map.start, self_map.pgoff, self_exe,
		    NULL, 0) == 0);
	CHECK(resolve(m, 9, 9, ips, 2, fr, 2) == 1 && fr[0].sym == NULL);
	machine_free(m);
}

static void test_build_id_cache(void)
{
	char dir[] = "/tmp/pa-bidcache-XXXXXX", path[4096], hex[2 * BID_MAX + 1];
	uint64_t ips[] = {(uint64_t)PERF_CONTEXT_USER, target_ip};
	struct machine_opts o = {.no_kernel_syms = true};
	struct machine *m;
	struct frame fr[2];

	CHECK(mkdtemp(dir) != NULL);
	bid_to_hex(hex, self_bid, (size_t)self_bid_size);
	snprintf(path, sizeof(path), "%s/.build-id", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/.build-id/%.2s", dir, hex);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s", dir, hex, hex + 2);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s/elf", dir, hex, hex + 2);
	CHECK(symlink(self_exe, path) == 0);
	o.buildid_dir = dir;
	m = machine_new(&o);
	/* The recorded path is gone; the cache has the file by build-id. */
	CHECK(mmap2(m, 3, self_map.start, self_map.end - self_map.start, self_map.pgoff,
		    "/gone/old-binary (deleted)", self_bid, (size_t)self_bid_size) == 0);
	CHECK(resolve(m, 3, 3, ips, 2, fr, 2) == 1 && fr[0].sym &&
	      !strcmp(fr[0].sym, "machine_test_target"));
	CHECK_STR(fr[0].dso_name, "old-binary");
	machine_free(m);
	unlink(path);
	snprintf(path, sizeof(path), "rm -r '%s'", dir);
	CHECK(system(path) == 0);
}

static void test_kptr_restrict_warns(void)
{
	const char *ks = kallsyms_fixture(true);
	struct machine *m = new_machine(ks);
	uint64_t ips[] = {(uint64_t)PERF_CONTEXT_KERNEL, K_BASE + 0x105};
	struct frame fr[2];
	char buf[64];

	CHECK(resolve(m, 1, 1, ips, 2, fr, 2) == 1);
	CHECK(fr[0].kernel && fr[0].sym == NULL);
	CHECK_STR(frame_name(&fr[0], buf, sizeof(buf)), "[kernel.kallsyms]+0xffffffff81000105");
	CHECK(machine_warning(m) && strstr(machine_warning(m), "kptr_restrict"));
	machine_free(m);
	unlink(ks);
}

static void test_kaslr_delta(void)
{
	const char *ks = kallsyms_fixture(false);
	struct machine *m = new_machine(ks);
	uint64_t slide = 0x200000;
	uint64_t ips[] = {(uint64_t)PERF_CONTEXT_KERNEL, K_BASE + slide + 0x105};
	struct frame fr[2];

	/* Recorded with _text elsewhere (another boot of the same kernel). */
	CHECK(kmmap(m, K_BASE + slide, 0x1000000, K_BASE + slide, "[kernel.kallsyms]_text") == 0);
	CHECK(resolve(m, 1, 1, ips, 2, fr, 2) == 1);
	CHECK_STR(fr[0].sym, "k_entry");
	CHECK_EQ_U64(fr[0].sym_off, 5);
	machine_free(m);
	unlink(ks);
}

static void test_bad_records(void)
{
	struct machine *m = new_machine(NULL);
	struct rec r;
	struct perf_record_mmap2 *e =
		(void *)rec_init(&r, PERF_RECORD_MMAP2, 0, sizeof(struct perf_record_mmap2) + 8);

	/* Filename without its NUL. */
	memset(e->filename, 'x', 8);
	CHECK(machine_process_event(m, &r.ev) == -EINVAL);
	rec_init(&r, PERF_RECORD_COMM, 0, sizeof(struct perf_event_header) + 4);
	CHECK(machine_process_event(m, &r.ev) == -EINVAL);
	rec_init(&r, PERF_RECORD_SAMPLE, 0, sizeof(struct perf_event_header));
	CHECK(machine_process_event(m, &r.ev) == 0);
	machine_free(m);
}

/* ---- stripped binaries, debug files, inline frames, unnamed functions ---- */

static char fix[64];

/* Map fix/rel as process pid's text at 0x400000 (with its build-id), as perf would. */
static struct machine *fixture_machine(const char *rel, const char *debug_dirs, bool no_inline,
				       struct symtab **st)
{
	struct machine_opts o = {.no_kernel_syms = true,
				 .buildid_dir = "/nonexistent",
				 .debug_dirs = debug_dirs,
				 .debuginfod_urls = "",
				 .no_inline = no_inline};
	char path[256];
	uint8_t bid[BID_MAX];
	int n;
	struct machine *m = machine_new(&o);

	snprintf(path, sizeof(path), "%s/%s", fix, rel);
	n = bid_read_path(path, bid);
	*st = symtab_load_elf(path);
	if (!m || n <= 0 || !*st || mmap2(m, 300, 0x400000, 0x100000, 0, path, bid, (size_t)n)) {
		machine_free(m);
		return NULL;
	}
	return m;
}

static uint64_t fixture_ip(const struct symtab *st, uint64_t va)
{
	uint64_t off = 0;

	CHECK(symtab_vaddr_to_offset(st, va, &off) == 0);
	return 0x400000 + off;
}

/* An address of outer_fn that DWARF says is inside inlined inl_leaf. */
static uint64_t inlined_va(void)
{
	char path[256];
	struct dso_dwarf *dw;
	uint64_t va, start = fixture_sym(fix, "outer_fn"), found = 0;

	snprintf(path, sizeof(path), "%s/prog", fix);
	dw = dwl_open(path, NULL, true);
	for (va = start; dw && va < start + 64 && !found; va++) {
		const struct dwl_result *r = dwl_lookup(dw, va);

		if (r && r->n == 2)
			found = va;
	}
	dso_dwarf_free(dw);
	return found;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = s ? strlen(s) : 0, b = strlen(suffix);

	return s && a >= b && !strcmp(s + a - b, suffix);
}

static void test_inline_frames_from_build_id_debug(void)
{
	char dirs[128];
	struct symtab *st = NULL;
	struct machine *m;
	struct frame fr[8];
	uint64_t va = inlined_va(), ips[1];
	size_t n;

	CHECK(va != 0);
	snprintf(dirs, sizeof(dirs), "%s/dbg", fix);
	m = fixture_machine("stripped", dirs, false, &st);
	CHECK(m != NULL);
	if (!m || !va)
		goto out;
	ips[0] = fixture_ip(st, va);
	n = resolve(m, 300, 300, ips, 1, fr, 8);
	CHECK_EQ_U64(n, 2);
	CHECK(fr[0].inlined && !fr[1].inlined);
	CHECK_STR(fr[0].sym, "inl_leaf");
	CHECK_STR(fr[1].sym, "outer_fn");
	CHECK(ends_with(fr[0].srcfile, "/p.c") && ends_with(fr[1].srcfile, "/p.c"));
	CHECK(fr[0].line >= 10 && fr[0].line <= 12);
	CHECK_EQ_U64(fr[1].line, 16); /* the call site of inl_leaf */
	CHECK_EQ_U64(fr[0].ip, fr[1].ip);
	/* Too little room: the real frame alone, with its line. */
	n = resolve(m, 300, 300, ips, 1, fr, 1);
	CHECK_EQ_U64(n, 1);
	CHECK_STR(fr[0].sym, "outer_fn");
	CHECK(!fr[0].inlined);
	machine_free(m);
	symtab_free(st);

	/* no_inline: names from the debug file, but no DWARF frames or lines. */
	m = fixture_machine("stripped", dirs, true, &st);
	CHECK(m != NULL);
	if (!m)
		goto out;
	n = resolve(m, 300, 300, ips, 1, fr, 8);
	CHECK_EQ_U64(n, 1);
	CHECK_STR(fr[0].sym, "outer_fn");
	CHECK(!fr[0].srcfile && !fr[0].line);
out:
	machine_free(m);
	symtab_free(st);
}

static void test_debuglink_names_in_machine(void)
{
	char dirs[128];
	struct symtab *st = NULL;
	struct machine *m;
	struct frame fr[8];
	uint64_t ips[1];

	snprintf(dirs, sizeof(dirs), "%s/none", fix);
	m = fixture_machine("link/prog", dirs, false, &st);
	CHECK(m != NULL);
	if (!m)
		goto out;
	ips[0] = fixture_ip(st, fixture_sym(fix, "hidden_worker") + 2);
	CHECK(resolve(m, 300, 300, ips, 1, fr, 8) >= 1);
	CHECK_STR(fr[0].sym, "hidden_worker");
	CHECK(ends_with(fr[0].srcfile, "/p.c"));
out:
	machine_free(m);
	symtab_free(st);
}

/* No symbol anywhere: addresses of one function share the name of its FDE start. */
static void test_unnamed_grouped_by_fde(void)
{
	char dirs[128], b1[64], b2[64], want[64];
	struct symtab *st = NULL;
	struct machine *m;
	struct frame fr[8];
	uint64_t start = fixture_sym(fix, "hidden_worker"), ips[1], off = 0;

	snprintf(dirs, sizeof(dirs), "%s/none", fix);
	m = fixture_machine("stripped", dirs, false, &st);
	CHECK(m != NULL && start != 0);
	if (!m)
		goto out;
	CHECK(symtab_vaddr_to_offset(st, start, &off) == 0);
	snprintf(want, sizeof(want), "stripped+0x%llx", (unsigned long long)off);
	ips[0] = fixture_ip(st, start + 3);
	CHECK_EQ_U64(resolve(m, 300, 300, ips, 1, fr, 8), 1);
	CHECK(!fr[0].sym);
	CHECK_STR(frame_name(&fr[0], b1, sizeof(b1)), want);
	ips[0] = fixture_ip(st, start + 9);
	resolve(m, 300, 300, ips, 1, fr, 8);
	CHECK_STR(frame_name(&fr[0], b2, sizeof(b2)), want);
	/* The raw file offset is still there for writers that want the address. */
	CHECK_EQ_U64(fr[0].dso_off, off + 9);
out:
	machine_free(m);
	symtab_free(st);
}

int main(void)
{
	if (setup_self()) {
		printf("# cannot find this binary's mapping or build-id\n");
		printf("not ok 1 - setup\n1..1\n");
		return 1;
	}
	RUN(test_callchain_kernel_and_user);
	RUN(test_no_callchain_uses_ip);
	RUN(test_fork_exec_exit);
	RUN(test_reap_exited);
	RUN(test_overlapping_maps_split);
	RUN(test_build_id_mismatch_unnamed);
	RUN(test_build_id_cache);
	RUN(test_kptr_restrict_warns);
	RUN(test_kaslr_delta);
	RUN(test_bad_records);
	if (fixture_build(fix, sizeof(fix))) {
		printf("not ok %d - fixture_build (see %s/mk.log)\n", ++unit_n, fix);
		unit_failed++;
	} else {
		RUN(test_inline_frames_from_build_id_debug);
		RUN(test_debuglink_names_in_machine);
		RUN(test_unnamed_grouped_by_fde);
		if (!unit_failed)
			fixture_remove(fix);
	}
	return unit_done();
}
