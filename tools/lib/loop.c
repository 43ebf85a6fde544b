// SPDX-License-Identifier: GPL-2.0
/*
 * Loop devices.  LOOP_CONFIGURE sets the file, read-only and autoclear in
 * one step, so no other process can see the device half set up; kernels
 * before 5.8 get LOOP_SET_FD + LOOP_SET_STATUS64.
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
static int open_loop(int nr)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	char name[32];
	int fd, i;

	snprintf(name, sizeof(name), "/dev/loop%d", nr);
	for (i = 0; i < 100; i++) {
		fd = open(name, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 || errno != ENOENT)
			break;
		nanosleep(&ts, NULL);
	}
	if (fd < 0)
		ev_error("cannot open %s: %s", name, strerror(errno));
	return fd;
}

/* Configure @fd with @file; 0, or -errno (-EBUSY: someone else took it). */
static int configure(int fd, int file, const char *path)
{
	struct loop_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.fd = file;
	cfg.info.lo_flags = LO_FLAGS_READ_ONLY | LO_FLAGS_AUTOCLEAR;
	snprintf((char *)cfg.info.lo_file_name, LO_NAME_SIZE, "%s", path);
	if (!ioctl(fd, LOOP_CONFIGURE, &cfg))
		return 0;
	if (errno != EINVAL && errno != ENOTTY)
		return -errno;
	/* No LOOP_CONFIGURE (before Linux 5.8). */
	if (ioctl(fd, LOOP_SET_FD, file))
		return -errno;
	if (ioctl(fd, LOOP_SET_STATUS64, &cfg.info)) {
		int err = -errno;

		ioctl(fd, LOOP_CLR_FD, 0);
		return err;
	}
	return 0;
}

int ev_loop_attach(const char *path, int *loop_fd, dev_t *dev)
{
	int ctl, file, fd = -1, nr, tries, err = 0;
	struct stat st;

	file = open(path, O_RDONLY | O_CLOEXEC);
	if (file < 0) {
		ev_error("cannot open %s: %s", path, strerror(errno));
		return EV_EIO;
	}
	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0) {
		ev_error("cannot open /dev/loop-control: %s (is the loop "
			 "driver loaded?)", strerror(errno));
		close(file);
		return EV_EIO;
	}
	/* Another process may take the free device first: try again. */
	for (tries = 0; tries < 32; tries++) {
		nr = ioctl(ctl, LOOP_CTL_GET_FREE);
		if (nr < 0) {
			err = -errno;
			break;
		}
		fd = open_loop(nr);
		if (fd < 0)
			break;
		err = configure(fd, file, path);
		if (err != -EBUSY)
			break;
		close(fd);
		fd = -1;
	}
	close(ctl);
	close(file);
	if (fd >= 0 && !err && !fstat(fd, &st)) {
		*loop_fd = fd;
		*dev = st.st_rdev;
		return 0;
	}
	if (err)
		ev_error("cannot attach %s to a loop device: %s", path,
			 strerror(-err));
	if (fd >= 0)
		close(fd);
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
