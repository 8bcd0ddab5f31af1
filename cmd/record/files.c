// SPDX-License-Identifier: Apache-2.0
/*
 * Build-ids of the files the targets map, read through /proc/PID/map_files (which
 * reaches deleted files and other mount namespaces), /proc/PID/root/PATH or the path,
 * and cached by device and inode.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "symbolize/buildid.h"
#include "record.h"

/* Build-ids by device and inode: every process maps libc, read it once. */
int rec_mmap2_build_id(struct rec_session *s, pid_t pid, uint64_t start, uint64_t end,
		       const char *path, uint32_t maj, uint32_t min, uint64_t ino, uint8_t *bid)
{
	struct rec_bid_cache *c = &s->bids;
	uint64_t dev = makedev(maj, min);
	char p[4200];
	size_t i;
	int n;

	for (i = 0; i < c->n; i++)
		if (c->v[i].dev == dev && c->v[i].ino == ino && ino) {
			memcpy(bid, c->v[i].bid, BID_MAX);
			return c->v[i].size;
		}
	/* map_files reaches the mapped file even when it was deleted or lives in
	 * another mount namespace; root/PATH is the fallback without CAP_SYS_ADMIN. */
	snprintf(p, sizeof(p), "/proc/%d/map_files/%llx-%llx", pid, (unsigned long long)start,
		 (unsigned long long)end);
	n = bid_read_path(p, bid);
	if (n < 0) {
		snprintf(p, sizeof(p), "/proc/%d/root%s", pid, path);
		n = bid_read_path(p, bid);
	}
	if (n < 0)
		n = bid_read_path(path, bid);
	if (!ino)
		return n;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		struct rec_bid_entry *v = realloc(c->v, cap * sizeof(*v));

		if (!v)
			return n;
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n].dev = dev;
	c->v[c->n].ino = ino;
	c->v[c->n].size = n;
	memcpy(c->v[c->n].bid, bid, BID_MAX);
	c->n++;
	return n;
}

void rec_bid_cache_free(struct rec_bid_cache *c)
{
	free(c->v);
	memset(c, 0, sizeof(*c));
}
