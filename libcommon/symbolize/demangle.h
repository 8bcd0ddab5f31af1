/* SPDX-License-Identifier: Apache-2.0 */
/* C++ (Itanium ABI) and Rust (legacy and v0) symbol demangling, through libiberty. */
#ifndef PA_DEMANGLE_H
#define PA_DEMANGLE_H

#include <stdbool.h>

/* Cheap prefix test: could name be a mangled C++ or Rust symbol? */
bool dm_maybe_mangled(const char *name);

/*
 * The demangled name (malloc'ed; "@plt"-style suffixes kept), or NULL with errno
 * EINVAL when name is not a mangled name libiberty understands (or ENOMEM).
 */
char *dm_demangle(const char *name);

#endif /* PA_DEMANGLE_H */
