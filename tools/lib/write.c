// SPDX-License-Identifier: GPL-2.0
/*
 * Writing the hash area atomically: either the whole area is in place, or
 * the destination is as it was.
 */
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "write.h"

static int write_in_place(const char *path, u64 offset, const void *buf,
			  size_t len, bool is_dev)
{
	struct stat st;
	int fd = open(path, O_WRONLY);
	int err;

	if (fd < 0 || fstat(fd, &st)) {
		ev_error("cannot open %s for writing: %s", path,
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		return EV_EIO;
	}
	err = ev_pwrite(fd, buf, len, offset);
	if (!err && fsync(fd))
		err = -errno;
	if (err) {
		ev_error("cannot write %s: %s", path, strerror(-err));
		/* Give the file back its original length. */
		if (!is_dev && ftruncate(fd, st.st_size))
			ev_error("cannot restore the size of %s: %s", path,
				 strerror(errno));
		close(fd);
		return EV_EIO;
	}
	if (close(fd)) {
		ev_error("cannot write %s: %s", path, strerror(errno));
		return EV_EIO;
	}
	return 0;
}

static int write_replace(const char *path, u64 offset, const void *buf,
			 size_t len)
{
	char *copy = xstrdup(path), *tmp;
	const char *dir = dirname(copy);
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	mode_t mask = umask(0);
	int fd, err;

	umask(mask);
	tmp = xmalloc(strlen(dir) + strlen(base) + 16);
	sprintf(tmp, "%s/.%s.XXXXXX", dir, base);
	free(copy);
	fd = mkstemp(tmp);
	if (fd < 0) {
		ev_error("cannot create a file next to %s: %s", path,
			 strerror(errno));
		free(tmp);
		return EV_EIO;
	}
	err = ev_pwrite(fd, buf, len, offset);
	if (!err && fchmod(fd, 0666 & ~mask))
		err = -errno;
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		ev_error("cannot write %s: %s", path, strerror(-err));
		unlink(tmp);
		free(tmp);
		return EV_EIO;
	}
	free(tmp);
	return 0;
}

int ev_write_area(const char *path, u64 offset, const void *buf, size_t len)
{
	struct stat st;

	if (!stat(path, &st)) {
		if (S_ISBLK(st.st_mode))
			return write_in_place(path, offset, buf, len, true);
		if (!S_ISREG(st.st_mode)) {
			ev_error("%s is not a regular file or block device",
				 path);
			return EV_EIO;
		}
		if (offset)
			return write_in_place(path, offset, buf, len, false);
	}
	return write_replace(path, offset, buf, len);
}
