// SPDX-License-Identifier: GPL-2.0
/*
 * Userspace verification of a whole image: each tree's stored hash blocks
 * are checked from its authenticated root down, and every data block of
 * every file or residual extent against its leaf digest, so a report can
 * name exactly what is damaged.  Each hash block is read once and used as
 * it was checked in memory.  Trees are read a window at a time, never
 * whole: a sparse file's tree is as large as its apparent size.  Data
 * blocks are queued in order, with copies of their leaf digests, into a
 * batch of up to CHUNK blocks across files, which every CPU reads and
 * hashes (hashpool.h); the digests are then compared in order.  A report
 * of hash blocks first empties the batch, so reports come in the order of
 * a check one block at a time.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hash.h"
#include "hashpool.h"
#include "parallel.h"
#include "progress.h"
#include "verify.h"

/* Hash blocks read at a time from one level. */
#define WIN	32

/* Blocks [@first, @first + @n) of one level, read and checked in memory. */
struct vlevel {
	u8 *blk;
	u64 first;		/* UINT64_MAX: none */
	u64 n;
	bool bad[WIN];		/* did not match, or is under one that did not */
};

struct vctx {
	struct ev_area *a;
	struct ev_hasher h;	/* hash blocks */
	struct ev_hashpool *pool;	/* data blocks, a batch at a time */
	int data_fd;
	u64 reports;
	struct ev_verify_result *res;	/* its callback, for each report */
	struct ev_path_buf *path;	/* the path of the item being reported */
	u8 *top;		/* current tree: its top block, zero-padded */
	u64 levels;		/* ... its extverity_tree.levels */
	struct vlevel lv[EXTVERITY_MAX_LEVELS];	/* ... checked blocks */
	u32 bad_levels;		/* ... levels reported damaged, a bit each */
	u8 *buf;		/* the batch: its data blocks */
	u8 *digests;		/* ... their digests */
	u8 *want;		/* ... the leaf digests they must have */
	struct vqueued *queued;	/* ... what each is, for a report */
	struct ev_hashpool_seg *segs;	/* ... where they are read from */
	size_t nr_queued, nr_segs;
	u64 *bad_tops;		/* TOPS blocks whose tops do not match */
	u32 **bad_top_trees;
	size_t *bad_top_n;
	size_t nr_bad_tops;
	size_t bad_tops_cap;
	u8 *tops;		/* TOPS blocks read, their digests checked */
	u64 tops_first;		/* ... counted from TOPS.start_block */
	u64 tops_n;
	u64 *bad_digests;	/* TOPS blocks that fail their top digest */
	size_t nr_bad_digests;
	size_t bad_digests_cap;
};

#define CHUNK	1024

/* A data block in the batch. */
struct vqueued {
	u64 block;		/* on the data device */
	u64 inode;		/* its file's */
	u64 offset;		/* ... byte offset in it */
	bool metadata;		/* residual tree's: no file */
};

/*
 * Report damaged item @it, described by @fmt: the first EV_MAX_REPORTS are
 * printed and passed to the caller's callback, the rest only counted.
 */
static __printf(3, 4) void report(struct vctx *v,
				  const struct ev_verify_item *it,
				  const char *fmt, ...)
{
	va_list ap;

	if (v->reports++ >= EV_MAX_REPORTS)
		return;
	/* On a terminal, not at the end of the progress line drawn there. */
	ev_progress_clear();
	va_start(ap, fmt);
	fputs("extverity: corrupted: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	if (v->res && v->res->item)
		v->res->item(it, v->res->arg);
}

/* Name tree @tree in @out; its file, if it is one's. */
static const struct ev_file_entry *tree_name(struct vctx *v, u32 tree,
					     char *out, size_t len)
{
	const struct ev_file_entry *f;

	if (tree == EXTVERITY_TREE_RESIDUAL) {
		snprintf(out, len, "metadata");
		return NULL;
	}
	f = ev_area_file_of_tree(v->a, tree);
	if (f)
		snprintf(out, len, "%s (inode %" PRIu64 ")",
			 ev_area_file_path(v->a, f - v->a->files, v->path),
			 f->ino);
	else
		snprintf(out, len, "tree %u", tree);
	return f;
}

/* Data block @blk of inode @ino at byte @off is damaged. */
static void report_file(struct vctx *v, u64 ino, u64 off, u64 blk)
{
	struct ev_verify_item it = {
		.kind = EV_ITEM_FILE, .inode = ino, .offset = off, .block = blk,
	};
	const char *path = NULL;

	/* Its path only when it is printed: a lookup is not free. */
	if (v->reports < EV_MAX_REPORTS)
		path = ev_area_path_of(v->a, ino, v->path);
	it.path = path;

	report(v, &it, "file %s (inode %" PRIu64 ") at offset %" PRIu64
	       " (data block %" PRIu64 ")", path ? path : "?", ino, off, blk);
}

static void report_metadata(struct vctx *v, u64 blk)
{
	struct ev_verify_item it = { .kind = EV_ITEM_METADATA, .block = blk };

	report(v, &it, "metadata block %" PRIu64, blk);
}

static int check_batch(struct vctx *v);

/*
 * Level @level of tree @tree's stored hash blocks is damaged; 0, or the
 * error of checking the data queued before (printed).
 */
static int report_tree(struct vctx *v, u32 tree, int level)
{
	struct ev_verify_item it = {
		.kind = EV_ITEM_HASH_TREE, .tree = tree, .level = level,
	};
	const struct ev_file_entry *f;
	char name[300];
	int err = check_batch(v);

	if (err)
		return err;
	/* Past the cap only counted: naming it costs a path lookup. */
	if (v->reports >= EV_MAX_REPORTS) {
		v->reports++;
		return 0;
	}
	f = tree_name(v, tree, name, sizeof(name));
	if (f) {
		it.path = v->path->s;	/* tree_name() rebuilt it there */
		it.inode = f->ino;
	}
	report(v, &it, "hash tree of %s level %d", name, level);
	return 0;
}

static void note_bad_top(struct vctx *v, u64 block, u32 tree)
{
	size_t i = v->nr_bad_tops;

	/*
	 * Trees are checked in record order and their tops lie in that order
	 * (extverity_check_tree() refuses others): the trees of one block
	 * come one after another, so only the last block noted can be it.
	 */
	if (!i || v->bad_tops[i - 1] != block) {
		xgrow((void **)&v->bad_tops, &v->bad_tops_cap, i + 1,
		      sizeof(u64));
		v->bad_top_trees = xrealloc(v->bad_top_trees,
					    v->bad_tops_cap * sizeof(u32 *));
		v->bad_top_n = xrealloc(v->bad_top_n,
					v->bad_tops_cap * sizeof(size_t));
		v->bad_tops[i] = block;
		v->bad_top_trees[i] = NULL;
		v->bad_top_n[i] = 0;
		v->nr_bad_tops++;
	} else {
		i--;
	}
	v->bad_top_trees[i] = xrealloc(v->bad_top_trees[i],
				       (v->bad_top_n[i] + 1) * sizeof(u32));
	v->bad_top_trees[i][v->bad_top_n[i]++] = tree;
}

/* The trees of bad top block @i, as note_bad_top() collected them. */
static void report_bad_top(struct vctx *v, size_t i)
{
	struct ev_verify_item it = { .kind = EV_ITEM_PACKED_TOP };
	char names[512] = "", one[256];
	size_t used = 0, k;

	/* Past the cap only counted, as report() would. */
	if (v->reports >= EV_MAX_REPORTS) {
		v->reports++;
		free(v->bad_top_trees[i]);
		return;
	}
	for (k = 0; k < v->bad_top_n[i]; k++) {
		const char *sep = k ? ", " : "";
		u32 t = v->bad_top_trees[i][k];
		const struct ev_file_entry *f =
			t ? ev_area_file_of_tree(v->a, t) : NULL;

		if (t == 0)
			snprintf(one, sizeof(one), "%smetadata", sep);
		else if (f)
			snprintf(one, sizeof(one), "%s%s", sep,
				 ev_area_file_path(v->a, f - v->a->files,
						   v->path));
		else
			snprintf(one, sizeof(one), "%stree %u", sep,
				 v->bad_top_trees[i][k]);
		if (used + strlen(one) + 5 >= sizeof(names)) {
			strcat(names, ", ...");
			break;
		}
		strcat(names, one);
		used += strlen(one);
	}
	it.block = v->bad_tops[i];
	it.trees = v->bad_top_trees[i];
	it.nr_trees = v->bad_top_n[i];
	report(v, &it, "packed top hash block %" PRIu64 " (trees of %s)",
	       v->bad_tops[i], names);
	free(v->bad_top_trees[i]);
}

/*
 * The blocks of packed tops that failed, in block order: by their trees
 * when a tree's top in them does not match its root (the block's top
 * digest, if any, fails too: one report), else by their top digest.
 */
static void print_bad_tops(struct vctx *v)
{
	size_t i = 0, j = 0, ni = v->nr_bad_tops, nj = v->nr_bad_digests;

	while (i < ni || j < nj) {
		if (j < nj && (i == ni || v->bad_digests[j] < v->bad_tops[i])) {
			struct ev_verify_item it = {
				.kind = EV_ITEM_TOP_DIGEST,
				.block = v->bad_digests[j],
			};

			report(v, &it, "packed top hash block %" PRIu64
			       " (its top digest; the tops in it match their "
			       "trees)", v->bad_digests[j++]);
			continue;
		}
		if (j < nj && v->bad_digests[j] == v->bad_tops[i])
			j++;
		report_bad_top(v, i++);
	}
}

/*
 * Byte offset of digest @index of level @level of tree @i within the hash
 * block that holds it, or within v->top for the top.
 */
static u32 digest_off(const struct vctx *v, u32 i, u32 level, u64 index)
{
	u64 block;
	u32 offset;

	/* Only the offset is wanted; with a top at 0, the one in v->top. */
	extverity_digest_pos(&v->a->p, &v->a->geo[i], 0, 0, level, index,
			     &block, &offset);
	return offset;
}

/*
 * Hash the block at @block into @digest; 0, or EV_ENOMEM with the error
 * printed: a digest OpenSSL failed to compute is not damage to report.
 */
static int hash(struct vctx *v, const void *block, u8 *digest)
{
	if (!ev_hash_block(&v->h, block, digest))
		return 0;
	/* The data queued before is reported before the error. */
	check_batch(v);
	ev_hash_error(v->a->p.hash_algorithm, "verifying");
	return EV_ENOMEM;
}

static int read_hash(struct vctx *v, void *buf, size_t len, u64 off)
{
	int err = ev_pread(v->a->fd, buf, len, off);

	if (err) {
		check_batch(v);
		ev_error("cannot read the hash blocks of %s: %s",
			 v->a->path, strerror(-err));
		return EV_EIO;
	}
	return 0;
}

/*
 * Hash block @idx of level @level of the current tree @i, from the blocks
 * read and checked against their parents in memory, the parents first, up
 * to the top (checked against the root): the bytes returned are the bytes
 * verified, never a second read of them (the hash file may not return the
 * same bytes twice: a file on storage someone else serves).  Asked for in
 * increasing order, as check_tree() does, every hash block is read and
 * hashed once.  NULL on a read error (*@ioerr set), or when the block or
 * one above it did not match (reported once a level).
 */
static const u8 *hash_block(struct vctx *v, u32 i, u32 level, u64 idx,
			    int *ioerr);

/* Read up to WIN blocks of level @level of tree @i from @idx; check them. */
static int load_window(struct vctx *v, u32 i, u32 level, u64 idx)
{
	const struct extverity_params *p = &v->a->p;
	const struct extverity_geometry *g = &v->a->geo[i];
	struct vlevel *lv = &v->lv[level];
	u32 bs = p->block_size, ds = p->digest_size;
	u8 digest[EXTVERITY_MAX_DIGEST_SIZE];
	u64 n = extverity_level_blocks(g, level) - idx, k;
	const u8 *parent;
	int err;

	if (n > WIN)
		n = WIN;
	lv->first = UINT64_MAX;
	err = read_hash(v, lv->blk, n * bs, v->a->offset +
			(extverity_level_block(g, v->levels, level, idx) <<
			 p->log_blocksize));
	if (err)
		return err;
	for (k = 0; k < n; k++) {
		parent = hash_block(v, i, level + 1,
				    (idx + k) >> p->log_digests_per_block,
				    &err);
		if (err)
			return err;
		/* Under a block that did not match: unknown, not used. */
		lv->bad[k] = true;
		if (!parent)
			continue;
		err = hash(v, lv->blk + k * bs, digest);
		if (err)
			return err;
		if (memcmp(digest, parent + digest_off(v, i, level + 1, idx + k),
			   ds)) {
			if (!(v->bad_levels & (1U << level))) {
				err = report_tree(v, i, level);
				if (err)
					return err;
			}
			v->bad_levels |= 1U << level;
			continue;
		}
		lv->bad[k] = false;
	}
	lv->first = idx;
	lv->n = n;
	return 0;
}

static const u8 *hash_block(struct vctx *v, u32 i, u32 level, u64 idx,
			    int *ioerr)
{
	struct vlevel *lv = &v->lv[level];

	if (level == v->a->geo[i].num_levels - 1)
		return v->top;
	if (lv->first == UINT64_MAX || idx < lv->first ||
	    idx - lv->first >= lv->n) {
		*ioerr = load_window(v, i, level, idx);
		if (*ioerr)
			return NULL;
	}
	idx -= lv->first;
	return lv->bad[idx] ? NULL : lv->blk + idx * v->a->p.block_size;
}

/*
 * Read, hash and compare the blocks queued, in order; 0, or EV_EIO or
 * EV_ENOMEM (printed), the blocks before the one that could not be read
 * compared first.
 */
static int check_batch(struct vctx *v)
{
	u32 bs = v->a->p.block_size, ds = v->a->p.digest_size;
	size_t bad_seg = 0, n = v->nr_queued, k;
	int err, read_err = 0;

	if (!n)
		return 0;
	err = ev_hashpool_run(v->pool, v->data_fd, v->segs, v->nr_segs,
			      v->buf, v->digests, &bad_seg, &read_err);
	if (err == EV_EIO)
		n = v->segs[bad_seg].pos;
	else if (err)
		n = 0;
	for (k = 0; k < n; k++) {
		const struct vqueued *q = &v->queued[k];

		if (!memcmp(v->digests + k * ds, v->want + k * ds, ds))
			continue;
		if (q->metadata)
			report_metadata(v, q->block);
		else
			report_file(v, q->inode, q->offset, q->block);
	}
	ev_progress_add((u64)v->nr_queued * bs);
	v->nr_queued = 0;
	v->nr_segs = 0;
	if (err == EV_EIO) {
		ev_error("cannot read the data image: %s", strerror(-read_err));
		return EV_EIO;
	}
	if (err) {
		ev_hash_error(v->a->p.hash_algorithm, "verifying");
		return EV_ENOMEM;
	}
	return 0;
}

/*
 * Queue data block @block (of tree @i, and of inode @ino at byte @off if a
 * file's), whose leaf digest is @want, checking the batch first when it is
 * full.
 */
static int queue_block(struct vctx *v, u32 i, u64 block, u64 ino, u64 off,
		       const u8 *want)
{
	const struct extverity_params *p = &v->a->p;
	u64 pos = block << p->log_blocksize;
	struct ev_hashpool_seg *sg;
	int err;

	if (v->nr_queued == CHUNK) {
		err = check_batch(v);
		if (err)
			return err;
	}
	sg = v->nr_segs ? &v->segs[v->nr_segs - 1] : NULL;
	/* Blocks next to each other on the device: one read. */
	if (!sg || sg->n == EV_HASHPOOL_SLICE ||
	    sg->off + ((u64)sg->n << p->log_blocksize) != pos) {
		sg = &v->segs[v->nr_segs++];
		sg->off = pos;
		sg->pos = v->nr_queued;
		sg->n = 0;
	}
	sg->n++;
	memcpy(v->want + v->nr_queued * p->digest_size, want, p->digest_size);
	v->queued[v->nr_queued].block = block;
	v->queued[v->nr_queued].inode = ino;
	v->queued[v->nr_queued].offset = off;
	v->queued[v->nr_queued].metadata = i == EXTVERITY_TREE_RESIDUAL;
	v->nr_queued++;
	return 0;
}

/*
 * Queue data blocks [@from, @to) of extent @e (counted from its start)
 * with the leaves of the current tree @i, whose level-0 hash blocks over
 * them are the ones check_tree() holds: data under a hash block that did
 * not match is left unchecked (its level was reported).
 */
static int check_range(struct vctx *v, u32 i,
		       const struct extverity_extent *e, u64 from, u64 to)
{
	const struct extverity_params *p = &v->a->p;
	u64 start = le64_to_cpu(e->start), leaf = le64_to_cpu(e->leaf);
	u64 ino = le64_to_cpu(e->inode);
	const u8 *want;
	u64 k, lf;
	int err;

	for (k = from; k < to; k++) {
		lf = leaf + k;
		if (!v->a->geo[i].num_levels) {
			want = ev_area_tree(v->a, i)->root_hash;
		} else {
			err = 0;
			want = hash_block(v, i, 0,
					  lf >> p->log_digests_per_block,
					  &err);
			if (err)
				return err;
			if (!want) {
				ev_progress_add(p->block_size);
				continue;
			}
			want += digest_off(v, i, 0, lf);
		}
		err = queue_block(v, i, start + k, ino,
				  lf << p->log_blocksize, want);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Read the next window of TOPS blocks, and check each against its top
 * digest when the area has them, as the kernel checks a block of tops
 * before it falls back to checking each top against its tree's root.  The
 * blocks are read in order, each once, and the tops checked from these
 * same bytes.
 */
static int next_tops(struct vctx *v)
{
	const struct extverity_params *p = &v->a->p;
	u64 nr = p->sect[EXTVERITY_SECT_TOPS].nr_blocks;
	u64 first = v->tops_first + v->tops_n, i, n;
	u64 start = p->sect[EXTVERITY_SECT_TOPS].start_block + first;
	u8 digests[WIN * EXTVERITY_MAX_DIGEST_SIZE];
	u32 ds = p->digest_size;
	int err;

	n = nr - first < WIN ? nr - first : WIN;
	err = read_hash(v, v->tops, n << p->log_blocksize,
			v->a->offset + (start << p->log_blocksize));
	if (err)
		return err;
	v->tops_first = first;
	v->tops_n = n;
	if (!v->a->has_top_digests)
		return 0;
	if (ev_hash_blocks(&v->h, v->tops, n, digests)) {
		check_batch(v);
		ev_hash_error(p->hash_algorithm, "verifying");
		return EV_ENOMEM;
	}
	/* The parser checked a digest per TOPS block. */
	for (i = 0; i < n; i++) {
		if (!memcmp(digests + i * ds,
			    v->a->top_digests + (first + i) * ds, ds))
			continue;
		xgrow((void **)&v->bad_digests, &v->bad_digests_cap,
		      v->nr_bad_digests + 1, sizeof(u64));
		v->bad_digests[v->nr_bad_digests++] = start + i;
	}
	return 0;
}

/*
 * Check tree @i and the data of its extents @ext[0..@nr) (indexes, in leaf
 * order): the top against the root, then level 0 a window at a time, in
 * order, each window's blocks checked against their parents (read in
 * order too, and checked against theirs), and the data whose leaves the
 * window holds against them.  So every hash block is read and hashed
 * once, and each level's damage is named even where no data uses it.
 */
static int check_tree(struct vctx *v, u32 i, const u64 *ext, size_t nr)
{
	const struct extverity_params *p = &v->a->p;
	const struct extverity_tree *t = ev_area_tree(v->a, i);
	const struct extverity_geometry *g = &v->a->geo[i];
	u32 bs = p->block_size, shift = p->log_digests_per_block;
	u64 top = le64_to_cpu(t->top), lo, hi, idx, leaf, end, blk;
	u8 digest[EXTVERITY_MAX_DIGEST_SIZE];
	size_t from = 0, j;
	int l, err;

	v->bad_levels = 0;
	for (l = 0; l < EXTVERITY_MAX_LEVELS; l++)
		v->lv[l].first = UINT64_MAX;
	if (g->num_levels) {
		v->levels = le64_to_cpu(t->levels);
		/*
		 * extverity_check_tree() keeps tops in tree order, inside
		 * TOPS, each in one block: the window only moves on.
		 */
		blk = (top >> p->log_blocksize) -
		      p->sect[EXTVERITY_SECT_TOPS].start_block;
		while (blk >= v->tops_first + v->tops_n) {
			err = next_tops(v);
			if (err)
				return err;
		}
		memset(v->top, 0, bs);
		blk -= v->tops_first;
		memcpy(v->top, v->tops + (blk << p->log_blocksize) +
		       (top & (bs - 1)), g->top_len);
		err = hash(v, v->top, digest);
		if (err)
			return err;
		if (memcmp(digest, t->root_hash, p->digest_size)) {
			note_bad_top(v, top >> p->log_blocksize, i);
			return 0;
		}
	}
	/* One pass over the leaves when level 0 is the top, or no level. */
	idx = 0;
	do {
		lo = 0;
		hi = UINT64_MAX;
		if (g->num_levels > 1) {
			err = load_window(v, i, 0, idx);
			if (err)
				return err;
			lo = idx << shift;
			hi = (idx + v->lv[0].n) << shift;
			idx += v->lv[0].n;
		}
		/* Extents before the window are done, past it to come. */
		for (j = from; j < nr; j++) {
			const struct extverity_extent *e = &v->a->extents[ext[j]];

			leaf = le64_to_cpu(e->leaf);
			end = leaf + le32_to_cpu(e->count);
			if (leaf >= hi)
				break;
			if (end <= lo) {
				from += j == from;
				continue;
			}
			err = check_range(v, i, e, leaf < lo ? lo - leaf : 0,
					  (end < hi ? end : hi) - leaf);
			if (err)
				return err;
		}
	} while (g->num_levels > 1 && idx < extverity_level_blocks(g, 0));
	return 0;
}

/* Extent indexes by tree, then by leaf, then by index; @arg: the extents. */
static int cmp_by_tree(const void *x, const void *y, void *arg)
{
	const struct extverity_extent *ext = arg;
	u64 a = *(const u64 *)x, b = *(const u64 *)y;
	u32 ta = le32_to_cpu(ext[a].tree), tb = le32_to_cpu(ext[b].tree);
	u64 la = le64_to_cpu(ext[a].leaf), lb = le64_to_cpu(ext[b].leaf);

	if (ta != tb)
		return ta < tb ? -1 : 1;
	if (la != lb)
		return la < lb ? -1 : 1;
	return a < b ? -1 : a > b;
}

int ev_verify(struct ev_area *a, const char *image,
	      struct ev_verify_result *res)
{
	const struct extverity_params *p = &a->p;
	u64 nr_ext = p->sect[EXTVERITY_SECT_EXTENTS].nr_entries;
	u64 nr_trees = p->sect[EXTVERITY_SECT_TREES].nr_entries;
	struct vctx v = { .a = a, .res = res };
	struct stat st;
	u64 *order, i, t, bytes = 0;
	unsigned int threads;
	int err = 0, last;

	v.data_fd = open(image, O_RDONLY);
	if (v.data_fd < 0 || fstat(v.data_fd, &st)) {
		ev_error("cannot open %s: %s", image, strerror(errno));
		return EV_EIO;
	}
	if (S_ISREG(st.st_mode) &&
	    (u64)st.st_size < p->data_blocks << p->log_blocksize) {
		ev_error("%s is smaller than the %llu blocks the hash area "
			 "describes", image,
			 (unsigned long long)p->data_blocks);
		close(v.data_fd);
		return EV_EUSAGE;
	}
	err = ev_hasher_init(&v.h, p->hash_algorithm, a->sb.salt,
			     p->salt_size, p->block_size);
	/* More threads than a chunk has slices would only wait. */
	threads = ev_default_threads();
	if (threads > CHUNK / EV_HASHPOOL_SLICE)
		threads = CHUNK / EV_HASHPOOL_SLICE;
	if (!err)
		err = ev_hashpool_new(&v.pool, threads,
				      p->hash_algorithm, a->sb.salt,
				      p->salt_size, p->block_size);
	if (err) {
		ev_hasher_free(&v.h);
		close(v.data_fd);
		return err;
	}
	v.buf = xmalloc((size_t)CHUNK * p->block_size);
	v.digests = xmalloc((size_t)CHUNK * EXTVERITY_MAX_DIGEST_SIZE);
	v.want = xmalloc((size_t)CHUNK * EXTVERITY_MAX_DIGEST_SIZE);
	v.queued = xcalloc(CHUNK, sizeof(*v.queued));
	v.segs = xcalloc(CHUNK, sizeof(*v.segs));
	v.path = ev_path_new();
	v.top = xmalloc(p->block_size);
	v.tops = xmalloc((size_t)WIN * p->block_size);
	for (i = 0; i < EXTVERITY_MAX_LEVELS; i++)
		v.lv[i].blk = xmalloc((size_t)WIN * p->block_size);
	/* Group the extents by tree so each tree is loaded once. */
	order = xcalloc(nr_ext, sizeof(*order));
	for (i = 0; i < nr_ext; i++)
		order[i] = i;
	qsort_r(order, nr_ext, sizeof(*order), cmp_by_tree, a->extents);
	for (i = 0; i < nr_ext; i++)
		if (le32_to_cpu(a->extents[i].tree) != EXTVERITY_TREE_ZERO)
			bytes += (u64)le32_to_cpu(a->extents[i].count) <<
				 p->log_blocksize;
	ev_progress_begin("verifying", bytes);
	i = 0;
	for (t = 0; t < nr_trees && !err; t++) {
		u64 first = i;

		while (i < nr_ext && le32_to_cpu(a->extents[order[i]].tree) == t)
			i++;
		err = check_tree(&v, t, order + first, i - first);
	}
	/* TOPS blocks past the last top (format writes none): their digests. */
	while (!err && v.tops_first + v.tops_n <
	       p->sect[EXTVERITY_SECT_TOPS].nr_blocks)
		err = next_tops(&v);
	/* The data queued before an error is reported all the same. */
	last = check_batch(&v);
	if (!err)
		err = last;
	ev_progress_end();
	print_bad_tops(&v);
	if (v.reports > EV_MAX_REPORTS)
		ev_error("... and %llu more corrupted items",
			 (unsigned long long)(v.reports - EV_MAX_REPORTS));
	if (!err && v.reports)
		err = EV_ECORRUPT;
	if (res) {
		res->data_bytes = bytes;
		res->corrupted = v.reports;
	}
	free(order);
	ev_hashpool_free(v.pool);
	free(v.digests);
	free(v.want);
	free(v.queued);
	free(v.segs);
	free(v.buf);
	free(v.path);
	free(v.top);
	free(v.tops);
	for (i = 0; i < EXTVERITY_MAX_LEVELS; i++)
		free(v.lv[i].blk);
	free(v.bad_tops);
	free(v.bad_top_trees);
	free(v.bad_top_n);
	free(v.bad_digests);
	ev_hasher_free(&v.h);
	close(v.data_fd);
	return err;
}
