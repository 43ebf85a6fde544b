// SPDX-License-Identifier: GPL-2.0
/*
 * extverity measure: the fs-verity digest of files on an extverity device,
 * computed by the kernel from the authenticated manifest (the target's
 * `measure <inode>` message), printed as `fsverity measure` prints it.
 *
 * Supported: a regular file on ext2/3/4 or XFS mounted directly from the
 * extverity device.  The file's st_dev must be that device and its st_ino
 * the inode number the manifest indexes; everything else is refused with
 * the reason, never answered: a partition or another device-mapper layer
 * over the device (st_dev is then that layer), filesystems whose inode
 * numbers are not the on-disk ones or not unique on the device (btrfs
 * subvolumes, overlayfs, FAT), files on anonymous devices.
 */
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "dm-extverity-format.h"
#include "dm.h"
#include "extverity.h"
#include "loop.h"

enum { OPT_JSON = 256 };

/* What is kept across files. */
struct measure {
	bool json;
	struct json_object *list;
	int dm_err;		/* -1 until device-mapper was set up */
	int rc;			/* the worst exit code so far */
};

/* Filesystems by statfs f_type, for messages. */
static const struct {
	unsigned long magic;
	const char *name;
} fs_names[] = {
	{ EXT4_SUPER_MAGIC, "ext2/3/4" },
	{ XFS_SUPER_MAGIC, "XFS" },
	{ BTRFS_SUPER_MAGIC, "btrfs" },
	{ OVERLAYFS_SUPER_MAGIC, "overlayfs" },
	{ TMPFS_MAGIC, "tmpfs" },
	{ RAMFS_MAGIC, "ramfs" },
	{ MSDOS_SUPER_MAGIC, "FAT" },
	{ SQUASHFS_MAGIC, "squashfs" },
	{ EROFS_SUPER_MAGIC_V1, "EROFS" },
	{ F2FS_SUPER_MAGIC, "F2FS" },
	{ NFS_SUPER_MAGIC, "NFS" },
	{ FUSE_SUPER_MAGIC, "FUSE" },
	{ PROC_SUPER_MAGIC, "proc" },
	{ SYSFS_MAGIC, "sysfs" },
};

static const char *fs_name(unsigned long magic, char *buf, size_t size)
{
	size_t i;

	for (i = 0; i < EV_ARRAY_SIZE(fs_names); i++)
		if (fs_names[i].magic == magic)
			return fs_names[i].name;
	snprintf(buf, size, "type 0x%lx", magic);
	return buf;
}

/*
 * Report @file's failure: on stderr and, with --json, as its entry; the
 * exit code is kept when it is the worst so far.
 */
__printf(4, 5)
static void refuse(struct measure *m, const char *file, int rc,
		   const char *fmt, ...)
{
	struct json_object *j;
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ev_error("%s: %s", file, msg);
	if (rc > m->rc)
		m->rc = rc;
	if (!m->json)
		return;
	j = ev_json_object();
	ev_json_add_str(j, "file", file);
	ev_json_add_str(j, "error", msg);
	ev_json_append(m->list, j);
}

static const char *file_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	return "not a regular file";
}

/*
 * The file's inode, device and filesystem type, through an open file, so
 * that all three are of the same file.  0 or an exit code, reported.
 */
static int file_facts(struct measure *m, const char *file, struct stat *st,
		      struct statfs *sf)
{
	int fd;

	/* Not opened unless it is a regular file: a FIFO would block. */
	if (stat(file, st)) {
		refuse(m, file, EV_EIO, "cannot stat: %s", strerror(errno));
		return EV_EIO;
	}
	if (!S_ISREG(st->st_mode))
		goto not_regular;
	fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		refuse(m, file, EV_EIO, "cannot open: %s", strerror(errno));
		return EV_EIO;
	}
	if (fstat(fd, st) || fstatfs(fd, sf)) {
		refuse(m, file, EV_EIO, "cannot stat: %s", strerror(errno));
		close(fd);
		return EV_EIO;
	}
	close(fd);
	if (S_ISREG(st->st_mode))
		return 0;
not_regular:
	refuse(m, file, EV_EUSAGE, "is %s; only regular files have an "
	       "fs-verity digest", file_kind(st->st_mode));
	return EV_EUSAGE;
}

/*
 * The extverity device @file is on, by its st_dev: in *@name.  0 or an
 * exit code, reported.
 */
static int find_device(struct measure *m, const char *file,
		       const struct stat *st, const struct statfs *sf,
		       char **name)
{
	unsigned int ma = major(st->st_dev), mi = minor(st->st_dev), nr;
	struct ev_dm_target t;
	char fsbuf[32], *path;
	int err;

	*name = NULL;
	if (!ma) {
		refuse(m, file, EV_EUSAGE, "not on an extverity device "
		       "(st_dev %u:%u is an anonymous device of a %s "
		       "filesystem, not a block device)", ma, mi,
		       fs_name(sf->f_type, fsbuf, sizeof(fsbuf)));
		return EV_EUSAGE;
	}
	if (!ev_dm_is_dm_major(ma)) {
		path = ev_blockdev_path(st->st_dev);
		refuse(m, file, EV_EUSAGE, "not on an extverity device "
		       "(st_dev %u:%u is %s, not a device-mapper device)",
		       ma, mi, path ? path : "a block device");
		free(path);
		return EV_EUSAGE;
	}
	if (m->dm_err < 0)
		m->dm_err = ev_dm_init();
	if (m->dm_err) {
		refuse(m, file, m->dm_err, "cannot ask the kernel: "
		       "device-mapper is not available (measure needs root)");
		return m->dm_err;
	}
	err = ev_dm_devno_table(ma, mi, name, &nr, &t);
	if (err) {
		refuse(m, file, EV_EIO, "cannot read the table of device-mapper device "
		       "%u:%u: %s%s", ma, mi, strerror(-err),
		       err == -EPERM || err == -EACCES ?
		       " (measure needs root)" : "");
		return EV_EIO;
	}
	if (nr != 1 || strcmp(t.type, EXTVERITY_TARGET_NAME)) {
		char what[128];

		if (nr == 1)
			snprintf(what, sizeof(what), "a '%s' target", t.type);
		else
			snprintf(what, sizeof(what), "%u targets", nr);
		refuse(m, file, EV_EUSAGE, "not on an extverity device "
		       "(st_dev %u:%u is device-mapper device %s, %s; "
		       "measure needs the filesystem directly on an "
		       "extverity device, not on a partition or another "
		       "layer over one)", ma, mi, *name, what);
		ev_dm_target_free(&t);
		free(*name);
		*name = NULL;
		return EV_EUSAGE;
	}
	ev_dm_target_free(&t);
	return 0;
}

/*
 * Check the kernel's answer, "sha256:HEX" or "sha512:HEX", and split it;
 * false when it is not that.
 */
static bool parse_answer(char *r, const char **alg, const char **hex)
{
	char *colon = strchr(r, ':');
	size_t len;

	len = strlen(r);
	while (len && (r[len - 1] == '\n' || r[len - 1] == ' '))
		r[--len] = '\0';
	if (!colon)
		return false;
	*colon = '\0';
	*alg = r;
	*hex = colon + 1;
	len = strlen(*hex);
	if (strspn(*hex, "0123456789abcdef") != len)
		return false;
	return (!strcmp(r, "sha256") && len == 64) ||
	       (!strcmp(r, "sha512") && len == 128);
}

static void measure_one(struct measure *m, const char *file)
{
	const char *alg, *hex;
	char msg[64], fsbuf[32], *name, *answer;
	struct statfs sf;
	struct stat st;
	u64 ino;
	int err;

	if (file_facts(m, file, &st, &sf) ||
	    find_device(m, file, &st, &sf, &name))
		return;
	ino = st.st_ino;
	/*
	 * On the device itself, the inode numbers must still be those the
	 * manifest indexes: on-disk numbers, unique on the device.  EROFS
	 * numbers an inode by its on-disk position (nid) on 64-bit kernels.
	 */
	if (sf.f_type != EXT4_SUPER_MAGIC && sf.f_type != XFS_SUPER_MAGIC &&
	    sf.f_type != EROFS_SUPER_MAGIC_V1) {
		refuse(m, file, EV_EUSAGE, "a %s filesystem on extverity "
		       "device %s: measure supports ext2/3/4, XFS and EROFS, "
		       "whose inode numbers are those of the manifest",
		       fs_name(sf.f_type, fsbuf, sizeof(fsbuf)), name);
		free(name);
		return;
	}
	snprintf(msg, sizeof(msg), "measure %" PRIu64, ino);
	err = ev_dm_message(name, msg, &answer);
	switch (-err) {
	case 0:
		if (!parse_answer(answer, &alg, &hex)) {
			refuse(m, file, EV_EIO, "unexpected answer from the "
			       "kernel to '%s' on %s", msg, name);
			break;
		}
		if (!m->json) {
			printf("%s:%s %s\n", alg, hex, file);
			break;
		}
		{
			struct json_object *j = ev_json_object();
			char digest[2 * EXTVERITY_MAX_DIGEST_SIZE + 16];

			snprintf(digest, sizeof(digest), "%s:%s", alg, hex);
			ev_json_add_str(j, "file", file);
			ev_json_add_str(j, "digest", digest);
			ev_json_add_str(j, "algorithm", alg);
			ev_json_add_u64(j, "inode", ino);
			ev_json_add_str(j, "device", name);
			ev_json_append(m->list, j);
		}
		break;
	case ENOENT:
		refuse(m, file, EV_EUSAGE, "inode %" PRIu64 " is not a "
		       "regular file in the extverity manifest of %s", ino,
		       name);
		break;
	case ENODATA:
		refuse(m, file, EV_EUSAGE, "the hash area of %s has no inode "
		       "index; re-format it with extverity %s or later",
		       name, EXTVERITY_VERSION);
		break;
	case EINVAL:
		refuse(m, file, EV_EUSAGE, "the extverity target of %s does "
		       "not answer '%s' (a module older than this tool?)",
		       name, msg);
		break;
	case EPERM:
	case EACCES:
		refuse(m, file, EV_EIO, "asking the kernel needs root "
		       "(CAP_SYS_ADMIN): %s", strerror(-err));
		break;
	default:
		refuse(m, file, -err == ENOMEM ? EV_ENOMEM : EV_EIO,
		       "the kernel did not answer '%s' on %s: %s", msg, name,
		       strerror(-err));
		break;
	}
	free(answer);
	free(name);
}

int ev_cmd_measure(const struct ev_command *cmd, int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ NULL, 0, NULL, 0 },
	};
	struct measure m = { .dm_err = -1 };
	int c, i;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c != OPT_JSON)
			return ev_option_error(cmd, argv, longopts);
		if (!ev_once(&m.json, "json"))
			return EV_EUSAGE;
	}
	if (optind >= argc) {
		ev_error("measure: missing FILE (expected FILE...)");
		ev_usage(cmd, stderr);
		return EV_EUSAGE;
	}
	if (m.json)
		m.list = ev_json_array();
	for (i = optind; i < argc; i++)
		measure_one(&m, argv[i]);
	if (m.json)
		ev_json_print(m.list);
	return m.rc;
}
