// SPDX-License-Identifier: GPL-2.0
/*
 * OpenSSL EVP wrapper: fs-verity's salted block hash and plain digests.
 */
#include <stdio.h>
#include <stdlib.h>
#include <openssl/evp.h>

#include "dm-extverity-format.h"
#include "hash.h"

/*
 * OpenSSL's digest of @alg, or NULL with the error printed.  It may lack
 * one that extverity knows: a configuration that loads no provider with
 * it (FIPS-only, or a broken openssl.cnf).
 */
static EVP_MD *fetch_md(unsigned int alg)
{
	const char *name = extverity_hash_name(alg);
	EVP_MD *md;

	if (!name) {
		ev_error("unknown hash algorithm %u", alg);
		return NULL;
	}
	md = EVP_MD_fetch(NULL, name, NULL);
	if (!md)
		ev_error("hash algorithm %s is not available", name);
	return md;
}

void ev_hash_error(unsigned int alg, const char *what)
{
	const char *name = extverity_hash_name(alg);

	/*
	 * With the default provider, a fetched digest fails only when
	 * OpenSSL cannot allocate; a provider of another configuration may
	 * have other reasons, so this names what failed, not a cause.
	 */
	ev_error("%s: OpenSSL's %s digest failed", what, name ? name : "?");
}

int ev_hasher_init(struct ev_hasher *h, unsigned int alg, const u8 *salt,
		   u32 salt_size, u32 block_size)
{
	u8 padded[128] = { 0 };
	u8 *zero;
	size_t plen;
	int err;

	memset(h, 0, sizeof(*h));
	h->md = fetch_md(alg);
	if (!h->md)
		return EV_EUSAGE;
	h->digest_size = EVP_MD_get_size(h->md);
	h->block_size = block_size;
	h->salted = EVP_MD_CTX_new();
	h->work = EVP_MD_CTX_new();
	if (!h->salted || !h->work ||
	    !EVP_DigestInit_ex(h->salted, h->md, NULL))
		goto fail;
	/*
	 * fs-verity pads the salt to the hash function's block size, so one
	 * compression of the salt can be done once and the state reused.
	 */
	if (salt_size) {
		plen = EVP_MD_get_block_size(h->md);
		memcpy(padded, salt, salt_size);
		if (!EVP_DigestUpdate(h->salted, padded, plen))
			goto fail;
	}
	zero = xzalloc(block_size);
	err = ev_hash_block(h, zero, h->zero_digest);
	free(zero);
	if (err)
		goto fail;
	return 0;
fail:
	ev_hash_error(alg, "preparing to hash");
	ev_hasher_free(h);
	return EV_ENOMEM;
}

void ev_hasher_free(struct ev_hasher *h)
{
	EVP_MD_CTX_free(h->salted);
	EVP_MD_CTX_free(h->work);
	EVP_MD_free(h->md);
	memset(h, 0, sizeof(*h));
}

int ev_hash_block(struct ev_hasher *h, const void *block, u8 *out)
{
	if (!EVP_MD_CTX_copy_ex(h->work, h->salted) ||
	    !EVP_DigestUpdate(h->work, block, h->block_size) ||
	    !EVP_DigestFinal_ex(h->work, out, NULL))
		return EV_ENOMEM;
	return 0;
}

int ev_hash_blocks(struct ev_hasher *h, const void *blocks, u64 n, u8 *out)
{
	const u8 *b = blocks;
	u64 i;
	int err = 0;

	for (i = 0; i < n && !err; i++)
		err = ev_hash_block(h, b + i * h->block_size,
				    out + i * h->digest_size);
	return err;
}

int ev_hash_plain(unsigned int alg, const void *data, size_t len, u8 *out)
{
	EVP_MD *md = fetch_md(alg);
	int err = 0;

	if (!md)
		return EV_EUSAGE;
	if (!EVP_Digest(data, len, out, NULL, md, NULL)) {
		ev_hash_error(alg, "hashing");
		err = EV_ENOMEM;
	}
	EVP_MD_free(md);
	return err;
}
