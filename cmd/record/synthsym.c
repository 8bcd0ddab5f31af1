// SPDX-License-Identifier: Apache-2.0
/*
 * Frames that have no ELF file of their own (Python functions; GPU launches and
 * kernels): one synthetic ELF file per capture names them, as `perf inject --jit`
 * does for JIT code.  Each function gets a slot in it, mapped by a MMAP2 record at
 * SYNTH_BASE in each process whose samples use it; a frame is the address of its line
 * in its function's slot.  The file (symbols, a DWARF line table, a random build-id;
 * libcommon/symbolize/synthelf.c) is written when the recording ends, and cached by
 * build-id like the binaries, so `perf report` and our tools both name the frames.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include "base/hash.h"
#include "base/util.h"
#include "perfdata/pd_write.h"
#include "symbolize/synthelf.h"
#include "record.h"

/*
 * Where the file is mapped: above any user address even with 5-level page tables
 * (2^56), below the kernel's half.  Each function has a 1 MiB slot: line L of a
 * function starting at line F is at slot + 2 * (L - F) + 1 (odd: a return address
 * minus one is still that line).
 */
#define SYNTH_BASE	 0x0200000000000000ULL
#define SYNTH_TEXT_START 0x1000ULL
#define SYNTH_SLOT_SHIFT 20
#define SYNTH_MAX_FNS	 (1u << 20) /* 2^40 bytes of slots */

struct synth_sym {
	char *name;
	uint32_t file;
	int first;
};

/* A (function, line) pair that frames used: one row of the line table. */
struct synth_row {
	uint32_t fn;
	int line;
};

/* A process the file is mapped in, and for which image (key: the caller's). */
struct synth_pid {
	pid_t pid;
	uint64_t key;
};

struct rec_synth {
	uint8_t bid[20];
	char path[64];
	bool mapped; /* some MMAP2 names the file: it must be written */

	struct synth_sym *fns;
	size_t nr_fns, cap_fns;
	struct hidx fn_idx;

	char **files;
	size_t nr_files, cap_files;
	struct hidx file_idx;

	struct synth_row *rows;
	size_t nr_rows, cap_rows;
	struct hidx row_idx;

	struct synth_pid *pids;
	size_t nr_pids, cap_pids;
	struct hidx pid_idx;
};

int rec_synth_init(struct rec_session *s)
{
	struct rec_synth *sy = calloc(1, sizeof(*sy));
	char hex[17];
	int i;

	if (!sy)
		return -ENOMEM;
	if (getrandom(sy->bid, sizeof(sy->bid), 0) != sizeof(sy->bid)) {
		uint64_t t = pa_now_ns() ^ (uint64_t)getpid() << 32;

		for (i = 0; i < (int)sizeof(sy->bid); i++)
			sy->bid[i] = (uint8_t)((t = hash_mix(t, i)) >> 24);
	}
	for (i = 0; i < 8; i++)
		snprintf(hex + 2 * i, 3, "%02x", sy->bid[i]);
	snprintf(sy->path, sizeof(sy->path), "/tmp/pa-frames-%s.so", hex);
	s->synth = sy;
	return 0;
}

const char *rec_synth_path(const struct rec_session *s)
{
	return s->synth ? s->synth->path : "";
}

static bool file_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct rec_synth *sy = ctx;

	return !strcmp(sy->files[id], key);
}

static int64_t file_intern(struct rec_synth *sy, const char *file)
{
	uint64_t h = hash_str(file);
	int64_t id = hidx_find(&sy->file_idx, h, file_eq, sy, file);
	char *copy;

	if (id >= 0)
		return id;
	copy = strdup(file);
	if (!copy ||
	    pa_grow((void **)&sy->files, &sy->cap_files, sy->nr_files + 1, sizeof(*sy->files)) ||
	    hidx_insert(&sy->file_idx, h, sy->nr_files)) {
		free(copy);
		return -ENOMEM;
	}
	sy->files[sy->nr_files] = copy;
	return sy->nr_files++;
}

struct fn_key {
	const char *name;
	uint32_t file;
	int first;
};

static bool fn_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct rec_synth *sy = ctx;
	const struct fn_key *k = key;
	const struct synth_sym *f = &sy->fns[id];

	return f->file == k->file && f->first == k->first && !strcmp(f->name, k->name);
}

int64_t rec_synth_fn(struct rec_session *s, const char *name, const char *file, int first)
{
	struct rec_synth *sy = s->synth;
	struct fn_key k;
	int64_t fi, id;
	uint64_t h;

	if (!sy)
		return -ENOENT;
	fi = file_intern(sy, file[0] ? file : "<unknown>");
	if (fi < 0)
		return fi;
	k = (struct fn_key){name, (uint32_t)fi, first};
	h = hash_mix(hash_mix(hash_str(name), fi), (uint64_t)(uint32_t)first);
	id = hidx_find(&sy->fn_idx, h, fn_eq, sy, &k);
	if (id >= 0)
		return id;
	if (sy->nr_fns >= SYNTH_MAX_FNS)
		return -ENOSPC;
	if (pa_grow((void **)&sy->fns, &sy->cap_fns, sy->nr_fns + 1, sizeof(*sy->fns)) ||
	    hidx_insert(&sy->fn_idx, h, sy->nr_fns))
		return -ENOMEM;
	sy->fns[sy->nr_fns] = (struct synth_sym){strdup(name), (uint32_t)fi, first};
	if (!sy->fns[sy->nr_fns].name)
		return -ENOMEM;
	return sy->nr_fns++;
}

static bool row_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct rec_synth *sy = ctx;
	const struct synth_row *r = key;

	return sy->rows[id].fn == r->fn && sy->rows[id].line == r->line;
}

static uint64_t fn_addr(uint32_t fn)
{
	return SYNTH_BASE + SYNTH_TEXT_START + ((uint64_t)fn << SYNTH_SLOT_SHIFT);
}

uint64_t rec_synth_addr(struct rec_session *s, uint32_t fn, int line)
{
	struct rec_synth *sy = s->synth;
	const struct synth_sym *f;
	struct synth_row r = {fn, line};
	uint64_t h, off;

	if (!sy || fn >= sy->nr_fns)
		return 0;
	f = &sy->fns[fn];
	if (line <= 0) /* no line: the function's first */
		return fn_addr(fn) + 1;
	if (line < f->first)
		r.line = line = f->first;
	off = 2 * (uint64_t)(line - f->first);
	if (off >= (1ULL << SYNTH_SLOT_SHIFT) - 2)
		return fn_addr(fn) + 1;
	h = hash_mix(fn, (uint64_t)(uint32_t)line);
	if (hidx_find(&sy->row_idx, h, row_eq, sy, &r) < 0 &&
	    !pa_grow((void **)&sy->rows, &sy->cap_rows, sy->nr_rows + 1, sizeof(*sy->rows)) &&
	    !hidx_insert(&sy->row_idx, h, sy->nr_rows))
		sy->rows[sy->nr_rows++] = r;
	return fn_addr(fn) + off + 1;
}

static bool pid_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct rec_synth *sy = ctx;

	return sy->pids[id].pid == *(const pid_t *)key;
}

static struct synth_pid *pid_get(struct rec_synth *sy, pid_t pid)
{
	uint64_t h = hash_mix(0, (uint64_t)pid);
	int64_t id = hidx_find(&sy->pid_idx, h, pid_eq, sy, &pid);

	if (id >= 0)
		return &sy->pids[id];
	if (pa_grow((void **)&sy->pids, &sy->cap_pids, sy->nr_pids + 1, sizeof(*sy->pids)) ||
	    hidx_insert(&sy->pid_idx, h, sy->nr_pids))
		return NULL;
	sy->pids[sy->nr_pids] = (struct synth_pid){pid, 0};
	return &sy->pids[sy->nr_pids++];
}

void rec_synth_map(struct rec_session *s, pid_t pid, uint64_t key, uint64_t time)
{
	struct rec_synth *sy = s->synth;
	struct pd_sample_id sid;
	struct synth_pid *p;

	if (!sy || !s->w || !(p = pid_get(sy, pid)) || (p->key && (!key || p->key == key)))
		return;
	rec_sid(s, &sid, pid, pid, time, -1);
	if (pd_write_mmap2(s->w, PERF_RECORD_MISC_USER, pid, pid, SYNTH_BASE,
			   SYNTH_TEXT_START + ((uint64_t)SYNTH_MAX_FNS << SYNTH_SLOT_SHIFT), 0,
			   PROT_READ | PROT_EXEC, MAP_PRIVATE, sy->bid, sizeof(sy->bid), sy->path,
			   &sid))
		return;
	if (!sy->mapped)
		pd_writer_add_build_id(s->w, PERF_RECORD_MISC_USER, -1, sy->bid, sizeof(sy->bid),
				       sy->path);
	sy->mapped = true;
	p->key = key ? key : 1;
}

void rec_synth_exec(struct rec_session *s, pid_t pid)
{
	struct synth_pid *p = s->synth ? pid_get(s->synth, pid) : NULL;

	/* Readers drop a process's mappings at its exec: map it again. */
	if (p)
		p->key = 0;
}

static int cmp_row(const void *a, const void *b)
{
	const struct synth_line *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int rec_synth_finish(struct rec_session *s)
{
	struct rec_synth *sy = s->synth;
	struct synth_fn *fns = NULL;
	struct synth_line *lines = NULL;
	struct synth_elf se;
	size_t i;
	int err;

	if (!sy || !sy->mapped)
		return 0;
	fns = calloc(sy->nr_fns + 1, sizeof(*fns));
	lines = calloc(sy->nr_rows + 1, sizeof(*lines));
	if (!fns || !lines) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < sy->nr_fns; i++)
		fns[i] = (struct synth_fn){fn_addr(i) - SYNTH_BASE, 1ULL << SYNTH_SLOT_SHIFT,
					   sy->fns[i].name};
	for (i = 0; i < sy->nr_rows; i++) {
		const struct synth_row *r = &sy->rows[i];
		const struct synth_sym *f = &sy->fns[r->fn];

		lines[i] = (struct synth_line){fn_addr(r->fn) - SYNTH_BASE +
						       2 * (uint64_t)(r->line - f->first),
					       f->file, (uint32_t)r->line};
	}
	qsort(lines, sy->nr_rows, sizeof(*lines), cmp_row);
	se = (struct synth_elf){
		.bid = sy->bid,
		.bid_size = sizeof(sy->bid),
		.text_start = SYNTH_TEXT_START,
		.text_size = (uint64_t)SYNTH_MAX_FNS << SYNTH_SLOT_SHIFT,
		.fns = fns,
		.nr_fns = sy->nr_fns,
		.files = (const char *const *)sy->files,
		.nr_files = sy->nr_files,
		.lines = lines,
		.nr_lines = sy->nr_rows,
	};
	err = synth_elf_write(sy->path, &se);
	if (err)
		pa_warn("cannot write %s, the names of Python and GPU frames: %s", sy->path,
			strerror(-err));
out:
	free(fns);
	free(lines);
	return err;
}

size_t rec_synth_nr_fns(const struct rec_session *s)
{
	return s->synth ? s->synth->nr_fns : 0;
}

void rec_synth_free(struct rec_session *s)
{
	struct rec_synth *sy = s->synth;
	size_t i;

	if (!sy)
		return;
	for (i = 0; i < sy->nr_fns; i++)
		free(sy->fns[i].name);
	for (i = 0; i < sy->nr_files; i++)
		free(sy->files[i]);
	free(sy->fns);
	free(sy->files);
	free(sy->rows);
	free(sy->pids);
	hidx_free(&sy->fn_idx);
	hidx_free(&sy->file_idx);
	hidx_free(&sy->row_idx);
	hidx_free(&sy->pid_idx);
	free(sy);
	s->synth = NULL;
}
