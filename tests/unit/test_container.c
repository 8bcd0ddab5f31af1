// SPDX-License-Identifier: Apache-2.0
/*
 * container_parse on cgroup paths as docker, containerd, CRI-O, podman and the kubelet
 * (cgroupfs and systemd drivers) name them, nested ones (kind, minikube), and paths
 * that name no container.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/container.h"
#include "unit.h"

#define CID	  "3f4e5d6c7b8a99887766554433221100ffeeddccbbaa00112233445566778899"
#define CID2	  "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define CID_UPPER "3F4E5D6C7B8A99887766554433221100FFEEDDCCBBAA00112233445566778899"
#define CID_63	  "3f4e5d6c7b8a99887766554433221100ffeeddccbbaa0011223344556677889"
#define CID_65	  CID "0"
#define UID	  "2c8e6b4a-1f3d-4e5a-9b7c-0d1e2f3a4b5c"
#define UID_	  "2c8e6b4a_1f3d_4e5a_9b7c_0d1e2f3a4b5c"
/* A static pod's UID: an md5 sum, no dashes. */
#define MD5	   "e2b5d3d3c2c4d7f9e3f1c4a2b8d9e0f1"
#define MD5_DASHED "e2b5d3d3-c2c4-d7f9-e3f1-c4a2b8d9e0f1"

_Static_assert(sizeof(CID) == 65 && sizeof(CID2) == 65 && sizeof(CID_UPPER) == 65, "64 hex");
_Static_assert(sizeof(CID_63) == 64 && sizeof(UID) == 37 && sizeof(MD5) == 33, "lengths");

struct want {
	const char *path;
	int ret;
	const char *runtime, *id, *pod_uid, *qos;
};

#define NONE(p)                                                                                    \
	{                                                                                          \
		p, -ENOENT, "", "", "", ""                                                         \
	}

static const struct want cases[] = {
	/* kubelet, cgroupfs driver (v1 and v2 alike). */
	{"/kubepods/burstable/pod" UID "/" CID, 0, "", CID, UID, "burstable"},
	{"/kubepods/besteffort/pod" UID "/" CID, 0, "", CID, UID, "besteffort"},
	{"/kubepods/pod" UID "/" CID, 0, "", CID, UID, "guaranteed"},
	{"/kubepods/burstable/pod" UID "/crio-" CID, 0, "cri-o", CID, UID, "burstable"},
	{"/kubepods/burstable/pod" UID, 0, "", "", UID, "burstable"},
	{"/kubepods/burstable/pod" MD5 "/" CID, 0, "", CID, MD5_DASHED, "burstable"},
	/* kubelet, systemd driver. */
	{"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
	 ".slice/cri-containerd-" CID ".scope",
	 0, "containerd", CID, UID, "burstable"},
	{"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_ ".slice/crio-" CID
	 ".scope",
	 0, "cri-o", CID, UID, "besteffort"},
	{"/kubepods.slice/kubepods-pod" UID_ ".slice/docker-" CID ".scope", 0, "docker", CID, UID,
	 "guaranteed"},
	{"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice", 0, "", "",
	 UID, "burstable"},
	{"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" MD5 ".slice/crio-" CID
	 ".scope",
	 0, "cri-o", CID, MD5_DASHED, "burstable"},
	/* conmon: not the container, still the pod. */
	{"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
	 ".slice/crio-conmon-" CID ".scope",
	 0, "", "", UID, "burstable"},
	{"/kubepods/besteffort/pod" UID "/crio-conmon-" CID, 0, "", "", UID, "besteffort"},
	/* docker, containerd, podman without Kubernetes. */
	{"/docker/" CID, 0, "docker", CID, "", ""},
	{"/system.slice/docker-" CID ".scope", 0, "docker", CID, "", ""},
	{"/system.slice/nerdctl-" CID ".scope", 0, "containerd", CID, "", ""},
	{"/docker/" CID "/system.slice/cron.service", 0, "docker", CID, "", ""},
	{"/machine.slice/libpod-" CID ".scope", 0, "podman", CID, "", ""},
	{"/machine.slice/libpod-" CID ".scope/container", 0, "podman", CID, "", ""},
	{"/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" CID ".scope", 0,
	 "podman", CID, "", ""},
	{"/libpod_parent/libpod-" CID, 0, "podman", CID, "", ""},
	{"/machine.slice/machine-libpod_pod_" CID2 ".slice/libpod-" CID ".scope", 0, "podman", CID,
	 "", ""},
	/* Nested: the innermost container; a pod inside a node container starts over. */
	{"/docker/" CID "/docker/" CID2, 0, "docker", CID2, "", ""},
	{"/docker/" CID "/kubepods/burstable/pod" UID "/" CID2, 0, "", CID2, UID, "burstable"},
	{"/docker/" CID "/kubepods/pod" UID "/" CID2, 0, "", CID2, UID, "guaranteed"},
	{"/docker/" CID "/kubepods/besteffort/pod" UID "/crio-conmon-" CID2, 0, "", "", UID,
	 "besteffort"},
	{"/system.slice/docker-" CID ".scope/kubelet.slice/kubelet-kubepods.slice/"
	 "kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod" UID_
	 ".slice/cri-containerd-" CID2 ".scope",
	 0, "containerd", CID2, UID, "besteffort"},
	/* The node's own processes (kubelet) are in the node container. */
	{"/system.slice/docker-" CID ".scope/kubelet.slice", 0, "docker", CID, "", ""},
	/* Nothing. */
	NONE(""),
	NONE("/"),
	NONE("//"),
	NONE("/init.scope"),
	NONE("/user.slice/user-1000.slice/session-2.scope"),
	NONE("/user.slice/user-1000.slice/user@1000.service/app.slice/dbus.service"),
	NONE("/system.slice/docker.service"),
	NONE("/system.slice/containerd.service"),
	NONE("garbage \x01\xff with no slash"),
	NONE("../..//./-.scope/.slice/-"),
	NONE("/docker/" CID_63),
	NONE("/docker/" CID_65),
	NONE("/docker/" CID_UPPER),
	NONE("/system.slice/docker-" CID_UPPER ".scope"),
	NONE("/system.slice/docker-" CID_63 ".scope"),
	NONE("/system.slice/docker-" CID ".scope.old"),
	NONE("/system.slice/rkt-" CID ".scope"),
	NONE("/machine.slice/libpod-conmon-" CID ".scope"),
	NONE("/machine.slice/machine-libpod_pod_" CID ".slice"),
	NONE("/kubepods"),
	NONE("/kubepods/burstable"),
	NONE("/kubepods.slice/kubepods-burstable.slice"),
	NONE("/kubepods/burstable/podnot-a-uid"),
	NONE("/kubepods/burstable/pod2C8E6B4A-1F3D-4E5A-9B7C-0D1E2F3A4B5C"),
	NONE("/kubepods/burstable/pod2c8e6b4a-1f3d_4e5a-9b7c-0d1e2f3a4b5c"),
	NONE("/kubepods/burstable/pod2c8e6b4a1f3d-4e5a-9b7c-0d1e2f3a4b5c0"),
	NONE("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ "x.slice"),
	NONE("/kubepods.slice/kubepods-weird-pod" UID_ ".slice"),
	NONE("/user.slice/pod" UID),
	NONE("/pod" UID "/" CID_UPPER),
};

static void check_case(const struct want *w)
{
	struct container_info ci;
	int ret;

	/* Left over from an earlier parse: must not leak into this one. */
	memset(&ci, 'x', sizeof(ci));
	ret = container_parse(w->path, &ci);
	CHECK_EQ_U64(ret, w->ret);
	CHECK_STR(ci.runtime, w->runtime);
	CHECK_STR(ci.id, w->id);
	CHECK_STR(ci.pod_uid, w->pod_uid);
	CHECK_STR(ci.qos, w->qos);
	CHECK_EQ_U64(strlen(container_short_id(&ci)), w->id[0] ? CONTAINER_SHORT_ID_LEN : 0);
	CHECK(!strncmp(container_short_id(&ci), w->id, strlen(container_short_id(&ci))));
	if (unit_cur_failed)
		printf("#   path: %s\n", w->path);
}

static void test_real_world_paths(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_case(&cases[i]);
}

static void test_short_id(void)
{
	struct container_info ci;

	CHECK(container_parse("/system.slice/docker-" CID ".scope", &ci) == 0);
	CHECK_STR(container_short_id(&ci), "3f4e5d6c7b8a");
	CHECK(container_parse("/", &ci) == -ENOENT);
	CHECK_STR(container_short_id(&ci), "");
}

static void test_null_arguments(void)
{
	struct container_info ci;

	CHECK(container_parse(NULL, &ci) == -EINVAL);
	CHECK(container_parse("/docker/" CID, NULL) == -EINVAL);
}

/* A long path of many components: read to its end, the last container found. */
static void test_long_path(void)
{
	size_t n = 1 << 20, at = 0;
	char *p = malloc(n + 200);
	struct container_info ci;

	CHECK(p != NULL);
	if (!p)
		return;
	while (at + 4 < n) {
		memcpy(p + at, "/a-b", 4);
		at += 4;
	}
	snprintf(p + at, 200, "/docker/%s", CID2);
	CHECK(container_parse(p, &ci) == 0);
	CHECK_STR(ci.id, CID2);
	CHECK_STR(ci.runtime, "docker");
	free(p);
}

int main(void)
{
	RUN(test_real_world_paths);
	RUN(test_short_id);
	RUN(test_null_arguments);
	RUN(test_long_path);
	return unit_done();
}
