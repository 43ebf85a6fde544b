// SPDX-License-Identifier: GPL-2.0
/*
 * The fs-verity file digest: the hash of struct fsverity_descriptor, built
 * here from a tree record so that `extverity dump --files` prints what
 * `fsverity digest` and FS_IOC_MEASURE_VERITY report for the same file.
 */
#include "dm-extverity-format.h"
#include "fsverity_digest.h"
#include "hash.h"

/* Layout of fs-verity's descriptor (linux/fsverity.h, version 1). */
struct ev_fsverity_descriptor {
	u8 version;
	u8 hash_algorithm;
	u8 log_blocksize;
	u8 salt_size;
	__le32 sig_size;
	__le64 data_size;
	u8 root_hash[64];
	u8 salt[32];
	u8 reserved[144];
};

_Static_assert(sizeof(struct ev_fsverity_descriptor) == 256,
	       "fs-verity descriptor is 256 bytes");

int ev_fsverity_digest(unsigned int alg, unsigned int log_blocksize,
		       const u8 *salt, u32 salt_size, u64 data_size,
		       const u8 *root, u8 *out)
{
	struct ev_fsverity_descriptor d;

	memset(&d, 0, sizeof(d));
	d.version = 1;
	d.hash_algorithm = alg;
	d.log_blocksize = log_blocksize;
	d.salt_size = salt_size;
	d.data_size = cpu_to_le64(data_size);
	memcpy(d.root_hash, root, extverity_digest_size(alg));
	if (salt_size)
		memcpy(d.salt, salt, salt_size);
	return ev_hash_plain(alg, &d, sizeof(d), out);
}
