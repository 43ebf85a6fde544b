// SPDX-License-Identifier: GPL-2.0
/*
 * extverity close: remove a device made by `extverity open`.  Its loop
 * devices, set to autoclear, go away with it.
 */
#include <getopt.h>
#include <string.h>

#include "dm.h"
#include "dm-extverity-format.h"
#include "extverity.h"

/* Not a letter: -d is no short option, and must be named as unknown. */
enum { OPT_DEFERRED = 256 };

int ev_cmd_close(const struct ev_command *cmd, int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "deferred", no_argument, NULL, OPT_DEFERRED },
		{ NULL, 0, NULL, 0 },
	};
	bool deferred = false;
	struct ev_dm_target t;
	struct ev_dm_info info;
	const char *name;
	int c, err;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c != OPT_DEFERRED)
			return ev_option_error(cmd, argv, longopts);
		if (!ev_once(&deferred, "deferred"))
			return EV_EUSAGE;
	}
	if (!ev_operands(cmd, argc, argv, "NAME"))
		return EV_EUSAGE;
	name = argv[optind];
	err = ev_dm_init();
	if (!err)
		err = ev_dm_info(name, &info);
	if (err)
		return err;
	if (!info.exists) {
		ev_error("device %s is not active", name);
		return EV_EIO;
	}
	err = ev_dm_target(name, false, &t);
	if (err)
		return err;
	if (strcmp(t.type, EXTVERITY_TARGET_NAME)) {
		ev_error("device %s is not an extverity device (target %s)",
			 name, t.type);
		err = EV_EUSAGE;
	} else if (info.open_count > 0 && !deferred) {
		ev_error("device %s is in use (mounted or open)", name);
		err = EV_EBUSY;
	} else {
		/* Deferred: the kernel removes it on its last close. */
		err = ev_dm_remove(name, deferred);
		if (err == EV_EBUSY)
			ev_error("device %s is in use (mounted or open)", name);
		else if (err)
			ev_error("cannot remove device %s", name);
	}
	ev_dm_target_free(&t);
	return err;
}
