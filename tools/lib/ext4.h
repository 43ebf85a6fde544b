/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading what extverity needs out of an ext2/3/4 image with libext2fs:
 * regular files with their paths and physical extents, and the block bitmap.
 */
#ifndef EXTVERITY_EXT4_H
#define EXTVERITY_EXT4_H

#include "tree.h"

/* One path of a regular file; @inode indexes struct ev_fs.inodes. */
struct ev_path {
	char *path;
	size_t inode;
};

/**
 * struct ev_inode - a regular file's content
 * @ino: inode number
 * @size: file size in bytes
 * @runs: its written extents, clipped to the blocks below @size, sorted by
 *	logical block (unwritten extents and holes read as zeros)
 * @nr_runs: number of @runs
 * @inline_data: the content of an inline-data file, else NULL
 * @src: for a filesystem read through a mount (fiemap.c), the file's path
 *	relative to struct ev_fs.root_fd; its content is hashed from there and
 *	@runs then only name image blocks known to hold the same bytes
 */
struct ev_inode {
	u64 ino;
	u64 size;
	struct ev_run *runs;
	size_t nr_runs;
	u8 *inline_data;
	const char *src;
};

/**
 * struct ev_fs - the filesystem as the format step sees it
 * @paths: every path of a regular file, sorted bytewise
 * @nr_paths: their number
 * @inodes: the distinct regular files, sorted by inode number
 * @nr_inodes: their number
 * @used: one bit per image block, set for blocks the filesystem allocates
 *	(and for blocks outside the filesystem's bitmap)
 * @mounted: @root_fd is open
 * @root_fd: root directory of the image's detached read-only mount
 *	(fiemap.c); closing it unmounts the image and frees its loop device
 */
struct ev_fs {
	struct ev_path *paths;
	size_t nr_paths;
	struct ev_inode *inodes;
	size_t nr_inodes;
	u8 *used;
	bool mounted;
	int root_fd;
};

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
/* Free @fs and release its mount, if any; may be called again. */
void ev_fs_free(struct ev_fs *fs);

static inline bool ev_test_bit(const u8 *map, u64 bit)
{
	return map[bit >> 3] & (1U << (bit & 7));
}

static inline void ev_set_bit(u8 *map, u64 bit)
{
	map[bit >> 3] |= 1U << (bit & 7);
}

#endif /* EXTVERITY_EXT4_H */
