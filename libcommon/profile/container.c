// SPDX-License-Identifier: Apache-2.0
/*
 * cgroup path -> container and pod, one path component at a time, left to right, so
 * that what is named further in (the innermost container, a pod inside a kind node)
 * replaces what was named further out.  Components are spans of the caller's string:
 * nothing is copied until a whole id or UID has been checked.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "profile/container.h"

/* n bytes at p, no '/' among them. */
struct span {
	const char *p;
	size_t n;
};

/* Where the walk stands. */
struct cwalk {
	struct container_info *ci;
	bool k8s;	   /* inside a kubepods hierarchy */
	const char *level; /* its QoS level so far; NULL: none named, i.e. guaranteed */
	struct span prev;  /* the component before this one */
};

/* Runtimes by the prefix of their scope (systemd) or cgroup (cgroupfs) names. */
static const struct {
	const char *prefix, *runtime;
} container_scopes[] = {
	{"docker-", "docker"},	    {"cri-containerd-", "containerd"},
	{"nerdctl-", "containerd"}, {"crio-", "cri-o"},
	{"libpod-", "podman"},
};

static bool span_eq(struct span s, const char *lit)
{
	size_t n = strlen(lit);

	return s.n == n && !memcmp(s.p, lit, n);
}

static bool cut_prefix(struct span *s, const char *lit)
{
	size_t n = strlen(lit);

	if (s->n < n || memcmp(s->p, lit, n))
		return false;
	s->p += n;
	s->n -= n;
	return true;
}

static bool cut_suffix(struct span *s, const char *lit)
{
	size_t n = strlen(lit);

	if (s->n < n || memcmp(s->p + s->n - n, lit, n))
		return false;
	s->n -= n;
	return true;
}

/* Lowercase only: runtimes never write uppercase ids, so such a name is something else. */
static bool lower_hex(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
			return false;
	return true;
}

static bool is_id(struct span s)
{
	return s.n == CONTAINER_ID_LEN && lower_hex(s.p, s.n);
}

/*
 * A pod UID as the kubelet puts it after "pod": 8-4-4-4-12 hex groups joined by '-'
 * (cgroupfs) or '_' (systemd, where '-' separates the slice's levels), or 32 hex
 * without separators (static pods: an md5 sum).  Dashed into out.
 */
static bool pod_uid(struct span s, char out[CONTAINER_POD_UID_LEN + 1])
{
	static const size_t groups[] = {8, 4, 4, 4, 12};
	size_t at = 0, o = 0;
	char sep = 0;

	if (s.n != 32 && s.n != CONTAINER_POD_UID_LEN)
		return false;
	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
		if (g && s.n == CONTAINER_POD_UID_LEN) {
			char c = s.p[at++];

			if ((c != '-' && c != '_') || (sep && c != sep))
				return false;
			sep = c;
		}
		if (!lower_hex(s.p + at, groups[g]))
			return false;
		if (g)
			out[o++] = '-';
		memcpy(out + o, s.p + at, groups[g]);
		o += groups[g];
		at += groups[g];
	}
	out[o] = '\0';
	return true;
}

static void info_clear(struct container_info *ci)
{
	memset(ci, 0, sizeof(*ci));
	ci->runtime = "";
	ci->qos = "";
}

static void set_id(struct container_info *ci, struct span id, const char *runtime)
{
	memcpy(ci->id, id.p, CONTAINER_ID_LEN);
	ci->id[CONTAINER_ID_LEN] = '\0';
	memcpy(ci->short_id, id.p, CONTAINER_SHORT_ID_LEN);
	ci->short_id[CONTAINER_SHORT_ID_LEN] = '\0';
	ci->runtime = runtime;
}

/* The kubelet's level below kubepods, or NULL. */
static const char *qos_level(struct span s)
{
	if (span_eq(s, "burstable"))
		return "burstable";
	if (span_eq(s, "besteffort"))
		return "besteffort";
	return NULL;
}

static void enter_k8s(struct cwalk *w)
{
	info_clear(w->ci);
	w->k8s = true;
	w->level = NULL;
}

static bool set_pod(struct cwalk *w, struct span uid)
{
	char out[CONTAINER_POD_UID_LEN + 1];

	if (!pod_uid(uid, out))
		return false;
	memcpy(w->ci->pod_uid, out, sizeof(out));
	w->ci->qos = w->level ? w->level : "guaranteed";
	return true;
}

/*
 * systemd driver: kubepods.slice, kubepods-burstable.slice,
 * kubepods-burstable-pod<u_i_d>.slice; kind names them kubelet-kubepods-....  Each level
 * repeats its parents' names, so the last name alone says where we are.  Whether c was
 * one of them.
 */
static bool kube_slice(struct cwalk *w, struct span c)
{
	struct span tok[8], rest;
	size_t nt = 0, k;
	const char *level = NULL;
	bool pod = false;

	if (!cut_suffix(&c, ".slice"))
		return false;
	rest = c;
	for (;;) {
		const char *dash = memchr(rest.p, '-', rest.n);
		size_t n = dash ? (size_t)(dash - rest.p) : rest.n;

		if (nt == sizeof(tok) / sizeof(tok[0]))
			return false; /* more levels than any kubelet makes */
		tok[nt++] = (struct span){rest.p, n};
		if (!dash)
			break;
		rest.p += n + 1;
		rest.n -= n + 1;
	}
	for (k = 0; k < nt && !span_eq(tok[k], "kubepods"); k++)
		;
	if (k == nt)
		return false;
	/* What follows kubepods must be a level, then a pod; anything else is not ours. */
	for (size_t i = k + 1; i < nt; i++) {
		struct span t = tok[i];

		if (i == k + 1 && (level = qos_level(t)))
			continue;
		if (i != nt - 1 || !cut_prefix(&t, "pod"))
			return false;
		pod = true;
	}
	/* kubepods.slice, or the first kubepods level seen: a new hierarchy starts. */
	if (k + 1 == nt || !w->k8s)
		enter_k8s(w);
	if (level)
		w->level = level;
	if (pod) {
		struct span t = tok[nt - 1];

		cut_prefix(&t, "pod");
		set_pod(w, t);
	}
	return true;
}

/* cgroupfs driver: kubepods, burstable|besteffort, pod<uid>.  Whether c was one. */
static bool kube_dir(struct cwalk *w, struct span c)
{
	const char *level;

	if (span_eq(c, "kubepods")) {
		enter_k8s(w);
		return true;
	}
	if (!w->k8s)
		return false;
	if (span_eq(w->prev, "kubepods") && (level = qos_level(c))) {
		w->level = level;
		return true;
	}
	return cut_prefix(&c, "pod") && set_pod(w, c);
}

static void component(struct cwalk *w, struct span c)
{
	struct span s = c;

	if (kube_slice(w, c) || kube_dir(w, c))
		return;
	if (is_id(c)) {
		/* cgroupfs: /docker/<id>; under a pod the runtime is not named. */
		set_id(w->ci, c, span_eq(w->prev, "docker") ? "docker" : "");
		return;
	}
	cut_suffix(&s, ".scope");
	/* crio-conmon-<id>, libpod-conmon-<id>: the container's monitor, beside it, is not the
	 * container, and "conmon-<id>" is no id. */
	for (size_t i = 0; i < sizeof(container_scopes) / sizeof(container_scopes[0]); i++) {
		struct span id = s;

		if (cut_prefix(&id, container_scopes[i].prefix) && is_id(id)) {
			set_id(w->ci, id, container_scopes[i].runtime);
			return;
		}
	}
}

int container_parse(const char *cgroup_path, struct container_info *ci)
{
	struct cwalk w = {.ci = ci};
	size_t len, i = 0;

	if (!cgroup_path || !ci)
		return -EINVAL;
	info_clear(ci);
	len = strlen(cgroup_path);
	while (i < len) {
		const char *slash = memchr(cgroup_path + i, '/', len - i);
		size_t end = slash ? (size_t)(slash - cgroup_path) : len;
		struct span c = {cgroup_path + i, end - i};

		if (c.n) {
			component(&w, c);
			w.prev = c;
		}
		i = end + 1;
	}
	return ci->id[0] || ci->pod_uid[0] ? 0 : -ENOENT;
}

const char *container_short_id(const struct container_info *ci)
{
	return ci->short_id;
}
