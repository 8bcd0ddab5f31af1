// SPDX-License-Identifier: Apache-2.0
/* /proc/PID/maps text: "start-end perms offset maj:min inode   path" lines. */
#include <string.h>

#include "fuzz.h"
#include "base/procfs.h"

FUZZ_TARGET(procmaps)
{
	volatile uint64_t sink = 0;
	struct proc_map *maps;
	char *text = malloc(size + 1);
	int n;

	if (!text)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	n = proc_parse_maps(text, false, &maps);
	for (int i = 0; i < n; i++)
		sink += maps[i].start + maps[i].end + strlen(maps[i].path) + maps[i].deleted;
	if (n >= 0)
		proc_maps_free(maps, (size_t)n);
	(void)sink;
	free(text);
	return 0;
}
