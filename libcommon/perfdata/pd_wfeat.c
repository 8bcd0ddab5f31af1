// SPDX-License-Identifier: Apache-2.0
/*
 * Feature section payloads, byte for byte as perf's header.c writes them: the same
 * bytes go into a file-mode feature section and after the feat_id of a pipe-mode
 * PERF_RECORD_HEADER_FEATURE.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "perfdata/pd_priv.h"
#include "perfdata/pd_write.h"

void pd_buf_put(struct pd_buf *b, const void *data, size_t n)
{
	if (b->err)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		uint8_t *p;

		while (cap < b->len + n)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->err = -ENOMEM;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	if (data)
		memcpy(b->p + b->len, data, n);
	else
		memset(b->p + b->len, 0, n);
	b->len += n;
}

void pd_buf_put_u32(struct pd_buf *b, uint32_t v)
{
	pd_buf_put(b, &v, 4);
}

void pd_buf_put_u64(struct pd_buf *b, uint64_t v)
{
	pd_buf_put(b, &v, 8);
}

void pd_buf_put_string(struct pd_buf *b, const char *s)
{
	size_t n = strlen(s) + 1, padded = PERF_ALIGN(n, PD_NAME_ALIGN);

	pd_buf_put_u32(b, (uint32_t)padded);
	pd_buf_put(b, s, n);
	pd_buf_put(b, NULL, padded - n);
}

void pd_buf_pad(struct pd_buf *b, size_t align)
{
	pd_buf_put(b, NULL, PERF_ALIGN(b->len, align) - b->len);
}

void pd_buf_free(struct pd_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

bool pd_wfeat_has(const struct pd_wfeat *f, int feat, size_t nr_attrs)
{
	if (pd_feat_is_string(feat))
		return f->str[feat] != NULL;
	switch (feat) {
	case HEADER_BUILD_ID:
		return f->nr_bids > 0;
	case HEADER_NRCPUS:
		return f->have_nrcpus;
	case HEADER_TOTAL_MEM:
		return f->have_mem;
	case HEADER_CMDLINE:
		return f->have_cmdline;
	case HEADER_EVENT_DESC:
		return nr_attrs > 0;
	case HEADER_COMPRESSED:
		return f->have_comp;
	default:
		return false;
	}
}

int pd_wfeat_build_id_rec(const struct pd_wbuild_id *b, uint32_t type, size_t align,
			  struct pd_buf *out)
{
	size_t n = strlen(b->filename) + 1, padded = PERF_ALIGN(n, PD_NAME_ALIGN);
	struct perf_record_header_build_id ev;

	/* The struct is 36 bytes; records in a stream keep 8-byte alignment by padding
	 * the name further (perf reads it up to its NUL). */
	padded = PERF_ALIGN(sizeof(ev) + padded, align) - sizeof(ev);
	if (sizeof(ev) + padded > PD_MAX_RECORD)
		return -ENAMETOOLONG;
	memset(&ev, 0, sizeof(ev));
	ev.header.type = type;
	ev.header.misc = b->cpumode | PERF_RECORD_MISC_BUILD_ID_SIZE;
	ev.header.size = (uint16_t)(sizeof(ev) + padded);
	ev.pid = b->pid;
	memcpy(ev.build_id, b->build_id, b->size);
	/* perf reads the build-id length from the byte after the 20 id bytes. */
	ev.size = b->size;
	pd_buf_put(out, &ev, sizeof(ev));
	pd_buf_put(out, b->filename, n);
	pd_buf_put(out, NULL, padded - n);
	return out->err;
}

/* perf's write_event_desc: nr, attr size, then per event attr, nr_ids, name, ids. */
static void put_event_desc(const struct pd_wattr *attrs, size_t nr, struct pd_buf *out)
{
	pd_buf_put_u32(out, (uint32_t)nr);
	pd_buf_put_u32(out, (uint32_t)sizeof(struct perf_event_attr));
	for (size_t i = 0; i < nr; i++) {
		pd_buf_put(out, &attrs[i].attr, sizeof(attrs[i].attr));
		pd_buf_put_u32(out, (uint32_t)attrs[i].nr_ids);
		pd_buf_put_string(out, attrs[i].name);
		pd_buf_put(out, attrs[i].ids, attrs[i].nr_ids * 8);
	}
}

int pd_wfeat_encode(const struct pd_wfeat *f, int feat, const struct pd_wattr *attrs,
		    size_t nr_attrs, struct pd_buf *out)
{
	int err;

	if (!pd_wfeat_has(f, feat, nr_attrs))
		return -ENOENT;
	switch (feat) {
	case HEADER_BUILD_ID:
		for (size_t i = 0; i < f->nr_bids; i++) {
			/* Entries inside the feature carry no record type. */
			err = pd_wfeat_build_id_rec(&f->bids[i], 0, 1, out);
			if (err)
				return err;
		}
		break;
	case HEADER_NRCPUS:
		/* perf writes nr_cpus_avail first, then nr_cpus_online. */
		pd_buf_put_u32(out, f->avail);
		pd_buf_put_u32(out, f->online);
		break;
	case HEADER_TOTAL_MEM:
		pd_buf_put_u64(out, f->mem_kb);
		break;
	case HEADER_CMDLINE:
		pd_buf_put_u32(out, (uint32_t)f->argc);
		for (int i = 0; i < f->argc; i++)
			pd_buf_put_string(out, f->argv[i]);
		break;
	case HEADER_EVENT_DESC:
		put_event_desc(attrs, nr_attrs, out);
		break;
	case HEADER_COMPRESSED:
		pd_buf_put(out, &f->comp, sizeof(f->comp));
		break;
	default:
		pd_buf_put_string(out, f->str[feat]);
		break;
	}
	return out->err;
}

void pd_wfeat_free(struct pd_wfeat *f)
{
	for (int i = 0; i < HEADER_LAST_FEATURE; i++)
		free(f->str[i]);
	for (int i = 0; i < f->argc; i++)
		free(f->argv[i]);
	free(f->argv);
	for (size_t i = 0; i < f->nr_bids; i++)
		free(f->bids[i].filename);
	free(f->bids);
	memset(f, 0, sizeof(*f));
}

/* Setters (pd_write.h). */

#ifdef PA_VERSION
#define PD_WRITER_VERSION "perf-agent " PA_VERSION
#else
#define PD_WRITER_VERSION "perf-agent"
#endif

static int set_str(char **slot, const char *v)
{
	char *s = strdup(v);

	if (!s)
		return -ENOMEM;
	free(*slot);
	*slot = s;
	return 0;
}

int pd_writer_set_string(struct pd_writer *w, int feat, const char *value)
{
	if (!pd_feat_is_string(feat) || !value)
		return -EINVAL;
	return set_str(&pd_writer_feat(w)->str[feat], value);
}

int pd_writer_set_nrcpus(struct pd_writer *w, uint32_t online, uint32_t avail)
{
	struct pd_wfeat *f = pd_writer_feat(w);

	f->online = online;
	f->avail = avail;
	f->have_nrcpus = true;
	return 0;
}

int pd_writer_set_total_mem(struct pd_writer *w, uint64_t kb)
{
	struct pd_wfeat *f = pd_writer_feat(w);

	f->mem_kb = kb;
	f->have_mem = true;
	return 0;
}

int pd_writer_set_cmdline(struct pd_writer *w, int argc, char *const argv[])
{
	struct pd_wfeat *f = pd_writer_feat(w);
	char **v;

	if (argc < 0)
		return -EINVAL;
	v = calloc(argc + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (int i = 0; i < argc; i++) {
		if (!argv[i] || !(v[i] = strdup(argv[i]))) {
			for (int j = 0; j < i; j++)
				free(v[j]);
			free(v);
			return argv[i] ? -ENOMEM : -EINVAL;
		}
	}
	for (int i = 0; i < f->argc; i++)
		free(f->argv[i]);
	free(f->argv);
	f->argv = v;
	f->argc = argc;
	f->have_cmdline = true;
	return 0;
}

int pd_writer_set_host_features(struct pd_writer *w)
{
	struct utsname u;
	char host[256];
	long online = sysconf(_SC_NPROCESSORS_ONLN), conf = sysconf(_SC_NPROCESSORS_CONF);
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	int err;

	if (uname(&u))
		return -errno;
	/* uname's nodename is the hostname perf shows; gethostname agrees on Linux. */
	snprintf(host, sizeof(host), "%s", u.nodename);
	err = pd_writer_set_string(w, HEADER_HOSTNAME, host);
	if (!err)
		err = pd_writer_set_string(w, HEADER_OSRELEASE, u.release);
	if (!err)
		err = pd_writer_set_string(w, HEADER_ARCH, u.machine);
	/* perf stores its own version here; ours names the writer instead. */
	if (!err && !pd_writer_feat(w)->str[HEADER_VERSION])
		err = pd_writer_set_string(w, HEADER_VERSION, PD_WRITER_VERSION);
	if (!err && online > 0)
		err = pd_writer_set_nrcpus(w, (uint32_t)online,
					   (uint32_t)(conf > online ? conf : online));
	if (!err && pages > 0 && psz > 0)
		err = pd_writer_set_total_mem(w, (uint64_t)pages * (uint64_t)psz / 1024);
	return err;
}

int pd_writer_add_build_id(struct pd_writer *w, uint16_t cpumode, int32_t pid,
			   const uint8_t *build_id, size_t size, const char *filename)
{
	struct pd_wfeat *f = pd_writer_feat(w);
	struct pd_wbuild_id *b;

	if (!build_id || !size || size > BUILD_ID_SIZE || !filename)
		return -EINVAL;
	for (size_t i = 0; i < f->nr_bids; i++) {
		b = &f->bids[i];
		if (b->size == size && b->pid == pid && !memcmp(b->build_id, build_id, size) &&
		    !strcmp(b->filename, filename))
			return 0;
	}
	b = realloc(f->bids, (f->nr_bids + 1) * sizeof(*b));
	if (!b)
		return -ENOMEM;
	f->bids = b;
	b = &f->bids[f->nr_bids];
	memset(b, 0, sizeof(*b));
	b->cpumode = cpumode & PERF_RECORD_MISC_CPUMODE_MASK;
	b->pid = pid;
	b->size = (uint8_t)size;
	memcpy(b->build_id, build_id, size);
	b->filename = strdup(filename);
	if (!b->filename)
		return -ENOMEM;
	f->nr_bids++;
	return 0;
}
