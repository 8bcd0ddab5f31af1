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

#define CPY_DEBUG_COOKIE "xdebugpy"

struct cpython_elf {
	uint32_t version;      /* PY_VERSION_HEX; 0: before 3.11 (no Py_Version) */
	uint64_t runtime;      /* link-time address of _PyRuntime */
	uint64_t runtime_size; /* its size, or the .PyRuntime section's */
	bool by_section;       /* no _PyRuntime symbol: the .PyRuntime section */
	bool debug_offsets;    /* _PyRuntime starts with _Py_DebugOffsets (3.13+) */
	bool free_threaded;    /* _Py_DebugOffsets.free_threaded */
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

#endif /* PA_CPYTHON_H */
