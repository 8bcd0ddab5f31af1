// SPDX-License-Identifier: Apache-2.0
/* pprof: the gzipped profile decodes with protobuf-c and says what the stacks said. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profile/callgraph.h"
#include "profile/pprof.h"
#include "profile.pb-c.h"
#include "unit.h"

typedef Perftools__Profiles__Profile pb_profile;

static struct frame fr(uint64_t ip, const char *sym, bool kernel)
{
	struct frame f = {.ip = ip, .sym = sym, .kernel = kernel};

	f.dso_name = kernel ? "[kernel.kallsyms]" : "[unknown]";
	return f;
}

/* The profile gzipped in gz, NULL unless its CRC and length check out; its size
 * unpacked in *raw_len when not NULL. */
static pb_profile *decode_len(const uint8_t *gz, size_t len, size_t *raw_len)
{
	size_t cap = 64 << 20;
	uint8_t *raw = malloc(cap);
	z_stream zs = {0};
	pb_profile *p = NULL;

	/* 15 + 32: accept the gzip header, which is what we check it has. */
	if (!raw || inflateInit2(&zs, 15 + 32) != Z_OK)
		goto out;
	zs.next_in = (Bytef *)gz;
	zs.avail_in = len;
	zs.next_out = raw;
	zs.avail_out = cap;
	if (inflate(&zs, Z_FINISH) == Z_STREAM_END)
		p = perftools__profiles__profile__unpack(NULL, cap - zs.avail_out, raw);
	if (raw_len)
		*raw_len = cap - zs.avail_out;
	inflateEnd(&zs);
out:
	free(raw);
	return p;
}

static pb_profile *decode(const uint8_t *gz, size_t len)
{
	return decode_len(gz, len, NULL);
}

static const char *str(const pb_profile *p, int64_t i)
{
	return i >= 0 && (size_t)i < p->n_string_table ? p->string_table[i] : "(bad index)";
}

static const char *loc_name(const pb_profile *p, uint64_t loc_id)
{
	size_t i, j;

	for (i = 0; i < p->n_location; i++) {
		if (p->location[i]->id != loc_id || p->location[i]->n_line != 1)
			continue;
		for (j = 0; j < p->n_function; j++)
			if (p->function[j]->id == p->location[i]->line[0]->function_id)
				return str(p, p->function[j]->name);
	}
	return "(no location)";
}

static int64_t label_num(const pb_profile *p, const Perftools__Profiles__Sample *s, const char *key)
{
	size_t i;

	for (i = 0; i < s->n_label; i++)
		if (!strcmp(str(p, s->label[i]->key), key))
			return s->label[i]->num;
	return -1;
}

static void test_cpu_profile(void)
{
	struct cg_profile *cg = cg_new();
	struct frame a[] = {fr(0xffffffff81000010ULL, "irq", true), fr(0x10, "hot_a", false),
			    fr(0x30, "main", false)};
	struct frame b[] = {fr(0x11, "hot_a", false), fr(0x30, "main", false)};
	struct pprof_opts o = {.time_nanos = 1700000000000000000LL,
			       .duration_nanos = 3000000000LL,
			       .tid_label = true};
	uint8_t *gz;
	size_t len, i;
	pb_profile *p;

	CHECK(!cg_add_sample(cg, 0, "cpu-clock", 42, 43, "prog", a, 3, 10101010, 1));
	CHECK(!cg_add_sample(cg, 0, "cpu-clock", 42, 43, "prog", a, 3, 10101010, 2));
	CHECK(!cg_add_sample(cg, 0, "cpu-clock", 42, 44, "prog", b, 2, 5, 3));
	CHECK(!pprof_encode(cg, &o, &gz, &len));
	CHECK(len > 18 && gz[0] == 0x1f && gz[1] == 0x8b); /* gzip magic */
	p = decode(gz, len);
	CHECK(p != NULL);
	if (!p)
		goto out;
	CHECK_STR(p->string_table[0], "");
	CHECK_EQ_U64(p->n_sample_type, 2);
	CHECK_STR(str(p, p->sample_type[0]->type), "samples");
	CHECK_STR(str(p, p->sample_type[0]->unit), "count");
	CHECK_STR(str(p, p->sample_type[1]->type), "cpu");
	CHECK_STR(str(p, p->sample_type[1]->unit), "nanoseconds");
	CHECK_STR(str(p, p->default_sample_type), "cpu");
	CHECK(p->period_type != NULL);
	CHECK_EQ_U64(p->time_nanos, 1700000000000000000ULL);
	CHECK_EQ_U64(p->duration_nanos, 3000000000ULL);

	CHECK_EQ_U64(p->n_sample, 2);
	/* leaf first, kernel frame included */
	CHECK_EQ_U64(p->sample[0]->n_location_id, 3);
	CHECK_STR(loc_name(p, p->sample[0]->location_id[0]), "irq");
	CHECK_STR(loc_name(p, p->sample[0]->location_id[1]), "hot_a");
	CHECK_STR(loc_name(p, p->sample[0]->location_id[2]), "main");
	CHECK_EQ_U64(p->sample[0]->n_value, 2);
	CHECK_EQ_U64(p->sample[0]->value[0], 2);
	CHECK_EQ_U64(p->sample[0]->value[1], 20202020);
	CHECK_EQ_U64(label_num(p, p->sample[0], "pid"), 42);
	CHECK_EQ_U64(label_num(p, p->sample[0], "tid"), 43);
	CHECK_EQ_U64(label_num(p, p->sample[1], "tid"), 44);
	for (i = 0; i < p->sample[0]->n_label; i++)
		if (!strcmp(str(p, p->sample[0]->label[i]->key), "comm"))
			CHECK_STR(str(p, p->sample[0]->label[i]->str), "prog");

	/* 4 addresses, 3 functions (hot_a at two addresses) */
	CHECK_EQ_U64(p->n_location, 4);
	CHECK_EQ_U64(p->n_function, 3);
	/* the kernel frame has a mapping; every id is nonzero */
	for (i = 0; i < p->n_location; i++) {
		CHECK(p->location[i]->id != 0);
		if (p->location[i]->address == 0xffffffff81000010ULL)
			CHECK(p->location[i]->mapping_id != 0);
	}
	CHECK(p->n_mapping >= 1);
	perftools__profiles__profile__free_unpacked(p, NULL);
out:
	free(gz);
	cg_free(cg);
}

static void test_offcpu_columns(void)
{
	struct cg_profile *cg = cg_new();
	struct frame a[] = {fr(0x10, "work", false)};
	struct frame b[] = {fr(0x20, "sleep", false)};
	uint8_t *gz;
	size_t len;
	pb_profile *p;

	CHECK(!cg_add_sample(cg, 0, "cpu-clock", 1, 1, "p", a, 1, 100, 0));
	CHECK(!cg_add_sample(cg, 1, "offcpu-time", 1, 1, "p", b, 1, 5000, 0));
	CHECK(!pprof_encode(cg, NULL, &gz, &len));
	p = decode(gz, len);
	CHECK(p != NULL);
	if (!p)
		goto out;
	CHECK_EQ_U64(p->n_sample_type, 4);
	CHECK_STR(str(p, p->sample_type[2]->type), "offcpu_samples");
	CHECK_STR(str(p, p->sample_type[3]->type), "offcpu");
	CHECK_STR(str(p, p->sample_type[3]->unit), "nanoseconds");
	CHECK_STR(str(p, p->default_sample_type), "cpu");
	CHECK_EQ_U64(p->n_sample, 2);
	/* No tid label unless asked for: threads' samples aggregate. */
	CHECK(label_num(p, p->sample[0], "tid") == -1);
	CHECK_EQ_U64(label_num(p, p->sample[0], "pid"), 1);
	CHECK_EQ_U64(p->sample[1]->n_value, 4);
	CHECK_EQ_U64(p->sample[1]->value[0], 0);
	CHECK_EQ_U64(p->sample[1]->value[1], 0);
	CHECK_EQ_U64(p->sample[1]->value[2], 1);
	CHECK_EQ_U64(p->sample[1]->value[3], 5000);
	perftools__profiles__profile__free_unpacked(p, NULL);
out:
	free(gz);
	cg_free(cg);
}

static void test_value_types(void)
{
	const char *t, *u;

	pprof_value_type("cpu-clock", &t, &u);
	CHECK_STR(t, "cpu");
	CHECK_STR(u, "nanoseconds");
	/* perf names events with their modifiers */
	pprof_value_type("cpu-clock:ppp", &t, &u);
	CHECK_STR(t, "cpu");
	pprof_value_type("cpu-clockx", &t, &u);
	CHECK_STR(t, "cpu-clockx");
	pprof_value_type("offcpu-time", &t, &u);
	CHECK_STR(t, "offcpu");
	pprof_value_type("cycles", &t, &u);
	CHECK_STR(t, "cycles");
	CHECK_STR(u, "count");
}

static void test_no_events_is_einval(void)
{
	struct cg_profile *cg = cg_new();
	uint8_t *gz = NULL;
	size_t len;

	CHECK(pprof_encode(cg, NULL, &gz, &len) < 0);
	CHECK(gz == NULL);
	cg_free(cg);
}

static void test_inlined_lines(void)
{
	struct cg_profile *cg = cg_new();
	struct frame a[] = {fr(0x40, "mix", false), fr(0x40, "work", false),
			    fr(0x30, "main", false)};
	const Perftools__Profiles__Location *l = NULL;
	const Perftools__Profiles__Sample *smp;
	uint8_t *gz = NULL;
	size_t len = 0, i, j;
	pb_profile *p;
	const char *names[2] = {"", ""};
	const char *files[2] = {"", ""};

	a[0].inlined = true;
	a[0].srcfile = "mix.h";
	a[0].line = 6;
	a[1].srcfile = "w.c";
	a[1].line = 13;
	CHECK(!cg_add_sample(cg, 0, "cpu-clock", 1, 1, "p", a, 3, 1000, 0));
	CHECK(!pprof_encode(cg, &(struct pprof_opts){0}, &gz, &len));
	p = decode(gz, len);
	CHECK(p != NULL);
	if (!p)
		goto out;
	/* the sample's leaf Location is the real frame's, carrying both functions */
	CHECK_EQ_U64(p->n_sample, 1);
	smp = p->sample[0];
	CHECK_EQ_U64(smp->n_location_id, 2);
	for (i = 0; i < p->n_location; i++)
		if (p->location[i]->id == smp->location_id[0])
			l = p->location[i];
	CHECK(l != NULL);
	if (!l)
		goto out;
	CHECK_EQ_U64(l->address, 0x40);
	CHECK_EQ_U64(l->n_line, 2);
	for (i = 0; i < l->n_line && i < 2; i++)
		for (j = 0; j < p->n_function; j++)
			if (p->function[j]->id == l->line[i]->function_id) {
				names[i] = str(p, p->function[j]->name);
				files[i] = str(p, p->function[j]->filename);
			}
	/* inlined first, the real function last, as pprof reads them */
	CHECK_STR(names[0], "mix");
	CHECK_STR(names[1], "work");
	CHECK_STR(files[0], "mix.h");
	CHECK_STR(files[1], "w.c");
	CHECK_EQ_U64(l->line[0]->line, 6);
	CHECK_EQ_U64(l->line[1]->line, 13);
	CHECK_STR(loc_name(p, smp->location_id[1]), "main");
out:
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(gz);
	cg_free(cg);
}

/* A profile of megabytes is gzipped in two halves at once: one gzip stream whose
 * CRC and length check out, every sample in it. */
static void test_large_gzip(void)
{
	struct cg_profile *cg = cg_new();
	struct frame a[8];
	uint64_t period = 0, sum = 0;
	uint8_t *gz = NULL;
	size_t len = 0, raw = 0, i, k;
	pb_profile *p;

	for (i = 0; i < 100000; i++) {
		for (k = 0; k < 8; k++)
			a[k] = fr(k ? 0x1000 + (i * 13 + k * 101) % 4000 : 0x100000 + i, NULL,
				  false);
		CHECK(!cg_add_sample(cg, 0, "cpu-clock", 1, 1 + i % 5, "p", a, 8, 1000 + i, 0));
		period += 1000 + i;
	}
	CHECK(!pprof_encode(cg, &(struct pprof_opts){0}, &gz, &len));
	p = decode_len(gz, len, &raw);
	CHECK(p != NULL);
	CHECK(raw > (2u << 20));
	if (!p)
		goto out;
	CHECK_EQ_U64(p->n_sample, 100000);
	for (i = 0; i < p->n_sample; i++)
		sum += p->sample[i]->n_value == 2 ? p->sample[i]->value[1] : 0;
	CHECK_EQ_U64(sum, period);
	perftools__profiles__profile__free_unpacked(p, NULL);
out:
	free(gz);
	cg_free(cg);
}

int main(void)
{
	RUN(test_inlined_lines);
	RUN(test_cpu_profile);
	RUN(test_offcpu_columns);
	RUN(test_value_types);
	RUN(test_no_events_is_einval);
	RUN(test_large_gzip);
	return unit_done();
}
