// SPDX-License-Identifier: GPL-2.0
/*
 * The fs-verity file digest: the hash of struct fsverity_descriptor, built
 * here from a tree record so that `extverity dump --files` prints what
 * `fsverity digest` and FS_IOC_MEASURE_VERITY report for the same file.
 */
#include "dm-extverity-format.h"
#include "fsverity_digest.h"
#include "hash.h"

int ev_fsverity_digest(unsigned int alg, unsigned int log_blocksize,
		       const u8 *salt, u32 salt_size, u64 data_size,
		       const u8 *root, u8 *out)
{
	struct extverity_fsverity_descriptor d;
	struct extverity_params p;

	extverity_init_params(&p, alg, log_blocksize);
	p.salt_size = salt_size;
	extverity_fsverity_descriptor(&p, salt, data_size, root, &d);
	return ev_hash_plain(alg, &d, sizeof(d), out);
}
