// SPDX-License-Identifier: GPL-2.0
/*
 * dm-extverity: the read path.
 *
 * A read is submitted to the data device unchanged; when it completes, a
 * worker checks each block of it against the rule of the extent map that
 * covers it: a zero range is returned as zeros whatever the disk holds; a
 * block of a tree is hashed and compared with its leaf digest, which is
 * authenticated up the tree to the root in the (authenticated) tree table.
 *
 * With try_verify_in_tasklet, the check is first tried where the read
 * completed (extverity_bh_work()), without sleeping: it goes on in the
 * worker from the first block that needs a hash block not yet cached, a
 * re-read, or a report.
 *
 * Hash blocks are cached by dm-bufio.  As in dm-verity, a LEVELS block that
 * matched its parent digest is flagged in its buffer's aux data, so the
 * common case is one data hash and one memcmp.  Packed top blocks hold the
 * tops of several trees, so a per-buffer flag cannot say which tops were
 * checked against their roots; instead each tree remembers the generation
 * of the buffer its top was checked in (struct extverity_mtree.top_gen),
 * and a buffer re-read from disk gets a new generation.  An area with top
 * digests also lets a whole TOPS block be checked at once, which is then
 * flagged like a LEVELS block (top_block_good()).
 */
#include <linux/atomic.h>
#include <linux/interrupt.h>
#include <linux/ioprio.h>
#include <linux/kobject.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/reboot.h>
#include <linux/slab.h>
#include <crypto/algapi.h>

#include "dm-extverity.h"

/* Source of buffer generations; module-wide, so 0 is never handed out. */
static atomic64_t extverity_buf_gen = ATOMIC64_INIT(0);

/**
 * extverity_bufio_alloc() - dm-bufio callback for a buffer about to be filled
 * @b: the buffer
 *
 * Called before a buffer gets a block's data from disk, so whatever was
 * verified about its previous contents is forgotten.
 */
void extverity_bufio_alloc(struct dm_buffer *b)
{
	struct extverity_buf_aux *aux = dm_bufio_get_aux_data(b);

	aux->gen = atomic64_inc_return(&extverity_buf_gen);
	aux->verified = false;
	aux->from_fec = false;
	aux->top_digest_failed = 0;
}

/* What a block failed on, for the report. */
enum extverity_failure {
	EXTVERITY_DATA_CORRUPT,
	EXTVERITY_HASH_CORRUPT,
};

static void send_uevent(struct extverity_target *v, u64 block, u64 inode,
			u64 offset)
{
	struct mapped_device *md = dm_table_get_md(v->ti->table);
	char env_block[48], env_inode[48], env_offset[48];
	int n = extverity_uevent_take(&v->uevents);
	char *envp[4];

	if (!n)
		return;
	if (n == EXTVERITY_UEVENT_MAX)
		DMERR("%s: reached the maximum of %d corruption uevents",
		      dm_device_name(md), EXTVERITY_UEVENT_MAX);
	snprintf(env_block, sizeof(env_block), "DM_EXTVERITY_ERR_BLOCK_NR=%llu",
		 block);
	snprintf(env_inode, sizeof(env_inode), "DM_EXTVERITY_ERR_INODE=%llu",
		 inode);
	snprintf(env_offset, sizeof(env_offset),
		 "DM_EXTVERITY_ERR_OFFSET=%llu", offset);
	envp[0] = env_block;
	envp[1] = env_inode;
	envp[2] = env_offset;
	envp[3] = NULL;
	kobject_uevent_env(&disk_to_dev(dm_disk(md))->kobj, KOBJ_CHANGE, envp);
}

/*
 * Report data block @block (rule @e) as corrupt and apply the corruption
 * mode.  Returns 0 when the data is to be returned anyway
 * (ignore_corruption), -EBADMSG otherwise.
 */
static int handle_corruption(struct extverity_target *v,
			     const struct extverity_ext *e, u64 block,
			     enum extverity_failure what)
{
	const char *dev = dm_device_name(dm_table_get_md(v->ti->table));
	const char *why = what == EXTVERITY_DATA_CORRUPT ? "corrupted" :
			  "hash tree corrupted";
	u64 offset = (e->leaf + (block - e->start)) << v->p.log_blocksize;

	WRITE_ONCE(v->corrupted, true);
	this_cpu_inc(v->stats->corrupt);
	if (e->tree == EXTVERITY_TREE_RESIDUAL) {
		DMERR_LIMIT("%s: data block %llu: %s, metadata", dev, block,
			    why);
		offset = block << v->p.log_blocksize;
	} else {
		DMERR_LIMIT("%s: data block %llu: %s, file inode %llu byte offset %llu",
			    dev, block, why, e->inode, offset);
	}
	extverity_record_corruption(v, e->inode, offset);
	send_uevent(v, block, e->inode, offset);

	if (v->opts & EXTVERITY_OPT_IGNORE_CORRUPTION)
		return 0;
	if (v->opts & EXTVERITY_OPT_RESTART_ON_CORRUPTION)
		kernel_restart("dm-extverity device corrupted");
	if (v->opts & EXTVERITY_OPT_PANIC_ON_CORRUPTION)
		panic("dm-extverity device corrupted");
	return -EBADMSG;
}

/* The used part of tree @t's top block at @data, against the tree's root. */
static int check_top(struct extverity_target *v, struct extverity_io *io,
		     u32 t, const struct extverity_geometry *g, const u8 *data)
{
	const struct extverity_mtree *tree = &v->trees[t];
	u8 digest[EXTVERITY_MAX_DIGEST_SIZE];
	int err;

	err = extverity_hash_top(v, extverity_io_desc(io),
				 data + (tree->top & (v->p.block_size - 1)),
				 g->top_len, digest);
	if (!err && crypto_memneq(digest,
				  v->roots + (size_t)t * v->p.digest_size,
				  v->p.digest_size))
		err = -EBADMSG;
	return err;
}

/*
 * Hash block @hblock of tree @t, in the buffer at @data, did not match: if
 * FEC decodes a block that matches @want (a level's block), or whose used
 * part matches the root (@want NULL: the top, of geometry @g), it replaces
 * the buffer's data, held by the caller, and the block is good from then
 * on.  A buffer is written only once it is known bad, and only with what
 * is known good, so a reader that looked at it before keeps seeing a bad
 * block or the good one (it hashes it again if not marked verified).
 * Never in the completion context.
 */
static noinline int fec_correct_hash(struct extverity_target *v,
				     struct extverity_io *io, u32 t,
				     u64 hblock, u8 *data, const u8 *want,
				     const struct extverity_geometry *g)
{
	u8 digest[EXTVERITY_MAX_DIGEST_SIZE];
	u8 *buf;
	int err;

	if (!v->fec || io->in_bh)
		return -EBADMSG;
	buf = mempool_alloc(&v->fec->block_pool, GFP_NOIO);
	err = extverity_fec_decode(v, io->ioprio, v->p.data_blocks + hblock,
				   buf);
	if (!err && want) {
		err = extverity_hash_block(v, extverity_io_desc(io), buf,
					   digest);
		if (!err && crypto_memneq(digest, want, v->p.digest_size))
			err = -EBADMSG;
	} else if (!err) {
		err = check_top(v, io, t, g, buf);
	}
	if (!err) {
		memcpy(data, buf, v->p.block_size);
		/*
		 * The good bytes before the flag (aux->verified, top_gen) that
		 * lets the buffer's other holders use them without hashing;
		 * paired with the smp_rmb() after each test of the flag.
		 */
		smp_wmb();
		this_cpu_inc(v->stats->corrected);
		DMWARN_LIMIT("%s: hash block %llu (tree %u): corrected by FEC",
			     dm_device_name(dm_table_get_md(v->ti->table)),
			     hblock, t);
	} else if (err != -EBADMSG) {
		/* An unreadable FEC device: the block stays bad. */
		err = -EBADMSG;
	}
	mempool_free(buf, &v->fec->block_pool);
	return err;
}

/*
 * The hash device could not read hash block @hblock (@failed, an error
 * pointer): with FEC, decode it into a fresh dm-bufio buffer, held in
 * *@bp, as if read from the device.  It is not trusted: the caller checks
 * it like any block read, against its parent or the root, and counts it
 * corrected once it matches (fec_read_checked()).  Never in the
 * completion context.
 */
static noinline u8 *fec_read_hash(struct extverity_target *v,
				  struct extverity_io *io, u64 hblock,
				  struct dm_buffer **bp, u8 *failed)
{
	struct extverity_buf_aux *aux;
	u8 *buf, *data = failed;

	if (!v->fec || io->in_bh || PTR_ERR(failed) == -EAGAIN)
		return failed;
	/* Decoded first: the block, unreadable, is then an erasure. */
	buf = mempool_alloc(&v->fec->block_pool, GFP_NOIO);
	if (extverity_fec_decode(v, io->ioprio, v->p.data_blocks + hblock,
				 buf))
		goto out;
	/* The failed buffer left the cache: this one is new, not read. */
	data = dm_bufio_new(v->bufio, hblock, bp);
	if (IS_ERR(data)) {
		data = failed;
		goto out;
	}
	aux = dm_bufio_get_aux_data(*bp);
	if (aux->verified) {
		/* Another bio's, put right meanwhile. */
		smp_rmb();	/* see fec_correct_hash() */
		goto out;
	}
	memcpy(data, buf, v->p.block_size);
	aux->from_fec = true;
out:
	mempool_free(buf, &v->fec->block_pool);
	return data;
}

/* A hash block decoded by fec_read_hash() matched: count and log it once. */
static void fec_read_checked(struct extverity_target *v,
			     struct extverity_buf_aux *aux, u64 hblock, u32 t)
{
	if (!aux->from_fec)
		return;
	aux->from_fec = false;
	this_cpu_inc(v->stats->corrected);
	DMWARN_LIMIT("%s: hash block %llu (tree %u): unreadable, corrected by FEC",
		     dm_device_name(dm_table_get_md(v->ti->table)), hblock, t);
}

/*
 * With EXTVERITY_COMPAT_TOP_DIGESTS, whether TOPS block @hblock, at @data,
 * matches its digest in the (authenticated) TOP_DIGESTS section: one hash
 * then stands for the tops of every tree packed in the block, where
 * check_top() hashes each top as a whole zero-padded block.  A match is
 * flagged in the buffer like a LEVELS block's; a mismatch too, so that the
 * block is hashed once, not once per tree in it, and logged once.  Any
 * failure, a crypto error included, only means "not known good": the
 * caller checks the tree's own top, which reports a bad top.  A mismatch
 * that no top shows (damage in the slack) is only logged here.
 */
static bool top_block_good(struct extverity_target *v,
			   struct extverity_io *io,
			   struct extverity_buf_aux *aux, u64 hblock,
			   const u8 *data)
{
	u8 digest[EXTVERITY_MAX_DIGEST_SIZE];
	const u8 *want;

	if (!v->top_digests || test_bit(0, &aux->top_digest_failed))
		return false;
	if (aux->verified) {
		smp_rmb();	/* see fec_correct_hash() */
		return true;
	}
	/* Inside TOPS: checked against the section by extverity_check_tree(). */
	want = v->top_digests +
	       (size_t)(hblock - v->p.sect[EXTVERITY_SECT_TOPS].start_block) *
	       v->p.digest_size;
	if (extverity_hash_block(v, extverity_io_desc(io), data, digest))
		return false;
	if (!crypto_memneq(digest, want, v->p.digest_size)) {
		aux->verified = true;
		return true;
	}
	if (!test_and_set_bit(0, &aux->top_digest_failed))
		DMWARN_LIMIT("%s: hash block %llu: top digest mismatch, checking each top in it",
			     dm_device_name(dm_table_get_md(v->ti->table)),
			     hblock);
	return false;
}

/*
 * Check the top of tree @t, held in TOPS buffer @b at @data (block
 * @hblock): the whole block against its top digest if the area has them,
 * else (or if that fails) the tree's top alone against the tree's root, so
 * that damage in a block fails only the trees whose top it hits.
 * Remembered per tree for as long as the buffer keeps its data.
 */
static int verify_top(struct extverity_target *v, struct extverity_io *io,
		      u32 t, const struct extverity_geometry *g,
		      struct dm_buffer *b, u64 hblock, u8 *data)
{
	struct extverity_mtree *tree = &v->trees[t];
	struct extverity_buf_aux *aux = dm_bufio_get_aux_data(b);
	int err;

	if (READ_ONCE(tree->top_gen) == aux->gen) {
		smp_rmb();	/* see fec_correct_hash() */
		return 0;
	}
	if (!top_block_good(v, io, aux, hblock, data)) {
		err = check_top(v, io, t, g, data);
		if (err == -EBADMSG)
			err = fec_correct_hash(v, io, t, hblock, data, NULL,
					       g);
		if (err)
			return err;
	}
	fec_read_checked(v, aux, hblock, t);
	WRITE_ONCE(tree->top_gen, aux->gen);
	return 0;
}

/*
 * Hash block @hblock, for @io.  In the completion context only from
 * dm-bufio's cache, and a block being read counts as not cached: reading,
 * or waiting for a read, sleeps.  -EAGAIN then sends the bio to the worker.
 */
static u8 *get_hash_block(struct extverity_target *v, struct extverity_io *io,
			  u64 hblock, struct dm_buffer **bp)
{
	u8 *data;

	if (!io->in_bh)
		return dm_bufio_read_with_ioprio(v->bufio, hblock, bp,
						 io->ioprio);
	data = dm_bufio_get(v->bufio, hblock, bp);
	return IS_ERR_OR_NULL(data) ? ERR_PTR(-EAGAIN) : data;
}

/*
 * Find the authenticated leaf digest of leaf @leaf of tree @t and copy it to
 * @want.  As dm-verity does, hold one hash buffer at a time: first look at
 * the level-0 block alone, and if it is not known good, walk from the top
 * down, checking each unverified block against the digest taken from its
 * (just authenticated) parent.  Returns -EBADMSG when a hash block does not
 * match, another negative errno on I/O or crypto failure.
 */
static int leaf_digest(struct extverity_target *v, struct extverity_io *io,
		       u32 t, u64 leaf, u8 *want)
{
	const struct extverity_params *p = &v->p;
	const struct extverity_mtree *tree = &v->trees[t];
	u8 digest[EXTVERITY_MAX_DIGEST_SIZE];
	struct extverity_geometry g;
	struct dm_buffer *b;
	u64 hblock;
	u32 offset;
	int level, err;
	u8 *data;

	/* Checked at table load: cannot fail. */
	extverity_tree_geometry(p, tree->data_size, &g);
	if (!g.num_levels) {
		/* At most one block: the root is the block's own digest. */
		memcpy(want, v->roots + (size_t)t * p->digest_size,
		       p->digest_size);
		return 0;
	}

	if (g.num_levels > 1) {
		extverity_digest_pos(p, &g, tree->top, tree->levels, 0, leaf,
				     &hblock, &offset);
		data = get_hash_block(v, io, hblock, &b);
		if (IS_ERR(data))
			data = fec_read_hash(v, io, hblock, &b, data);
		if (IS_ERR(data))
			return PTR_ERR(data);
		if (((struct extverity_buf_aux *)dm_bufio_get_aux_data(b))->verified) {
			smp_rmb();	/* see fec_correct_hash() */
			memcpy(want, data + offset, p->digest_size);
			dm_bufio_release(b);
			return 0;
		}
		dm_bufio_release(b);
	}

	for (level = g.num_levels - 1; level >= 0; level--) {
		u64 index = leaf >> (level * p->log_digests_per_block);
		struct extverity_buf_aux *aux;

		extverity_digest_pos(p, &g, tree->top, tree->levels, level,
				     index, &hblock, &offset);
		data = get_hash_block(v, io, hblock, &b);
		if (IS_ERR(data))
			data = fec_read_hash(v, io, hblock, &b, data);
		if (IS_ERR(data))
			return PTR_ERR(data);
		aux = dm_bufio_get_aux_data(b);
		if (level == g.num_levels - 1) {
			err = verify_top(v, io, t, &g, b, hblock, data);
		} else if (!aux->verified) {
			err = extverity_hash_block(v, extverity_io_desc(io),
						   data, digest);
			if (!err && crypto_memneq(digest, want, p->digest_size))
				err = fec_correct_hash(v, io, t, hblock, data,
						       want, &g);
			if (!err) {
				fec_read_checked(v, aux, hblock, t);
				aux->verified = true;
			}
		} else {
			smp_rmb();	/* see fec_correct_hash() */
			err = 0;
		}
		if (!err)
			memcpy(want, data + offset, p->digest_size);
		dm_bufio_release(b);
		if (err)
			return err;
	}
	return 0;
}

/* Index of the extent covering @block, starting the search at @hint. */
static u64 find_extent(const struct extverity_target *v, u64 block, u64 hint)
{
	u64 lo = 0, hi = v->nr_ext;

	if (hint < v->nr_ext && block >= v->ext[hint].start) {
		if (block - v->ext[hint].start < v->ext[hint].count)
			return hint;
		if (hint + 1 < v->nr_ext &&
		    block - v->ext[hint + 1].start < v->ext[hint + 1].count)
			return hint + 1;
	}
	/* The extents partition the device: the last one starting <= block. */
	while (hi - lo > 1) {
		u64 mid = lo + (hi - lo) / 2;

		if (v->ext[mid].start <= block)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* A request to read ahead the hash blocks a bio will need. */
struct extverity_prefetch {
	struct work_struct work;
	struct extverity_target *v;
	u64 block;
	unsigned int n_blocks;
	unsigned short ioprio;
};

/*
 * Bytes of data around a read whose hash blocks are read ahead with its
 * own: the hash blocks of the aligned cluster of data blocks holding the
 * read.  dm-verity's parameter of that name widens its level-0 range in
 * the hash device instead, where hash neighbours are data neighbours; here
 * a hash neighbour is another file's tree, which a read has no reason to
 * want.  Trees are stored in the order of their files' first blocks, so
 * the hash blocks of the files in one data cluster lie next to each other
 * in the hash area: a read of a directory tree costs a few larger hash
 * reads instead of a small synchronous one per file, and a random read
 * reads the hash blocks of its neighbourhood only.
 */
static unsigned int prefetch_cluster = 256 * 1024;
module_param(prefetch_cluster, uint, 0644);
MODULE_PARM_DESC(prefetch_cluster,
		 "Data bytes around a read whose hash blocks are read ahead (rounded down to a power of two; 0 for none)");

/*
 * Wait for hash blocks @block..@block + @n - 1, read ahead just before.  A
 * NO_SLEEP dm-bufio client (try_verify_in_tasklet) neither resets nor is
 * destroyed with reads in flight: it leaks, then frees, buffers whose reads
 * are still under way.  Waiting here makes extverity_postsuspend()'s flush
 * of the queue wait for the reads too.
 */
static void wait_for_hash_blocks(struct extverity_target *v, u64 block,
				 u64 n, unsigned short ioprio)
{
	struct dm_buffer *b;

	for (; n; block++, n--)
		if (!IS_ERR(dm_bufio_read_with_ioprio(v->bufio, block, &b,
						      ioprio)))
			dm_bufio_release(b);
}

/*
 * struct extverity_hash_run - hash blocks @first..@last, to be read ahead
 * (or waited for) in one call; empty while @first > @last.  The levels of
 * one tree lie in two sections (the top in TOPS, the others in LEVELS), so
 * a prefetch keeps a run for each and flushes one only when a range does
 * not extend it.
 */
struct extverity_hash_run {
	u64 first;
	u64 last;
};

static void flush_hash_run(struct extverity_target *v,
			   struct extverity_hash_run *run,
			   unsigned short ioprio, bool wait)
{
	u64 n;

	if (run->first > run->last)
		return;
	n = run->last - run->first + 1;
	if (wait)
		wait_for_hash_blocks(v, run->first, n, ioprio);
	else
		dm_bufio_prefetch_with_ioprio(v->bufio, run->first, n, ioprio);
	run->first = 1;
	run->last = 0;
}

static void add_to_hash_run(struct extverity_target *v,
			    struct extverity_hash_run *run, u64 first,
			    u64 last, unsigned short ioprio, bool wait)
{
	if (run->first <= run->last && first <= run->last + 1 &&
	    last + 1 >= run->first) {
		run->first = min(run->first, first);
		run->last = max(run->last, last);
		return;
	}
	flush_hash_run(v, run, ioprio, wait);
	run->first = first;
	run->last = last;
}

/* Add, level by level, the hash blocks of leaves @first..@last of @t. */
static void prefetch_tree(struct extverity_target *v, u32 t, u64 first,
			  u64 last, struct extverity_hash_run runs[2],
			  unsigned short ioprio, bool wait)
{
	const struct extverity_params *p = &v->p;
	const struct extverity_mtree *tree = &v->trees[t];
	struct extverity_geometry g;
	u64 hfirst, hlast;
	u32 level, offset;

	extverity_tree_geometry(p, tree->data_size, &g);
	for (level = 0; level < g.num_levels; level++) {
		u32 shift = level * p->log_digests_per_block;
		bool top = level == g.num_levels - 1;

		extverity_digest_pos(p, &g, tree->top, tree->levels, level,
				     first >> shift, &hfirst, &offset);
		extverity_digest_pos(p, &g, tree->top, tree->levels, level,
				     last >> shift, &hlast, &offset);
		add_to_hash_run(v, &runs[top], hfirst, hlast, ioprio, wait);
	}
}

/*
 * Read ahead (or, with @wait, wait for) the hash blocks of the data blocks
 * of @pw, widened to the aligned cluster holding them and clamped to the
 * device.
 */
static void prefetch_blocks(struct extverity_prefetch *pw, bool wait)
{
	struct extverity_target *v = pw->v;
	u32 cluster = READ_ONCE(prefetch_cluster) >> v->p.log_blocksize;
	u64 block = pw->block, end = pw->block + pw->n_blocks, idx = 0;
	struct extverity_hash_run runs[2] = { { 1, 0 }, { 1, 0 } };
	struct blk_plug plug;

	if (cluster > 1) {
		cluster = rounddown_pow_of_two(cluster);
		block = round_down(block, cluster);
		end = min(round_up(end, cluster), v->p.data_blocks);
	}
	/* The runs of both sections, and of several files, go out together. */
	blk_start_plug(&plug);
	while (block < end) {
		const struct extverity_ext *e;
		u64 stop;

		idx = find_extent(v, block, idx);
		e = &v->ext[idx];
		stop = min(end, e->start + e->count);
		if (e->tree != EXTVERITY_TREE_ZERO)
			prefetch_tree(v, e->tree, e->leaf + (block - e->start),
				      e->leaf + (stop - 1 - e->start), runs,
				      pw->ioprio, wait);
		block = stop;
		/* A large cluster over small files is many extents. */
		cond_resched();
	}
	flush_hash_run(v, &runs[0], pw->ioprio, wait);
	flush_hash_run(v, &runs[1], pw->ioprio, wait);
	blk_finish_plug(&plug);
}

static void prefetch_work(struct work_struct *w)
{
	struct extverity_prefetch *pw =
		container_of(w, struct extverity_prefetch, work);

	prefetch_blocks(pw, false);
	if (pw->v->opts & EXTVERITY_OPT_TRY_VERIFY_IN_BH)
		prefetch_blocks(pw, true);
	kfree(pw);
}

/**
 * extverity_submit_prefetch() - start reading the hash blocks of a bio
 * @v: the target
 * @block: first data block of the bio
 * @n_blocks: its length in blocks
 * @ioprio: its I/O priority, which the hash reads take
 *
 * Best effort, so that hash blocks are read while the data is: nothing
 * happens if memory is short.  With check_at_most_once, the verified
 * blocks at either end of the bio are left out (those in its middle are
 * not worth a search).
 *
 * The request goes where queue_verify() would send a bio completing on this
 * CPU: to this CPU's worker while it has none of our bios to verify, else
 * to the unbound spread_wq.  With this CPU's worker alone, one submitter
 * with a deep queue (fio at QD 16) piles every bio's prefetch there, ahead
 * of the verification queued there, while the other CPUs idle (make bench,
 * 6.1: 2777 IOPS at QD 16, 3631 unbound).  With the unbound one alone,
 * every read wakes an idle CPU for its prefetch: on 7.3, reads at queue
 * depth 1 went at 0.81x dm-verity that way and 1.01x this way (warm, 0.72x
 * and 0.97x).
 */
void extverity_submit_prefetch(struct extverity_target *v, u64 block,
			       unsigned int n_blocks, unsigned short ioprio)
{
	struct extverity_prefetch *pw;
	atomic_t *queued;

	if (v->verified_blocks) {
		while (n_blocks && test_bit(block, v->verified_blocks)) {
			block++;
			n_blocks--;
		}
		while (n_blocks &&
		       test_bit(block + n_blocks - 1, v->verified_blocks))
			n_blocks--;
	}
	if (!n_blocks)
		return;
	/* A prefetch is a hint: never dip into reserves or retry for it. */
	pw = kmalloc_obj(*pw, EXTVERITY_GFP_HINT);
	if (!pw)
		return;
	INIT_WORK(&pw->work, prefetch_work);
	pw->v = v;
	pw->block = block;
	pw->n_blocks = n_blocks;
	pw->ioprio = ioprio;
	queued = get_cpu_ptr(v->wq_queued);
	queue_work(atomic_read(queued) ? v->spread_wq : v->wq, &pw->work);
	put_cpu_ptr(v->wq_queued);
}

/**
 * extverity_map_zero() - serve the part of a read that lies in a zero range
 * @v: the target
 * @bio: the read, from data block @block on, in extverity_map()
 * @block: its first data block
 * @n_blocks: its length in blocks; set to what is left to read from disk
 *
 * Free blocks read as zeros without a read of the disk: a read that starts
 * in a zero range is cut at the range's end and completed here; one that
 * starts in data is cut where the next zero range begins, so that an I/O
 * error of a free block can never trigger restart_on_error or
 * panic_on_error.  dm core sends the rest of the bio to extverity_map()
 * again.
 *
 * Return: true when @bio was completed here.
 */
bool extverity_map_zero(struct extverity_target *v, struct bio *bio,
			u64 block, unsigned int *n_blocks)
{
	unsigned int shift = v->p.log_blocksize - SECTOR_SHIFT;
	u64 end = block + *n_blocks, stop;
	const struct extverity_ext *e;

	if (!*n_blocks)
		return false;
	e = &v->ext[find_extent(v, block, 0)];
	stop = e->start + e->count;
	if (e->tree == EXTVERITY_TREE_ZERO) {
		if (stop < end)
			dm_accept_partial_bio(bio, (stop - block) << shift);
		else
			stop = end;
		zero_fill_bio(bio);
		this_cpu_add(v->stats->zero, stop - block);
		bio_endio(bio);
		return true;
	}
	/* The extents are contiguous and cover the device up to @end. */
	for (; stop < end; stop += e->count) {
		e++;
		if (e->tree == EXTVERITY_TREE_ZERO) {
			dm_accept_partial_bio(bio, (stop - block) << shift);
			*n_blocks = stop - block;
			break;
		}
	}
	return false;
}

/* Replace the next block of the bio with zeros. */
static void zero_bio_block(struct extverity_target *v, struct bio *bio,
			   struct bvec_iter *iter)
{
	unsigned int todo = v->p.block_size;

	while (todo) {
		struct bio_vec bv = bio_iter_iovec(bio, *iter);

		bv.bv_len = min(bv.bv_len, todo);
		memzero_bvec(&bv);
		bio_advance_iter(bio, iter, bv.bv_len);
		todo -= bv.bv_len;
	}
}

/* Copy one block from @data into the bio at @iter. */
static void copy_to_bio_block(struct extverity_target *v, struct bio *bio,
			      struct bvec_iter iter, const u8 *data)
{
	unsigned int todo = v->p.block_size;

	while (todo) {
		struct bio_vec bv = bio_iter_iovec(bio, iter);

		bv.bv_len = min(bv.bv_len, todo);
		memcpy_to_bvec(&bv, data);
		bio_advance_iter(bio, &iter, bv.bv_len);
		data += bv.bv_len;
		todo -= bv.bv_len;
	}
}

/*
 * The block read did not match its digest.  Before calling it corrupt, read
 * it again into a private buffer and check that (dm-verity's recheck): with
 * O_DIRECT the pages belong to userspace, which may change them while the
 * read is in flight.  If the fresh copy matches, the bio returns it.
 * Returns 0, -EBADMSG if the block really is corrupt, or an I/O error.
 */
static noinline int recheck_block(struct extverity_target *v,
				  struct extverity_io *io, struct bio *bio,
				  struct bvec_iter start, u64 block,
				  const u8 *want)
{
	u8 real[EXTVERITY_MAX_DIGEST_SIZE];
	struct dm_buffer *b;
	u8 *data;
	int err;

	data = dm_bufio_read_with_ioprio(v->data_bufio, block, &b, io->ioprio);
	if (IS_ERR(data))
		return PTR_ERR(data);
	err = extverity_hash_block(v, extverity_io_desc(io), data, real);
	if (!err && crypto_memneq(real, want, v->p.digest_size))
		err = -EBADMSG;
	if (!err)
		copy_to_bio_block(v, bio, start, data);
	dm_bufio_release(b);
	/* Always re-read from the device: never answer from this cache. */
	dm_bufio_forget(v->data_bufio, block);
	return err;
}

/* Log data block @block (rule @e) as corrected, as handle_corruption() would. */
static void log_fec_data(struct extverity_target *v,
			 const struct extverity_ext *e, u64 block)
{
	const char *dev = dm_device_name(dm_table_get_md(v->ti->table));
	const char *what = "corrected by FEC";
	u64 offset = (e->leaf + (block - e->start)) << v->p.log_blocksize;

	if (e->tree == EXTVERITY_TREE_RESIDUAL)
		DMWARN_LIMIT("%s: data block %llu: %s, metadata", dev, block,
			     what);
	else
		DMWARN_LIMIT("%s: data block %llu: %s, file inode %llu byte offset %llu",
			     dev, block, what, e->inode, offset);
}

/*
 * Data block @block (rule @e), which the bio holds at @start, failed its
 * digest @want, or could not be read: if FEC decodes a block that matches,
 * the bio gets it.  Returns 0, or -EBADMSG when it cannot be corrected.
 */
static noinline int fec_correct_data(struct extverity_target *v,
				     struct extverity_io *io, struct bio *bio,
				     struct bvec_iter start,
				     const struct extverity_ext *e, u64 block,
				     const u8 *want)
{
	u8 real[EXTVERITY_MAX_DIGEST_SIZE];
	u8 *buf;
	int err;

	if (!v->fec)
		return -EBADMSG;
	buf = mempool_alloc(&v->fec->block_pool, GFP_NOIO);
	err = extverity_fec_decode(v, io->ioprio, block, buf);
	if (!err)
		err = extverity_hash_block(v, extverity_io_desc(io), buf, real);
	if (!err && crypto_memneq(real, want, v->p.digest_size))
		err = -EBADMSG;
	if (!err) {
		copy_to_bio_block(v, bio, start, buf);
		this_cpu_inc(v->stats->corrected);
		log_fec_data(v, e, block);
	} else {
		err = -EBADMSG;
	}
	mempool_free(buf, &v->fec->block_pool);
	return err;
}

/*
 * Verify data block @block, the next block of the bio at @iter.  On a
 * failure other than corruption, @what says what failed, for the log.  In
 * the completion context any failure is -EAGAIN: the worker checks the
 * block again and rechecks, reports or logs it.  When the data device
 * failed the read (@io->read_failed, worker only), the bio holds nothing:
 * the block can only come from FEC.  @paired, if not NULL, is the block's
 * digest, hashed already with the block before it (hash_pair()).
 */
static int verify_block(struct extverity_target *v, struct extverity_io *io,
			struct bio *bio, struct bvec_iter *iter,
			const struct extverity_ext *e, u64 block,
			const u8 *paired, const char **what)
{
	u8 want[EXTVERITY_MAX_DIGEST_SIZE], real[EXTVERITY_MAX_DIGEST_SIZE];
	u64 leaf = e->leaf + (block - e->start);
	struct bvec_iter start = *iter;
	int err;

	err = leaf_digest(v, io, e->tree, leaf, want);
	if (err && io->in_bh)
		return -EAGAIN;
	if (err == -EBADMSG) {
		bio_advance_iter(bio, iter, v->p.block_size);
		return handle_corruption(v, e, block, EXTVERITY_HASH_CORRUPT);
	}
	if (err) {
		*what = "cannot read its hash blocks from the hash device";
		return err;
	}
	if (io->read_failed) {
		bio_advance_iter(bio, iter, v->p.block_size);
		err = fec_correct_data(v, io, bio, start, e, block, want);
		if (err) {
			*what = "data device read failed, and FEC cannot correct it";
			return -EIO;
		}
		return 0;
	}
	if (paired) {
		memcpy(real, paired, v->p.digest_size);
		bio_advance_iter(bio, iter, v->p.block_size);
	} else {
		err = extverity_hash_bio_block(v, extverity_io_desc(io), bio,
					       iter, real);
	}
	if (err && io->in_bh)
		return -EAGAIN;
	if (err) {
		*what = "cannot hash it";
		return err;
	}
	if (crypto_memneq(want, real, v->p.digest_size)) {
		if (io->in_bh)
			return -EAGAIN;
		err = recheck_block(v, io, bio, start, block, want);
		/*
		 * A block FEC corrects is neither counted verified nor marked
		 * for check_at_most_once: the device still holds the bad one.
		 */
		if (err == -EBADMSG &&
		    !fec_correct_data(v, io, bio, start, e, block, want))
			return 0;
		if (err == -EBADMSG)
			return handle_corruption(v, e, block,
						 EXTVERITY_DATA_CORRUPT);
		if (err) {
			*what = "cannot read it again from the data device";
			return err;
		}
	}
	this_cpu_inc(v->stats->verified);
	if (v->verified_blocks)
		set_bit(block, v->verified_blocks);
	return 0;
}

/*
 * With the SHA-256 library (@v->salted_sha256), hash the next two blocks of
 * the bio, at @iter, in one call: @block and the one after it, both of rule
 * @e and both still to verify.  Returns false, having hashed nothing, when
 * they are not such a pair or a block spans two bio segments; the blocks
 * are then hashed one at a time.
 *
 * Hashing is all this does: each block then goes through verify_block(),
 * with its digest, as any other.  So every failure is handled in one
 * place, and a block that fails costs at most one digest computed for
 * nothing.
 */
static bool hash_pair(struct extverity_target *v, struct extverity_io *io,
		      struct bio *bio, struct bvec_iter iter,
		      const struct extverity_ext *e, u64 block,
		      u8 real[2][EXTVERITY_MAX_DIGEST_SIZE])
{
	unsigned int bs = v->p.block_size;
	struct bio_vec bv1, bv2;
	void *data1, *data2;

	if (!v->salted_sha256 || io->read_failed ||
	    io->done + 1 >= io->n_blocks || block + 1 - e->start >= e->count ||
	    (v->verified_blocks && test_bit(block + 1, v->verified_blocks)))
		return false;
	bv1 = bio_iter_iovec(bio, iter);
	bio_advance_iter(bio, &iter, bs);
	bv2 = bio_iter_iovec(bio, iter);
	if (bv1.bv_len < bs || bv2.bv_len < bs)
		return false;
	data1 = bvec_kmap_local(&bv1);
	data2 = bvec_kmap_local(&bv2);
	extverity_sha256_2blocks(v, data1, data2, real[0], real[1]);
	kunmap_local(data2);
	kunmap_local(data1);
	this_cpu_add(v->stats->paired, 2);
	return true;
}

/*
 * Verify the blocks of the bio from @io->done on, advancing @io->done and
 * @io->iter past each block done with.  On a failure other than corruption,
 * @failed is the block and @what what failed on it.  A block that returns
 * -EAGAIN (completion context) is left for the worker, not advanced past.
 */
static int verify_io(struct extverity_io *io, struct bio *bio, u64 *failed,
		     const char **what)
{
	struct extverity_target *v = io->v;
	u8 real[2][EXTVERITY_MAX_DIGEST_SIZE];
	bool next_paired = false;
	u64 idx = 0, block;
	int err = 0;

	for (; io->done < io->n_blocks; io->done++) {
		struct bvec_iter iter = io->iter;
		const struct extverity_ext *e;
		const u8 *paired = NULL;

		/* real[1] is this block's digest (hash_pair(), just before). */
		if (next_paired)
			paired = real[1];
		next_paired = false;

		block = io->block + io->done;
		idx = find_extent(v, block, idx);
		e = &v->ext[idx];
		/*
		 * extverity_map() never submits zero ranges: this keeps a
		 * block that reached us anyway from being returned unchecked.
		 */
		if (e->tree == EXTVERITY_TREE_ZERO) {
			zero_bio_block(v, bio, &iter);
			this_cpu_inc(v->stats->zero);
		} else if (v->verified_blocks && !io->read_failed &&
			   test_bit(block, v->verified_blocks)) {
			bio_advance_iter(bio, &iter, v->p.block_size);
		} else {
			if (!paired && hash_pair(v, io, bio, iter, e, block,
						 real)) {
				paired = real[0];
				next_paired = true;
			}
			err = verify_block(v, io, bio, &iter, e, block, paired,
					   what);
			if (err) {
				*failed = block;
				break;
			}
		}
		io->iter = iter;
	}
	return err;
}

/*
 * The bio leaves its queue.  Before it ends: once the last bio has ended,
 * the table (and @io->wq_queued with it) may be gone.
 */
static void dequeue_io(struct extverity_io *io)
{
	if (io->wq_queued)
		atomic_dec(io->wq_queued);
}

static void finish_io(struct extverity_io *io, struct bio *bio,
		      blk_status_t status)
{
	bio->bi_end_io = io->orig_bi_end_io;
	bio->bi_status = status;
	bio_endio(bio);
}

static bool system_shutting_down(void)
{
	return system_state == SYSTEM_HALT || system_state == SYSTEM_POWER_OFF ||
	       system_state == SYSTEM_RESTART;
}

/*
 * A read of data blocks @block..@last failed for a reason other than
 * corruption: @what, with @err.  Log it and apply restart_on_error /
 * panic_on_error, except while the system shuts down, when devices going
 * away fail reads that nobody needs.
 */
static void handle_io_error(struct extverity_target *v, u64 block, u64 last,
			    const char *what, int err)
{
	const char *dev = dm_device_name(dm_table_get_md(v->ti->table));

	if (system_shutting_down())
		return;
	DMERR_LIMIT("%s: data blocks %llu-%llu: %s: error %d", dev, block, last,
		    what, err);
	if (v->opts & EXTVERITY_OPT_RESTART_ON_ERROR)
		kernel_restart("dm-extverity device has I/O error");
	if (v->opts & EXTVERITY_OPT_PANIC_ON_ERROR)
		panic("dm-extverity device has I/O error");
}

/*
 * A failed read goes to FEC, block by block, unless it was a readahead
 * (nobody waits for it, and correcting it costs reads of whole rounds) or
 * the system is shutting down, as dm-verity decides.
 */
static bool fec_read_error(struct extverity_io *io, struct bio *bio)
{
	return io->v->fec && !(bio->bi_opf & REQ_RAHEAD) &&
	       !system_shutting_down();
}

/*
 * One part of the bio's verification (the whole of it, unless split_io()
 * split it) ended with @err; on a failure other than corruption, at block
 * @failed, on @what.  The last part to end ends the bio, failing it if any
 * part failed.
 */
static void end_part(struct extverity_io *io, struct bio *bio, int err,
		     u64 failed, const char *what)
{
	/*
	 * Hash device, re-read or crypto failure, not corruption.  As in
	 * extverity_end_io(), a failed readahead triggers no error mode.
	 */
	if (err && err != -EBADMSG && !(bio->bi_opf & REQ_RAHEAD))
		handle_io_error(io->v, failed, failed, what, err);
	if (err)
		WRITE_ONCE(io->failed, true);
	/* Fully ordered: the last part sees the other's failure. */
	if (!atomic_dec_and_test(&io->parts))
		return;
	/* Corruption and failures alike fail the bio with EIO. */
	finish_io(io, bio, READ_ONCE(io->failed) ? BLK_STS_IOERR : BLK_STS_OK);
}

static void extverity_part_work(struct work_struct *w)
{
	struct extverity_io *part = container_of(w, struct extverity_io, work);
	struct extverity_io *io = part->whole;
	struct bio *bio = dm_bio_from_per_bio_data(io,
						   io->v->ti->per_io_data_size);
	const char *what = NULL;
	u64 failed = part->block + part->done;
	int err;

	err = verify_io(part, bio, &failed, &what);
	end_part(io, bio, err, failed, what);
}

/*
 * The smallest read whose verification is split between two workers.  A
 * read with one submitter at a time (a sequential reader, a read of a large
 * file) is hashed by one CPU while the others idle: hashing is what such a
 * read waits for, so two halves on two CPUs return it sooner (make bench,
 * 6.1, 1 MiB reads: 1.8 times as fast).  The second half costs a work item
 * and the wakeup of a worker on another CPU: the threshold keeps that small
 * against the hashing it moves, 64 KiB at the least.  128 KiB is the
 * default read-ahead window, so that a file read in sequence through the
 * page cache is split too.
 */
static unsigned int split_bytes = 128 * 1024;
module_param(split_bytes, uint, 0644);
MODULE_PARM_DESC(split_bytes,
		 "Smallest read whose blocks are verified by two workers, half each (bytes; 0 for never)");

/*
 * Hand the second half of what is left of the bio to the second part of
 * its per-bio data, on the unbound spread_wq: there it runs on an idle CPU
 * if there is one, and otherwise after what is queued, costing one work
 * item.  Not for a read the data device failed: FEC corrects such a read
 * block by block, slowly enough that splitting gains nothing.  Not with one
 * CPU online, where the second half could only run after the first.  Suspend
 * need not flush for the part: it ends before its bio can, and suspend
 * waits for the bio.
 */
static void split_io(struct extverity_io *io, struct bio *bio)
{
	struct extverity_target *v = io->v;
	struct extverity_io *part = extverity_io_part(io);
	unsigned int half = (io->n_blocks - io->done) / 2;
	unsigned int split = READ_ONCE(split_bytes);

	atomic_set(&io->parts, 1);
	io->failed = false;
	if (io->read_failed || !split || num_online_cpus() < 2 ||
	    ((u64)half << (v->p.log_blocksize + 1)) < split)
		return;
	part->v = v;
	part->whole = io;
	part->block = io->block;
	part->done = io->done + half;
	part->n_blocks = io->n_blocks;
	part->iter = io->iter;
	bio_advance_iter(bio, &part->iter, half << v->p.log_blocksize);
	part->ioprio = io->ioprio;
	part->in_bh = false;
	part->read_failed = false;
	part->wq_queued = NULL;
	io->n_blocks = part->done;
	atomic_set(&io->parts, 2);
	this_cpu_inc(v->stats->split);
	INIT_WORK(&part->work, extverity_part_work);
	queue_work(v->spread_wq, &part->work);
}

static noinline void extverity_work(struct work_struct *w)
{
	struct extverity_io *io = container_of(w, struct extverity_io, work);
	struct extverity_target *v = io->v;
	struct bio *bio = dm_bio_from_per_bio_data(io, v->ti->per_io_data_size);
	const char *what = NULL;
	u64 failed = io->block;
	int err;

	if (bio->bi_status && !fec_read_error(io, bio)) {
		handle_io_error(v, io->block, io->block + io->n_blocks - 1,
				"data device read failed",
				blk_status_to_errno(bio->bi_status));
		dequeue_io(io);
		finish_io(io, bio, bio->bi_status);
		return;
	}
	io->read_failed = bio->bi_status != BLK_STS_OK;
	split_io(io, bio);
	err = verify_io(io, bio, &failed, &what);
	dequeue_io(io);
	end_part(io, bio, err, failed, what);
}

/*
 * Queue the bio to the worker.  It stays on the CPU that completed it (wq),
 * where its data is cache-hot, unless that CPU already has one queued there
 * or being verified: then it goes to the unbound spread_wq.  The
 * completions of a deep queue tend to arrive on one CPU (one submitter, one
 * hardware queue), and verifying them all there leaves the other CPUs idle.
 * make bench (2 CPUs) measured random 4 KiB reads at queue depth 16 at 0.76x
 * dm-verity with wq alone; with spread_wq alone, reads at queue depth 1 lost
 * 17 % and the whole-tree read 7 %.
 *
 * The count is per CPU so that completions on different CPUs share no
 * cache line.  An interrupt between its read and its increment can send
 * two bios to wq: a choice of queue, never a question of correctness.  The
 * worker decrements the count it was put in, whichever CPU it runs on.
 */
static void queue_verify(struct extverity_io *io)
{
	struct extverity_target *v = io->v;
	atomic_t __percpu *counts = v->wq_queued;
	atomic_t *queued;

	INIT_WORK(&io->work, extverity_work);
	/* Not v->...: once queued, the bio may end and the table go. */
	queued = get_cpu_ptr(counts);
	if (atomic_read(queued)) {
		io->wq_queued = NULL;
		queue_work(v->spread_wq, &io->work);
	} else {
		atomic_inc(queued);
		io->wq_queued = queued;
		queue_work(v->wq, &io->work);
	}
	put_cpu_ptr(counts);
}

/*
 * try_verify_in_tasklet: the largest read verified in the completion
 * context, as dm-verity's use_bh_bytes (6.15).  Softirq work delays the
 * network and timers behind it; a larger read goes to the worker, as does
 * any read of the idle I/O class.
 */
static unsigned int bh_max_bytes = 8192;
module_param(bh_max_bytes, uint, 0644);
MODULE_PARM_DESC(bh_max_bytes,
		 "Largest read verified in the completion context with try_verify_in_tasklet (bytes)");

static bool try_in_bh(struct extverity_io *io)
{
	struct extverity_target *v = io->v;

	return (v->opts & EXTVERITY_OPT_TRY_VERIFY_IN_BH) &&
	       ((u64)io->n_blocks << v->p.log_blocksize) <=
	       READ_ONCE(bh_max_bytes) &&
	       IOPRIO_PRIO_CLASS(io->ioprio) != IOPRIO_CLASS_IDLE;
}

/*
 * The attempt in the completion context: where the read completed, or in
 * system_bh_wq when that was hard interrupt context.  Never sleeps.
 * Every block whose hash blocks are cached and good, and whose data
 * matches, is done here; at the first other one the worker takes over from
 * that block.
 */
static noinline void extverity_bh_work(struct work_struct *w)
{
	struct extverity_io *io = container_of(w, struct extverity_io, bh_work);
	struct bio *bio = dm_bio_from_per_bio_data(io,
						   io->v->ti->per_io_data_size);
	const char *what = NULL;
	u64 failed;

	io->in_bh = true;
	if (verify_io(io, bio, &failed, &what)) {
		io->in_bh = false;
		queue_verify(io);
		return;
	}
	finish_io(io, bio, BLK_STS_OK);
}

/**
 * extverity_end_io() - completion of a read of the data device
 * @bio: the bio, with bi_private pointing at its struct extverity_io
 *
 * Verification hashes and may read hash blocks, so it runs in a worker
 * (queue_verify()), or with try_verify_in_tasklet first here
 * (extverity_bh_work()): at once unless this is hard interrupt context,
 * where it is queued to system_bh_wq instead.  A failed
 * read needs a worker only for restart_on_error / panic_on_error
 * (kernel_restart() sleeps); a failed readahead never triggers them.
 */
void extverity_end_io(struct bio *bio)
{
	struct extverity_io *io = bio->bi_private;

	if (bio->bi_status) {
		if ((!(io->v->opts & EXTVERITY_ERROR_MODES) ||
		     (bio->bi_opf & REQ_RAHEAD)) && !fec_read_error(io, bio))
			finish_io(io, bio, bio->bi_status);
		else
			queue_verify(io);
		return;
	}
	if (!try_in_bh(io)) {
		queue_verify(io);
	} else if (in_hardirq() || irqs_disabled()) {
		INIT_WORK(&io->bh_work, extverity_bh_work);
		queue_work(system_bh_wq, &io->bh_work);
	} else {
		extverity_bh_work(&io->bh_work);
	}
}
