// SPDX-License-Identifier: Apache-2.0
/*
 * A pa-convert --pprof profile as text, for tests/golden.bats: gunzip, unpack with
 * the protobuf-c code of libcommon/profile.proto, print every field in the order it
 * is stored, strings resolved through the string table (whose own order is not
 * printed: it is the encoder's business).
 *
 *	pprof-dump FILE|-
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Function pb_function;

static uint8_t *read_all(FILE *f, size_t *len)
{
	size_t cap = 1 << 16, n = 0, r;
	uint8_t *buf = malloc(cap), *nb;

	while (buf && (r = fread(buf + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap) {
			nb = realloc(buf, cap *= 2);
			if (!nb)
				free(buf);
			buf = nb;
		}
	}
	if (buf && ferror(f)) {
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

/* gzip (or zlib) in, the raw bytes out. */
static uint8_t *gunzip(const uint8_t *in, size_t len, size_t *out_len)
{
	size_t cap = 4 * len + 4096;
	uint8_t *out = malloc(cap), *no;
	z_stream zs = {0};
	int ret = Z_OK;

	if (!out || inflateInit2(&zs, 15 + 32) != Z_OK) {
		free(out);
		return NULL;
	}
	zs.next_in = (Bytef *)in;
	zs.avail_in = len;
	while (ret == Z_OK) {
		if (zs.total_out == cap) {
			no = realloc(out, cap *= 2);
			if (!no)
				break;
			out = no;
		}
		zs.next_out = out + zs.total_out;
		zs.avail_out = cap - zs.total_out;
		ret = inflate(&zs, Z_NO_FLUSH);
		if (ret == Z_BUF_ERROR && zs.avail_out)
			break; /* truncated input */
		if (ret == Z_BUF_ERROR)
			ret = Z_OK;
	}
	*out_len = zs.total_out;
	inflateEnd(&zs);
	if (ret != Z_STREAM_END) {
		free(out);
		return NULL;
	}
	return out;
}

static const char *str(const pb_profile *p, int64_t i)
{
	return i >= 0 && (size_t)i < p->n_string_table ? p->string_table[i] : "(bad string index)";
}

static const pb_function *function_by_id(const pb_profile *p, uint64_t id)
{
	size_t i;

	for (i = 0; i < p->n_function; i++)
		if (p->function[i]->id == id)
			return p->function[i];
	return NULL;
}

/* Whether some sample lists location id. */
static bool location_used(const pb_profile *p, uint64_t id)
{
	size_t i, k;

	for (i = 0; i < p->n_sample; i++)
		for (k = 0; k < p->sample[i]->n_location_id; k++)
			if (p->sample[i]->location_id[k] == id)
				return true;
	return false;
}

static const pb_location *location_by_id(const pb_profile *p, uint64_t id)
{
	size_t i;

	for (i = 0; i < p->n_location; i++)
		if (p->location[i]->id == id)
			return p->location[i];
	return NULL;
}

/* The functions of a sample's locations, leaf first, each location's Lines in order. */
static void print_stack(const pb_profile *p, const Perftools__Profiles__Sample *s)
{
	const char *sep = "";
	size_t i, k;

	printf("  stack:");
	for (i = 0; i < s->n_location_id; i++) {
		const pb_location *l = location_by_id(p, s->location_id[i]);

		if (!l) {
			printf("%s (no location %" PRIu64 ")", sep, s->location_id[i]);
			sep = " <-";
			continue;
		}
		for (k = 0; k < l->n_line; k++) {
			const pb_function *f = function_by_id(p, l->line[k]->function_id);

			printf("%s %s", sep, f ? str(p, f->name) : "(no function)");
			sep = " <-";
		}
	}
	putchar('\n');
}

static void dump(const pb_profile *p)
{
	size_t i, k;

	for (i = 0; i < p->n_sample_type; i++)
		printf("sample_type %zu: %s/%s\n", i, str(p, p->sample_type[i]->type),
		       str(p, p->sample_type[i]->unit));
	printf("default_sample_type: %s\n", str(p, p->default_sample_type));
	if (p->period_type)
		printf("period_type: %s/%s\n", str(p, p->period_type->type),
		       str(p, p->period_type->unit));
	printf("period: %" PRId64 "\n", p->period);
	printf("time_nanos: %" PRId64 "\n", p->time_nanos);
	printf("duration_nanos: %" PRId64 "\n", p->duration_nanos);
	if (p->drop_frames || p->keep_frames)
		printf("drop_frames: %s\nkeep_frames: %s\n", str(p, p->drop_frames),
		       str(p, p->keep_frames));
	for (i = 0; i < p->n_comment; i++)
		printf("comment: %s\n", str(p, p->comment[i]));
	if (p->doc_url)
		printf("doc_url: %s\n", str(p, p->doc_url));

	printf("\nsamples: %zu\n", p->n_sample);
	for (i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];

		printf("sample %zu: values", i);
		for (k = 0; k < s->n_value; k++)
			printf(" %" PRId64, s->value[k]);
		printf(" locations");
		for (k = 0; k < s->n_location_id; k++)
			printf(" %" PRIu64, s->location_id[k]);
		putchar('\n');
		for (k = 0; k < s->n_label; k++) {
			const Perftools__Profiles__Label *l = s->label[k];

			printf("  label %s=", str(p, l->key));
			if (l->str)
				printf("\"%s\"", str(p, l->str));
			else
				printf("%" PRId64, l->num);
			if (l->num_unit)
				printf(" %s", str(p, l->num_unit));
			putchar('\n');
		}
		print_stack(p, s);
	}

	printf("\nlocations: %zu\n", p->n_location);
	for (i = 0; i < p->n_location; i++) {
		const pb_location *l = p->location[i];

		printf("location %" PRIu64 ": mapping %" PRIu64 " address 0x%" PRIx64 "%s%s\n",
		       l->id, l->mapping_id, l->address, l->is_folded ? " folded" : "",
		       location_used(p, l->id) ? "" : " (in no sample)");
		for (k = 0; k < l->n_line; k++) {
			const pb_function *f = function_by_id(p, l->line[k]->function_id);

			printf("  line function %" PRIu64 " %s %s:%" PRId64,
			       l->line[k]->function_id, f ? str(p, f->name) : "(no function)",
			       f ? str(p, f->filename) : "?", l->line[k]->line);
			if (l->line[k]->column)
				printf(":%" PRId64, l->line[k]->column);
			putchar('\n');
		}
	}

	printf("\nfunctions: %zu\n", p->n_function);
	for (i = 0; i < p->n_function; i++) {
		const pb_function *f = p->function[i];

		printf("function %" PRIu64
		       ": name %s system_name %s filename %s start_line %" PRId64 "\n",
		       f->id, str(p, f->name), str(p, f->system_name), str(p, f->filename),
		       f->start_line);
	}

	printf("\nmappings: %zu\n", p->n_mapping);
	for (i = 0; i < p->n_mapping; i++) {
		const Perftools__Profiles__Mapping *m = p->mapping[i];

		printf("mapping %" PRIu64 ": 0x%" PRIx64 "-0x%" PRIx64 " offset 0x%" PRIx64
		       " file %s build_id %s%s%s%s%s\n",
		       m->id, m->memory_start, m->memory_limit, m->file_offset, str(p, m->filename),
		       *str(p, m->build_id) ? str(p, m->build_id) : "-",
		       m->has_functions ? " has_functions" : "",
		       m->has_filenames ? " has_filenames" : "",
		       m->has_line_numbers ? " has_line_numbers" : "",
		       m->has_inline_frames ? " has_inline_frames" : "");
	}
	printf("\nstrings: %zu\n", p->n_string_table);
}

int main(int argc, char **argv)
{
	uint8_t *gz = NULL, *raw = NULL;
	size_t gz_len = 0, raw_len = 0;
	pb_profile *p = NULL;
	FILE *f;
	int ret = 1;

	if (argc != 2) {
		fprintf(stderr, "usage: pprof-dump FILE|-\n");
		return 2;
	}
	f = strcmp(argv[1], "-") ? fopen(argv[1], "rb") : stdin;
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	gz = read_all(f, &gz_len);
	if (f != stdin)
		fclose(f);
	if (!gz || !(raw = gunzip(gz, gz_len, &raw_len))) {
		fprintf(stderr, "pprof-dump: %s: not gzip data\n", argv[1]);
		goto out;
	}
	p = perftools__profiles__profile__unpack(NULL, raw_len, raw);
	if (!p) {
		fprintf(stderr, "pprof-dump: %s: not a profile.proto message\n", argv[1]);
		goto out;
	}
	if (p->n_string_table < 1 || *p->string_table[0]) {
		fprintf(stderr, "pprof-dump: %s: string_table[0] is not \"\"\n", argv[1]);
		goto out;
	}
	dump(p);
	ret = fflush(stdout) ? 1 : 0;
out:
	if (p)
		perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
	free(gz);
	return ret;
}
