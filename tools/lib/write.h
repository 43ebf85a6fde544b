/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Writing a hash area, and its FEC parity, without leaving a half-written
 * file behind.
 */
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
 * typedef ev_fill_fn - what writes the content of a destination
 * @fd: the destination, open for writing
 * @offset: where the content starts in it
 * @over_old: the content goes over bytes that may hold an older one
 * @arg: the caller's
 * @src_why: set when an error came from reading a source, not from
 *	writing @fd (then the message names it)
 *
 * Return: 0 or -errno.
 */
typedef int (*ev_fill_fn)(int fd, u64 offset, bool over_old, void *arg,
			  const char **src_why);

/* A file written to a temporary name, renamed by ev_write_commit(). */
struct ev_pending_write {
	const char *path;
	char *tmp;
	char *dir;
};

/**
 * ev_write_begin() - write @path at @offset, as far as can be undone
 * @path: the destination file or device
 * @offset: byte offset of the content in it
 * @fill: writes the content
 * @arg: for @fill
 * @pw: set for ev_write_commit() or ev_write_abort()
 *
 * A new or replaced file is written to a temporary file in the same
 * directory, which ev_write_commit() renames over @path: two files can so
 * be written, and both renamed only once both are complete.  An existing
 * file written at a non-zero offset (the image itself, for an appended
 * hash area) is written in place and cut back to its original size on
 * failure.  Devices are written in place.  Both are done when this
 * returns.
 *
 * Return: 0 or EV_EIO, with the error printed.
 */
int ev_write_begin(const char *path, u64 offset, ev_fill_fn fill, void *arg,
		   struct ev_pending_write *pw);
/* Rename the temporary file into place; 0 or EV_EIO, with the error printed. */
int ev_write_commit(struct ev_pending_write *pw);
/* Remove the temporary file, if there is one. */
void ev_write_abort(struct ev_pending_write *pw);

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
 * ev_write_fec_begin() - write the FEC parity of an image and its hash area
 * @path: the FEC file or device
 * @offset: byte offset of the parity in it
 * @image_fd: the data image
 * @data_bytes: its bytes the parity covers (all its blocks)
 * @d: the hash area, as ev_write_area_data() takes it, not yet written:
 *	the parity is computed from it, so that the area and its parity can
 *	be put in place together
 * @block_size: the block size
 * @roots: parity bytes per codeword
 * @threads: encoding threads
 * @pw: as ev_write_begin()
 *
 * Return: 0 or EV_EIO, with the error printed.
 */
int ev_write_fec_begin(const char *path, u64 offset, int image_fd,
		       u64 data_bytes, const struct ev_area_data *d,
		       unsigned int block_size, unsigned int roots,
		       unsigned int threads, struct ev_pending_write *pw);

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
