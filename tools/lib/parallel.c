// SPDX-License-Identifier: GPL-2.0
/*
 * A fixed pool of threads taking jobs from a shared counter.  Each thread
 * has its own hasher and read buffer.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "parallel.h"
#include "progress.h"

struct pool {
	struct ev_jobs *j;
	const struct extverity_params *p;
	const u8 *salt;
	int fd;
	atomic_size_t next;
	atomic_int failed;
};

void ev_jobs_add_data(struct ev_jobs *j, struct ev_tree *t)
{
	u64 n = t->g.data_blocks, first;

	for (first = 0; first < n; first += EV_CHUNK_BLOCKS) {
		xgrow((void **)&j->v, &j->cap, j->n + 1, sizeof(*j->v));
		j->v[j->n++] = (struct ev_job){
			.t = t, .first = first,
			.last = n - first > EV_CHUNK_BLOCKS ?
				first + EV_CHUNK_BLOCKS : n,
		};
	}
}

void ev_jobs_add_finish(struct ev_jobs *j, struct ev_tree *t)
{
	if (!t->g.num_levels)
		return;
	xgrow((void **)&j->v, &j->cap, j->n + 1, sizeof(*j->v));
	j->v[j->n++] = (struct ev_job){ .t = t, .finish = true };
}

static void *worker(void *arg)
{
	struct pool *pool = arg;
	struct ev_hasher h;
	u8 *buf;
	size_t i;

	if (ev_hasher_init(&h, pool->p->hash_algorithm, pool->salt,
			   pool->p->salt_size, pool->p->block_size)) {
		atomic_store(&pool->failed, 1);
		return NULL;
	}
	buf = xmalloc((size_t)EV_CHUNK_BLOCKS * pool->p->block_size);
	while ((i = atomic_fetch_add(&pool->next, 1)) < pool->j->n) {
		struct ev_job *job = &pool->j->v[i];

		if (job->finish)
			ev_tree_finish(job->t, &h, buf);
		else
			ev_tree_hash_data(job->t, &h, pool->fd, job->first,
					  job->last, buf, EV_CHUNK_BLOCKS);
		if (pool->j->progress && !job->finish)
			ev_progress_add((job->last - job->first) <<
					pool->p->log_blocksize);
	}
	free(buf);
	ev_hasher_free(&h);
	return NULL;
}

int ev_jobs_run(struct ev_jobs *j, const struct extverity_params *p,
		const u8 *salt, int fd)
{
	struct pool pool = { .j = j, .p = p, .salt = salt, .fd = fd };
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t *tids;
	size_t nthreads, started = 0, i;
	u64 bytes = 0;
	int err = 0;

	if (ncpu < 1)
		ncpu = 1;
	nthreads = (size_t)ncpu < j->n ? (size_t)ncpu : j->n;
	for (i = 0; i < j->n; i++)
		if (!j->v[i].finish)
			bytes += (j->v[i].last - j->v[i].first) << p->log_blocksize;
	if (j->progress && bytes)
		ev_progress_begin(j->progress, bytes);
	tids = xcalloc(nthreads + 1, sizeof(*tids));
	/* The calling thread works too; extra threads only when useful. */
	for (i = 1; i < nthreads; i++) {
		if (pthread_create(&tids[i], NULL, worker, &pool))
			break;
		started++;
	}
	worker(&pool);
	for (i = 1; i <= started; i++)
		pthread_join(tids[i], NULL);
	free(tids);
	if (j->progress && bytes)
		ev_progress_end();
	if (atomic_load(&pool.failed))
		err = EV_EUSAGE;
	for (i = 0; i < j->n && !err; i++) {
		if (j->v[i].t->err) {
			ev_error("cannot read the data image: %s",
				 strerror(-j->v[i].t->err));
			err = EV_EIO;
		}
	}
	j->n = 0;
	return err;
}
