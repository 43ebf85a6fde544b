// SPDX-License-Identifier: GPL-2.0
/*
 * What the filesystem readers share: telling which filesystem an image
 * holds and picking the reader, recording its files once the reader has
 * found them, and freeing what a reader produced.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs.h"
#include "read.h"

const char *ev_fs_probe(int fd, u64 size)
{
	static const struct {
		u64 off;
		const char *magic;
		u32 len;
		const char *type;
	} magics[] = {
		{ 1080, "\x53\xef", 2, "ext4" },
		{ 0, "XFSB", 4, "xfs" },
		{ 65536 + 64, "_BHRfS_M", 8, "btrfs" },
		{ 1024, "\xe2\xe1\xf5\xe0", 4, "erofs" },
		{ 0, "hsqs", 4, "squashfs" },
	};
	u8 buf[8];
	size_t i;

	for (i = 0; i < EV_ARRAY_SIZE(magics); i++) {
		if (magics[i].off + magics[i].len > size ||
		    ev_pread(fd, buf, magics[i].len, magics[i].off))
			continue;
		if (!memcmp(buf, magics[i].magic, magics[i].len))
			return magics[i].type;
	}
	return NULL;
}

static const struct {
	const char *name;
	int (*read)(const struct ev_fs_image *img, struct ev_fs *fs);
} readers[] = {
	[EV_FS_AUTO] = { "auto", NULL },
	[EV_FS_EXT4] = { "ext4", ev_fs_read_ext4 },
	[EV_FS_FIEMAP] = { "fiemap", ev_fs_read_fiemap },
	[EV_FS_RAW] = { "raw", ev_fs_read_raw },
};

int ev_fs_type_by_name(const char *name, enum ev_fs_type *type)
{
	size_t i;

	for (i = 0; i < EV_ARRAY_SIZE(readers); i++) {
		if (!strcmp(name, readers[i].name)) {
			*type = i;
			return 0;
		}
	}
	return -EINVAL;
}

int ev_fs_read(struct ev_fs_image *img, enum ev_fs_type type,
	       struct ev_fs *fs)
{
	const char *probed;

	memset(fs, 0, sizeof(*fs));
	img->probed = type == EV_FS_AUTO;
	if (img->probed) {
		probed = ev_fs_probe(img->fd,
				     img->data_blocks * img->block_size);
		if (!probed) {
			ev_error("%s holds no filesystem extverity knows "
				 "(ext2/3/4, xfs, btrfs, erofs, squashfs); use "
				 "--fs=raw to protect it as raw data",
				 img->path);
			return EV_EUSAGE;
		}
		type = strcmp(probed, "ext4") ? EV_FS_FIEMAP : EV_FS_EXT4;
		ev_debug("%s: %s, read %s", img->path, probed,
			 type == EV_FS_EXT4 ? "with libext2fs" :
			 "through FIEMAP");
	}
	return readers[type].read(img, fs);
}

int ev_fs_add_path(struct ev_fs *fs, size_t *cap, const char *path,
		   size_t len, u64 ino)
{
	char *copy;

	/* Worded as layout.c's check_paths(), which stays as a backstop. */
	if (len > EV_FILE_PATH_MAX) {
		ev_error("path of inode %llu is %zu bytes long, more than the "
			 "%u the hash area can record: %.64s...",
			 (unsigned long long)ino, len, EV_FILE_PATH_MAX, path);
		return EV_EUSAGE;
	}
	copy = xmalloc(len + 1);
	memcpy(copy, path, len);
	copy[len] = '\0';
	xgrow((void **)&fs->paths, cap, fs->nr_paths + 1, sizeof(*fs->paths));
	fs->paths[fs->nr_paths].path = copy;
	fs->paths[fs->nr_paths++].inode = ino;
	return 0;
}

static int cmp_path(const void *a, const void *b)
{
	const struct ev_path *x = a, *y = b;

	return strcmp(x->path, y->path);
}

/* Sort path indexes by inode number, then by path order. */
static int cmp_by_ino(const void *a, const void *b, void *paths)
{
	const struct ev_path *p = paths;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	if (p[x].inode != p[y].inode)
		return p[x].inode < p[y].inode ? -1 : 1;
	return x < y ? -1 : x > y;
}

int ev_fs_make_inodes(struct ev_fs *fs,
		      int (*map)(void *ctx, struct ev_inode *in,
				 const char *path),
		      void *ctx)
{
	size_t *order;
	size_t i;
	int err = 0;

	if (!fs->nr_paths)	/* paths is NULL: qsort(NULL, 0) is undefined */
		return 0;
	qsort(fs->paths, fs->nr_paths, sizeof(*fs->paths), cmp_path);
	order = xcalloc(fs->nr_paths, sizeof(*order));
	for (i = 0; i < fs->nr_paths; i++)
		order[i] = i;
	qsort_r(order, fs->nr_paths, sizeof(*order), cmp_by_ino, fs->paths);
	fs->inodes = xcalloc(fs->nr_paths, sizeof(*fs->inodes));
	for (i = 0; i < fs->nr_paths; i++) {
		struct ev_path *pa = &fs->paths[order[i]];
		struct ev_inode *in = &fs->inodes[fs->nr_inodes];

		if (!fs->nr_inodes || in[-1].ino != pa->inode) {
			in->ino = pa->inode;
			/* Counted first: ev_fs_free() frees a half-made one. */
			fs->nr_inodes++;
			err = map(ctx, in, pa->path);
			if (err)
				break;
		}
		pa->inode = fs->nr_inodes - 1;
	}
	free(order);
	return err;
}

void ev_fs_add_run(struct ev_run **runs, size_t *nr, size_t *cap,
		   u64 logical, u64 physical, u64 count)
{
	struct ev_run *last = *nr ? &(*runs)[*nr - 1] : NULL;

	if (last && last->logical + last->count == logical &&
	    last->physical + last->count == physical) {
		last->count += count;
		return;
	}
	xgrow((void **)runs, cap, *nr + 1, sizeof(**runs));
	(*runs)[(*nr)++] = (struct ev_run){ logical, physical, count };
}

void ev_fs_free(struct ev_fs *fs)
{
	size_t i;

	for (i = 0; i < fs->nr_paths; i++)
		free(fs->paths[i].path);
	for (i = 0; i < fs->nr_inodes; i++) {
		free(fs->inodes[i].runs);
		free(fs->inodes[i].inline_data);
	}
	free(fs->paths);
	free(fs->inodes);
	free(fs->used);
	if (fs->mounted)
		close(fs->root_fd);
	memset(fs, 0, sizeof(*fs));
}
