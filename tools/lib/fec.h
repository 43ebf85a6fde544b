/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reed-Solomon parity in dm-verity's FEC layout (issue 19), and the
 * correction of a block with it: the same codes
 * and the same interleaving, so that the kernel's decode_rs8() with
 * init_rs(8, 0x11d, 0, 1, roots) corrects what this encodes, and so that
 * the parity of a plain dm-verity pair is byte for byte veritysetup's.
 *
 * The covered area is the concatenation of the inputs, zero-padded to
 * whole blocks.  Each codeword of RS(255, 255 - roots) takes one byte, at
 * the same offset, from 255 - roots blocks spread over the whole area:
 * with rounds = ceil(blocks / (255 - roots)), codeword b of round n takes
 * byte b of blocks n, n + rounds, n + 2 * rounds, ...  A burst of bad
 * blocks thus costs each codeword at most a byte or so.  Blocks past the
 * area read as zeros.  The parity holds, for each round and then each
 * byte offset, the codeword's roots parity bytes: rounds * block_size *
 * roots bytes in all.
 */
#ifndef EXTVERITY_FEC_H
#define EXTVERITY_FEC_H

#include <stddef.h>
#include "extverity_compat.h"
#include <linux/dm-extverity.h>

/* The format's limits (veritysetup's and dm-verity's), unsigned. */
#define EV_FEC_RSM		((unsigned int)EXTVERITY_FEC_RSM)
#define EV_FEC_MIN_ROOTS	((unsigned int)EXTVERITY_FEC_MIN_ROOTS)
#define EV_FEC_MAX_ROOTS	((unsigned int)EXTVERITY_FEC_MAX_ROOTS)

/*
 * One part of the covered area: @len bytes from byte @start of @mem when
 * it is not NULL (a hash area not yet written), else of file @fd.
 */
struct ev_fec_input {
	int fd;
	const u8 *mem;
	u64 start;
	u64 len;
};

/*
 * Rounds for an area of @area_bytes, or 0 when @roots or @block_size is
 * out of range or the area is empty.
 */
u64 ev_fec_rounds(u64 area_bytes, unsigned int block_size,
		  unsigned int roots);

/**
 * ev_fec_encode() - compute and write the parity of an area
 * @in: the inputs, in area order
 * @n_in: how many
 * @block_size: block size in bytes, a power of two from 512 to 65536
 * @roots: parity bytes per codeword, EV_FEC_MIN_ROOTS..EV_FEC_MAX_ROOTS
 * @out: where the parity goes
 * @out_start: its first byte in @out
 * @threads: threads to use, at least 1
 * @why: set to what failed, on error
 *
 * Memory: (1 + @roots) * 8 blocks per thread, whatever the area's size.
 *
 * Return: 0, or a negative errno with @why set; @out may then hold part
 * of the parity.
 */
int ev_fec_encode(const struct ev_fec_input *in, size_t n_in,
		  unsigned int block_size, unsigned int roots, int out,
		  u64 out_start, unsigned int threads, const char **why);

/**
 * ev_fec_correct_block() - one block of the area, corrected with its parity
 * @in: the inputs, in area order
 * @n_in: how many
 * @block_size: block size in bytes
 * @roots: parity bytes per codeword
 * @parity: the parity ev_fec_encode() wrote
 * @parity_start: its first byte in @parity
 * @block: the block, counted from the start of the area
 * @out: @block_size bytes: the corrected block
 * @fixed: set to the symbols corrected in the codewords of @block's round
 * @why: set to what failed, on error
 *
 * Each of the block's codewords is decoded, errors only: up to @roots / 2
 * bad bytes each, wherever they are in the codeword.  More may be taken
 * for fewer and "corrected" into another codeword: the caller checks the
 * result against the block's digest.  Memory: 255 blocks.
 *
 * Return: 0, -EBADMSG when a codeword has too many errors, or another
 * negative errno; @why is set on error.
 */
int ev_fec_correct_block(const struct ev_fec_input *in, size_t n_in,
			 unsigned int block_size, unsigned int roots,
			 int parity, u64 parity_start, u64 block, u8 *out,
			 unsigned int *fixed, const char **why);

/*
 * ev_fec_repair()'s report of block @block of the area, corrected to the
 * block_size bytes at @data; 0 or a negative errno, which stops the repair.
 */
typedef int (*ev_fec_fixed_fn)(u64 block, const u8 *data, void *arg);

/**
 * ev_fec_repair() - correct every block of an area its parity can correct
 * @in: the inputs, in area order
 * @n_in: how many
 * @block_size: block size in bytes
 * @roots: parity bytes per codeword
 * @parity: the parity ev_fec_encode() wrote
 * @parity_start: its first byte in @parity
 * @fixed: called, round after round, with each block decoding changed
 * @arg: for @fixed
 * @bad_rounds: set to the rounds with a codeword past repair, whose blocks
 *	are left as they are
 * @why: set to what failed, on error
 *
 * Decodes every codeword of every round (errors only).  As with
 * ev_fec_correct_block(), a codeword with too many errors may decode into
 * another one: the caller checks the result against the digests.
 * Memory: 255 blocks.
 *
 * Return: 0 (@bad_rounds may still be non-zero), or a negative errno.
 */
int ev_fec_repair(const struct ev_fec_input *in, size_t n_in,
		  unsigned int block_size, unsigned int roots, int parity,
		  u64 parity_start, ev_fec_fixed_fn fixed, void *arg,
		  u64 *bad_rounds, const char **why);

#endif /* EXTVERITY_FEC_H */
