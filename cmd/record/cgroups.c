// SPDX-License-Identifier: Apache-2.0
/*
 * Cgroups: which hierarchy the samples name (the unified one, or on a cgroup v1
 * machine the cpu controller's, as kubelet and the container runtimes make a
 * container's cgroup in each), each id seen resolved to its path and written once
 * as a PERF_RECORD_CGROUP before the first sample that carries it, as `perf record
 * --all-cgroups` does; -G's paths as the ids the BPF program lets through.
 *
 * An id is the cgroup directory's inode number in the hierarchy's mount: the path is
 * found from the sampled process's /proc/PID/cgroup (checked by its inode), else by
 * walking the hierarchy (a process gone or moved since).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "profile.skel.h"
#include "perfdata/pd_write.h"
#include "record.h"
#include "base/hash.h"
#include "base/util.h"
#include "profile/container.h"

/* Directories a walk of the hierarchy looks at, and how deep. */
#define WALK_MAX_DIRS  200000
#define WALK_MAX_DEPTH 32
/*
 * A walk for an id not found (its process gone, as short-lived ones are by the time
 * their samples are read) at most this often: a new cgroup is found within a round,
 * its record before its first samples.  An id still not found after GIVE_UP_NS (its
 * cgroup gone as well) is written by its number.
 */
#define WALK_EVERY_NS 50000000ULL
#define GIVE_UP_NS    1000000000ULL
/* An id not found is looked up again (its sample's /proc) at most this often. */
#define RETRY_NS 10000000ULL
/*
 * How much older than the sample that names it a CGROUP record is stamped.  Samples
 * reach the ring buffer in the order their stack walks end, not in the order they were
 * taken (a walk takes up to tens of microseconds): the record must sort before every
 * sample that carries the id, the ones taken just before this one on other CPUs too.
 */
#define RECORD_LEAD_NS 10000000ULL
/* --label-env: variables at most, bytes of an environment read, of a value kept. */
#define ENV_MAX_LABELS 8
#define ENV_MAX_BYTES  (256u << 10)
#define ENV_MAX_VALUE  253
/* What --label-env reads unless told. */
#define ENV_DEFAULT "pod_name=POD_NAME,pod_namespace=POD_NAMESPACE,container_name=CONTAINER_NAME"

struct cg_ent {
	uint64_t id;
	char *path;	/* NULL: not resolved (yet) */
	uint64_t since; /* pa_now_ns() when a sample first carried it, 0: none yet */
	uint64_t tried; /* pa_now_ns() of the last lookup */
	bool written;
};

/* --label-env: label key = the container's environment variable var. */
struct env_label {
	char key[64];
	char var[128];
};

struct rec_cgroups {
	char root[PATH_MAX]; /* the hierarchy's mount point */
	size_t root_len;
	char ctrl[32];	 /* v1: the controller whose /proc/PID/cgroup line counts */
	char mroot[256]; /* the mount's root within the hierarchy ("/" mostly) */
	struct cg_ent *v;
	size_t n, cap;
	struct hidx idx;
	uint64_t last_walk;
	uint64_t unresolved; /* ids written with no path */
	struct env_label env[ENV_MAX_LABELS];
	size_t nr_env;
	uint64_t env_unread; /* containers whose environment could not be read */
};

static const char *const mode_names[] = {
	[PROFILE_CGROUP_NONE] = "none",	   [PROFILE_CGROUP_V2] = "cgroup2",
	[PROFILE_CGROUP_CPU] = "v1 cpu",   [PROFILE_CGROUP_MEMORY] = "v1 memory",
	[PROFILE_CGROUP_PIDS] = "v1 pids",
};

/* mountinfo's octal escapes (\040 for a space) undone in place. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

/* Whether comma list l has the token t. */
static bool has_token(const char *l, const char *t)
{
	size_t n = strlen(t);

	while (l && *l) {
		if (!strncmp(l, t, n) && (l[n] == ',' || l[n] == '\0'))
			return true;
		l = strchr(l, ',');
		if (l)
			l++;
	}
	return false;
}

/*
 * The hierarchy to name: a v1 controller's where one is mounted (cpu, then memory,
 * then pids), else the unified one; only want's (a PROFILE_CGROUP_*, -1: any).  0
 * (PROFILE_CGROUP_NONE) when no such cgroup file system is mounted.
 */
static int pick_hierarchy(struct rec_cgroups *cg, int want)
{
	static const struct {
		const char *ctrl;
		int mode;
	} v1[] = {{"cpu", PROFILE_CGROUP_CPU},
		  {"memory", PROFILE_CGROUP_MEMORY},
		  {"pids", PROFILE_CGROUP_PIDS}};
	char line[4096], best_root[PATH_MAX] = "", best_mroot[256] = "", v2[PATH_MAX] = "";
	char v2_mroot[256] = "";
	int best = -1, mode = PROFILE_CGROUP_NONE;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return PROFILE_CGROUP_NONE;
	while (fgets(line, sizeof(line), f)) {
		char mroot[256], mpoint[PATH_MAX], fstype[32], super[1024];
		const char *sep = strstr(line, " - ");
		size_t k;

		if (!sep || sscanf(line, "%*s %*s %*s %255s %4095s", mroot, mpoint) != 2 ||
		    sscanf(sep + 3, "%31s %*s %1023s", fstype, super) != 2)
			continue;
		unescape(mpoint);
		unescape(mroot);
		if (!strcmp(fstype, "cgroup2") && !v2[0] &&
		    (want < 0 || want == PROFILE_CGROUP_V2)) {
			snprintf(v2, sizeof(v2), "%s", mpoint);
			snprintf(v2_mroot, sizeof(v2_mroot), "%s", mroot);
			continue;
		}
		if (strcmp(fstype, "cgroup"))
			continue;
		for (k = 0; k < sizeof(v1) / sizeof(v1[0]); k++)
			if (has_token(super, v1[k].ctrl) && (best < 0 || (int)k < best) &&
			    (want < 0 || want == v1[k].mode)) {
				best = k;
				snprintf(best_root, sizeof(best_root), "%s", mpoint);
				snprintf(best_mroot, sizeof(best_mroot), "%s", mroot);
			}
	}
	fclose(f);
	if (best >= 0) {
		mode = v1[best].mode;
		snprintf(cg->ctrl, sizeof(cg->ctrl), "%s", v1[best].ctrl);
		snprintf(cg->root, sizeof(cg->root), "%s", best_root);
		snprintf(cg->mroot, sizeof(cg->mroot), "%s", best_mroot);
	} else if (v2[0]) {
		mode = PROFILE_CGROUP_V2;
		snprintf(cg->root, sizeof(cg->root), "%s", v2);
		snprintf(cg->mroot, sizeof(cg->mroot), "%s", v2_mroot);
	}
	cg->root_len = strlen(cg->root);
	return mode;
}

static bool ent_eq(const void *ctx, uint32_t id, const void *key)
{
	return ((const struct rec_cgroups *)ctx)->v[id].id == *(const uint64_t *)key;
}

static struct cg_ent *ent_find(struct rec_cgroups *cg, uint64_t id)
{
	int64_t i = hidx_find(&cg->idx, hash_mix(0, id), ent_eq, cg, &id);

	return i < 0 ? NULL : &cg->v[i];
}

static struct cg_ent *ent_add(struct rec_cgroups *cg, uint64_t id)
{
	struct cg_ent *e = ent_find(cg, id);

	if (e)
		return e;
	if (cg->n == cg->cap) {
		size_t cap = cg->cap ? 2 * cg->cap : 64;
		struct cg_ent *v = realloc(cg->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		cg->v = v;
		cg->cap = cap;
	}
	if (hidx_insert(&cg->idx, hash_mix(0, id), cg->n))
		return NULL;
	e = &cg->v[cg->n++];
	*e = (struct cg_ent){.id = id};
	return e;
}

/* The inode number of directory root+rel, 0 if none. */
static uint64_t dir_ino(const struct rec_cgroups *cg, const char *rel)
{
	char p[PATH_MAX];
	struct stat st;

	if (snprintf(p, sizeof(p), "%s%s", cg->root, rel) >= (int)sizeof(p) || stat(p, &st) ||
	    !S_ISDIR(st.st_mode))
		return 0;
	return st.st_ino;
}

/* Set e's path to rel, the hierarchy's path ("/" for the root). */
static void ent_set(struct cg_ent *e, const char *rel)
{
	if (!e->path)
		e->path = strdup(rel[0] ? rel : "/");
}

/*
 * The path of pid's cgroup in the hierarchy, relative to its mount, into out (as
 * /proc/PID/cgroup gives it, less the mount's own root).  false if none.
 */
static bool proc_path(const struct rec_cgroups *cg, int mode, pid_t pid, char *out, size_t len)
{
	char file[64], line[4096];
	bool found = false;
	FILE *f;

	snprintf(file, sizeof(file), "/proc/%d/cgroup", (int)pid);
	f = fopen(file, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL, *path;
		size_t mlen = strlen(cg->mroot);

		/* "ID:CONTROLLERS:PATH"; the unified hierarchy's is "0::PATH". */
		if (!c2)
			continue;
		*c1 = '\0';
		*c2 = '\0';
		if (mode == PROFILE_CGROUP_V2 ? strcmp(line, "0") || c1[1]
					      : !has_token(c1 + 1, cg->ctrl))
			continue;
		path = c2 + 1;
		path[strcspn(path, "\n")] = '\0';
		/* Inside a container its mount's root is its own cgroup. */
		if (mlen > 1 && !strncmp(path, cg->mroot, mlen))
			path += mlen;
		snprintf(out, len, "%s", path);
		found = true;
	}
	fclose(f);
	return found;
}

/* Every directory of the hierarchy by inode into cg (bounded in depth and count). */
static void walk(struct rec_cgroups *cg, char *rel, size_t len, int depth, size_t *dirs)
{
	char p[PATH_MAX];
	struct dirent *d;
	DIR *dir;

	if (depth > WALK_MAX_DEPTH || *dirs >= WALK_MAX_DIRS)
		return;
	if (snprintf(p, sizeof(p), "%s%s", cg->root, rel) >= (int)sizeof(p))
		return;
	dir = opendir(p);
	if (!dir)
		return;
	while ((d = readdir(dir)) && *dirs < WALK_MAX_DIRS) {
		size_t n = strlen(d->d_name);
		struct cg_ent *e;

		if (d->d_type != DT_DIR || d->d_name[0] == '.' || len + 1 + n >= PATH_MAX)
			continue;
		(*dirs)++;
		rel[len] = '/';
		memcpy(rel + len + 1, d->d_name, n + 1);
		e = ent_add(cg, d->d_ino);
		if (e)
			ent_set(e, rel);
		walk(cg, rel, len + 1 + n, depth + 1, dirs);
		rel[len] = '\0';
	}
	closedir(dir);
}

/* --label-env's LABEL=VAR[,...] into cg->env.  0 or -EINVAL (said). */
static int parse_label_env(struct rec_cgroups *cg, const char *spec)
{
	const char *p = spec;

	while (*p) {
		size_t n = strcspn(p, ","), k = strcspn(p, "=");
		struct env_label *e = &cg->env[cg->nr_env];
		size_t i;

		if (k >= n || !k || k + 1 == n || k >= sizeof(e->key) ||
		    n - k - 1 >= sizeof(e->var) || cg->nr_env == ENV_MAX_LABELS) {
			pa_err("bad --label-env '%s'; give up to %d LABEL=VARIABLE, e.g. "
			       "pod_name=POD_NAME",
			       spec, ENV_MAX_LABELS);
			return -EINVAL;
		}
		for (i = 0; i < k; i++)
			if (!(p[i] == '_' || (p[i] >= 'a' && p[i] <= 'z') ||
			      (p[i] >= '0' && p[i] <= '9'))) {
				pa_err("bad --label-env label '%.*s'; use lowercase letters, "
				       "digits "
				       "and _",
				       (int)k, p);
				return -EINVAL;
			}
		memcpy(e->key, p, k);
		e->key[k] = '\0';
		memcpy(e->var, p + k + 1, n - k - 1);
		e->var[n - k - 1] = '\0';
		cg->nr_env++;
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

/*
 * The --label-env labels of pid's environment into out as "pa-labels\0K=V\0...\0"
 * (PERF_RECORD_CGROUP's labels after the path, perfdata/event.h): its length, 0 when
 * no variable is set.  Only the variables asked for are kept: an environment holds
 * secrets, and the copy read is wiped.
 */
static size_t env_labels(struct rec_cgroups *cg, pid_t pid, char *out, size_t room)
{
	static const char magic[] = "pa-labels";
	char path[64], *buf;
	size_t len = 0, at, i, n = sizeof(magic);
	ssize_t r;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		cg->env_unread++;
		return 0;
	}
	buf = malloc(ENV_MAX_BYTES);
	if (buf) {
		while (len < ENV_MAX_BYTES && (r = read(fd, buf + len, ENV_MAX_BYTES - len)) > 0)
			len += r;
	}
	close(fd);
	if (!buf)
		return 0;
	memcpy(out, magic, sizeof(magic));
	for (at = 0; at < len; at += strnlen(buf + at, len - at) + 1) {
		const char *var = buf + at;
		size_t vlen = strnlen(var, len - at);

		for (i = 0; i < cg->nr_env; i++) {
			size_t k = strlen(cg->env[i].var), klen = strlen(cg->env[i].key), v;
			const char *val = var + k + 1;

			if (vlen <= k || strncmp(var, cg->env[i].var, k) || var[k] != '=')
				continue;
			v = strnlen(val, vlen - k - 1);
			if (v > ENV_MAX_VALUE)
				v = ENV_MAX_VALUE;
			if (!v || n + klen + 1 + v + 2 > room)
				continue;
			memcpy(out + n, cg->env[i].key, klen);
			out[n + klen] = '=';
			memcpy(out + n + klen + 1, val, v);
			/* Printable only: a value is shown as it is. */
			for (size_t j = 0; j < v; j++)
				if ((unsigned char)out[n + klen + 1 + j] < ' ')
					out[n + klen + 1 + j] = '?';
			n += klen + 1 + v;
			out[n++] = '\0';
		}
	}
	explicit_bzero(buf, len);
	free(buf);
	if (n == sizeof(magic))
		return 0;
	out[n++] = '\0';
	return n;
}

int rec_cgroups_init(struct rec_session *s)
{
	/* Tests: PA_RECORD_CGROUP names the hierarchy (cgroup2 with v1 mounted too). */
	const char *env = getenv("PA_RECORD_CGROUP");
	struct rec_cgroups *cg;
	int want = -1;

	s->cgroup_mode = PROFILE_CGROUP_NONE;
	if (s->opts.no_cgroups)
		return 0;
	if (env && *env) {
		for (want = 1; want <= PROFILE_CGROUP_PIDS; want++)
			if (!strcmp(env, mode_names[want]))
				break;
		if (want > PROFILE_CGROUP_PIDS) {
			pa_err("PA_RECORD_CGROUP=%s: unknown; use cgroup2, v1 cpu, v1 memory or "
			       "v1 pids",
			       env);
			return -EINVAL;
		}
	}
	cg = calloc(1, sizeof(*cg));
	if (!cg)
		return -ENOMEM;
	s->cg = cg;
	if (parse_label_env(cg, s->opts.label_env ? s->opts.label_env : ENV_DEFAULT))
		return -EINVAL;
	s->cgroup_mode = pick_hierarchy(cg, want);
	if (s->opts.verbose)
		pa_info("cgroups: %s%s%s", mode_names[s->cgroup_mode], cg->root[0] ? " at " : "",
			cg->root);
	if (s->opts.cgroups && s->cgroup_mode == PROFILE_CGROUP_NONE) {
		pa_err("-G: no cgroup file system is mounted here; mount one (mount -t cgroup2 "
		       "none /sys/fs/cgroup) or leave -G out");
		return -ENOENT;
	}
	return 0;
}

size_t rec_cgroups_allow_count(const struct rec_session *s)
{
	const char *p = s->opts.cgroups;
	size_t n = 1;

	if (!p)
		return 0;
	for (; *p; p++)
		n += *p == ',';
	return n;
}

int rec_cgroups_allow(struct rec_session *s)
{
	struct rec_cgroups *cg = s->cg;
	char *list, *tok, *save = NULL;
	int err = 0;

	if (!s->opts.cgroups)
		return 0;
	list = strdup(s->opts.cgroups);
	if (!list)
		return -ENOMEM;
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char rel[PATH_MAX];
		uint64_t id;
		uint8_t one = 1;

		/* As perf -G: relative to the hierarchy's root, with or without the slash. */
		snprintf(rel, sizeof(rel), "%s%s", tok[0] == '/' ? "" : "/", tok);
		id = dir_ino(cg, rel);
		if (!id) {
			pa_err("-G: no cgroup %s in %s (%s); give a path like "
			       "/kubepods/burstable/pod<uid>",
			       rel, cg->root, mode_names[s->cgroup_mode]);
			err = -ENOENT;
			break;
		}
		if (bpf_map__update_elem(s->skel->maps.cgroup_allow, &id, sizeof(id), &one,
					 sizeof(one), BPF_ANY)) {
			err = -errno;
			pa_err("-G: cannot add %s to the BPF filter: %s", rel, strerror(-err));
			break;
		}
	}
	free(list);
	return err;
}

/* The path of id, found from pid's /proc or a walk of the hierarchy; NULL if none. */
static const char *resolve(struct rec_session *s, struct cg_ent *e, pid_t pid)
{
	struct rec_cgroups *cg = s->cg;
	struct cg_ent *root;
	char rel[PATH_MAX];
	uint64_t now, id = e->id;
	size_t dirs = 0;

	if (e->path)
		return e->path;
	now = pa_now_ns();
	if (e->tried && now - e->tried < RETRY_NS)
		return NULL;
	e->tried = now;
	if (proc_path(cg, s->cgroup_mode, pid, rel, sizeof(rel)) && dir_ino(cg, rel) == e->id) {
		ent_set(e, rel);
		return e->path;
	}
	if (cg->last_walk && now - cg->last_walk < WALK_EVERY_NS)
		return NULL;
	cg->last_walk = now;
	root = ent_add(cg, dir_ino(cg, ""));
	if (root)
		ent_set(root, "/");
	rel[0] = '\0';
	walk(cg, rel, 0, 0, &dirs);
	e = ent_find(cg, id); /* the table may have moved */
	return e ? e->path : NULL;
}

uint64_t rec_cgroup_of(struct rec_session *s, pid_t pid, pid_t tid, uint64_t time, uint64_t id)
{
	struct rec_cgroups *cg = s->cg;
	struct pd_sample_id sid;
	const char *path;
	struct cg_ent *e;
	struct container_info ci;
	char unknown[40], labels[2048] = "";
	size_t nl = 0;

	if (!cg || !id || !s->cgroup_mode)
		return id;
	e = ent_add(cg, id);
	if (!e || e->written)
		return id;
	if (!e->since)
		e->since = pa_now_ns();
	path = resolve(s, e, pid);
	e = ent_find(cg, id);
	if (!e)
		return id;
	if (!path) {
		/* Its process gone before it was looked up: the next walks of the hierarchy
		 * find it, unless the cgroup went too.  Then perf shows the id, as we do. */
		if (pa_now_ns() - e->since < GIVE_UP_NS)
			return id;
		snprintf(unknown, sizeof(unknown), "cgroup-%llu", (unsigned long long)id);
		path = unknown;
		cg->unresolved++;
	}
	/* A container's: the labels its environment gives. */
	if (path != unknown && cg->nr_env && !container_parse(path, &ci)) {
		if (rec_may_profile(s, pid))
			nl = env_labels(cg, pid, labels, sizeof(labels));
		else
			cg->env_unread++;
	}
	rec_sid(s, &sid, pid, tid, time > RECORD_LEAD_NS ? time - RECORD_LEAD_NS : 0, -1);
	if (pd_write_cgroup_labels(s->w, id, path, nl ? labels : NULL, nl, &sid))
		return id;
	e->written = true;
	s->records_in_round++;
	return id;
}

int rec_cgroups_finish(struct rec_session *s)
{
	struct rec_cgroups *cg = s->cg;
	struct pd_sample_id sid;
	size_t i, dirs = 0;
	char rel[PATH_MAX] = "", unknown[40];
	int err;

	if (!cg)
		return 0;
	for (i = 0; i < cg->n && (cg->v[i].written || !cg->v[i].since); i++)
		;
	if (i == cg->n)
		return 0;
	/* Ids samples carried but not resolved yet: one more walk, then their records. */
	walk(cg, rel, 0, 0, &dirs);
	for (i = 0; i < cg->n; i++) {
		struct cg_ent *e = &cg->v[i];
		const char *path = e->path;

		if (e->written || !e->since)
			continue;
		if (!path) {
			snprintf(unknown, sizeof(unknown), "cgroup-%llu",
				 (unsigned long long)e->id);
			path = unknown;
			cg->unresolved++;
		}
		rec_sid(s, &sid, 0, 0, pa_now_ns(), -1);
		err = pd_write_cgroup(s->w, e->id, path, &sid);
		if (err)
			return err;
		e->written = true;
		s->records_in_round++;
	}
	return 0;
}

void rec_cgroups_summary(const struct rec_session *s)
{
	if (s->cg && s->cg->env_unread && s->opts.verbose)
		pa_info("--label-env: %llu containers' environments could not be read",
			(unsigned long long)s->cg->env_unread);
	if (s->cg && s->cg->unresolved)
		pa_warn("%llu cgroups were gone before their path was read: named by id",
			(unsigned long long)s->cg->unresolved);
}

void rec_cgroups_free(struct rec_session *s)
{
	struct rec_cgroups *cg = s->cg;
	size_t i;

	if (!cg)
		return;
	for (i = 0; i < cg->n; i++)
		free(cg->v[i].path);
	free(cg->v);
	hidx_free(&cg->idx);
	free(cg);
	s->cg = NULL;
}
