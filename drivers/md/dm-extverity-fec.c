// SPDX-License-Identifier: GPL-2.0
/*
 * Forward error correction: a block that fails its digest, or that the
 * data device cannot read, is decoded from Reed-Solomon parity on a FEC
 * device and used only if it then matches its authenticated digest.
 *
 * The code and its interleaving are dm-verity's (docs/format.md "FEC"):
 * RS(255, 255 - roots) over GF(2^8), and codeword b of round n made of
 * byte b of the covered blocks n, n + rounds, ...  The covered blocks are
 * the data blocks, then the hash area's.  The parity is not authenticated:
 * the digest check of the caller is what makes a correction safe, so a
 * wrong or damaged FEC device can only fail to correct.
 *
 * Decoding reads a block from each of 255 - roots places on the devices,
 * so on the read path it runs only in the worker, never in the completion
 * context, and only after the block failed: it is the slow path of a slow
 * path.  Its buffers come from mempools made at table load, where it also
 * corrects the superblock and the manifest (dm-extverity-manifest.c).
 */
#include <linux/rslib.h>

#include "dm-extverity.h"

/*
 * Codewords decoded per pass: a buffer of EXTVERITY_FEC_BUF_SIZE bytes
 * holds this many of 255 bytes, so a 4 KiB block takes 16 passes, each
 * reading every block of the round once (from dm-bufio's cache after the
 * first pass).
 */
#define EXTVERITY_FEC_PASS		256U
#define EXTVERITY_FEC_BUF_SIZE		(EXTVERITY_FEC_PASS * EXTVERITY_FEC_RSM)

int extverity_fec_parse_opt(struct extverity_target *v, unsigned int flag,
			    const char *arg, char **error)
{
	struct extverity_fec_state *f = v->fec;
	unsigned long long n;
	unsigned int roots;
	int err;

	if (!f) {
		f = kzalloc_obj(*f, GFP_KERNEL);
		if (!f) {
			*error = "Cannot allocate memory";
			return -ENOMEM;
		}
		v->fec = f;
	}
	switch (flag) {
	case EXTVERITY_OPT_FEC_DEVICE:
		err = dm_get_device(v->ti, arg, BLK_OPEN_READ, &f->dev);
		if (err) {
			*error = "FEC device lookup failed";
			return err;
		}
		return 0;
	case EXTVERITY_OPT_FEC_ROOTS:
		if (kstrtouint(arg, 10, &roots) ||
		    roots < EXTVERITY_FEC_MIN_ROOTS ||
		    roots > EXTVERITY_FEC_MAX_ROOTS) {
			*error = "Invalid fec_roots (2 to 24)";
			return -EINVAL;
		}
		f->g.roots = roots;
		f->g.rsn = EXTVERITY_FEC_RSM - roots;
		return 0;
	case EXTVERITY_OPT_FEC_BLOCKS:
		if (kstrtoull(arg, 10, &n) || !n ||
		    n > 2 * EXTVERITY_MAX_DATA_BLOCKS) {
			*error = "Invalid fec_blocks";
			return -EINVAL;
		}
		f->g.blocks = n;
		return 0;
	case EXTVERITY_OPT_FEC_START:
		if (kstrtoull(arg, 10, &n) || n > EXTVERITY_MAX_DATA_BLOCKS) {
			*error = "Invalid fec_start";
			return -EINVAL;
		}
		f->g.start = n;
		return 0;
	}
	*error = "Unknown option";
	return -EINVAL;
}

/**
 * extverity_fec_check_record() - the table's FEC options against the area's
 * @v: the target, its FEC options parsed
 * @rec: the hash area's FEC record, authenticated by its section's digest
 * @error: set to a static message for ti->error on failure
 *
 * The table line must say what the signed area says: parameters that
 * differ would decode every block against the wrong code, which the digest
 * check would catch one failed read at a time.
 *
 * Return: 0 or -EINVAL.
 */
int extverity_fec_check_record(struct extverity_target *v,
			       const struct extverity_fec *rec, char **error)
{
	struct extverity_fec_state *f = v->fec;
	struct extverity_fec_geometry g;
	const char *why;

	if (extverity_check_fec(&v->p, rec, &g, &why)) {
		DMERR("%s: invalid FEC record: %s",
		      dm_device_name(dm_table_get_md(v->ti->table)), why);
		*error = "Invalid FEC record";
		return -EINVAL;
	}
	if (f->g.roots != g.roots) {
		*error = "fec_roots does not match the hash area's FEC record";
		return -EINVAL;
	}
	if (f->g.blocks != g.blocks) {
		*error = "fec_blocks does not match the hash area's FEC record";
		return -EINVAL;
	}
	if (f->g.start != g.start) {
		*error = "fec_start does not match the hash area's FEC record";
		return -EINVAL;
	}
	f->g = g;
	return 0;
}

static void *fec_rs_alloc(gfp_t gfp, void *pool_data)
{
	struct extverity_fec_state *f = pool_data;

	/* The code of docs/format.md: GF(2^8) mod 0x11d, first root a^0. */
	return init_rs_gfp(8, 0x11d, 0, 1, f->g.roots, gfp);
}

static void fec_rs_free(void *element, void *pool_data)
{
	free_rs(element);
}

/* Blocks [@start, @start + @n) and [@s2, @s2 + @n2) share one. */
static bool blocks_overlap(u64 start, u64 n, u64 s2, u64 n2)
{
	return start < s2 + n2 && s2 < start + n;
}

/*
 * Why the FEC device cannot hold parity of geometry @g for @v->p, or NULL:
 * a logical block larger than the block size, parity over the data or the
 * hash area, or past the device's end.
 */
static char *fec_device_problem(const struct extverity_target *v,
				const struct extverity_fec_geometry *g)
{
	const struct extverity_params *p = &v->p;
	struct block_device *bdev = v->fec->dev->bdev;
	unsigned int shift = p->log_blocksize - SECTOR_SHIFT;

	if (bdev_logical_block_size(bdev) > p->block_size)
		return "FEC device logical block size exceeds the block size";
	if (bdev == v->data_dev->bdev &&
	    blocks_overlap(g->start, g->parity_blocks, 0, p->data_blocks))
		return "FEC parity overlaps the data";
	if (bdev == v->hash_dev->bdev &&
	    blocks_overlap(g->start, g->parity_blocks, v->hash_start >> shift,
			   p->hash_blocks))
		return "FEC parity overlaps the hash area";
	if ((bdev_nr_sectors(bdev) >> shift) < g->start + g->parity_blocks)
		return "FEC device is smaller than its parity";
	return NULL;
}

/**
 * extverity_fec_prepare() - the decoder, from the table line's FEC options
 * @v: the target, with @v->p's geometry (from the authenticated superblock,
 *	or a guess of fec_superblock()) and its dm-bufio clients made; the
 *	manifest sections not read yet
 * @error: set to a static message for ti->error on failure
 *
 * The manifest sections are read with the decoder ready, so that a damaged
 * manifest block can be corrected (read_section()): its parameters come
 * from the table line, before the FEC record that must confirm them is
 * read.  Options that cannot describe this hash area, or a FEC device
 * that cannot hold their parity, leave the decoder unmade and the manifest
 * uncorrected: the FEC record or extverity_fec_ctr() then refuses the
 * table, each with its own message.  The parity read before that check is
 * not trusted any more than after it: a block it decodes is used only if
 * it matches its authenticated digest.
 *
 * Return: 0 or a negative errno; what was made is freed by
 * extverity_fec_unprepare().
 */
int extverity_fec_prepare(struct extverity_target *v, char **error)
{
	struct extverity_fec_state *f = v->fec;
	struct extverity_fec_geometry g;
	struct extverity_fec rec = {
		.start = cpu_to_le64(f ? f->g.start : 0),
		.blocks = cpu_to_le64(f ? f->g.blocks : 0),
		.roots = f ? f->g.roots : 0,
	};
	const char *why;
	int err;

	if (!f || extverity_check_fec(&v->p, &rec, &g, &why) ||
	    fec_device_problem(v, &g))
		return 0;
	f->g = g;
	f->bufio = dm_bufio_client_create(f->dev->bdev, v->p.block_size, 1, 0,
					  NULL, NULL, 0);
	if (IS_ERR(f->bufio)) {
		err = PTR_ERR(f->bufio);
		f->bufio = NULL;
		*error = "Cannot initialize dm-bufio";
		return err;
	}
	*error = "Cannot allocate memory";
	err = mempool_init(&f->rs_pool, num_online_cpus(), fec_rs_alloc,
			   fec_rs_free, f);
	if (!err)
		err = mempool_init_kmalloc_pool(&f->cw_pool, 1,
						EXTVERITY_FEC_BUF_SIZE);
	if (!err)
		err = mempool_init_kmalloc_pool(&f->block_pool, 1,
						v->p.block_size);
	if (err)
		return err;
	*error = NULL;
	return 0;
}

/**
 * extverity_fec_ctr() - check that the FEC device holds the parity
 * @v: the target, its manifest loaded and its FEC record checked
 * @error: set to a static message for ti->error on failure
 *
 * A record equal to the table's options and a device that holds its
 * parity are exactly what extverity_fec_prepare() made the decoder for.
 *
 * Return: 0 or -EINVAL.
 */
int extverity_fec_ctr(struct extverity_target *v, char **error)
{
	char *why;

	if (!v->fec)
		return 0;
	why = fec_device_problem(v, &v->fec->g);
	if (why) {
		*error = why;
		return -EINVAL;
	}
	if (WARN_ON_ONCE(!v->fec->bufio)) {
		*error = "FEC decoder not set up";
		return -EINVAL;
	}
	return 0;
}

/**
 * extverity_fec_unprepare() - undo extverity_fec_prepare()
 * @v: the target, with or without FEC
 *
 * For a try that guessed the block size (fec_superblock()), and for the
 * destructor: the pools are left zeroed, as never initialised, which
 * mempool_exit() and mempool_init() both take.
 */
void extverity_fec_unprepare(struct extverity_target *v)
{
	struct extverity_fec_state *f = v->fec;

	if (!f)
		return;
	mempool_exit(&f->block_pool);
	mempool_exit(&f->cw_pool);
	mempool_exit(&f->rs_pool);
	memset(&f->block_pool, 0, sizeof(f->block_pool));
	memset(&f->cw_pool, 0, sizeof(f->cw_pool));
	memset(&f->rs_pool, 0, sizeof(f->rs_pool));
	if (f->bufio)
		dm_bufio_client_destroy(f->bufio);
	f->bufio = NULL;
}

void extverity_fec_dtr(struct extverity_target *v)
{
	struct extverity_fec_state *f = v->fec;

	if (!f)
		return;
	extverity_fec_unprepare(v);
	if (f->dev)
		dm_put_device(v->ti, f->dev);
	kfree(f);
	v->fec = NULL;
}

/*
 * Covered block @index: a data block, or a block of the hash area.  Data
 * blocks come through data_bufio, whose cache nothing reads unverified.
 */
static u8 *fec_read_covered(struct extverity_target *v,
			    unsigned short ioprio, u64 index,
			    struct dm_buffer **bp)
{
	if (index < v->p.data_blocks)
		return dm_bufio_read_with_ioprio(v->data_bufio, index, bp,
						 ioprio);
	return dm_bufio_read_with_ioprio(v->bufio, index - v->p.data_blocks,
					 bp, ioprio);
}

/*
 * Fill symbol @sym of the @n codewords in @cw (EXTVERITY_FEC_RSM bytes
 * apiece) from bytes @off.. of covered block @index; zeros past the
 * covered blocks.  Returns 1 when the block cannot be read (an erasure),
 * else 0.
 */
static int fec_fill_symbol(struct extverity_target *v,
			   unsigned short ioprio, u64 index, u32 off,
			   u32 n, u32 sym, u8 *cw)
{
	struct dm_buffer *b;
	const u8 *data;
	u32 c;

	if (index >= v->fec->g.blocks) {
		for (c = 0; c < n; c++)
			cw[c * EXTVERITY_FEC_RSM + sym] = 0;
		return 0;
	}
	data = fec_read_covered(v, ioprio, index, &b);
	if (IS_ERR(data)) {
		for (c = 0; c < n; c++)
			cw[c * EXTVERITY_FEC_RSM + sym] = 0;
		return 1;
	}
	for (c = 0; c < n; c++)
		cw[c * EXTVERITY_FEC_RSM + sym] = data[off + c];
	dm_bufio_release(b);
	return 0;
}

/*
 * The parity bytes of codewords @off..@off + @n - 1 of round @round, after
 * each codeword's data in @cw: @roots bytes a codeword, from the round's
 * @roots parity blocks; at most two blocks per pass.
 */
static int fec_fill_parity(struct extverity_target *v, u64 round, u32 off,
			   u32 n, u8 *cw)
{
	const struct extverity_fec_state *f = v->fec;
	const struct extverity_params *p = &v->p;
	u32 roots = f->g.roots, c, j;
	u64 first = f->g.start + round * roots;
	u64 pos = (u64)off * roots, held = U64_MAX;
	struct dm_buffer *b = NULL;
	const u8 *data = NULL;

	for (c = 0; c < n; c++) {
		for (j = 0; j < roots; j++, pos++) {
			u64 block = first + (pos >> p->log_blocksize);

			if (block != held) {
				if (b)
					dm_bufio_release(b);
				data = dm_bufio_read(f->bufio, block, &b);
				if (IS_ERR(data))
					return PTR_ERR(data);
				held = block;
			}
			cw[c * EXTVERITY_FEC_RSM + f->g.rsn + j] =
				data[pos & (p->block_size - 1)];
		}
	}
	dm_bufio_release(b);
	return 0;
}

/**
 * extverity_fec_decode() - one covered block, decoded from its round
 * @v: the target, with FEC
 * @ioprio: the I/O priority of the reads: the bio's this is for, or
 *	IOPRIO_DEFAULT at table load
 * @index: the block: a data block, or data_blocks + a hash-area block
 * @out: block_size bytes, the decoded block
 *
 * Blocks that cannot be read count as erasures, which the code corrects
 * twice as many of as errors.  The result may be a wrong block when a
 * codeword had more errors than the code corrects: the caller checks it
 * against the block's digest before it uses it.
 *
 * Return: 0, -EBADMSG when a codeword cannot be corrected, or an I/O error
 * from the FEC device.
 */
int extverity_fec_decode(struct extverity_target *v, unsigned short ioprio,
			 u64 index, u8 *out)
{
	struct extverity_fec_state *f = v->fec;
	const struct extverity_fec_geometry *g = &f->g;
	int eras[EXTVERITY_FEC_MAX_ROOTS];
	u16 par[EXTVERITY_FEC_MAX_ROOTS];
	struct rs_control *rs;
	u32 off, n, i, c, j, sym;
	u64 round;
	int neras, r, err = 0;
	u8 *cw;

	/* Which codeword symbol the block is, in which round. */
	sym = div64_u64_rem(index, g->rounds, &round);
	rs = mempool_alloc(&f->rs_pool, GFP_NOIO);
	cw = mempool_alloc(&f->cw_pool, GFP_NOIO);
	for (off = 0; off < v->p.block_size && !err; off += n) {
		n = min(v->p.block_size - off, EXTVERITY_FEC_PASS);
		neras = 0;
		for (i = 0; i < g->rsn; i++) {
			if (!fec_fill_symbol(v, ioprio, round + i * g->rounds,
					     off, n, i, cw))
				continue;
			if (neras == g->roots) {
				err = -EBADMSG;
				break;
			}
			eras[neras++] = i;
		}
		if (!err)
			err = fec_fill_parity(v, round, off, n, cw);
		for (c = 0; c < n && !err; c++) {
			u8 *word = cw + c * EXTVERITY_FEC_RSM;

			for (j = 0; j < g->roots; j++)
				par[j] = word[g->rsn + j];
			r = decode_rs8(rs, word, par, g->rsn, NULL, neras,
				       eras, 0, NULL);
			if (r < 0)
				err = -EBADMSG;
			else
				out[off + c] = word[sym];
		}
	}
	mempool_free(cw, &f->cw_pool);
	mempool_free(rs, &f->rs_pool);
	/*
	 * The data blocks read stay out of data_bufio's cache, whose purpose
	 * is to re-read from the device (recheck_block()).
	 */
	for (i = 0; i < g->rsn; i++) {
		u64 b = round + i * g->rounds;

		if (b < v->p.data_blocks)
			dm_bufio_forget(v->data_bufio, b);
	}
	return err;
}
