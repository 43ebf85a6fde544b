/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Block devices: attaching a file to a read-only, autoclearing loop device
 * (for `extverity open` and --fs=fiemap), and what sysfs says about a
 * device.
 */
#ifndef EXTVERITY_LOOP_H
#define EXTVERITY_LOOP_H

#include <sys/types.h>

#include "util.h"

/**
 * struct ev_loop - a loop device attached by ev_loop_attach_fd()
 * @fd: an open descriptor of the device (read-only), or -1
 * @dev: its device number
 * @path: its node, "/dev/loopN"
 */
struct ev_loop {
	int fd;
	dev_t dev;
	char path[32];
};

/**
 * ev_loop_attach_fd() - attach an open file to a free loop device
 * @file: the backing file, open for reading; the device holds its own
 *	reference, so @file may be closed once this returns
 * @name: what LOOP_GET_STATUS64 reports as the file's name (cut to 63
 *	bytes), or NULL for none
 * @size_limit: bytes of @file, from its start, that the device shows; 0
 *	for all of it
 * @lo: filled in
 *
 * The one loop setup of the tool.  The device is read-only and autoclears:
 * it goes away when its last user (the descriptor in @lo->fd, a mount, a
 * device-mapper table) lets go of it, so nothing is left attached whatever
 * happens to the process.  Partition scanning and direct I/O stay off, the
 * kernel's defaults: an image is read whole, through the page cache.  When
 * another process takes the free device first (EBUSY), up to 32 free
 * devices are tried; kernels without LOOP_CONFIGURE (before 5.8) get
 * LOOP_SET_FD and LOOP_SET_STATUS64 with the same settings.
 *
 * Return: 0, or -errno with nothing printed.  On error @lo->path names the
 * node that could not be opened ("/dev/loop-control" or "/dev/loopN"), or
 * is empty when the device could not be attached.
 */
int ev_loop_attach_fd(int file, const char *name, u64 size_limit,
		      struct ev_loop *lo);

/**
 * ev_loop_attach() - attach the file at @path, as ev_loop_attach_fd() does
 * @path: the file, also the name the device reports
 * @loop_fd: set to an open descriptor of the loop device
 * @dev: set to its device number
 *
 * Keep *@loop_fd open until the device-mapper table holds the device, then
 * close it.
 *
 * Return: 0 or an exit code, with the error printed.
 */
int ev_loop_attach(const char *path, int *loop_fd, dev_t *dev);

/* The loop device @dev's backing file (allocated), or NULL. */
char *ev_loop_backing_file(dev_t dev);

/* The /dev path of block device @dev (allocated), from sysfs; or NULL. */
char *ev_blockdev_path(dev_t dev);

#endif /* EXTVERITY_LOOP_H */
