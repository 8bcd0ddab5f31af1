// SPDX-License-Identifier: Apache-2.0
/*
 * A cgroup path (the path part of a /proc/PID/cgroup line) into container_parse; what it
 * gives back must keep the header's promises, or the target aborts.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "profile/container.h"

static int container_lower_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

static void container_check(int ret, const struct container_info *ci)
{
	size_t id = strlen(ci->id), pod = strlen(ci->pod_uid);

	if (!ci->runtime || !ci->qos)
		abort();
	if ((ret == 0) != (id || pod) || (ret && ret != -ENOENT))
		abort();
	if (id && (id != CONTAINER_ID_LEN || !container_lower_hex(ci->id, id)))
		abort();
	if (strlen(ci->short_id) != (id ? CONTAINER_SHORT_ID_LEN : 0) ||
	    strncmp(ci->short_id, ci->id, strlen(ci->short_id)))
		abort();
	if (!id && ci->runtime[0])
		abort();
	if (pod != 0 && pod != CONTAINER_POD_UID_LEN)
		abort();
	for (size_t i = 0; i < pod; i++)
		if ((i == 8 || i == 13 || i == 18 || i == 23)
			    ? ci->pod_uid[i] != '-'
			    : !container_lower_hex(ci->pod_uid + i, 1))
			abort();
	if (!pod != !ci->qos[0])
		abort();
}

FUZZ_TARGET(container)
{
	struct container_info ci;
	char *path = malloc(size + 1);

	if (!path)
		abort();
	memcpy(path, data, size);
	path[size] = '\0';
	container_check(container_parse(path, &ci), &ci);
	free(path);
	return 0;
}
