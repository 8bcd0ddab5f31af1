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
#include <sys/syscall.h>
#include <unistd.h>

#include "record.h"
#include "base/util.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/* capget(2) without libcap: the effective set, two 32-bit words (v3). */
static int effective_caps(uint64_t *eff)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	*eff = (uint64_t)data[1].effective << 32 | data[0].effective;
	return 0;
}

static bool has(uint64_t eff, int cap)
{
	return eff & (1ULL << cap);
}

int rec_check_privileges(const struct rec_opts *o)
{
	uint64_t eff = 0;
	int err;

	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		pa_err("/sys/kernel/btf/vmlinux not found: kernel built without "
		       "CONFIG_DEBUG_INFO_BTF; "
		       "use a kernel with BTF (5.8+ with CONFIG_DEBUG_INFO_BTF=y)");
		return -ENOENT;
	}

	err = effective_caps(&eff);
	if (err) {
		pa_err("cannot read process capabilities: %s", strerror(-err));
		return err;
	}
	/* Before 5.8 CAP_SYS_ADMIN was the only way; it still implies both. */
	if (!has(eff, CAP_SYS_ADMIN) && !(has(eff, CAP_BPF) && has(eff, CAP_PERFMON))) {
		pa_err("missing CAP_BPF and CAP_PERFMON (need root, or: sudo setcap "
		       "cap_bpf,cap_perfmon,cap_sys_ptrace,cap_syslog,cap_checkpoint_restore+ep "
		       "pa-record)");
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
	uint64_t eff = 0;

	if (access("/sys/kernel/btf/vmlinux", R_OK) || effective_caps(&eff))
		return false;
	return has(eff, CAP_SYS_ADMIN) || (has(eff, CAP_BPF) && has(eff, CAP_PERFMON));
}
