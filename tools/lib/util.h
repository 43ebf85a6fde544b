/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small helpers shared by the extverity tool: error reporting with the
 * veritysetup-like exit codes, aborting allocators, whole-buffer I/O, hex.
 */
#ifndef EXTVERITY_UTIL_H
#define EXTVERITY_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "extverity_compat.h"

/* Exit codes, as veritysetup's. */
enum {
	EV_OK = 0,
	EV_EUSAGE = 1,		/* bad parameters, root mismatch, not ours */
	EV_ECORRUPT = 2,	/* verification found damage */
	EV_ENOMEM = 3,
	EV_EIO = 4,		/* cannot open, read or write */
	EV_EBUSY = 5,
};

#define EV_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static inline uint64_t ev_div_round_up(uint64_t n, uint64_t d)
{
	return (n + d - 1) / d;
}

/**
 * ev_error() - print "extverity: <message>" on stderr
 * @fmt: printf format of the message, without the trailing newline
 */
__printf(1, 2) void ev_error(const char *fmt, ...);

/* 0 quiet, 1 --verbose, 2 --debug: set once by main(). */
extern int ev_verbosity;

/*
 * ev_debug() - with --debug, print "# <message>" on stderr, as veritysetup
 * prints its debug lines
 */
__printf(1, 2) void ev_debug(const char *fmt, ...);

/*
 * Allocators that print an error and exit with EV_ENOMEM on failure: the
 * one point where library code exits instead of returning an error.  They
 * are called from some eighty places, most deep in loops that have no other
 * error path (a path list growing, a tree's top), on Linux where an
 * overcommitting kernel rarely lets malloc() fail at all; giving each an
 * error path would add far more untested code than it would save.  Exiting
 * is safe because nothing the tool writes can be left half-done by it:
 * format's scratch file is unlinked from the start, its output goes to a
 * temporary file renamed into place or over a zeroed superblock, and
 * ev_write_area_data() allocates before it creates or writes anything.
 * Everything else (OpenSSL, libdevmapper, a stream in memory) returns its
 * errors to the caller.
 */
void *xmalloc(size_t size);
void *xzalloc(size_t size);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t size);
char *xstrdup(const char *s);
/* Grow *@p (of *@cap elements of @size bytes) to hold at least @n. */
void xgrow(void **p, size_t *cap, size_t n, size_t size);

/**
 * ev_pread() - read exactly @len bytes at @off
 * @fd: file
 * @buf: destination
 * @len: bytes to read
 * @off: file offset
 *
 * Return: 0, or -errno (-EIO for a short file).
 */
int ev_pread(int fd, void *buf, size_t len, u64 off);
/*
 * Read @len bytes at @off, or up to end of file with the rest of @buf
 * zeroed (what fs-verity hashes for a file's last block); 0 or -errno.
 */
int ev_pread_padded(int fd, void *buf, size_t len, u64 off);
/* Write exactly @len bytes at @off; 0 or -errno. */
int ev_pwrite(int fd, const void *buf, size_t len, u64 off);

/* Lower-case hex of @len bytes into @hex (2 * @len + 1 bytes). */
void ev_bin2hex(const u8 *bin, size_t len, char *hex);
/*
 * Parse an even-length hex string of at most @max bytes; returns 0 and sets
 * *@len, or -EINVAL.
 */
int ev_hex2bin(const char *hex, u8 *bin, size_t max, size_t *len);
/* Parse a decimal unsigned 64-bit number, rejecting junk; 0 or -EINVAL. */
int ev_parse_u64(const char *s, u64 *v);
/*
 * Parse a data block size (1024, 2048 or 4096) into its log2; 0 or
 * -EINVAL.
 */
int ev_parse_block_size(const char *s, unsigned int *log_blocksize);
/*
 * Parse a salt: hex digits (an even number, at most @max bytes), or "-" or
 * "" for none; 0 with *@len set, or -EINVAL.
 */
int ev_parse_salt(const char *s, u8 *salt, size_t max, size_t *len);
/* Parse / print a UUID in the 8-4-4-4-12 form. */
int ev_parse_uuid(const char *s, u8 uuid[16]);
void ev_format_uuid(const u8 uuid[16], char out[37]);
/* Fill @buf with random bytes from getrandom(); 0 or -errno. */
int ev_random(void *buf, size_t len);
/* True when all @len bytes are zero. */
bool ev_is_zero(const void *buf, size_t len);

#endif /* EXTVERITY_UTIL_H */
