/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-extverity: private definitions shared by the files of the target.
 *
 * The target verifies every read of a filesystem image against per-file
 * fs-verity Merkle trees described by an authenticated manifest (see
 * docs/format.md and docs/table.md).  The files split by concern:
 *
 *	dm-extverity-target.c	table line, device-mapper hooks, status
 *	dm-extverity-manifest.c	reading, authenticating and loading the manifest
 *	dm-extverity-hash.c	the only user of the crypto API
 *	dm-extverity-verify.c	the read path: tree walk and corruption handling
 *	dm-extverity-message.c	target messages: measure, corrupted
 *	dm-extverity-sig.c	signed root digests (optional)
 *	dm-extverity-fec.c	forward error correction (optional)
 *	dm-extverity-format.c	on-disk rules, shared with the userspace tool
 */
#ifndef DM_EXTVERITY_H
#define DM_EXTVERITY_H

#include <linux/atomic.h>
#include <linux/bio.h>
#include <linux/device-mapper.h>
#include <linux/dm-bufio.h>
#include <linux/mempool.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <crypto/hash.h>

#include "dm-extverity-compat.h"
#include "dm-extverity-format.h"

#define DM_MSG_PREFIX			"extverity"

/* Allocations that only speed things up (prefetch): fail fast, quietly. */
#define EXTVERITY_GFP_HINT	(GFP_NOIO | __GFP_NORETRY | __GFP_NOMEMALLOC | \
				 __GFP_NOWARN)

/* Table line options, one bit each; see extverity_opts[]. */
#define EXTVERITY_OPT_IGNORE_CORRUPTION		BIT(0)
#define EXTVERITY_OPT_RESTART_ON_CORRUPTION	BIT(1)
#define EXTVERITY_OPT_PANIC_ON_CORRUPTION	BIT(2)
#define EXTVERITY_OPT_RESTART_ON_ERROR		BIT(3)
#define EXTVERITY_OPT_PANIC_ON_ERROR		BIT(4)
#define EXTVERITY_OPT_CHECK_AT_MOST_ONCE	BIT(5)
#define EXTVERITY_OPT_ROOT_HASH_SIG		BIT(6)
#define EXTVERITY_OPT_TRY_VERIFY_IN_BH		BIT(7)
#define EXTVERITY_OPT_FEC_DEVICE		BIT(8)
#define EXTVERITY_OPT_FEC_ROOTS			BIT(9)
#define EXTVERITY_OPT_FEC_BLOCKS		BIT(10)
#define EXTVERITY_OPT_FEC_START			BIT(11)

/* Forward error correction takes all four options or none. */
#define EXTVERITY_FEC_OPTS	(EXTVERITY_OPT_FEC_DEVICE | \
				 EXTVERITY_OPT_FEC_ROOTS | \
				 EXTVERITY_OPT_FEC_BLOCKS | \
				 EXTVERITY_OPT_FEC_START)

#define EXTVERITY_CORRUPTION_MODES	(EXTVERITY_OPT_IGNORE_CORRUPTION | \
					 EXTVERITY_OPT_RESTART_ON_CORRUPTION | \
					 EXTVERITY_OPT_PANIC_ON_CORRUPTION)
#define EXTVERITY_ERROR_MODES		(EXTVERITY_OPT_RESTART_ON_ERROR | \
					 EXTVERITY_OPT_PANIC_ON_ERROR)

/*
 * struct extverity_ext - one extent map rule, in CPU byte order
 *
 * Same fields and size as struct extverity_extent: the section is read
 * straight into an array of these and converted in place, so the extent map
 * costs 32 bytes of kernel memory per extent and nothing transient.
 */
struct extverity_ext {
	u64 start;	/* first data block */
	u64 leaf;	/* leaf index of @start in the tree */
	u32 count;	/* blocks */
	u32 tree;	/* tree index or EXTVERITY_TREE_ZERO */
	u64 inode;	/* for reports; 0 for metadata and zero ranges */
};

/*
 * struct extverity_mtree - one tree, in CPU byte order (32 bytes)
 *
 * The geometry (levels, level offsets) is recomputed from @data_size on use
 * by extverity_tree_geometry(): a loop of at most EXTVERITY_MAX_LEVELS shifts,
 * far cheaper than the block hash it precedes, where storing it would triple
 * the memory of every tree.  The root digest lives in extverity_target.roots.
 */
struct extverity_mtree {
	u64 data_size;	/* bytes the tree covers */
	u64 top;	/* byte offset of the packed top block in the hash area */
	u64 levels;	/* first hash-area block of the lower levels */
	/*
	 * dm-bufio generation (struct extverity_buf_aux.gen) of the TOPS
	 * buffer this tree's top was last checked against its root in; 0 for
	 * never.  Written with WRITE_ONCE while the buffer is held, so a
	 * re-read of the block gets a new generation and is checked again.
	 */
	u64 top_gen;
};

/*
 * Files the `corrupted` message lists: a fixed array in the target, so that
 * recording a corrupt block never allocates, and a result of at most 4 KiB
 * (64 lines of at most 63 bytes, and a `more` line).
 */
#define EXTVERITY_CORRUPT_FILES_MAX	64

/*
 * struct extverity_corrupt_file - one file in which corruption was seen
 * @inode: the file's inode; 0 for metadata (the residual tree)
 * @first_offset: lowest bad byte offset seen in the file (for metadata:
 *	on the data device)
 * @blocks: bad blocks seen in it, each detection counted
 */
struct extverity_corrupt_file {
	u64 inode;
	u64 first_offset;
	u64 blocks;
};

/* Per-CPU counters, summed for the status line. */
struct extverity_stats {
	u64 verified;	/* data blocks hashed and found intact */
	u64 corrupt;	/* data blocks that failed verification */
	u64 zero;	/* blocks of zero ranges returned as zeros */
	u64 corrected;	/* data and hash blocks corrected by FEC */
	u64 paired;	/* data blocks hashed two at a time */
	u64 split;	/* reads verified in two halves (split_io()) */
};

/**
 * struct extverity_fec_state - forward error correction (use_fec_from_device)
 * @dev: the FEC device
 * @bufio: its parity blocks
 * @g: the code and where its parity is; from the table line, then checked
 *	equal to the hash area's authenticated FEC record
 * @rs_pool: struct rs_control, one per decode in flight: decode_rs8()
 *	keeps its work in it
 * @cw_pool: buffers of EXTVERITY_FEC_BUF_SIZE bytes, codewords
 * @block_pool: corrected blocks
 *
 * The pools are sized at table load, so that a correction waits for a
 * buffer rather than fails under memory pressure.
 */
struct extverity_fec_state {
	struct dm_dev *dev;
	struct dm_bufio_client *bufio;
	struct extverity_fec_geometry g;
	mempool_t rs_pool;
	mempool_t cw_pool;
	mempool_t block_pool;
};

/**
 * struct extverity_target - one extverity table target
 * @ti: the dm target
 * @data_dev: device holding the data image
 * @hash_dev: device holding the hash area
 * @hash_start: sector of the hash area on @hash_dev
 * @opts: EXTVERITY_OPT_* bits from the table line
 * @root: root digest from the table line (hash of the superblock)
 * @sig_key_desc: with root_hash_sig_key_desc, the description of the user
 *	key holding the root digest's signature
 * @p: the validated superblock
 * @salt: the salt from the superblock
 * @tfm: the hash transform (sha256 or sha512)
 * @salted_state: exported hash state after the padded salt; importing it
 *	starts a block hash without re-hashing the salt
 * @salted_sha256: with SHA-256, on a kernel whose SHA-256 library hashes
 *	two blocks at once, the library's context after the padded salt,
 *	which tree and data blocks are then hashed from; else NULL
 * @zero_block: @p.block_size zero bytes, to pad packed top blocks
 * @bufio: hash-area blocks, cached; buffers carry struct extverity_buf_aux
 * @data_bufio: data blocks re-read after a mismatch (never kept cached)
 * @ext: extent map, @nr_ext records sorted by start, partitioning the device
 * @nr_ext: number of extents
 * @trees: tree table, @nr_trees records
 * @roots: @nr_trees root digests of @p.digest_size bytes each
 * @nr_trees: number of trees
 * @inodes: inode index (with EXTVERITY_COMPAT_INODE_INDEX), @nr_inodes
 *	inode numbers of regular files, strictly ascending
 * @inode_trees: for each of @inodes, its index into @trees (never 0)
 * @nr_inodes: entries of the inode index
 * @top_digests: with EXTVERITY_COMPAT_TOP_DIGESTS, the salted digest of
 *	each block of the TOPS section, @p.digest_size bytes each; else NULL
 * @verified_blocks: with check_at_most_once, a bit per data block that has
 *	been verified (atomic set_bit/test_bit, no lock: a lost race only
 *	verifies a block twice)
 * @wq: verification workqueue, per-CPU
 * @spread_wq: verification workqueue, unbound
 * @wq_queued: per CPU, the bios that CPU queued on @wq and that are not
 *	verified yet (extverity_end_io())
 * @stats: per-CPU counters
 * @uevents: corruption uevents sent, capped at EXTVERITY_UEVENT_MAX
 * @corrupted: set once any corruption has been seen (status 'C')
 * @corrupt_lock: protects the three fields below
 * @nr_corrupt_files: entries of @corrupt_files in use, in order of first
 *	detection
 * @corrupt_overflow: bad blocks seen in files beyond the first
 *	EXTVERITY_CORRUPT_FILES_MAX
 * @corrupt_files: the files the `corrupted` message lists
 * @fec: forward error correction, or NULL without its options
 */
struct extverity_target {
	struct dm_target *ti;
	struct dm_dev *data_dev;
	struct dm_dev *hash_dev;
	sector_t hash_start;
	unsigned int opts;
	u8 root[EXTVERITY_MAX_DIGEST_SIZE];
	char *sig_key_desc;
	struct extverity_params p;
	u8 salt[EXTVERITY_MAX_SALT_SIZE];

	struct crypto_shash *tfm;
	u8 *salted_state;
	struct sha256_ctx *salted_sha256;
	u8 *zero_block;

	struct dm_bufio_client *bufio;
	struct dm_bufio_client *data_bufio;
	struct extverity_ext *ext;
	u64 nr_ext;
	struct extverity_mtree *trees;
	u8 *roots;
	u32 nr_trees;
	u64 *inodes;
	u32 *inode_trees;
	u32 nr_inodes;
	u8 *top_digests;
	unsigned long *verified_blocks;

	/* Verification: see extverity_end_io() for which queue a bio takes. */
	struct workqueue_struct *wq;
	struct workqueue_struct *spread_wq;
	atomic_t __percpu *wq_queued;
	struct extverity_stats __percpu *stats;
	atomic_t uevents;
	bool corrupted;

	spinlock_t corrupt_lock;	/* for the three fields below */
	unsigned int nr_corrupt_files;
	u64 corrupt_overflow;
	struct extverity_corrupt_file corrupt_files[EXTVERITY_CORRUPT_FILES_MAX];
	struct extverity_fec_state *fec;
};

/*
 * struct extverity_io - per-bio data (ti->per_io_data_size)
 *
 * Followed by the shash descriptor used to hash this bio's blocks (its size
 * depends on the algorithm), so the read path never allocates.  The per-bio
 * data holds two of these, each with its descriptor: the second verifies
 * the second half of a large bio on another CPU (extverity_io_part()).
 *
 * Verification can stop and resume: an attempt in the completion context
 * (try_verify_in_tasklet) that needs what it may not do there (read the
 * hash device, recheck or report a block) hands the bio to the worker,
 * which goes on from @done, the blocks before being verified and counted
 * once.
 */
struct extverity_io {
	struct extverity_target *v;
	bio_end_io_t *orig_bi_end_io;
	struct bvec_iter iter;	/* the bio's data from block @done on */
	u64 block;		/* first data block */
	unsigned int n_blocks;
	unsigned int done;	/* blocks verified so far */
	unsigned short ioprio;	/* the bio's, for the hash reads it causes */
	bool in_bh;		/* in the completion context: may not sleep */
	bool read_failed;	/* the data device failed the read: FEC it */
	atomic_t *wq_queued;	/* the count it is in while on wq, or NULL */
	struct work_struct work;	/* the worker's */
	struct work_struct bh_work;	/* the attempt queued to system_bh_wq */
	/* Of the worker's verification, split or not: */
	struct extverity_io *whole;	/* in a part: the first io */
	atomic_t parts;		/* in the first: parts still verifying */
	bool failed;		/* in the first: a part failed */
};

static inline struct shash_desc *extverity_io_desc(struct extverity_io *io)
{
	return (struct shash_desc *)(io + 1);
}

/* The second part of the bio's per-bio data, for a split verification. */
static inline struct extverity_io *extverity_io_part(struct extverity_io *io)
{
	return (void *)io + io->v->ti->per_io_data_size / 2;
}

/*
 * Three rules of the target whose failures only show on inputs a test VM
 * cannot make (an 8 TiB image, a hash driver with an odd descriptor size,
 * 2^31 corrupt reads), kept here as inline helpers so that the KUnit suite
 * (dm-extverity-kunit.c) calls the very code the target runs.
 */

/**
 * extverity_at_most_once_fits() - can check_at_most_once cover the device
 * @data_blocks: number of data blocks of the device
 *
 * The check_at_most_once bitmap is indexed by data block number, but the
 * generic atomic bitops (asm-generic, used by arm64 and others) take an
 * unsigned int index while test_bit() takes an unsigned long: past 2^32
 * blocks, verifying block 2^32 + 5 would set the bit of block 5, which would
 * then be returned unverified.  dm-verity refuses the same sizes ("the
 * bitset can only handle INT_MAX blocks").
 *
 * Return: true when every block number of the device is at most INT_MAX.
 */
static inline bool extverity_at_most_once_fits(u64 data_blocks)
{
	return data_blocks <= INT_MAX;
}

/**
 * extverity_per_io_data_size() - one part of ti->per_io_data_size
 * @descsize: crypto_shash_descsize() of the target's transform
 *
 * struct extverity_io is followed by the bio's shash descriptor, whose size
 * the hash driver chooses; the per-bio data holds two such parts
 * (extverity_io_part()).  dm core places the per-bio data right before
 * its own per-bio structure, at that structure's address minus its size,
 * so a size that is not a multiple of the alignment of struct extverity_io
 * would misalign it (and the second part with it).  On x86 every SHA-2
 * driver's descriptor size happens to be a multiple of 8; nothing promises
 * that elsewhere.  dm-verity rounds its size up the same way.
 *
 * Return: the size of struct extverity_io, the descriptor and its context,
 * rounded up to the alignment of struct extverity_io.
 */
static inline unsigned int extverity_per_io_data_size(unsigned int descsize)
{
	return ALIGN(sizeof(struct extverity_io) + sizeof(struct shash_desc) +
		     descsize, __alignof__(struct extverity_io));
}

/*
 * struct extverity_buf_aux - state attached to every dm-bufio buffer
 * @gen: unique number given when the buffer is (re)filled from disk
 * @verified: the block matched its authenticated digest: a LEVELS block the
 *	one in its parent, a TOPS block its top digest
 * @from_fec: the hash device could not read the block: its contents were
 *	decoded by FEC, not yet checked (counted as a correction once they
 *	are)
 * @top_digest_failed: bit 0 is set once a TOPS block did not match its top
 *	digest, so that the tops in it are checked one by one without the
 *	whole block being hashed again for each, and the mismatch is logged
 *	once (test_and_set_bit(): by the first of racing verifiers)
 *
 * They are written without a lock while the buffer is held: a block's
 * contents change while it is held only when FEC puts a bad block right
 * (fec_correct_hash()), and a racing verifier can only write the same
 * value, so the worst case is hashing or decoding twice.  A TOPS block
 * FEC puts right keeps @top_digest_failed: its tops are then checked one
 * by one, which costs hashes but never skips a check.
 */
struct extverity_buf_aux {
	u64 gen;
	bool verified;
	bool from_fec;
	unsigned long top_digest_failed;
};

/**
 * extverity_uevent_take() - count one corruption uevent against the cap
 * @sent: the device's count of corruption uevents sent
 *
 * At most EXTVERITY_UEVENT_MAX corruption uevents are sent per device, so
 * that a disk full of bad blocks cannot flood udev.  The count saturates at
 * the maximum: incremented on every corrupt read, an atomic_t would wrap to
 * negative after 2^31 of them and the cap would stop applying.
 *
 * Return: the number of this uevent, 1 to EXTVERITY_UEVENT_MAX, or 0 when
 * the maximum has been sent already and this one must not be.
 */
static inline int extverity_uevent_take(atomic_t *sent)
{
	int n = atomic_fetch_add_unless(sent, 1, EXTVERITY_UEVENT_MAX);

	return n < EXTVERITY_UEVENT_MAX ? n + 1 : 0;
}

/* dm-extverity-hash.c */
int extverity_hash_init(struct extverity_target *v, const char *alg_name);
void extverity_hash_exit(struct extverity_target *v);
int extverity_hash_prepare_salt(struct extverity_target *v);
int extverity_hash_plain(struct extverity_target *v, const void *data,
			 size_t len, u8 *out);
int extverity_hash_block(struct extverity_target *v, struct shash_desc *desc,
			 const void *data, u8 *out);
int extverity_hash_top(struct extverity_target *v, struct shash_desc *desc,
		       const void *data, u32 len, u8 *out);
int extverity_hash_bio_block(struct extverity_target *v,
			     struct shash_desc *desc, struct bio *bio,
			     struct bvec_iter *iter, u8 *out);

#ifdef CONFIG_DM_EXTVERITY_SHA256_LIB
/* dm-extverity-sha256.c */
int extverity_sha256_prepare_salt(struct extverity_target *v,
				  const u8 *padded);
void extverity_sha256_exit(struct extverity_target *v);
void extverity_sha256_block(const struct extverity_target *v, const u8 *data,
			    u32 len, u8 *out);
void extverity_sha256_bio_block(const struct extverity_target *v,
				struct bio *bio, struct bvec_iter *iter, u8 *out);
void extverity_sha256_2blocks(const struct extverity_target *v,
			      const u8 *data1, const u8 *data2, u8 *out1,
			      u8 *out2);
#else
/*
 * Without the library's two-block hashing, SHA-256 goes through the crypto
 * API like SHA-512: @v->salted_sha256 stays NULL, and nothing calls the
 * hashing functions below.
 */
static inline int extverity_sha256_prepare_salt(struct extverity_target *v,
						const u8 *padded)
{
	return 0;
}

static inline void extverity_sha256_exit(struct extverity_target *v)
{
}

static inline void extverity_sha256_block(const struct extverity_target *v,
					  const u8 *data, u32 len, u8 *out)
{
}

static inline void extverity_sha256_bio_block(const struct extverity_target *v,
					      struct bio *bio,
					      struct bvec_iter *iter, u8 *out)
{
}

static inline void extverity_sha256_2blocks(const struct extverity_target *v,
					    const u8 *data1, const u8 *data2,
					    u8 *out1, u8 *out2)
{
}
#endif

/* dm-extverity-manifest.c */
int extverity_load_manifest(struct extverity_target *v, char **error);
void extverity_free_manifest(struct extverity_target *v);

/* dm-extverity-verify.c */
void extverity_bufio_alloc(struct dm_buffer *b);
void extverity_end_io(struct bio *bio);
bool extverity_map_zero(struct extverity_target *v, struct bio *bio,
			u64 block, unsigned int *n_blocks);
void extverity_submit_prefetch(struct extverity_target *v, u64 block,
			       unsigned int n_blocks, unsigned short ioprio);

/* dm-extverity-message.c */
int extverity_message(struct dm_target *ti, unsigned int argc, char **argv,
		      char *result, unsigned int maxlen);
void extverity_record_corruption(struct extverity_target *v, u64 inode,
				 u64 offset);

/* dm-extverity-sig.c */
#ifdef CONFIG_SYSTEM_DATA_VERIFICATION
/*
 * Take the argument of root_hash_sig_key_desc into @v->sig_key_desc; 0, or
 * -errno with *@error set.
 */
int extverity_sig_parse_opt(struct extverity_target *v, const char *desc,
			    char **error);
/**
 * extverity_sig_check() - check the root digest's signature
 * @v: the target, with its root digest and algorithm parsed
 * @error: set to the reason on failure
 *
 * Must run before anything is read from the hash device.  Without
 * root_hash_sig_key_desc, succeeds unless the module parameter
 * require_signatures is set.
 *
 * Return: 0, or -errno (-ENOKEY: no signature or key; -EKEYREJECTED: the
 * signature does not match the digest).
 */
int extverity_sig_check(struct extverity_target *v, char **error);
#else
static inline int extverity_sig_parse_opt(struct extverity_target *v,
					  const char *desc, char **error)
{
	*error = "Root digest signatures need CONFIG_SYSTEM_DATA_VERIFICATION";
	return -EOPNOTSUPP;
}

static inline int extverity_sig_check(struct extverity_target *v,
				      char **error)
{
	return 0;
}
#endif

/* dm-extverity-fec.c */
#ifdef CONFIG_DM_EXTVERITY_FEC
/*
 * Take the argument of FEC option @flag (EXTVERITY_OPT_FEC_*); 0, or
 * -errno with *@error set.
 */
int extverity_fec_parse_opt(struct extverity_target *v, unsigned int flag,
			    const char *arg, char **error);
int extverity_fec_check_record(struct extverity_target *v,
			       const struct extverity_fec *rec, char **error);
int extverity_fec_prepare(struct extverity_target *v, char **error);
void extverity_fec_unprepare(struct extverity_target *v);
int extverity_fec_ctr(struct extverity_target *v, char **error);
void extverity_fec_dtr(struct extverity_target *v);
int extverity_fec_decode(struct extverity_target *v, unsigned short ioprio,
			 u64 index, u8 *out);
#else
static inline int extverity_fec_parse_opt(struct extverity_target *v,
					  unsigned int flag, const char *arg,
					  char **error)
{
	*error = "FEC needs CONFIG_DM_EXTVERITY_FEC";
	return -EOPNOTSUPP;
}

static inline int extverity_fec_check_record(struct extverity_target *v,
					     const struct extverity_fec *rec,
					     char **error)
{
	return -EOPNOTSUPP;
}

static inline int extverity_fec_prepare(struct extverity_target *v,
					char **error)
{
	return 0;
}

static inline void extverity_fec_unprepare(struct extverity_target *v)
{
}

static inline int extverity_fec_ctr(struct extverity_target *v, char **error)
{
	return 0;
}

static inline void extverity_fec_dtr(struct extverity_target *v)
{
}

static inline int extverity_fec_decode(struct extverity_target *v,
				       unsigned short ioprio, u64 index,
				       u8 *out)
{
	return -EOPNOTSUPP;
}
#endif

#endif /* DM_EXTVERITY_H */
