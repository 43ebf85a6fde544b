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

#include "fs.h"

struct dirent_rec {
	char *name;
	ext2_ino_t ino;
};

/* A directory being walked: its entries, and where its path ends. */
struct dir_frame {
	struct dirent_rec *ents;
	size_t nr_ents, next;
	size_t path_len;
};

/*
 * The walk is depth first with an explicit stack, and one path buffer
 * shared by all levels: a level appends "/name" and the next entry cuts it
 * back.  Memory is linear in the depth (its path plus the entries still to
 * be walked at each level), not quadratic as with a copy of the full path
 * per level, and a deep tree cannot overflow the C stack.  Each directory
 * inode is walked once (@dir_seen), so a loop in a damaged image ends.
 */
struct walk {
	ext2_filsys fs;
	u64 data_blocks;
	u32 block_size;
	struct ev_fs *out;
	size_t paths_cap;
	struct dirent_rec *ents;
	size_t nr_ents, ents_cap;
	struct dir_frame *stack;
	size_t depth, stack_cap;
	char *path;		/* "" for the root, else "/a/b" */
	size_t path_len, path_cap;
	u8 *dir_seen;
	bool dir_encrypted;	/* the directory being read holds ciphertext */
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
	r->ino = dirent->inode;
	if (w->dir_encrypted) {
		/*
		 * Names in an encrypted directory are ciphertext: any byte,
		 * '/' and NUL included.  Spell them in hex so that every path
		 * stays one unambiguous string.
		 */
		static const char hex[] = "0123456789abcdef";
		int i;

		r->name = xmalloc(2 * len + 1);
		for (i = 0; i < len; i++) {
			r->name[2 * i] = hex[(u8)dirent->name[i] >> 4];
			r->name[2 * i + 1] = hex[(u8)dirent->name[i] & 15];
		}
		r->name[2 * len] = '\0';
		return 0;
	}
	r->name = xmalloc(len + 1);
	memcpy(r->name, dirent->name, len);
	r->name[len] = '\0';
	return 0;
}

/* Make the path that of entry @name of the directory whose path is @len. */
static void set_path(struct walk *w, size_t len, const char *name)
{
	size_t n = strlen(name);

	xgrow((void **)&w->path, &w->path_cap, len + n + 2, 1);
	w->path[len] = '/';
	memcpy(w->path + len + 1, name, n + 1);
	w->path_len = len + 1 + n;
}

static void free_ents(struct dirent_rec *ents, size_t from, size_t n)
{
	while (from < n)
		free(ents[from++].name);
	free(ents);
}

/*
 * Read directory @dir, whose path is the current one, and push it on the
 * stack; a directory already walked is skipped.  Its entries are read
 * whole before any is walked, so that no directory iteration of libext2fs
 * is ever nested in another.
 */
static int open_dir(struct walk *w, ext2_ino_t dir)
{
	struct ext2_inode dinode;
	struct dir_frame *f;
	errcode_t e;

	if (dir > w->fs->super->s_inodes_count ||
	    ev_test_bit(w->dir_seen, dir))
		return 0;
	ev_set_bit(w->dir_seen, dir);
	w->nr_ents = 0;
	e = ext2fs_read_inode(w->fs, dir, &dinode);
	if (!e) {
		w->dir_encrypted = dinode.i_flags & EXT4_ENCRYPT_FL;
		e = ext2fs_dir_iterate2(w->fs, dir, 0, NULL, collect_dirent,
					w);
	}
	if (e) {
		/* The blocks read before the damaged one gave names. */
		while (w->nr_ents)
			free(w->ents[--w->nr_ents].name);
		ev_error("cannot read directory %s: %s",
			 w->path_len ? w->path : "/", error_message(e));
		return EV_EIO;
	}
	if (!w->nr_ents)
		return 0;
	/*
	 * An exact copy: @ents is the scratch buffer of every directory,
	 * sized for the largest, while a chain of small directories must
	 * keep little per level.
	 */
	xgrow((void **)&w->stack, &w->stack_cap, w->depth + 1,
	      sizeof(*w->stack));
	f = &w->stack[w->depth++];
	*f = (struct dir_frame){ .nr_ents = w->nr_ents,
				 .path_len = w->path_len };
	f->ents = xcalloc(w->nr_ents, sizeof(*f->ents));
	memcpy(f->ents, w->ents, w->nr_ents * sizeof(*f->ents));
	w->nr_ents = 0;
	return 0;
}

/*
 * Record the paths of the regular files under the root (a path the FILES
 * section cannot hold is refused by ev_fs_add_path() as soon as it is seen).
 */
static int walk_tree(struct walk *w)
{
	int err;

	xgrow((void **)&w->path, &w->path_cap, 1, 1);
	w->path[0] = '\0';
	w->path_len = 0;
	err = open_dir(w, EXT2_ROOT_INO);
	while (!err && w->depth) {
		struct dir_frame *f = &w->stack[w->depth - 1];
		struct dirent_rec *r;
		struct ext2_inode inode;
		errcode_t e;

		if (f->next == f->nr_ents) {
			free(f->ents);
			w->depth--;
			continue;
		}
		r = &f->ents[f->next++];
		set_path(w, f->path_len, r->name);
		free(r->name);
		e = ext2fs_read_inode(w->fs, r->ino, &inode);
		if (e) {
			ev_error("cannot read inode %u (%s): %s", r->ino,
				 w->path, error_message(e));
			err = EV_EIO;
		} else if (LINUX_S_ISREG(inode.i_mode)) {
			err = ev_fs_add_path(w->out, &w->paths_cap, w->path,
					     w->path_len, r->ino);
		} else if (LINUX_S_ISDIR(inode.i_mode)) {
			/* May grow the stack: @f is not used after this. */
			err = open_dir(w, r->ino);
		}
	}
	while (w->depth) {
		struct dir_frame *f = &w->stack[--w->depth];

		free_ents(f->ents, f->next, f->nr_ents);
	}
	return err;
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
	ev_fs_add_run(&in->runs, &in->nr_runs, &m->cap, lblk, pblk, len);
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

static int read_mapping(void *ctx, struct ev_inode *in, const char *path)
{
	struct walk *w = ctx;
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

/*
 * The cross-check of the block bitmap.  A block the bitmap marks free
 * becomes a zero range: the target returns zeros for it without reading
 * the disk.  So a live block wrongly marked free (what e2fsck calls "Block
 * bitmap differences: +N") would read as zeros through the device while
 * the image holds data there, and the kernel would then find a directory,
 * extent-tree block or inode table of zeros.  Every block the filesystem
 * reaches must therefore be allocated: the metadata of each group and each
 * in-use inode's data, mapping (extent-tree or indirect) and xattr blocks,
 * whether or not the directory walk reaches the inode (the journal, quota
 * and resize inodes are not in any directory).
 */
struct check_ctx {
	struct walk *w;
	ext2_ino_t ino;		/* 0: filesystem metadata */
	const struct ext2_inode *inode;
	int err;
};

/* The path of regular file @ino, if the directory walk found one. */
static const char *path_of_file(const struct ev_fs *o, ext2_ino_t ino)
{
	size_t lo = 0, hi = o->nr_inodes, mid, i;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (o->inodes[mid].ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == o->nr_inodes || o->inodes[lo].ino != ino)
		return NULL;
	for (i = 0; i < o->nr_paths; i++)
		if (o->paths[i].inode == lo)
			return o->paths[i].path;
	return NULL;
}

/* Print who uses a block: "inode 12 (directory /d)" or "metadata". */
static void print_owner(const struct check_ctx *c, char *buf, size_t len)
{
	const struct ext2_inode *in = c->inode;
	const char *path = NULL, *kind = NULL;
	char *dir = NULL;

	if (!c->ino) {
		snprintf(buf, len, "metadata");
		return;
	}
	if (c->ino == c->w->fs->super->s_journal_inum) {
		kind = "journal";
	} else if (LINUX_S_ISDIR(in->i_mode)) {
		kind = "directory";
		if (!ext2fs_get_pathname(c->w->fs, c->ino, 0, &dir))
			path = dir;
	} else if (LINUX_S_ISREG(in->i_mode)) {
		kind = "regular file";
		path = path_of_file(c->w->out, c->ino);
	} else if (LINUX_S_ISLNK(in->i_mode)) {
		kind = "symlink";
	}
	if (!kind)
		snprintf(buf, len, "inode %u", c->ino);
	else
		snprintf(buf, len, "inode %u (%s%s%s)", c->ino, kind,
			 path ? " " : "", path ? path : "");
	ext2fs_free_mem(&dir);
}

/* Blocks [@blk, @blk + @len) used as @role must be allocated. */
static int check_blocks(struct check_ctx *c, blk64_t blk, u64 len,
			const char *role)
{
	ext2_filsys fs = c->w->fs;
	blk64_t first = fs->super->s_first_data_block;
	blk64_t count = ext2fs_blocks_count(fs->super);
	blk64_t bad;
	char owner[128], why[64];

	if (!len)
		return 0;
	if (blk < first || blk >= count || len > count - blk) {
		bad = blk < first || blk >= count ? blk : count;
		snprintf(why, sizeof(why), "is outside the filesystem (%llu "
			 "blocks)", (unsigned long long)count);
	} else if (!ext2fs_find_first_zero_block_bitmap2(fs->block_map, blk,
							 blk + len - 1, &bad)) {
		snprintf(why, sizeof(why), "the block bitmap marks free");
	} else {
		return 0;
	}
	print_owner(c, owner, sizeof(owner));
	ev_error("%s uses block %llu as %s, which %s: filesystem damaged; "
		 "run e2fsck", owner, (unsigned long long)bad, role, why);
	c->err = EV_EIO;
	return c->err;
}

static int check_mapped_block(ext2_filsys fs, blk64_t *blocknr,
			      e2_blkcnt_t blockcnt, blk64_t ref_blk,
			      int ref_offset, void *priv)
{
	struct check_ctx *c = priv;

	if (check_blocks(c, *blocknr, 1,
			 blockcnt < 0 ? "an indirect block" : "data"))
		return BLOCK_ABORT;
	return 0;
}

static int check_extent_blocks(struct check_ctx *c)
{
	ext2_filsys fs = c->w->fs;
	ext2_extent_handle_t h;
	struct ext2fs_extent ex;
	errcode_t e;

	e = ext2fs_extent_open2(fs, c->ino, (struct ext2_inode *)c->inode, &h);
	if (e)
		goto fail;
	e = ext2fs_extent_get(h, EXT2_EXTENT_ROOT, &ex);
	while (!e) {
		/*
		 * Each entry is checked before the walk descends into the
		 * node it points to; unwritten extents are allocated too.
		 */
		bool leaf = ex.e_flags & EXT2_EXTENT_FLAGS_LEAF;

		if (!(ex.e_flags & EXT2_EXTENT_FLAGS_SECOND_VISIT))
			check_blocks(c, ex.e_pblk, leaf ? ex.e_len : 1,
				     leaf ? "data" : "an extent-tree block");
		if (c->err)
			break;
		e = ext2fs_extent_get(h, EXT2_EXTENT_NEXT, &ex);
	}
	ext2fs_extent_free(h);
	if (c->err || e == EXT2_ET_EXTENT_NO_NEXT ||
	    e == EXT2_ET_NO_CURRENT_NODE)
		return c->err;
fail:
	ev_error("cannot read the extent tree of inode %u: %s", c->ino,
		 error_message(e));
	return EV_EIO;
}

static int check_inode(struct walk *w, ext2_ino_t ino,
		       const struct ext2_inode *inode)
{
	struct check_ctx c = { .w = w, .ino = ino, .inode = inode };
	blk64_t acl = ext2fs_file_acl_block(w->fs, inode);
	errcode_t e;

	if (acl && check_blocks(&c, acl, 1, "its xattr block"))
		return c.err;
	/* Inline data, fast symlinks and device inodes have no blocks. */
	if (!ext2fs_inode_has_valid_blocks2(w->fs, (struct ext2_inode *)inode))
		return 0;
	if (inode->i_flags & EXT4_EXTENTS_FL)
		return check_extent_blocks(&c);
	e = ext2fs_block_iterate3(w->fs, ino, BLOCK_FLAG_READ_ONLY, NULL,
				  check_mapped_block, &c);
	if (c.err)
		return c.err;
	if (e) {
		ev_error("cannot read the block map of inode %u: %s", ino,
			 error_message(e));
		return EV_EIO;
	}
	return 0;
}

static int check_inodes(struct walk *w)
{
	ext2_inode_scan scan;
	struct ext2_inode inode;
	ext2_ino_t ino = 0;
	errcode_t e;
	int err = 0;

	e = ext2fs_open_inode_scan(w->fs, 0, &scan);
	if (e) {
		ev_error("cannot scan the inode tables: %s", error_message(e));
		return EV_EIO;
	}
	for (;;) {
		e = ext2fs_get_next_inode_full(scan, &ino, &inode,
					       sizeof(inode));
		if (e) {
			ev_error("cannot read inode %u: %s", ino,
				 error_message(e));
			err = EV_EIO;
			break;
		}
		if (!ino)
			break;
		/* Deleted inodes keep stale mappings the kernel ignores. */
		if (!inode.i_links_count)
			continue;
		err = check_inode(w, ino, &inode);
		if (err)
			break;
	}
	ext2fs_close_inode_scan(scan);
	return err;
}

static int check_metadata(struct walk *w)
{
	ext2_filsys fs = w->fs;
	struct check_ctx c = { .w = w };
	ext2fs_block_bitmap sb;
	blk64_t s = fs->super->s_first_data_block, z;
	blk64_t end = ext2fs_blocks_count(fs->super) - 1;
	char role[64];
	errcode_t e;
	dgrp_t g;

	/* Superblock copies, group descriptors and reserved GDT blocks. */
	e = ext2fs_allocate_block_bitmap(fs, "superblocks", &sb);
	if (e) {
		ev_error("cannot allocate a block bitmap: %s",
			 error_message(e));
		return EV_ENOMEM;
	}
	for (g = 0; g < fs->group_desc_count; g++)
		ext2fs_reserve_super_and_bgd(fs, g, sb);
	while (s <= end && !c.err) {
		if (ext2fs_find_first_set_block_bitmap2(sb, s, end, &s))
			break;
		if (ext2fs_find_first_zero_block_bitmap2(sb, s, end, &z))
			z = end + 1;
		check_blocks(&c, s, z - s,
			     "a superblock or group descriptor block");
		s = z;
	}
	ext2fs_free_block_bitmap(sb);
	for (g = 0; g < fs->group_desc_count && !c.err; g++) {
		snprintf(role, sizeof(role), "the block bitmap of group %u", g);
		if (check_blocks(&c, ext2fs_block_bitmap_loc(fs, g), 1, role))
			break;
		snprintf(role, sizeof(role), "the inode bitmap of group %u", g);
		if (check_blocks(&c, ext2fs_inode_bitmap_loc(fs, g), 1, role))
			break;
		snprintf(role, sizeof(role), "the inode table of group %u", g);
		check_blocks(&c, ext2fs_inode_table_loc(fs, g),
			     fs->inode_blocks_per_group, role);
	}
	if (!c.err && ext2fs_has_feature_mmp(fs->super))
		check_blocks(&c, fs->super->s_mmp_block, 1, "the MMP block");
	return c.err;
}

/*
 * What the target serves must be what the kernel would read from a clean
 * filesystem mounted read-only: it cannot replay a journal there (the
 * device is read-only), and a filesystem marked with errors may hold
 * anything.
 */
static int check_state(ext2_filsys fs, const char *image)
{
	if (ext2fs_has_feature_journal_needs_recovery(fs->super)) {
		ev_error("the journal of %s needs recovery (needs_recovery), "
			 "which the kernel cannot do on a read-only device: "
			 "run e2fsck on the image first", image);
		return EV_EIO;
	}
	if (fs->super->s_state & EXT2_ERROR_FS) {
		ev_error("%s is marked as having errors: run e2fsck on the "
			 "image first", image);
		return EV_EIO;
	}
	return 0;
}

int ev_fs_read_ext4(const struct ev_fs_image *img, struct ev_fs *out)
{
	const char *image = img->path;
	u64 data_blocks = img->data_blocks;
	u32 block_size = img->block_size;
	struct walk w = { .data_blocks = data_blocks,
			  .block_size = block_size, .out = out };
	ext2_filsys fs;
	errcode_t e;
	u64 fs_blocks;
	int err;

	/* Else error_message() prints "Unknown code ext2 N". */
	initialize_ext2_error_table();
	memset(out, 0, sizeof(*out));
	e = ext2fs_open2(image, NULL, EXT2_FLAG_64BITS, 0, 0, unix_io_manager,
			 &fs);
	if (e == EXT2_ET_BAD_MAGIC || e == EXT2_ET_SB_CSUM_INVALID ||
	    e == EXT2_ET_CORRUPT_SUPERBLOCK || e == EXT2_ET_SHORT_READ) {
		if (img->probed)
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
	err = check_state(fs, image);
	if (err)
		goto out;
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
	err = walk_tree(&w);
	if (!err)
		err = ev_fs_make_inodes(out, read_mapping, &w);
	if (!err)
		err = read_bitmap(&w);
	if (!err)
		err = check_metadata(&w);
	if (!err)
		err = check_inodes(&w);
out:
	free(w.dir_seen);
	free(w.ents);
	free(w.stack);
	free(w.path);
	ext2fs_close_free(&fs);
	return err;
}
