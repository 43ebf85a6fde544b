/* SPDX-License-Identifier: GPL-2.0 */
/* Writing a hash area without leaving a half-written file behind. */
#ifndef EXTVERITY_WRITE_H
#define EXTVERITY_WRITE_H

#include "util.h"

/**
 * ev_write_area() - store a hash area at @offset of @path
 * @path: the hash file or device
 * @offset: byte offset of the hash area in it
 * @buf: the area
 * @len: its length
 *
 * A new or replaced file is written to a temporary file in the same
 * directory and renamed over @path.  An existing file written at a non-zero
 * offset (the image itself, for an appended hash area) is written in place
 * and cut back to its original size on failure.  Devices are written in
 * place.
 *
 * Return: 0 or EV_EIO, with the error printed.
 */
int ev_write_area(const char *path, u64 offset, const void *buf, size_t len);

#endif /* EXTVERITY_WRITE_H */
