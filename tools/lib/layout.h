/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Turning a hashed filesystem into a hash area: tree order and dedup, the
 * extent map, the FILES stream, packed tops and the superblock.
 */
#ifndef EXTVERITY_LAYOUT_H
#define EXTVERITY_LAYOUT_H

#include "fs.h"
#include "write.h"

/**
 * struct ev_format_opts - what the user asked `format` for
 * @hash_algorithm: EXTVERITY_HASH_*
 * @log_blocksize: log2 of the block size
 * @salt: salt bytes
 * @salt_size: their number
 * @uuid: the image's UUID
 * @data_blocks: size of the data image in blocks
 * @threads: hashing threads, 0 for ev_default_threads()
 * @fec_roots: parity bytes per Reed-Solomon codeword, 0 for no FEC section
 * @fec_start: first block of the parity on its device
 */
struct ev_format_opts {
	unsigned int hash_algorithm;
	unsigned int log_blocksize;
	u8 salt[EXTVERITY_MAX_SALT_SIZE];
	u32 salt_size;
	u8 uuid[16];
	u64 data_blocks;
	unsigned int threads;
	unsigned int fec_roots;
	u64 fec_start;
};

/**
 * struct ev_area_out - a complete hash area, ready to be written
 * @area: for ev_write_area_data(): the area's blocks up to its LEVELS
 *	section in memory, superblock first, and the INODES, FEC and
 *	TOP_DIGESTS sections after it; the tree levels (as large as the
 *	files' apparent sizes) in pieces of a scratch file; freed, and the
 *	scratch file closed, by ev_area_out_free()
 * @root: the root digest
 * @files: FILES entries (paths)
 * @inodes: INODES entries (regular files)
 * @top_digests: TOP_DIGESTS entries (TOPS blocks)
 * @trees: tree records
 * @shared_trees: tree records used by more than one inode
 * @extents: extent records
 * @zero_blocks: data blocks in zero ranges
 * @residual_blocks: data blocks covered by the residual tree
 * @hash_blocks: blocks of the hash area
 * @hole_hash_blocks: of which, blocks of tree levels over holes only
 * @fec: with ev_format_opts.fec_roots, the FEC section's geometry
 */
struct ev_area_out {
	struct ev_area_data area;
	u8 root[EXTVERITY_MAX_DIGEST_SIZE];
	u64 files;
	u64 inodes;
	u64 top_digests;
	u64 trees;
	u64 shared_trees;
	u64 extents;
	u64 zero_blocks;
	u64 residual_blocks;
	u64 hash_blocks;
	u64 hole_hash_blocks;
	struct extverity_fec_geometry fec;
};

/**
 * ev_build_area() - hash an image and lay out its hash area
 * @o: format options
 * @fs: the filesystem as a reader made it (ev_fs_read(); raw.c's for an
 *	image without one)
 * @fd: the data image, read at physical block offsets
 * @out: filled in
 *
 * Return: 0 or an exit code, with the error printed.  On error nothing is
 * left to free; on success, free @out with ev_area_out_free().
 */
int ev_build_area(const struct ev_format_opts *o, struct ev_fs *fs, int fd,
		  struct ev_area_out *out);
void ev_area_out_free(struct ev_area_out *out);

#endif /* EXTVERITY_LAYOUT_H */
