/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Data blocks read and hashed on several threads: verify gathers the blocks
 * of many small files (and the chunks of large ones) into one batch of
 * segments, and the threads both read (pread copies from the page cache,
 * a sixth of verify's time on one thread) and hash them, a segment at a
 * time.  Threads only write the blocks and digests of the segments they
 * took; the caller compares them, in order, once all are done, so what
 * verify reports does not depend on thread timing.
 */
#ifndef EXTVERITY_HASHPOOL_H
#define EXTVERITY_HASHPOOL_H

#include "hash.h"

struct ev_hashpool;

/* Most blocks a segment holds: a batch of n blocks keeps n / 16 threads busy. */
#define EV_HASHPOOL_SLICE	16

/**
 * struct ev_hashpool_seg - blocks contiguous on the data device
 * @off: byte offset of the first on the device
 * @pos: index of the first in the batch's buffer and digests
 * @n: blocks, 1 to EV_HASHPOOL_SLICE
 */
struct ev_hashpool_seg {
	u64 off;
	u32 pos;
	u32 n;
};

/**
 * ev_hashpool_new() - start threads for salted block hashing
 * @out: receives the pool
 * @threads: threads in all, the caller's included (1: the caller alone)
 * @alg: EXTVERITY_HASH_*
 * @salt: the salt (may be NULL when @salt_size is 0)
 * @salt_size: bytes of salt
 * @block_size: bytes per block
 *
 * A thread that cannot be started is done without: fewer threads, never
 * an error.
 *
 * Return: 0, or as ev_hasher_init() (printed), with nothing left to free.
 */
int ev_hashpool_new(struct ev_hashpool **out, unsigned int threads,
		    unsigned int alg, const u8 *salt, u32 salt_size,
		    u32 block_size);

/**
 * ev_hashpool_run() - read and hash a batch of segments
 * @hp: the pool
 * @fd: the data device or image
 * @segs: @nsegs segments, each at the @pos where the one before ends
 * @nsegs: their number
 * @buf: receives the blocks
 * @out: receives their digests, one after the other
 * @bad_seg: on EV_EIO, the first segment that could not be read
 * @read_err: on EV_EIO, its negative errno
 *
 * The segments before *@bad_seg were all read and hashed.
 *
 * Return: 0; EV_ENOMEM when OpenSSL failed on a block (whatever else
 * failed); EV_EIO when a read failed.  Nothing printed.
 */
int ev_hashpool_run(struct ev_hashpool *hp, int fd,
		    const struct ev_hashpool_seg *segs, size_t nsegs, u8 *buf,
		    u8 *out, size_t *bad_seg, int *read_err);

/* Stop the threads and free @hp; NULL is allowed. */
void ev_hashpool_free(struct ev_hashpool *hp);

#endif /* EXTVERITY_HASHPOOL_H */
