/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CPython interpreters, recognized in their ELF files.  libpython3.X.so, or a python
 * executable with the interpreter linked in (Debian's, python-build-standalone's),
 * defines _PyRuntime, the interpreter's global state, in its own .PyRuntime section
 * (3.10 and later; a stripped file keeps the section).  3.11 and later define
 * Py_Version (PY_VERSION_HEX).  3.13 and later start _PyRuntime with _Py_DebugOffsets,
 * the offsets of every field a debugger or profiler reads, led by the cookie
 * "xdebugpy", the version and whether the build is free-threaded.
 */
#ifndef PA_CPYTHON_H
#define PA_CPYTHON_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CPY_DEBUG_COOKIE "xdebugpy"

struct cpython_elf {
	uint32_t version;      /* PY_VERSION_HEX; 0: before 3.11 (no Py_Version) */
	uint64_t runtime;      /* link-time address of _PyRuntime */
	uint64_t runtime_size; /* its size, or the .PyRuntime section's */
	bool by_section;       /* no _PyRuntime symbol: the .PyRuntime section */
	bool debug_offsets;    /* _PyRuntime starts with _Py_DebugOffsets (3.13+) */
	bool free_threaded;    /* _Py_DebugOffsets.free_threaded */
	/* _PyEval_EvalFrameDefault and its .cold part (link-time; 0, 0 when unknown):
	 * each of its native frames ran the Python frames of one eval call. */
	struct {
		uint64_t lo, hi;
	} eval[2];
};

/*
 * Whether the ELF file e (or open at fd) is a CPython 3.10 or later interpreter: 0 with
 * *py filled, -ENOENT when it is not one (an extension module only refers to
 * _PyRuntime; 3.9 and older have no .PyRuntime), -ENOEXEC when it is not an ELF file.
 */
int cpython_probe(Elf *e, struct cpython_elf *py);
int cpython_probe_fd(int fd, struct cpython_elf *py);

/* "3.13.0", "3.14.0rc2"; "3.10 or older" for 0. */
const char *cpython_version_str(uint32_t hex, char *buf, size_t size);

/* Why pa-record cannot walk py's frames (a sentence to quote), or NULL. */
const char *cpython_unsupported(const struct cpython_elf *py);

/*
 * Where an interpreter keeps what a stack walk reads: byte offsets into its structs,
 * from _Py_DebugOffsets (3.13+) or a table (3.11, 3.12).  Filled by cpython_layout
 * (cpython_stack.c).
 */
struct cpython_layout {
	uint64_t rt_interpreters_head; /* _PyRuntimeState */
	uint64_t is_threads_head;      /* PyInterpreterState */
	/* PyThreadState; 3.11/3.12 reach the frame through ts_cframe (a _PyCFrame) */
	uint64_t ts_next, ts_current_frame, ts_cframe, cf_current_frame, ts_native_tid;
	uint64_t fr_previous, fr_executable, fr_instr_ptr, fr_owner; /* _PyInterpreterFrame */
	uint64_t fr_is_entry; /* 3.11's is_entry, the frame an eval call started with; 0: none */
	uint64_t co_filename, co_qualname, co_linetable, co_firstlineno, co_code; /* PyCodeObject */
	uint64_t ob_type, tp_name;			/* PyObject, PyTypeObject */
	uint64_t bytes_size, bytes_sval;		/* PyBytesObject */
	uint64_t str_state, str_length, str_ascii_size; /* PyASCIIObject */
	uint64_t str_compact_extra; /* PyCompactUnicodeObject past PyASCIIObject */
	uint8_t owner_skip;	    /* frames owned by this and above hold no Python code */
	uint64_t exec_mask;	    /* f_executable's pointer bits (3.14+ tag the low ones) */
};

/* One Python frame: qualified name, file, line (0: unknown). */
struct cpython_frame {
	char name[128];
	char file[256];
	int line;
};

/* The layout of interpreter e (py: its cpython_probe); -ENOTSUP with a version whose
 * layout is not known. */
int cpython_layout(Elf *e, const struct cpython_elf *py, struct cpython_layout *l);

/* len bytes of e's initialized data at link-time address addr; 0 or -ENOENT. */
int cpython_read_file(Elf *e, uint64_t addr, void *out, size_t len);

/* The line of code unit `unit` by co_linetable tab (3.11+ location table) of a code
 * object starting at line first; 0 when it has none. */
int cpython_line(const uint8_t *tab, size_t n, int first, int64_t unit);

/*
 * A code object of process pid, as a frame is named from it: qualified name, file,
 * first line and its line table (malloc'd: free c->tab).  The three object pointers
 * tell whether the address still holds the same code later (freed code objects'
 * addresses are reused).  0, -EFAULT (unreadable), -EINVAL (not a code object).
 * code_type caches the address of the code type between calls (0 at first).
 */
struct cpython_code {
	char name[128];
	char file[256];
	int firstlineno;
	uint64_t qualname, filename, linetable; /* the objects, in the process */
	uint8_t *tab;
	size_t tab_len;
};

int cpython_code_read(pid_t pid, const struct cpython_layout *l, uint64_t co, uint64_t *code_type,
		      struct cpython_code *c);

/* The line code object co (first line first, line table tab) was at with instruction
 * pointer instr. */
int cpython_code_line(const struct cpython_layout *l, const uint8_t *tab, size_t tab_len, int first,
		      uint64_t co, uint64_t instr);

/*
 * An interpreter in process pid: its file's probe, layout, and the address of
 * _PyRuntime in the process.  -ENOENT when none is mapped; -ENOTSUP (with *py filled)
 * when it is one whose frames cannot be read (cpython_unsupported says why).
 */
int cpython_attach(pid_t pid, struct cpython_elf *py, struct cpython_layout *l, uint64_t *runtime);

/*
 * The Python stack of each thread of pid, innermost first, at most max frames each:
 * cb(ctx, native thread id, frames, n, cut) per thread, at most 4096 threads.  Memory
 * is read with process_vm_readv (the caller needs ptrace access to pid, not ptrace).
 * 0, or -errno when the interpreter's state could not be read.
 */
int cpython_stacks(pid_t pid, const struct cpython_layout *l, uint64_t runtime, size_t max,
		   void (*cb)(void *ctx, uint64_t tid, const struct cpython_frame *f, size_t n,
			      bool cut),
		   void *ctx);

#endif /* PA_CPYTHON_H */
