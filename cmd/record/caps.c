// SPDX-License-Identifier: Apache-2.0
/*
 * Privilege and kernel-feature checks, done before anything is loaded so that a
 * missing capability is one clear line instead of a libbpf error dump.
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "build_conf.h" /* $(O)/gen: PA_SETCAP_CAPS, from the Makefile's SETCAP_CAPS */
#include "record.h"
#include "base/util.h"

#ifndef PA_SETCAP_CAPS /* for cppcheck, which lints without a build directory */
#define PA_SETCAP_CAPS "cap_bpf,cap_perfmon,cap_sys_ptrace,cap_syslog,cap_checkpoint_restore+ep"
#endif

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/* capget(2) without libcap: the effective and permitted sets, two 32-bit words (v3). */
static int read_caps(uint64_t *eff, uint64_t *prm)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	*eff = (uint64_t)data[1].effective << 32 | data[0].effective;
	*prm = (uint64_t)data[1].permitted << 32 | data[0].permitted;
	return 0;
}

bool rec_caps_held(void)
{
	uint64_t eff = 0, prm = 0;

	return read_caps(&eff, &prm) || eff || prm;
}

int rec_caps_drop(void)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2] = {};

	/* Ambient capabilities came before 4.3: EINVAL there means there are none. */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL)
		return -errno;
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	return 0;
}

static bool has(uint64_t eff, int cap)
{
	return eff & (1ULL << cap);
}

int rec_check_privileges(const struct rec_opts *o)
{
	uint64_t eff = 0, prm;
	int err;

	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		pa_err("/sys/kernel/btf/vmlinux not found: kernel built without "
		       "CONFIG_DEBUG_INFO_BTF; "
		       "use a kernel with BTF (5.8+ with CONFIG_DEBUG_INFO_BTF=y)");
		return -ENOENT;
	}

	err = read_caps(&eff, &prm);
	if (err) {
		pa_err("cannot read process capabilities: %s", strerror(-err));
		return err;
	}
	/* Before 5.8 CAP_SYS_ADMIN was the only way; it still implies both. */
	if (!has(eff, CAP_SYS_ADMIN) && !(has(eff, CAP_BPF) && has(eff, CAP_PERFMON))) {
		pa_err("missing CAP_BPF and CAP_PERFMON (need root, or: sudo setcap " PA_SETCAP_CAPS
		       " pa-record)");
		return -EPERM;
	}
	if (!has(eff, CAP_SYSLOG) && !has(eff, CAP_SYS_ADMIN) && !o->no_kernel)
		pa_warn("no CAP_SYSLOG: /proc/kallsyms hides addresses, kernel frames will stay "
			"unnamed (grant cap_syslog or use --no-kernel)");
	if (!has(eff, CAP_SYS_PTRACE) && (o->system_wide || o->nr_pids))
		pa_warn("no CAP_SYS_PTRACE: build-ids of other users' binaries may be missing");
	return 0;
}

/* Whether BPF programs can be loaded here (BTF and the capabilities), silently. */
bool rec_can_bpf(void)
{
	uint64_t eff = 0, prm;

	if (access("/sys/kernel/btf/vmlinux", R_OK) || read_caps(&eff, &prm))
		return false;
	return has(eff, CAP_SYS_ADMIN) || (has(eff, CAP_BPF) && has(eff, CAP_PERFMON));
}
