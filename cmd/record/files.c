// SPDX-License-Identifier: Apache-2.0
/*
 * What pa-record learns about each file the targets map, found by device and inode:
 * its build-id (for MMAP2 and the build-id table), where its segments load and its
 * unwind table (for the CFI walker).  The side-band, the synthesis from /proc and the
 * unwinder all ask here, and one open of the file serves all of it: through
 * /proc/PID/map_files, which reaches deleted files and other mount namespaces, or
 * /proc/PID/root/PATH where that is not readable.  A file is opened again only when
 * its unwind table is asked for after the file was closed and the CFI cache does not
 * have it.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/procfs.h"
#include "record.h"
#include "unwind.h"
#include "base/util.h"

struct file_key {
	uint64_t dev, ino;
};

static uint64_t key_hash(const struct file_key *k)
{
	return hash_mix(hash_mix(0, k->dev), k->ino);
}

static bool key_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct rec_file *f = &((const struct rec_files *)ctx)->v[id];
	const struct file_key *k = key;

	return f->dev == k->dev && f->ino == k->ino;
}

void rec_file_ref_map(struct rec_file_ref *r, pid_t pid, const struct proc_map *m)
{
	*r = (struct rec_file_ref){
		.pid = pid,
		.start = m->start,
		.end = m->end,
		.path = m->path,
		.maj = m->maj,
		.min = m->min,
		.ino = m->ino,
		.deleted = m->deleted,
	};
}

/* r's path in our own mount namespace, if it is the same file (device and inode). */
static int open_same(struct rec_files *fs, const struct rec_file_ref *r)
{
	struct stat st;
	int fd;

	if (!r->ino || r->deleted || r->path[0] != '/')
		return -1;
	fd = open(r->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	fs->opens++;
	if (fstat(fd, &st) || st.st_ino != r->ino || st.st_dev != makedev(r->maj, r->min)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* r's file: through its process, or (when it is gone) its path where that is the same
 * file.  The open fd or -1. */
static int open_ref(struct rec_files *fs, const struct rec_file_ref *r)
{
	char p[4200];
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/map_files/%llx-%llx", r->pid, (unsigned long long)r->start,
		 (unsigned long long)r->end);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(p, sizeof(p), "/proc/%d/root%s", r->pid, r->path);
		fd = open(p, O_RDONLY | O_CLOEXEC);
	}
	if (fd >= 0)
		fs->opens++;
	else
		fd = open_same(fs, r);
	return fd;
}

/* The PT_LOAD segments of the ELF file open at fd, and whether it is a CPython
 * interpreter. */
static void read_segs(int fd, struct rec_file *f, bool gpu)
{
	Elf *e;
	size_t i, n;
	GElf_Phdr ph;

	f->nsegs = 0;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e)
		return;
	if (elf_getphdrnum(e, &n)) {
		elf_end(e);
		return;
	}
	for (i = 0; i < n && f->nsegs < REC_FILE_MAX_SEGS; i++) {
		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		f->segs[f->nsegs++] =
			(struct rec_seg){ph.p_offset, ph.p_vaddr, ph.p_filesz, ph.p_flags & PF_X};
	}
	f->is_python = !cpython_probe(e, &f->py);
	if (f->is_python)
		f->pyl_err = cpython_layout(e, &f->py, &f->pyl);
	if (gpu)
		rec_gpu_probe_elf(e, f);
	elf_end(e);
}

/* Everything fd tells about the file. */
static void learn(const struct rec_files *fs, struct rec_file *f, int fd)
{
	f->opened = true;
	f->bid_size = bid_read_fd(fd, f->bid);
	read_segs(fd, f, fs->gpu);
}

/* A new file: opened through its process, or as a last resort its path for the
 * build-id alone.  Returns the open fd or -1. */
static int learn_new(struct rec_files *fs, struct rec_file *f, const struct rec_file_ref *r)
{
	int fd = open_ref(fs, r);

	*f = (struct rec_file){
		.dev = makedev(r->maj, r->min), .ino = r->ino, .table = UNWIND_NO_TABLE};
	if (fd >= 0) {
		learn(fs, f, fd);
		return fd;
	}
	fd = open(r->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		f->bid_size = -errno;
		return -1;
	}
	fs->opens++;
	f->bid_size = bid_read_fd(fd, f->bid);
	close(fd);
	return -1;
}

/* Another file opened with the same build-id (for files known by no inode), or -1. */
static int64_t same_build_id(const struct rec_files *fs, const struct rec_file *f, bool table)
{
	for (size_t i = 0; f->bid_size > 0 && i < fs->n; i++) {
		const struct rec_file *o = &fs->v[i];

		if (o->bid_size == f->bid_size && !memcmp(o->bid, f->bid, f->bid_size) &&
		    o->opened && (!table || o->table_state == REC_TABLE_KNOWN))
			return (int64_t)i;
	}
	return -1;
}

static int64_t add(struct rec_files *fs, const struct rec_file *f, bool indexed)
{
	const struct file_key k = {f->dev, f->ino};

	if (pa_grow((void **)&fs->v, &fs->cap, fs->n + 1, sizeof(*fs->v)))
		return -1;
	if (indexed && hidx_insert(&fs->idx, key_hash(&k), (uint32_t)fs->n))
		return -1;
	fs->v[fs->n] = *f;
	return (int64_t)fs->n++;
}

/* f's unwind table: shared with a file of the same build-id, else the unwinder's. */
static void find_table(struct rec_session *s, struct rec_file *f, int fd,
		       const struct rec_file_ref *r, bool stable)
{
	struct rec_files *fs = &s->files;
	int64_t twin = same_build_id(fs, f, true);

	if (twin >= 0 && &fs->v[twin] != f) {
		f->table = fs->v[twin].table;
		f->base = fs->v[twin].base;
		f->table_state = REC_TABLE_KNOWN;
		return;
	}
	if (rec_unwind_file_table(s, f, fd, r->path, stable) != -EAGAIN)
		return;
	fd = open_ref(fs, r);
	if (fd < 0)
		return;
	fs->reopens++;
	rec_unwind_file_table(s, f, fd, r->path, stable);
	close(fd);
}

/* f's unwind table, made known to the walker by device and inode too (now, or once
 * compiled). */
static void table(struct rec_session *s, struct rec_file *f, int fd, const struct rec_file_ref *r)
{
	bool stable = r->ino && !r->deleted;

	find_table(s, f, fd, r, stable);
	if (stable)
		rec_unwind_publish_file(s, f);
}

/* A CPython interpreter, seen for the first time in r's process: said with -v. */
static void python_found(const struct rec_session *s, const struct rec_file *f,
			 const struct rec_file_ref *r)
{
	const char *why = cpython_unsupported(&f->py);
	char ver[32];

	if (!s->opts.verbose)
		return;
	cpython_version_str(f->py.version, ver, sizeof(ver));
	if (why)
		pa_info("python: pid %d: CPython %s in %s: %s", r->pid, ver, r->path, why);
	else
		pa_info("python: pid %d: CPython %s in %s (_PyRuntime at %#llx%s%s%s)", r->pid, ver,
			r->path, (unsigned long long)f->py.runtime,
			f->py.by_section ? ", from .PyRuntime" : "",
			f->py.debug_offsets ? ", with _Py_DebugOffsets" : "",
			s->opts.no_python   ? "; --no-python: no Python frames"
			: !s->py	    ? "; Python frames need --unwind cfi or auto"
			: f->pyl_err	    ? "; its layout is not known: no Python frames"
			: !f->py.eval[0].lo ? "; no _PyEval_EvalFrameDefault symbol: Python frames "
					      "go at the root of each stack"
					    : "");
}

const struct rec_file *rec_file_get(struct rec_session *s, const struct rec_file_ref *r,
				    bool want_table)
{
	struct rec_files *fs = &s->files;
	const struct file_key k = {makedev(r->maj, r->min), r->ino};
	bool indexed = r->ino && !r->deleted;
	int64_t id = indexed ? hidx_find(&fs->idx, key_hash(&k), key_eq, fs, &k) : -1;
	struct rec_file *f, nf;
	bool fresh = id < 0;
	int fd = -1;

	want_table = want_table && s->uw;
	if (fresh) {
		fd = learn_new(fs, &nf, r);
		/* Without an inode to go by, the build-id says whether it is known. */
		if (!indexed)
			id = same_build_id(fs, &nf, false);
		if (id < 0 && (id = add(fs, &nf, indexed)) < 0) {
			if (fd >= 0)
				close(fd);
			return NULL;
		}
	}
	f = &fs->v[id];
	if (fresh && f->is_python)
		python_found(s, f, r);
	if (fresh && (f->ngpu || f->pa_gpu))
		rec_gpu_file(s, f, r);
	if (want_table && !f->opened && !fresh) {
		/* Only its path was readable before: try its process again. */
		fd = open_ref(fs, r);
		if (fd >= 0)
			learn(fs, f, fd);
	}
	if (want_table && f->opened && f->table_state != REC_TABLE_KNOWN &&
	    f->table_state != REC_TABLE_COMPILING)
		table(s, f, fd, r);
	if (fd >= 0)
		close(fd);
	return f;
}

void rec_files_summary(const struct rec_session *s)
{
	const struct rec_files *fs = &s->files;

	if (s->opts.verbose && fs->n)
		pa_info("files: %zu mapped files, %llu opens (%llu again for an unwind table)",
			fs->n, (unsigned long long)fs->opens, (unsigned long long)fs->reopens);
}

void rec_files_free(struct rec_files *fs)
{
	free(fs->v);
	hidx_free(&fs->idx);
	memset(fs, 0, sizeof(*fs));
}
