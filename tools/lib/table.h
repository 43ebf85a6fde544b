/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The device-mapper table line of an extverity device (docs/table.md):
 * its options, and the line itself, shared by `extverity table` and
 * `extverity open`.
 */
#ifndef EXTVERITY_TABLE_H
#define EXTVERITY_TABLE_H

#include "read.h"

/* The table options, in canonical order (the order dmsetup table prints). */
enum ev_table_opt {
	EV_OPT_IGNORE_CORRUPTION,
	EV_OPT_RESTART_ON_CORRUPTION,
	EV_OPT_PANIC_ON_CORRUPTION,
	EV_OPT_RESTART_ON_ERROR,
	EV_OPT_PANIC_ON_ERROR,
	EV_OPT_CHECK_AT_MOST_ONCE,
	EV_OPT_USE_TASKLETS,
	EV_NR_TABLE_OPTS,
};

/**
 * struct ev_table_opt_info - one table option
 * @option: the command-line option, without "--"
 * @param: the word on the table line
 * @group: options of the same non-zero group exclude each other
 */
struct ev_table_opt_info {
	const char *option;
	const char *param;
	unsigned int group;
};

extern const struct ev_table_opt_info ev_table_opts[EV_NR_TABLE_OPTS];

/*
 * Add option @opt to the set *@flags (a bit per enum ev_table_opt);
 * 0, or EV_EUSAGE with the error printed for a repeated or conflicting one.
 */
int ev_table_add_opt(unsigned int *flags, enum ev_table_opt opt);

/**
 * struct ev_table_line - the target parameters of a table line
 * @version: the format version
 * @data: data device (path or major:minor), allocated
 * @hash: hash device, allocated
 * @hash_sector: start of the hash area, in 512-byte sectors
 * @alg: hash algorithm name
 * @root: root digest, hex
 * @flags: the table options, a bit per enum ev_table_opt
 * @sig_key: root_hash_sig_key_desc's argument, allocated, or NULL
 * @fec_dev: use_fec_from_device's argument, allocated, or NULL (then the
 *	three below are 0)
 * @fec_roots: fec_roots
 * @fec_blocks: fec_blocks
 * @fec_start: fec_start
 */
struct ev_table_line {
	unsigned int version;
	char *data;
	char *hash;
	u64 hash_sector;
	char alg[16];
	char root[2 * EXTVERITY_MAX_DIGEST_SIZE + 1];
	unsigned int flags;
	char *sig_key;
	char *fec_dev;
	u64 fec_roots;
	u64 fec_blocks;
	u64 fec_start;
};

/*
 * "1 DATA HASH SECTOR ALG ROOT [N OPTS...]", allocated.  Whitespace and
 * backslashes in the device names, the algorithm and the key description
 * are escaped with a backslash, as the kernel's dm_split_args() expects;
 * none of the words may be empty.  NULL, with the error printed, when there
 * is no memory for it.
 */
char *ev_table_format(const struct ev_table_line *t);

/*
 * Parse the target parameters of a table line (as the kernel prints them
 * or ev_table_format() makes them) into @t; 0 or -EINVAL.  Free @t with
 * ev_table_line_free() in both cases.  The option count must match the
 * words that follow, and every option must be known and given once.
 */
int ev_table_parse(const char *params, struct ev_table_line *t);
void ev_table_line_free(struct ev_table_line *t);

/*
 * The status line of the target: "V|C VERIFIED CORRUPT ZERO [CORRECTED
 * [PAIRED [SPLIT]]]" (@has_corrected: the target counts blocks corrected by
 * FEC; @has_paired: blocks hashed two at a time; @has_split: reads verified
 * in two halves).
 */
struct ev_target_status {
	char health;
	u64 verified;
	u64 corrupt;
	u64 zero;
	u64 corrected;
	u64 paired;
	u64 split;
	bool has_corrected;
	bool has_paired;
	bool has_split;
};

/* Parse a status line into @st; 0 or -EINVAL. */
int ev_status_parse(const char *params, struct ev_target_status *st);

/**
 * struct ev_damage - one line of the target's answer to `corrupted`
 * @inode: the file's inode, 0 for metadata (and other blocks of the
 *	residual tree)
 * @offset: first bad byte seen: in the file, or for metadata on the data
 *	device
 * @blocks: bad blocks seen in it
 */
struct ev_damage {
	u64 inode;
	u64 offset;
	u64 blocks;
};

/**
 * ev_damage_parse() - parse the answer to the `corrupted` message
 * @answer: "INODE OFFSET BLOCKS" lines in order of detection, possibly a
 *	last line "more N" (files past the target's bound)
 * @v: set to the lines, allocated (NULL when there are none)
 * @n: set to their number
 * @more: set to N, or 0
 *
 * Return: 0, or -EINVAL (nothing allocated) when a line is not one of those.
 */
int ev_damage_parse(const char *answer, struct ev_damage **v, size_t *n,
		    u64 *more);

/**
 * ev_table_open_area() - open and authenticate the hash area for a table
 * @a: filled in; close with ev_area_close() even on failure
 * @hash: the hash file or device
 * @offset: byte offset of the hash area in it
 * @root_hex: the root digest
 *
 * Opens the area, checks the superblock against @root_hex, validates it and
 * checks that @offset is a multiple of its block size.
 *
 * Return: 0 or an exit code, with the error printed.
 */
int ev_table_open_area(struct ev_area *a, const char *hash, u64 offset,
		       const char *root_hex);

/*
 * Load the FEC record of an area opened by ev_table_open_area(), for a
 * table line with FEC; 0 or an exit code (EV_EUSAGE when it has none),
 * with the error printed.
 */
int ev_table_fec(struct ev_area *a);

/* Sectors the table maps: the data image's size. */
u64 ev_table_sectors(const struct ev_area *a);

/**
 * ev_table_params() - the target parameters of the table line
 * @a: an area opened by ev_table_open_area()
 * @data: data device as the kernel should see it (path or major:minor)
 * @hash: hash device, likewise
 * @flags: the table options
 * @sig_key_desc: description of the key holding the root digest's
 *	signature (root_hash_sig_key_desc), or NULL
 * @fec: FEC device as the kernel should see it, or NULL; the code and
 *	where its parity is come from @a's FEC record (ev_area_load_fec())
 *
 * Return: "1 DATA HASH SECTOR ALG ROOT [N OPTS...]", allocated; NULL,
 * with the error printed, when there is no memory for it.
 */
char *ev_table_params(const struct ev_area *a, const char *data,
		      const char *hash, unsigned int flags,
		      const char *sig_key_desc, const char *fec);

#endif /* EXTVERITY_TABLE_H */
