// SPDX-License-Identifier: GPL-2.0
/*
 * A fixed pool of threads taking jobs from a shared counter.  Each thread
 * has its own hasher, made by the calling thread before any starts (so that
 * a failure is reported once), and its own read buffer.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parallel.h"
#include "progress.h"

struct pool {
	struct ev_jobs *j;
	const struct extverity_params *p;
	int fd;
	u64 nr_jobs;
	atomic_uint_fast64_t next;
};

/* One thread's part of the pool. */
struct worker {
	struct pool *pool;
	struct ev_hasher h;
};

static u64 jobs_of(const struct ev_job *job)
{
	if (job->finish)
		return 1;
	return ev_div_round_up(job->t->g.data_blocks, EV_CHUNK_BLOCKS);
}

static void add(struct ev_jobs *j, struct ev_tree *t, bool finish)
{
	u64 first = j->n ? j->v[j->n - 1].first_job +
			   jobs_of(&j->v[j->n - 1]) : 0;

	xgrow((void **)&j->v, &j->cap, j->n + 1, sizeof(*j->v));
	j->v[j->n++] = (struct ev_job){
		.t = t, .first_job = first, .finish = finish,
	};
}

void ev_jobs_add_data(struct ev_jobs *j, struct ev_tree *t)
{
	if (t->g.data_blocks)
		add(j, t, false);
}

void ev_jobs_add_finish(struct ev_jobs *j, struct ev_tree *t)
{
	if (t->g.num_levels)
		add(j, t, true);
}

/* The queued tree job number @i belongs to: the last with first_job <= i. */
static const struct ev_job *job_tree(const struct ev_jobs *j, u64 i)
{
	size_t lo = 0, hi = j->n;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (j->v[mid].first_job <= i)
			lo = mid;
		else
			hi = mid;
	}
	return &j->v[lo];
}

static void *worker(void *arg)
{
	struct worker *w = arg;
	struct pool *pool = w->pool;
	struct ev_hasher *h = &w->h;
	u32 bs = pool->p->block_size;
	u8 *buf, *dig;
	u64 i;

	buf = xmalloc((size_t)EV_CHUNK_BLOCKS * bs);
	dig = xmalloc((size_t)EV_CHUNK_BLOCKS * EXTVERITY_MAX_DIGEST_SIZE);
	while ((i = atomic_fetch_add(&pool->next, 1)) < pool->nr_jobs) {
		const struct ev_job *job = job_tree(pool->j, i);
		u64 first = (i - job->first_job) * EV_CHUNK_BLOCKS;
		u64 n = job->t->g.data_blocks - first;

		if (job->finish) {
			ev_tree_finish(job->t, h, buf, EV_CHUNK_BLOCKS, dig);
			continue;
		}
		if (n > EV_CHUNK_BLOCKS)
			n = EV_CHUNK_BLOCKS;
		ev_tree_hash_data(job->t, h, pool->fd, first, first + n,
				  buf, EV_CHUNK_BLOCKS, dig);
		if (pool->j->progress)
			ev_progress_add(n << pool->p->log_blocksize);
	}
	free(dig);
	free(buf);
	return NULL;
}

/*
 * The CPU quota of this process's cgroup v2 ("max" or "QUOTA PERIOD" in
 * cpu.max), rounded up to whole CPUs; 0 when there is none or it cannot be
 * read.  Only the process's own cgroup is read, not its ancestors'.
 */
static unsigned int cgroup_cpu_quota(void)
{
	char line[4096], path[4200];
	unsigned long long quota, period;
	unsigned int n = 0;
	FILE *f;

	f = fopen("/proc/self/cgroup", "r");
	if (!f)
		return 0;
	path[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		/* cgroup v2: "0::/the/path" */
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(path, sizeof(path), "/sys/fs/cgroup%s/cpu.max",
				 line + 3);
			break;
		}
	}
	fclose(f);
	if (!path[0])
		return 0;
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &quota, &period) == 2 && period)
		n = (unsigned int)((quota + period - 1) / period);
	fclose(f);
	return n;
}

unsigned int ev_default_threads(void)
{
	unsigned int n = 1, quota = cgroup_cpu_quota();
	cpu_set_t set;

	if (!sched_getaffinity(0, sizeof(set), &set) && CPU_COUNT(&set) > 0)
		n = CPU_COUNT(&set);
	else if (sysconf(_SC_NPROCESSORS_ONLN) > 0)
		n = sysconf(_SC_NPROCESSORS_ONLN);
	if (quota && quota < n)
		n = quota;
	return n;
}

int ev_jobs_run(struct ev_jobs *j, const struct extverity_params *p,
		const u8 *salt, int fd)
{
	struct pool pool = { .j = j, .p = p, .fd = fd };
	u64 ncpu = j->threads ? j->threads : ev_default_threads();
	struct worker *w;
	pthread_t *tids;
	size_t nthreads, started = 0, i;
	u64 bytes = 0;
	int err = 0;

	if (j->n)
		pool.nr_jobs = j->v[j->n - 1].first_job +
			       jobs_of(&j->v[j->n - 1]);
	nthreads = ncpu < pool.nr_jobs ? (size_t)ncpu : (size_t)pool.nr_jobs;
	/* Even without jobs, so that a missing hash is always reported. */
	if (!nthreads)
		nthreads = 1;
	/*
	 * Every thread's hasher is made here, before any thread starts: a
	 * hash algorithm OpenSSL lacks, or an OpenSSL that fails, is
	 * reported once, not by every thread.
	 */
	w = xcalloc(nthreads, sizeof(*w));
	for (i = 0; i < nthreads && !err; i++) {
		w[i].pool = &pool;
		err = ev_hasher_init(&w[i].h, p->hash_algorithm, salt,
				     p->salt_size, p->block_size);
	}
	if (err)
		goto out;
	ev_debug("%s: %llu jobs on %zu threads", j->progress ? j->progress :
		 "hashing", (unsigned long long)pool.nr_jobs, nthreads);
	for (i = 0; i < j->n; i++)
		if (!j->v[i].finish)
			bytes += j->v[i].t->g.data_blocks << p->log_blocksize;
	if (j->progress && bytes)
		ev_progress_begin(j->progress, bytes);
	tids = xcalloc(nthreads + 1, sizeof(*tids));
	/* The calling thread works too; extra threads only when useful. */
	for (i = 1; i < nthreads; i++) {
		if (pthread_create(&tids[i], NULL, worker, &w[i]))
			break;
		started++;
	}
	worker(&w[0]);
	for (i = 1; i <= started; i++)
		pthread_join(tids[i], NULL);
	free(tids);
	if (j->progress && bytes)
		ev_progress_end();
	for (i = 0; i < j->n && !err; i++) {
		if (j->v[i].t->hash_failed) {
			ev_hash_error(p->hash_algorithm, j->progress ?
				      j->progress : "hashing");
			err = EV_ENOMEM;
		}
	}
	for (i = 0; i < j->n && !err; i++) {
		if (j->v[i].t->err) {
			ev_error("cannot read the data image: %s",
				 strerror(-j->v[i].t->err));
			err = EV_EIO;
		}
	}
	for (i = 0; i < j->n && !err; i++) {
		if (j->v[i].t->scratch_err) {
			ev_error("cannot use the scratch file of the hash "
				 "trees: %s",
				 strerror(-j->v[i].t->scratch_err));
			err = EV_EIO;
		}
	}
out:
	for (i = 0; i < nthreads; i++)
		ev_hasher_free(&w[i].h);
	free(w);
	j->n = 0;
	return err;
}
