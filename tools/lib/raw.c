// SPDX-License-Identifier: GPL-2.0
/*
 * The reader for an image without a filesystem (`format --fs=raw`): it has
 * no files, and nothing tells free space from data, so every block is in use
 * and the residual tree covers the whole image, as dm-verity's tree would.
 */
#include <string.h>

#include "fs.h"

int ev_fs_read_raw(const struct ev_fs_image *img, struct ev_fs *fs)
{
	/* No paths, no inodes, and fs->used NULL: every block in use. */
	memset(fs, 0, sizeof(*fs));
	return 0;
}
