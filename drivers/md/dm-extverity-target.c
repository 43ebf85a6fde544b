// SPDX-License-Identifier: GPL-2.0
/*
 * dm-extverity: a read-only device-mapper target that verifies every read of
 * a filesystem image against per-file fs-verity Merkle trees (plus one
 * residual tree for metadata), and returns zeros for free blocks.
 *
 * This file holds the table line, the device-mapper hooks and the status;
 * docs/table.md documents the interface.  The table line is
 *
 *	1 <data_dev> <hash_dev> <hash_start_sector> <alg> <root_hex>
 *	  [<#opts> <opt>...]
 *
 * Everything else (block size, sizes, salt, trees) comes from the hash
 * area's superblock, which the root digest authenticates.
 */
#include <linux/blkdev.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/slab.h>

#include "dm-extverity.h"

#define EXTVERITY_NR_FIXED_ARGS	6

/*
 * The options, in the canonical order the status prints them.  Each belongs
 * to at most one group of mutually exclusive options.  @has_arg: followed
 * by one word, counted in <#opts> (root_hash_sig_key_desc's is
 * v->sig_key_desc; the FEC options' are in v->fec).
 */
static const struct extverity_opt {
	const char *name;
	unsigned int flag;
	unsigned int excl;
	bool has_arg;
} extverity_opts[] = {
	{ "ignore_corruption", EXTVERITY_OPT_IGNORE_CORRUPTION,
	  EXTVERITY_CORRUPTION_MODES },
	{ "restart_on_corruption", EXTVERITY_OPT_RESTART_ON_CORRUPTION,
	  EXTVERITY_CORRUPTION_MODES },
	{ "panic_on_corruption", EXTVERITY_OPT_PANIC_ON_CORRUPTION,
	  EXTVERITY_CORRUPTION_MODES },
	{ "restart_on_error", EXTVERITY_OPT_RESTART_ON_ERROR,
	  EXTVERITY_ERROR_MODES },
	{ "panic_on_error", EXTVERITY_OPT_PANIC_ON_ERROR,
	  EXTVERITY_ERROR_MODES },
	{ "check_at_most_once", EXTVERITY_OPT_CHECK_AT_MOST_ONCE, 0 },
	{ "try_verify_in_tasklet", EXTVERITY_OPT_TRY_VERIFY_IN_BH, 0 },
	{ "root_hash_sig_key_desc", EXTVERITY_OPT_ROOT_HASH_SIG, 0, true },
	{ "use_fec_from_device", EXTVERITY_OPT_FEC_DEVICE, 0, true },
	{ "fec_roots", EXTVERITY_OPT_FEC_ROOTS, 0, true },
	{ "fec_blocks", EXTVERITY_OPT_FEC_BLOCKS, 0, true },
	{ "fec_start", EXTVERITY_OPT_FEC_START, 0, true },
};

/* Option words at most: every option once, each with its argument. */
#define EXTVERITY_MAX_OPT_WORDS	(2 * ARRAY_SIZE(extverity_opts))

/* The argument of option @flag, which has one, as the table line gave it. */
static int parse_opt_arg(struct extverity_target *v, unsigned int flag,
			 const char *arg, char **error)
{
	if (flag == EXTVERITY_OPT_ROOT_HASH_SIG)
		return extverity_sig_parse_opt(v, arg, error);
	return extverity_fec_parse_opt(v, flag, arg, error);
}

/* The argument of option @flag for the status, in @buf if it is a number. */
static const char *opt_arg(const struct extverity_target *v,
			   unsigned int flag, char *buf, size_t len)
{
	switch (flag) {
	case EXTVERITY_OPT_ROOT_HASH_SIG:
		return v->sig_key_desc;
	case EXTVERITY_OPT_FEC_DEVICE:
		return v->fec->dev->name;
	case EXTVERITY_OPT_FEC_ROOTS:
		snprintf(buf, len, "%u", v->fec->g.roots);
		break;
	case EXTVERITY_OPT_FEC_BLOCKS:
		snprintf(buf, len, "%llu", v->fec->g.blocks);
		break;
	case EXTVERITY_OPT_FEC_START:
		snprintf(buf, len, "%llu", v->fec->g.start);
		break;
	}
	return buf;
}

/* Parse "[<#opts> <opt>...]" in one pass; the line must end there. */
static int parse_opts(struct extverity_target *v, struct dm_arg_set *as,
		      char **error)
{
	unsigned int n, i;
	int err;

	if (!as->argc)
		return 0;
	/*
	 * Not dm_read_arg_group(): its sscanf("%u") reads the count modulo
	 * 2^32, so "4294967297" would pass for 1.
	 */
	if (kstrtouint(dm_shift_arg(as), 10, &n) ||
	    n > EXTVERITY_MAX_OPT_WORDS || n > as->argc) {
		*error = "Invalid number of options";
		return -EINVAL;
	}
	while (n--) {
		const char *name = dm_shift_arg(as);

		for (i = 0; i < ARRAY_SIZE(extverity_opts); i++)
			if (!strcmp(name, extverity_opts[i].name))
				break;
		if (i == ARRAY_SIZE(extverity_opts)) {
			*error = "Unknown option";
			return -EINVAL;
		}
		if (v->opts & extverity_opts[i].flag) {
			*error = "Duplicate option";
			return -EINVAL;
		}
		if (v->opts & extverity_opts[i].excl) {
			*error = "Conflicting options";
			return -EINVAL;
		}
		v->opts |= extverity_opts[i].flag;
		if (!extverity_opts[i].has_arg)
			continue;
		if (!n--) {
			*error = "Missing option argument";
			return -EINVAL;
		}
		err = parse_opt_arg(v, extverity_opts[i].flag, dm_shift_arg(as),
				    error);
		if (err)
			return err;
	}
	if (as->argc) {
		*error = "Unexpected argument after the options";
		return -EINVAL;
	}
	if ((v->opts & EXTVERITY_FEC_OPTS) &&
	    (v->opts & EXTVERITY_FEC_OPTS) != EXTVERITY_FEC_OPTS) {
		*error = "FEC needs use_fec_from_device, fec_roots, fec_blocks and fec_start";
		return -EINVAL;
	}
	return 0;
}

/* Parse the fixed arguments, up to the root digest. */
static int parse_fixed_args(struct extverity_target *v, char **argv,
			    char **error)
{
	struct dm_target *ti = v->ti;
	unsigned int version, alg;
	unsigned long long start;
	u32 ds;
	int err;

	if (kstrtouint(argv[0], 10, &version) ||
	    version != EXTVERITY_FORMAT_VERSION) {
		*error = "Invalid version";
		return -EINVAL;
	}
	err = dm_get_device(ti, argv[1], BLK_OPEN_READ, &v->data_dev);
	if (err) {
		*error = "Data device lookup failed";
		return err;
	}
	err = dm_get_device(ti, argv[2], BLK_OPEN_READ, &v->hash_dev);
	if (err) {
		*error = "Hash device lookup failed";
		return err;
	}
	if (kstrtoull(argv[3], 10, &start)) {
		*error = "Invalid hash start sector";
		return -EINVAL;
	}
	if (start >= bdev_nr_sectors(v->hash_dev->bdev)) {
		*error = "Hash start beyond the end of the hash device";
		return -EINVAL;
	}
	v->hash_start = start;
	alg = extverity_hash_by_name(argv[4]);
	if (!alg) {
		*error = "Unknown hash algorithm";
		return -EINVAL;
	}
	/* Checked against the superblock by extverity_load_manifest(). */
	v->p.hash_algorithm = alg;
	ds = extverity_digest_size(alg);
	if (strlen(argv[5]) != 2 * ds || hex2bin(v->root, argv[5], ds)) {
		*error = "Invalid root digest";
		return -EINVAL;
	}
	err = extverity_hash_init(v, extverity_hash_name(alg));
	if (err) {
		*error = "Cannot initialize the hash function";
		return err;
	}
	if (crypto_shash_digestsize(v->tfm) != ds) {
		*error = "Digest size mismatch";
		return -EINVAL;
	}
	return 0;
}

static void extverity_dtr(struct dm_target *ti)
{
	struct extverity_target *v = ti->private;

	if (v->spread_wq)
		destroy_workqueue(v->spread_wq);
	if (v->wq)
		destroy_workqueue(v->wq);
	free_percpu(v->wq_queued);
	free_percpu(v->stats);
	kfree(v->sig_key_desc);
	kvfree(v->verified_blocks);
	kfree(v->zero_block);
	extverity_fec_dtr(v);
	extverity_free_manifest(v);
	extverity_hash_exit(v);
	if (v->hash_dev)
		dm_put_device(ti, v->hash_dev);
	if (v->data_dev)
		dm_put_device(ti, v->data_dev);
	kfree(v);
}

/*
 * Parse, then authenticate and load, then allocate the read path's state.
 * Every failure sets a static ti->error and unwinds through extverity_dtr(),
 * which takes a half-built target.
 */
static int extverity_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	struct dm_arg_set as;
	struct extverity_target *v;
	int err;

	v = kzalloc_obj(*v, GFP_KERNEL);
	if (!v) {
		ti->error = "Cannot allocate the target";
		return -ENOMEM;
	}
	ti->private = v;
	v->ti = ti;
	spin_lock_init(&v->corrupt_lock);

	err = -EINVAL;
	if (argc < EXTVERITY_NR_FIXED_ARGS) {
		ti->error = "Not enough arguments";
		goto bad;
	}
	if (dm_table_get_mode(ti->table) & BLK_OPEN_WRITE) {
		ti->error = "Device must be readonly";
		goto bad;
	}
	err = parse_fixed_args(v, argv, &ti->error);
	if (err)
		goto bad;
	as.argc = argc - EXTVERITY_NR_FIXED_ARGS;
	as.argv = argv + EXTVERITY_NR_FIXED_ARGS;
	err = parse_opts(v, &as, &ti->error);
	if (err)
		goto bad;
	/* Before the first read of the hash device. */
	err = extverity_sig_check(v, &ti->error);
	if (err)
		goto bad;

	/* Before the manifest: FEC may correct it, and counts that. */
	v->stats = alloc_percpu(struct extverity_stats);
	if (!v->stats) {
		ti->error = "Cannot allocate memory";
		err = -ENOMEM;
		goto bad;
	}
	err = extverity_load_manifest(v, &ti->error);
	if (err)
		goto bad;
	err = extverity_fec_ctr(v, &ti->error);
	if (err)
		goto bad;

	err = -ENOMEM;
	ti->error = "Cannot allocate memory";
	v->zero_block = kzalloc(v->p.block_size, GFP_KERNEL);
	if (!v->zero_block)
		goto bad;
	err = extverity_hash_prepare_salt(v);
	if (err) {
		ti->error = "Cannot hash the salt";
		goto bad;
	}
	if ((v->opts & EXTVERITY_OPT_CHECK_AT_MOST_ONCE) &&
	    !extverity_at_most_once_fits(v->p.data_blocks)) {
		ti->error = "Device too large for check_at_most_once";
		err = -EINVAL;
		goto bad;
	}
	err = -ENOMEM;
	if (v->opts & EXTVERITY_OPT_CHECK_AT_MOST_ONCE) {
		v->verified_blocks = kvcalloc(BITS_TO_LONGS(v->p.data_blocks),
					      sizeof(unsigned long),
					      GFP_KERNEL | __GFP_NOWARN |
					      __GFP_ACCOUNT);
		if (!v->verified_blocks)
			goto bad;
	}
	v->wq_queued = alloc_percpu(atomic_t);
	if (!v->wq_queued)
		goto bad;
	/*
	 * Both high priority, as dm-verity since 6.3, and WQ_MEM_RECLAIM
	 * because reads may be needed to reclaim memory.  wq is per-CPU:
	 * a bio is verified on the CPU that completed it, where its data is
	 * cache-hot.  spread_wq is unbound, for the bios that complete, and
	 * the hash prefetch requests made, while that CPU has others to
	 * verify (extverity_end_io(), extverity_submit_prefetch()).
	 */
	v->wq = alloc_workqueue("kextverityd",
				WQ_PERCPU | WQ_HIGHPRI | WQ_MEM_RECLAIM,
				num_online_cpus());
	v->spread_wq = alloc_workqueue("kextverityd_spread",
				       WQ_UNBOUND | WQ_HIGHPRI | WQ_MEM_RECLAIM,
				       num_online_cpus());
	if (!v->wq || !v->spread_wq) {
		ti->error = "Cannot allocate workqueue";
		goto bad;
	}
	/* Two parts: extverity_io_part(). */
	ti->per_io_data_size =
		2 * extverity_per_io_data_size(crypto_shash_descsize(v->tfm));
	ti->error = NULL;
	return 0;
bad:
	extverity_dtr(ti);
	ti->private = NULL;
	return err;
}

static int extverity_map(struct dm_target *ti, struct bio *bio)
{
	struct extverity_target *v = ti->private;
	unsigned int shift = v->p.log_blocksize - SECTOR_SHIFT;
	struct extverity_io *io;
	unsigned int n_blocks;
	u64 block;

	if (bio_data_dir(bio) == WRITE)
		return DM_MAPIO_KILL;
	bio_set_dev(bio, v->data_dev->bdev);
	bio->bi_iter.bi_sector = dm_target_offset(ti, bio->bi_iter.bi_sector);
	if ((bio->bi_iter.bi_sector | bio_sectors(bio)) &
	    ((1U << shift) - 1)) {
		DMERR_LIMIT("unaligned io");
		return DM_MAPIO_KILL;
	}
	if (bio_end_sector(bio) > ti->len) {
		DMERR_LIMIT("io out of range");
		return DM_MAPIO_KILL;
	}

	block = bio->bi_iter.bi_sector >> shift;
	n_blocks = bio->bi_iter.bi_size >> v->p.log_blocksize;
	if (extverity_map_zero(v, bio, block, &n_blocks))
		return DM_MAPIO_SUBMITTED;

	io = dm_per_bio_data(bio, ti->per_io_data_size);
	io->v = v;
	io->orig_bi_end_io = bio->bi_end_io;
	io->block = block;
	io->n_blocks = n_blocks;
	io->iter = bio->bi_iter;
	io->done = 0;
	io->ioprio = bio->bi_ioprio;
	io->in_bh = false;
	io->read_failed = false;
	bio->bi_end_io = extverity_end_io;
	bio->bi_private = io;
	extverity_submit_prefetch(v, io->block, io->n_blocks, io->ioprio);
	submit_bio_noacct(bio);
	return DM_MAPIO_SUBMITTED;
}

/*
 * No verification or prefetch I/O may reach the devices once suspended: a
 * table swap or the devices' removal may follow.  Flushing the workqueues
 * ends verification and prefetch requests, but dm_bufio_prefetch() only
 * submits its reads: the reset waits for them and empties the caches
 * (dm-verity does the same).  A NO_SLEEP client's reset does not wait
 * (try_verify_in_tasklet): there the prefetch request itself waits for its
 * reads, so the flush does.  The verified flags and top generations go
 * with the buffers: after resume, hash blocks are read and checked again.
 */
static void extverity_postsuspend(struct dm_target *ti)
{
	struct extverity_target *v = ti->private;

	flush_workqueue(v->wq);
	flush_workqueue(v->spread_wq);
	dm_bufio_client_reset(v->bufio);
	dm_bufio_client_reset(v->data_bufio);
}

static void emit_ima(struct extverity_target *v, char *result,
		     unsigned int maxlen, unsigned int sz)
{
	unsigned int i;

	DMEMIT_TARGET_NAME_VERSION(v->ti->type);
	DMEMIT(",hash_failed=%c,verity_version=%u", v->corrupted ? 'C' : 'V',
	       EXTVERITY_FORMAT_VERSION);
	DMEMIT(",data_device_name=%s,hash_device_name=%s", v->data_dev->name,
	       v->hash_dev->name);
	DMEMIT(",verity_algorithm=%s,root_digest=%*phN",
	       extverity_hash_name(v->p.hash_algorithm), v->p.digest_size,
	       v->root);
	if (v->p.salt_size)
		DMEMIT(",salt=%*phN", v->p.salt_size, v->salt);
	else
		DMEMIT(",salt=-");
	for (i = 0; i < ARRAY_SIZE(extverity_opts); i++)
		if (!extverity_opts[i].has_arg)
			DMEMIT(",%s=%c", extverity_opts[i].name,
			       v->opts & extverity_opts[i].flag ? 'y' : 'n');
	/* Only a table whose signature was verified loads. */
	if (v->sig_key_desc)
		DMEMIT(",root_hash_sig_key_desc=%s", v->sig_key_desc);
	if (v->fec)
		DMEMIT(",use_fec_from_device=%s,fec_roots=%u,fec_blocks=%llu,fec_start=%llu",
		       v->fec->dev->name, v->fec->g.roots, v->fec->g.blocks,
		       v->fec->g.start);
	DMEMIT(";");
}

static void extverity_status(struct dm_target *ti, status_type_t type,
			     unsigned int status_flags, char *result,
			     unsigned int maxlen)
{
	struct extverity_target *v = ti->private;
	struct extverity_stats sum = { 0 };
	unsigned int sz = 0, i, words;
	char buf[24];
	int cpu;

	switch (type) {
	case STATUSTYPE_INFO:
		for_each_possible_cpu(cpu) {
			const struct extverity_stats *s =
				per_cpu_ptr(v->stats, cpu);

			sum.verified += READ_ONCE(s->verified);
			sum.corrupt += READ_ONCE(s->corrupt);
			sum.zero += READ_ONCE(s->zero);
			sum.corrected += READ_ONCE(s->corrected);
			sum.paired += READ_ONCE(s->paired);
			sum.split += READ_ONCE(s->split);
		}
		DMEMIT("%c %llu %llu %llu %llu %llu %llu",
		       READ_ONCE(v->corrupted) ? 'C' : 'V', sum.verified,
		       sum.corrupt, sum.zero, sum.corrected, sum.paired,
		       sum.split);
		break;
	case STATUSTYPE_TABLE:
		DMEMIT("%u %s %s %llu %s %*phN", EXTVERITY_FORMAT_VERSION,
		       v->data_dev->name, v->hash_dev->name,
		       (unsigned long long)v->hash_start,
		       extverity_hash_name(v->p.hash_algorithm),
		       v->p.digest_size, v->root);
		words = 0;
		for (i = 0; i < ARRAY_SIZE(extverity_opts); i++)
			if (v->opts & extverity_opts[i].flag)
				words += 1 + extverity_opts[i].has_arg;
		if (words)
			DMEMIT(" %u", words);
		for (i = 0; i < ARRAY_SIZE(extverity_opts); i++) {
			if (!(v->opts & extverity_opts[i].flag))
				continue;
			DMEMIT(" %s", extverity_opts[i].name);
			if (extverity_opts[i].has_arg)
				DMEMIT(" %s", opt_arg(v, extverity_opts[i].flag,
						      buf, sizeof(buf)));
		}
		break;
	case STATUSTYPE_IMA:
		emit_ima(v, result, maxlen, sz);
		break;
	}
}

static int extverity_iterate_devices(struct dm_target *ti,
				     iterate_devices_callout_fn fn, void *data)
{
	struct extverity_target *v = ti->private;

	return fn(ti, v->data_dev, 0, ti->len, data);
}

/*
 * Reads must cover whole blocks: make the block size the logical one.  And
 * as dm-verity and dm-crypt do, direct I/O buffers must be aligned to it,
 * not just to 512 bytes, so that no data block straddles two pages.
 */
static void extverity_io_hints(struct dm_target *ti,
			       struct queue_limits *limits)
{
	struct extverity_target *v = ti->private;

	if (limits->logical_block_size < v->p.block_size)
		limits->logical_block_size = v->p.block_size;
	if (limits->physical_block_size < v->p.block_size)
		limits->physical_block_size = v->p.block_size;
	limits->io_min = max(limits->logical_block_size,
			     limits->physical_block_size);
	limits->dma_alignment = max(limits->dma_alignment,
				    limits->logical_block_size - 1);
}

static struct target_type extverity_target = {
	.name		= EXTVERITY_TARGET_NAME,
	.features	= DM_TARGET_IMMUTABLE,
	.version	= {1, 6, 0},
	.module		= THIS_MODULE,
	.ctr		= extverity_ctr,
	.dtr		= extverity_dtr,
	.map		= extverity_map,
	.postsuspend	= extverity_postsuspend,
	.status		= extverity_status,
	.message	= extverity_message,
	.iterate_devices = extverity_iterate_devices,
	.io_hints	= extverity_io_hints,
};

static int __init dm_extverity_init(void)
{
	int err = dm_register_target(&extverity_target);

	if (err < 0)
		DMERR("register failed %d", err);
	return err;
}

static void __exit dm_extverity_exit(void)
{
	dm_unregister_target(&extverity_target);
}

module_init(dm_extverity_init);
module_exit(dm_extverity_exit);

MODULE_AUTHOR("extverity developers");
MODULE_DESCRIPTION(DM_NAME " target verifying reads against per-file fs-verity trees");
MODULE_LICENSE("GPL");
