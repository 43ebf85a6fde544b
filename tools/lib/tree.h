/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Building one fs-verity Merkle tree over blocks read from an image.
 *
 * Only the top of a tree is kept in memory: its lower levels, whose size
 * follows the file's apparent size (64 MiB for an 8 GiB sparse file), go to
 * a scratch file, written and read back in chunks, so memory stays bounded
 * whatever the file sizes.
 */
#ifndef EXTVERITY_TREE_H
#define EXTVERITY_TREE_H

#include <stdatomic.h>

#include "dm-extverity-format.h"
#include "hash.h"

/* @count data blocks at @logical of a tree live at image block @physical. */
struct ev_run {
	u64 logical;
	u64 physical;
	u64 count;
};

/**
 * struct ev_tree - a tree being built
 * @p: the format parameters it is built with
 * @data_size: bytes the tree covers
 * @g: its geometry
 * @top: the used part of the top block (g.top_len bytes); NULL when the
 *	tree has no hash blocks
 * @scratch_fd: the file holding the lower levels (g.lower_blocks blocks in
 *	storage order at @scratch_off), zeros where not yet written
 * @scratch_off: byte offset of the lower levels in @scratch_fd
 * @root: the root hash
 * @runs: where the data lives, sorted by logical block; logical blocks no run
 *	covers are holes and hash as zeros
 * @nr_runs: number of @runs
 * @inline_data: when not NULL, the tree's content (at most one block) is
 *	these @data_size bytes instead of @runs
 * @src_dir: directory that @src_path is relative to
 * @src_path: when not NULL, the content is read from this file (in a
 *	mounted image) at its logical offsets instead of from @runs, which
 *	then only serve to give blocks to the tree
 * @tail_dirty: set when the last data block read from the image has
 *	non-zero bytes past @data_size
 * @err: an error reading the data, -errno
 * @scratch_err: an error writing or reading @scratch_fd, -errno
 * @hash_failed: OpenSSL failed to hash a block of the tree
 *
 * @err, @scratch_err and @hash_failed are stored by whichever hashing
 * thread fails, and read once the threads are joined: atomic, so that two
 * failing threads only pick which error is kept.  A thread that stores one
 * stops hashing that part of the tree, whose content is then undefined.
 */
struct ev_tree {
	const struct extverity_params *p;
	u64 data_size;
	struct extverity_geometry g;
	u8 *top;
	int scratch_fd;
	u64 scratch_off;
	u8 root[EXTVERITY_MAX_DIGEST_SIZE];
	const struct ev_run *runs;
	size_t nr_runs;
	const u8 *inline_data;
	int src_dir;
	const char *src_path;
	bool tail_dirty;
	atomic_int err;
	atomic_int scratch_err;
	atomic_bool hash_failed;
};

/**
 * ev_tree_init() - size a tree and allocate its top
 * @t: the tree; runs/inline_data and, when g.lower_blocks is not zero,
 *	scratch_fd/scratch_off are left for the caller to set
 * @p: format parameters, kept in @t: they must outlive it
 * @data_size: bytes the tree covers
 *
 * Return: 0, or -EFBIG when the tree exceeds the format's limits.
 */
int ev_tree_init(struct ev_tree *t, const struct extverity_params *p,
		 u64 data_size);
void ev_tree_free(struct ev_tree *t);

/**
 * ev_tree_hash_data() - hash data blocks [@first, @last) into level 0
 * @t: the tree
 * @h: this thread's hasher
 * @fd: the data image
 * @first: first data block of the tree to hash
 * @last: one past the last
 * @buf: scratch buffer of @buf_blocks blocks
 * @buf_blocks: its size
 * @dig: scratch buffer of @buf_blocks digests
 *
 * Different ranges of one tree may be hashed concurrently.  A read error is
 * stored in t->err, a scratch file error in t->scratch_err, a hashing
 * failure in t->hash_failed (races between threads only pick which error is
 * kept).  With t->src_path, @fd is not used.
 */
void ev_tree_hash_data(struct ev_tree *t, struct ev_hasher *h, int fd,
		       u64 first, u64 last, u8 *buf, size_t buf_blocks,
		       u8 *dig);

/**
 * ev_tree_finish() - hash the levels above level 0 and compute the root
 * @t: a tree whose data blocks have all been hashed
 * @h: hasher
 * @buf: scratch buffer of @buf_blocks blocks, at least one
 * @buf_blocks: its size
 * @dig: scratch buffer of @buf_blocks digests
 *
 * A scratch file error is stored in t->scratch_err, a hashing failure in
 * t->hash_failed.
 */
void ev_tree_finish(struct ev_tree *t, struct ev_hasher *h, u8 *buf,
		    size_t buf_blocks, u8 *dig);

/* Leaves [@leaf, @leaf + @count) of tree @tree, which extents point to. */
struct ev_leaf_range {
	u32 tree;
	u64 leaf;
	u64 count;
};

/**
 * ev_hole_hash_blocks() - lower-level hash blocks over holes only
 * @p: format parameters
 * @geo: the geometry of each tree
 * @nr_trees: their number
 * @r: the leaf ranges the extent map points to (sorted here)
 * @n: their number
 *
 * A block of level L covers 2^((L + 1) * log_digests_per_block) leaves; it
 * covers holes only when no range reaches into it.  Used by format and
 * dump alike, from the extent map, so both report the same number.
 *
 * Return: how many such blocks all trees' lower levels hold.
 */
u64 ev_hole_hash_blocks(const struct extverity_params *p,
			const struct extverity_geometry *geo, u64 nr_trees,
			struct ev_leaf_range *r, size_t n);

/* Bytes of the lower levels, which live in the scratch file. */
static inline u64 ev_tree_lower_bytes(const struct ev_tree *t, u32 block_size)
{
	return t->g.lower_blocks * block_size;
}

#endif /* EXTVERITY_TREE_H */
