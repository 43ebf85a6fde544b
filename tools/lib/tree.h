/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Building one fs-verity Merkle tree over blocks read from an image.
 */
#ifndef EXTVERITY_TREE_H
#define EXTVERITY_TREE_H

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
 * @data_size: bytes the tree covers
 * @g: its geometry
 * @blocks: the lower levels in storage order followed by the used part of
 *	the top block (g.top_len bytes); NULL when the tree has no hash blocks
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
 * @err: first read error, -errno
 */
struct ev_tree {
	u64 data_size;
	struct extverity_geometry g;
	u8 *blocks;
	u8 root[EXTVERITY_MAX_DIGEST_SIZE];
	const struct ev_run *runs;
	size_t nr_runs;
	const u8 *inline_data;
	int src_dir;
	const char *src_path;
	bool tail_dirty;
	int err;
};

/**
 * ev_tree_init() - size a tree and allocate its hash blocks
 * @t: the tree; runs/inline_data are left for the caller to set
 * @p: format parameters (block and digest sizes)
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
 *
 * Different ranges of one tree may be hashed concurrently.  A read error is
 * stored in t->err (races between threads only pick which error is kept).
 * With t->src_path, @fd is not used.
 */
void ev_tree_hash_data(struct ev_tree *t, struct ev_hasher *h, int fd,
		       u64 first, u64 last, u8 *buf, size_t buf_blocks);

/**
 * ev_tree_finish() - hash the levels above level 0 and compute the root
 * @t: a tree whose data blocks have all been hashed
 * @h: hasher
 * @scratch: one block of scratch memory
 */
void ev_tree_finish(struct ev_tree *t, struct ev_hasher *h, u8 *scratch);

/* First byte of hash level @level (0 = digests of the data blocks). */
u8 *ev_tree_level(const struct ev_tree *t, u32 level, u32 block_size);

#endif /* EXTVERITY_TREE_H */
