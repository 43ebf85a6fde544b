/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Device-mapper through libdevmapper, for open, close and status: udev
 * synchronisation when udev runs, device nodes made by the library when it
 * does not, and libdevmapper's messages in the tool's own format.
 */
#ifndef EXTVERITY_DM_H
#define EXTVERITY_DM_H

#include <stdbool.h>
#include "util.h"

/* What DM_DEVICE_INFO says about a device. */
struct ev_dm_info {
	bool exists;
	int open_count;
	unsigned int major, minor;
	bool read_only;
};

/* The single target of a table or its status (all allocated). */
struct ev_dm_target {
	u64 start, len;
	char *type;
	char *params;
};

/*
 * Set libdevmapper up and check that device-mapper can be used; 0, or
 * EV_EIO with the error printed.
 */
int ev_dm_init(void);

/* 0 and *@info, or an exit code with the error printed. */
int ev_dm_info(const char *name, struct ev_dm_info *info);

/**
 * ev_dm_target() - the table (or status) of a device with one target
 * @name: the device
 * @status: true for the status line (STATUSTYPE_INFO), false for the table
 * @t: filled in; free with ev_dm_target_free()
 *
 * Return: 0, EV_EUSAGE when the device has not exactly one target, or an
 * exit code, with the error printed.
 */
int ev_dm_target(const char *name, bool status, struct ev_dm_target *t);
void ev_dm_target_free(struct ev_dm_target *t);

/*
 * Set *@has to whether the kernel knows target @type, after trying
 * `modprobe dm-<type>` once when it does not; 0, or an exit code with the
 * error printed when it cannot be asked.
 */
int ev_dm_has_target(const char *type, bool *has);

/**
 * ev_dm_create() - create a read-only device with one target
 * @name: device name (/dev/mapper/@name)
 * @uuid: its device-mapper UUID (at most EV_DM_UUID_MAX bytes), or NULL
 * @sectors: target length
 * @type: target type
 * @params: target parameters
 *
 * When the kernel refuses the table, its log lines (the reason) are
 * printed when /dev/kmsg can be read.  Nothing is left on failure.
 *
 * Return: 0 or an exit code (EV_EBUSY: the name is taken), with the error
 * printed.
 */
int ev_dm_create(const char *name, const char *uuid, u64 sectors,
		 const char *type, const char *params);

/* Longest device-mapper UUID (DM_UUID_LEN less its NUL). */
#define EV_DM_UUID_MAX 128

/*
 * Remove device @name; 0 or an exit code (EV_EBUSY: in use).  @deferred:
 * if it is open, have the kernel remove it on its last close instead.
 */
int ev_dm_remove(const char *name, bool deferred);

/* True when @major is device-mapper's block major (/proc/devices). */
bool ev_dm_is_dm_major(unsigned int major);

/**
 * ev_dm_devno_table() - the table of the device-mapper device @major:@minor
 * @major: its major
 * @minor: its minor
 * @name: set to its name, allocated
 * @nr_targets: set to its number of targets
 * @t: its first target (type and params NULL when it has none); free with
 *	ev_dm_target_free()
 *
 * Return: 0, or -errno of the failed request (nothing printed).
 */
int ev_dm_devno_table(unsigned int major, unsigned int minor, char **name,
		      unsigned int *nr_targets, struct ev_dm_target *t);

/**
 * ev_dm_message() - send a target message, as `dmsetup message NAME 0 MSG`
 * @name: the device
 * @msg: the message
 * @response: set to the target's answer, allocated ("" when it gave none)
 *
 * Return: 0, or -errno of the failed ioctl (nothing printed: the target's
 * errno is its answer, for the caller to explain).
 */
int ev_dm_message(const char *name, const char *msg, char **response);

#endif /* EXTVERITY_DM_H */
