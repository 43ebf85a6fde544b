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
	t->data_size = data_size;
	if (extverity_tree_geometry(p, data_size, &t->g))
		return -EFBIG;
	/*
	 * Only the used part of the top block is kept: most files have a
	 * one-level tree whose top is a few digests.
	 */
	if (t->g.num_levels)
		t->blocks = xcalloc(t->g.lower_blocks * p->block_size +
				    t->g.top_len, 1);
	return 0;
}

void ev_tree_free(struct ev_tree *t)
{
	free(t->blocks);
	t->blocks = NULL;
}

u8 *ev_tree_level(const struct ev_tree *t, u32 level, u32 block_size)
{
	if (level == t->g.num_levels - 1)
		return t->blocks + t->g.lower_blocks * block_size;
	return t->blocks + t->g.level_start[level] * block_size;
}

static u8 *leaf_digest(struct ev_tree *t, u64 idx, u32 block_size,
		       u32 digest_size)
{
	if (!t->g.num_levels)
		return t->root;
	return ev_tree_level(t, 0, block_size) + idx * digest_size;
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

/* Leaves [@from, @to) are holes: a zero block each, as fs-verity has it. */
static void hash_holes(struct ev_tree *t, struct ev_hasher *h, u64 from,
		       u64 to)
{
	u32 bs = h->block_size, ds = h->digest_size;

	for (; from < to; from++)
		memcpy(leaf_digest(t, from, bs, ds), h->zero_digest, ds);
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
 */
static void hash_from_file(struct ev_tree *t, struct ev_hasher *h, u64 first,
			   u64 last, u8 *buf, size_t buf_blocks)
{
	u32 bs = h->block_size, ds = h->digest_size;
	u64 pos = first, end, i;
	int fd, err;

	fd = openat(t->src_dir, t->src_path,
		    O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		t->err = -errno;
		return;
	}
	while (pos < last) {
		end = next_data(fd, pos, last, bs);
		hash_holes(t, h, pos, end);
		pos = end;
		if (pos == last)
			break;
		end = last - pos > buf_blocks ? pos + buf_blocks : last;
		err = ev_pread_padded(fd, buf, (end - pos) * bs, pos * bs);
		if (err) {
			t->err = err;
			break;
		}
		for (i = pos; i < end; i++)
			ev_hash_block(h, buf + (i - pos) * bs,
				      leaf_digest(t, i, bs, ds));
		pos = end;
	}
	close(fd);
}

void ev_tree_hash_data(struct ev_tree *t, struct ev_hasher *h, int fd,
		       u64 first, u64 last, u8 *buf, size_t buf_blocks)
{
	u32 bs = h->block_size, ds = h->digest_size;
	u64 nblocks = t->g.data_blocks, pos = first;
	size_t ri;

	if (t->src_path) {
		hash_from_file(t, h, first, last, buf, buf_blocks);
		return;
	}
	if (t->inline_data) {
		if (first == 0 && last > 0) {
			memset(buf, 0, bs);
			memcpy(buf, t->inline_data, t->data_size);
			ev_hash_block(h, buf, leaf_digest(t, 0, bs, ds));
		}
		return;
	}
	ri = find_run(t, pos);
	while (pos < last) {
		const struct ev_run *r = ri < t->nr_runs ? &t->runs[ri] : NULL;
		u64 end, i;
		int err;

		if (!r || r->logical > pos) {
			end = r && r->logical < last ? r->logical : last;
			hash_holes(t, h, pos, end);
			pos = end;
			continue;
		}
		end = r->logical + r->count;
		if (end > last)
			end = last;
		if (end - pos > buf_blocks)
			end = pos + buf_blocks;
		err = ev_pread(fd, buf, (end - pos) * bs,
			       (r->physical + pos - r->logical) * bs);
		if (err) {
			t->err = err;
			return;
		}
		for (i = pos; i < end; i++) {
			u8 *block = buf + (i - pos) * bs;

			if (i == nblocks - 1)
				pad_last_block(t, block, bs);
			ev_hash_block(h, block, leaf_digest(t, i, bs, ds));
		}
		pos = end;
		if (pos == r->logical + r->count)
			ri++;
	}
}

void ev_tree_finish(struct ev_tree *t, struct ev_hasher *h, u8 *scratch)
{
	u32 bs = h->block_size, ds = h->digest_size;
	u32 per_block = bs / ds, level;
	u64 count = t->g.data_blocks, i;

	if (!t->g.num_levels)
		return;
	for (level = 1; level < t->g.num_levels; level++) {
		const u8 *src = ev_tree_level(t, level - 1, bs);
		u8 *dst = ev_tree_level(t, level, bs);

		count = ev_div_round_up(count, per_block);
		for (i = 0; i < count; i++)
			ev_hash_block(h, src + i * bs, dst + i * ds);
	}
	memset(scratch, 0, bs);
	memcpy(scratch, ev_tree_level(t, t->g.num_levels - 1, bs),
	       t->g.top_len);
	ev_hash_block(h, scratch, t->root);
}
