// SPDX-License-Identifier: GPL-2.0
/*
 * libdevmapper calls.  With udev running, each change carries a udev
 * cookie and we wait for udev to make /dev/mapper/NAME; without it (an
 * initramfs, a container) udev synchronisation is turned off and the
 * library makes and removes the nodes itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <libdevmapper.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "dm.h"

static bool use_udev;
static bool quiet;

/* libdevmapper's errors, as ours. */
__printf(5, 6)
static void dm_log(int level, const char *file, int line, int dm_errno,
		   const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if ((quiet || (level & 7) > LOG_ERR) && ev_verbosity < 2)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* --debug: all of libdevmapper's messages, as debug lines. */
	if (ev_verbosity >= 2 && (quiet || (level & 7) > LOG_ERR)) {
		ev_debug("libdevmapper: %s", msg);
		return;
	}
	if (strncmp(msg, "device-mapper: ", 15))
		ev_error("device-mapper: %s", msg);
	else
		ev_error("%s", msg);
}

int ev_dm_init(void)
{
	char version[64];
	int ok;

	dm_log_with_errno_init(dm_log);
	/* Both talk to the kernel: our own message says what failed. */
	quiet = true;
	use_udev = dm_udev_get_sync_support() &&
		   !access("/run/udev/control", F_OK);
	if (!use_udev)
		dm_udev_set_sync_support(0);
	ok = dm_driver_version(version, sizeof(version));
	quiet = false;
	if (!ok) {
		ev_error("device-mapper is not available: cannot use "
			 "/dev/mapper/control (not root, or dm-mod not loaded)");
		return EV_EIO;
	}
	return 0;
}

static int errno_code(int err)
{
	switch (err) {
	case ENOMEM:
		return EV_ENOMEM;
	case EBUSY:
	case EEXIST:
		return EV_EBUSY;
	case ENXIO:
	case ENODEV:
	case ENOENT:
	case EIO:
	case EACCES:
	case EPERM:
		return EV_EIO;
	default:
		return EV_EUSAGE;
	}
}

/*
 * A libdevmapper task of @type on device @name (NULL: none) in *@dmt; 0, or
 * an exit code with the error printed.
 */
static int task(int type, const char *name, struct dm_task **dmt)
{
	*dmt = dm_task_create(type);
	if (!*dmt) {
		ev_error("out of memory for a device-mapper request");
		return EV_ENOMEM;
	}
	/* libdevmapper has said why (a name too long, most likely). */
	if (name && !dm_task_set_name(*dmt, name)) {
		dm_task_destroy(*dmt);
		*dmt = NULL;
		return EV_EUSAGE;
	}
	return 0;
}

int ev_dm_info(const char *name, struct ev_dm_info *info)
{
	struct dm_task *dmt;
	struct dm_info di;
	int err;

	memset(info, 0, sizeof(*info));
	err = task(DM_DEVICE_INFO, name, &dmt);
	if (err)
		return err;
	if (!dm_task_run(dmt) || !dm_task_get_info(dmt, &di)) {
		ev_error("cannot get information about device %s", name);
		err = errno_code(dm_task_get_errno(dmt));
	} else {
		info->exists = di.exists;
		info->open_count = di.open_count;
		info->major = di.major;
		info->minor = di.minor;
		info->read_only = di.read_only;
	}
	dm_task_destroy(dmt);
	return err;
}

int ev_dm_target(const char *name, bool status, struct ev_dm_target *t)
{
	struct dm_task *dmt;
	char *type = NULL, *params = NULL;
	uint64_t start, len;
	void *next;
	int err;

	memset(t, 0, sizeof(*t));
	err = task(status ? DM_DEVICE_STATUS : DM_DEVICE_TABLE, name, &dmt);
	if (err)
		return err;
	if (!dm_task_run(dmt)) {
		ev_error("cannot read the table of device %s", name);
		err = errno_code(dm_task_get_errno(dmt));
		goto out;
	}
	next = dm_get_next_target(dmt, NULL, &start, &len, &type, &params);
	if (!type || next) {
		ev_error("device %s does not have exactly one target", name);
		err = EV_EUSAGE;
		goto out;
	}
	t->start = start;
	t->len = len;
	t->type = xstrdup(type);
	t->params = xstrdup(params ? params : "");
out:
	dm_task_destroy(dmt);
	return err;
}

void ev_dm_target_free(struct ev_dm_target *t)
{
	free(t->type);
	free(t->params);
	memset(t, 0, sizeof(*t));
}

/* Set *@found to whether the kernel lists target @type; 0 or an exit code. */
static int target_listed(const char *type, bool *found)
{
	struct dm_task *dmt;
	struct dm_versions *v, *last;
	int err;

	*found = false;
	err = task(DM_DEVICE_LIST_VERSIONS, NULL, &dmt);
	if (err)
		return err;
	if (dm_task_run(dmt)) {
		v = dm_task_get_versions(dmt);
		do {
			last = v;
			if (!strcmp(v->name, type))
				*found = true;
			v = (void *)((char *)v + v->next);
		} while (!*found && last != v);
	}
	dm_task_destroy(dmt);
	return 0;
}

/* Run `modprobe -q dm-TYPE` quietly; any failure is the caller's to see. */
static void modprobe(const char *type)
{
	char module[128];
	int status, fd;
	pid_t pid;

	snprintf(module, sizeof(module), "dm-%s", type);
	pid = fork();
	if (pid == 0) {
		fd = open("/dev/null", O_RDWR);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execlp("modprobe", "modprobe", "-q", module, (char *)NULL);
		execl("/sbin/modprobe", "modprobe", "-q", module, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
}

int ev_dm_has_target(const char *type, bool *has)
{
	int err = target_listed(type, has);

	if (err || *has)
		return err;
	modprobe(type);
	return target_listed(type, has);
}

/* Open /dev/kmsg at its end, to read what the kernel says next; or -1. */
static int kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

/* Print the device-mapper lines the kernel logged since kmsg_open(). */
static int kmsg_print(int fd)
{
	char rec[2048], *msg, *nl;
	int n = 0;
	ssize_t len;

	for (;;) {
		len = read(fd, rec, sizeof(rec) - 1);
		if (len < 0 && errno == EPIPE)
			continue;	/* overwritten records: skip them */
		if (len <= 0)
			break;
		rec[len] = '\0';
		msg = strchr(rec, ';');
		if (!msg || !strstr(msg, "device-mapper"))
			continue;
		msg++;
		nl = strchr(msg, '\n');
		if (nl)
			*nl = '\0';
		ev_error("kernel: %s", msg);
		n++;
	}
	return n;
}

/* Wait for udev to process @cookie's events, or update the nodes. */
static void sync_nodes(uint32_t cookie)
{
	if (use_udev)
		dm_udev_wait(cookie);
	else
		dm_task_update_nodes();
}

int ev_dm_create(const char *name, const char *uuid, u64 sectors,
		 const char *type, const char *params)
{
	struct dm_task *dmt;
	struct ev_dm_info info;
	uint32_t cookie = 0;
	int err, kmsg;

	err = task(DM_DEVICE_CREATE, name, &dmt);
	if (err)
		return err;
	ev_debug("creating %s (UUID %s): 0 %llu %s %s", name,
		 uuid ? uuid : "none", (unsigned long long)sectors, type,
		 params);
	if (!dm_task_set_ro(dmt) || (uuid && !dm_task_set_uuid(dmt, uuid)) ||
	    !dm_task_add_target(dmt, 0, sectors, type, params) ||
	    (use_udev && !dm_task_set_cookie(dmt, &cookie, 0))) {
		dm_task_destroy(dmt);
		ev_error("cannot prepare the table of %s", name);
		return EV_ENOMEM;
	}
	kmsg = kmsg_open();
	if (!dm_task_run(dmt))
		err = errno_code(dm_task_get_errno(dmt));
	sync_nodes(cookie);
	dm_task_destroy(dmt);
	if (err) {
		bool said = kmsg >= 0 && kmsg_print(kmsg);

		if (err == EV_EBUSY)
			ev_error("cannot create %s: the name is taken or a "
				 "device it needs is in use", name);
		else
			ev_error("the kernel refused the table of %s%s", name,
				 said ? "" : " (see dmesg)");
		/*
		 * libdevmapper removes a device whose table failed; make sure.
		 * A busy name may be another's device: leave that alone.
		 */
		if (err != EV_EBUSY && !ev_dm_info(name, &info) && info.exists)
			ev_dm_remove(name, false);
	}
	if (kmsg >= 0)
		close(kmsg);
	return err;
}

int ev_dm_remove(const char *name, bool deferred)
{
	struct dm_task *dmt;
	uint32_t cookie = 0;
	int err;

	err = task(DM_DEVICE_REMOVE, name, &dmt);
	if (err)
		return err;
	ev_debug("removing %s%s", name, deferred ? " (deferred)" : "");
	/* udev (blkid) may hold the device for a moment after a change. */
	if (use_udev)
		dm_task_retry_remove(dmt);
	if ((deferred && !dm_task_deferred_remove(dmt)) ||
	    (use_udev && !dm_task_set_cookie(dmt, &cookie, 0))) {
		dm_task_destroy(dmt);
		return EV_ENOMEM;
	}
	if (!dm_task_run(dmt))
		err = errno_code(dm_task_get_errno(dmt));
	sync_nodes(cookie);
	dm_task_destroy(dmt);
	return err;
}

bool ev_dm_is_dm_major(unsigned int major)
{
	return dm_is_dm_major(major);
}

/* -errno of a failed task: its ioctl's, else EIO. */
static int task_errno(struct dm_task *dmt)
{
	int e = dm_task_get_errno(dmt);

	return e > 0 ? -e : -EIO;
}

int ev_dm_devno_table(unsigned int major, unsigned int minor, char **name,
		      unsigned int *nr_targets, struct ev_dm_target *t)
{
	struct dm_task *dmt;
	char *type = NULL, *params = NULL;
	uint64_t start, len;
	void *next = NULL;
	int err = 0;

	*name = NULL;
	*nr_targets = 0;
	memset(t, 0, sizeof(*t));
	dmt = dm_task_create(DM_DEVICE_TABLE);
	if (!dmt)
		return -ENOMEM;
	quiet = true;
	if (!dm_task_set_major_minor(dmt, major, minor, 0)) {
		err = -ENOMEM;
	} else if (!dm_task_run(dmt)) {
		err = task_errno(dmt);
	} else {
		*name = xstrdup(dm_task_get_name(dmt) ? dm_task_get_name(dmt) : "");
		do {
			next = dm_get_next_target(dmt, next, &start, &len,
						  &type, &params);
			if (!type)
				break;
			if (!(*nr_targets)++) {
				t->start = start;
				t->len = len;
				t->type = xstrdup(type);
				t->params = xstrdup(params ? params : "");
			}
		} while (next);
	}
	quiet = false;
	dm_task_destroy(dmt);
	return err;
}

int ev_dm_message(const char *name, const char *msg, char **response)
{
	struct dm_task *dmt;
	const char *r;
	int err = 0;

	*response = NULL;
	dmt = dm_task_create(DM_DEVICE_TARGET_MSG);
	if (!dmt)
		return -ENOMEM;
	ev_debug("message to %s: %s", name, msg);
	/* A refusal is the target's answer: the caller says what it means. */
	quiet = true;
	if (!dm_task_set_name(dmt, name) || !dm_task_set_sector(dmt, 0) ||
	    !dm_task_set_message(dmt, msg))
		err = -ENOMEM;
	else if (!dm_task_run(dmt))
		err = task_errno(dmt);
	quiet = false;
	if (!err) {
		r = dm_task_get_message_response(dmt);
		*response = xstrdup(r ? r : "");
	}
	dm_task_destroy(dmt);
	return err;
}
