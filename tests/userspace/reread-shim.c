// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD shim for t-verify.sh: a hash file on storage that does not
 * return the same bytes twice (a file served by someone else: FUSE, NFS,
 * NBD).  Reads of the file named by SHIM_PATH return its bytes the first
 * time a read covers byte SHIM_OFF, and from then on the bytes of file
 * SHIM_FORGED (SHIM_LEN bytes) at SHIM_OFF.  Whatever checked the first
 * read must not trust the second.  With SHIM_LOG set, each read of
 * SHIM_PATH is also noted there as "OFFSET LENGTH", to show what is read
 * more than once.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static int covered;

/* Whether @fd is the file SHIM_PATH names. */
static int is_shim_path(int fd)
{
	const char *path = getenv("SHIM_PATH");
	char link[64], name[PATH_MAX];
	ssize_t n;

	if (!path)
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, name, sizeof(name) - 1);
	if (n <= 0)
		return 0;
	name[n] = '\0';
	return !strcmp(name, path);
}

static void note(ssize_t got, off_t off)
{
	const char *log = getenv("SHIM_LOG");
	FILE *f;

	if (!log)
		return;
	f = fopen(log, "a");
	if (!f)
		return;
	fprintf(f, "%lld %lld\n", (long long)off, (long long)got);
	fclose(f);
}

static void forge(char *buf, ssize_t got, off_t off)
{
	const char *forged = getenv("SHIM_FORGED");
	long long at, len, i;
	int ffd;

	if (!forged || !getenv("SHIM_OFF") || !getenv("SHIM_LEN"))
		return;
	at = atoll(getenv("SHIM_OFF"));
	len = atoll(getenv("SHIM_LEN"));
	if (off > at || off + got <= at)
		return;
	if (covered++ == 0)
		return;
	ffd = open(forged, O_RDONLY);
	if (ffd < 0)
		return;
	for (i = 0; i < len && at + i < off + got; i++)
		if (pread(ffd, buf + (at - off) + i, 1, i) != 1)
			break;
	close(ffd);
}

ssize_t pread(int fd, void *buf, size_t count, off_t off)
{
	static ssize_t (*real)(int, void *, size_t, off_t);
	ssize_t got;

	if (!real)
		real = dlsym(RTLD_NEXT, "pread");
	got = real(fd, buf, count, off);
	if (got > 0 && !getenv("SHIM_BUSY") && is_shim_path(fd)) {
		/* forge() reads the forged file with pread too. */
		setenv("SHIM_BUSY", "1", 1);
		note(got, off);
		forge(buf, got, off);
		unsetenv("SHIM_BUSY");
	}
	return got;
}

ssize_t pread64(int fd, void *buf, size_t count, off_t off)
{
	return pread(fd, buf, count, off);
}
