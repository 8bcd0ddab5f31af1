// SPDX-License-Identifier: Apache-2.0
/*
 * The Python stacks of a running CPython process, read from outside it: the thread
 * states hanging off _PyRuntime, each thread's frame chain, each frame's code object
 * (qualified name, file, and the line of its instruction from co_linetable).  Memory
 * is read with process_vm_readv: no ptrace, nothing written.  Offsets come from the
 * interpreter's _Py_DebugOffsets (3.13 and later, whose own layout is known per minor
 * version) or from a table (3.11, 3.12: checked against pyenv's interpreters by the
 * tests).  Every loop is bounded: threads, frames, line-table bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/procfs.h"
#include "symbolize/cpython.h"

#define CPY_MAX_THREADS	  4096
#define CPY_MAX_LINETABLE (64u << 10)

/*
 * Where each field sits inside _Py_DebugOffsets, per minor version (byte offsets;
 * every member is a uint64_t).  A new minor version appends and inserts fields, so
 * one it does not list is refused rather than guessed.
 */
struct dbg_fields {
	unsigned int minor;
	uint16_t size; /* sizeof(_Py_DebugOffsets) */
	uint16_t interpreters_head, threads_head, ts_next, ts_current_frame, ts_native_tid;
	uint16_t fr_previous, fr_executable, fr_instr_ptr, fr_owner;
	uint16_t co_filename, co_qualname, co_linetable, co_firstlineno, co_code;
	uint16_t ob_type, tp_name, bytes_size, bytes_sval, str_state, str_length, str_ascii_size;
};

static const struct dbg_fields dbg_fields[] = {
	{13,  584, 40,	72,  168, 184, 200, 232, 240, 248, 264, 280,
	 296, 304, 312, 344, 360, 376, 520, 528, 544, 552, 560},
	{14,  760, 40,	72,  192, 208, 224, 256, 264, 272, 288, 320,
	 336, 344, 352, 384, 408, 424, 600, 608, 624, 632, 640},
	{15,  888, 40,	72,  192, 208, 248, 320, 328, 336, 352, 384,
	 400, 408, 416, 448, 472, 488, 696, 704, 720, 728, 736},
};

/* 3.11 and 3.12 have no _Py_DebugOffsets: their offsets, x86-64, default build. */
static const struct cpython_layout layout_311 = {
	.rt_interpreters_head = 40,
	.is_threads_head = 16,
	.ts_next = 8,
	.ts_cframe = 56,
	.cf_current_frame = 8,
	.ts_native_tid = 160,
	.fr_previous = 48,
	.fr_executable = 32,
	.fr_instr_ptr = 56,
	.fr_owner = 69,
	.fr_is_entry = 68,
	.co_filename = 112,
	.co_qualname = 128,
	.co_linetable = 136,
	.co_firstlineno = 72,
	.co_code = 184,
	.ob_type = 8,
	.tp_name = 24,
	.bytes_size = 16,
	.bytes_sval = 32,
	.str_state = 32,
	.str_length = 16,
	.str_ascii_size = 48,
	.str_compact_extra = 24,
	.owner_skip = 255, /* no shim frames */
	.exec_mask = ~0ULL,
};

static const struct cpython_layout layout_312 = {
	.rt_interpreters_head = 40,
	.is_threads_head = 72,
	.ts_next = 8,
	.ts_cframe = 56,
	.cf_current_frame = 0,
	.ts_native_tid = 144,
	.fr_previous = 8,
	.fr_executable = 0,
	.fr_instr_ptr = 56,
	.fr_owner = 70,
	.co_filename = 112,
	.co_qualname = 128,
	.co_linetable = 136,
	.co_firstlineno = 68,
	.co_code = 192,
	.ob_type = 8,
	.tp_name = 24,
	.bytes_size = 16,
	.bytes_sval = 32,
	.str_state = 32,
	.str_length = 16,
	.str_ascii_size = 40,
	.str_compact_extra = 16,
	.owner_skip = 3, /* FRAME_OWNED_BY_CSTACK */
	.exec_mask = ~0ULL,
};

int cpython_layout(Elf *e, const struct cpython_elf *py, struct cpython_layout *l)
{
	unsigned int minor = (py->version >> 16) & 0xff;
	const struct dbg_fields *d = NULL;
	uint64_t v[888 / 8];
	size_t i;

	if (cpython_unsupported(py))
		return -ENOTSUP;
	if (minor == 11 || minor == 12) {
		*l = minor == 11 ? layout_311 : layout_312;
		return 0;
	}
	for (i = 0; i < sizeof(dbg_fields) / sizeof(dbg_fields[0]); i++)
		if (dbg_fields[i].minor == minor)
			d = &dbg_fields[i];
	if (!d || d->size > sizeof(v) || py->runtime_size < d->size ||
	    cpython_read_file(e, py->runtime, v, d->size))
		return -ENOTSUP;
#define F(off) v[(off) / 8]
	*l = (struct cpython_layout){
		.rt_interpreters_head = F(d->interpreters_head),
		.is_threads_head = F(d->threads_head),
		.ts_next = F(d->ts_next),
		.ts_current_frame = F(d->ts_current_frame),
		.ts_native_tid = F(d->ts_native_tid),
		.fr_previous = F(d->fr_previous),
		.fr_executable = F(d->fr_executable),
		.fr_instr_ptr = F(d->fr_instr_ptr),
		.fr_owner = F(d->fr_owner),
		.co_filename = F(d->co_filename),
		.co_qualname = F(d->co_qualname),
		.co_linetable = F(d->co_linetable),
		.co_firstlineno = F(d->co_firstlineno),
		.co_code = F(d->co_code),
		.ob_type = F(d->ob_type),
		.tp_name = F(d->tp_name),
		.bytes_size = F(d->bytes_size),
		.bytes_sval = F(d->bytes_sval),
		.str_state = F(d->str_state),
		.str_length = F(d->str_length),
		.str_ascii_size = F(d->str_ascii_size),
		.str_compact_extra = 16,
		/* 3.13: CSTACK is 3; 3.14: INTERPRETER 3 and CSTACK 4; 3.15: INTERPRETER 3. */
		.owner_skip = 3,
		/* 3.14+: f_executable is a _PyStackRef, its low bits tags. */
		.exec_mask = minor >= 14 ? ~7ULL : ~0ULL,
	};
#undef F
	return 0;
}

/* The first mapping of a file in pid that is an interpreter: opened through the
 * process (map_files, then its root), probed, its load bias. */
int cpython_attach(pid_t pid, struct cpython_elf *py, struct cpython_layout *l, uint64_t *runtime)
{
	struct proc_map *maps = NULL;
	int n = proc_read_maps(pid, false, &maps), i, err = -ENOENT;

	memset(py, 0, sizeof(*py));
	if (n < 0)
		return n;
	for (i = 0; i < n && err == -ENOENT; i++) {
		const struct proc_map *m = &maps[i];
		char p[4200];
		GElf_Phdr ph;
		size_t k, nph;
		Elf *e;
		int fd;

		if (m->pgoff || m->path[0] != '/')
			continue;
		snprintf(p, sizeof(p), "/proc/%d/map_files/%llx-%llx", pid,
			 (unsigned long long)m->start, (unsigned long long)m->end);
		fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			snprintf(p, sizeof(p), "/proc/%d/root%s", pid, m->path);
			fd = open(p, O_RDONLY | O_CLOEXEC);
		}
		if (fd < 0)
			continue;
		elf_version(EV_CURRENT);
		e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		if (e && !cpython_probe(e, py)) {
			err = cpython_layout(e, py, l);
			/* The segment the mapping's offset 0 loads: its page is at start. */
			*runtime = m->start + py->runtime;
			if (!elf_getphdrnum(e, &nph))
				for (k = 0; k < nph; k++)
					if (gelf_getphdr(e, (int)k, &ph) && ph.p_type == PT_LOAD) {
						*runtime -= ph.p_vaddr & ~4095ULL;
						break;
					}
		}
		if (e)
			elf_end(e);
		close(fd);
	}
	proc_maps_free(maps, n);
	return err;
}

/* len bytes of pid's memory at addr. */
static int rd(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};
	ssize_t n;

	if (!addr)
		return -EFAULT;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

static uint64_t rd_ptr(pid_t pid, uint64_t addr)
{
	uint64_t v = 0;

	return rd(pid, addr, &v, sizeof(v)) ? 0 : v;
}

/* A str object's text, if compact (ASCII or Latin-1, as names and paths are). */
static void rd_str(pid_t pid, const struct cpython_layout *l, uint64_t obj, char *out, size_t size)
{
	uint32_t state = 0;
	uint64_t len = 0;
	unsigned int kind;

	out[0] = 0;
	if (rd(pid, obj + l->str_state, &state, sizeof(state)) ||
	    rd(pid, obj + l->str_length, &len, sizeof(len)))
		return;
	/* state: interned:2, kind:3, compact:1, ascii:1 */
	kind = (state >> 2) & 7;
	if (!(state & (1u << 5)) || kind != 1) {
		snprintf(out, size, "?");
		return;
	}
	if (len >= size)
		len = size - 1;
	/* Compact ASCII text follows the PyASCIIObject; Latin-1 the larger
	 * PyCompactUnicodeObject (utf8_length and utf8 pointers more). */
	if (rd(pid, obj + l->str_ascii_size + (state & (1u << 6) ? 0 : l->str_compact_extra), out,
	       len))
		len = 0;
	out[len] = 0;
}

static uint64_t varint(const uint8_t *p, size_t n, size_t *i)
{
	uint64_t v = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		if (*i >= n || shift > 60)
			return v;
		b = p[(*i)++];
		v |= (uint64_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	return v;
}

static int64_t svarint(const uint8_t *p, size_t n, size_t *i)
{
	uint64_t u = varint(p, n, i);

	return u & 1 ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
}

int cpython_line(const uint8_t *tab, size_t n, int first, int64_t unit)
{
	int64_t addr = 0, line = first;
	size_t i = 0;

	if (unit < 0)
		return first;
	while (i < n) {
		uint8_t b = tab[i++];
		unsigned int code = (b >> 3) & 15, len = (b & 7) + 1;
		int64_t delta = 0;
		bool none = false;

		if (!(b & 128))
			return 0; /* not the start of an entry: a corrupt table */
		if (code == 15) {
			none = true;
		} else if (code == 14) {
			delta = svarint(tab, n, &i);
			varint(tab, n, &i); /* end line */
			varint(tab, n, &i); /* start column */
			varint(tab, n, &i); /* end column */
		} else if (code == 13) {
			delta = svarint(tab, n, &i);
		} else if (code >= 10) {
			delta = code - 10;
			i += 2;
		} else {
			i += 1;
		}
		if (i > n)
			return 0; /* the entry is cut short */
		/* Lines are ints: a table that leaves them is not one. */
		if (delta < INT32_MIN || delta > INT32_MAX)
			return 0;
		line += delta;
		if (line < INT32_MIN || line > INT32_MAX)
			return 0;
		if (unit < addr + len)
			return none ? 0 : (int)line;
		addr += len;
	}
	return 0;
}

int cpython_code_read(pid_t pid, const struct cpython_layout *l, uint64_t co, uint64_t *code_type,
		      struct cpython_code *c)
{
	uint64_t type = rd_ptr(pid, co + l->ob_type), len = 0;
	int32_t first = 0;

	memset(c, 0, sizeof(*c));
	if (!type)
		return -EFAULT;
	if (type != *code_type) {
		char name[8] = "";

		if (rd(pid, rd_ptr(pid, type + l->tp_name), name, 5) || memcmp(name, "code", 5))
			return -EINVAL;
		*code_type = type;
	}
	c->qualname = rd_ptr(pid, co + l->co_qualname);
	c->filename = rd_ptr(pid, co + l->co_filename);
	c->linetable = rd_ptr(pid, co + l->co_linetable);
	rd_str(pid, l, c->qualname, c->name, sizeof(c->name));
	rd_str(pid, l, c->filename, c->file, sizeof(c->file));
	rd(pid, co + l->co_firstlineno, &first, sizeof(first));
	c->firstlineno = first;
	if (!c->linetable || rd(pid, c->linetable + l->bytes_size, &len, sizeof(len)) || !len ||
	    len > CPY_MAX_LINETABLE || !(c->tab = malloc(len)))
		return 0;
	if (rd(pid, c->linetable + l->bytes_sval, c->tab, len)) {
		free(c->tab);
		c->tab = NULL;
		return 0;
	}
	c->tab_len = len;
	return 0;
}

int cpython_code_line(const struct cpython_layout *l, const uint8_t *tab, size_t tab_len, int first,
		      uint64_t co, uint64_t instr)
{
	/* The instruction's index in 2-byte code units; 3.11 and 3.12 keep the one
	 * last executed, -1 before the first. */
	int64_t unit = ((int64_t)instr - (int64_t)(co + l->co_code)) / 2;
	int line = tab ? cpython_line(tab, tab_len, first, unit) : 0;

	return line > 0 ? line : first;
}

/* f's name, file and line from code object co; false if co is not a code object. */
static bool rd_code(pid_t pid, const struct cpython_layout *l, uint64_t co, uint64_t instr,
		    uint64_t *code_type, struct cpython_frame *f)
{
	struct cpython_code c;

	if (cpython_code_read(pid, l, co, code_type, &c))
		return false;
	snprintf(f->name, sizeof(f->name), "%s", c.name);
	snprintf(f->file, sizeof(f->file), "%s", c.file);
	f->line = cpython_code_line(l, c.tab, c.tab_len, c.firstlineno, co, instr);
	free(c.tab);
	return true;
}

/* Thread tstate's Python frames, innermost first, into f (at most max). */
static size_t thread_frames(pid_t pid, const struct cpython_layout *l, uint64_t tstate,
			    uint64_t *code_type, struct cpython_frame *f, size_t max, bool *cut)
{
	uint64_t fr;
	size_t n = 0, steps;

	*cut = false;
	fr = rd_ptr(pid, tstate + (l->ts_cframe ? l->ts_cframe : l->ts_current_frame));
	if (l->ts_cframe && fr)
		fr = rd_ptr(pid, fr + l->cf_current_frame);
	/* Shim frames do not count, but bound the walk too. */
	for (steps = 0; fr && steps < 4 * max + 16;
	     steps++, fr = rd_ptr(pid, fr + l->fr_previous)) {
		uint8_t owner = 0;
		uint64_t co;

		if (rd(pid, fr + l->fr_owner, &owner, 1))
			break;
		if (owner >= l->owner_skip)
			continue;
		co = rd_ptr(pid, fr + l->fr_executable) & l->exec_mask;
		if (n == max) {
			*cut = true;
			break;
		}
		memset(&f[n], 0, sizeof(f[n]));
		if (co && rd_code(pid, l, co, rd_ptr(pid, fr + l->fr_instr_ptr), code_type, &f[n]))
			n++;
	}
	return n;
}

int cpython_stacks(pid_t pid, const struct cpython_layout *l, uint64_t runtime, size_t max,
		   void (*cb)(void *ctx, uint64_t tid, const struct cpython_frame *f, size_t n,
			      bool cut),
		   void *ctx)
{
	uint64_t interp, ts, code_type = 0;
	struct cpython_frame *f = calloc(max ? max : 1, sizeof(*f));
	size_t t;
	int err = 0;

	if (!f)
		return -ENOMEM;
	interp = rd_ptr(pid, runtime + l->rt_interpreters_head);
	ts = interp ? rd_ptr(pid, interp + l->is_threads_head) : 0;
	if (!interp || !ts) {
		/* No interpreter yet, or not readable: say which. */
		uint64_t probe;

		err = rd(pid, runtime, &probe, sizeof(probe));
		free(f);
		return err ? err : -ESRCH;
	}
	for (t = 0; ts && t < CPY_MAX_THREADS; t++, ts = rd_ptr(pid, ts + l->ts_next)) {
		bool cut;
		size_t n = thread_frames(pid, l, ts, &code_type, f, max, &cut);

		cb(ctx, rd_ptr(pid, ts + l->ts_native_tid), f, n, cut);
	}
	free(f);
	return 0;
}
