/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Geometry and validation of the extverity on-disk format.
 *
 * dm-extverity-format.c is compiled unchanged into the kernel target and the
 * userspace tool (as xfsprogs shares libxfs), so the rules that decide whether
 * a hash area is acceptable live in one place.  It does no I/O, no allocation
 * and no hashing; the only thing that differs between the two builds is where
 * the basic types come from.
 */
#ifndef DM_EXTVERITY_FORMAT_H
#define DM_EXTVERITY_FORMAT_H

#ifdef __KERNEL__
#include <linux/bits.h>
#include <linux/errno.h>
#include <linux/math64.h>
#include <linux/string.h>
#include <linux/types.h>
#include <asm/byteorder.h>
#else
#include "extverity_compat.h"
#endif
#include <linux/dm-extverity.h>

/* Largest data device: keeps block << log_blocksize and sector counts in u64. */
#define EXTVERITY_MAX_DATA_BLOCKS	BIT_ULL(48)

/**
 * struct extverity_params - the superblock, validated and in CPU order
 * @hash_algorithm: EXTVERITY_HASH_*
 * @log_blocksize: log2 of the block size
 * @block_size: data, tree and hash block size in bytes
 * @digest_size: bytes of one digest
 * @log_digests_per_block: log2 of the digests one hash block holds
 * @salt_size: salt bytes
 * @data_blocks: size of the data device in blocks
 * @hash_blocks: size of the hash area in blocks
 * @tree_entry_size: bytes of one struct extverity_tree record
 * @compat_flags: the EXTVERITY_COMPAT_* features present, of those known
 * @sect: per section: first block, number of blocks and entries (all zero
 *	for INODES unless EXTVERITY_COMPAT_INODE_INDEX is set, for FEC unless
 *	EXTVERITY_COMPAT_FEC is, for TOP_DIGESTS unless
 *	EXTVERITY_COMPAT_TOP_DIGESTS is)
 */
struct extverity_params {
	u8 hash_algorithm;
	u8 log_blocksize;
	u32 block_size;
	u32 digest_size;
	u32 log_digests_per_block;
	u32 salt_size;
	u64 data_blocks;
	u64 hash_blocks;
	u32 tree_entry_size;
	u32 compat_flags;
	struct {
		u64 start_block;
		u64 nr_blocks;
		u64 nr_entries;
	} sect[EXTVERITY_NR_SECTIONS];
};

/**
 * struct extverity_geometry - shape of one tree, derived from its data size
 * @data_blocks: data blocks the tree covers
 * @num_levels: hash levels including the top one; 0 when @data_blocks <= 1
 *	(no hash blocks: the root is the hash of the single block, or zero)
 * @top_len: used bytes of the top hash block (digests of the level below)
 * @lower_blocks: hash blocks below the top, stored in the LEVELS section
 * @level_start: for level i < num_levels - 1 (level 0 holds the digests of
 *	the data blocks), its first block counted from extverity_tree.levels;
 *	the top level is stored apart, packed in the TOPS section
 */
struct extverity_geometry {
	u64 data_blocks;
	u32 num_levels;
	u32 top_len;
	u64 lower_blocks;
	u64 level_start[EXTVERITY_MAX_LEVELS];
};

/**
 * struct extverity_fec_geometry - the FEC record, validated, in CPU order
 * @start: first parity block on the FEC device
 * @blocks: blocks covered: the data blocks, then the hash area's
 * @rounds: ceil(@blocks / @rsn): the codewords of one byte offset of a
 *	block, and the stride between the blocks of one codeword
 * @parity_blocks: blocks of parity, @rounds * @roots
 * @roots: parity bytes per codeword
 * @rsn: data bytes per codeword, 255 - @roots
 */
struct extverity_fec_geometry {
	u64 start;
	u64 blocks;
	u64 rounds;
	u64 parity_blocks;
	u32 roots;
	u32 rsn;
};

/**
 * struct extverity_tree_cursor - how far the trees checked so far reach
 * @tops_end: byte just past the last top checked, in the hash area
 * @levels_end: block just past the last LEVELS range checked
 *
 * Trees store their hash blocks in record order, each after the one before,
 * so that no two trees share a hash block: a shared block would be verified
 * (and flagged) against whichever tree read it first.  Zeroed before the
 * first extverity_check_tree() of a table.
 */
struct extverity_tree_cursor {
	u64 tops_end;
	u64 levels_end;
};

/* Digest size of an EXTVERITY_HASH_* algorithm, 0 if unknown. */
u32 extverity_digest_size(unsigned int hash_algorithm);
/* Name of the algorithm as the crypto API and OpenSSL know it, or NULL. */
const char *extverity_hash_name(unsigned int hash_algorithm);
/* EXTVERITY_HASH_* for a name, 0 if unknown. */
unsigned int extverity_hash_by_name(const char *name);

void extverity_init_params(struct extverity_params *p,
			   unsigned int hash_algorithm, u8 log_blocksize);
int extverity_parse_superblock(const struct extverity_superblock *sb,
			       struct extverity_params *p, const char **why);
int extverity_tree_geometry(const struct extverity_params *p, u64 data_size,
			    struct extverity_geometry *g);
int extverity_check_tree(const struct extverity_params *p,
			 const struct extverity_tree *t,
			 struct extverity_tree_cursor *cur,
			 struct extverity_geometry *g, const char **why);
int extverity_check_extent(const struct extverity_params *p,
			   const struct extverity_extent *e, u64 expected_start,
			   u64 nr_trees, u64 tree_blocks, const char **why);
int extverity_check_inode(const struct extverity_inode *e, u64 prev_inode,
			  u64 nr_trees, const char **why);
int extverity_check_fec(const struct extverity_params *p,
			const struct extverity_fec *f,
			struct extverity_fec_geometry *g, const char **why);
void extverity_fsverity_descriptor(const struct extverity_params *p,
				   const u8 *salt, u64 data_size,
				   const u8 *root,
				   struct extverity_fsverity_descriptor *d);

/**
 * extverity_level_block() - where one hash block below a tree's top is stored
 * @g: geometry of the tree
 * @levels: the tree's extverity_tree.levels, in CPU order
 * @level: the block's level, below the top (level < g->num_levels - 1)
 * @index: index of the block within its level
 *
 * Return: the hash-area block.
 */
static inline u64 extverity_level_block(const struct extverity_geometry *g,
					u64 levels, u32 level, u64 index)
{
	return levels + g->level_start[level] + index;
}

/**
 * extverity_digest_pos() - where the digest of one block of a tree is stored
 * @p: format parameters
 * @g: geometry of the tree
 * @top: the tree's extverity_tree.top, in CPU order
 * @levels: the tree's extverity_tree.levels, in CPU order
 * @level: 0 for the digest of a data block, i for that of a level i - 1 block
 * @index: index of the block whose digest is wanted, within its level
 * @block: set to the hash-area block holding the digest
 * @offset: set to the digest's byte offset within that block
 *
 * The caller guarantees level < g->num_levels and index within the level
 * (both follow from an extent validated by extverity_check_extent()).
 */
static inline void extverity_digest_pos(const struct extverity_params *p,
					const struct extverity_geometry *g,
					u64 top, u64 levels, u32 level,
					u64 index, u64 *block, u32 *offset)
{
	if (level == g->num_levels - 1) {
		u64 byte = top + index * p->digest_size;

		*block = byte >> p->log_blocksize;
		*offset = byte & (p->block_size - 1);
		return;
	}
	*block = extverity_level_block(g, levels, level,
				       index >> p->log_digests_per_block);
	*offset = (index & ((1U << p->log_digests_per_block) - 1)) *
		  p->digest_size;
}

/**
 * extverity_level_blocks() - hash blocks of one level below the top
 * @g: geometry of the tree
 * @level: the level, below the top (level < g->num_levels - 1)
 *
 * Lower levels are stored root side first, so a level ends where the level
 * under it starts, and level 0 at the end of the tree's LEVELS blocks.
 */
static inline u64 extverity_level_blocks(const struct extverity_geometry *g,
					 u32 level)
{
	u64 end = level ? g->level_start[level - 1] : g->lower_blocks;

	return end - g->level_start[level];
}

#endif /* DM_EXTVERITY_FORMAT_H */
