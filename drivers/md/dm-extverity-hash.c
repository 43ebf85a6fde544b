// SPDX-License-Identifier: GPL-2.0
/*
 * dm-extverity: hashing.  The only file that calls the crypto API, and the
 * one place that chooses between it and the SHA-256 library: SHA-256 trees
 * go through the library where the kernel's hashes two blocks at once
 * (@v->salted_sha256 set), everything else through the crypto API.
 *
 * Tree blocks are hashed as fs-verity does: H(salt' || block), where salt' is
 * the salt zero-padded to the hash function's block size (64 bytes for
 * SHA-256, 128 for SHA-512).  Because the padded salt fills whole hash
 * blocks, the state after it can be exported once and imported before every
 * block, so salting costs nothing per block.  The manifest (superblock and
 * digest-protected sections) is hashed plain, without salt.
 */
#include <linux/highmem.h>
#include <linux/slab.h>
#include <crypto/sha2.h>

#include "dm-extverity.h"

/**
 * extverity_hash_init() - allocate the hash transform
 * @v: the target; @v->tfm is set on success
 * @alg_name: crypto API name, "sha256" or "sha512"
 *
 * Return: 0 or a negative errno.
 */
int extverity_hash_init(struct extverity_target *v, const char *alg_name)
{
	struct crypto_shash *tfm;

	tfm = crypto_alloc_shash(alg_name, 0, 0);
	if (IS_ERR(tfm))
		return PTR_ERR(tfm);
	v->tfm = tfm;
	return 0;
}

void extverity_hash_exit(struct extverity_target *v)
{
	extverity_sha256_exit(v);
	kfree(v->salted_state);
	v->salted_state = NULL;
	if (!IS_ERR_OR_NULL(v->tfm))
		crypto_free_shash(v->tfm);
	v->tfm = NULL;
}

/**
 * extverity_hash_prepare_salt() - precompute the hash state after the salt
 * @v: the target, with @v->p and @v->salt set from the superblock
 *
 * SHA-256 trees are hashed with the library where it can hash two blocks
 * at once (@v->salted_sha256).  The crypto API's salted state is made in
 * every case, though only the other path imports it: one hashed block at
 * table load, against a second way of preparing the salt.
 *
 * Return: 0 or a negative errno.
 */
int extverity_hash_prepare_salt(struct extverity_target *v)
{
	unsigned int hbs = crypto_shash_blocksize(v->tfm);
	u8 padded[SHA512_BLOCK_SIZE] = { 0 };	/* the largest hash block */
	int err;

	SHASH_DESC_ON_STACK(desc, v->tfm);

	if (hbs > sizeof(padded) || v->p.salt_size > hbs)
		return -EINVAL;
	v->salted_state = kmalloc(crypto_shash_statesize(v->tfm), GFP_KERNEL);
	if (!v->salted_state)
		return -ENOMEM;
	desc->tfm = v->tfm;
	err = crypto_shash_init(desc);
	if (!err && v->p.salt_size) {
		memcpy(padded, v->salt, v->p.salt_size);
		err = crypto_shash_update(desc, padded, hbs);
	}
	if (!err)
		err = crypto_shash_export(desc, v->salted_state);
	shash_desc_zero(desc);
	if (!err && v->p.hash_algorithm == EXTVERITY_HASH_SHA256)
		err = extverity_sha256_prepare_salt(v, v->p.salt_size ?
						    padded : NULL);
	return err;
}

/**
 * extverity_hash_plain() - unsalted digest of a buffer
 * @v: the target
 * @data: bytes to hash
 * @len: their number
 * @out: receives the digest
 *
 * Used for the superblock only; sections are hashed incrementally through
 * the same transform in dm-extverity-manifest.c.
 *
 * Return: 0 or a negative errno.
 */
int extverity_hash_plain(struct extverity_target *v, const void *data,
			 size_t len, u8 *out)
{
	return crypto_shash_tfm_digest(v->tfm, data, len, out);
}

/**
 * extverity_hash_block() - salted digest of one whole block in memory
 * @v: the target
 * @desc: a descriptor for @v->tfm (per-bio data)
 * @data: @v->p.block_size bytes
 * @out: receives the digest
 *
 * Return: 0 or a negative errno.
 */
int extverity_hash_block(struct extverity_target *v, struct shash_desc *desc,
			 const void *data, u8 *out)
{
	int err;

	if (v->salted_sha256) {
		extverity_sha256_block(v, data, v->p.block_size, out);
		return 0;
	}
	desc->tfm = v->tfm;
	err = crypto_shash_import(desc, v->salted_state);
	if (!err)
		err = crypto_shash_finup(desc, data, v->p.block_size, out);
	return err;
}

/**
 * extverity_hash_top() - salted digest of a packed top block
 * @v: the target
 * @desc: a descriptor for @v->tfm
 * @data: the used bytes of the top block
 * @len: their number, at most the block size
 * @out: receives the digest
 *
 * A packed top block reads as its used bytes followed by zeros up to the
 * block size (docs/format.md): hash it that way without copying it.
 *
 * Return: 0 or a negative errno.
 */
int extverity_hash_top(struct extverity_target *v, struct shash_desc *desc,
		       const void *data, u32 len, u8 *out)
{
	int err;

	if (v->salted_sha256) {
		extverity_sha256_block(v, data, len, out);
		return 0;
	}
	desc->tfm = v->tfm;
	err = crypto_shash_import(desc, v->salted_state);
	if (!err)
		err = crypto_shash_update(desc, data, len);
	if (!err)
		err = crypto_shash_finup(desc, v->zero_block,
					 v->p.block_size - len, out);
	return err;
}

/**
 * extverity_hash_bio_block() - salted digest of the next block of a bio
 * @v: the target
 * @desc: a descriptor for @v->tfm
 * @bio: the bio, whose data has been read
 * @iter: position in @bio; advanced past the block
 * @out: receives the digest
 *
 * A block may span several bio segments (pages); each is mapped in turn.
 *
 * Return: 0 or a negative errno.
 */
int extverity_hash_bio_block(struct extverity_target *v,
			     struct shash_desc *desc, struct bio *bio,
			     struct bvec_iter *iter, u8 *out)
{
	unsigned int todo = v->p.block_size;
	int err;

	if (v->salted_sha256) {
		extverity_sha256_bio_block(v, bio, iter, out);
		return 0;
	}
	desc->tfm = v->tfm;
	err = crypto_shash_import(desc, v->salted_state);
	while (!err && todo) {
		struct bio_vec bv = bio_iter_iovec(bio, *iter);
		unsigned int len = min(bv.bv_len, todo);
		void *p = bvec_kmap_local(&bv);

		err = crypto_shash_update(desc, p, len);
		kunmap_local(p);
		bio_advance_iter(bio, iter, len);
		todo -= len;
	}
	if (!err)
		err = crypto_shash_final(desc, out);
	return err;
}
