/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading what extverity needs out of any image the kernel can mount
 * (XFS, btrfs, EROFS, squashfs, ext4, ...): a read-only loop mount, a
 * directory walk, and FS_IOC_FIEMAP for each regular file, checked against
 * the image's bytes.
 */
#ifndef EXTVERITY_FIEMAP_H
#define EXTVERITY_FIEMAP_H

#include "fs.h"

/**
 * ev_fs_read_fiemap() - read a filesystem image through a loop mount
 * @image: path of the image file or device
 * @fd: @image, opened read-only; the loop device reads through it
 * @data_blocks: blocks of the data image; the loop device is limited to
 *	them, so an appended hash area is not part of what is mounted
 * @block_size: the data block size
 * @fs: filled in; fs->root_fd keeps the (detached) mount alive until
 *	ev_fs_free(), which is needed while the trees are hashed
 *
 * Needs CAP_SYS_ADMIN.  Every file's content is read through the mount; an
 * image block becomes part of a file's tree only when FIEMAP maps it as a
 * plain, aligned extent and its bytes equal the file's.  Everything else,
 * including free space (which is not known here), is residual: fs->used has
 * every bit set.
 *
 * Return: 0 or an exit code, with the error printed; nothing stays mounted
 * or attached on error.
 */
int ev_fs_read_fiemap(const char *image, int fd, u64 data_blocks,
		      u32 block_size, struct ev_fs *fs);

#endif /* EXTVERITY_FIEMAP_H */
