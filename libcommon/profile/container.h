/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which container, and which Kubernetes pod, a cgroup path names: the path part of a
 * /proc/PID/cgroup line (v1 or v2) or of a PERF_RECORD_CGROUP, as docker, containerd,
 * CRI-O, podman and the kubelet (cgroupfs and systemd drivers) name their cgroups:
 *
 *	/kubepods/burstable/pod<uid>/<id>
 *	/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod<u_i_d>.slice/
 *		cri-containerd-<id>.scope
 *	/system.slice/docker-<id>.scope, /docker/<id>, /machine.slice/libpod-<id>.scope
 *
 * Pure string code; the path is read up to its NUL and no further.
 */
#ifndef PA_CONTAINER_H
#define PA_CONTAINER_H

#define CONTAINER_ID_LEN       64 /* lowercase hex */
#define CONTAINER_SHORT_ID_LEN 12 /* what docker ps shows */
#define CONTAINER_POD_UID_LEN  36 /* 8-4-4-4-12 lowercase hex */

struct container_info {
	/* "docker", "containerd", "cri-o", "podman"; "" when the path does not say (a bare
	 * id under /kubepods is any of them). Never NULL after container_parse. */
	const char *runtime;
	char id[CONTAINER_ID_LEN + 1];		   /* "" when no container */
	char short_id[CONTAINER_SHORT_ID_LEN + 1]; /* id's first 12 characters */
	char pod_uid[CONTAINER_POD_UID_LEN + 1];   /* "" when not in a Kubernetes pod */
	/* "guaranteed", "burstable", "besteffort" with a pod_uid, else "". Never NULL. */
	const char *qos;
};

/*
 * Fill ci from cgroup_path.  The innermost container wins (/docker/<a>/docker/<b>: b);
 * a Kubernetes hierarchy inside a container (kind, minikube: /docker/<node>/kubepods/...)
 * starts over, so the node's id is not reported with the pod's.  conmon scopes
 * (crio-conmon-<id>.scope, libpod-conmon-<id>.scope) are not containers: no id from
 * them.  Ids must be exactly 64 lowercase hex characters; pod UIDs are taken with
 * dashes (cgroupfs), underscores (systemd) or none (static pods' 32 hex) and given
 * back dashed.  0 when a container id or a pod UID was found, -ENOENT when neither
 * (ci is then empty), -EINVAL when an argument is NULL.
 */
int container_parse(const char *cgroup_path, struct container_info *ci);

/* The 12-character id docker and crictl print; "" when ci names no container. */
const char *container_short_id(const struct container_info *ci);

#endif /* PA_CONTAINER_H */
