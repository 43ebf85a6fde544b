// SPDX-License-Identifier: GPL-2.0
/*
 * Building an fs-verity Merkle tree (fs/verity's geometry, see
 * extverity_tree_geometry()) from data blocks read out of an image at their
 * physical positions.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "tree.h"

int ev_tree_init(struct ev_tree *t, const struct extverity_params *p,
		 u64 data_size)
{
	memset(t, 0, sizeof(*t));
	t->p = p;
	t->data_size = data_size;
	t->scratch_fd = -1;
	if (extverity_tree_geometry(p, data_size, &t->g))
		return -EFBIG;
	/*
	 * Only the used part of the top block is kept: most files have a
	 * one-level tree whose top is a few digests.
	 */
	if (t->g.num_levels)
		t->top = xcalloc(t->g.top_len, 1);
	return 0;
}

void ev_tree_free(struct ev_tree *t)
{
	free(t->top);
	t->top = NULL;
}

/*
 * The scratch file holds the lower levels as the LEVELS section will, from
 * t->scratch_off: positions in it are those of the shared format code, with
 * the tree's lower levels taken to start at block 0 (and its top at byte 0
 * of t->top).
 */

/* Byte offset in the scratch file of block @index of level @level. */
static u64 block_off(const struct ev_tree *t, u32 level, u64 index)
{
	return t->scratch_off +
	       (extverity_level_block(&t->g, 0, level, index) <<
		t->p->log_blocksize);
}

/*
 * Byte offset of digest @index of level @level: in t->top for the top, in
 * the scratch file below it.  A level's digests follow one another without
 * a gap, so @n of them from @index take @n digest sizes from there.
 */
static u64 digest_off(const struct ev_tree *t, u32 level, u64 index)
{
	u64 block, pos;
	u32 offset;

	extverity_digest_pos(t->p, &t->g, 0, 0, level, index, &block,
			     &offset);
	pos = (block << t->p->log_blocksize) + offset;
	return level == t->g.num_levels - 1 ? pos : t->scratch_off + pos;
}

/*
 * Store the @n digests of level @level's entries [@first, @first + @n):
 * the root, the top in memory, or a lower level in the scratch file.
 * False on a write error, which is kept in t->scratch_err.
 */
static bool store_digests(struct ev_tree *t, u32 level, u64 first, u64 n,
			  const u8 *dig)
{
	u32 ds = t->p->digest_size;
	int err;

	if (!t->g.num_levels) {
		memcpy(t->root, dig, ds);
		return true;
	}
	if (level == t->g.num_levels - 1) {
		memcpy(t->top + digest_off(t, level, first), dig, n * ds);
		return true;
	}
	err = ev_pwrite(t->scratch_fd, dig, n * ds,
			digest_off(t, level, first));
	if (err)
		t->scratch_err = err;
	return !err;
}

/*
 * Hash the @n blocks at @blocks into the @n digests at @dig.  False when
 * OpenSSL failed, which is noted in t->hash_failed for the thread that
 * collects the trees to report once.
 */
static bool hash_blocks(struct ev_tree *t, struct ev_hasher *h,
			const u8 *blocks, u64 n, u8 *dig)
{
	if (ev_hash_blocks(h, blocks, n, dig)) {
		t->hash_failed = true;
		return false;
	}
	return true;
}

/* Index of the first run that ends after @blk. */
static size_t find_run(const struct ev_tree *t, u64 blk)
{
	size_t lo = 0, hi = t->nr_runs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ev_run *r = &t->runs[mid];

		if (r->logical + r->count <= blk)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * fs-verity hashes the last block zero-padded; remember whether the bytes we
 * pad over were zero on disk, since the block itself must then be covered
 * by the residual tree instead.
 */
static void pad_last_block(struct ev_tree *t, u8 *block, u32 block_size)
{
	u32 used = t->data_size & (block_size - 1);

	if (!used)
		return;
	if (!ev_is_zero(block + used, block_size - used)) {
		t->tail_dirty = true;
		memset(block + used, 0, block_size - used);
	}
}

/*
 * Leaves [@from, @to) are holes: a zero block each, as fs-verity has it.
 * @dig holds the digests of the leaves from @base on.
 */
static void hash_holes(struct ev_hasher *h, u64 from, u64 to, u8 *dig,
		       u64 base)
{
	u32 ds = h->digest_size;

	for (; from < to; from++)
		memcpy(dig + (from - base) * ds, h->zero_digest, ds);
}

/* First block at or after @pos that may hold data, per SEEK_DATA. */
static u64 next_data(int fd, u64 pos, u64 last, u32 bs)
{
	off_t d = lseek(fd, (off_t)(pos * bs), SEEK_DATA);
	u64 blk;

	/* ENXIO: nothing but holes up to EOF; other errors: just read on. */
	if (d < 0)
		return errno == ENXIO ? last : pos;
	blk = (u64)d / bs;
	return blk < pos ? pos : blk > last ? last : blk;
}

/*
 * The content as a reader of the file sees it, read through the mount: this
 * is what the file's digest must cover whatever the filesystem stores
 * (compressed, inline, at addresses that are not image offsets).  Bytes
 * past EOF read as zeros, so the tail never makes the tree dirty here; the
 * caller only gives a tree image blocks already compared with this content.
 * Leaves [@first, @last) go to @dig; @last - @first fits in @buf.  False on
 * a read error, kept in t->err, or a hashing failure (hash_blocks()).
 */
static bool hash_from_file(struct ev_tree *t, struct ev_hasher *h, int fd,
			   u64 first, u64 last, u8 *buf, u8 *dig)
{
	u32 bs = h->block_size, ds = h->digest_size;
	u64 pos = first, end;
	int err;

	while (pos < last) {
		end = next_data(fd, pos, last, bs);
		hash_holes(h, pos, end, dig, first);
		pos = end;
		if (pos == last)
			break;
		err = ev_pread_padded(fd, buf, (last - pos) * bs, pos * bs);
		if (err) {
			t->err = err;
			return false;
		}
		if (!hash_blocks(t, h, buf, last - pos,
				 dig + (pos - first) * ds))
			return false;
		pos = last;
	}
	return true;
}

/* Leaves [@first, @last) from the image, into @dig; as hash_from_file(). */
static bool hash_from_runs(struct ev_tree *t, struct ev_hasher *h, int fd,
			   u64 first, u64 last, u8 *buf, u8 *dig)
{
	u32 bs = h->block_size, ds = h->digest_size;
	u64 nblocks = t->g.data_blocks, pos = first;
	size_t ri = find_run(t, pos);

	while (pos < last) {
		const struct ev_run *r = ri < t->nr_runs ? &t->runs[ri] : NULL;
		u64 end;
		int err;

		if (!r || r->logical > pos) {
			end = r && r->logical < last ? r->logical : last;
			hash_holes(h, pos, end, dig, first);
			pos = end;
			continue;
		}
		end = r->logical + r->count;
		if (end > last)
			end = last;
		err = ev_pread(fd, buf, (end - pos) * bs,
			       (r->physical + pos - r->logical) * bs);
		if (err) {
			t->err = err;
			return false;
		}
		if (end == nblocks)
			pad_last_block(t, buf + (end - 1 - pos) * bs, bs);
		if (!hash_blocks(t, h, buf, end - pos, dig + (pos - first) * ds))
			return false;
		pos = end;
		if (pos == r->logical + r->count)
			ri++;
	}
	return true;
}

void ev_tree_hash_data(struct ev_tree *t, struct ev_hasher *h, int fd,
		       u64 first, u64 last, u8 *buf, size_t buf_blocks,
		       u8 *dig)
{
	u32 bs = h->block_size;
	u64 from, to;
	int src = -1;
	bool ok;

	if (t->src_path) {
		src = openat(t->src_dir, t->src_path,
			     O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (src < 0) {
			t->err = -errno;
			return;
		}
	}
	/* A window of at most @buf_blocks leaves at a time. */
	for (from = first; from < last; from = to) {
		to = last - from > buf_blocks ? from + buf_blocks : last;
		if (src >= 0) {
			ok = hash_from_file(t, h, src, from, to, buf, dig);
		} else if (t->inline_data) {
			/* At most one block: leaf 0 is the whole content. */
			memset(buf, 0, bs);
			memcpy(buf, t->inline_data, t->data_size);
			ok = hash_blocks(t, h, buf, 1, dig);
		} else {
			ok = hash_from_runs(t, h, fd, from, to, buf, dig);
		}
		if (!ok || !store_digests(t, 0, from, to - from, dig))
			break;
	}
	if (src >= 0)
		close(src);
}

void ev_tree_finish(struct ev_tree *t, struct ev_hasher *h, u8 *buf,
		    size_t buf_blocks, u8 *dig)
{
	u32 bs = h->block_size, level;
	u64 count, i, n;
	int err;

	if (!t->g.num_levels)
		return;
	/*
	 * Level @level - 1, below the top, is read back in windows of
	 * @buf_blocks blocks; each block's digest goes to level @level.
	 */
	for (level = 1; level < t->g.num_levels; level++) {
		count = extverity_level_blocks(&t->g, level - 1);
		for (i = 0; i < count; i += n) {
			n = count - i > buf_blocks ? buf_blocks : count - i;
			err = ev_pread(t->scratch_fd, buf, n * bs,
				       block_off(t, level - 1, i));
			if (err) {
				t->scratch_err = err;
				return;
			}
			if (!hash_blocks(t, h, buf, n, dig) ||
			    !store_digests(t, level, i, n, dig))
				return;
		}
	}
	memset(buf, 0, bs);
	memcpy(buf, t->top, t->g.top_len);
	hash_blocks(t, h, buf, 1, t->root);
}

static int cmp_leaf_range(const void *x, const void *y)
{
	const struct ev_leaf_range *a = x, *b = y;

	if (a->tree != b->tree)
		return a->tree < b->tree ? -1 : 1;
	return a->leaf < b->leaf ? -1 : a->leaf > b->leaf;
}

/* Blocks of level @level that ranges @r[0..@n) of one tree reach into. */
static u64 touched_blocks(const struct ev_leaf_range *r, size_t n, u32 shift)
{
	u64 touched = 0, last = 0, a, b;
	size_t i;

	for (i = 0; i < n; i++) {
		a = r[i].leaf >> shift;
		b = (r[i].leaf + r[i].count - 1) >> shift;
		/* Sorted by leaf: only the block before can be seen again. */
		if (touched && a <= last)
			a = last + 1;
		if (a <= b) {
			touched += b - a + 1;
			last = b;
		}
	}
	return touched;
}

u64 ev_hole_hash_blocks(const struct extverity_params *p,
			const struct extverity_geometry *geo, u64 nr_trees,
			struct ev_leaf_range *r, size_t n)
{
	u64 holes = 0, t;
	size_t i = 0, k;
	u32 level, shift;

	if (n)	/* qsort(NULL, 0) is undefined */
		qsort(r, n, sizeof(*r), cmp_leaf_range);
	for (t = 0; t < nr_trees; t++) {
		const struct extverity_geometry *g = &geo[t];

		while (i < n && r[i].tree < t)
			i++;
		for (k = i; k < n && r[k].tree == t; k++)
			;
		for (level = 0; level + 1 < g->num_levels; level++) {
			/* A block of the level covers 1 << shift leaves. */
			shift = (level + 1) * p->log_digests_per_block;
			holes += extverity_level_blocks(g, level) -
				 touched_blocks(r + i, k - i, shift);
		}
		i = k;
	}
	return holes;
}
