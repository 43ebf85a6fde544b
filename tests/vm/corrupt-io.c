// SPDX-License-Identifier: GPL-2.0
/*
 * Guest-side reader for t-vm-corrupt.sh, built on the host with
 * gcc -static and shipped on the control disk (the initramfs has only
 * busybox, whose dd stops at the first error and cannot say which blocks of
 * a large read failed).
 *
 *   corrupt-io check DEV REF BS CHUNK SECONDS
 *	Reads all of DEV with O_DIRECT reads of CHUNK bytes.  A chunk that
 *	fails is read again block by block, so every block ends up either
 *	read or failed.  Each block read is compared with the same block of
 *	REF (what the device must return).  Prints one "E first last" line
 *	per run of failed blocks (EIO), "W block" for each block that came
 *	back with wrong bytes, "X block errno" for an error other than EIO,
 *	and "S blocks=N eio=N wrong=N other=N" at the end.  The whole run must
 *	finish within SECONDS (SIGALRM otherwise): a read that hangs fails it.
 *
 *   corrupt-io tamper DEV REF BS FIRST COUNT SECONDS
 *	For SECONDS, O_DIRECT reads of COUNT blocks from block FIRST into one
 *	buffer while a second thread keeps writing into that buffer.  The
 *	bytes that land in the buffer are not meaningful; what matters is
 *	that no read fails.  Every 16th read is made with the writer paused
 *	and its result is compared with REF.  Prints "T reads=N eio=N
 *	other=N checked=N wrong=N".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>

static void die(const char *what)
{
	perror(what);
	exit(2);
}

static void *xalloc(size_t n)
{
	void *p;

	if (posix_memalign(&p, 4096, n))
		die("posix_memalign");
	return p;
}

static unsigned long long dev_size(int fd)
{
	unsigned long long size;
	struct stat st;

	if (fstat(fd, &st))
		die("fstat");
	if (S_ISREG(st.st_mode))
		return st.st_size;
	if (ioctl(fd, BLKGETSIZE64, &size))
		die("BLKGETSIZE64");
	return size;
}

/* Read exactly n bytes at off; returns 0 or the errno of the failure. */
static int read_at(int fd, void *buf, size_t n, off_t off)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = pread(fd, (char *)buf + done, n - done, off + done);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		if (r == 0)
			return ENODATA;
		done += r;
	}
	return 0;
}

struct result {
	unsigned long long blocks, eio, wrong, other;
	long long run_first, run_last;
};

static void flush_run(struct result *res)
{
	if (res->run_first >= 0)
		printf("E %lld %lld\n", res->run_first, res->run_last);
	res->run_first = -1;
}

static void block_done(struct result *res, unsigned long long blk, int err,
		       const char *got, const char *want, size_t bs)
{
	res->blocks++;
	if (err == EIO) {
		res->eio++;
		if (res->run_first >= 0 && res->run_last + 1 == (long long)blk) {
			res->run_last = blk;
		} else {
			flush_run(res);
			res->run_first = res->run_last = blk;
		}
		return;
	}
	flush_run(res);
	if (err) {
		res->other++;
		printf("X %llu %d\n", blk, err);
	} else if (memcmp(got, want, bs)) {
		res->wrong++;
		printf("W %llu\n", blk);
	}
}

static int cmd_check(int argc, char **argv)
{
	size_t bs, chunk;
	unsigned long long size, off;
	struct result res = { .run_first = -1 };
	char *buf, *ref;
	int fd, rfd;

	if (argc != 7)
		return 2;
	bs = strtoul(argv[4], NULL, 0);
	chunk = strtoul(argv[5], NULL, 0);
	alarm(strtoul(argv[6], NULL, 0));
	fd = open(argv[2], O_RDONLY | O_DIRECT);
	if (fd < 0)
		die(argv[2]);
	rfd = open(argv[3], O_RDONLY);
	if (rfd < 0)
		die(argv[3]);
	size = dev_size(fd);
	if (dev_size(rfd) < size || !bs || chunk % bs || size % bs)
		return 2;
	buf = xalloc(chunk);
	ref = xalloc(chunk);
	for (off = 0; off < size; off += chunk) {
		size_t n = size - off < chunk ? size - off : chunk;
		size_t i;
		int err;

		if (read_at(rfd, ref, n, off))
			die("reading the reference");
		err = read_at(fd, buf, n, off);
		for (i = 0; i < n; i += bs) {
			int e = err;

			if (err == EIO)
				e = read_at(fd, buf + i, bs, off + i);
			block_done(&res, (off + i) / bs, e, buf + i, ref + i,
				   bs);
		}
	}
	flush_run(&res);
	printf("S blocks=%llu eio=%llu wrong=%llu other=%llu\n", res.blocks,
	       res.eio, res.wrong, res.other);
	return 0;
}

static char *tbuf;
static size_t tlen;
static atomic_int tstop, tpause, tpaused;

static void *tamper_thread(void *arg)
{
	unsigned char x = 0;

	(void)arg;
	while (!atomic_load(&tstop)) {
		if (atomic_load(&tpause)) {
			atomic_store(&tpaused, 1);
			while (atomic_load(&tpause) && !atomic_load(&tstop))
				;
			atomic_store(&tpaused, 0);
			continue;
		}
		memset(tbuf, x++, tlen);
	}
	return NULL;
}

static int cmd_tamper(int argc, char **argv)
{
	unsigned long long reads = 0, eio = 0, other = 0, checked = 0,
			   wrong = 0;
	size_t bs;
	off_t first;
	time_t end;
	pthread_t th;
	char *ref;
	int fd, rfd;

	if (argc != 8)
		return 2;
	bs = strtoul(argv[4], NULL, 0);
	first = strtoull(argv[5], NULL, 0) * bs;
	tlen = strtoul(argv[6], NULL, 0) * bs;
	end = time(NULL) + strtoul(argv[7], NULL, 0);
	alarm(strtoul(argv[7], NULL, 0) + 60);
	fd = open(argv[2], O_RDONLY | O_DIRECT);
	if (fd < 0)
		die(argv[2]);
	rfd = open(argv[3], O_RDONLY);
	if (rfd < 0)
		die(argv[3]);
	tbuf = xalloc(tlen);
	ref = xalloc(tlen);
	if (read_at(rfd, ref, tlen, first))
		die("reading the reference");
	if (pthread_create(&th, NULL, tamper_thread, NULL))
		die("pthread_create");
	while (time(NULL) < end) {
		int check = reads % 16 == 15, err;

		if (check) {
			atomic_store(&tpause, 1);
			while (!atomic_load(&tpaused))
				;
		}
		err = read_at(fd, tbuf, tlen, first);
		reads++;
		if (err == EIO)
			eio++;
		else if (err)
			other++;
		if (check) {
			if (!err) {
				checked++;
				wrong += !!memcmp(tbuf, ref, tlen);
			}
			atomic_store(&tpause, 0);
		}
	}
	atomic_store(&tstop, 1);
	pthread_join(th, NULL);
	printf("T reads=%llu eio=%llu other=%llu checked=%llu wrong=%llu\n",
	       reads, eio, other, checked, wrong);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && !strcmp(argv[1], "check"))
		return cmd_check(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "tamper"))
		return cmd_tamper(argc, argv);
	fprintf(stderr, "usage: corrupt-io check DEV REF BS CHUNK SECONDS\n"
		"       corrupt-io tamper DEV REF BS FIRST COUNT SECONDS\n");
	return 2;
}
