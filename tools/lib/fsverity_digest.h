/* SPDX-License-Identifier: GPL-2.0 */
/* The fs-verity file digest of a tree record. */
#ifndef EXTVERITY_FSVERITY_DIGEST_H
#define EXTVERITY_FSVERITY_DIGEST_H

#include "util.h"

/**
 * ev_fsverity_digest() - what `fsverity digest` prints for a file
 * @alg: EXTVERITY_HASH_* (fs-verity's numbering)
 * @log_blocksize: log2 of the Merkle tree block size
 * @salt: the salt
 * @salt_size: its length, 0..32
 * @data_size: the file size
 * @root: the tree's root hash (digest size bytes)
 * @out: receives the digest of the fs-verity descriptor
 *
 * Return: 0, or EV_EUSAGE as ev_hash_plain().
 */
int ev_fsverity_digest(unsigned int alg, unsigned int log_blocksize,
		       const u8 *salt, u32 salt_size, u64 data_size,
		       const u8 *root, u8 *out);

#endif /* EXTVERITY_FSVERITY_DIGEST_H */
