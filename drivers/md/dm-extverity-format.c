// SPDX-License-Identifier: GPL-2.0
/*
 * Geometry and validation of the extverity on-disk format, shared by the
 * kernel target and the userspace tool.  See dm-extverity-format.h.
 *
 * Every check here runs on data that has already been authenticated against
 * the root digest: it does not defend against a forger (the hash does), but
 * against a well-signed yet inconsistent manifest, so that no field can make
 * the reader index out of bounds, overflow, or allocate without limit.
 */
#include "dm-extverity-format.h"

u32 extverity_digest_size(unsigned int hash_algorithm)
{
	switch (hash_algorithm) {
	case EXTVERITY_HASH_SHA256:
		return 32;
	case EXTVERITY_HASH_SHA512:
		return 64;
	}
	return 0;
}

const char *extverity_hash_name(unsigned int hash_algorithm)
{
	switch (hash_algorithm) {
	case EXTVERITY_HASH_SHA256:
		return "sha256";
	case EXTVERITY_HASH_SHA512:
		return "sha512";
	}
	return NULL;
}

unsigned int extverity_hash_by_name(const char *name)
{
	unsigned int alg;

	for (alg = EXTVERITY_HASH_SHA256; alg <= EXTVERITY_HASH_SHA512; alg++)
		if (!strcmp(name, extverity_hash_name(alg)))
			return alg;
	return 0;
}

static u32 ilog2_u32(u32 v)
{
	u32 r = 0;

	while (v >>= 1)
		r++;
	return r;
}

/**
 * extverity_init_params() - the parameters an algorithm and block size imply
 * @p: its hash algorithm, sizes and tree fan-out are set, the rest left alone
 * @hash_algorithm: a known EXTVERITY_HASH_*
 * @log_blocksize: log2 of the block size, within the format's limits
 *
 * The one place the fan-out of a tree is derived from the digest size, for
 * the superblock parser and for the tool, which writes the superblock.
 */
void extverity_init_params(struct extverity_params *p,
			   unsigned int hash_algorithm, u8 log_blocksize)
{
	p->hash_algorithm = hash_algorithm;
	p->digest_size = extverity_digest_size(hash_algorithm);
	p->log_blocksize = log_blocksize;
	p->block_size = 1U << log_blocksize;
	p->log_digests_per_block = log_blocksize - ilog2_u32(p->digest_size);
	p->tree_entry_size = sizeof(struct extverity_tree) + p->digest_size;
}

/* Expected record size of a section, or 0 when its length is free-form. */
static u32 section_entry_size(const struct extverity_params *p,
			      unsigned int id)
{
	switch (id) {
	case EXTVERITY_SECT_EXTENTS:
		return sizeof(struct extverity_extent);
	case EXTVERITY_SECT_TREES:
		return p->tree_entry_size;
	case EXTVERITY_SECT_INODES:
		return sizeof(struct extverity_inode);
	case EXTVERITY_SECT_FEC:
		return sizeof(struct extverity_fec);
	case EXTVERITY_SECT_TOP_DIGESTS:
		return p->digest_size;
	}
	return 0;
}

/*
 * Whether slot @id is read: the sections up to LEVELS always, the compat
 * ones when their flag says they are there.
 */
static bool section_present(const struct extverity_params *p,
			    unsigned int id)
{
	if (id <= EXTVERITY_SECT_LEVELS)
		return true;
	if (id == EXTVERITY_SECT_INODES)
		return p->compat_flags & EXTVERITY_COMPAT_INODE_INDEX;
	if (id == EXTVERITY_SECT_FEC)
		return p->compat_flags & EXTVERITY_COMPAT_FEC;
	if (id == EXTVERITY_SECT_TOP_DIGESTS)
		return p->compat_flags & EXTVERITY_COMPAT_TOP_DIGESTS;
	return false;
}

static int parse_section(const struct extverity_superblock *sb,
			 struct extverity_params *p, unsigned int id,
			 u64 *next_free, const char **why)
{
	const struct extverity_section *s = &sb->sections[id];
	u64 start = le64_to_cpu(s->start_block);
	u64 nr_blocks = le64_to_cpu(s->nr_blocks);
	u64 nr_entries = le64_to_cpu(s->nr_entries);
	u32 entry_size = section_entry_size(p, id);

	if (le32_to_cpu(s->entry_size) != entry_size) {
		*why = "section has the wrong record size";
		return -EINVAL;
	}
	if (!nr_blocks) {
		if (start || nr_entries) {
			*why = "empty section has a location or entries";
			return -EINVAL;
		}
		return 0;
	}
	/* Sections follow the superblock in id order and do not overlap. */
	if (start < *next_free || nr_blocks > p->hash_blocks - start ||
	    start > p->hash_blocks) {
		*why = "section lies outside the hash area or overlaps another";
		return -EINVAL;
	}
	*next_free = start + nr_blocks;
	if (entry_size) {
		if (nr_entries > (nr_blocks << p->log_blocksize) / entry_size ||
		    nr_blocks != ((nr_entries * entry_size + p->block_size - 1)
				  >> p->log_blocksize)) {
			*why = "section length does not match its record count";
			return -EINVAL;
		}
	} else if (id != EXTVERITY_SECT_FILES && nr_entries) {
		*why = "hash block section has a record count";
		return -EINVAL;
	}
	p->sect[id].start_block = start;
	p->sect[id].nr_blocks = nr_blocks;
	p->sect[id].nr_entries = nr_entries;
	return 0;
}

/**
 * extverity_parse_superblock() - validate a superblock and extract parameters
 * @sb: the superblock, already authenticated against the root digest
 * @p: filled in on success
 * @why: set to a static description of the first problem found
 *
 * Return: 0, or -EINVAL (-EOPNOTSUPP for a newer format) with @why set.
 */
int extverity_parse_superblock(const struct extverity_superblock *sb,
			       struct extverity_params *p, const char **why)
{
	u64 next_free = 1;	/* block 0 holds the superblock */
	unsigned int id;
	int err;

	memset(p, 0, sizeof(*p));
	if (memcmp(sb->magic, EXTVERITY_MAGIC, sizeof(sb->magic))) {
		*why = "not an extverity hash area (bad magic)";
		return -EINVAL;
	}
	if (le32_to_cpu(sb->version) != EXTVERITY_FORMAT_VERSION ||
	    le32_to_cpu(sb->incompat_flags)) {
		*why = "unsupported format version or incompatible feature";
		return -EOPNOTSUPP;
	}
	if (!extverity_digest_size(sb->hash_algorithm)) {
		*why = "unknown hash algorithm in superblock";
		return -EINVAL;
	}
	if (sb->log_blocksize < EXTVERITY_MIN_LOG_BLOCKSIZE ||
	    sb->log_blocksize > EXTVERITY_MAX_LOG_BLOCKSIZE) {
		*why = "unsupported block size";
		return -EINVAL;
	}
	extverity_init_params(p, sb->hash_algorithm, sb->log_blocksize);
	if (sb->salt_size > EXTVERITY_MAX_SALT_SIZE) {
		*why = "salt too long";
		return -EINVAL;
	}
	p->salt_size = sb->salt_size;
	p->data_blocks = le64_to_cpu(sb->data_blocks);
	if (!p->data_blocks || p->data_blocks > EXTVERITY_MAX_DATA_BLOCKS) {
		*why = "data block count out of range";
		return -EINVAL;
	}
	p->hash_blocks = le64_to_cpu(sb->hash_blocks);
	if (p->hash_blocks < 2 || p->hash_blocks > EXTVERITY_MAX_DATA_BLOCKS) {
		*why = "hash block count out of range";
		return -EINVAL;
	}
	/*
	 * Slots past LEVELS are for compatible growth: read only when their
	 * compat flag says they are there (INODES, FEC and TOP_DIGESTS follow
	 * LEVELS, in that order), else ignored, as readers older than the flag ignore
	 * them.
	 */
	p->compat_flags = le32_to_cpu(sb->compat_flags) &
			  EXTVERITY_COMPAT_KNOWN;
	for (id = 0; id < EXTVERITY_NR_SECTIONS; id++) {
		if (!section_present(p, id))
			continue;
		err = parse_section(sb, p, id, &next_free, why);
		if (err)
			return err;
	}
	if (!p->sect[EXTVERITY_SECT_EXTENTS].nr_entries ||
	    p->sect[EXTVERITY_SECT_EXTENTS].nr_entries > p->data_blocks) {
		*why = "extent count out of range";
		return -EINVAL;
	}
	if (!p->sect[EXTVERITY_SECT_TREES].nr_entries ||
	    p->sect[EXTVERITY_SECT_TREES].nr_entries >= EXTVERITY_TREE_ZERO) {
		*why = "tree count out of range";
		return -EINVAL;
	}
	/* Every entry names a file tree, and no file holds two entries. */
	if (p->sect[EXTVERITY_SECT_INODES].nr_entries >= EXTVERITY_TREE_ZERO) {
		*why = "inode count out of range";
		return -EINVAL;
	}
	if ((p->compat_flags & EXTVERITY_COMPAT_FEC) &&
	    p->sect[EXTVERITY_SECT_FEC].nr_entries != 1) {
		*why = "FEC section does not hold one record";
		return -EINVAL;
	}
	/* A digest for each TOPS block, no more, no fewer. */
	if ((p->compat_flags & EXTVERITY_COMPAT_TOP_DIGESTS) &&
	    p->sect[EXTVERITY_SECT_TOP_DIGESTS].nr_entries !=
	    p->sect[EXTVERITY_SECT_TOPS].nr_blocks) {
		*why = "top digest count does not match the TOPS section";
		return -EINVAL;
	}
	return 0;
}

/**
 * extverity_tree_geometry() - shape of the fs-verity tree over @data_size bytes
 * @p: format parameters
 * @data_size: bytes the tree covers
 * @g: filled in
 *
 * Return: 0, or -EFBIG if the tree would exceed the format's limits.
 */
int extverity_tree_geometry(const struct extverity_params *p, u64 data_size,
			    struct extverity_geometry *g)
{
	u64 count[EXTVERITY_MAX_LEVELS];
	u64 blocks, offset = 0;
	u32 level = 0;
	int i;

	memset(g, 0, sizeof(*g));
	if (data_size > EXTVERITY_MAX_TREE_BLOCKS << p->log_blocksize)
		return -EFBIG;
	blocks = (data_size + p->block_size - 1) >> p->log_blocksize;
	g->data_blocks = blocks;
	if (blocks <= 1)
		return 0;
	do {
		if (level == EXTVERITY_MAX_LEVELS)
			return -EFBIG;
		blocks = (blocks + (1U << p->log_digests_per_block) - 1) >>
			 p->log_digests_per_block;
		count[level++] = blocks;
	} while (blocks > 1);

	g->num_levels = level;
	g->top_len = (level == 1 ? g->data_blocks : count[level - 2]) *
		     p->digest_size;
	/* Lower levels are stored root side first, level 0 last. */
	for (i = level - 2; i >= 0; i--) {
		g->level_start[i] = offset;
		offset += count[i];
	}
	g->lower_blocks = offset;
	return 0;
}

/**
 * extverity_check_tree() - validate a tree record and compute its geometry
 * @p: format parameters
 * @t: the record
 * @cur: the trees before @t; advanced past @t on success
 * @g: filled in on success
 * @why: set to a static description of the first problem found
 *
 * Return: 0, or -EINVAL with @why set.
 */
int extverity_check_tree(const struct extverity_params *p,
			 const struct extverity_tree *t,
			 struct extverity_tree_cursor *cur,
			 struct extverity_geometry *g, const char **why)
{
	u64 top = le64_to_cpu(t->top);
	u64 levels = le64_to_cpu(t->levels);
	u64 tops_start, tops_end, lv_start, lv_end;

	if (extverity_tree_geometry(p, le64_to_cpu(t->data_size), g)) {
		*why = "tree too large";
		return -EINVAL;
	}
	if (!g->num_levels) {
		if (top || levels) {
			*why = "tree of at most one block has hash blocks";
			return -EINVAL;
		}
		return 0;
	}
	tops_start = p->sect[EXTVERITY_SECT_TOPS].start_block <<
		     p->log_blocksize;
	tops_end = tops_start + (p->sect[EXTVERITY_SECT_TOPS].nr_blocks <<
				 p->log_blocksize);
	if (top < tops_start || top >= tops_end ||
	    g->top_len > tops_end - top || top % p->digest_size ||
	    (top & (p->block_size - 1)) + g->top_len > p->block_size) {
		*why = "top hash block outside the TOPS section or misaligned";
		return -EINVAL;
	}
	if (top < cur->tops_end) {
		*why = "trees' top hash blocks overlap or are out of order";
		return -EINVAL;
	}
	if (g->num_levels == 1) {
		if (levels) {
			*why = "one-level tree has lower hash blocks";
			return -EINVAL;
		}
		cur->tops_end = top + g->top_len;
		return 0;
	}
	lv_start = p->sect[EXTVERITY_SECT_LEVELS].start_block;
	lv_end = lv_start + p->sect[EXTVERITY_SECT_LEVELS].nr_blocks;
	if (levels < lv_start || levels > lv_end ||
	    g->lower_blocks > lv_end - levels) {
		*why = "hash blocks outside the LEVELS section";
		return -EINVAL;
	}
	if (levels < cur->levels_end) {
		*why = "trees' hash blocks overlap or are out of order";
		return -EINVAL;
	}
	cur->tops_end = top + g->top_len;
	cur->levels_end = levels + g->lower_blocks;
	return 0;
}

/**
 * extverity_check_extent() - validate one record of the extent map
 * @p: format parameters
 * @e: the record
 * @expected_start: where the previous record ended (0 for the first)
 * @nr_trees: number of tree records
 * @tree_blocks: data blocks of the tree @e names (ignored for a zero range)
 * @why: set to a static description of the first problem found
 *
 * The caller looks up @tree_blocks after checking the index against
 * @nr_trees itself, or passes 0 when the index is out of range; and checks
 * that the last record ends at p->data_blocks.
 *
 * Return: 0, or -EINVAL with @why set.
 */
int extverity_check_extent(const struct extverity_params *p,
			   const struct extverity_extent *e, u64 expected_start,
			   u64 nr_trees, u64 tree_blocks, const char **why)
{
	u64 start = le64_to_cpu(e->start);
	u64 leaf = le64_to_cpu(e->leaf);
	u32 count = le32_to_cpu(e->count);
	u32 tree = le32_to_cpu(e->tree);

	if (start != expected_start) {
		*why = "extent map is not sorted and contiguous";
		return -EINVAL;
	}
	if (!count || count > p->data_blocks - start) {
		*why = "extent is empty or runs past the data device";
		return -EINVAL;
	}
	if (tree == EXTVERITY_TREE_ZERO) {
		if (leaf) {
			*why = "zero range has a leaf index";
			return -EINVAL;
		}
		return 0;
	}
	if (tree >= nr_trees) {
		*why = "extent names a tree that does not exist";
		return -EINVAL;
	}
	if (leaf > tree_blocks || count > tree_blocks - leaf) {
		*why = "extent runs past the end of its tree";
		return -EINVAL;
	}
	return 0;
}

/**
 * extverity_check_inode() - validate one entry of the inode index
 * @e: the entry
 * @prev_inode: the inode of the entry before, 0 for the first
 * @nr_trees: number of tree records
 * @why: set to a static description of the first problem found
 *
 * Return: 0, or -EINVAL with @why set.
 */
int extverity_check_inode(const struct extverity_inode *e, u64 prev_inode,
			  u64 nr_trees, const char **why)
{
	u64 inode = le64_to_cpu(e->inode);
	u32 tree = le32_to_cpu(e->tree);

	if (!inode || inode <= prev_inode) {
		*why = "inode index is not sorted, or repeats an inode";
		return -EINVAL;
	}
	if (tree == EXTVERITY_TREE_RESIDUAL || tree >= nr_trees) {
		*why = "inode index names a tree that is not a file's";
		return -EINVAL;
	}
	if (e->__reserved) {
		*why = "inode index entry has reserved bits set";
		return -EINVAL;
	}
	return 0;
}

/**
 * extverity_check_fec() - validate the FEC record and derive its geometry
 * @p: the parsed superblock
 * @f: the record of the FEC section, authenticated by its digest
 * @g: filled in on success
 * @why: set to a static description of the first problem found
 *
 * The parity must cover exactly the data and the hash area, so that every
 * block the target reads can be corrected and no block is decoded against
 * a code of another length; and it must fit the largest device the format
 * allows, so that no parity offset overflows.
 *
 * Return: 0, or -EINVAL with @why set.
 */
int extverity_check_fec(const struct extverity_params *p,
			const struct extverity_fec *f,
			struct extverity_fec_geometry *g, const char **why)
{
	static const u8 zero[sizeof(f->__reserved)];

	if (f->roots < EXTVERITY_FEC_MIN_ROOTS ||
	    f->roots > EXTVERITY_FEC_MAX_ROOTS) {
		*why = "FEC roots out of range (2 to 24)";
		return -EINVAL;
	}
	if (memcmp(f->__reserved, zero, sizeof(zero))) {
		*why = "FEC record has reserved bytes set";
		return -EINVAL;
	}
	g->roots = f->roots;
	g->rsn = EXTVERITY_FEC_RSM - f->roots;
	g->blocks = le64_to_cpu(f->blocks);
	if (g->blocks != p->data_blocks + p->hash_blocks) {
		*why = "FEC does not cover exactly the data and the hash area";
		return -EINVAL;
	}
	g->rounds = div_u64(g->blocks + g->rsn - 1, g->rsn);
	g->parity_blocks = g->rounds * g->roots;
	g->start = le64_to_cpu(f->start);
	if (g->start > EXTVERITY_MAX_DATA_BLOCKS ||
	    g->parity_blocks > EXTVERITY_MAX_DATA_BLOCKS - g->start) {
		*why = "FEC parity lies past the largest device";
		return -EINVAL;
	}
	return 0;
}

/**
 * extverity_fsverity_descriptor() - fs-verity's descriptor of one file
 * @p: format parameters (algorithm, block size, salt size)
 * @salt: the superblock's salt
 * @data_size: the file's size, from its tree record
 * @root: the tree's root hash, @p->digest_size bytes
 * @d: filled in; its (unsalted) hash is the file's fs-verity digest, what
 *	FS_IOC_MEASURE_VERITY and `fsverity digest` report
 */
void extverity_fsverity_descriptor(const struct extverity_params *p,
				   const u8 *salt, u64 data_size,
				   const u8 *root,
				   struct extverity_fsverity_descriptor *d)
{
	memset(d, 0, sizeof(*d));
	d->version = 1;
	d->hash_algorithm = p->hash_algorithm;
	d->log_blocksize = p->log_blocksize;
	d->salt_size = p->salt_size;
	d->data_size = cpu_to_le64(data_size);
	memcpy(d->root_hash, root, p->digest_size);
	if (p->salt_size)
		memcpy(d->salt, salt, p->salt_size);
}
