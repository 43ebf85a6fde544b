// SPDX-License-Identifier: GPL-2.0
/*
 * Reading and hashing a batch of segments on several threads (hashpool.h).
 *
 * The threads live as long as the pool and sleep between batches.  A batch
 * is a generation: the caller publishes it under the lock, bumps @gen and
 * wakes the helpers; everyone, the caller too, takes a segment at a time
 * from @next until none are left; the caller then waits until every helper
 * has said it is done with that generation.  So the caller may reuse the
 * buffer and read the digests as soon as ev_hashpool_run() returns.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "hashpool.h"
#include "util.h"

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
	/* The current generation: set under @lock, then read-only. */
	int fd;
	const struct ev_hashpool_seg *segs;
	size_t nsegs;
	u8 *buf;
	u8 *out;
	atomic_size_t next;
	atomic_int failed;	/* OpenSSL failed on a block */
	size_t bad_seg;		/* under @lock: first unreadable, or nsegs */
	int read_err;		/* under @lock: its errno */
	u32 block_size, digest_size;
	struct ev_hasher h;	/* the caller's */
	struct helper *helpers;
	unsigned int nr_helpers;	/* started */
};

static void do_segments(struct ev_hashpool *hp, struct ev_hasher *h)
{
	const struct ev_hashpool_seg *sg;
	size_t i;
	u32 k;
	u8 *b;
	int err;

	while ((i = atomic_fetch_add(&hp->next, 1)) < hp->nsegs) {
		sg = &hp->segs[i];
		b = hp->buf + (size_t)sg->pos * hp->block_size;
		err = ev_pread(hp->fd, b, (size_t)sg->n * hp->block_size,
			       sg->off);
		if (err) {
			pthread_mutex_lock(&hp->lock);
			if (i < hp->bad_seg) {
				hp->bad_seg = i;
				hp->read_err = err;
			}
			pthread_mutex_unlock(&hp->lock);
			continue;
		}
		for (k = 0; k < sg->n; k++)
			if (ev_hash_block(h, b + (size_t)k * hp->block_size,
					  hp->out + ((size_t)sg->pos + k) *
					  hp->digest_size))
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
		do_segments(hp, &me->h);
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

int ev_hashpool_run(struct ev_hashpool *hp, int fd,
		    const struct ev_hashpool_seg *segs, size_t nsegs, u8 *buf,
		    u8 *out, size_t *bad_seg, int *read_err)
{
	pthread_mutex_lock(&hp->lock);
	hp->fd = fd;
	hp->segs = segs;
	hp->nsegs = nsegs;
	hp->buf = buf;
	hp->out = out;
	hp->bad_seg = nsegs;
	atomic_store(&hp->next, 0);
	atomic_store(&hp->failed, 0);
	/* One segment is not worth waking anyone for. */
	if (hp->nr_helpers && nsegs > 1) {
		hp->busy = hp->nr_helpers;
		hp->gen++;
		pthread_cond_broadcast(&hp->go);
	}
	pthread_mutex_unlock(&hp->lock);
	do_segments(hp, &hp->h);
	pthread_mutex_lock(&hp->lock);
	while (hp->busy)
		pthread_cond_wait(&hp->done, &hp->lock);
	pthread_mutex_unlock(&hp->lock);
	/* A digest left uncomputed must not be compared, even before a bad read. */
	if (atomic_load(&hp->failed))
		return EV_ENOMEM;
	if (hp->bad_seg < nsegs) {
		*bad_seg = hp->bad_seg;
		*read_err = hp->read_err;
		return EV_EIO;
	}
	return 0;
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
