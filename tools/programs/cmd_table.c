// SPDX-License-Identifier: GPL-2.0
/*
 * extverity table: print the device-mapper table line for a hash area,
 * after authenticating its superblock against the root digest.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>

#include "extverity.h"
#include "sig.h"
#include "table.h"

enum { OPT_OFFSET = 256, OPT_SIG_KEY, OPT_ROOT_FILE, OPT_FEC, OPT_TABLE };

int ev_cmd_table(const struct ev_command *cmd, int argc, char *argv[])
{
	struct option longopts[5 + EV_NR_TABLE_OPTS] = {
		{ "hash-offset", required_argument, NULL, OPT_OFFSET },
		{ "root-hash-signature-key", required_argument, NULL,
		  OPT_SIG_KEY },
		{ "root-hash-file", required_argument, NULL, OPT_ROOT_FILE },
		{ "fec-device", required_argument, NULL, OPT_FEC },
	};
	unsigned int flags = 0;
	bool seen_offset = false, seen_sig = false, seen_root = false;
	bool seen_fec = false;
	const char *sig_key = NULL, *root, *root_file = NULL, *fec = NULL;
	char root_buf[EV_ROOT_HEX_SIZE];
	struct ev_area a;
	u64 offset = 0;
	char *params;
	int c, err;

	ev_table_longopts(longopts + 4, OPT_TABLE);
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == OPT_OFFSET) {
			if (!ev_once(&seen_offset, "hash-offset") ||
			    !ev_parse_offset(optarg, &offset))
				return EV_EUSAGE;
		} else if (c == OPT_SIG_KEY) {
			if (!ev_once(&seen_sig, "root-hash-signature-key"))
				return EV_EUSAGE;
			if (!ev_sig_valid_desc(optarg)) {
				ev_error("invalid --root-hash-signature-key "
					 "'%s' (1 to %d printable characters, "
					 "none of space , ; \\)", optarg,
					 EV_SIG_DESC_MAX);
				return EV_EUSAGE;
			}
			sig_key = optarg;
		} else if (c == OPT_ROOT_FILE) {
			if (!ev_once(&seen_root, "root-hash-file"))
				return EV_EUSAGE;
			root_file = optarg;
		} else if (c == OPT_FEC) {
			if (!ev_once(&seen_fec, "fec-device"))
				return EV_EUSAGE;
			if (!*optarg) {
				ev_error("empty FEC device name");
				return EV_EUSAGE;
			}
			fec = optarg;
		} else if (c >= OPT_TABLE &&
			   c < OPT_TABLE + EV_NR_TABLE_OPTS) {
			if (ev_table_add_opt(&flags, c - OPT_TABLE))
				return EV_EUSAGE;
		} else {
			return ev_option_error(cmd, argv, longopts);
		}
	}
	if (!ev_operands(cmd, argc, argv, root_file ? "DATA_DEV HASH_DEV" :
			 "DATA_DEV HASH_DEV ROOT_DIGEST"))
		return EV_EUSAGE;
	root = argv[optind + 2];
	err = ev_root_hash_file_read(root_file, root_buf, sizeof(root_buf),
				     &root);
	if (err)
		return err;
	/* An empty word would shift every argument after it in the line. */
	if (!*argv[optind]) {
		ev_error("empty data device name");
		return EV_EUSAGE;
	}
	err = ev_table_open_area(&a, argv[optind + 1], offset, root);
	if (!err && fec)
		err = ev_table_fec(&a);
	if (err) {
		ev_area_close(&a);
		return err;
	}
	params = ev_table_params(&a, argv[optind], argv[optind + 1], flags,
				 sig_key, fec);
	if (!params) {
		ev_area_close(&a);
		return EV_ENOMEM;
	}
	printf("0 %" PRIu64 " %s %s\n", ev_table_sectors(&a),
	       EXTVERITY_TARGET_NAME, params);
	free(params);
	ev_area_close(&a);
	return 0;
}
