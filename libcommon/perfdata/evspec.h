/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Event specs as perf's -e names them, into perf_event_attr: a comma-separated list of
 *
 *	cpu-clock, page-faults, ...        software events (perf list's names and aliases)
 *	cycles, instructions, ...          hardware events
 *	L1-dcache-load-misses, LLC-loads   hardware cache events: TYPE[-OP][-RESULT] with
 *	                                   perf 6.1's aliases (l1d, L2, dTLB, branches...)
 *	r1a8                               raw: PERF_TYPE_RAW, config in hex
 *	PMU/term=value,.../, PMU/alias/    a PMU of sysfs: its type, format/ and events/
 *	sched:sched_wakeup                 a tracepoint: its id in tracefs
 *
 * each followed by ":MODS" (after ".../": MODS right after the closing '/'), MODS being
 * u, k, h (count only user, kernel, hypervisor; combined they add up) and p, pp, ppp
 * (precise_ip).  Symbolic and cache names also take "/period=N,name=S/".  A PMU event
 * takes its format terms, the aliases of its events/ folder, and the generic terms
 * config=, config1=, config2= (whole words), period= and name=; a format term without
 * "=value" is 1, and a later term overwrites the bits an earlier one set.
 * Unlike perf: no groups ({a,b}), no wildcards, no PMU name prefix matching, no
 * modifiers beyond u/k/h/p (G, H, P, S, D, I, W, e, b), and
 * "L1-dcache-loads-stores" (two operations) is refused where perf ignores the second.
 */
#ifndef PA_EVSPEC_H
#define PA_EVSPEC_H

#include <stddef.h>
#include <stdint.h>

#include "perfdata/perfdata.h"

#define EVSPEC_MAX	16  /* events one list may name */
#define EVSPEC_NAME_MAX 128 /* an event as written, NUL included */

/* Where PMUs and tracepoints are described; a NULL field is the default. */
struct evspec_env {
	const char *sysfs;   /* NULL: /sys/bus/event_source/devices */
	const char *tracefs; /* NULL: /sys/kernel/tracing, then /sys/kernel/debug/tracing */
};

struct evspec {
	char name[EVSPEC_NAME_MAX]; /* as written, modifiers included, or its name= term:
				       what perf.data's EVENT_DESC calls it */
	/* type, config, config1, config2, exclude_user/kernel/hv, precise_ip and size
	   are set, the rest zero: sampling and enabling are the caller's. */
	struct perf_event_attr attr;
	uint64_t period; /* its period= term; 0: none, the caller's -c or -F applies */
};

/*
 * Parse list into *out (malloc'ed, *nr entries, free() it).  0, or -EINVAL with err
 * holding one line that names the bad part and what to write instead (unknown name,
 * term, PMU or modifier; bad raw or value; tracefs not mounted...), or -ENOMEM.
 * env may be NULL (defaults); err may be NULL.
 */
int evspec_parse(const char *list, const struct evspec_env *env, struct evspec **out, size_t *nr,
		 char *err, size_t errlen);

/*
 * Into buf, comma-separated: the symbolic and cache events that perf_event_open takes
 * here (probed on this thread with exclude_kernel, so unprivileged works), then
 * "PMU/alias/" for every alias in sysfs and "PMU//" for a PMU without any (software,
 * tracepoint, breakpoint, kprobe and uprobe left out).  Tracepoints are not listed.
 * Names that do not fit are left out and the list ends in "...".  Returns how many
 * names are listed, or -EINVAL when buf has no room.
 */
int evspec_available(const struct evspec_env *env, char *buf, size_t len);

/*
 * Why ev cannot be opened for want of its PMU, or NULL when that is not the reason:
 * a hardware, cache or raw event on a machine whose sysfs shows no core PMU ("cpu",
 * or one with a cpus file, as hybrid x86 and arm64 have).  A static string.
 */
const char *evspec_missing_pmu(const struct evspec *ev, const struct evspec_env *env);

#endif /* PA_EVSPEC_H */
