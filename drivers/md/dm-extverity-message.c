// SPDX-License-Identifier: GPL-2.0
/*
 * dm-extverity: target messages (dmsetup message DEV 0 ...), docs/table.md
 * "Messages".
 *
 *	measure <inode>		the file's fs-verity digest, "sha256:<hex>"
 *	corrupted		the files in which corruption was seen
 *
 * The answer is the message's result; a failure is its errno alone, never
 * logged: a caller asking about a file that is not there is not an event.
 *
 * dm core hands the message's words in the same buffer that receives the
 * result (dm-ioctl's target_message()): every word is parsed before the
 * first byte of the result is written.
 */
#include <linux/kernel.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "dm-extverity.h"

/* fs-verity hashes exactly these 256 bytes. */
static_assert(sizeof(struct extverity_fsverity_descriptor) == 256);

/**
 * extverity_record_corruption() - note a corrupt block for `corrupted`
 * @v: the target
 * @inode: the file the block belongs to, 0 for metadata
 * @offset: the block's byte offset in the file (for metadata: on the data
 *	device)
 *
 * Called for every detection, so a block read twice counts twice.  Never
 * allocates: past EXTVERITY_CORRUPT_FILES_MAX files, only a count of the
 * blocks of the others is kept.  Corruption is found in the verification
 * workers, process context, as are messages: a plain spinlock.
 */
void extverity_record_corruption(struct extverity_target *v, u64 inode,
				 u64 offset)
{
	struct extverity_corrupt_file *f;
	unsigned int i;

	spin_lock(&v->corrupt_lock);
	for (i = 0; i < v->nr_corrupt_files; i++)
		if (v->corrupt_files[i].inode == inode)
			break;
	f = &v->corrupt_files[i];
	if (i < v->nr_corrupt_files) {
		f->first_offset = min(f->first_offset, offset);
		f->blocks++;
	} else if (i < EXTVERITY_CORRUPT_FILES_MAX) {
		f->inode = inode;
		f->first_offset = offset;
		f->blocks = 1;
		v->nr_corrupt_files++;
	} else {
		v->corrupt_overflow++;
	}
	spin_unlock(&v->corrupt_lock);
}

/* The index of @inode in the inode index, or -1 when it is not there. */
static s64 find_inode(const struct extverity_target *v, u64 inode)
{
	u32 lo = 0, hi = v->nr_inodes;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (v->inodes[mid] == inode)
			return mid;
		if (v->inodes[mid] < inode)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/*
 * measure <inode>: the fs-verity digest of the regular file @inode, the
 * hash of fs-verity's descriptor built from the authenticated superblock
 * and tree record: what `fsverity digest` prints for the file's content.
 */
static int message_measure(struct extverity_target *v, const char *arg,
			   char *result, unsigned int maxlen)
{
	struct extverity_fsverity_descriptor *d;
	u8 digest[EXTVERITY_MAX_DIGEST_SIZE];
	unsigned int sz = 0;
	u64 inode;
	s64 idx;
	u32 t;
	int err;

	if (kstrtoull(arg, 10, &inode))
		return -EINVAL;
	if (!(v->p.compat_flags & EXTVERITY_COMPAT_INODE_INDEX))
		return -ENODATA;
	idx = find_inode(v, inode);
	if (idx < 0)
		return -ENOENT;
	t = v->inode_trees[idx];
	d = kmalloc_obj(*d, GFP_KERNEL);
	if (!d)
		return -ENOMEM;
	extverity_fsverity_descriptor(&v->p, v->salt, v->trees[t].data_size,
				      v->roots + (size_t)t * v->p.digest_size,
				      d);
	err = extverity_hash_plain(v, d, sizeof(*d), digest);
	kfree(d);
	if (err)
		return err;
	DMEMIT("%s:%*phN", extverity_hash_name(v->p.hash_algorithm),
	       v->p.digest_size, digest);
	return 1;
}

/*
 * corrupted: one line "<inode> <first bad offset> <bad blocks>" per file,
 * in order of first detection, then "more <blocks>" for the files past
 * the bound; printed under the lock (at most 65 short lines).
 */
static int message_corrupted(struct extverity_target *v, char *result,
			     unsigned int maxlen)
{
	unsigned int sz = 0, i;

	if (maxlen)
		result[0] = '\0';
	spin_lock(&v->corrupt_lock);
	for (i = 0; i < v->nr_corrupt_files; i++)
		DMEMIT("%llu %llu %llu\n", v->corrupt_files[i].inode,
		       v->corrupt_files[i].first_offset,
		       v->corrupt_files[i].blocks);
	if (v->corrupt_overflow)
		DMEMIT("more %llu\n", v->corrupt_overflow);
	spin_unlock(&v->corrupt_lock);
	return 1;
}

/**
 * extverity_message() - the target's .message hook
 * @ti: the target
 * @argc: number of words
 * @argv: the words
 * @result: buffer for the answer; shares its memory with @argv
 * @maxlen: its size (an answer that does not fit sets DM_BUFFER_FULL_FLAG,
 *	and libdevmapper asks again with a larger buffer)
 *
 * Return: 1 with the answer in @result, or a negative errno: -EINVAL for
 * an unknown verb or wrong arguments, -ENODATA when the hash area has no
 * inode index, -ENOENT when an inode is not a regular file of the index
 * (-ENOMEM, or the crypto API's error, should hashing fail).
 */
int extverity_message(struct dm_target *ti, unsigned int argc, char **argv,
		      char *result, unsigned int maxlen)
{
	struct extverity_target *v = ti->private;

	if (argc == 2 && !strcmp(argv[0], "measure"))
		return message_measure(v, argv[1], result, maxlen);
	if (argc == 1 && !strcmp(argv[0], "corrupted"))
		return message_corrupted(v, result, maxlen);
	return -EINVAL;
}
