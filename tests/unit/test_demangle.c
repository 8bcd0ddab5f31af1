// SPDX-License-Identifier: Apache-2.0
/*
 * demangle + symtab: C++ and Rust (legacy and v0) names come out readable, suffixes
 * survive, plain names are left alone, and a table demangles each symbol once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/demangle.h"
#include "symbolize/symtab.h"
#include "unit.h"

static void check_dm(const char *in, const char *want)
{
	char *d = dm_demangle(in);

	CHECK_STR(d, want);
	free(d);
}

static void test_cplusplus(void)
{
	check_dm("_ZNSt6vectorIiSaIiEE9push_backERKi",
		 "std::vector<int, std::allocator<int> >::push_back(int const&)");
	check_dm("_ZN2ns3fooEi", "ns::foo(int)");
	check_dm("_Z3foov.cold", "foo() [clone .cold]");
	check_dm("_ZN2ns3fooEi@plt", "ns::foo(int)@plt");
}

static void test_rust(void)
{
	/* Legacy: the hash is dropped, as perf and rustfilt show it. */
	check_dm("_ZN4core3fmt5write17h01234567890abcdeE", "core::fmt::write");
	/* v0 */
	check_dm("_RNvCs6GmmlP4bgsG_1r9hot_inner", "r::hot_inner");
	check_dm("_RNvNtCs1234_7mycrate3sub3foo", "mycrate::sub::foo");
}

static void test_not_mangled(void)
{
	errno = 0;
	CHECK(!dm_demangle("main") && errno == EINVAL);
	CHECK(!dm_demangle("_start"));
	CHECK(!dm_demangle("_Zgarbage"));
	CHECK(!dm_maybe_mangled("memcpy"));
	CHECK(dm_maybe_mangled("_ZN1a1bEv"));
}

/* A g++-built file: table names stay mangled, symtab_sym_demangled reads them. */
static void test_symtab_cached(void)
{
	char dir[] = "/tmp/pa-dm.XXXXXX", cmd[512], path[300];
	const struct sym *s = NULL;
	struct symtab *st;
	const char *a, *b;
	size_t i, found = 0;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/p.cc", dir);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs("namespace shapes { struct Circle { double r; double area() const; };\n"
	      "__attribute__((noinline)) double Circle::area() const { return 3.14 * r * r; } }\n"
	      "int main(int c, char **) { shapes::Circle x{(double)c}; return (int)x.area(); }\n",
	      f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "g++ -O1 -o %s/p %s/p.cc", dir, dir);
	CHECK(system(cmd) == 0);
	snprintf(path, sizeof(path), "%s/p", dir);
	st = symtab_load_elf(path);
	CHECK(st != NULL);
	/* Find the method by scanning lookups over the text: cheap and independent of nm. */
	for (i = 0; st && i < 0x10000 && !found; i += 1) {
		s = symtab_lookup(st, i);
		if (s && !strcmp(s->name, "_ZNK6shapes6Circle4areaEv"))
			found = 1;
	}
	CHECK(found);
	if (found) {
		a = symtab_sym_demangled(st, s);
		b = symtab_sym_demangled(st, s);
		CHECK_STR(a, "shapes::Circle::area() const");
		CHECK(a == b); /* cached, not demangled again */
	}
	/* Unmangled names come back as the very same string. */
	for (i = 0; st && i < 0x10000; i++) {
		s = symtab_lookup(st, i);
		if (s && !strcmp(s->name, "main")) {
			CHECK(symtab_sym_demangled(st, s) == s->name);
			break;
		}
	}
	CHECK(i < 0x10000);
	symtab_free(st);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
}

int main(void)
{
	RUN(test_cplusplus);
	RUN(test_rust);
	RUN(test_not_mangled);
	RUN(test_symtab_cached);
	return unit_done();
}
