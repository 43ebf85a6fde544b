// SPDX-License-Identifier: GPL-2.0
/*
 * Hashing the blocks of one buffer on several threads (hashpool.h).
 *
 * The threads live as long as the pool and sleep between buffers.  A
 * buffer is a generation: the caller publishes it under the lock, bumps
 * @gen and wakes the helpers; everyone, the caller too, takes SLICE blocks
 * at a time from @next until none are left; the caller then waits until
 * every helper has said it is done with that generation.  So the caller
 * may reuse the buffer and read the digests as soon as ev_hashpool_run()
 * returns.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "hashpool.h"

/* Few enough to share a chunk, enough to be cheap. */
#define SLICE	EV_HASHPOOL_SLICE

struct helper {
	struct ev_hashpool *hp;
	struct ev_hasher h;
	pthread_t tid;
};

struct ev_hashpool {
	pthread_mutex_t lock;
	pthread_cond_t go;	/* a new generation, or stop */
	pthread_cond_t done;	/* @busy reached 0 */
	u64 gen;		/* under @lock */
	unsigned int busy;	/* under @lock: helpers still on @gen */
	bool stop;		/* under @lock */
	/* The current generation's buffer: set under @lock, then read-only. */
	const u8 *buf;
	size_t n;
	u8 *out;
	atomic_size_t next;
	atomic_int failed;
	u32 block_size, digest_size;
	struct ev_hasher h;	/* the caller's */
	struct helper *helpers;
	unsigned int nr_helpers;	/* started */
};

static void hash_slices(struct ev_hashpool *hp, struct ev_hasher *h)
{
	size_t i, end;

	while ((i = atomic_fetch_add(&hp->next, SLICE)) < hp->n) {
		end = hp->n - i < SLICE ? hp->n : i + SLICE;
		for (; i < end; i++)
			if (ev_hash_block(h, hp->buf + i * hp->block_size,
					  hp->out + i * hp->digest_size))
				atomic_store(&hp->failed, 1);
	}
}

static void *helper_main(void *arg)
{
	struct helper *me = arg;
	struct ev_hashpool *hp = me->hp;
	u64 seen = 0;

	pthread_mutex_lock(&hp->lock);
	for (;;) {
		while (!hp->stop && hp->gen == seen)
			pthread_cond_wait(&hp->go, &hp->lock);
		if (hp->stop)
			break;
		seen = hp->gen;
		pthread_mutex_unlock(&hp->lock);
		hash_slices(hp, &me->h);
		pthread_mutex_lock(&hp->lock);
		if (!--hp->busy)
			pthread_cond_signal(&hp->done);
	}
	pthread_mutex_unlock(&hp->lock);
	return NULL;
}

int ev_hashpool_new(struct ev_hashpool **out, unsigned int threads,
		    unsigned int alg, const u8 *salt, u32 salt_size,
		    u32 block_size)
{
	struct ev_hashpool *hp = xcalloc(1, sizeof(*hp));
	unsigned int i, made = 0;
	int err;

	/*
	 * Every hasher is made here, before any thread starts: an algorithm
	 * OpenSSL lacks is reported once, not by every thread.
	 */
	err = ev_hasher_init(&hp->h, alg, salt, salt_size, block_size);
	hp->helpers = xcalloc(threads > 1 ? threads - 1 : 1,
			      sizeof(*hp->helpers));
	for (i = 0; !err && i + 1 < threads; i++, made++) {
		hp->helpers[i].hp = hp;
		err = ev_hasher_init(&hp->helpers[i].h, alg, salt, salt_size,
				     block_size);
	}
	if (err) {
		for (i = 0; i < made; i++)
			ev_hasher_free(&hp->helpers[i].h);
		ev_hasher_free(&hp->h);
		free(hp->helpers);
		free(hp);
		return err;
	}
	hp->block_size = block_size;
	hp->digest_size = hp->h.digest_size;
	pthread_mutex_init(&hp->lock, NULL);
	pthread_cond_init(&hp->go, NULL);
	pthread_cond_init(&hp->done, NULL);
	for (i = 0; i < made; i++) {
		if (pthread_create(&hp->helpers[i].tid, NULL, helper_main,
				   &hp->helpers[i]))
			break;
		hp->nr_helpers++;
	}
	/* Hashers of threads that did not start. */
	for (; i < made; i++)
		ev_hasher_free(&hp->helpers[i].h);
	*out = hp;
	return 0;
}

int ev_hashpool_run(struct ev_hashpool *hp, const u8 *buf, size_t n, u8 *out)
{
	pthread_mutex_lock(&hp->lock);
	hp->buf = buf;
	hp->n = n;
	hp->out = out;
	atomic_store(&hp->next, 0);
	atomic_store(&hp->failed, 0);
	/* A few blocks are not worth waking anyone for. */
	if (hp->nr_helpers && n >= 2 * SLICE) {
		hp->busy = hp->nr_helpers;
		hp->gen++;
		pthread_cond_broadcast(&hp->go);
	}
	pthread_mutex_unlock(&hp->lock);
	hash_slices(hp, &hp->h);
	pthread_mutex_lock(&hp->lock);
	while (hp->busy)
		pthread_cond_wait(&hp->done, &hp->lock);
	pthread_mutex_unlock(&hp->lock);
	return atomic_load(&hp->failed) ? EV_ENOMEM : 0;
}

void ev_hashpool_free(struct ev_hashpool *hp)
{
	unsigned int i;

	if (!hp)
		return;
	pthread_mutex_lock(&hp->lock);
	hp->stop = true;
	pthread_cond_broadcast(&hp->go);
	pthread_mutex_unlock(&hp->lock);
	for (i = 0; i < hp->nr_helpers; i++) {
		pthread_join(hp->helpers[i].tid, NULL);
		ev_hasher_free(&hp->helpers[i].h);
	}
	pthread_cond_destroy(&hp->done);
	pthread_cond_destroy(&hp->go);
	pthread_mutex_destroy(&hp->lock);
	ev_hasher_free(&hp->h);
	free(hp->helpers);
	free(hp);
}
