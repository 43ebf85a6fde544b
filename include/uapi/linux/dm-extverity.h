/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * On-disk format of extverity, the device-mapper target that verifies every
 * read of a filesystem image against per-file fs-verity Merkle trees.
 *
 * This header is the single definition of the format: the kernel target and
 * the userspace tool both include it.  docs/format.md explains the layout.
 *
 * All multi-byte fields are little-endian.  A hash area (on the hash device,
 * or appended to the data image) starts with a superblock; every other
 * location is counted from the start of the hash area, in blocks of
 * 1 << log_blocksize bytes, which is also the data and hash block size.
 */
#ifndef _UAPI_LINUX_DM_EXTVERITY_H
#define _UAPI_LINUX_DM_EXTVERITY_H

#include <linux/types.h>

#define EXTVERITY_MAGIC			"EXTVRITY"	/* 8 bytes, no NUL */
#define EXTVERITY_FORMAT_VERSION	1

/* Hash algorithm numbers are fs-verity's (FS_VERITY_HASH_ALG_*). */
#define EXTVERITY_HASH_SHA256		1
#define EXTVERITY_HASH_SHA512		2

#define EXTVERITY_MAX_DIGEST_SIZE	64
#define EXTVERITY_MAX_SALT_SIZE		32	/* fs-verity's limit */
#define EXTVERITY_MIN_LOG_BLOCKSIZE	10
#define EXTVERITY_MAX_LOG_BLOCKSIZE	12
/* fs-verity's limit; 2^32 blocks need at most 8 levels even at 16 digests a block. */
#define EXTVERITY_MAX_LEVELS		8
#define EXTVERITY_MAX_TREE_BLOCKS	(1ULL << 32)

/* The superblock is the first 1024 bytes of block 0 of the hash area. */
#define EXTVERITY_SB_SIZE		1024

/* Sections of the hash area, indexes into extverity_superblock.sections. */
enum extverity_section_id {
	EXTVERITY_SECT_EXTENTS = 0,	/* struct extverity_extent[], kernel */
	EXTVERITY_SECT_TREES = 1,	/* struct extverity_tree[], kernel */
	EXTVERITY_SECT_FILES = 2,	/* struct extverity_file stream, tools */
	EXTVERITY_SECT_TOPS = 3,	/* packed top hash blocks */
	EXTVERITY_SECT_LEVELS = 4,	/* full hash blocks below the top */
	EXTVERITY_SECT_INODES = 5,	/* struct extverity_inode[], kernel */
	EXTVERITY_SECT_FEC = 6,		/* one struct extverity_fec */
	EXTVERITY_SECT_TOP_DIGESTS = 7,	/* a digest per TOPS block, kernel */
	EXTVERITY_NR_SECTIONS = 8
};

/* Sections whose bytes the superblock authenticates with a digest. */
#define EXTVERITY_SECTS_WITH_DIGEST	((1U << EXTVERITY_SECT_EXTENTS) | \
					 (1U << EXTVERITY_SECT_TREES) | \
					 (1U << EXTVERITY_SECT_FILES) | \
					 (1U << EXTVERITY_SECT_INODES) | \
					 (1U << EXTVERITY_SECT_FEC) | \
					 (1U << EXTVERITY_SECT_TOP_DIGESTS))
#define EXTVERITY_SECT_HAS_DIGEST(id)	((EXTVERITY_SECTS_WITH_DIGEST >> (id)) & 1)

/*
 * compat_flags: the INODES section is present (slot 5); the FEC section is
 * present (slot 6); the TOP_DIGESTS section is present (slot 7).  Readers
 * that do not know a flag ignore its slot, as they ignore every slot past
 * LEVELS.
 */
#define EXTVERITY_COMPAT_INODE_INDEX	(1U << 0)
#define EXTVERITY_COMPAT_FEC		(1U << 1)
#define EXTVERITY_COMPAT_TOP_DIGESTS	(1U << 2)
#define EXTVERITY_COMPAT_KNOWN		(EXTVERITY_COMPAT_INODE_INDEX | \
					 EXTVERITY_COMPAT_FEC | \
					 EXTVERITY_COMPAT_TOP_DIGESTS)

/**
 * struct extverity_section - where one section lives
 * @start_block: first block, counted from the start of the hash area
 * @nr_blocks: length in blocks; 0 for an empty section (then start_block is 0)
 * @nr_entries: number of records (extents, trees, files, inodes, 1 for
 *	FEC, TOPS blocks for TOP_DIGESTS); 0 for TOPS/LEVELS
 * @entry_size: record size in bytes; 0 for variable-length or raw sections
 * @__reserved: zero
 * @digest: for EXTENTS, TREES, FILES, INODES, FEC and TOP_DIGESTS, the
 *	hash of all nr_blocks blocks (unsalted, zero-padded to 64 bytes);
 *	zero for TOPS and LEVELS, whose blocks are authenticated through the
 *	tree roots (and TOPS blocks also by TOP_DIGESTS) instead
 */
struct extverity_section {
	__le64 start_block;
	__le64 nr_blocks;
	__le64 nr_entries;
	__le32 entry_size;
	__le32 __reserved;
	__u8 digest[EXTVERITY_MAX_DIGEST_SIZE];
};

/**
 * struct extverity_superblock - block 0 of the hash area
 *
 * The root digest on the table line is the (unsalted) hash of these
 * EXTVERITY_SB_SIZE bytes, so the superblock authenticates the sections it
 * points to, and those authenticate the tree roots.
 *
 * @magic: EXTVERITY_MAGIC
 * @version: EXTVERITY_FORMAT_VERSION
 * @incompat_flags: features a reader must understand; v1 readers refuse any
 * @compat_flags: features a reader may ignore
 * @hash_algorithm: EXTVERITY_HASH_*
 * @log_blocksize: log2 of the block size, 10..12
 * @salt_size: bytes of @salt in use, 0..32
 * @__pad0: zero
 * @data_blocks: N, the size of the data image in blocks
 * @hash_blocks: size of the hash area in blocks, this block included
 * @uuid: identifies the image; not interpreted by the kernel
 * @salt: the salt, zero-padded
 * @sections: see enum extverity_section_id
 * @__reserved: zero
 */
struct extverity_superblock {
	__u8 magic[8];
	__le32 version;
	__le32 incompat_flags;
	__le32 compat_flags;
	__u8 hash_algorithm;
	__u8 log_blocksize;
	__u8 salt_size;
	__u8 __pad0;
	__le64 data_blocks;
	__le64 hash_blocks;
	__u8 uuid[16];
	__u8 salt[EXTVERITY_MAX_SALT_SIZE];
	struct extverity_section sections[EXTVERITY_NR_SECTIONS];
	__u8 __reserved[168];
};

/* A tree index that means "this range reads as zeros". */
#define EXTVERITY_TREE_ZERO		0xffffffffU
/* Tree 0 is the residual tree: metadata and every allocated unowned block. */
#define EXTVERITY_TREE_RESIDUAL		0

/**
 * struct extverity_extent - one rule of the extent map
 * @start: first data block of the range
 * @leaf: index in the tree of the data block @start (0 for a zero range)
 * @count: number of blocks, at least 1
 * @tree: index into the TREES section, or EXTVERITY_TREE_ZERO
 * @inode: inode number of the file whose tree this is, for reports; 0 for
 *	the residual tree and zero ranges
 *
 * The records are sorted by @start and partition [0, data_blocks): record
 * i + 1 starts where record i ends, the first at 0, the last ends at N.
 */
struct extverity_extent {
	__le64 start;
	__le64 leaf;
	__le32 count;
	__le32 tree;
	__le64 inode;
};

/**
 * struct extverity_tree - one fs-verity Merkle tree
 * @data_size: bytes the tree covers (the file size; blocks << log_blocksize
 *	for the residual tree).  Its geometry follows from this alone.
 * @top: byte offset, from the start of the hash area, of the used part of
 *	the top hash block (the block whose hash is the root) in the TOPS
 *	section; a multiple of the digest size, not crossing a block boundary;
 *	0 when the tree has no hash blocks (at most one data block).  The top
 *	block is its used bytes followed by zeros up to the block size.
 * @levels: first block, from the start of the hash area, of the levels below
 *	the top in the LEVELS section, stored root side first and level 0
 *	last; 0 when the tree has fewer than two levels
 * @root_hash: the fs-verity root hash, digest size bytes (the record is
 *	sizeof(struct extverity_tree) + digest size bytes long)
 */
struct extverity_tree {
	__le64 data_size;
	__le64 top;
	__le64 levels;
	__u8 root_hash[];
};

/**
 * struct extverity_file - one entry of the FILES stream (tools only)
 * @inode: the file's inode number
 * @tree: index into the TREES section
 * @prefix_len: bytes of the previous entry's path that this path starts with
 * @suffix_len: bytes of path that follow this header
 *
 * Entries are sorted by path and packed back to back, each followed by its
 * path suffix; paths are absolute within the image ("/usr/bin/ls").  A file
 * with several links has one entry per path.
 */
struct extverity_file {
	__le64 inode;
	__le32 tree;
	__le16 prefix_len;
	__le16 suffix_len;
};

/**
 * struct extverity_inode - one entry of the inode index (INODES section)
 * @inode: inode number of a regular file, as the mounted filesystem reports
 *	it (st_ino); never 0
 * @tree: index into the TREES section of the file's tree; never the
 *	residual tree
 * @__reserved: zero
 *
 * One entry per regular file (not per path: hard links share it), sorted by
 * @inode, strictly ascending, so the kernel finds a file's tree, and so its
 * fs-verity digest, by binary search.
 */
struct extverity_inode {
	__le64 inode;
	__le32 tree;
	__le32 __reserved;
};

/* Reed-Solomon over GF(2^8): symbols per codeword, parity symbols allowed. */
#define EXTVERITY_FEC_RSM		255
#define EXTVERITY_FEC_MIN_ROOTS		2
#define EXTVERITY_FEC_MAX_ROOTS		24

/**
 * struct extverity_fec - where the Reed-Solomon parity is, and its code
 * @start: first block of the parity on the FEC device, in blocks of the
 *	image's block size
 * @blocks: blocks the parity covers: the data_blocks of the image, then
 *	the hash_blocks of the hash area (its superblock first), as one
 *	sequence; equal to data_blocks + hash_blocks
 * @roots: parity bytes per RS(255, 255 - @roots) codeword,
 *	EXTVERITY_FEC_MIN_ROOTS..EXTVERITY_FEC_MAX_ROOTS
 * @__reserved: zero
 *
 * dm-verity's FEC layout: with rounds = ceil(@blocks / (255 - @roots)),
 * codeword b of round n takes byte b of blocks n, n + rounds, ... (zeros
 * past @blocks); the parity is, round after round and byte offset after
 * byte offset, each codeword's @roots bytes: rounds * @roots blocks.  The
 * parity itself is not authenticated: a corrected block is used only if
 * it then matches its digest.  The sole record of the FEC section.
 */
struct extverity_fec {
	__le64 start;
	__le64 blocks;
	__u8 roots;
	__u8 __reserved[15];
};

/*
 * fs-verity's file descriptor, version 1 (fs/verity/fsverity_private.h):
 * a file's fs-verity digest is the hash of these 256 bytes.
 */
struct extverity_fsverity_descriptor {
	__u8 version;
	__u8 hash_algorithm;
	__u8 log_blocksize;
	__u8 salt_size;
	__le32 sig_size;
	__le64 data_size;
	__u8 root_hash[64];
	__u8 salt[32];
	__u8 __reserved[144];
};

/* Table line constants, shared by the target and `extverity table`. */
#define EXTVERITY_TARGET_NAME		"extverity"
#define EXTVERITY_UEVENT_MAX		100

#endif /* _UAPI_LINUX_DM_EXTVERITY_H */
