/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The blocks of one buffer hashed on several threads: verify reads the data
 * in order, a chunk at a time, and its hashing, not the reading, is what
 * one CPU spends its time on.  Threads only write the digests of the
 * blocks they took; the caller compares them, in order, once all are done,
 * so what verify reports does not depend on thread timing.
 */
#ifndef EXTVERITY_HASHPOOL_H
#define EXTVERITY_HASHPOOL_H

#include "hash.h"

struct ev_hashpool;

/*
 * Blocks a thread takes at a time: a buffer of n blocks keeps at most
 * n / EV_HASHPOOL_SLICE threads busy.
 */
#define EV_HASHPOOL_SLICE	16

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
 * ev_hashpool_run() - digests of @n consecutive blocks
 * @hp: the pool
 * @buf: @n blocks
 * @n: their number
 * @out: receives @n digests, one after the other
 *
 * Return: 0, or EV_ENOMEM when OpenSSL failed on a block (not printed).
 */
int ev_hashpool_run(struct ev_hashpool *hp, const u8 *buf, size_t n, u8 *out);

/* Stop the threads and free @hp; NULL is allowed. */
void ev_hashpool_free(struct ev_hashpool *hp);

#endif /* EXTVERITY_HASHPOOL_H */
