// SPDX-License-Identifier: Apache-2.0
/* Per-kernel totals of the records the adapter saw (totals.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "totals.h"

#define TOTALS_MAX   4096 /* names; records of further ones are summed as [other] */
#define NAME_MAX_LEN 512

struct total {
	char *name;
	uint64_t count, ns;
};

static struct total totals[TOTALS_MAX];
static size_t nr_totals;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void record_name(const struct pa_gpu_rec *r, char *buf, size_t len)
{
	if (r->kind == PA_GPU_MEMCPY)
		snprintf(buf, len, "[memcpy %u]", r->copy_kind);
	else if (r->kind == PA_GPU_MEMSET)
		snprintf(buf, len, "[memset]");
	else if (r->name)
		snprintf(buf, len, "%s", (const char *)(uintptr_t)r->name);
	else
		snprintf(buf, len, "[unnamed]");
}

/* The total of name; the last slot, [other], once the table is full.  Lock held. */
static struct total *total_of(const char *name)
{
	size_t i;

	for (i = 0; i < nr_totals; i++)
		if (!strcmp(totals[i].name, name))
			return &totals[i];
	if (nr_totals == TOTALS_MAX - 1)
		name = "[other]";
	if (nr_totals == TOTALS_MAX)
		return &totals[TOTALS_MAX - 1];
	totals[nr_totals].name = strdup(name);
	return totals[nr_totals].name ? &totals[nr_totals++] : NULL;
}

void pa_gpu_totals_deliver(const struct pa_gpu_rec *recs, uint32_t n, uint64_t unobserved)
{
	char name[NAME_MAX_LEN];
	uint32_t i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < n; i++) {
		struct total *t;

		record_name(&recs[i], name, sizeof(name));
		t = total_of(name);
		if (!t)
			continue;
		t->count++;
		t->ns += recs[i].end > recs[i].start ? recs[i].end - recs[i].start : 0;
	}
	pthread_mutex_unlock(&lock);
	pa_gpu_deliver(recs, n, unobserved);
}

int pa_gpu_totals_write(const char *path)
{
	char tmp[4096];
	FILE *f;
	size_t i;
	int err = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	pthread_mutex_lock(&lock);
	for (i = 0; i < nr_totals; i++)
		fprintf(f, "%llu %llu %s\n", (unsigned long long)totals[i].count,
			(unsigned long long)totals[i].ns, totals[i].name);
	pthread_mutex_unlock(&lock);
	if (ferror(f))
		err = errno ? errno : EIO;
	if (fclose(f) && !err)
		err = errno;
	if (!err && rename(tmp, path))
		err = errno;
	if (err) {
		unlink(tmp);
		errno = err;
		return -1;
	}
	return 0;
}
