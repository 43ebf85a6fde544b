// SPDX-License-Identifier: GPL-2.0
/*
 * Reading a filesystem image that libext2fs cannot: attach it read-only to
 * a loop device, mount it read-only, walk it, and ask FS_IOC_FIEMAP where
 * each regular file's data lives.
 *
 * FIEMAP is only a hint.  A file's content is always what a reader of the
 * mounted file sees (tree.c reads it through the mount), and an image block
 * goes to a file's tree only when its bytes, read from the image, equal that
 * content.  So a mapping that is not a plain copy of the data (compressed,
 * inline, btrfs addresses that are not device offsets, a tail with bytes
 * past EOF) can never put a block under the wrong digest: it stays in the
 * residual tree.  Free space is not known here, so every block that no file
 * owns is residual too (no zero ranges).
 *
 * The mount is made in a mount namespace of our own and detached as soon as
 * its root is open: the filesystem is then reachable only through that one
 * descriptor, and its last close, even by the process dying, unmounts it
 * and (LO_FLAGS_AUTOCLEAR) frees the loop device.
 */
#include <fcntl.h>
#include <fts.h>
#include <linux/btrfs.h>
#include <linux/btrfs_tree.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "fs.h"
#include "loop.h"

/* Extents whose bytes on disk are not simply the file's bytes. */
#define EV_NOT_PLAIN	(FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC | \
			 FIEMAP_EXTENT_ENCODED |			\
			 FIEMAP_EXTENT_DATA_ENCRYPTED |			\
			 FIEMAP_EXTENT_NOT_ALIGNED |			\
			 FIEMAP_EXTENT_DATA_INLINE |			\
			 FIEMAP_EXTENT_DATA_TAIL | FIEMAP_EXTENT_UNWRITTEN)
/* Extents asked for per FS_IOC_FIEMAP call. */
#define EV_FIEMAP_BATCH	128
/* Blocks compared per read. */
#define EV_CMP_BLOCKS	64

/* A btrfs data chunk: @length bytes at btrfs address @logical. */
struct chunk {
	u64 logical;
	u64 length;
	u64 physical;
};

struct reader {
	const char *image;
	int img_fd;
	int root_fd;
	u64 data_blocks;
	u32 bs;
	struct ev_fs *out;
	size_t paths_cap;
	u8 *ibuf;	/* image blocks */
	u8 *cbuf;	/* the same blocks of the file, through the mount */
	struct chunk *chunks;	/* btrfs only: by @logical */
	size_t nr_chunks, chunks_cap;
	bool btrfs;
};

/* A growing list of runs. */
struct runs {
	struct ev_run *v;
	size_t n, cap;
};

/*
 * The target's logical block size is the data block size, and a
 * filesystem refuses a device whose logical block is larger than its own
 * unit of I/O: XFS its sector (with ENOSYS), the others their block.  An
 * image made with smaller units would format here, where the loop device
 * has 512-byte sectors, and then fail to mount through extverity.
 */
static int check_io_unit(const struct reader *r, const char *type,
			 const struct statfs *sfs)
{
	u8 be[2];

	if (type && !strcmp(type, "xfs") && !ev_pread(r->img_fd, be, 2, 102) &&
	    (u32)(be[0] << 8 | be[1]) < r->bs) {
		ev_error("%s: XFS sector size %u is smaller than the data "
			 "block size %u, so the kernel cannot mount it through "
			 "extverity; make it with mkfs.xfs -s size=%u",
			 r->image, be[0] << 8 | be[1], r->bs, r->bs);
		return EV_EUSAGE;
	}
	if ((u64)sfs->f_bsize < r->bs) {
		ev_error("%s: filesystem block size %llu is smaller than the "
			 "data block size %u, so the kernel cannot mount it "
			 "through extverity; use --data-block-size=%llu",
			 r->image, (unsigned long long)sfs->f_bsize, r->bs,
			 (unsigned long long)sfs->f_bsize);
		return EV_EUSAGE;
	}
	return 0;
}

/* Report a failed privileged step; errno is the step's. */
static int priv_error(const struct reader *r, const char *what)
{
	int e = errno;

	if (e == EPERM || e == EACCES) {
		ev_error("%s: cannot %s: %s; --fs=fiemap needs root "
			 "(CAP_SYS_ADMIN) to mount the image, or use --fs=raw "
			 "to protect it as raw data", r->image, what,
			 strerror(e));
		return EV_EIO;
	}
	ev_error("%s: cannot %s: %s", r->image, what, strerror(e));
	return e == EBUSY ? EV_EBUSY : EV_EIO;
}

/*
 * Our own mount namespace, private from "/" down: the mount below never
 * propagates to anyone else, even before it is detached.  Only a missing
 * privilege is fatal; without a namespace (a multithreaded caller) the
 * detached mount is still visible to nobody after a few microseconds.
 */
static int private_ns(const struct reader *r)
{
	if (unshare(CLONE_NEWNS))
		return errno == EPERM ?
		       priv_error(r, "create a mount namespace") : 0;
	mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
	return 0;
}

/* Attach the data image read-only, limited to the data blocks. */
static int attach_loop(const struct reader *r, struct ev_loop *lo)
{
	int err = ev_loop_attach_fd(r->img_fd, NULL, r->data_blocks * r->bs,
				    lo);

	if (!err)
		return 0;
	errno = -err;
	return priv_error(r, !strcmp(lo->path, "/dev/loop-control") ?
			  "open /dev/loop-control" : "attach a loop device");
}

/* Mount @dev with @type, or with each type extverity knows in turn. */
static int try_mount(const char *dev, const char *dir, const char *type)
{
	static const char *const types[] = {
		"ext4", "xfs", "btrfs", "erofs", "squashfs",
	};
	unsigned long flags = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
	size_t i;

	if (type)
		return mount(dev, dir, type, flags, NULL);
	for (i = 0; i < EV_ARRAY_SIZE(types); i++)
		if (!mount(dev, dir, types[i], flags, NULL))
			return 0;
	return -1;
}

/* Mount @dev read-only and return its root, already detached. */
static int mount_image(const struct reader *r, const char *dev,
		       const char *type, int *root_fd)
{
	char dir[] = "/tmp/extverity-XXXXXX";
	int fd, err;

	if (!mkdtemp(dir))
		return priv_error(r, "create a mount point in /tmp");
	if (try_mount(dev, dir, type)) {
		err = errno;
		rmdir(dir);
		errno = err;
		if (type) {
			char what[32];

			snprintf(what, sizeof(what), "mount it as %s", type);
			return priv_error(r, what);
		}
		ev_error("cannot mount %s as ext4, xfs, btrfs, erofs or "
			 "squashfs: %s; use --fs=raw to protect it as raw data",
			 r->image, strerror(err));
		return err == EPERM || err == EACCES ? EV_EIO : EV_EUSAGE;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	err = errno;
	if (umount2(dir, MNT_DETACH)) {
		ev_error("cannot detach the mount of %s at %s: %s", r->image,
			 dir, strerror(errno));
		if (fd >= 0)
			close(fd);
		return EV_EIO;
	}
	rmdir(dir);
	if (fd < 0) {
		ev_error("cannot open the root of %s: %s", r->image,
			 strerror(err));
		return EV_EIO;
	}
	*root_fd = fd;
	return 0;
}

/*
 * Every regular file, symlinks not followed.  FTS_XDEV keeps the walk on
 * the image's own filesystem: nothing can be mounted inside our detached
 * mount, but btrfs subvolumes have a device number (and inode numbers) of
 * their own, and their files are left to the residual tree.
 */
static int walk(struct reader *r)
{
	char root[32], *argv[2] = { NULL, NULL };
	size_t skip;
	FTSENT *e;
	FTS *fts;
	int err = 0;

	snprintf(root, sizeof(root), "/proc/self/fd/%d", r->root_fd);
	skip = strlen(root);
	argv[0] = root;
	fts = fts_open(argv, FTS_PHYSICAL | FTS_COMFOLLOW | FTS_XDEV |
		       FTS_NOCHDIR, NULL);
	if (!fts) {
		ev_error("cannot walk %s: %s", r->image, strerror(errno));
		return EV_EIO;
	}
	while (!err && (e = fts_read(fts))) {
		switch (e->fts_info) {
		case FTS_F:
			err = ev_fs_add_path(r->out, &r->paths_cap,
					     e->fts_path + skip,
					     strlen(e->fts_path + skip),
					     e->fts_statp->st_ino);
			break;
		case FTS_DNR:
		case FTS_ERR:
		case FTS_NS:
			ev_error("cannot read %s in %s: %s",
				 e->fts_path[skip] ? e->fts_path + skip : "/",
				 r->image, strerror(e->fts_errno));
			err = EV_EIO;
			break;
		default:	/* directories, symlinks, devices, ... */
			break;
		}
	}
	fts_close(fts);
	return err;
}

static void add_chunk(struct reader *r, u64 logical,
		      const struct btrfs_chunk *c)
{
	u64 profile = le64_to_cpu(c->type) & BTRFS_BLOCK_GROUP_PROFILE_MASK;

	/* One device: SINGLE is one range, DUP two copies (take the first). */
	if (!(le64_to_cpu(c->type) & BTRFS_BLOCK_GROUP_DATA) ||
	    (profile && profile != BTRFS_BLOCK_GROUP_DUP) ||
	    !le16_to_cpu(c->num_stripes))
		return;
	xgrow((void **)&r->chunks, &r->chunks_cap, r->nr_chunks + 1,
	      sizeof(*r->chunks));
	r->chunks[r->nr_chunks++] = (struct chunk){
		logical, le64_to_cpu(c->length),
		le64_to_cpu(c->stripe.offset),
	};
}

/*
 * btrfs's FIEMAP gives addresses in its own logical space, which the chunk
 * tree maps to device offsets.  The chunk items come sorted by logical
 * address.  Without them (no permission, a format we do not know) btrfs
 * extents simply fail the comparison and stay residual.
 */
static void load_btrfs_chunks(struct reader *r)
{
	struct btrfs_ioctl_search_args args;
	struct btrfs_ioctl_search_key *sk = &args.key;
	struct btrfs_ioctl_search_header sh;
	struct btrfs_chunk c;
	size_t off;
	u32 i;

	memset(&args, 0, sizeof(args));
	sk->tree_id = BTRFS_CHUNK_TREE_OBJECTID;
	sk->min_objectid = BTRFS_FIRST_CHUNK_TREE_OBJECTID;
	sk->max_objectid = BTRFS_FIRST_CHUNK_TREE_OBJECTID;
	sk->min_type = BTRFS_CHUNK_ITEM_KEY;
	sk->max_type = BTRFS_CHUNK_ITEM_KEY;
	sk->max_offset = (u64)-1;
	sk->max_transid = (u64)-1;
	for (;;) {
		sk->nr_items = 4096;
		if (ioctl(r->root_fd, BTRFS_IOC_TREE_SEARCH, &args) ||
		    !sk->nr_items)
			return;
		for (i = 0, off = 0; i < sk->nr_items; i++) {
			memcpy(&sh, args.buf + off, sizeof(sh));
			off += sizeof(sh);
			if (sh.type == BTRFS_CHUNK_ITEM_KEY &&
			    sh.len >= sizeof(c)) {
				memcpy(&c, args.buf + off, sizeof(c));
				add_chunk(r, sh.offset, &c);
			}
			off += sh.len;
		}
		if (sh.offset == (u64)-1)
			return;
		sk->min_offset = sh.offset + 1;
	}
}

/*
 * The image offset of @len bytes at FIEMAP address @addr; *@len is cut to
 * what lies in one chunk.  False when there is no such offset.
 */
static bool to_image(const struct reader *r, u64 addr, u64 *phys, u64 *len)
{
	size_t lo = 0, hi = r->nr_chunks;

	if (!r->btrfs) {
		*phys = addr;
		return true;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->chunks[mid].logical + r->chunks[mid].length <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == r->nr_chunks || r->chunks[lo].logical > addr)
		return false;
	*phys = r->chunks[lo].physical + (addr - r->chunks[lo].logical);
	if (*len > r->chunks[lo].logical + r->chunks[lo].length - addr)
		*len = r->chunks[lo].logical + r->chunks[lo].length - addr;
	return true;
}

/*
 * A plain extent, as whole data blocks of the file that lie in the image.
 * The extent that holds EOF counts its last partial block: whether the
 * bytes past EOF are zero on the image is checked with the rest.
 */
static void add_candidate(const struct reader *r, struct runs *c,
			  const struct fiemap_extent *fe, u64 size)
{
	u64 bs = r->bs, nblocks = ev_div_round_up(size, bs);
	u64 lblk, pblk, count, phys, len = fe->fe_length;
	const struct ev_run *last = c->n ? &c->v[c->n - 1] : NULL;

	if ((fe->fe_flags & EV_NOT_PLAIN) || fe->fe_logical % bs ||
	    !to_image(r, fe->fe_physical, &phys, &len) || phys % bs)
		return;
	lblk = fe->fe_logical / bs;
	pblk = phys / bs;
	count = fe->fe_logical + len >= size ? nblocks - lblk : len / bs;
	if (lblk >= nblocks || pblk >= r->data_blocks)
		return;
	if (count > nblocks - lblk)
		count = nblocks - lblk;
	if (count > r->data_blocks - pblk)
		count = r->data_blocks - pblk;
	/* Overlapping extents: keep the first mapping of each block. */
	if (last && lblk < last->logical + last->count) {
		u64 skip = last->logical + last->count - lblk;

		if (skip >= count)
			return;
		lblk += skip;
		pblk += skip;
		count -= skip;
	}
	if (count)
		ev_fs_add_run(&c->v, &c->n, &c->cap, lblk, pblk, count);
}

/* FIEMAP of the whole file into candidate runs, sorted by logical block. */
static int get_candidates(const struct reader *r, int ffd, const char *path,
			  u64 size, struct runs *c)
{
	size_t len = sizeof(struct fiemap) +
		     EV_FIEMAP_BATCH * sizeof(struct fiemap_extent);
	struct fiemap *fm = xmalloc(len);
	u64 start = 0, end = ev_div_round_up(size, r->bs) * r->bs;
	const struct fiemap_extent *fe;
	int err = 0;
	u32 i;

	while (start < end) {
		memset(fm, 0, len);
		fm->fm_start = start;
		fm->fm_length = end - start;
		fm->fm_flags = FIEMAP_FLAG_SYNC;
		fm->fm_extent_count = EV_FIEMAP_BATCH;
		if (ioctl(ffd, FS_IOC_FIEMAP, fm)) {
			/* No FIEMAP here (squashfs): read, not mapped. */
			if (errno == EOPNOTSUPP || errno == ENOTTY ||
			    errno == EBADR)
				break;
			ev_error("FIEMAP of %s in %s failed: %s", path,
				 r->image, strerror(errno));
			err = EV_EIO;
			break;
		}
		if (!fm->fm_mapped_extents)
			break;
		for (i = 0; i < fm->fm_mapped_extents; i++)
			add_candidate(r, c, &fm->fm_extents[i], size);
		fe = &fm->fm_extents[fm->fm_mapped_extents - 1];
		if ((fe->fe_flags & FIEMAP_EXTENT_LAST) ||
		    fe->fe_logical + fe->fe_length <= start)
			break;
		start = fe->fe_logical + fe->fe_length;
	}
	free(fm);
	return err;
}

/*
 * Keep the candidate blocks whose bytes on the image equal the file's,
 * the last block zero-padded as fs-verity hashes it: only those can be
 * verified by the file's own tree.
 */
static int keep_matching(struct reader *r, int ffd, const char *path,
			 const struct runs *c, struct runs *keep)
{
	u32 bs = r->bs;
	size_t i;
	u64 k, n, j;
	int err;

	for (i = 0; i < c->n; i++) {
		const struct ev_run *run = &c->v[i];

		for (k = 0; k < run->count; k += n) {
			n = run->count - k < EV_CMP_BLOCKS ?
			    run->count - k : EV_CMP_BLOCKS;
			err = ev_pread(r->img_fd, r->ibuf, n * bs,
				       (run->physical + k) * bs);
			if (!err)
				err = ev_pread_padded(ffd, r->cbuf, n * bs,
						      (run->logical + k) * bs);
			if (err) {
				ev_error("cannot read %s in %s: %s", path,
					 r->image, strerror(-err));
				return EV_EIO;
			}
			for (j = 0; j < n; j++)
				if (!memcmp(r->ibuf + j * bs, r->cbuf + j * bs,
					    bs))
					ev_fs_add_run(&keep->v, &keep->n,
						      &keep->cap,
						      run->logical + k + j,
						      run->physical + k + j, 1);
		}
	}
	return 0;
}

/* Size, content path and verified mapping of inode @in, first seen at @path. */
static int map_file(void *ctx, struct ev_inode *in, const char *path)
{
	struct reader *r = ctx;
	struct runs cand = { 0 }, keep = { 0 };
	struct stat st;
	int ffd, err;

	ffd = openat(r->root_fd, path + 1, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (ffd < 0 || fstat(ffd, &st)) {
		ev_error("cannot open %s in %s: %s", path, r->image,
			 strerror(errno));
		if (ffd >= 0)
			close(ffd);
		return EV_EIO;
	}
	if (!S_ISREG(st.st_mode) || st.st_ino != in->ino) {
		ev_error("%s in %s changed while being read", path, r->image);
		close(ffd);
		return EV_EIO;
	}
	in->size = st.st_size;
	in->src = path + 1;
	err = get_candidates(r, ffd, path, in->size, &cand);
	if (!err)
		err = keep_matching(r, ffd, path, &cand, &keep);
	close(ffd);
	free(cand.v);
	in->runs = keep.v;
	in->nr_runs = keep.n;
	return err;
}

int ev_fs_read_fiemap(const struct ev_fs_image *img, struct ev_fs *out)
{
	struct reader r = {
		.image = img->path, .img_fd = img->fd,
		.data_blocks = img->data_blocks, .bs = img->block_size,
		.out = out,
	};
	const char *type = ev_fs_probe(img->fd,
				       img->data_blocks * img->block_size);
	struct statfs sfs;
	struct ev_loop lo;
	int err;

	memset(out, 0, sizeof(*out));
	err = private_ns(&r);
	if (!err)
		err = attach_loop(&r, &lo);
	if (err)
		return err;
	err = mount_image(&r, lo.path, type, &out->root_fd);
	/* The mount holds the device now; without one, this detaches it. */
	close(lo.fd);
	if (err)
		return err;
	out->mounted = true;
	r.root_fd = out->root_fd;
	if (fstatfs(r.root_fd, &sfs)) {
		ev_error("cannot stat the filesystem of %s: %s", r.image,
			 strerror(errno));
		ev_fs_free(out);
		return EV_EIO;
	}
	err = check_io_unit(&r, type, &sfs);
	if (err) {
		ev_fs_free(out);
		return err;
	}
	if (sfs.f_type == BTRFS_SUPER_MAGIC) {
		r.btrfs = true;
		load_btrfs_chunks(&r);
	}
	r.ibuf = xmalloc((size_t)EV_CMP_BLOCKS * r.bs);
	r.cbuf = xmalloc((size_t)EV_CMP_BLOCKS * r.bs);
	err = walk(&r);
	if (!err)
		err = ev_fs_make_inodes(out, map_file, &r);
	free(r.ibuf);
	free(r.cbuf);
	free(r.chunks);
	if (err) {
		ev_fs_free(out);
		return err;
	}
	/*
	 * Free space is unknown: out->used stays NULL, so every block no file
	 * owns is residual.
	 */
	return 0;
}
