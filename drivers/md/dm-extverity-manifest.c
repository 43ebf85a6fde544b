// SPDX-License-Identifier: GPL-2.0
/*
 * dm-extverity: reading, authenticating and loading the manifest.
 *
 * Order matters, and is the point of this file: nothing read from the hash
 * device is interpreted before it is authenticated.  The superblock is
 * hashed and compared with the root digest from the table line before any
 * field is looked at; each manifest section is hashed, block by block as it
 * is copied out of dm-bufio, and compared with the digest in the superblock
 * before a single record is parsed; then every record is validated by the
 * shared format code, so that a consistent-looking but malformed manifest
 * cannot make the read path index out of bounds.
 *
 * Records are copied while their blocks are held and hashed from that same
 * buffer, so what is parsed is exactly what was hashed even if the device
 * changes underneath.
 *
 * With FEC options, a superblock or a section that fails is decoded from
 * the parity and judged by the same digest: the parity is never trusted,
 * only what it gives that then matches.
 */
#include <linux/blkdev.h>
#include <linux/ioprio.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <crypto/algapi.h>

#include "dm-extverity.h"

/*
 * Big tables: may be larger than kmalloc can give, never worth a warning,
 * and charged to the memory cgroup of whoever loads the table, whose limit
 * then bounds what a table can make the kernel allocate.
 */
#define EXTVERITY_GFP	(GFP_KERNEL | __GFP_NOWARN | __GFP_ACCOUNT)

/* Manifest blocks read ahead of the one being hashed; a power of two. */
#define EXTVERITY_SECT_READAHEAD	256

/*
 * Called once a record or a block: a manifest may hold billions of records.
 * A fatal signal ends the load (the table is refused), so that a table too
 * large for the machine can be given up on.
 */
static int manifest_cond_resched(void)
{
	cond_resched();
	return fatal_signal_pending(current) ? -EINTR : 0;
}

/*
 * Read the superblock through a short-lived dm-bufio client whose block is
 * the superblock's 1 KiB, or the hash device's logical block if larger (a
 * 4Kn disk, dm-crypt with sector_size:4096): a device cannot read less.
 * The block size the superblock names is checked against the devices only
 * once the superblock is authenticated.  *@unreadable says the device
 * failed the read, whatever its error: FEC may still give the block.
 */
static int read_superblock(struct extverity_target *v,
			   struct extverity_superblock *sb, bool *unreadable,
			   char **error)
{
	unsigned int lbs = bdev_logical_block_size(v->hash_dev->bdev);
	unsigned int size = max_t(unsigned int, EXTVERITY_SB_SIZE, lbs);
	struct dm_bufio_client *c;
	struct dm_buffer *b;
	void *data;
	int err = 0;

	if (v->hash_start & ((lbs >> SECTOR_SHIFT) - 1)) {
		*error = "Hash start is not a multiple of the hash device's logical block size";
		return -EINVAL;
	}
	c = dm_bufio_client_create(v->hash_dev->bdev, size, 1, 0, NULL, NULL,
				   0);
	if (IS_ERR(c)) {
		*error = "Cannot initialize dm-bufio";
		return PTR_ERR(c);
	}
	dm_bufio_set_sector_offset(c, v->hash_start);
	if (dm_bufio_get_device_size(c) < 1) {
		*error = "Hash device too small for a superblock";
		err = -EINVAL;
		goto out;
	}
	data = dm_bufio_read(c, 0, &b);
	if (IS_ERR(data)) {
		*error = "Cannot read the superblock";
		*unreadable = true;
		err = PTR_ERR(data);
		goto out;
	}
	memcpy(sb, data, sizeof(*sb));
	dm_bufio_release(b);
out:
	dm_bufio_client_destroy(c);
	return err;
}

/*
 * Hash-area block @block decoded from the FEC parity into @buf, counted in
 * *@corrected when the device returned something else or nothing.  A
 * block the code cannot correct is left as the device returned it, for
 * the section's digest to refuse.
 */
static int read_block_fec(struct extverity_target *v, u64 block, u8 *buf,
			  u64 *corrected)
{
	struct dm_buffer *b;
	void *data;
	int err;

	err = extverity_fec_decode(v, IOPRIO_DEFAULT, v->p.data_blocks + block,
				   buf);
	data = dm_bufio_read(v->bufio, block, &b);
	if (IS_ERR(data)) {
		if (err)
			return PTR_ERR(data);
		++*corrected;
		return 0;
	}
	if (err)
		memcpy(buf, data, v->p.block_size);
	else if (memcmp(buf, data, v->p.block_size))
		++*corrected;
	dm_bufio_release(b);
	return 0;
}

/*
 * Copy the first @len bytes of section @id to @dst while hashing all its
 * blocks (padding included), then check the digest; each block decoded
 * from the FEC parity first if @fec_buf, a block's worth of memory, is
 * given.  Nothing in @dst may be used unless this returns 0.
 */
static int hash_section(struct extverity_target *v,
			const struct extverity_superblock *sb, unsigned int id,
			void *dst, size_t len, u8 *fec_buf, u64 *corrected)
{
	const struct extverity_params *p = &v->p;
	u64 first = p->sect[id].start_block;
	u64 n = p->sect[id].nr_blocks;
	u8 digest[EXTVERITY_MAX_DIGEST_SIZE];
	size_t done = 0;
	u64 i;
	int err;

	SHASH_DESC_ON_STACK(desc, v->tfm);

	desc->tfm = v->tfm;
	err = crypto_shash_init(desc);
	for (i = 0; !err && i < n; i++) {
		struct dm_buffer *b = NULL;
		size_t chunk;
		void *data;

		if (!(i & (EXTVERITY_SECT_READAHEAD - 1)))
			dm_bufio_prefetch(v->bufio, first + i,
					  min_t(u64, n - i,
						2 * EXTVERITY_SECT_READAHEAD));
		if (fec_buf) {
			err = read_block_fec(v, first + i, fec_buf, corrected);
			data = fec_buf;
		} else {
			data = dm_bufio_read(v->bufio, first + i, &b);
			if (IS_ERR(data))
				err = PTR_ERR(data);
		}
		if (err)
			break;
		err = crypto_shash_update(desc, data, p->block_size);
		chunk = min_t(size_t, len - done, p->block_size);
		memcpy(dst + done, data, chunk);
		done += chunk;
		if (b)
			dm_bufio_release(b);
		/* Manifest blocks are not needed again: free the cache. */
		dm_bufio_forget(v->bufio, first + i);
		if (!err)
			err = manifest_cond_resched();
	}
	if (!err)
		err = crypto_shash_final(desc, digest);
	shash_desc_zero(desc);
	if (err)
		return err;
	if (done != len)
		return -EINVAL;
	if (crypto_memneq(digest, sb->sections[id].digest, p->digest_size))
		return -EBADMSG;
	return 0;
}

/*
 * Section @id, as hash_section() reads it.  A section that fails its
 * digest or cannot be read is read again through the FEC decoder, when
 * there is one, every block decoded: the section's one digest cannot say
 * which block is bad.  The first failure is what is returned if that does
 * not give the authenticated section either.
 */
static int read_section(struct extverity_target *v,
			const struct extverity_superblock *sb, unsigned int id,
			void *dst, size_t len)
{
	u64 corrected = 0;
	int err, fec_err;
	u8 *buf;

	err = hash_section(v, sb, id, dst, len, NULL, NULL);
	if (!err || err == -EINTR || !v->fec || !v->fec->bufio)
		return err;
	buf = kmalloc(v->p.block_size, GFP_KERNEL);
	if (!buf)
		return err;
	fec_err = hash_section(v, sb, id, dst, len, buf, &corrected);
	kfree(buf);
	if (fec_err)
		return fec_err == -EINTR ? fec_err : err;
	/* None when the device only failed the first read. */
	if (corrected) {
		this_cpu_add(v->stats->corrected, corrected);
		DMWARN("%s: manifest section %u: %llu blocks corrected by FEC",
		       dm_device_name(dm_table_get_md(v->ti->table)), id,
		       corrected);
	}
	return 0;
}

/* How each section is named in the log and in ti->error. */
static const struct {
	char *name;
	char *mismatch;
	char *unreadable;
} section_msgs[EXTVERITY_NR_SECTIONS] = {
	[EXTVERITY_SECT_EXTENTS] = { "extent map",
		"Extent map digest mismatch", "Cannot read the extent map" },
	[EXTVERITY_SECT_TREES] = { "tree table",
		"Tree table digest mismatch", "Cannot read the tree table" },
	[EXTVERITY_SECT_INODES] = { "inode index",
		"Inode index digest mismatch", "Cannot read the inode index" },
	[EXTVERITY_SECT_FEC] = { "FEC record",
		"FEC record digest mismatch", "Cannot read the FEC record" },
	[EXTVERITY_SECT_TOP_DIGESTS] = { "top digests",
		"Top digests digest mismatch", "Cannot read the top digests" },
};

/*
 * read_section(), and on failure the log's line and ti->error's message
 * for section @id: one of section_msgs[], or an interrupted load's.
 */
static int load_section(struct extverity_target *v,
			const struct extverity_superblock *sb, unsigned int id,
			void *dst, size_t len, char **error)
{
	int err = read_section(v, sb, id, dst, len);

	if (!err)
		return 0;
	DMERR("%s: %s %s", dm_device_name(dm_table_get_md(v->ti->table)),
	      section_msgs[id].name, err == -EBADMSG ? "digest mismatch" :
	      err == -EINTR ? "load interrupted by a fatal signal" :
	      "cannot be read");
	*error = err == -EBADMSG ? section_msgs[id].mismatch :
		 err == -EINTR ? "Manifest load interrupted" :
		 section_msgs[id].unreadable;
	return err;
}

static int load_trees(struct extverity_target *v,
		      const struct extverity_superblock *sb, char **error)
{
	const struct extverity_params *p = &v->p;
	u64 n = p->sect[EXTVERITY_SECT_TREES].nr_entries;
	size_t len = array_size(n, p->tree_entry_size);
	struct extverity_tree_cursor cur = { 0 };
	struct extverity_geometry g;
	const char *why;
	u8 *raw;
	u64 i;
	int err;

	raw = kvmalloc(len, EXTVERITY_GFP);
	v->trees = kvmalloc_array(n, sizeof(*v->trees), EXTVERITY_GFP);
	v->roots = kvmalloc_array(n, p->digest_size, EXTVERITY_GFP);
	if (!raw || !v->trees || !v->roots) {
		*error = "Cannot allocate the tree table";
		err = -ENOMEM;
		goto out;
	}
	err = load_section(v, sb, EXTVERITY_SECT_TREES, raw, len, error);
	if (err)
		goto out;
	v->nr_trees = n;
	for (i = 0; i < n; i++) {
		const struct extverity_tree *t =
			(const void *)(raw + i * p->tree_entry_size);

		err = manifest_cond_resched();
		if (err) {
			*error = "Manifest load interrupted";
			goto out;
		}
		err = extverity_check_tree(p, t, &cur, &g, &why);
		if (err) {
			DMERR("%s: tree %llu: %s",
			      dm_device_name(dm_table_get_md(v->ti->table)),
			      i, why);
			*error = "Invalid tree table";
			goto out;
		}
		v->trees[i].data_size = le64_to_cpu(t->data_size);
		v->trees[i].top = le64_to_cpu(t->top);
		v->trees[i].levels = le64_to_cpu(t->levels);
		v->trees[i].top_gen = 0;
		memcpy(v->roots + i * p->digest_size, t->root_hash,
		       p->digest_size);
	}
out:
	kvfree(raw);
	return err;
}

static_assert(sizeof(struct extverity_ext) == sizeof(struct extverity_extent));

static int load_extents(struct extverity_target *v,
			const struct extverity_superblock *sb, char **error)
{
	const struct extverity_params *p = &v->p;
	u64 n = p->sect[EXTVERITY_SECT_EXTENTS].nr_entries;
	u64 expected = 0, i;
	const char *why;
	int err;

	/* Read the records in place, then convert each to CPU order. */
	v->ext = kvmalloc_array(n, sizeof(*v->ext), EXTVERITY_GFP);
	if (!v->ext) {
		*error = "Cannot allocate the extent map";
		return -ENOMEM;
	}
	err = load_section(v, sb, EXTVERITY_SECT_EXTENTS, v->ext,
			   array_size(n, sizeof(*v->ext)), error);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		const struct extverity_extent *raw = (const void *)&v->ext[i];
		u32 tree = le32_to_cpu(raw->tree);
		u64 tree_blocks = 0;
		struct extverity_ext e;

		err = manifest_cond_resched();
		if (err) {
			*error = "Manifest load interrupted";
			return err;
		}
		if (tree < v->nr_trees)
			tree_blocks = (v->trees[tree].data_size +
				       p->block_size - 1) >> p->log_blocksize;
		err = extverity_check_extent(p, raw, expected, v->nr_trees,
					     tree_blocks, &why);
		if (err) {
			DMERR("%s: extent %llu: %s",
			      dm_device_name(dm_table_get_md(v->ti->table)),
			      i, why);
			*error = "Invalid extent map";
			return err;
		}
		e.start = le64_to_cpu(raw->start);
		e.leaf = le64_to_cpu(raw->leaf);
		e.count = le32_to_cpu(raw->count);
		e.tree = tree;
		e.inode = le64_to_cpu(raw->inode);
		v->ext[i] = e;
		expected = e.start + e.count;
	}
	if (expected != p->data_blocks) {
		DMERR("%s: extent map ends at block %llu, not %llu",
		      dm_device_name(dm_table_get_md(v->ti->table)), expected,
		      p->data_blocks);
		*error = "Invalid extent map";
		return -EINVAL;
	}
	v->nr_ext = n;
	return 0;
}

static_assert(sizeof(struct extverity_inode) == 16);

/*
 * The inode index (EXTVERITY_COMPAT_INODE_INDEX): the tree of each regular
 * file by inode number, for the measure message.  Kept as two arrays, 8 + 4
 * bytes per file instead of the 16 of the records: the raw section is read
 * into a transient buffer, authenticated, then each record is validated and
 * split.
 */
static int load_inodes(struct extverity_target *v,
		       const struct extverity_superblock *sb, char **error)
{
	const struct extverity_params *p = &v->p;
	u64 n = p->sect[EXTVERITY_SECT_INODES].nr_entries;
	struct extverity_inode *raw;
	u64 prev = 0, i;
	const char *why;
	int err;

	if (!(p->compat_flags & EXTVERITY_COMPAT_INODE_INDEX) || !n)
		return 0;
	raw = kvmalloc_array(n, sizeof(*raw), EXTVERITY_GFP);
	v->inodes = kvmalloc_array(n, sizeof(*v->inodes), EXTVERITY_GFP);
	v->inode_trees = kvmalloc_array(n, sizeof(*v->inode_trees),
					EXTVERITY_GFP);
	if (!raw || !v->inodes || !v->inode_trees) {
		*error = "Cannot allocate the inode index";
		err = -ENOMEM;
		goto out;
	}
	err = load_section(v, sb, EXTVERITY_SECT_INODES, raw,
			   array_size(n, sizeof(*raw)), error);
	if (err)
		goto out;
	for (i = 0; i < n; i++) {
		err = manifest_cond_resched();
		if (err) {
			*error = "Manifest load interrupted";
			goto out;
		}
		err = extverity_check_inode(&raw[i], prev, v->nr_trees, &why);
		if (err) {
			DMERR("%s: inode entry %llu: %s",
			      dm_device_name(dm_table_get_md(v->ti->table)),
			      i, why);
			*error = "Invalid inode index";
			goto out;
		}
		prev = le64_to_cpu(raw[i].inode);
		v->inodes[i] = prev;
		v->inode_trees[i] = le32_to_cpu(raw[i].tree);
	}
	/* Bounded by parse_superblock: below EXTVERITY_TREE_ZERO. */
	v->nr_inodes = n;
out:
	kvfree(raw);
	return err;
}

/*
 * With FEC options on the table line, the hash area's FEC record: it must
 * be there, authenticated, and say what the table line says.
 */
static int load_fec(struct extverity_target *v,
		    const struct extverity_superblock *sb, char **error)
{
	struct extverity_fec rec;
	int err;

	if (!v->fec)
		return 0;
	if (!(v->p.compat_flags & EXTVERITY_COMPAT_FEC)) {
		*error = "FEC options given, but the hash area has no FEC record";
		return -EINVAL;
	}
	err = load_section(v, sb, EXTVERITY_SECT_FEC, &rec, sizeof(rec), error);
	if (err)
		return err;
	return extverity_fec_check_record(v, &rec, error);
}

/*
 * The top digests (EXTVERITY_COMPAT_TOP_DIGESTS): one per TOPS block, kept
 * as read, @p.digest_size bytes each.  Their count is the TOPS section's
 * length (extverity_parse_superblock()), at most 1/16 of its size.
 */
static int load_top_digests(struct extverity_target *v,
			    const struct extverity_superblock *sb,
			    char **error)
{
	u64 n = v->p.sect[EXTVERITY_SECT_TOP_DIGESTS].nr_entries;
	size_t len = array_size(n, v->p.digest_size);
	int err;

	if (!(v->p.compat_flags & EXTVERITY_COMPAT_TOP_DIGESTS) || !n)
		return 0;
	v->top_digests = kvmalloc(len, EXTVERITY_GFP);
	if (!v->top_digests) {
		*error = "Cannot allocate the top digests";
		return -ENOMEM;
	}
	err = load_section(v, sb, EXTVERITY_SECT_TOP_DIGESTS, v->top_digests,
			   len, error);
	if (err) {
		kvfree(v->top_digests);
		v->top_digests = NULL;
	}
	return err;
}

/* The dm-bufio client of the hash area, in @v->bufio. */
static int create_hash_client(struct extverity_target *v, unsigned int flags,
			      char **error)
{
	struct dm_bufio_client *c;

	c = dm_bufio_client_create(v->hash_dev->bdev, v->p.block_size, 1,
				   sizeof(struct extverity_buf_aux),
				   extverity_bufio_alloc, NULL, flags);
	if (IS_ERR(c)) {
		*error = "Cannot initialize dm-bufio";
		return PTR_ERR(c);
	}
	dm_bufio_set_sector_offset(c, v->hash_start);
	v->bufio = c;
	return 0;
}

/*
 * One try of fec_superblock(), with @v->p's geometry guessed: make the
 * decoder and the clients it reads through, decode the superblock's block
 * (the first of the hash area, after the data blocks) and compare its
 * first EXTVERITY_SB_SIZE bytes with the root digest.
 */
static int try_fec_superblock(struct extverity_target *v,
			      struct extverity_superblock *sb)
{
	u8 digest[EXTVERITY_MAX_DIGEST_SIZE];
	char *ignored;
	u8 *buf;
	int err;

	err = create_hash_client(v, 0, &ignored);
	if (err)
		return err;
	v->data_bufio = dm_bufio_client_create(v->data_dev->bdev,
					       v->p.block_size, 1, 0, NULL,
					       NULL, 0);
	if (IS_ERR(v->data_bufio)) {
		err = PTR_ERR(v->data_bufio);
		v->data_bufio = NULL;
		return err;
	}
	err = extverity_fec_prepare(v, &ignored);
	if (err)
		return err;
	/* The guess does not fit the options or the FEC device. */
	if (!v->fec->bufio)
		return -EINVAL;
	buf = kmalloc(v->p.block_size, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	err = extverity_fec_decode(v, IOPRIO_DEFAULT, v->p.data_blocks, buf);
	if (!err)
		err = extverity_hash_plain(v, buf, sizeof(*sb), digest);
	if (!err && crypto_memneq(digest, v->root,
				  crypto_shash_digestsize(v->tfm)))
		err = -EBADMSG;
	if (!err)
		memcpy(sb, buf, sizeof(*sb));
	kfree(buf);
	return err;
}

/*
 * The superblock did not match the root digest or could not be read: with
 * FEC options, decode it.  Its block size, hence its place among the
 * covered blocks and the geometry of the code, is known only once it is
 * authenticated, so each block size the format allows and the target's
 * length and hash start admit is tried; the root digest judges, so a
 * wrong guess cannot pass.  What a try made is undone: the load then goes
 * on from the authenticated @sb as if it had been read.
 */
static int fec_superblock(struct extverity_target *v,
			  struct extverity_superblock *sb)
{
	const struct extverity_params saved = v->p;
	struct extverity_params *p = &v->p;
	unsigned int lbs = max(bdev_logical_block_size(v->data_dev->bdev),
			       bdev_logical_block_size(v->hash_dev->bdev));
	unsigned int log, shift;
	int err = -EBADMSG;

	if (!v->fec)
		return err;
	for (log = EXTVERITY_MIN_LOG_BLOCKSIZE;
	     log <= EXTVERITY_MAX_LOG_BLOCKSIZE && err; log++) {
		shift = log - SECTOR_SHIFT;
		/* A block size the load would refuse is not tried. */
		if ((1U << log) < lbs ||
		    (v->ti->len | v->hash_start) & ((1U << shift) - 1) ||
		    v->fec->g.blocks <= (v->ti->len >> shift))
			continue;
		p->block_size = 1U << log;
		p->log_blocksize = log;
		p->data_blocks = v->ti->len >> shift;
		p->hash_blocks = v->fec->g.blocks - p->data_blocks;
		err = try_fec_superblock(v, sb);
		extverity_fec_unprepare(v);
		if (v->data_bufio)
			dm_bufio_client_destroy(v->data_bufio);
		if (v->bufio)
			dm_bufio_client_destroy(v->bufio);
		v->data_bufio = NULL;
		v->bufio = NULL;
		*p = saved;
	}
	if (err)
		return err;
	this_cpu_inc(v->stats->corrected);
	DMWARN("%s: superblock corrected by FEC",
	       dm_device_name(dm_table_get_md(v->ti->table)));
	return 0;
}

/**
 * extverity_load_manifest() - authenticate and load the hash area's manifest
 * @v: the target, with devices, @v->hash_start, @v->root and @v->tfm set
 * @error: set to a static message for ti->error on failure
 *
 * On success @v->p, @v->salt, @v->bufio, @v->data_bufio, the extent map,
 * the tree table and, when the hash area has one, the inode index are set
 * up; with FEC options, the decoder is made before the sections are read,
 * so that it corrects them, and the FEC record is checked against the
 * options.  @v->stats must be allocated: corrections are counted.  On
 * failure whatever was allocated is left for extverity_free_manifest().
 *
 * Return: 0 or a negative errno.
 */
int extverity_load_manifest(struct extverity_target *v, char **error)
{
	struct mapped_device *md = dm_table_get_md(v->ti->table);
	u8 digest[EXTVERITY_MAX_DIGEST_SIZE];
	struct extverity_superblock *sb;
	struct extverity_params *p = &v->p;
	u8 table_alg = p->hash_algorithm;
	bool unreadable = false;
	const char *why;
	int err;

	sb = kmalloc_obj(*sb, GFP_KERNEL);
	if (!sb) {
		*error = "Cannot allocate memory";
		return -ENOMEM;
	}
	err = read_superblock(v, sb, &unreadable, error);
	if (!err) {
		err = extverity_hash_plain(v, sb, sizeof(*sb), digest);
		if (err) {
			*error = "Cannot hash the superblock";
			goto out;
		}
		if (crypto_memneq(digest, v->root,
				  crypto_shash_digestsize(v->tfm)))
			err = -EBADMSG;
	}
	/* Read, but wrong; or not read: FEC may still give it. */
	if ((err == -EBADMSG || unreadable) && !fec_superblock(v, sb))
		err = 0;
	if (err == -EBADMSG) {
		DMERR("%s: superblock does not match root digest",
		      dm_device_name(md));
		*error = "Superblock does not match the root digest";
		err = -EINVAL;
	}
	if (err)
		goto out;
	err = extverity_parse_superblock(sb, p, &why);
	if (err) {
		DMERR("%s: invalid superblock: %s", dm_device_name(md), why);
		*error = "Invalid superblock";
		goto out;
	}
	err = -EINVAL;
	if (p->hash_algorithm != table_alg) {
		*error = "Hash algorithm does not match the superblock";
		goto out;
	}
	if (v->hash_start & ((p->block_size >> SECTOR_SHIFT) - 1)) {
		*error = "Hash start is not a multiple of the block size";
		goto out;
	}
	if (v->ti->len != p->data_blocks << (p->log_blocksize - SECTOR_SHIFT)) {
		*error = "Target length does not match the image size";
		goto out;
	}
	if (bdev_nr_sectors(v->data_dev->bdev) < v->ti->len) {
		*error = "Data device is smaller than the image";
		goto out;
	}
	if (bdev_logical_block_size(v->data_dev->bdev) > p->block_size ||
	    bdev_logical_block_size(v->hash_dev->bdev) > p->block_size) {
		*error = "Device logical block size exceeds the block size";
		goto out;
	}
	memcpy(v->salt, sb->salt, sizeof(v->salt));

	err = create_hash_client(v, 0, error);
	if (err)
		goto out;
	if (dm_bufio_get_device_size(v->bufio) < p->hash_blocks) {
		*error = "Hash device is smaller than the hash area";
		err = -EINVAL;
		goto out;
	}
	v->data_bufio = dm_bufio_client_create(v->data_dev->bdev,
					       p->block_size, 1, 0, NULL, NULL,
					       0);
	if (IS_ERR(v->data_bufio)) {
		err = PTR_ERR(v->data_bufio);
		v->data_bufio = NULL;
		*error = "Cannot initialize dm-bufio";
		goto out;
	}
	/* Before the sections: FEC corrects them too (read_section()). */
	err = extverity_fec_prepare(v, error);
	if (err)
		goto out;
	err = load_trees(v, sb, error);
	if (!err)
		err = load_extents(v, sb, error);
	if (!err)
		err = load_inodes(v, sb, error);
	if (!err)
		err = load_fec(v, sb, error);
	if (!err)
		err = load_top_digests(v, sb, error);
	if (err)
		goto out;
	/*
	 * With try_verify_in_tasklet, cached hash blocks are looked up in the
	 * completion context: dm-bufio must then take spinlocks, not mutexes
	 * (DM_BUFIO_CLIENT_NO_SLEEP).  Such a client's destruction does not
	 * wait for reads in flight, which a load that failed half-way leaves
	 * behind (read_section() reads ahead): the manifest is read through a
	 * client that sleeps, replaced here; its destruction waits.
	 */
	if (v->opts & EXTVERITY_OPT_TRY_VERIFY_IN_BH) {
		dm_bufio_client_destroy(v->bufio);
		v->bufio = NULL;
		err = create_hash_client(v, DM_BUFIO_CLIENT_NO_SLEEP, error);
	}
out:
	kfree(sb);
	return err;
}

void extverity_free_manifest(struct extverity_target *v)
{
	kvfree(v->ext);
	kvfree(v->trees);
	kvfree(v->roots);
	kvfree(v->inodes);
	kvfree(v->inode_trees);
	kvfree(v->top_digests);
	if (v->data_bufio)
		dm_bufio_client_destroy(v->data_bufio);
	if (v->bufio)
		dm_bufio_client_destroy(v->bufio);
	v->ext = NULL;
	v->trees = NULL;
	v->roots = NULL;
	v->inodes = NULL;
	v->inode_trees = NULL;
	v->nr_inodes = 0;
	v->top_digests = NULL;
	v->bufio = NULL;
	v->data_bufio = NULL;
}
