// SPDX-License-Identifier: GPL-2.0
/*
 * extverity open: authenticate the hash area, attach image files to loop
 * devices and create the device-mapper device, as `veritysetup open`.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "dm.h"
#include "extverity.h"
#include "loop.h"
#include "sig.h"
#include "table.h"

enum {
	OPT_OFFSET = 256, OPT_JSON, OPT_SIG, OPT_ROOT_FILE, OPT_FEC, OPT_TABLE
};

/* The longest name device-mapper takes (DM_NAME_LEN - 1). */
#define EV_DM_NAME_MAX 127

/* stat() @path; 0, or an exit code for a missing or unusable one. */
static int check_dev(const char *path, struct stat *st)
{
	if (stat(path, st)) {
		ev_error("cannot access %s: %s", path, strerror(errno));
		return EV_EIO;
	}
	if (!S_ISBLK(st->st_mode) && !S_ISREG(st->st_mode)) {
		ev_error("%s is neither a block device nor a regular file",
			 path);
		return EV_EUSAGE;
	}
	return 0;
}

static bool check_name(const char *name)
{
	if (!*name || strlen(name) > EV_DM_NAME_MAX || strchr(name, '/') ||
	    !strcmp(name, ".") || !strcmp(name, "..")) {
		ev_error("invalid device name '%s' (1 to %d characters, no "
			 "'/')", name, EV_DM_NAME_MAX);
		return false;
	}
	return true;
}

/* A block device as is; a regular file on a new loop device (*@fd). */
static int get_dev(const char *path, const struct stat *st, int *fd,
		   dev_t *dev)
{
	if (S_ISBLK(st->st_mode)) {
		*dev = st->st_rdev;
		return 0;
	}
	return ev_loop_attach(path, fd, dev);
}

static void print_json(const char *name, const char *table)
{
	struct json_object *j = ev_json_object();
	char *dev = xmalloc(strlen(name) + 13);

	sprintf(dev, "/dev/mapper/%s", name);
	ev_json_add_str(j, "name", name);
	ev_json_add_str(j, "device", dev);
	ev_json_add_str(j, "table", table);
	ev_json_print(j);
	free(dev);
}

/*
 * The device-mapper UUID of device @name over the area with UUID @u:
 * "EXTVERITY-<UUID, 32 hex digits>-<name>", cut at EV_DM_UUID_MAX, as
 * veritysetup names its devices "CRYPT-VERITY-<UUID>-<name>": udev, lsblk
 * and systemd tell the device's kind and its hash area by it.
 */
static void dm_uuid(const u8 u[16], const char *name,
		    char out[EV_DM_UUID_MAX + 1])
{
	char hex[33];

	ev_bin2hex(u, 16, hex);
	snprintf(out, EV_DM_UUID_MAX + 1, "EXTVERITY-%s-%s", hex, name);
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return S_ISREG(a->st_mode) && S_ISREG(b->st_mode) &&
	       a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/*
 * Everything but option parsing; @args: DATA NAME HASH ROOT_DIGEST;
 * @sig: the root digest's signature file, or NULL; @fec: the FEC device
 * (a file or a block device), or NULL.
 */
static int do_open(const char *args[], u64 offset, unsigned int flags,
		   bool json, const char *sig, const char *fec)
{
	const char *data = args[0], *name = args[1], *hash = args[2];
	char dstr[32], hstr[32], fstr[32], *params = NULL, *table = NULL;
	char uuid[EV_DM_UUID_MAX + 1];
	char *sig_desc = NULL;
	int32_t sig_key = 0;
	int dfd = -1, hfd = -1, ffd = -1, err;
	struct stat dst, hst, fst;
	struct ev_dm_info info;
	bool has_target;
	dev_t ddev, hdev, fdev;
	struct ev_area a;

	if (!check_name(name))
		return EV_EUSAGE;
	err = check_dev(data, &dst);
	if (!err)
		err = check_dev(hash, &hst);
	if (!err && fec)
		err = check_dev(fec, &fst);
	if (err)
		return err;
	/* A wrong digest is told here, before the kernel is involved. */
	err = ev_table_open_area(&a, hash, offset, args[3]);
	if (!err && fec)
		err = ev_table_fec(&a);
	if (!err && sig) {
		sig_desc = ev_sig_desc_for(name);
		err = ev_sig_load(sig, sig_desc, &sig_key);
	}
	if (!err)
		err = ev_dm_init();
	if (!err)
		err = ev_dm_info(name, &info);
	if (!err && info.exists) {
		ev_error("device %s already exists", name);
		err = EV_EBUSY;
	}
	if (!err)
		err = ev_dm_has_target(EXTVERITY_TARGET_NAME, &has_target);
	if (!err && !has_target) {
		ev_error("dm-extverity target not available (load "
			 "dm-extverity.ko)");
		err = EV_EIO;
	}
	if (!err)
		err = get_dev(data, &dst, &dfd, &ddev);
	if (!err && same_file(&dst, &hst))
		hdev = ddev;	/* hash area appended: one loop device */
	else if (!err)
		err = get_dev(hash, &hst, &hfd, &hdev);
	/* Parity appended to the image or the hash file: its loop device. */
	if (!err && fec && same_file(&fst, &dst))
		fdev = ddev;
	else if (!err && fec && same_file(&fst, &hst))
		fdev = hdev;
	else if (!err && fec)
		err = get_dev(fec, &fst, &ffd, &fdev);
	if (err)
		goto out;
	snprintf(dstr, sizeof(dstr), "%u:%u", major(ddev), minor(ddev));
	snprintf(hstr, sizeof(hstr), "%u:%u", major(hdev), minor(hdev));
	if (fec)
		snprintf(fstr, sizeof(fstr), "%u:%u", major(fdev),
			 minor(fdev));
	params = ev_table_params(&a, dstr, hstr, flags, sig_desc,
				 fec ? fstr : NULL);
	if (!params) {
		err = EV_ENOMEM;
		goto out;
	}
	dm_uuid(a.sb.uuid, name, uuid);
	err = ev_dm_create(name, uuid, ev_table_sectors(&a),
			   EXTVERITY_TARGET_NAME, params);
	if (!err && json) {
		table = xmalloc(strlen(params) + 64);
		sprintf(table, "0 %" PRIu64 " %s %s", ev_table_sectors(&a),
			EXTVERITY_TARGET_NAME, params);
		print_json(name, table);
	}
out:
	/* Only the table load reads the key. */
	if (sig_key)
		ev_sig_unload(sig_key);
	/* The table holds the loop devices now; autoclear frees them after. */
	if (dfd >= 0)
		close(dfd);
	if (hfd >= 0)
		close(hfd);
	if (ffd >= 0)
		close(ffd);
	free(params);
	free(table);
	free(sig_desc);
	ev_area_close(&a);
	return err;
}

int ev_cmd_open(const struct ev_command *cmd, int argc, char *argv[])
{
	struct option longopts[6 + EV_NR_TABLE_OPTS] = {
		{ "hash-offset", required_argument, NULL, OPT_OFFSET },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "root-hash-signature", required_argument, NULL, OPT_SIG },
		{ "root-hash-file", required_argument, NULL, OPT_ROOT_FILE },
		{ "fec-device", required_argument, NULL, OPT_FEC },
	};
	bool seen_offset = false, json = false, seen_sig = false;
	bool seen_root = false, seen_fec = false;
	const char *sig = NULL, *root_file = NULL, *fec = NULL;
	char root_buf[EV_ROOT_HEX_SIZE];
	const char *args[4];
	int err;
	unsigned int flags = 0;
	u64 offset = 0;
	int c;

	ev_table_longopts(longopts + 5, OPT_TABLE);
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == OPT_OFFSET) {
			if (!ev_once(&seen_offset, "hash-offset") ||
			    !ev_parse_offset(optarg, &offset))
				return EV_EUSAGE;
		} else if (c == OPT_JSON) {
			if (!ev_once(&json, "json"))
				return EV_EUSAGE;
		} else if (c == OPT_SIG) {
			if (!ev_once(&seen_sig, "root-hash-signature"))
				return EV_EUSAGE;
			sig = optarg;
		} else if (c == OPT_ROOT_FILE) {
			if (!ev_once(&seen_root, "root-hash-file"))
				return EV_EUSAGE;
			root_file = optarg;
		} else if (c == OPT_FEC) {
			if (!ev_once(&seen_fec, "fec-device"))
				return EV_EUSAGE;
			fec = optarg;
		} else if (c >= OPT_TABLE &&
			   c < OPT_TABLE + EV_NR_TABLE_OPTS) {
			if (ev_table_add_opt(&flags, c - OPT_TABLE))
				return EV_EUSAGE;
		} else {
			return ev_option_error(cmd, argv, longopts);
		}
	}
	if (!ev_operands(cmd, argc, argv, root_file ? "DATA NAME HASH" :
			 "DATA NAME HASH ROOT_DIGEST"))
		return EV_EUSAGE;
	memcpy(args, argv + optind, 3 * sizeof(*args));
	args[3] = argv[optind + 3];
	err = ev_root_hash_file_read(root_file, root_buf, sizeof(root_buf),
				     &args[3]);
	if (err)
		return err;
	return do_open(args, offset, flags, json, sig, fec);
}
