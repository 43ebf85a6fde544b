// SPDX-License-Identifier: GPL-2.0
/*
 * Reading an ext2/3/4 image offline with libext2fs: directory walk from the
 * root, each regular file's mapping (extents, block map or inline data) and
 * the block allocation bitmap.  libext2fs is not thread-safe, so all of this
 * runs before the parallel hashing starts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <ext2fs/ext2fs.h>

#include "ext4.h"

struct dirent_rec {
	char *name;
	ext2_ino_t ino;
};

struct walk {
	ext2_filsys fs;
	u64 data_blocks;
	u32 block_size;
	struct ev_fs *out;
	size_t paths_cap;
	struct dirent_rec *ents;
	size_t nr_ents, ents_cap;
	u8 *dir_seen;
	int err;
};

static int collect_dirent(ext2_ino_t dir, int entry,
			  struct ext2_dir_entry *dirent, int offset,
			  int blocksize, char *buf, void *priv)
{
	struct walk *w = priv;
	int len = ext2fs_dirent_name_len(dirent);
	struct dirent_rec *r;

	if (entry == DIRENT_DOT_FILE || entry == DIRENT_DOT_DOT_FILE ||
	    !dirent->inode)
		return 0;
	xgrow((void **)&w->ents, &w->ents_cap, w->nr_ents + 1,
	      sizeof(*w->ents));
	r = &w->ents[w->nr_ents++];
	r->name = xmalloc(len + 1);
	memcpy(r->name, dirent->name, len);
	r->name[len] = '\0';
	r->ino = dirent->inode;
	return 0;
}

/* Until make_inodes(), a path's .inode holds its inode number. */
static void add_path(struct walk *w, char *path, ext2_ino_t ino)
{
	struct ev_fs *o = w->out;

	xgrow((void **)&o->paths, &w->paths_cap, o->nr_paths + 1,
	      sizeof(*o->paths));
	o->paths[o->nr_paths].path = path;
	o->paths[o->nr_paths++].inode = ino;
}

static char *join(const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);
	char *p = xmalloc(a + b + 2);

	memcpy(p, dir, a);
	p[a] = '/';
	memcpy(p + a + 1, name, b + 1);
	return p;
}

/* Walk one directory; subdirectories are walked after it is closed. */
static int walk_dir(struct walk *w, ext2_ino_t dir, const char *path)
{
	struct dirent_rec *ents;
	size_t n, i;
	errcode_t e;

	if (dir > w->fs->super->s_inodes_count ||
	    ev_test_bit(w->dir_seen, dir))
		return 0;
	ev_set_bit(w->dir_seen, dir);
	w->nr_ents = 0;
	e = ext2fs_dir_iterate2(w->fs, dir, 0, NULL, collect_dirent, w);
	if (e) {
		ev_error("cannot read directory %s: %s", *path ? path : "/",
			 error_message(e));
		return EV_EIO;
	}
	n = w->nr_ents;
	ents = w->ents;
	w->ents = NULL;
	w->ents_cap = 0;
	w->nr_ents = 0;
	for (i = 0; i < n; i++) {
		struct ext2_inode inode;
		char *child = join(path, ents[i].name);
		int err = 0;

		free(ents[i].name);
		e = ext2fs_read_inode(w->fs, ents[i].ino, &inode);
		if (e) {
			ev_error("cannot read inode %u (%s): %s", ents[i].ino,
				 child, error_message(e));
			err = EV_EIO;
		} else if (LINUX_S_ISREG(inode.i_mode)) {
			add_path(w, child, ents[i].ino);
			child = NULL;
		} else if (LINUX_S_ISDIR(inode.i_mode)) {
			err = walk_dir(w, ents[i].ino, child);
		}
		free(child);
		if (err) {
			while (++i < n)
				free(ents[i].name);
			free(ents);
			return err;
		}
	}
	free(ents);
	return 0;
}

struct map_ctx {
	struct ev_inode *in;
	size_t cap;
	u64 nblocks;
	u64 limit;	/* image blocks */
	bool bad;
};

/* Append a written mapping, clipped to the file's blocks, merging runs. */
static void add_run(struct map_ctx *m, u64 lblk, u64 pblk, u64 len)
{
	struct ev_inode *in = m->in;
	struct ev_run *last;

	if (lblk >= m->nblocks)
		return;
	if (len > m->nblocks - lblk)
		len = m->nblocks - lblk;
	if (pblk >= m->limit || len > m->limit - pblk) {
		m->bad = true;
		return;
	}
	last = in->nr_runs ? &in->runs[in->nr_runs - 1] : NULL;
	if (last && last->logical + last->count > lblk) {
		/* Overlapping or unsorted mappings: a damaged filesystem. */
		m->bad = true;
		return;
	}
	if (last && last->logical + last->count == lblk &&
	    last->physical + last->count == pblk) {
		last->count += len;
		return;
	}
	xgrow((void **)&in->runs, &m->cap, in->nr_runs + 1,
	      sizeof(*in->runs));
	in->runs[in->nr_runs++] = (struct ev_run){ lblk, pblk, len };
}

static int map_block(ext2_filsys fs, blk64_t *blocknr, e2_blkcnt_t blockcnt,
		     blk64_t ref_blk, int ref_offset, void *priv)
{
	if (blockcnt >= 0)
		add_run(priv, blockcnt, *blocknr, 1);
	return 0;
}

static errcode_t map_extents(ext2_filsys fs, ext2_ino_t ino,
			     struct ext2_inode *inode, struct map_ctx *m)
{
	ext2_extent_handle_t h;
	struct ext2fs_extent ex;
	errcode_t e;

	e = ext2fs_extent_open2(fs, ino, inode, &h);
	if (e)
		return e;
	e = ext2fs_extent_get(h, EXT2_EXTENT_ROOT, &ex);
	while (!e) {
		if ((ex.e_flags & EXT2_EXTENT_FLAGS_LEAF) &&
		    !(ex.e_flags & EXT2_EXTENT_FLAGS_SECOND_VISIT) &&
		    !(ex.e_flags & EXT2_EXTENT_FLAGS_UNINIT) && ex.e_len)
			add_run(m, ex.e_lblk, ex.e_pblk, ex.e_len);
		e = ext2fs_extent_get(h, EXT2_EXTENT_NEXT, &ex);
	}
	ext2fs_extent_free(h);
	return e == EXT2_ET_EXTENT_NO_NEXT || e == EXT2_ET_NO_CURRENT_NODE ?
	       0 : e;
}

static int read_mapping(struct walk *w, struct ev_inode *in, const char *path)
{
	struct ext2_inode inode;
	struct map_ctx m = { .in = in, .limit = w->data_blocks };
	errcode_t e;

	e = ext2fs_read_inode(w->fs, in->ino, &inode);
	if (e)
		goto fail;
	in->size = EXT2_I_SIZE(&inode);
	m.nblocks = ev_div_round_up(in->size, w->block_size);
	if (inode.i_flags & EXT4_INLINE_DATA_FL) {
		size_t size = 0;

		e = ext2fs_inline_data_size(w->fs, in->ino, &size);
		if (e)
			goto fail;
		if (in->size > w->block_size && size <= w->block_size) {
			/* A sparse file flagged inline: holes unless not zero. */
			u8 *tmp = xzalloc(w->block_size);

			e = ext2fs_inline_data_get(w->fs, in->ino, &inode, tmp,
						   &size);
			if (!e && ev_is_zero(tmp, size)) {
				free(tmp);
				return 0;
			}
			free(tmp);
			if (e)
				goto fail;
		}
		if (size < in->size)
			size = in->size;
		if (size > w->block_size) {
			ev_error("inline data of %s is larger than a block",
				 path);
			return EV_EIO;
		}
		in->inline_data = xzalloc(size);
		e = ext2fs_inline_data_get(w->fs, in->ino, &inode,
					   in->inline_data, &size);
		if (e)
			goto fail;
		return 0;
	}
	if (inode.i_flags & EXT4_EXTENTS_FL)
		e = map_extents(w->fs, in->ino, &inode, &m);
	else
		e = ext2fs_block_iterate3(w->fs, in->ino,
					  BLOCK_FLAG_READ_ONLY |
					  BLOCK_FLAG_DATA_ONLY,
					  NULL, map_block, &m);
	if (e)
		goto fail;
	if (m.bad) {
		ev_error("%s (inode %llu) maps blocks outside the image or "
			 "overlapping: filesystem damaged; run e2fsck",
			 path, (unsigned long long)in->ino);
		return EV_EIO;
	}
	return 0;
fail:
	ev_error("cannot read the mapping of %s (inode %llu): %s", path,
		 (unsigned long long)in->ino, error_message(e));
	return EV_EIO;
}

static int cmp_path(const void *a, const void *b)
{
	const struct ev_path *x = a, *y = b;

	return strcmp(x->path, y->path);
}

/* Sort path indexes by inode number, then by path order. */
static const struct ev_path *g_paths;

static int cmp_by_ino(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	if (g_paths[x].inode != g_paths[y].inode)
		return g_paths[x].inode < g_paths[y].inode ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Give each distinct inode one record, sorted by inode number. */
static int make_inodes(struct walk *w)
{
	struct ev_fs *o = w->out;
	size_t *order = xcalloc(o->nr_paths, sizeof(*order));
	size_t i;
	int err = 0;

	for (i = 0; i < o->nr_paths; i++)
		order[i] = i;
	g_paths = o->paths;
	qsort(order, o->nr_paths, sizeof(*order), cmp_by_ino);
	o->inodes = xcalloc(o->nr_paths, sizeof(*o->inodes));
	for (i = 0; i < o->nr_paths; i++) {
		u64 ino = o->paths[order[i]].inode;

		if (!o->nr_inodes || o->inodes[o->nr_inodes - 1].ino != ino) {
			o->inodes[o->nr_inodes].ino = ino;
			err = read_mapping(w, &o->inodes[o->nr_inodes],
					   o->paths[order[i]].path);
			o->nr_inodes++;
			if (err)
				break;
		}
		o->paths[order[i]].inode = o->nr_inodes - 1;
	}
	free(order);
	return err;
}

static int read_bitmap(struct walk *w)
{
	ext2_filsys fs = w->fs;
	blk64_t first = fs->super->s_first_data_block;
	blk64_t end = ext2fs_blocks_count(fs->super) - 1;
	blk64_t s = first, z, b;
	errcode_t e;
	u8 *used = w->out->used;

	e = ext2fs_read_block_bitmap(fs);
	if (e) {
		ev_error("cannot read the block bitmap: %s", error_message(e));
		return EV_EIO;
	}
	/* Blocks the bitmap does not describe are kept, as metadata. */
	for (b = 0; b < first; b++)
		ev_set_bit(used, b);
	for (b = end + 1; b < w->data_blocks; b++)
		ev_set_bit(used, b);
	while (s <= end) {
		if (ext2fs_find_first_set_block_bitmap2(fs->block_map, s, end,
							&s))
			break;
		if (ext2fs_find_first_zero_block_bitmap2(fs->block_map, s,
							 end, &z))
			z = end + 1;
		for (b = s; b < z; b++)
			ev_set_bit(used, b);
		s = z;
	}
	return 0;
}

int ev_fs_read_ext4(const char *image, u64 data_blocks, u32 block_size,
		    struct ev_fs *out, bool auto_mode)
{
	struct walk w = { .data_blocks = data_blocks,
			  .block_size = block_size, .out = out };
	ext2_filsys fs;
	errcode_t e;
	u64 fs_blocks;
	int err;

	memset(out, 0, sizeof(*out));
	e = ext2fs_open2(image, NULL, EXT2_FLAG_64BITS, 0, 0, unix_io_manager,
			 &fs);
	if (e == EXT2_ET_BAD_MAGIC || e == EXT2_ET_SB_CSUM_INVALID ||
	    e == EXT2_ET_CORRUPT_SUPERBLOCK || e == EXT2_ET_SHORT_READ) {
		if (auto_mode)
			ev_error("%s is not an ext2/3/4 filesystem (%s); use "
				 "--fs=raw to protect it as raw data", image,
				 error_message(e));
		else
			ev_error("%s is not an ext2/3/4 filesystem: %s", image,
				 error_message(e));
		return EV_EUSAGE;
	}
	if (e) {
		ev_error("cannot open %s as ext4: %s", image,
			 error_message(e));
		return EV_EIO;
	}
	w.fs = fs;
	fs_blocks = ext2fs_blocks_count(fs->super);
	if (fs->blocksize != block_size) {
		ev_error("filesystem block size %u differs from the data block "
			 "size %u; use --data-block-size=%u (or --fs=raw)",
			 fs->blocksize, block_size, fs->blocksize);
		err = EV_EUSAGE;
		goto out;
	}
	if (fs_blocks > data_blocks) {
		ev_error("filesystem (%llu blocks) is larger than the data "
			 "image (%llu blocks)", (unsigned long long)fs_blocks,
			 (unsigned long long)data_blocks);
		err = EV_EUSAGE;
		goto out;
	}
	out->used = xcalloc(ev_div_round_up(data_blocks, 8), 1);
	w.dir_seen = xcalloc(fs->super->s_inodes_count / 8 + 1, 1);
	err = walk_dir(&w, EXT2_ROOT_INO, "");
	if (!err) {
		qsort(out->paths, out->nr_paths, sizeof(*out->paths),
		      cmp_path);
		err = make_inodes(&w);
	}
	if (!err)
		err = read_bitmap(&w);
out:
	free(w.dir_seen);
	free(w.ents);
	ext2fs_close_free(&fs);
	return err;
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
