// SPDX-License-Identifier: Apache-2.0
/*
 * The spool on disk.  Each window is one file, START-SEQ.window (START the window's
 * start in ns, SEQ a counter kept above every SEQ in the directory, both zero-padded,
 * so names sort as the windows do and never repeat), holding:
 *
 *	struct spool_hdr	magic "PASPOOL1", start, seq, lengths, CRC-32
 *	query			query_len bytes, no NUL
 *	data			data_len bytes, the pprof as given
 *
 * in the host's byte order: a spool stays on its machine.  A window is written as
 * .tmp-NAME and renamed to NAME, so a crash leaves at most a temp file, which the next
 * spool_open deletes.  The files are not fsync'd: the spool is for outages and
 * restarts of the agent, and what a power loss tears, the size and CRC checks catch.
 *
 * What else may be in the directory: .lock (held with flock while open, so two agents
 * never push the same windows); files not named like ours, left alone; files named
 * like ours that are not regular, or hold another magic (a later format), left alone;
 * files named like ours with our magic (or too short to hold one) that fail the checks,
 * deleted and counted as dropped, since nothing can ever push them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/util.h"
#include "spool.h"

#define SPOOL_MAGIC	"PASPOOL1"
#define SPOOL_QUERY_MAX (64u << 10) /* an ingest query is a name, labels and times */
#define SPOOL_NAME_LEN	64
#define SPOOL_TMP	".tmp-"
#define SPOOL_SUFFIX	".window"

struct spool_hdr {
	char magic[8];
	uint64_t start_ns;
	uint64_t seq;
	uint64_t data_len;
	uint32_t query_len;
	uint32_t crc; /* CRC-32 of the query, then the data */
};
_Static_assert(sizeof(struct spool_hdr) == 40, "spool_hdr is the on-disk header");

/* A window in the spool, as the index keeps it: its file is named by start and seq. */
struct spool_ent {
	uint64_t start_ns;
	uint64_t seq;
	uint64_t size; /* of its file */
};

struct spool {
	pthread_mutex_t lock;
	int dirfd;
	int lockfd;
	uint64_t max_bytes;
	struct spool_ent *ent; /* oldest first: by start_ns, then seq */
	size_t nr, cap;
	uint64_t bytes;
	uint64_t dropped;
	uint64_t next_seq;
};

static void ent_name(char *buf, const char *prefix, uint64_t start_ns, uint64_t seq)
{
	snprintf(buf, SPOOL_NAME_LEN, "%s%020llu-%010llu" SPOOL_SUFFIX, prefix,
		 (unsigned long long)start_ns, (unsigned long long)seq);
}

/* n decimal digits at s into *v; false unless all are digits. */
static bool parse_digits(const char *s, int n, uint64_t *v)
{
	*v = 0;
	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		*v = *v * 10 + (uint64_t)(s[i] - '0');
	}
	return true;
}

/* Whether name is exactly what ent_name makes after prefix; fills start and seq. */
static bool parse_name(const char *name, const char *prefix, uint64_t *start_ns, uint64_t *seq)
{
	size_t plen = strlen(prefix);

	if (strncmp(name, prefix, plen))
		return false;
	name += plen;
	return parse_digits(name, 20, start_ns) && name[20] == '-' &&
	       parse_digits(name + 21, 10, seq) && !strcmp(name + 31, SPOOL_SUFFIX);
}

static int ent_cmp(const struct spool_ent *a, uint64_t start_ns, uint64_t seq)
{
	if (a->start_ns != start_ns)
		return a->start_ns < start_ns ? -1 : 1;
	if (a->seq != seq)
		return a->seq < seq ? -1 : 1;
	return 0;
}

static int ent_qsort_cmp(const void *a, const void *b)
{
	const struct spool_ent *eb = b;

	return ent_cmp(a, eb->start_ns, eb->seq);
}

/* The first index whose entry is not older than (start_ns, seq). */
static size_t ent_lower(const struct spool *sp, uint64_t start_ns, uint64_t seq)
{
	size_t lo = 0, hi = sp->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ent_cmp(&sp->ent[mid], start_ns, seq) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int ent_insert(struct spool *sp, const struct spool_ent *e)
{
	size_t at;

	if (sp->nr == sp->cap) {
		size_t cap = sp->cap ? sp->cap * 2 : 64;
		struct spool_ent *n = realloc(sp->ent, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		sp->ent = n;
		sp->cap = cap;
	}
	/* New windows are the newest but for clock steps: mostly an append. */
	at = ent_lower(sp, e->start_ns, e->seq);
	memmove(&sp->ent[at + 1], &sp->ent[at], (sp->nr - at) * sizeof(*e));
	sp->ent[at] = *e;
	sp->nr++;
	sp->bytes += e->size;
	return 0;
}

static void ent_forget_at(struct spool *sp, size_t at)
{
	sp->bytes -= sp->ent[at].size;
	sp->nr--;
	memmove(&sp->ent[at], &sp->ent[at + 1], (sp->nr - at) * sizeof(sp->ent[0]));
}

/* Take (start_ns, seq) out of the index; false when it is not there. */
static bool ent_forget(struct spool *sp, uint64_t start_ns, uint64_t seq)
{
	size_t at = ent_lower(sp, start_ns, seq);

	if (at == sp->nr || ent_cmp(&sp->ent[at], start_ns, seq))
		return false;
	ent_forget_at(sp, at);
	return true;
}

static void unlink_ent(struct spool *sp, uint64_t start_ns, uint64_t seq)
{
	char name[SPOOL_NAME_LEN];

	ent_name(name, "", start_ns, seq);
	(void)unlinkat(sp->dirfd, name, 0);
}

/* Delete the oldest window to make room (lock held). */
static void drop_oldest(struct spool *sp)
{
	unlink_ent(sp, sp->ent[0].start_ns, sp->ent[0].seq);
	ent_forget_at(sp, 0);
	sp->dropped++;
}

/* Whether h describes the window (start_ns, seq) in a file of file_size bytes. */
static bool hdr_valid(const struct spool_hdr *h, uint64_t start_ns, uint64_t seq,
		      uint64_t file_size)
{
	if (memcmp(h->magic, SPOOL_MAGIC, sizeof(h->magic)) || h->start_ns != start_ns ||
	    h->seq != seq || h->query_len > SPOOL_QUERY_MAX)
		return false;
	/* Each length is bounded by the file's size before it is added or used. */
	if (file_size < sizeof(*h) || file_size - sizeof(*h) < h->query_len)
		return false;
	return h->data_len == file_size - sizeof(*h) - h->query_len && h->data_len <= SIZE_MAX;
}

enum scan_verdict { SCAN_OK, SCAN_FOREIGN, SCAN_BAD };

/* What the file name (already parsed as ours) is, and its size when SCAN_OK. */
static enum scan_verdict scan_file(int dirfd, const char *name, uint64_t start_ns, uint64_t seq,
				   uint64_t *size)
{
	struct spool_hdr h;
	struct stat st;
	ssize_t n;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	enum scan_verdict v = SCAN_FOREIGN;

	if (fd < 0)
		return SCAN_FOREIGN;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		goto out;
	n = pa_read_full(fd, &h, sizeof(h));
	if (n < 0)
		goto out;
	if ((size_t)n < sizeof(h)) {
		v = SCAN_BAD; /* torn: too short to hold a header */
		goto out;
	}
	if (memcmp(h.magic, SPOOL_MAGIC, sizeof(h.magic)))
		goto out;
	*size = (uint64_t)st.st_size;
	v = hdr_valid(&h, start_ns, seq, *size) ? SCAN_OK : SCAN_BAD;
out:
	close(fd);
	return v;
}

/* One directory entry met by spool_open. */
static int scan_entry(struct spool *sp, const char *name)
{
	struct spool_ent e;

	if (parse_name(name, SPOOL_TMP, &e.start_ns, &e.seq)) {
		(void)unlinkat(sp->dirfd, name, 0); /* half-written by a run that died */
		return 0;
	}
	if (!parse_name(name, "", &e.start_ns, &e.seq))
		return 0;
	switch (scan_file(sp->dirfd, name, e.start_ns, e.seq, &e.size)) {
	case SCAN_OK:
		if (e.seq >= sp->next_seq)
			sp->next_seq = e.seq + 1;
		return ent_insert(sp, &e);
	case SCAN_BAD:
		(void)unlinkat(sp->dirfd, name, 0);
		sp->dropped++;
		return 0;
	case SCAN_FOREIGN:
		break;
	}
	/* Never reused: a later run's window must not take a left-alone file's name. */
	if (e.seq >= sp->next_seq)
		sp->next_seq = e.seq + 1;
	return 0;
}

/* Index what an earlier run left, oldest first, and keep within the bound. */
static int scan_dir(struct spool *sp)
{
	struct dirent *d;
	int err = 0, fd = dup(sp->dirfd);
	DIR *dir = fd < 0 ? NULL : fdopendir(fd);

	if (!dir) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		return err;
	}
	while (!err && (d = readdir(dir)))
		err = scan_entry(sp, d->d_name);
	closedir(dir);
	if (err)
		return err;
	if (sp->nr)
		qsort(sp->ent, sp->nr, sizeof(sp->ent[0]), ent_qsort_cmp);
	while (sp->nr && sp->bytes > sp->max_bytes)
		drop_oldest(sp);
	return 0;
}

/* mkdir -p, new folders 0700: the windows name the processes profiled. */
static int mkdir_p(const char *dir)
{
	char *path = strdup(dir), *p;
	int err = 0;

	if (!path)
		return -ENOMEM;
	for (p = path + 1;; p++) {
		char c = *p;

		if (c && c != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0700) && errno != EEXIST) {
			err = -errno;
			break;
		}
		*p = c;
		if (!c)
			break;
	}
	free(path);
	return err;
}

static int lock_dir(struct spool *sp)
{
	sp->lockfd = openat(sp->dirfd, ".lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (sp->lockfd < 0)
		return -errno;
	if (flock(sp->lockfd, LOCK_EX | LOCK_NB))
		return errno == EWOULDBLOCK ? -EBUSY : -errno;
	return 0;
}

struct spool *spool_open(const char *dir, uint64_t max_bytes)
{
	struct spool *sp = calloc(1, sizeof(*sp));
	int err;

	if (!sp)
		return NULL;
	sp->dirfd = sp->lockfd = -1;
	sp->max_bytes = max_bytes;
	pthread_mutex_init(&sp->lock, NULL);
	err = mkdir_p(dir);
	if (!err) {
		sp->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (sp->dirfd < 0)
			err = -errno;
	}
	if (!err)
		err = lock_dir(sp);
	if (!err)
		err = scan_dir(sp);
	if (err) {
		spool_close(sp);
		errno = -err;
		return NULL;
	}
	return sp;
}

static uint32_t window_crc(const char *query, size_t qlen, const void *data, size_t len)
{
	uLong crc = crc32_z(0L, Z_NULL, 0);

	crc = crc32_z(crc, (const Bytef *)query, qlen);
	return (uint32_t)crc32_z(crc, (const Bytef *)data, len);
}

/* Write the window as tmp (the caller renames it).  0 or -errno, no file left. */
static int write_tmp(struct spool *sp, const char *tmp, const struct spool_hdr *h,
		     const char *query, const void *data)
{
	int err, fd = openat(sp->dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
			     0600);

	if (fd < 0)
		return -errno;
	err = pa_write_all(fd, h, sizeof(*h));
	if (!err)
		err = pa_write_all(fd, query, h->query_len);
	if (!err)
		err = pa_write_all(fd, data, h->data_len);
	if (close(fd) && !err)
		err = -errno;
	if (err)
		(void)unlinkat(sp->dirfd, tmp, 0);
	return err;
}

/* Make room for e and move its file into place (lock held).  0 or -errno. */
static int commit_window(struct spool *sp, const struct spool_ent *e, const char *tmp)
{
	char name[SPOOL_NAME_LEN];
	int err;

	/* Room is made once the window is safe: a failed write costs no other window. */
	while (sp->nr && sp->bytes + e->size > sp->max_bytes)
		drop_oldest(sp);
	ent_name(name, "", e->start_ns, e->seq);
	if (renameat(sp->dirfd, tmp, sp->dirfd, name)) {
		err = -errno;
		(void)unlinkat(sp->dirfd, tmp, 0);
		return err;
	}
	err = ent_insert(sp, e);
	if (err)
		(void)unlinkat(sp->dirfd, name, 0);
	return err;
}

int spool_put(struct spool *sp, uint64_t start_ns, const char *query, const void *data, size_t len)
{
	char tmp[SPOOL_NAME_LEN];
	size_t qlen = strlen(query);
	struct spool_hdr h = {.start_ns = start_ns, .data_len = len, .query_len = (uint32_t)qlen};
	struct spool_ent e = {.start_ns = start_ns, .size = sizeof(h) + qlen + len};
	int err = 0;

	if (qlen > SPOOL_QUERY_MAX)
		err = -EINVAL;
	else if (e.size > sp->max_bytes || e.size < len)
		err = -EFBIG;
	pthread_mutex_lock(&sp->lock);
	e.seq = sp->next_seq++;
	pthread_mutex_unlock(&sp->lock);

	if (!err) {
		memcpy(h.magic, SPOOL_MAGIC, sizeof(h.magic));
		h.seq = e.seq;
		h.crc = window_crc(query, qlen, data, len);
		ent_name(tmp, SPOOL_TMP, start_ns, e.seq);
		/* The write, the slow part, without the lock: the pusher peeks meanwhile. */
		err = write_tmp(sp, tmp, &h, query, data);
	}

	pthread_mutex_lock(&sp->lock);
	if (!err)
		err = commit_window(sp, &e, tmp);
	if (err)
		sp->dropped++;
	pthread_mutex_unlock(&sp->lock);
	return err;
}

/* Read len bytes: 0, -EBADMSG when the file ends first, or -errno. */
static int read_exact(int fd, void *buf, size_t len)
{
	ssize_t n = pa_read_full(fd, buf, len);

	if (n < 0)
		return (int)n;
	return (size_t)n == len ? 0 : -EBADMSG;
}

/* Read and check the window e into it.  0, -EBADMSG (unreadable) or -errno. */
static int read_window(struct spool *sp, const struct spool_ent *e, struct spool_item *it)
{
	char name[SPOOL_NAME_LEN];
	struct spool_hdr h;
	struct stat st;
	int err, fd;

	ent_name(name, "", e->start_ns, e->seq);
	fd = openat(sp->dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	err = fstat(fd, &st) ? -errno : read_exact(fd, &h, sizeof(h));
	if (!err && (!S_ISREG(st.st_mode) || !hdr_valid(&h, e->start_ns, e->seq, st.st_size)))
		err = -EBADMSG;
	if (err)
		goto out;
	it->start_ns = e->start_ns;
	it->seq = e->seq;
	it->len = (size_t)h.data_len;
	it->query = malloc(h.query_len + 1);
	it->data = malloc(it->len ? it->len : 1);
	err = it->query && it->data ? read_exact(fd, it->query, h.query_len) : -ENOMEM;
	if (!err)
		err = read_exact(fd, it->data, it->len);
	if (err)
		goto out;
	it->query[h.query_len] = '\0';
	/* A NUL inside would cut the query short: the file is not what was put. */
	if (window_crc(it->query, h.query_len, it->data, it->len) != h.crc ||
	    memchr(it->query, '\0', h.query_len))
		err = -EBADMSG;
out:
	close(fd);
	if (err)
		spool_item_free(it);
	return err;
}

int spool_peek(struct spool *sp, struct spool_item *it)
{
	memset(it, 0, sizeof(*it));
	for (;;) {
		struct spool_ent e;
		int err;

		pthread_mutex_lock(&sp->lock);
		if (!sp->nr) {
			pthread_mutex_unlock(&sp->lock);
			return -ENOENT;
		}
		e = sp->ent[0];
		pthread_mutex_unlock(&sp->lock);

		/* Read without the lock: a put may delete it meanwhile (ENOENT, so next). */
		err = read_window(sp, &e, it);
		if (err != -ENOENT && err != -EBADMSG)
			return err;
		pthread_mutex_lock(&sp->lock);
		if (ent_forget(sp, e.start_ns, e.seq)) {
			/* Deleted by someone else, or unreadable: it will never be pushed. */
			if (err == -EBADMSG)
				unlink_ent(sp, e.start_ns, e.seq);
			sp->dropped++;
		}
		pthread_mutex_unlock(&sp->lock);
	}
}

int spool_remove(struct spool *sp, const struct spool_item *it)
{
	char name[SPOOL_NAME_LEN];
	int err = 0;

	ent_name(name, "", it->start_ns, it->seq);
	pthread_mutex_lock(&sp->lock);
	if (!ent_forget(sp, it->start_ns, it->seq))
		err = -ENOENT;
	else if (unlinkat(sp->dirfd, name, 0) && errno != ENOENT)
		err = -errno; /* forgotten anyway: pushing it again would duplicate it */
	pthread_mutex_unlock(&sp->lock);
	return err;
}

void spool_item_free(struct spool_item *it)
{
	free(it->query);
	free(it->data);
	it->query = NULL;
	it->data = NULL;
	it->len = 0;
}

void spool_stats(struct spool *sp, struct spool_stats *st)
{
	pthread_mutex_lock(&sp->lock);
	st->windows = sp->nr;
	st->bytes = sp->bytes;
	st->dropped = sp->dropped;
	pthread_mutex_unlock(&sp->lock);
}

void spool_close(struct spool *sp)
{
	if (!sp)
		return;
	if (sp->lockfd >= 0)
		close(sp->lockfd);
	if (sp->dirfd >= 0)
		close(sp->dirfd);
	pthread_mutex_destroy(&sp->lock);
	free(sp->ent);
	free(sp);
}
