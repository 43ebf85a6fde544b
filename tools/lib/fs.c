// SPDX-License-Identifier: GPL-2.0
/*
 * What the filesystem readers share: telling which filesystem an image
 * holds, and freeing what a reader produced.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs.h"

const char *ev_fs_probe(int fd, u64 size)
{
	static const struct {
		u64 off;
		const char *magic;
		u32 len;
		const char *type;
	} magics[] = {
		{ 1080, "\x53\xef", 2, "ext4" },
		{ 0, "XFSB", 4, "xfs" },
		{ 65536 + 64, "_BHRfS_M", 8, "btrfs" },
		{ 1024, "\xe2\xe1\xf5\xe0", 4, "erofs" },
		{ 0, "hsqs", 4, "squashfs" },
	};
	u8 buf[8];
	size_t i;

	for (i = 0; i < EV_ARRAY_SIZE(magics); i++) {
		if (magics[i].off + magics[i].len > size ||
		    ev_pread(fd, buf, magics[i].len, magics[i].off))
			continue;
		if (!memcmp(buf, magics[i].magic, magics[i].len))
			return magics[i].type;
	}
	return NULL;
}

void ev_fs_free(struct ev_fs *fs)
{
	size_t i;

	for (i = 0; i < fs->nr_paths; i++)
		free(fs->paths[i].path);
	for (i = 0; i < fs->nr_inodes; i++) {
		free(fs->inodes[i].runs);
		free(fs->inodes[i].inline_data);
	}
	free(fs->paths);
	free(fs->inodes);
	free(fs->used);
	if (fs->mounted)
		close(fs->root_fd);
	memset(fs, 0, sizeof(*fs));
}
