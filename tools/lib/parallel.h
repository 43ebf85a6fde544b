/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Hashing many trees on all CPUs.  Threads only fill buffers that belong to
 * one job each; everything that decides the output layout happens serially
 * afterwards, so the hash area does not depend on thread timing.
 */
#ifndef EXTVERITY_PARALLEL_H
#define EXTVERITY_PARALLEL_H

#include "tree.h"

/*
 * Data blocks hashed by one job: small enough to spread a big file, large
 * enough that a job's fixed cost stays small for one that is mostly holes.
 * 32 made format 3-6 % faster on make bench's reference image, but 1.75x
 * slower on a 1 TiB sparse file (64 s against 37 s).
 */
#define EV_CHUNK_BLOCKS	256

/*
 * One queued tree: its data blocks, EV_CHUNK_BLOCKS to a job, or with
 * @finish one job computing its upper levels and root.  Jobs are numbered
 * on the fly from @first_job, so the queue takes memory per tree, not per
 * data block (an 8 TiB sparse file is 2^31 blocks).
 */
struct ev_job {
	struct ev_tree *t;
	u64 first_job;
	bool finish;
};

/*
 * @progress, when set, names the phase ev_jobs_run() shows progress for
 * (tools/lib/progress.h), counted in data bytes hashed.  @threads: how many
 * threads at most, 0 for ev_default_threads().
 */
struct ev_jobs {
	struct ev_job *v;
	size_t n;
	size_t cap;
	const char *progress;
	unsigned int threads;
};

/*
 * The CPUs this process may use: those of its affinity mask (taskset,
 * cpuset cgroups), fewer under a cgroup v2 CPU quota (cpu.max), at least 1.
 */
unsigned int ev_default_threads(void);

/* More threads than this is a typing error, not a machine. */
#define EV_MAX_THREADS 4096

/* Queue level-0 jobs covering all of @t's data blocks. */
void ev_jobs_add_data(struct ev_jobs *j, struct ev_tree *t);
/* Queue the job that completes @t once its data is hashed. */
void ev_jobs_add_finish(struct ev_jobs *j, struct ev_tree *t);

/**
 * ev_jobs_run() - run and then empty a list of jobs on @j->threads threads
 * @j: the jobs (data jobs and finish jobs must not be mixed for one tree)
 * @p: format parameters
 * @salt: the salt
 * @fd: the data image
 *
 * Return: 0 or an exit code, with the error printed (a read error of any
 * job, else a scratch file error).
 */
int ev_jobs_run(struct ev_jobs *j, const struct extverity_params *p,
		const u8 *salt, int fd);

#endif /* EXTVERITY_PARALLEL_H */
