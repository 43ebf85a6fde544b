// SPDX-License-Identifier: GPL-2.0
/*
 * extverity table: print the device-mapper table line for a hash area,
 * after authenticating its superblock against the root digest.
 */
#include <getopt.h>
#include <inttypes.h>

#include "extverity.h"
#include "read.h"

enum {
	OPT_OFFSET = 256, OPT_IGNORE_CORR, OPT_RESTART_CORR, OPT_PANIC_CORR,
	OPT_RESTART_ERR, OPT_PANIC_ERR, OPT_ONCE,
};

static const struct option longopts[] = {
	{ "hash-offset", required_argument, NULL, OPT_OFFSET },
	{ "ignore-corruption", no_argument, NULL, OPT_IGNORE_CORR },
	{ "restart-on-corruption", no_argument, NULL, OPT_RESTART_CORR },
	{ "panic-on-corruption", no_argument, NULL, OPT_PANIC_CORR },
	{ "restart-on-error", no_argument, NULL, OPT_RESTART_ERR },
	{ "panic-on-error", no_argument, NULL, OPT_PANIC_ERR },
	{ "check-at-most-once", no_argument, NULL, OPT_ONCE },
	{ NULL, 0, NULL, 0 },
};

/* Table parameter of each flag option, in option order. */
static const char *const params[] = {
	NULL, "ignore_corruption", "restart_on_corruption",
	"panic_on_corruption", "restart_on_error", "panic_on_error",
	"check_at_most_once",
};

int ev_cmd_table(const struct ev_command *cmd, int argc, char *argv[])
{
	bool seen[EV_ARRAY_SIZE(params)] = { false };
	const char *corr = NULL, *error = NULL;
	char root[2 * EXTVERITY_MAX_DIGEST_SIZE + 1];
	struct ev_area a;
	u64 offset = 0;
	int c, err, n;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c < OPT_OFFSET)
			return ev_usage_error(cmd);
		if (!ev_once(&seen[c - OPT_OFFSET],
			     longopts[c - OPT_OFFSET].name))
			return EV_EUSAGE;
		switch (c) {
		case OPT_OFFSET:
			if (!ev_parse_offset(optarg, &offset))
				return EV_EUSAGE;
			break;
		case OPT_IGNORE_CORR:
		case OPT_RESTART_CORR:
		case OPT_PANIC_CORR:
			if (corr) {
				ev_error("--%s and --%s exclude each other",
					 longopts[c - OPT_OFFSET].name, corr);
				return EV_EUSAGE;
			}
			corr = longopts[c - OPT_OFFSET].name;
			break;
		case OPT_RESTART_ERR:
		case OPT_PANIC_ERR:
			if (error) {
				ev_error("--%s and --%s exclude each other",
					 longopts[c - OPT_OFFSET].name, error);
				return EV_EUSAGE;
			}
			error = longopts[c - OPT_OFFSET].name;
			break;
		}
	}
	if (argc - optind != 3)
		return ev_usage_error(cmd);
	err = ev_area_open(&a, argv[optind + 1], offset);
	if (!err)
		err = ev_area_check_root(&a, argv[optind + 2]);
	if (!err)
		err = ev_area_parse(&a);
	if (!err && offset % a.p.block_size) {
		ev_error("--hash-offset %" PRIu64 " is not a multiple of the "
			 "block size %u", offset, a.p.block_size);
		err = EV_EUSAGE;
	}
	if (err) {
		ev_area_close(&a);
		return err;
	}
	ev_bin2hex(a.root, a.p.digest_size, root);
	printf("0 %" PRIu64 " %s 1 %s %s %" PRIu64 " %s %s",
	       a.p.data_blocks << (a.p.log_blocksize - 9),
	       EXTVERITY_TARGET_NAME, argv[optind], argv[optind + 1],
	       offset / 512, extverity_hash_name(a.p.hash_algorithm), root);
	for (n = 0, c = 1; c < (int)EV_ARRAY_SIZE(params); c++)
		n += seen[c];
	if (n) {
		printf(" %d", n);
		for (c = 1; c < (int)EV_ARRAY_SIZE(params); c++)
			if (seen[c])
				printf(" %s", params[c]);
	}
	printf("\n");
	ev_area_close(&a);
	return 0;
}
