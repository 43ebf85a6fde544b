/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading what extverity needs out of an ext2/3/4 image with libext2fs:
 * regular files with their paths and physical extents, and the block bitmap.
 */
#ifndef EXTVERITY_EXT4_H
#define EXTVERITY_EXT4_H

#include "fs.h"

/**
 * ev_fs_read_ext4() - read an ext2/3/4 image
 * @image: path of the image file
 * @data_blocks: blocks of the data image (the filesystem must fit)
 * @block_size: the data block size; must equal the filesystem's
 * @fs: filled in
 * @auto_mode: the user did not ask for ext4 explicitly (--fs=auto)
 *
 * Return: 0 or an exit code, with the error printed.
 */
int ev_fs_read_ext4(const char *image, u64 data_blocks, u32 block_size,
		    struct ev_fs *fs, bool auto_mode);

#endif /* EXTVERITY_EXT4_H */
