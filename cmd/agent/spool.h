/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The spool: windows recorded but not pushed yet, one file each in a directory, so
 * they outlive a server outage and a restart of the agent.  The recording thread puts,
 * the pusher thread peeks and removes (push.h); one mutex inside makes that safe.
 * Bounded by max_bytes: the oldest windows go first.  The file format is in spool.c.
 */
#ifndef PA_AGENT_SPOOL_H
#define PA_AGENT_SPOOL_H

#include <stddef.h>
#include <stdint.h>

struct spool;

/* One window as spool_peek returns it. */
struct spool_item {
	uint64_t start_ns; /* as given to spool_put */
	uint64_t seq;	   /* tells apart windows of the same start */
	char *query;	   /* the ingest query string, NUL-terminated */
	void *data;	   /* the pprof bytes */
	size_t len;
};

struct spool_stats {
	uint64_t windows; /* in the spool now */
	uint64_t bytes;	  /* their files' sizes, headers included */
	/*
	 * Windows lost since spool_open: the oldest deleted to make room, one too big for
	 * the bound, one that could not be written, one found unreadable.
	 */
	uint64_t dropped;
};

/*
 * Open the spool in dir, made (with its parents, mode 0700) if missing.  Takes the
 * windows an earlier run left (the oldest beyond max_bytes are dropped) and deletes
 * its half-written temp files.  NULL with errno on failure, printing nothing; errno
 * EBUSY: another process has this spool open.
 */
struct spool *spool_open(const char *dir, uint64_t max_bytes);

/*
 * Store one window: query is the ingest query string (opaque here), data its pprof
 * bytes.  start_ns orders the windows: the wall clock (CLOCK_REALTIME), so the order
 * holds across restarts.  Older windows are deleted to keep within max_bytes.
 * 0, or -errno with the window dropped: -EFBIG when it alone is over max_bytes,
 * -EINVAL for a query over 64 KiB, else the write's error (-ENOSPC, -EIO...).  Never
 * leaves a partial file.
 */
int spool_put(struct spool *sp, uint64_t start_ns, const char *query, const void *data, size_t len);

/*
 * The oldest window into *it (free with spool_item_free); it stays in the spool.
 * Unreadable files met on the way are deleted and counted as dropped.  0, -ENOENT
 * when the spool is empty, or -errno (-ENOMEM, -EIO: try again later).
 */
int spool_peek(struct spool *sp, struct spool_item *it);

/*
 * Delete the window it names (pushed).  0, or -ENOENT when it is gone already (the
 * bound deleted it meanwhile); a newer window of the same start is never touched.
 */
int spool_remove(struct spool *sp, const struct spool_item *it);

void spool_item_free(struct spool_item *it);
void spool_stats(struct spool *sp, struct spool_stats *st);

/* Close; the windows stay on disk for the next spool_open. */
void spool_close(struct spool *sp);

#endif /* PA_AGENT_SPOOL_H */
