// SPDX-License-Identifier: GPL-2.0
/*
 * Writing the hash area atomically: either the whole area is in place, or
 * the destination is as it was.
 */
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dm-extverity-format.h"
#include "write.h"

/* Bytes copied from the scratch file at a time. */
#define COPY_CHUNK	(1024 * 1024)

/*
 * Write @d at @offset of @fd, copying its pieces through @buf (COPY_CHUNK
 * bytes, or NULL when there are none); 0 or -errno, with *@scratch saying
 * whether the error was reading the scratch file (true) or writing @fd.
 *
 * The superblock goes last, once what it describes is on disk, and with
 * @over_old (an area written over one that may be there) the old one is
 * zeroed first: a write that fails or is interrupted half-way leaves no
 * superblock that describes what is not there.
 */
static int write_all(int fd, u64 offset, const struct ev_area_data *d,
		     bool over_old, u8 *buf, bool *scratch)
{
	static const u8 zero[sizeof(struct extverity_superblock)];
	u64 sb = d->mem_len < sizeof(zero) ? d->mem_len : sizeof(zero);
	size_t i;
	int err = 0;

	*scratch = false;
	if (over_old) {
		err = ev_pwrite(fd, zero, sb, offset);
		if (!err && fdatasync(fd))
			err = -errno;
	}
	if (!err)
		err = ev_pwrite(fd, d->mem + sb, d->mem_len - sb, offset + sb);
	for (i = 0; !err && i < d->nr_pieces; i++) {
		const struct ev_area_piece *pc = &d->pieces[i];
		u64 done, n;

		for (done = 0; !err && done < pc->len; done += n) {
			n = pc->len - done > COPY_CHUNK ? COPY_CHUNK :
			    pc->len - done;
			err = ev_pread(d->fd, buf, n, pc->src + done);
			if (err) {
				*scratch = true;
				break;
			}
			err = ev_pwrite(fd, buf, n, offset + pc->dst + done);
		}
	}
	if (!err && d->tail_len)
		err = ev_pwrite(fd, d->tail, d->tail_len,
				offset + d->len - d->tail_len);
	if (!err && fdatasync(fd))
		err = -errno;
	if (!err)
		err = ev_pwrite(fd, d->mem, sb, offset);
	return err;
}

static void write_error(const char *path, int err, bool scratch)
{
	if (scratch)
		ev_error("cannot read the scratch file of the hash trees: %s",
			 strerror(-err));
	else
		ev_error("cannot write %s: %s", path, strerror(-err));
}

static int write_in_place(const char *path, u64 offset,
			  const struct ev_area_data *d, bool is_dev, u8 *buf)
{
	struct stat st;
	int fd = open(path, O_WRONLY);
	bool scratch = false;
	int err;

	if (fd < 0 || fstat(fd, &st)) {
		ev_error("cannot open %s for writing: %s", path,
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		return EV_EIO;
	}
	/* A device, or a file written before its end, may hold an area. */
	err = write_all(fd, offset, d, is_dev || offset < (u64)st.st_size,
			buf, &scratch);
	if (!err && fsync(fd))
		err = -errno;
	if (err) {
		write_error(path, err, scratch);
		/*
		 * Give the file back its original length.  An area it held
		 * past @offset is gone: its superblock was zeroed first.
		 */
		if (!is_dev && ftruncate(fd, st.st_size))
			ev_error("cannot restore the size of %s: %s", path,
				 strerror(errno));
		close(fd);
		return EV_EIO;
	}
	if (close(fd)) {
		ev_error("cannot write %s: %s", path, strerror(errno));
		return EV_EIO;
	}
	return 0;
}

/* fsync() directory @dir: 0 or -errno. */
static int sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int err = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd))
		err = -errno;
	close(fd);
	return err;
}

static int write_replace(const char *path, u64 offset,
			 const struct ev_area_data *d, u8 *buf)
{
	char *copy = xstrdup(path), *tmp;
	const char *dir = dirname(copy);
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	mode_t mask = umask(0);
	bool scratch = false;
	int fd, err;

	umask(mask);
	tmp = xmalloc(strlen(dir) + strlen(base) + 16);
	sprintf(tmp, "%s/.%s.XXXXXX", dir, base);
	fd = mkstemp(tmp);
	if (fd < 0) {
		ev_error("cannot create a file next to %s: %s", path,
			 strerror(errno));
		free(copy);
		free(tmp);
		return EV_EIO;
	}
	err = write_all(fd, offset, d, false, buf, &scratch);
	if (!err && fchmod(fd, 0666 & ~mask))
		err = -errno;
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		write_error(path, err, scratch);
		unlink(tmp);
		free(copy);
		free(tmp);
		return EV_EIO;
	}
	free(tmp);
	/*
	 * The rename is durable only once the directory is: without this, a
	 * crash may leave the old file, or none, after format said it was done.
	 */
	err = sync_dir(dir);
	if (err)
		ev_error("cannot sync directory %s after writing %s: %s", dir,
			 path, strerror(-err));
	free(copy);
	return err ? EV_EIO : 0;
}

int ev_write_area_data(const char *path, u64 offset,
		       const struct ev_area_data *d)
{
	struct stat st;
	bool exists = !stat(path, &st);
	u8 *buf;
	int err;

	/*
	 * Allocated before anything is written: the allocators exit when
	 * memory runs out (util.h), which must not happen once a temporary
	 * file exists or an area is half-written in place.
	 */
	buf = d->nr_pieces ? xmalloc(COPY_CHUNK) : NULL;
	if (exists && S_ISBLK(st.st_mode)) {
		err = write_in_place(path, offset, d, true, buf);
	} else if (exists && !S_ISREG(st.st_mode)) {
		ev_error("%s is not a regular file or block device", path);
		err = EV_EIO;
	} else if (exists && offset) {
		err = write_in_place(path, offset, d, false, buf);
	} else {
		err = write_replace(path, offset, d, buf);
	}
	free(buf);
	return err;
}

int ev_write_area(const char *path, u64 offset, const void *buf, size_t len)
{
	struct ev_area_data d = { .mem = buf, .mem_len = len, .len = len,
				  .fd = -1 };

	return ev_write_area_data(path, offset, &d);
}
