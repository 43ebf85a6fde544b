// SPDX-License-Identifier: GPL-2.0
/*
 * The table line of an extverity device.  One definition of the options
 * serves the command line (table, open) and the parsing of a loaded
 * table (status).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"

const struct ev_table_opt_info ev_table_opts[EV_NR_TABLE_OPTS] = {
	[EV_OPT_IGNORE_CORRUPTION] = {
		"ignore-corruption", "ignore_corruption", 1 },
	[EV_OPT_RESTART_ON_CORRUPTION] = {
		"restart-on-corruption", "restart_on_corruption", 1 },
	[EV_OPT_PANIC_ON_CORRUPTION] = {
		"panic-on-corruption", "panic_on_corruption", 1 },
	[EV_OPT_RESTART_ON_ERROR] = {
		"restart-on-error", "restart_on_error", 2 },
	[EV_OPT_PANIC_ON_ERROR] = {
		"panic-on-error", "panic_on_error", 2 },
	[EV_OPT_CHECK_AT_MOST_ONCE] = {
		"check-at-most-once", "check_at_most_once", 0 },
};

int ev_table_add_opt(unsigned int *flags, enum ev_table_opt opt)
{
	unsigned int group = ev_table_opts[opt].group;
	int i;

	if (*flags & (1U << opt)) {
		ev_error("option --%s given more than once",
			 ev_table_opts[opt].option);
		return EV_EUSAGE;
	}
	for (i = 0; group && i < EV_NR_TABLE_OPTS; i++) {
		if ((*flags & (1U << i)) && ev_table_opts[i].group == group) {
			ev_error("--%s and --%s exclude each other",
				 ev_table_opts[opt].option,
				 ev_table_opts[i].option);
			return EV_EUSAGE;
		}
	}
	*flags |= 1U << opt;
	return 0;
}

int ev_table_parse_opt(const char *word, unsigned int *flags)
{
	int i;

	for (i = 0; i < EV_NR_TABLE_OPTS; i++) {
		if (!strcmp(word, ev_table_opts[i].param)) {
			*flags |= 1U << i;
			return 0;
		}
	}
	return -EINVAL;
}

int ev_table_open_area(struct ev_area *a, const char *hash, u64 offset,
		       const char *root_hex)
{
	int err;

	err = ev_area_open(a, hash, offset);
	if (!err)
		err = ev_area_check_root(a, root_hex);
	if (!err)
		err = ev_area_parse(a);
	if (!err && offset % a->p.block_size) {
		ev_error("--hash-offset %" PRIu64 " is not a multiple of the "
			 "block size %u", offset, a->p.block_size);
		err = EV_EUSAGE;
	}
	return err;
}

u64 ev_table_sectors(const struct ev_area *a)
{
	return a->p.data_blocks << (a->p.log_blocksize - 9);
}

char *ev_table_params(const struct ev_area *a, const char *data,
		      const char *hash, unsigned int flags)
{
	char root[2 * EXTVERITY_MAX_DIGEST_SIZE + 1];
	char *line = NULL;
	size_t size = 0;
	FILE *fp;
	int i, n = 0;

	fp = open_memstream(&line, &size);
	if (!fp) {
		ev_error("out of memory");
		exit(EV_ENOMEM);
	}
	ev_bin2hex(a->root, a->p.digest_size, root);
	fprintf(fp, "1 %s %s %" PRIu64 " %s %s", data, hash, a->offset / 512,
		extverity_hash_name(a->p.hash_algorithm), root);
	for (i = 0; i < EV_NR_TABLE_OPTS; i++)
		n += !!(flags & (1U << i));
	if (n)
		fprintf(fp, " %d", n);
	for (i = 0; i < EV_NR_TABLE_OPTS; i++)
		if (flags & (1U << i))
			fprintf(fp, " %s", ev_table_opts[i].param);
	if (fclose(fp) || !line) {
		ev_error("out of memory");
		exit(EV_ENOMEM);
	}
	return line;
}
