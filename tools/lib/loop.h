/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Block devices for `extverity open`: attaching a file to a read-only,
 * autoclearing loop device, and what sysfs says about a device.
 */
#ifndef EXTVERITY_LOOP_H
#define EXTVERITY_LOOP_H

#include <sys/types.h>

/**
 * ev_loop_attach() - attach a file to a free loop device
 * @path: the file
 * @loop_fd: set to an open descriptor of the loop device
 * @dev: set to its device number
 *
 * The device is read-only and autoclears: it goes away when its last user
 * closes it.  Keep *@loop_fd open until the device-mapper table holds the
 * device, then close it.
 *
 * Return: 0 or an exit code, with the error printed.
 */
int ev_loop_attach(const char *path, int *loop_fd, dev_t *dev);

/* The loop device @dev's backing file (allocated), or NULL. */
char *ev_loop_backing_file(dev_t dev);

/* The /dev path of block device @dev (allocated), from sysfs; or NULL. */
char *ev_blockdev_path(dev_t dev);

#endif /* EXTVERITY_LOOP_H */
