/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Hashing for the extverity tool; hash.c is the only file that calls
 * OpenSSL.
 */
#ifndef EXTVERITY_HASH_H
#define EXTVERITY_HASH_H

#include "util.h"

struct evp_md_st;
struct evp_md_ctx_st;

/**
 * struct ev_hasher - fs-verity style block hashing, one per thread
 * @md: the OpenSSL digest
 * @salted: context that has already absorbed the padded salt; copied for
 *	every block so that the salt costs nothing per block
 * @work: scratch context
 * @digest_size: bytes of one digest
 * @block_size: bytes of one data or hash block
 * @zero_digest: digest of an all-zero block, for holes
 */
struct ev_hasher {
	struct evp_md_st *md;
	struct evp_md_ctx_st *salted;
	struct evp_md_ctx_st *work;
	u32 digest_size;
	u32 block_size;
	u8 zero_digest[64];
};

/**
 * ev_hasher_init() - prepare salted block hashing
 * @h: the hasher
 * @alg: EXTVERITY_HASH_*
 * @salt: the salt (may be NULL when @salt_size is 0)
 * @salt_size: bytes of salt
 * @block_size: bytes per block
 *
 * Return: 0, or with an error printed EV_EUSAGE when @alg is unknown or
 * OpenSSL does not have it, EV_ENOMEM when OpenSSL fails (with its default
 * provider, only when it cannot allocate).  @h is then left empty.
 */
int ev_hasher_init(struct ev_hasher *h, unsigned int alg, const u8 *salt,
		   u32 salt_size, u32 block_size);
/* Free @h; may be called again, and on a hasher ev_hasher_init() failed. */
void ev_hasher_free(struct ev_hasher *h);

/**
 * ev_hash_block() - digest of H(salt' || @block)
 * @h: this thread's hasher
 * @block: h->block_size bytes
 * @out: receives h->digest_size bytes
 *
 * Nothing is printed: every hashing thread calls this for every block, and
 * the one that collects their results reports a failure once, with
 * ev_hash_error().
 *
 * Return: 0, or EV_ENOMEM when OpenSSL fails (@out is then undefined).
 */
int ev_hash_block(struct ev_hasher *h, const void *block, u8 *out);

/**
 * ev_hash_blocks() - ev_hash_block() of each of @n consecutive blocks
 * @h: this thread's hasher
 * @blocks: @n blocks of h->block_size bytes
 * @n: their number
 * @out: receives the @n digests, back to back
 *
 * Return: as ev_hash_block(), at the first failure.
 */
int ev_hash_blocks(struct ev_hasher *h, const void *blocks, u64 n, u8 *out);

/* Print that OpenSSL's digest @alg failed while doing @what ("verifying"). */
void ev_hash_error(unsigned int alg, const char *what);

/**
 * ev_hash_plain() - unsalted digest of a buffer
 * @alg: EXTVERITY_HASH_*
 * @data: bytes to hash
 * @len: their number
 * @out: receives the digest
 *
 * Return: 0, or EV_EUSAGE or EV_ENOMEM as ev_hasher_init(), printed.
 */
int ev_hash_plain(unsigned int alg, const void *data, size_t len, u8 *out);

#endif /* EXTVERITY_HASH_H */
