// SPDX-License-Identifier: GPL-2.0
/*
 * dm-extverity: SHA-256 through the kernel's SHA-256 library, on kernels
 * whose library hashes two messages at once (sha256_finup_2x(), 6.19 on).
 *
 * The library is called directly, without the crypto API's indirection, and
 * sha256_finup_2x() hashes two data blocks from the same salted context in
 * one pass: on CPUs with SHA extensions their rounds are interleaved, which
 * nearly doubles the throughput of one CPU (sha256_finup_2x_is_optimized());
 * elsewhere the library hashes the two in turn, as one call each would.
 * dm-extverity-verify.c pairs data blocks whenever this path is in use, so
 * that the pairing is exercised on every CPU.
 *
 * Everything here runs only when @v->salted_sha256 is set: SHA-256 trees.
 * SHA-512 trees, the manifest and older kernels use the crypto API
 * (dm-extverity-hash.c).
 */
#include <linux/slab.h>
#include <crypto/sha2.h>

#include "dm-extverity.h"

/**
 * extverity_sha256_prepare_salt() - hash the padded salt with the library
 * @v: the target, hashing with SHA-256
 * @padded: the salt zero-padded to SHA256_BLOCK_SIZE, or NULL for no salt
 *
 * Sets @v->salted_sha256, which every block hash then starts from.
 *
 * Return: 0 or -ENOMEM.
 */
int extverity_sha256_prepare_salt(struct extverity_target *v,
				  const u8 *padded)
{
	struct sha256_ctx *ctx = kmalloc_obj(*ctx, GFP_KERNEL);

	if (!ctx)
		return -ENOMEM;
	sha256_init(ctx);
	if (padded)
		sha256_update(ctx, padded, SHA256_BLOCK_SIZE);
	v->salted_sha256 = ctx;
	return 0;
}

void extverity_sha256_exit(struct extverity_target *v)
{
	kfree_sensitive(v->salted_sha256);
	v->salted_sha256 = NULL;
}

/**
 * extverity_sha256_block() - salted digest of @len bytes then zeros
 * @v: the target, with @v->salted_sha256 set
 * @data: the block's first @len bytes
 * @len: their number, at most the block size
 * @out: receives the digest
 *
 * A whole block has @len equal to the block size; a packed top block is
 * hashed as its used bytes followed by zeros, without copying it.
 */
void extverity_sha256_block(const struct extverity_target *v, const u8 *data,
			    u32 len, u8 *out)
{
	struct sha256_ctx ctx = *v->salted_sha256;

	sha256_update(&ctx, data, len);
	if (len < v->p.block_size)
		sha256_update(&ctx, v->zero_block, v->p.block_size - len);
	sha256_final(&ctx, out);
}

/**
 * extverity_sha256_bio_block() - salted digest of the next block of a bio
 * @v: the target, with @v->salted_sha256 set
 * @bio: the bio, whose data has been read
 * @iter: position in @bio; advanced past the block
 * @out: receives the digest
 */
void extverity_sha256_bio_block(const struct extverity_target *v,
				struct bio *bio, struct bvec_iter *iter, u8 *out)
{
	struct sha256_ctx ctx = *v->salted_sha256;
	unsigned int todo = v->p.block_size;

	while (todo) {
		struct bio_vec bv = bio_iter_iovec(bio, *iter);
		unsigned int len = min(bv.bv_len, todo);
		void *p = bvec_kmap_local(&bv);

		sha256_update(&ctx, p, len);
		kunmap_local(p);
		bio_advance_iter(bio, iter, len);
		todo -= len;
	}
	sha256_final(&ctx, out);
}

/**
 * extverity_sha256_2blocks() - salted digests of two whole blocks at once
 * @v: the target, with @v->salted_sha256 set
 * @data1: the first block
 * @data2: the second block
 * @out1: receives the digest of @data1
 * @out2: receives the digest of @data2
 */
void extverity_sha256_2blocks(const struct extverity_target *v,
			      const u8 *data1, const u8 *data2, u8 *out1,
			      u8 *out2)
{
	sha256_finup_2x(v->salted_sha256, data1, data2, v->p.block_size, out1,
			out2);
}
