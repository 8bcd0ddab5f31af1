// SPDX-License-Identifier: Apache-2.0
/*
 * Feature payload decoding (file sections and pipe-mode HEADER_FEATURE bodies alike).
 * Features are optional to every reader, so a malformed one is dropped, never fatal.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata/pd_priv.h"
#include "perfdata/pd_read.h"

struct fcur {
	const uint8_t *p;
	size_t left;
};

static int get(struct fcur *c, void *out, size_t n)
{
	if (c->left < n)
		return -EINVAL;
	memcpy(out, c->p, n);
	c->p += n;
	c->left -= n;
	return 0;
}

/* perf's do_read_string: u32 len, then len bytes holding a NUL-terminated string. */
static char *get_string(struct fcur *c)
{
	uint32_t len;
	char *s;

	if (get(c, &len, 4) || !len || len > c->left)
		return NULL;
	s = strndup((const char *)c->p, len);
	c->p += len;
	c->left -= len;
	return s;
}

static void set_string(struct pd_rfeat *f, int feat, struct fcur *c)
{
	char *s = get_string(c);

	if (!s)
		return;
	free(f->str[feat]);
	f->str[feat] = s;
}

static void free_argv(struct pd_rfeat *f)
{
	for (int i = 0; i < f->argc; i++)
		free(f->argv[i]);
	free(f->argv);
	f->argv = NULL;
	f->argc = 0;
}

static void parse_cmdline(struct pd_rfeat *f, struct fcur *c)
{
	uint32_t nr;
	char *out = NULL, **argv;
	size_t len = 0;
	int argc = 0;

	/* Each string takes 4 bytes at least: nr is bounded by what is left. */
	if (get(c, &nr, 4) || nr > c->left / 4)
		return;
	argv = calloc(nr + 1, sizeof(*argv));
	if (!argv)
		return;
	for (uint32_t i = 0; i < nr; i++) {
		char *s = get_string(c), *o;
		size_t n;

		if (!s)
			goto bad;
		argv[argc++] = s;
		n = strlen(s);
		o = realloc(out, len + n + 2);
		if (!o)
			goto bad;
		out = o;
		if (len)
			out[len++] = ' ';
		memcpy(out + len, s, n + 1);
		len += n;
	}
	free(f->cmdline);
	f->cmdline = out ? out : strdup("");
	free_argv(f);
	f->argv = argv;
	f->argc = argc;
	return;
bad:
	free(out);
	while (argc)
		free(argv[--argc]);
	free(argv);
}

/* EVENT_DESC: u32 nr, u32 attr size, per event: attr, u32 nr_ids, string, ids. */
static void parse_event_desc(struct pd_reader *r, struct fcur *c)
{
	uint32_t nr, asz, nids;
	uint64_t *ids = NULL;

	if (get(c, &nr, 4) || get(c, &asz, 4) || asz < PERF_ATTR_SIZE_VER0 || asz > c->left)
		return;
	for (uint32_t i = 0; i < nr; i++) {
		char *name;

		if (c->left < asz)
			break;
		c->p += asz;
		c->left -= asz;
		if (get(c, &nids, 4) || !(name = get_string(c)))
			break;
		if (nids > c->left / 8) {
			free(name);
			break;
		}
		free(ids);
		ids = malloc(nids * 8 + 8);
		if (!ids) {
			free(name);
			break;
		}
		get(c, ids, nids * 8);
		pd_reader_name_evsel(r, ids, nids, i, name);
		free(name);
	}
	free(ids);
}

int pd_rfeat_add_build_id(struct pd_reader *r, const struct perf_event_header *h, size_t avail)
{
	struct pd_rfeat *f = pd_reader_feat(r);
	struct pd_header_build_id d;
	struct pd_build_id *b;

	if (pd_parse_header_build_id(h, avail, &d))
		return -EINVAL;
	if (f->nr_bids == f->cap_bids) {
		size_t cap = f->cap_bids ? 2 * f->cap_bids : 16;

		b = realloc(f->bids, cap * sizeof(*b));
		if (!b)
			return -ENOMEM;
		f->bids = b;
		f->cap_bids = cap;
	}
	b = &f->bids[f->nr_bids];
	memset(b, 0, sizeof(*b));
	b->filename = strdup(d.filename);
	if (!b->filename)
		return -ENOMEM;
	b->cpumode = d.misc & PERF_RECORD_MISC_CPUMODE_MASK;
	b->pid = d.pid;
	b->size = d.size;
	memcpy(b->build_id, d.build_id, d.size);
	f->nr_bids++;
	return 0;
}

static void parse_build_ids(struct pd_reader *r, struct fcur *c)
{
	/* Entries need not be 8-aligned inside the section: decode from a copy. */
	uint64_t tmp[PD_MAX_RECORD / 8 + 1];
	uint16_t size;

	while (c->left >= sizeof(struct perf_event_header)) {
		memcpy(&size, c->p + offsetof(struct perf_event_header, size), 2);
		if (size < sizeof(struct perf_record_header_build_id) || size > c->left)
			break;
		memcpy(tmp, c->p, size);
		if (pd_rfeat_add_build_id(r, (const void *)tmp, size))
			break;
		c->p += size;
		c->left -= size;
	}
}

void pd_rfeat_parse(struct pd_reader *r, int feat, const uint8_t *p, size_t len)
{
	struct pd_rfeat *f = pd_reader_feat(r);
	struct fcur c = {p, len};

	if (pd_feat_is_string(feat)) {
		set_string(f, feat, &c);
		return;
	}
	switch (feat) {
	case HEADER_NRCPUS: {
		uint32_t v[2];

		/* On disk: nr_cpus_avail, then nr_cpus_online. */
		if (!get(&c, v, 8)) {
			f->avail = v[0];
			f->online = v[1];
			f->have_nrcpus = true;
		}
		break;
	}
	case HEADER_TOTAL_MEM:
		if (!get(&c, &f->mem_kb, 8))
			f->have_mem = true;
		break;
	case HEADER_CMDLINE:
		parse_cmdline(f, &c);
		break;
	case HEADER_EVENT_DESC:
		parse_event_desc(r, &c);
		break;
	case HEADER_BUILD_ID:
		parse_build_ids(r, &c);
		break;
	case HEADER_COMPRESSED:
		/* version, type, level, ratio, mmap_len: five u32 */
		if (!get(&c, &f->comp, sizeof(f->comp)))
			f->have_comp = true;
		break;
	default:
		break;
	}
}

void pd_rfeat_free(struct pd_reader *r)
{
	struct pd_rfeat *f = pd_reader_feat(r);

	for (int i = 0; i < HEADER_LAST_FEATURE; i++)
		free(f->str[i]);
	free(f->cmdline);
	free_argv(f);
	for (size_t i = 0; i < f->nr_bids; i++)
		free(f->bids[i].filename);
	free(f->bids);
}

const char *pd_reader_feature_string(const struct pd_reader *r, int feat)
{
	const struct pd_rfeat *f = pd_reader_feat((struct pd_reader *)r);

	return feat > 0 && feat < HEADER_LAST_FEATURE ? f->str[feat] : NULL;
}

const char *const *pd_reader_argv(const struct pd_reader *r, int *argc)
{
	const struct pd_rfeat *f = pd_reader_feat((struct pd_reader *)r);

	*argc = f->argc;
	return (const char *const *)f->argv;
}

const char *pd_reader_cmdline(const struct pd_reader *r)
{
	return pd_reader_feat((struct pd_reader *)r)->cmdline;
}

int pd_reader_nrcpus(const struct pd_reader *r, uint32_t *online, uint32_t *avail)
{
	const struct pd_rfeat *f = pd_reader_feat((struct pd_reader *)r);

	if (!f->have_nrcpus)
		return -ENOENT;
	*online = f->online;
	*avail = f->avail;
	return 0;
}

int pd_reader_total_mem(const struct pd_reader *r, uint64_t *kb)
{
	const struct pd_rfeat *f = pd_reader_feat((struct pd_reader *)r);

	if (!f->have_mem)
		return -ENOENT;
	*kb = f->mem_kb;
	return 0;
}

size_t pd_reader_nr_build_ids(const struct pd_reader *r)
{
	return pd_reader_feat((struct pd_reader *)r)->nr_bids;
}

const struct pd_build_id *pd_reader_build_id(const struct pd_reader *r, size_t i)
{
	const struct pd_rfeat *f = pd_reader_feat((struct pd_reader *)r);

	return i < f->nr_bids ? &f->bids[i] : NULL;
}
