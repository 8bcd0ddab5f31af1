// SPDX-License-Identifier: Apache-2.0
/* Demangling via libiberty's cplus_demangle (the demangler binutils and gdb use). */
#include <errno.h>
#include <libiberty/demangle.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/demangle.h"

/*
 * Auto style (no DMGL_RUST): libiberty then tries Rust first and falls back to the
 * Itanium C++ ABI; DMGL_RUST alone would refuse C++ names.  Legacy Rust hashes
 * ("::h0123...") are dropped unless DMGL_VERBOSE, as perf shows them.
 */
#define DM_FLAGS (DMGL_PARAMS | DMGL_ANSI)

bool dm_maybe_mangled(const char *name)
{
	return name[0] == '_' &&
	       (name[1] == 'Z' || name[1] == 'R' || (name[1] == '_' && name[2] == 'Z'));
}

char *dm_demangle(const char *name)
{
	const char *at, *mangled = name;
	char *base = NULL, *d, *out;

	if (!dm_maybe_mangled(name)) {
		errno = EINVAL;
		return NULL;
	}
	/* Mach-O style extra underscore appears in some cross-built objects. */
	if (name[1] == '_')
		mangled = name + 1;
	/* "name@plt", "name@GLIBC_2.2.5": demangle the name, keep the suffix. */
	at = strchr(mangled, '@');
	if (at) {
		base = strndup(mangled, (size_t)(at - mangled));
		if (!base)
			return NULL;
		mangled = base;
	}
	d = cplus_demangle(mangled, DM_FLAGS);
	free(base);
	if (!d) {
		errno = EINVAL;
		return NULL;
	}
	if (!at)
		return d;
	if (asprintf(&out, "%s%s", d, at) < 0) {
		free(d);
		errno = ENOMEM;
		return NULL;
	}
	free(d);
	return out;
}
