// SPDX-License-Identifier: GPL-2.0
/*
 * extverity verify: check a whole image in userspace against its hash area
 * and root digest, reporting every damaged item.
 */
#include <getopt.h>
#include <inttypes.h>

#include "extverity.h"
#include "progress.h"
#include "verify.h"

enum { OPT_OFFSET = 256, OPT_PROGRESS, OPT_JSON, OPT_ROOT_FILE };

static const struct option longopts[] = {
	{ "hash-offset", required_argument, NULL, OPT_OFFSET },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "root-hash-file", required_argument, NULL, OPT_ROOT_FILE },
	{ NULL, 0, NULL, 0 },
};

/*
 * One object whatever the outcome once the area is loaded, so a script can
 * tell "verified" from "corrupted" without parsing stderr.
 */
static void print_json(const char *image, const struct ev_verify_result *r,
		       int err)
{
	fputs("{\"image\": ", stdout);
	ev_json_string(image);
	printf(", \"verified\": %s, \"corrupted_items\": %" PRIu64
	       ", \"data_bytes\": %" PRIu64 "}\n", err ? "false" : "true",
	       r->corrupted, r->data_bytes);
}

int ev_cmd_verify(const struct ev_command *cmd, int argc, char *argv[])
{
	bool seen[4] = { false }, json = false, progress = false;
	char root_buf[EV_ROOT_HEX_SIZE];
	const char *root, *root_file = NULL;
	struct ev_verify_result res = { 0 };
	struct ev_area a;
	u64 offset = 0;
	int c, err;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c < OPT_OFFSET)
			return ev_option_error(cmd, argv, longopts);
		if (!ev_once(&seen[c - OPT_OFFSET], longopts[c - OPT_OFFSET].name))
			return EV_EUSAGE;
		if (c == OPT_OFFSET && !ev_parse_offset(optarg, &offset))
			return EV_EUSAGE;
		if (c == OPT_ROOT_FILE)
			root_file = optarg;
		json |= c == OPT_JSON;
		progress |= c == OPT_PROGRESS;
	}
	if (!ev_operands(cmd, argc, argv, root_file ? "IMAGE HASHFILE" :
			 "IMAGE HASHFILE ROOT_DIGEST"))
		return EV_EUSAGE;
	root = argv[optind + 2];
	if (root_file) {
		err = ev_root_hash_file_read(root_file, root_buf,
					     sizeof(root_buf));
		if (err)
			return err;
		root = root_buf;
	}
	ev_progress_setup(progress);
	err = ev_area_open(&a, argv[optind + 1], offset);
	if (!err)
		err = ev_area_check_root(&a, root);
	if (!err)
		err = ev_area_parse(&a);
	if (!err)
		err = ev_area_load(&a);
	if (!err) {
		err = ev_verify(&a, argv[optind], &res);
		if (json && (!err || err == EV_ECORRUPT))
			print_json(argv[optind], &res, err);
	}
	if (!err && !json)
		printf("Verification of %s succeeded.\n", argv[optind]);
	ev_area_close(&a);
	return err;
}
