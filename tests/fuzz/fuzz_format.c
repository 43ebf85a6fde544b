// SPDX-License-Identifier: GPL-2.0
/*
 * drivers/md/dm-extverity-format.c, the validators the kernel runs on a
 * manifest that passed authentication: a superblock, then a byte N and N
 * tree records, then extent records up to the first refused one, then
 * inode index entries to the end of the input.  Whatever they accept must
 * be safe to use as the kernel uses it: sections inside the hash area and
 * apart (INODES, FEC and TOP_DIGESTS only when their compat flags are
 * set, TOP_DIGESTS a digest per TOPS block), every
 * digest of every accepted tree inside its section, every accepted extent
 * inside the data device and its tree, every accepted inode entry sorted
 * and naming a file's tree; and the FEC record (from the superblock's
 * reserved bytes) a code over exactly the data and the area.
 */
#include <stdbool.h>
#include <string.h>

#include "dm-extverity-format.h"
#include "fuzz.h"

#define MAX_TREES	16

static void check_params(const struct extverity_superblock *sb,
			 const struct extverity_params *p)
{
	bool index = le32_to_cpu(sb->compat_flags) &
		     EXTVERITY_COMPAT_INODE_INDEX;
	bool fec = le32_to_cpu(sb->compat_flags) & EXTVERITY_COMPAT_FEC;
	bool tops = le32_to_cpu(sb->compat_flags) &
		    EXTVERITY_COMPAT_TOP_DIGESTS;
	u64 next = 1;
	unsigned int id;

	FUZZ_CHECK(p->log_blocksize >= EXTVERITY_MIN_LOG_BLOCKSIZE &&
		   p->log_blocksize <= EXTVERITY_MAX_LOG_BLOCKSIZE &&
		   p->block_size == 1U << p->log_blocksize,
		   "block size %u", p->block_size);
	FUZZ_CHECK(p->digest_size == extverity_digest_size(p->hash_algorithm) &&
		   p->digest_size &&
		   p->digest_size << p->log_digests_per_block == p->block_size,
		   "digest size %u, %u per block", p->digest_size,
		   1U << p->log_digests_per_block);
	FUZZ_CHECK(p->salt_size <= EXTVERITY_MAX_SALT_SIZE, "salt %u",
		   p->salt_size);
	FUZZ_CHECK(p->data_blocks >= 1 &&
		   p->data_blocks <= EXTVERITY_MAX_DATA_BLOCKS &&
		   p->hash_blocks >= 2 &&
		   p->hash_blocks <= EXTVERITY_MAX_DATA_BLOCKS,
		   "data %llu hash %llu blocks",
		   (unsigned long long)p->data_blocks,
		   (unsigned long long)p->hash_blocks);
	FUZZ_CHECK(p->tree_entry_size ==
		   sizeof(struct extverity_tree) + p->digest_size,
		   "tree record %u bytes", p->tree_entry_size);
	FUZZ_CHECK(p->compat_flags == (le32_to_cpu(sb->compat_flags) &
					EXTVERITY_COMPAT_KNOWN),
		   "compat flags %#x", p->compat_flags);
	/* Without its flag, slot 5 is ignored, however it is filled. */
	FUZZ_CHECK(index || (!p->sect[EXTVERITY_SECT_INODES].start_block &&
			     !p->sect[EXTVERITY_SECT_INODES].nr_blocks &&
			     !p->sect[EXTVERITY_SECT_INODES].nr_entries),
		   "INODES section read without its flag");
	FUZZ_CHECK(fec || (!p->sect[EXTVERITY_SECT_FEC].start_block &&
			   !p->sect[EXTVERITY_SECT_FEC].nr_blocks &&
			   !p->sect[EXTVERITY_SECT_FEC].nr_entries),
		   "FEC section read without its flag");
	FUZZ_CHECK(tops ||
		   (!p->sect[EXTVERITY_SECT_TOP_DIGESTS].start_block &&
		    !p->sect[EXTVERITY_SECT_TOP_DIGESTS].nr_blocks &&
		    !p->sect[EXTVERITY_SECT_TOP_DIGESTS].nr_entries),
		   "TOP_DIGESTS section read without its flag");
	for (id = 0; id < EXTVERITY_NR_SECTIONS; id++) {
		u64 start = p->sect[id].start_block, n = p->sect[id].nr_blocks;
		u64 e = p->sect[id].nr_entries;

		if ((id == EXTVERITY_SECT_INODES && !index) ||
		    (id == EXTVERITY_SECT_FEC && !fec) ||
		    (id == EXTVERITY_SECT_TOP_DIGESTS && !tops))
			continue;

		FUZZ_CHECK(start == le64_to_cpu(sb->sections[id].start_block) &&
			   n == le64_to_cpu(sb->sections[id].nr_blocks) &&
			   e == le64_to_cpu(sb->sections[id].nr_entries),
			   "section %u differs from the superblock", id);
		if (!n) {
			FUZZ_CHECK(!start && !e, "empty section %u at %llu",
				   id, (unsigned long long)start);
			continue;
		}
		/* In id order, after the superblock, apart, inside. */
		FUZZ_CHECK(start >= next && start < p->hash_blocks &&
			   n <= p->hash_blocks - start,
			   "section %u: blocks %llu+%llu of %llu", id,
			   (unsigned long long)start, (unsigned long long)n,
			   (unsigned long long)p->hash_blocks);
		next = start + n;
	}
	for (id = 0; id <= EXTVERITY_SECT_TREES; id++) {
		u64 size = id == EXTVERITY_SECT_EXTENTS ?
			   sizeof(struct extverity_extent) : p->tree_entry_size;
		u64 bytes = p->sect[id].nr_entries * size;
		u64 n = p->sect[id].nr_blocks;

		FUZZ_CHECK(n && bytes <= n << p->log_blocksize &&
			   bytes > (n - 1) << p->log_blocksize,
			   "section %u: %llu records in %llu blocks", id,
			   (unsigned long long)p->sect[id].nr_entries,
			   (unsigned long long)n);
	}
	if (index) {
		u64 e = p->sect[EXTVERITY_SECT_INODES].nr_entries;
		u64 n = p->sect[EXTVERITY_SECT_INODES].nr_blocks;
		u64 bytes = e * sizeof(struct extverity_inode);

		/* May be empty (no files), else exactly long enough. */
		FUZZ_CHECK(bytes <= n << p->log_blocksize &&
			   (!n || bytes > (n - 1) << p->log_blocksize) &&
			   e < EXTVERITY_TREE_ZERO,
			   "INODES: %llu records in %llu blocks",
			   (unsigned long long)e, (unsigned long long)n);
	}
	/* One record, so one block. */
	FUZZ_CHECK(!fec || (p->sect[EXTVERITY_SECT_FEC].nr_entries == 1 &&
			    p->sect[EXTVERITY_SECT_FEC].nr_blocks == 1),
		   "FEC: %llu records in %llu blocks",
		   (unsigned long long)p->sect[EXTVERITY_SECT_FEC].nr_entries,
		   (unsigned long long)p->sect[EXTVERITY_SECT_FEC].nr_blocks);
	if (tops) {
		u64 e = p->sect[EXTVERITY_SECT_TOP_DIGESTS].nr_entries;
		u64 n = p->sect[EXTVERITY_SECT_TOP_DIGESTS].nr_blocks;

		/* A digest per TOPS block, in blocks exactly long enough. */
		FUZZ_CHECK(e == p->sect[EXTVERITY_SECT_TOPS].nr_blocks &&
			   e <= (n << p->log_blocksize) / p->digest_size &&
			   (!n || e * p->digest_size >
				  (n - 1) << p->log_blocksize),
			   "TOP_DIGESTS: %llu digests in %llu blocks for %llu "
			   "TOPS blocks", (unsigned long long)e,
			   (unsigned long long)n,
			   (unsigned long long)
			   p->sect[EXTVERITY_SECT_TOPS].nr_blocks);
	}
	FUZZ_CHECK(p->sect[EXTVERITY_SECT_EXTENTS].nr_entries <= p->data_blocks,
		   "more extents than data blocks");
	FUZZ_CHECK(p->sect[EXTVERITY_SECT_TREES].nr_entries <
		   EXTVERITY_TREE_ZERO, "too many trees");
	FUZZ_CHECK(!p->sect[EXTVERITY_SECT_TOPS].nr_entries &&
		   !p->sect[EXTVERITY_SECT_LEVELS].nr_entries,
		   "hash block section with records");
}

/* The geometry, computed here the plain way. */
static void check_geometry(const struct extverity_params *p, u64 size,
			   const struct extverity_geometry *g)
{
	u64 per = 1ULL << p->log_digests_per_block;
	u64 blocks = (size + p->block_size - 1) / p->block_size;
	u64 count[EXTVERITY_MAX_LEVELS + 1], lower = 0, n = blocks;
	u32 levels = 0;

	while (n > 1) {
		n = (n + per - 1) / per;
		count[levels++] = n;
		FUZZ_CHECK(levels <= EXTVERITY_MAX_LEVELS, "%llu bytes: too "
			   "many levels accepted", (unsigned long long)size);
	}
	FUZZ_CHECK(g->data_blocks == blocks && g->num_levels == levels,
		   "%llu bytes: %llu blocks %u levels, want %llu %u",
		   (unsigned long long)size,
		   (unsigned long long)g->data_blocks, g->num_levels,
		   (unsigned long long)blocks, levels);
	if (!levels)
		return;
	for (u32 l = 0; l + 1 < levels; l++) {
		/* Root side first: level l follows the levels above it. */
		u64 above = 0;

		for (u32 k = l + 1; k + 1 < levels; k++)
			above += count[k];
		FUZZ_CHECK(g->level_start[l] == above, "level %u at %llu", l,
			   (unsigned long long)g->level_start[l]);
		lower += count[l];
	}
	FUZZ_CHECK(g->lower_blocks == lower, "%llu lower blocks, want %llu",
		   (unsigned long long)g->lower_blocks,
		   (unsigned long long)lower);
	FUZZ_CHECK(g->top_len == (levels == 1 ? blocks : count[levels - 2]) *
		   p->digest_size && g->top_len <= p->block_size,
		   "top of %u bytes", g->top_len);
}

/* Where the kernel would read a digest: inside TOPS or LEVELS. */
static void check_digest_pos(const struct extverity_params *p,
			     const struct extverity_geometry *g, u64 top,
			     u64 levels, u32 level, u64 index)
{
	const u64 tops = p->sect[EXTVERITY_SECT_TOPS].start_block;
	const u64 lv = p->sect[EXTVERITY_SECT_LEVELS].start_block;
	u64 block;
	u32 offset;

	extverity_digest_pos(p, g, top, levels, level, index, &block, &offset);
	FUZZ_CHECK(offset + p->digest_size <= p->block_size,
		   "digest at offset %u", offset);
	if (level == g->num_levels - 1) {
		FUZZ_CHECK(block >= tops && block - tops <
			   p->sect[EXTVERITY_SECT_TOPS].nr_blocks &&
			   block == top >> p->log_blocksize,
			   "top digest %llu in block %llu",
			   (unsigned long long)index,
			   (unsigned long long)block);
		return;
	}
	FUZZ_CHECK(block >= levels && block - levels < g->lower_blocks &&
		   block >= lv &&
		   block - lv < p->sect[EXTVERITY_SECT_LEVELS].nr_blocks,
		   "level %u digest %llu in block %llu", level,
		   (unsigned long long)index, (unsigned long long)block);
}

/* Digests of data blocks [first, last] of a tree, at every level. */
static void check_range(const struct extverity_params *p,
			const struct extverity_geometry *g,
			const struct extverity_tree *t, u64 first, u64 last)
{
	u64 top = le64_to_cpu(t->top), levels = le64_to_cpu(t->levels);

	for (u32 l = 0; l < g->num_levels; l++) {
		u32 shift = l * p->log_digests_per_block;

		check_digest_pos(p, g, top, levels, l, first >> shift);
		check_digest_pos(p, g, top, levels, l, last >> shift);
	}
}

static void check_tree(const struct extverity_params *p,
		       const struct extverity_tree *t,
		       const struct extverity_geometry *g)
{
	u64 top = le64_to_cpu(t->top), levels = le64_to_cpu(t->levels);
	u64 tops = p->sect[EXTVERITY_SECT_TOPS].start_block << p->log_blocksize;

	check_geometry(p, le64_to_cpu(t->data_size), g);
	FUZZ_CHECK(g->data_blocks <= EXTVERITY_MAX_TREE_BLOCKS,
		   "tree of %llu blocks", (unsigned long long)g->data_blocks);
	if (!g->num_levels) {
		FUZZ_CHECK(!top && !levels, "hash blocks for a tiny tree");
		return;
	}
	FUZZ_CHECK(top >= tops && top % p->digest_size == 0 &&
		   (top & (p->block_size - 1)) + g->top_len <= p->block_size &&
		   (top >> p->log_blocksize) - (tops >> p->log_blocksize) <
		   p->sect[EXTVERITY_SECT_TOPS].nr_blocks,
		   "top at byte %llu", (unsigned long long)top);
	if (g->num_levels == 1)
		FUZZ_CHECK(!levels, "lower levels for a one-level tree");
	check_range(p, g, t, 0, g->data_blocks - 1);
}

/* Ranges [a, a + la) and [b, b + lb) share nothing (empty ranges never do). */
static bool disjoint(u64 a, u64 la, u64 b, u64 lb)
{
	return !la || !lb || a + la <= b || b + lb <= a;
}

/* No two accepted trees share a byte of TOPS or a block of LEVELS. */
static void check_disjoint(const struct extverity_tree *t,
			   const struct extverity_geometry *g,
			   const struct extverity_tree *u,
			   const struct extverity_geometry *h)
{
	FUZZ_CHECK(disjoint(le64_to_cpu(t->top), g->top_len,
			    le64_to_cpu(u->top), h->top_len),
		   "two trees share top bytes at %llu and %llu",
		   (unsigned long long)le64_to_cpu(t->top),
		   (unsigned long long)le64_to_cpu(u->top));
	FUZZ_CHECK(disjoint(le64_to_cpu(t->levels), g->lower_blocks,
			    le64_to_cpu(u->levels), h->lower_blocks),
		   "two trees share LEVELS blocks at %llu and %llu",
		   (unsigned long long)le64_to_cpu(t->levels),
		   (unsigned long long)le64_to_cpu(u->levels));
}

/*
 * The FEC record, taken from the superblock's reserved bytes (which the
 * parser ignores, so any fuzzed bytes will do): what is accepted is a code
 * the decoder handles, over exactly the data and the area, with parity
 * blocks that end inside the largest device.
 */
static void check_fec(const struct extverity_params *p,
		      const struct extverity_fec *f)
{
	struct extverity_fec_geometry g;
	const char *why = NULL;
	int err = extverity_check_fec(p, f, &g, &why);

	FUZZ_CHECK(!err || (err == -EINVAL && why && *why),
		   "FEC error %d without a reason", err);
	if (err)
		return;
	FUZZ_CHECK(g.roots >= EXTVERITY_FEC_MIN_ROOTS &&
		   g.roots <= EXTVERITY_FEC_MAX_ROOTS &&
		   g.rsn == EXTVERITY_FEC_RSM - g.roots, "FEC roots %u", g.roots);
	FUZZ_CHECK(g.blocks == p->data_blocks + p->hash_blocks &&
		   g.rounds * g.rsn >= g.blocks &&
		   (g.rounds - 1) * g.rsn < g.blocks,
		   "FEC: %llu rounds for %llu blocks",
		   (unsigned long long)g.rounds, (unsigned long long)g.blocks);
	FUZZ_CHECK(g.parity_blocks == g.rounds * g.roots &&
		   g.start + g.parity_blocks <= EXTVERITY_MAX_DATA_BLOCKS,
		   "FEC parity %llu+%llu", (unsigned long long)g.start,
		   (unsigned long long)g.parity_blocks);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct extverity_superblock sb;
	struct extverity_params p, p2;
	struct extverity_geometry geo[MAX_TREES];
	u8 trees[MAX_TREES][sizeof(struct extverity_tree) +
			    EXTVERITY_MAX_DIGEST_SIZE];
	struct extverity_tree_cursor cur = { 0 };
	bool ok[MAX_TREES];
	const char *why = NULL;
	size_t nt, pos, i;
	u64 expect = 0, prev_ino = 0;
	int err;

	if (size < sizeof(sb))
		return 0;
	memcpy(&sb, data, sizeof(sb));
	err = extverity_parse_superblock(&sb, &p, &why);
	FUZZ_CHECK(!err || (why && *why && (err == -EINVAL ||
					    err == -EOPNOTSUPP)),
		   "error %d without a reason", err);
	if (err)
		return 0;
	check_params(&sb, &p);
	FUZZ_CHECK(!extverity_parse_superblock(&sb, &p2, &why) &&
		   !memcmp(&p, &p2, sizeof(p)), "parse is not repeatable");
	if (p.compat_flags & EXTVERITY_COMPAT_FEC)
		check_fec(&p, (const void *)sb.__reserved);

	pos = sizeof(sb);
	nt = pos < size ? data[pos++] % (MAX_TREES + 1) : 0;
	for (i = 0; i < nt; i++) {
		const struct extverity_tree *t = (const void *)trees[i];

		memset(trees[i], 0, sizeof(trees[i]));
		if (size - pos >= p.tree_entry_size) {
			memcpy(trees[i], data + pos, p.tree_entry_size);
			pos += p.tree_entry_size;
		}
		ok[i] = !extverity_check_tree(&p, t, &cur, &geo[i], &why);
		if (!ok[i])
			continue;
		check_tree(&p, t, &geo[i]);
		for (size_t j = 0; j < i; j++)
			if (ok[j])
				check_disjoint(t, &geo[i], (const void *)trees[j],
					       &geo[j]);
	}
	while (size - pos >= sizeof(struct extverity_extent)) {
		struct extverity_extent e;
		u64 start, leaf, count, tb;
		u32 tree;

		memcpy(&e, data + pos, sizeof(e));
		pos += sizeof(e);
		start = le64_to_cpu(e.start);
		leaf = le64_to_cpu(e.leaf);
		count = le32_to_cpu(e.count);
		tree = le32_to_cpu(e.tree);
		/* As the callers do: no tree blocks for a bad index. */
		tb = tree < nt && ok[tree] ? geo[tree].data_blocks : 0;
		if (extverity_check_extent(&p, &e, expect, nt, tb, &why)) {
			/* The inode entries start after the refused extent. */
			pos -= sizeof(e);
			break;
		}
		FUZZ_CHECK(start == expect && count &&
			   start + count <= p.data_blocks,
			   "extent %llu+%llu accepted after %llu",
			   (unsigned long long)start,
			   (unsigned long long)count,
			   (unsigned long long)expect);
		expect += count;
		if (tree == EXTVERITY_TREE_ZERO) {
			FUZZ_CHECK(!leaf, "zero range with leaf %llu",
				   (unsigned long long)leaf);
			continue;
		}
		FUZZ_CHECK(tree < nt && ok[tree] && leaf + count <= tb,
			   "extent on tree %u leaves %llu+%llu of %llu", tree,
			   (unsigned long long)leaf,
			   (unsigned long long)count,
			   (unsigned long long)tb);
		if (geo[tree].num_levels)
			check_range(&p, &geo[tree], (const void *)trees[tree],
				    leaf, leaf + count - 1);
	}
	while (size - pos >= sizeof(struct extverity_inode)) {
		struct extverity_inode in;
		u64 ino;
		u32 tree;

		memcpy(&in, data + pos, sizeof(in));
		pos += sizeof(in);
		ino = le64_to_cpu(in.inode);
		tree = le32_to_cpu(in.tree);
		if (extverity_check_inode(&in, prev_ino, nt, &why)) {
			FUZZ_CHECK(why && *why, "inode entry refused without "
				   "a reason");
			break;
		}
		FUZZ_CHECK(ino && ino > prev_ino && tree &&
			   tree != EXTVERITY_TREE_ZERO && tree < nt &&
			   !in.__reserved,
			   "inode %llu (after %llu) tree %u of %zu accepted",
			   (unsigned long long)ino,
			   (unsigned long long)prev_ino, tree, nt);
		prev_ino = ino;
	}
	return 0;
}
