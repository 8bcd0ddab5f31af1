// SPDX-License-Identifier: Apache-2.0
/*
 * The capture of tests/golden.bats: a perf.data as pa-record writes it, every
 * address taken from the fixture binaries (tests/golden/fixture/, built by the
 * Makefile) so that the expected outputs show names, not numbers picked here.
 * Deterministic: fixed pids, times, ids, periods and order; nothing from the host.
 *
 *	gen-golden OUT EXE LIB JITMAP
 *
 * EXE and LIB are golden_main and libgolden.so; JITMAP is where the JIT process's
 * perf-PID.map goes (pa-report looks in /tmp, then in $HOME/.debug/jit/).
 *
 * What it holds:
 *  - cpu-clock (freq 4999, periods varied) and offcpu-time (period = ns off the CPU,
 *    a RAW thread state), two ids each (one per CPU);
 *  - pid 1000 "golden_main" (EXE and LIB mapped with build-ids), its thread 1001
 *    that renames itself "gm-worker" part-way; pid 2000 forked from it, which
 *    renames itself "golden_child" part-way, maps a file that does not exist and
 *    calls an address no mapping covers; pid JIT_PID "golden_jit" with //anon code
 *    named by its perf map, partly;
 *  - user stacks of real return addresses (DWARF call sites), leaves inside inlined
 *    code (DWARF inlined subroutines), C++ methods, a sample without a callchain;
 *  - kernel frames under a [kernel.kallsyms] map whose build-id is no kernel's, so
 *    they stay unnamed on every machine, and a module's;
 *  - LOST and LOST_SAMPLES records.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/buildid.h"
#include "profile/offcpu.h"
#include "perfdata/pd_write.h"

#define EXE_BASE  0x555555554000ULL
#define LIB_BASE  0x7f3a10000000ULL
#define GONE_BASE 0x7f3a20000000ULL /* a file that does not exist */
#define JIT_BASE  0x7f3a30000000ULL /* //anon, named by the JIT's perf map */
#define KTEXT	  0xffffffff81000000ULL
#define KMOD	  0xffffffffc0a00000ULL
#define NOWHERE	  0x0000000000bad000ULL /* in no mapping */

#define JIT_PID 4242424 /* above PID_MAX_LIMIT: no real /tmp/perf-PID.map has it */

#define NR_ROUNDS  5 /* the templates' weights, this many times over */
#define T0	   1000000000000ULL
#define TICK	   200000ULL
#define MAX_FRAMES 32

enum { EXE, LIB, NR_IMAGES };

struct image {
	const char *path;
	uint64_t base;
	int fd;
	Elf *elf;
	Dwarf *dw;
	uint64_t x_vaddr, x_off, x_len; /* the executable PT_LOAD, page-aligned */
	uint8_t bid[BID_MAX];
	int bid_size;
};

/*
 * A stack template: leaf first, one frame per string, resolved at run time:
 *	"exe|lib FUNC[+OFF]"		the function's symbol, plus OFF
 *	"exe|lib FUNC inline A/B"	where B inlined in A inlined in FUNC starts
 *	"exe|lib FUNC -> CALLEE"	the return address of FUNC's call to CALLEE
 *					("*": its first indirect call)
 *	"REGION+OFF"			kernel, module (kernel), jit, gone, nowhere
 */
struct stack {
	int ev; /* CPU or OFF */
	uint32_t pid, tid;
	int weight;
	int state; /* OFF: enum offcpu_state; CPU: NOCHAIN for the ip alone */
	const char *f[8];
};

enum { CPU, OFF };
#define NOCHAIN 1

#define STACK(e, p, t, w, s, ...)                                                                  \
	{                                                                                          \
		.ev = e, .pid = p, .tid = t, .weight = w, .state = s, .f = { __VA_ARGS__ }         \
	}

#define MULTIPLY "_ZN6golden6Matrix8multiplyERKS0_"
#define TRACE	 "_ZNK6golden6Matrix5traceEv"

/* A template's samples go out together, the templates in turn, NR_ROUNDS times. */
static const struct stack stacks[] = {
	/* pid 1000: the hot loop and its inlined helpers, a syscall, an interrupt */
	STACK(CPU, 1000, 1000, 12, 0, "exe hot_loop inline step/mix", "exe main -> hot_loop"),
	STACK(CPU, 1000, 1000, 6, 0, "exe hot_loop", "exe main -> hot_loop"),
	STACK(CPU, 1000, 1000, 4, 0, "exe parse_input inline mix", "exe main -> parse_input"),
	STACK(CPU, 1000, 1000, 5, 0, "kernel+0xa01234", "kernel+0x10abcd", "kernel+0xc00100",
	      "exe parse_input+0x10", "exe main -> parse_input"),
	STACK(CPU, 1000, 1000, 3, 0, "module+0x1010", "kernel+0x2f0040", "kernel+0xc00100"),
	STACK(CPU, 1000, 1000, 5, 0, "lib " MULTIPLY " inline fma_step<double>",
	      "lib golden_lib_entry -> " MULTIPLY, "exe main -> golden_lib_entry"),
	STACK(CPU, 1000, 1000, 1, NOCHAIN, "exe main+0x4"),
	/* thread 1001: C++ in the library; trace() starts with inlined at()s of no code, the
	 * constructor has two symbols */
	STACK(CPU, 1000, 1001, 8, 0, "lib " TRACE, "lib golden_lib_trace -> " TRACE,
	      "exe worker -> golden_lib_trace"),
	STACK(CPU, 1000, 1001, 4, 0, "lib " MULTIPLY " inline at",
	      "lib golden_lib_entry -> " MULTIPLY, "exe worker -> golden_lib_entry"),
	STACK(CPU, 1000, 1001, 2, 0, "lib _ZN6golden6MatrixC2Ej+0x8", "lib golden_lib_entry -> *",
	      "exe worker -> golden_lib_entry"),
	/* pid 2000: a file that is gone, an address in no mapping, the same hot loop */
	STACK(CPU, 2000, 2000, 6, 0, "gone+0x1230", "exe cold_path -> *", "exe main -> cold_path"),
	STACK(CPU, 2000, 2000, 3, 0, "nowhere+0", "exe cold_path -> *", "exe main -> cold_path"),
	STACK(CPU, 2000, 2000, 4, 0, "exe hot_loop inline step", "exe main -> hot_loop"),
	/* the JIT: two named functions, a mangled one, code its map does not name */
	STACK(CPU, JIT_PID, JIT_PID, 5, 0, "jit+0x10", "jit+0x58", "exe run_jit -> *",
	      "exe main -> run_jit"),
	STACK(CPU, JIT_PID, JIT_PID, 2, 0, "jit+0xc8", "exe run_jit -> *", "exe main -> run_jit"),
	STACK(CPU, JIT_PID, JIT_PID, 1, 0, "jit+0x800", "exe run_jit -> *", "exe main -> run_jit"),
	/* off-CPU: a sleep, an I/O wait in a module, a preemption without kernel frames */
	STACK(OFF, 1000, 1000, 4, OFFCPU_SLEEP, "kernel+0xe3f5a0", "kernel+0x3b2010",
	      "kernel+0xc00100", "exe parse_input+0x10", "exe main -> parse_input"),
	STACK(OFF, 1000, 1001, 2, OFFCPU_IO, "kernel+0xe3f5a0", "module+0x2200",
	      "lib golden_lib_entry -> *", "exe worker -> golden_lib_entry"),
	STACK(OFF, 2000, 2000, 1, OFFCPU_PREEMPTED, "exe hot_loop inline step/mix",
	      "exe main -> hot_loop"),
};

#define NR_STACKS (sizeof(stacks) / sizeof(stacks[0]))

/* The JIT's perf map: "START SIZE name", hex.  JIT_BASE + 0x800 is left out. */
static const struct {
	uint64_t off, size;
	const char *name;
} jit_syms[] = {
	{0x0, 0x40, "LazyCompile:*fib /app/fib.js:3"},
	{0x40, 0x80, "Builtin:InterpreterEntryTrampoline"},
	{0xc0, 0x30, "_ZN3jit8Compiled4emitEi"},
};

static const uint8_t fake_kernel_bid[20] = {0x60, 0x1d, 0xe0, 0x60, 0x1d, 0xe0, 0x60,
					    0x1d, 0xe0, 0x60, 0x1d, 0xe0, 0x60, 0x1d,
					    0xe0, 0x60, 0x1d, 0xe0, 0x60, 0x1d};

__attribute__((format(printf, 1, 2), noreturn)) static void fatal(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "gen-golden: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static int image_open(struct image *im, const char *path, uint64_t base)
{
	size_t i, n;

	im->path = path;
	im->base = base;
	im->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (im->fd < 0)
		return -errno;
	im->elf = elf_begin(im->fd, ELF_C_READ, NULL);
	im->dw = dwarf_begin(im->fd, DWARF_C_READ);
	if (!im->elf || !im->dw || elf_getphdrnum(im->elf, &n))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(im->elf, i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			im->x_vaddr = ph.p_vaddr & ~0xfffULL;
			im->x_off = ph.p_offset & ~0xfffULL;
			im->x_len = ((ph.p_vaddr + ph.p_memsz + 0xfff) & ~0xfffULL) - im->x_vaddr;
			break;
		}
	}
	im->bid_size = bid_read_path(path, im->bid);
	return im->x_len && im->bid_size > 0 ? 0 : -ENOEXEC;
}

static void image_close(struct image *im)
{
	if (im->dw)
		dwarf_end(im->dw);
	if (im->elf)
		elf_end(im->elf);
	if (im->fd >= 0)
		close(im->fd);
}

static uint64_t sym_addr(const struct image *im, const char *name)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(im->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;

			if (!gelf_getsym(d, i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC)
				continue;
			n = elf_strptr(im->elf, sh.sh_link, s.st_name);
			if (n && !strcmp(n, name))
				return im->base + s.st_value;
		}
	}
	fatal("no function %s in %s", name, im->path);
}

/* A DIE is called name by its DW_AT_linkage_name or DW_AT_name, through
 * DW_AT_abstract_origin and DW_AT_specification. */
static bool die_is(Dwarf_Die *d, const char *name)
{
	Dwarf_Attribute a;
	const char *s;

	s = dwarf_formstring(dwarf_attr_integrate(d, DW_AT_linkage_name, &a));
	if (s && !strcmp(s, name))
		return true;
	s = dwarf_formstring(dwarf_attr_integrate(d, DW_AT_name, &a));
	return s && !strcmp(s, name);
}

/* The out-of-line instance (one with code) of function name. */
static bool find_func(const struct image *im, const char *name, Dwarf_Die *out)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	while (!dwarf_nextcu(im->dw, off, &next, &hsize, NULL, NULL, NULL)) {
		Dwarf_Die cu, d;
		Dwarf_Addr lo;

		if (dwarf_offdie(im->dw, off + hsize, &cu) && !dwarf_child(&cu, &d)) {
			do {
				if (dwarf_tag(&d) == DW_TAG_subprogram && !dwarf_lowpc(&d, &lo) &&
				    die_is(&d, name)) {
					*out = d;
					return true;
				}
			} while (!dwarf_siblingof(&d, &d));
		}
		off = next;
	}
	return false;
}

/* The first address of the code of d (DW_AT_ranges can list empty ranges), 0 if none. */
static Dwarf_Addr code_start(Dwarf_Die *d)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(d, off, &base, &start, &end)) > 0)
		if (start < end)
			return start;
	return 0;
}

/*
 * First DIE under parent (depth first, in DWARF order) with tag whose name is name:
 * inlined subroutines with code only; call sites by DW_AT_call_origin (name NULL: a
 * call site without one, i.e. an indirect call).
 */
static bool find_under(Dwarf_Die *parent, int tag, const char *name, Dwarf_Die *out)
{
	Dwarf_Die d;

	if (dwarf_child(parent, &d))
		return false;
	do {
		if (dwarf_tag(&d) == tag) {
			Dwarf_Attribute a;
			Dwarf_Die origin;

			if (tag == DW_TAG_inlined_subroutine && die_is(&d, name) &&
			    code_start(&d)) {
				*out = d;
				return true;
			}
			if (tag == DW_TAG_call_site &&
			    (dwarf_attr(&d, DW_AT_call_origin, &a)
				     ? name && dwarf_formref_die(&a, &origin) &&
					       die_is(&origin, name)
				     : !name)) {
				*out = d;
				return true;
			}
		}
		if (find_under(&d, tag, name, out))
			return true;
	} while (!dwarf_siblingof(&d, &d));
	return false;
}

/*
 * The first address of the inlined chain path ("step/mix": mix inlined in step
 * inlined in func).  Not DW_AT_entry_pc: gcc puts it where the code of the call
 * began, which scheduling can leave outside the inlined code.
 */
static uint64_t inline_addr(const struct image *im, const char *func, const char *path)
{
	char buf[256], *tok, *save = NULL;
	Dwarf_Die d;

	if (!find_func(im, func, &d))
		fatal("no DWARF for %s in %s", func, im->path);
	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, "/", &save); tok; tok = strtok_r(NULL, "/", &save))
		if (!find_under(&d, DW_TAG_inlined_subroutine, tok, &d))
			fatal("%s: no inlined %s with code", func, path);
	return im->base + code_start(&d);
}

/* The return address of func's call to callee (NULL: its first indirect call). */
static uint64_t ret_addr(const struct image *im, const char *func, const char *callee)
{
	Dwarf_Attribute a;
	Dwarf_Die d, cs;
	Dwarf_Addr pc;

	if (!find_func(im, func, &d))
		fatal("no DWARF for %s in %s", func, im->path);
	if (!find_under(&d, DW_TAG_call_site, callee, &cs) ||
	    dwarf_formaddr(dwarf_attr(&cs, DW_AT_call_return_pc, &a), &pc))
		fatal("%s: no call site of %s", func, callee ? callee : "*");
	return im->base + pc;
}

static const struct {
	const char *name;
	uint64_t base;
	bool kernel;
} regions[] = {
	{"kernel", KTEXT, true},    {"module", KMOD, true},	 {"jit", JIT_BASE, false},
	{"gone", GONE_BASE, false}, {"nowhere", NOWHERE, false},
};

/* The address frame f of a template names (see struct stack); *kernel for its context. */
static uint64_t frame_addr(const struct image *ims, const char *f, bool *kernel)
{
	char img[8], func[128], what[8], arg[128];
	unsigned long long off = 0;
	size_t i;
	int n;

	*kernel = false;
	for (i = 0; i < sizeof(regions) / sizeof(regions[0]); i++) {
		size_t len = strlen(regions[i].name);

		if (!strncmp(f, regions[i].name, len) && f[len] == '+' &&
		    sscanf(f + len + 1, "%llx", &off) == 1) {
			*kernel = regions[i].kernel;
			return regions[i].base + off;
		}
	}
	n = sscanf(f, "%7s %127s %7s %127s", img, func, what, arg);
	if (n < 2 || (strcmp(img, "exe") && strcmp(img, "lib")))
		fatal("bad frame '%s'", f);
	ims += strcmp(img, "exe") ? LIB : EXE;
	if (n == 2) {
		char *plus = strchr(func, '+');

		if (plus) {
			*plus = '\0';
			off = strtoull(plus + 1, NULL, 16);
		}
		return sym_addr(ims, func) + off;
	}
	if (n == 4 && !strcmp(what, "inline"))
		return inline_addr(ims, func, arg);
	if (n == 4 && !strcmp(what, "->"))
		return ret_addr(ims, func, strcmp(arg, "*") ? arg : NULL);
	fatal("bad frame '%s'", f);
}

/* Stack s as a callchain with its context markers; returns its length. */
static size_t build_chain(const struct image *ims, const struct stack *s, uint64_t *ips)
{
	size_t n = 0, i;
	int ctx = -1;

	for (i = 0; i < sizeof(s->f) / sizeof(s->f[0]) && s->f[i]; i++) {
		bool kernel;
		uint64_t ip = frame_addr(ims, s->f[i], &kernel);

		if (kernel != ctx) {
			ips[n++] = kernel ? PERF_CONTEXT_KERNEL : PERF_CONTEXT_USER;
			ctx = kernel;
		}
		ips[n++] = ip;
	}
	return n;
}

static int write_jit_map(const char *path)
{
	FILE *f = fopen(path, "w");
	size_t i;

	if (!f)
		return -errno;
	for (i = 0; i < sizeof(jit_syms) / sizeof(jit_syms[0]); i++)
		fprintf(f, "%llx %llx %s\n", (unsigned long long)(JIT_BASE + jit_syms[i].off),
			(unsigned long long)jit_syms[i].size, jit_syms[i].name);
	return fclose(f) ? -errno : 0;
}

static int add_events(struct pd_writer *w)
{
	static const uint64_t cpu_ids[] = {101, 102}, off_ids[] = {201, 202};
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = 4999,
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			       PERF_SAMPLE_CALLCHAIN,
		.sample_id_all = 1,
		.disabled = 1,
		.inherit = 1,
		.mmap = 1,
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		.use_clockid = 1,
		.clockid = 1, /* CLOCK_MONOTONIC */
	};

	if (pd_writer_add_attr(w, &a, "cpu-clock", cpu_ids, 2) != 0)
		return -1;
	a.mmap = a.mmap2 = a.comm = a.comm_exec = a.task = 0;
	a.config = PERF_COUNT_SW_BPF_OUTPUT;
	a.freq = 0;
	a.sample_period = 1;
	a.sample_type |= PERF_SAMPLE_RAW;
	return pd_writer_add_attr(w, &a, OFFCPU_EVENT, off_ids, 2) == 1 ? 0 : -1;
}

static int add_features(struct pd_writer *w, const struct image *ims)
{
	char *argv[] = {"pa-record", "--offcpu", "-o", "golden.data", "--", "./golden_main"};
	int err = 0, i;

	err |= pd_writer_set_string(w, HEADER_HOSTNAME, "golden");
	err |= pd_writer_set_string(w, HEADER_OSRELEASE, "6.1.0-golden");
	err |= pd_writer_set_string(w, HEADER_VERSION, "perf-agent golden");
	err |= pd_writer_set_string(w, HEADER_ARCH, "x86_64");
	err |= pd_writer_set_nrcpus(w, 2, 2);
	err |= pd_writer_set_total_mem(w, 8 << 20);
	err |= pd_writer_set_cmdline(w, 6, argv);
	err |= pd_writer_add_build_id(w, PERF_RECORD_MISC_KERNEL, -1, fake_kernel_bid,
				      sizeof(fake_kernel_bid), "[kernel.kallsyms]");
	for (i = 0; i < NR_IMAGES; i++)
		err |= pd_writer_add_build_id(w, PERF_RECORD_MISC_USER, -1, ims[i].bid,
					      ims[i].bid_size, ims[i].path);
	return err ? -1 : 0;
}

static int mmap_image(struct pd_writer *w, uint32_t pid, const struct image *im,
		      const struct pd_sample_id *sid)
{
	return pd_write_mmap2(w, PERF_RECORD_MISC_USER, pid, pid, im->base + im->x_vaddr, im->x_len,
			      im->x_off, 5 /* r-x */, 2 /* MAP_PRIVATE */, im->bid, im->bid_size,
			      im->path, sid);
}

/* What pa-record synthesizes before sampling, and the tasks' lives. */
static int add_tasks(struct pd_writer *w, const struct image *ims)
{
	const uint32_t kpid = (uint32_t)-1; /* the kernel's maps */
	struct pd_sample_id sid = {.pid = kpid, .tid = kpid, .time = 0, .id = 101};
	int err = 0;

	/* As perf: _text's address in pgoff, the map up to the top of the address space. */
	err |= pd_write_mmap2(w, PERF_RECORD_MISC_KERNEL, kpid, kpid, KTEXT, ~0ULL - KTEXT, KTEXT,
			      5, 2, NULL, 0, "[kernel.kallsyms]_text", &sid);
	err |= pd_write_mmap2(w, PERF_RECORD_MISC_KERNEL, kpid, kpid, KMOD, 0x6000, 0, 5, 2, NULL,
			      0, "/lib/modules/6.1.0-golden/kernel/drivers/misc/golden_drv.ko",
			      &sid);
	sid.pid = sid.tid = 1000;
	err |= pd_write_comm(w, 1000, 1000, "golden_main", false, &sid);
	err |= mmap_image(w, 1000, &ims[EXE], &sid);
	err |= mmap_image(w, 1000, &ims[LIB], &sid);
	sid.pid = sid.tid = JIT_PID;
	err |= pd_write_comm(w, JIT_PID, JIT_PID, "golden_jit", false, &sid);
	err |= mmap_image(w, JIT_PID, &ims[EXE], &sid);
	err |= pd_write_mmap2(w, PERF_RECORD_MISC_USER, JIT_PID, JIT_PID, JIT_BASE, 0x10000, 0,
			      7 /* rwx */, 0x22 /* MAP_PRIVATE|MAP_ANONYMOUS */, NULL, 0, "//anon",
			      &sid);
	err |= pd_write_finished_round(w);

	/* Thread 1001 and process 2000 start before the first sample. */
	sid.pid = sid.tid = 1000;
	sid.time = T0 - 3 * TICK;
	err |= pd_write_task(w, PERF_RECORD_FORK, 1000, 1000, 1001, 1000, sid.time, &sid);
	sid.time = T0 - 2 * TICK;
	err |= pd_write_task(w, PERF_RECORD_FORK, 2000, 1000, 2000, 1000, sid.time, &sid);
	sid.pid = sid.tid = 2000;
	sid.time = T0 - TICK;
	err |= pd_write_mmap2(w, PERF_RECORD_MISC_USER, 2000, 2000, GONE_BASE, 0x4000, 0, 5, 2,
			      NULL, 0, "/nonexistent/golden/libgone.so", &sid);
	return err ? -1 : 0;
}

static int add_samples(struct pd_writer *w, const struct image *ims)
{
	struct offcpu_raw raw = {.magic = OFFCPU_RAW_MAGIC, .version = 1};
	struct pd_sample_id sid = {.id = 101};
	uint64_t ips[MAX_FRAMES], i = 0;
	int round, err = 0;
	size_t k;

	for (round = 0; round < NR_ROUNDS; round++) {
		/* Process 2000 is "golden_main" like its parent for a round, thread 1001
		 * for two: then they rename themselves. */
		sid.time = T0 + i * TICK - TICK / 2;
		if (round == 1) {
			sid.pid = sid.tid = 2000;
			err |= pd_write_comm(w, 2000, 2000, "golden_child", false, &sid);
		}
		if (round == 2) {
			sid.pid = 1000;
			sid.tid = 1001;
			err |= pd_write_comm(w, 1000, 1001, "gm-worker", false, &sid);
		}
		for (k = 0; k < NR_STACKS; k++) {
			const struct stack *st = &stacks[k];
			int j;

			for (j = 0; j < st->weight; j++, i++) {
				struct pd_sample s = {
					.pid = st->pid,
					.tid = st->tid,
					.time = T0 + i * TICK,
					.cpu = (uint32_t)(i & 1),
					.nr_ips = build_chain(ims, st, ips),
					.ips = ips,
				};

				s.id = (st->ev == OFF ? 201 : 101) + s.cpu;
				s.ip = ips[1];
				s.misc = ips[0] == (uint64_t)PERF_CONTEXT_KERNEL
						 ? PERF_RECORD_MISC_KERNEL
						 : PERF_RECORD_MISC_USER;
				if (st->ev == OFF) {
					/* ns off the CPU: 1 to 9 ms, never twice the same */
					s.period = 1000000 * (1 + (i * 31) % 9) + i * 1000;
					raw.state = st->state;
					s.raw = &raw;
					s.raw_size = sizeof(raw);
				} else {
					s.period = 200000 + ((i * 7919) % 17) * 1000;
				}
				if (st->ev == CPU && st->state == NOCHAIN)
					s.nr_ips = 0;
				err |= pd_write_sample(w, st->ev, &s);
				if (i % 50 == 49)
					err |= pd_write_finished_round(w);
			}
		}
	}
	sid.pid = sid.tid = 2000;
	sid.time = T0 + i * TICK;
	sid.id = 101;
	err |= pd_write_lost_samples(w, 3, &sid);
	sid.id = 201;
	err |= pd_write_lost(w, 201, 2, &sid);
	sid.time += TICK;
	err |= pd_write_task(w, PERF_RECORD_EXIT, 2000, 1000, 2000, 1000, sid.time, &sid);
	err |= pd_write_finished_round(w);
	return err ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct image ims[NR_IMAGES] = {{.fd = -1}, {.fd = -1}};
	struct pd_writer_opts wo = {0};
	struct pd_writer *w = NULL;
	int i, ret = 1;

	if (argc != 5) {
		fprintf(stderr, "usage: gen-golden OUT EXE LIB JITMAP\n");
		return 2;
	}
	elf_version(EV_CURRENT);
	for (i = 0; i < NR_IMAGES; i++) {
		if (image_open(&ims[i], argv[2 + i], i == EXE ? EXE_BASE : LIB_BASE)) {
			fprintf(stderr,
				"gen-golden: %s: not an ELF file with code and a build-id\n",
				argv[2 + i]);
			goto out;
		}
	}
	if (write_jit_map(argv[4])) {
		fprintf(stderr, "gen-golden: cannot write %s\n", argv[4]);
		goto out;
	}
	wo.path = argv[1];
	/* GOLDEN_ZSTD=LEVEL: the same capture with its records zstd-compressed (-z). */
	if (getenv("GOLDEN_ZSTD"))
		wo.compress_level = atoi(getenv("GOLDEN_ZSTD"));
	w = pd_writer_open(&wo);
	if (!w || add_events(w) || add_features(w, ims) || add_tasks(w, ims) ||
	    add_samples(w, ims)) {
		fprintf(stderr, "gen-golden: cannot write %s\n", argv[1]);
		goto out;
	}
	ret = pd_writer_close(w) ? 1 : 0;
	w = NULL;
out:
	if (w)
		pd_writer_abort(w);
	for (i = 0; i < NR_IMAGES; i++)
		image_close(&ims[i]);
	return ret;
}
