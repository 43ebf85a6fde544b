// SPDX-License-Identifier: GPL-2.0
/*
 * extverity verify: check a whole image in userspace against its hash area
 * and root digest, reporting every damaged item.
 */
#include <getopt.h>

#include "extverity.h"
#include "verify.h"

enum { OPT_OFFSET = 256 };

static const struct option longopts[] = {
	{ "hash-offset", required_argument, NULL, OPT_OFFSET },
	{ NULL, 0, NULL, 0 },
};

int ev_cmd_verify(const struct ev_command *cmd, int argc, char *argv[])
{
	bool seen = false;
	struct ev_area a;
	u64 offset = 0;
	int c, err;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c != OPT_OFFSET)
			return ev_usage_error(cmd);
		if (!ev_once(&seen, "hash-offset") ||
		    !ev_parse_offset(optarg, &offset))
			return EV_EUSAGE;
	}
	if (argc - optind != 3)
		return ev_usage_error(cmd);
	err = ev_area_open(&a, argv[optind + 1], offset);
	if (!err)
		err = ev_area_check_root(&a, argv[optind + 2]);
	if (!err)
		err = ev_area_parse(&a);
	if (!err)
		err = ev_area_load(&a);
	if (!err)
		err = ev_verify(&a, argv[optind]);
	if (!err)
		printf("Verification of %s succeeded.\n", argv[optind]);
	ev_area_close(&a);
	return err;
}
