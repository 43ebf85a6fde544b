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

/*
 * Parse the option words of a table line back into *@flags (unknown words
 * are ignored); 0 or -EINVAL.
 */
int ev_table_parse_opt(const char *word, unsigned int *flags);

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

/* Sectors the table maps: the data image's size. */
u64 ev_table_sectors(const struct ev_area *a);

/**
 * ev_table_params() - the target parameters of the table line
 * @a: an area opened by ev_table_open_area()
 * @data: data device as the kernel should see it (path or major:minor)
 * @hash: hash device, likewise
 * @flags: the table options
 *
 * Return: "1 DATA HASH SECTOR ALG ROOT [N OPTS...]", allocated.
 */
char *ev_table_params(const struct ev_area *a, const char *data,
		      const char *hash, unsigned int flags);

#endif /* EXTVERITY_TABLE_H */
