// SPDX-License-Identifier: Apache-2.0
/*
 * Who a user may profile (docs/privileges.md).  pa-record may run with file
 * capabilities (make setcap), which pass every kernel check it meets on the way to
 * another process; this is the rule that makes them safe to grant.  A user whose
 * real uid is not 0 profiles only their own processes, as perf lets them, unless the
 * administrator allows more: a group named perf-agent, or PA_CONF_FILE.  Root is not
 * restricted, nor is a pa-record without capabilities (the kernel restricts that one).
 */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build_conf.h" /* $(O)/gen: PA_CONF_FILE, from the Makefile */
#include "profile.skel.h"
#include "record.h"
#include "base/util.h"

#ifndef PA_CONF_FILE /* for cppcheck, which lints without a build directory */
#define PA_CONF_FILE "/etc/perf-agent.conf"
#endif

/* Its members are allowed, with or without a config file. */
#define PRIV_GROUP "perf-agent"

#define ASK_ADMIN                                                                                  \
	"ask an administrator to allow you (group " PRIV_GROUP ", or allow-users or "              \
	"allow-group in " PA_CONF_FILE ")"

/* The user, as the allow lists name them. */
struct priv_user {
	uid_t uid;
	gid_t gid; /* the primary group in the user database */
	char name[LOGIN_NAME_MAX + 1];
};

/* name as a number into *id; false if it is not one. */
static bool parse_id(const char *name, unsigned long *id)
{
	char *end;

	if (*name < '0' || *name > '9')
		return false;
	errno = 0;
	*id = strtoul(name, &end, 10);
	return !*end && !errno;
}

/* Whether the user is a member of group (by name or gid): in this process's groups,
 * or in the user database. */
static bool in_group(const struct priv_user *u, const char *group)
{
	const struct group *gr = getgrnam(group);
	unsigned long gid;
	bool member = false;
	gid_t *gids;
	int n, i;

	if (gr)
		gid = gr->gr_gid;
	else if (!parse_id(group, &gid))
		return false;
	if (getgid() == gid || u->gid == gid)
		return true;
	for (i = 0; gr && u->name[0] && gr->gr_mem[i]; i++)
		if (!strcmp(gr->gr_mem[i], u->name))
			return true;
	n = getgroups(0, NULL);
	gids = n > 0 ? calloc(n, sizeof(*gids)) : NULL;
	if (gids)
		n = getgroups(n, gids);
	for (i = 0; gids && i < n && !member; i++)
		member = gids[i] == gid;
	free(gids);
	return member;
}

/* Whether the comma list names the user (users) or a group of theirs. */
static bool list_allows(const struct priv_user *u, char *list, bool users)
{
	char *tok, *save = NULL;

	for (tok = strtok_r(list, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
		unsigned long id;

		if (users &&
		    ((u->name[0] && !strcmp(tok, u->name)) || (parse_id(tok, &id) && id == u->uid)))
			return true;
		if (!users && in_group(u, tok))
			return true;
	}
	return false;
}

static char *trim(char *s)
{
	char *e = s + strlen(s);

	while (*s == ' ' || *s == '\t')
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/*
 * Whether PA_CONF_FILE allows the user: "allow-users = NAME, ..." or
 * "allow-group = GROUP, ...".  Other keys are left to the other commands that may
 * share the file.  A file that root does not own, or that others may write, is not
 * trusted.
 */
static bool conf_allows(const struct priv_user *u)
{
	char line[4096];
	struct stat st;
	bool ok = false;
	int nr = 0;
	FILE *f = fopen(PA_CONF_FILE, "re");

	if (!f) {
		if (errno != ENOENT)
			pa_warn("cannot read %s: %s; make it readable by all (chmod 644)",
				PA_CONF_FILE, strerror(errno));
		return false;
	}
	if (fstat(fileno(f), &st) || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		pa_warn("%s is ignored: root must own it and only root may write it (chown "
			"root: and chmod 644 it)",
			PA_CONF_FILE);
		fclose(f);
		return false;
	}
	while (!ok && fgets(line, sizeof(line), f)) {
		char *l = line, *eq, *key;

		nr++;
		l[strcspn(l, "#")] = '\0';
		l = trim(l);
		if (!*l)
			continue;
		eq = strchr(l, '=');
		if (!eq) {
			pa_warn("%s:%d: not KEY = VALUE; ignored", PA_CONF_FILE, nr);
			continue;
		}
		*eq = '\0';
		key = trim(l);
		if (!strcmp(key, "allow-users"))
			ok = list_allows(u, eq + 1, true);
		else if (!strcmp(key, "allow-group"))
			ok = list_allows(u, eq + 1, false);
	}
	fclose(f);
	return ok;
}

/*
 * Whether pid is the user's own: every uid of its Uid line (real, effective, saved,
 * filesystem) is theirs, and so is the status file itself, which the kernel gives to
 * root while the process is not dumpable (it runs a setuid, setgid or file-capability
 * program, or asked so).  The /proc/PID directory would not say: it always shows the
 * effective ids.  0, -ESRCH (gone), -EPERM (*other: a uid of its not ours) or -EACCES
 * (not dumpable).
 */
static int own_process(uid_t uid, pid_t pid, uid_t *other)
{
	unsigned int id[4];
	char path[64], line[256];
	struct stat st;
	bool found = false;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	if (fstat(fileno(f), &st)) {
		fclose(f);
		return -ESRCH;
	}
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "Uid: %u %u %u %u", &id[0], &id[1], &id[2], &id[3]) == 4;
	fclose(f);
	if (!found)
		return -ESRCH;
	for (i = 0; i < 4; i++)
		if (id[i] != uid) {
			*other = id[i];
			return -EPERM;
		}
	return st.st_uid == uid ? 0 : -EACCES;
}

int rec_priv_init(struct rec_session *s)
{
	const struct passwd *pw;
	struct priv_user u = {.uid = getuid(), .gid = getgid()};
	size_t i;

	s->priv.uid = u.uid;
	s->priv.all = true;
	if (u.uid == 0)
		return 0;
	/* Installed setuid, it would write its files as another user. */
	if (geteuid() != u.uid || getegid() != getgid()) {
		pa_err("pa-record runs setuid or setgid; remove that (chmod ug-s) and grant it "
		       "file capabilities instead (make setcap)");
		return -EPERM;
	}
	if (!rec_caps_held())
		return 0;
	pw = getpwuid(u.uid);
	if (pw) {
		snprintf(u.name, sizeof(u.name), "%s", pw->pw_name);
		u.gid = pw->pw_gid;
	}
	if (in_group(&u, PRIV_GROUP) || conf_allows(&u))
		return 0;
	s->priv.all = false;
	if (s->opts.system_wide) {
		pa_err("-a profiles every user's processes, and only root or an allowed user may; "
		       "profile your own with -p PID or -- CMD, or " ASK_ADMIN);
		return -EPERM;
	}
	for (i = 0; i < s->opts.nr_pids; i++) {
		pid_t pid = s->opts.pids[i];
		uid_t other = 0;

		switch (own_process(u.uid, pid, &other)) {
		case 0:
			break;
		case -ESRCH:
			pa_err("no process with PID %d", pid);
			return -ESRCH;
		case -EPERM:
			pa_err("process %d is another user's (uid %u): you may profile only your "
			       "own "
			       "processes; " ASK_ADMIN,
			       pid, (unsigned int)other);
			return -EPERM;
		default:
			pa_err("process %d is not dumpable (it runs a setuid, setgid or "
			       "file-capability program, or asked so): only root or an allowed "
			       "user may profile it; " ASK_ADMIN,
			       pid);
			return -EPERM;
		}
	}
	return 0;
}

bool rec_may_profile(const struct rec_session *s, pid_t pid)
{
	uid_t other;

	return s->priv.all || !own_process(s->priv.uid, pid, &other);
}

bool rec_priv_exec(struct rec_session *s, pid_t pid)
{
	uint32_t key = pid;
	uint8_t v;

	if (s->priv.all ||
	    bpf_map__lookup_elem(s->skel->maps.exec_denied, &key, sizeof(key), &v, sizeof(v), 0))
		return false;
	bpf_map__delete_elem(s->skel->maps.exec_denied, &key, sizeof(key), 0);
	pidset_del(&s->targets, pid);
	rec_python_gone(s, pid);
	s->priv.denied++;
	if (s->opts.verbose)
		pa_info("process %d ran a setuid, setgid or file-capability program: not "
			"followed from here",
			pid);
	return true;
}
