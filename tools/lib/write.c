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
#include "fec.h"
#include "write.h"

/* Bytes copied from the scratch file at a time. */
#define COPY_CHUNK	(1024 * 1024)

/* ev_write_area_data()'s source: the area, and a buffer for its pieces. */
struct area_src {
	const struct ev_area_data *d;
	u8 *buf;
};

/*
 * Write the area at @offset of @fd, copying its pieces through a buffer of
 * COPY_CHUNK bytes; an ev_fill_fn.
 *
 * The superblock goes last, once what it describes is on disk, and with
 * @over_old (an area written over one that may be there) the old one is
 * zeroed first: a write that fails or is interrupted half-way leaves no
 * superblock that describes what is not there.
 */
static int fill_area(int fd, u64 offset, bool over_old, void *arg,
		     const char **src_why)
{
	static const u8 zero[sizeof(struct extverity_superblock)];
	const struct area_src *a = arg;
	const struct ev_area_data *d = a->d;
	u64 sb = d->mem_len < sizeof(zero) ? d->mem_len : sizeof(zero);
	size_t i;
	int err = 0;

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
			err = ev_pread(d->fd, a->buf, n, pc->src + done);
			if (err) {
				*src_why = "cannot read the scratch file of "
					   "the hash trees";
				break;
			}
			err = ev_pwrite(fd, a->buf, n, offset + pc->dst + done);
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

static void write_error(const char *path, int err, const char *src_why)
{
	if (src_why)
		ev_error("%s: %s", src_why, strerror(-err));
	else
		ev_error("cannot write %s: %s", path, strerror(-err));
}

static int write_in_place(const char *path, u64 offset, ev_fill_fn fill,
			  void *arg, bool is_dev)
{
	struct stat st;
	int fd = open(path, O_WRONLY);
	const char *src_why = NULL;
	int err;

	if (fd < 0 || fstat(fd, &st)) {
		ev_error("cannot open %s for writing: %s", path,
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		return EV_EIO;
	}
	/* A device, or a file written before its end, may hold an area. */
	err = fill(fd, offset, is_dev || offset < (u64)st.st_size, arg,
		   &src_why);
	if (!err && fsync(fd))
		err = -errno;
	if (err) {
		write_error(path, err, src_why);
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

/* Write a temporary file next to @path, for ev_write_commit() to rename. */
static int write_temp(const char *path, u64 offset, ev_fill_fn fill,
		      void *arg, struct ev_pending_write *pw)
{
	char *copy = xstrdup(path);
	const char *dir = dirname(copy);
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	mode_t mask = umask(0);
	const char *src_why = NULL;
	char *tmp;
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
	err = fill(fd, offset, false, arg, &src_why);
	if (!err && fchmod(fd, 0666 & ~mask))
		err = -errno;
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (err) {
		write_error(path, err, src_why);
		unlink(tmp);
		free(copy);
		free(tmp);
		return EV_EIO;
	}
	pw->path = path;
	pw->tmp = tmp;
	pw->dir = xstrdup(dir);	/* dirname() may return static storage */
	free(copy);
	return 0;
}

int ev_write_begin(const char *path, u64 offset, ev_fill_fn fill, void *arg,
		   struct ev_pending_write *pw)
{
	struct stat st;
	bool exists = !stat(path, &st);

	memset(pw, 0, sizeof(*pw));
	if (exists && S_ISBLK(st.st_mode))
		return write_in_place(path, offset, fill, arg, true);
	if (exists && !S_ISREG(st.st_mode)) {
		ev_error("%s is not a regular file or block device", path);
		return EV_EIO;
	}
	if (exists && offset)
		return write_in_place(path, offset, fill, arg, false);
	return write_temp(path, offset, fill, arg, pw);
}

int ev_write_commit(struct ev_pending_write *pw)
{
	int err = 0;

	if (!pw->tmp)
		return 0;
	if (rename(pw->tmp, pw->path)) {
		ev_error("cannot write %s: %s", pw->path, strerror(errno));
		ev_write_abort(pw);
		return EV_EIO;
	}
	/*
	 * The rename is durable only once the directory is: without this, a
	 * crash may leave the old file, or none, after format said it was done.
	 */
	err = sync_dir(pw->dir);
	if (err)
		ev_error("cannot sync directory %s after writing %s: %s",
			 pw->dir, pw->path, strerror(-err));
	free(pw->tmp);
	free(pw->dir);
	pw->tmp = NULL;
	pw->dir = NULL;
	return err ? EV_EIO : 0;
}

void ev_write_abort(struct ev_pending_write *pw)
{
	if (pw->tmp)
		unlink(pw->tmp);
	free(pw->tmp);
	free(pw->dir);
	pw->tmp = NULL;
	pw->dir = NULL;
}

int ev_write_area_data(const char *path, u64 offset,
		       const struct ev_area_data *d)
{
	struct ev_pending_write pw;
	struct area_src a = { .d = d };
	int err;

	/*
	 * Allocated before anything is written: the allocators exit when
	 * memory runs out (util.h), which must not happen once a temporary
	 * file exists or an area is half-written in place.
	 */
	a.buf = d->nr_pieces ? xmalloc(COPY_CHUNK) : NULL;
	err = ev_write_begin(path, offset, fill_area, &a, &pw);
	if (!err)
		err = ev_write_commit(&pw);
	free(a.buf);
	return err;
}

/* ev_write_fec_begin()'s source: the covered area, as ev_fec_encode() reads it. */
struct fec_src {
	struct ev_fec_input *in;
	size_t n_in;
	unsigned int block_size;
	unsigned int roots;
	unsigned int threads;
};

static int fill_fec(int fd, u64 offset, bool over_old, void *arg,
		    const char **src_why)
{
	const struct fec_src *f = arg;

	(void)over_old;
	return ev_fec_encode(f->in, f->n_in, f->block_size, f->roots, fd,
			     offset, f->threads, src_why);
}

int ev_write_fec_begin(const char *path, u64 offset, int image_fd,
		       u64 data_bytes, const struct ev_area_data *d,
		       unsigned int block_size, unsigned int roots,
		       unsigned int threads, struct ev_pending_write *pw)
{
	struct fec_src f = { .block_size = block_size, .roots = roots,
			     .threads = threads };
	u64 at = d->mem_len;
	size_t i;
	int err;

	f.in = xcalloc(d->nr_pieces + 3, sizeof(*f.in));
	f.in[f.n_in++] = (struct ev_fec_input){ .fd = image_fd,
						.len = data_bytes };
	f.in[f.n_in++] = (struct ev_fec_input){ .mem = d->mem,
						.len = d->mem_len };
	for (i = 0; i < d->nr_pieces; i++) {
		const struct ev_area_piece *pc = &d->pieces[i];

		/* The parity follows the area's order; a gap would shift it. */
		if (pc->dst != at) {
			ev_error("internal error: hash area pieces out of order");
			free(f.in);
			return EV_EIO;
		}
		f.in[f.n_in++] = (struct ev_fec_input){ .fd = d->fd,
							.start = pc->src,
							.len = pc->len };
		at += pc->len;
	}
	if (d->tail_len)
		f.in[f.n_in++] = (struct ev_fec_input){ .mem = d->tail,
							.len = d->tail_len };
	if (at + d->tail_len != d->len) {
		ev_error("internal error: hash area pieces do not cover it");
		free(f.in);
		return EV_EIO;
	}
	err = ev_write_begin(path, offset, fill_fec, &f, pw);
	free(f.in);
	return err;
}

int ev_write_area(const char *path, u64 offset, const void *buf, size_t len)
{
	struct ev_area_data d = { .mem = buf, .mem_len = len, .len = len,
				  .fd = -1 };

	return ev_write_area_data(path, offset, &d);
}
