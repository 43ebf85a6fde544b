/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one interface between the filesystem readers and the format step.
 * Every reader is given the same struct ev_fs_image and fills in the same
 * struct ev_fs: the regular files with their paths and the image blocks
 * that hold their data, and which image blocks are in use.  The readers are
 * ext4.c (libext2fs, offline), fiemap.c (a read-only loop mount and
 * FS_IOC_FIEMAP) and raw.c (no files at all); ev_fs_read() is the one place
 * that picks one, and layout.c consumes the result without knowing which
 * reader made it.
 */
#ifndef EXTVERITY_FS_H
#define EXTVERITY_FS_H

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
 * @src: NULL when @runs (or @inline_data) are the file's content.  Else
 *	the content is read from the file at this path relative to struct
 *	ev_fs.root_fd (a reader that sees the files through a mount sets it),
 *	and @runs only name image blocks known to hold the same bytes
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
 *	(and for blocks outside the filesystem's bitmap); NULL when the
 *	reader does not know free space (raw, fiemap), which makes every
 *	block in use: a bitmap of ones would cost a bit per block for nothing
 * @mounted: @root_fd is open
 * @root_fd: the directory struct ev_inode.src paths are relative to, kept
 *	open until ev_fs_free() because the trees are hashed through it; for
 *	a detached mount, closing it is what unmounts the image
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
 * struct ev_fs_image - the image every reader is given
 * @path: its file or device name, for messages (and for libext2fs)
 * @fd: the image, opened read-only
 * @data_blocks: blocks of the data image; an appended hash area past them
 *	is not part of it
 * @block_size: the data block size
 * @probed: the reader was picked by ev_fs_probe(), not named by the user,
 *	so a refusal also says how to protect the image as raw data
 */
struct ev_fs_image {
	const char *path;
	int fd;
	u64 data_blocks;
	u32 block_size;
	bool probed;
};

/* The readers, as `format --fs=` names them. */
enum ev_fs_type {
	EV_FS_AUTO,
	EV_FS_EXT4,
	EV_FS_FIEMAP,
	EV_FS_RAW,
};

/* The reader called @name ("auto", "ext4", "fiemap", "raw"); 0 or -EINVAL. */
int ev_fs_type_by_name(const char *name, enum ev_fs_type *type);

/**
 * ev_fs_read() - read an image with the reader @type names
 * @img: the image (@img->probed is set here)
 * @type: the reader; EV_FS_AUTO reads ext2/3/4 offline with libext2fs and
 *	any other filesystem ev_fs_probe() knows through FIEMAP, and refuses
 *	an image without one, so that protecting it as raw data is a
 *	deliberate choice
 * @fs: filled in; free it with ev_fs_free(), also after an error
 *
 * Return: 0 or an exit code, with the error printed.
 */
int ev_fs_read(struct ev_fs_image *img, enum ev_fs_type type,
	       struct ev_fs *fs);

/**
 * ev_fs_probe() - name the filesystem in an image by its magic number
 * @fd: the image
 * @size: bytes of it that belong to the data image
 *
 * Return: "ext4" (for any ext2/3/4), "xfs", "btrfs", "erofs", "squashfs",
 * or NULL when none of these is recognised.
 */
const char *ev_fs_probe(int fd, u64 size);

/* Free @fs and release its mount, if any; may be called again. */
void ev_fs_free(struct ev_fs *fs);

/*
 * The readers, each called only through ev_fs_read().  Each returns 0 or an
 * exit code with the error printed; @fs is zeroed first.
 */

/* ext4.c */
/*
 * ext2/3/4 read offline with libext2fs: the directory walk, each regular
 * file's mapping and the block bitmap, cross-checked against each other.
 * The filesystem's block size must be the data block size.
 */
int ev_fs_read_ext4(const struct ev_fs_image *img, struct ev_fs *fs);

/* fiemap.c */
/*
 * Any image the kernel can mount (XFS, btrfs, EROFS, squashfs, ext4, ...),
 * through a read-only loop mount limited to the data blocks, a directory
 * walk and FS_IOC_FIEMAP; needs CAP_SYS_ADMIN.  Every file's content is
 * read through the mount; an image block becomes part of a file's tree only
 * when FIEMAP maps it as a plain, aligned extent and its bytes equal the
 * file's.  Free space is not known here (fs->used is NULL).  fs->root_fd
 * keeps the detached mount alive until ev_fs_free(), which the hashing
 * needs; nothing stays mounted or attached on error.
 */
int ev_fs_read_fiemap(const struct ev_fs_image *img, struct ev_fs *fs);

/* raw.c */
/*
 * No filesystem: no files, and every block in use, so that the whole image
 * is covered by the residual tree.
 */
int ev_fs_read_raw(const struct ev_fs_image *img, struct ev_fs *fs);

/*
 * For the readers.  However a reader finds the files, it records them the
 * same way: each path as it is seen, then one record per inode, mapped
 * through the reader's own callback.
 */

/**
 * ev_fs_add_path() - record a path of a regular file
 * @fs: the filesystem being read
 * @cap: the capacity of fs->paths, kept by the reader (0 at first)
 * @path: the path, "/a/b"
 * @len: its length
 * @ino: the file's inode number, which the path's .inode holds until
 *	ev_fs_make_inodes()
 *
 * A path longer than the FILES section can record is refused as soon as it
 * is seen, so that no reader keeps a copy of one: many hard links deep down
 * would otherwise each cost their whole path.
 *
 * Return: 0, or EV_EUSAGE with the error printed.
 */
int ev_fs_add_path(struct ev_fs *fs, size_t *cap, const char *path,
		   size_t len, u64 ino);

/**
 * ev_fs_make_inodes() - sort the paths and give each inode one record
 * @fs: the filesystem being read, with all its paths added
 * @map: fills in record @in, whose @in->ino is set, from the inode's first
 *	path in path order; returns 0 or an exit code with the error printed
 * @ctx: passed to @map
 *
 * The records are sorted by inode number, the order in which files claim
 * shared blocks, and each path's .inode becomes the index of its record.
 *
 * Return: 0 or @map's error, after which the records made so far stay in
 * @fs for ev_fs_free().
 */
int ev_fs_make_inodes(struct ev_fs *fs,
		      int (*map)(void *ctx, struct ev_inode *in,
				 const char *path),
		      void *ctx);

/*
 * Append @count blocks at @logical, image block @physical, to the @nr runs
 * of @runs (@cap allocated), merged into the last one when they continue it.
 */
void ev_fs_add_run(struct ev_run **runs, size_t *nr, size_t *cap,
		   u64 logical, u64 physical, u64 count);

static inline bool ev_test_bit(const u8 *map, u64 bit)
{
	return map[bit >> 3] & (1U << (bit & 7));
}

static inline void ev_set_bit(u8 *map, u64 bit)
{
	map[bit >> 3] |= 1U << (bit & 7);
}

#endif /* EXTVERITY_FS_H */
