// SPDX-License-Identifier: GPL-2.0
/*
 * Loop devices: the one place extverity attaches them (`open` for a data
 * image file, --fs=fiemap to mount an image).  LOOP_CONFIGURE sets the
 * file, read-only, autoclear and the size limit in one step, so no other
 * process can see the device half set up; kernels before 5.8 get
 * LOOP_SET_FD + LOOP_SET_STATUS64.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "loop.h"
#include "util.h"

/* Open /dev/loopN; its node may appear a moment after LOOP_CTL_GET_FREE. */
static int open_loop(const char *name)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int fd, i;

	for (i = 0; i < 100; i++) {
		fd = open(name, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 || errno != ENOENT)
			break;
		nanosleep(&ts, NULL);
	}
	return fd < 0 ? -errno : fd;
}

/* Configure @fd with @file; 0, or -errno (-EBUSY: someone else took it). */
static int configure(int fd, int file, const char *name, u64 size_limit)
{
	struct loop_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.fd = file;
	cfg.info.lo_flags = LO_FLAGS_READ_ONLY | LO_FLAGS_AUTOCLEAR;
	cfg.info.lo_sizelimit = size_limit;
	if (name)
		snprintf((char *)cfg.info.lo_file_name, LO_NAME_SIZE, "%s",
			 name);
	if (!ioctl(fd, LOOP_CONFIGURE, &cfg))
		return 0;
	if (errno != EINVAL && errno != ENOTTY)
		return -errno;
	/*
	 * No LOOP_CONFIGURE (before Linux 5.8).  LOOP_SET_FD makes the device
	 * read-only as @file is; LOOP_SET_STATUS64 adds autoclear and the
	 * size limit.
	 */
	if (ioctl(fd, LOOP_SET_FD, file))
		return -errno;
	if (ioctl(fd, LOOP_SET_STATUS64, &cfg.info)) {
		int err = -errno;

		ioctl(fd, LOOP_CLR_FD, 0);
		return err;
	}
	return 0;
}

int ev_loop_attach_fd(int file, const char *name, u64 size_limit,
		      struct ev_loop *lo)
{
	int ctl, fd = -1, nr, tries, err = 0;
	bool open_failed = false;
	struct stat st;

	memset(lo, 0, sizeof(*lo));
	lo->fd = -1;
	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0) {
		err = -errno;
		snprintf(lo->path, sizeof(lo->path), "/dev/loop-control");
		return err;
	}
	/* Another process may take the free device first: try again. */
	for (tries = 0; tries < 32; tries++) {
		nr = ioctl(ctl, LOOP_CTL_GET_FREE);
		if (nr < 0) {
			err = -errno;
			break;
		}
		snprintf(lo->path, sizeof(lo->path), "/dev/loop%d", nr);
		fd = open_loop(lo->path);
		if (fd < 0) {
			err = fd;
			open_failed = true;
			break;
		}
		err = configure(fd, file, name, size_limit);
		if (err != -EBUSY)
			break;
		close(fd);
		fd = -1;
	}
	close(ctl);
	if (!err && fstat(fd, &st))
		err = -errno;
	if (err) {
		/* Only a node that could not be opened stays named. */
		if (!open_failed)
			lo->path[0] = '\0';
		if (fd >= 0)
			close(fd);
		return err;
	}
	lo->fd = fd;
	lo->dev = st.st_rdev;
	ev_debug("%s attached to %s, read-only, autoclear", name, lo->path);
	return 0;
}

int ev_loop_attach(const char *path, int *loop_fd, dev_t *dev)
{
	struct ev_loop lo;
	int file, err;

	file = open(path, O_RDONLY | O_CLOEXEC);
	if (file < 0) {
		ev_error("cannot open %s: %s", path, strerror(errno));
		return EV_EIO;
	}
	err = ev_loop_attach_fd(file, path, 0, &lo);
	close(file);
	if (!err) {
		*loop_fd = lo.fd;
		*dev = lo.dev;
		return 0;
	}
	if (!strcmp(lo.path, "/dev/loop-control")) {
		ev_error("cannot open /dev/loop-control: %s (is the loop "
			 "driver loaded?)", strerror(-err));
		return EV_EIO;
	}
	if (lo.path[0]) {
		ev_error("cannot open %s: %s", lo.path, strerror(-err));
		return EV_EIO;
	}
	ev_error("cannot attach %s to a loop device: %s", path,
		 strerror(-err));
	return err == -EBUSY ? EV_EBUSY : EV_EIO;
}

/* The first line of /sys/dev/block/M:m/@attr, allocated; or NULL. */
static char *sysfs_line(dev_t dev, const char *attr, const char *key)
{
	char path[128], *line = NULL, *ret = NULL;
	size_t cap = 0, klen = key ? strlen(key) : 0;
	ssize_t n;
	FILE *fp;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/%s", major(dev),
		 minor(dev), attr);
	fp = fopen(path, "re");
	if (!fp)
		return NULL;
	while ((n = getline(&line, &cap, fp)) > 0) {
		if (line[n - 1] == '\n')
			line[n - 1] = '\0';
		if (!key) {
			ret = xstrdup(line);
			break;
		}
		if (!strncmp(line, key, klen)) {
			ret = xstrdup(line + klen);
			break;
		}
	}
	free(line);
	fclose(fp);
	return ret;
}

char *ev_loop_backing_file(dev_t dev)
{
	return sysfs_line(dev, "loop/backing_file", NULL);
}

char *ev_blockdev_path(dev_t dev)
{
	char *name = sysfs_line(dev, "uevent", "DEVNAME="), *path;

	if (!name)
		return NULL;
	path = xmalloc(strlen(name) + 6);
	sprintf(path, "/dev/%s", name);
	free(name);
	return path;
}
