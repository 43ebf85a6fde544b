/* SPDX-License-Identifier: GPL-2.0 */
/* Writing a hash area without leaving a half-written file behind. */
#ifndef EXTVERITY_WRITE_H
#define EXTVERITY_WRITE_H

#include "util.h"

/* @len bytes at @src of a file go to byte @dst of the area. */
struct ev_area_piece {
	u64 dst;
	u64 src;
	u64 len;
};

/**
 * struct ev_area_data - a hash area, its head in memory, the rest in a file
 * @mem: bytes [0, @mem_len) of the area
 * @mem_len: their number
 * @len: bytes of the area
 * @fd: the file the pieces are read from, -1 when there are none
 * @pieces: together they cover [@mem_len, @len - @tail_len) exactly
 * @nr_pieces: their number
 * @tail: bytes [@len - @tail_len, @len) of the area, in memory (the
 *	sections after LEVELS); NULL when @tail_len is 0
 * @tail_len: their number
 *
 * The tree levels are as large as the files' apparent sizes; copying them
 * from a scratch file in bounded chunks keeps memory independent of them.
 */
struct ev_area_data {
	const u8 *mem;
	u64 mem_len;
	u64 len;
	int fd;
	struct ev_area_piece *pieces;
	size_t nr_pieces;
	const u8 *tail;
	u64 tail_len;
};

/**
 * ev_write_area_data() - store a hash area at @offset of @path
 * @path: the hash file or device
 * @offset: byte offset of the hash area in it
 * @d: the area
 *
 * A new or replaced file is written to a temporary file in the same
 * directory and renamed over @path.  An existing file written at a non-zero
 * offset (the image itself, for an appended hash area) is written in place
 * and cut back to its original size on failure.  Devices are written in
 * place.
 *
 * Return: 0 or EV_EIO, with the error printed.
 */
int ev_write_area_data(const char *path, u64 offset,
		       const struct ev_area_data *d);

/**
 * ev_write_area() - store a hash area at @offset of @path
 * @path: the hash file or device
 * @offset: byte offset of the hash area in it
 * @buf: the area, all in memory
 * @len: its length
 *
 * As ev_write_area_data(); for small files too (the root digest file).
 *
 * Return: 0 or EV_EIO, with the error printed.
 */
int ev_write_area(const char *path, u64 offset, const void *buf, size_t len);

#endif /* EXTVERITY_WRITE_H */
