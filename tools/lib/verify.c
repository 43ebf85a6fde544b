// SPDX-License-Identifier: GPL-2.0
/*
 * Userspace verification of a whole image: each tree's stored hash blocks
 * are checked from its authenticated root down, then every data block of
 * every file or residual extent against its leaf digest, so a report can
 * name exactly what is damaged.  Trees are read a chunk at a time, never
 * whole: a sparse file's tree is as large as its apparent size.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hash.h"
#include "progress.h"
#include "verify.h"

struct vctx {
	struct ev_area *a;
	struct ev_hasher h;
	int data_fd;
	u64 reports;
	struct ev_verify_result *res;	/* its callback, for each report */
	struct ev_path_buf *path;	/* the path of the item being reported */
	u8 *top;		/* current tree: its top block, zero-padded */
	u64 levels;		/* ... and its lower levels' byte offset */
	u8 *vblk[EXTVERITY_MAX_LEVELS];	/* ... one verified block a level */
	u64 vidx[EXTVERITY_MAX_LEVELS];	/* ... its index, or UINT64_MAX */
	bool tree_bad;		/* ... a hash block under it did not match */
	u8 *buf;		/* one chunk of data or hash blocks */
	u8 *dig;		/* the digests that chunk is checked against */
	u64 *bad_tops;		/* TOPS blocks whose tops do not match */
	u32 **bad_top_trees;
	size_t *bad_top_n;
	size_t nr_bad_tops;
	size_t bad_tops_cap;
};

#define CHUNK	256

/*
 * Report damaged item @it, described by @fmt: the first EV_MAX_REPORTS are
 * printed and passed to the caller's callback, the rest only counted.
 */
static __printf(3, 4) void report(struct vctx *v,
				  const struct ev_verify_item *it,
				  const char *fmt, ...)
{
	va_list ap;

	if (v->reports++ >= EV_MAX_REPORTS)
		return;
	/* On a terminal, not at the end of the progress line drawn there. */
	ev_progress_clear();
	va_start(ap, fmt);
	fputs("extverity: corrupted: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	if (v->res && v->res->item)
		v->res->item(it, v->res->arg);
}

/* Name tree @tree in @out; its file, if it is one's. */
static const struct ev_file_entry *tree_name(struct vctx *v, u32 tree,
					     char *out, size_t len)
{
	const struct ev_file_entry *f;

	if (tree == EXTVERITY_TREE_RESIDUAL) {
		snprintf(out, len, "metadata");
		return NULL;
	}
	f = ev_area_file_of_tree(v->a, tree);
	if (f)
		snprintf(out, len, "%s (inode %" PRIu64 ")",
			 ev_area_file_path(v->a, f - v->a->files, v->path),
			 f->ino);
	else
		snprintf(out, len, "tree %u", tree);
	return f;
}

/* Data block @blk of inode @ino at byte @off is damaged. */
static void report_file(struct vctx *v, u64 ino, u64 off, u64 blk)
{
	struct ev_verify_item it = {
		.kind = EV_ITEM_FILE, .inode = ino, .offset = off, .block = blk,
	};
	const char *path = NULL;

	/* Its path only when it is printed: a lookup is not free. */
	if (v->reports < EV_MAX_REPORTS)
		path = ev_area_path_of(v->a, ino, v->path);
	it.path = path;

	report(v, &it, "file %s (inode %" PRIu64 ") at offset %" PRIu64
	       " (data block %" PRIu64 ")", path ? path : "?", ino, off, blk);
}

static void report_metadata(struct vctx *v, u64 blk)
{
	struct ev_verify_item it = { .kind = EV_ITEM_METADATA, .block = blk };

	report(v, &it, "metadata block %" PRIu64, blk);
}

/* Level @level of tree @tree's stored hash blocks is damaged. */
static void report_tree(struct vctx *v, u32 tree, int level)
{
	struct ev_verify_item it = {
		.kind = EV_ITEM_HASH_TREE, .tree = tree, .level = level,
	};
	const struct ev_file_entry *f;
	char name[300];

	/* Past the cap only counted: naming it costs a path lookup. */
	if (v->reports >= EV_MAX_REPORTS) {
		v->reports++;
		return;
	}
	f = tree_name(v, tree, name, sizeof(name));
	if (f) {
		it.path = v->path->s;	/* tree_name() rebuilt it there */
		it.inode = f->ino;
	}
	report(v, &it, "hash tree of %s level %d", name, level);
}

static void note_bad_top(struct vctx *v, u64 block, u32 tree)
{
	size_t i = v->nr_bad_tops;

	/*
	 * Trees are checked in record order and their tops lie in that order
	 * (extverity_check_tree() refuses others): the trees of one block
	 * come one after another, so only the last block noted can be it.
	 */
	if (!i || v->bad_tops[i - 1] != block) {
		xgrow((void **)&v->bad_tops, &v->bad_tops_cap, i + 1,
		      sizeof(u64));
		v->bad_top_trees = xrealloc(v->bad_top_trees,
					    v->bad_tops_cap * sizeof(u32 *));
		v->bad_top_n = xrealloc(v->bad_top_n,
					v->bad_tops_cap * sizeof(size_t));
		v->bad_tops[i] = block;
		v->bad_top_trees[i] = NULL;
		v->bad_top_n[i] = 0;
		v->nr_bad_tops++;
	} else {
		i--;
	}
	v->bad_top_trees[i] = xrealloc(v->bad_top_trees[i],
				       (v->bad_top_n[i] + 1) * sizeof(u32));
	v->bad_top_trees[i][v->bad_top_n[i]++] = tree;
}

static void print_bad_tops(struct vctx *v)
{
	struct ev_verify_item it = { .kind = EV_ITEM_PACKED_TOP };
	size_t i, k;

	for (i = 0; i < v->nr_bad_tops; i++) {
		char names[512] = "", one[256];
		size_t used = 0;

		/* Past the cap only counted, as report() would. */
		if (v->reports >= EV_MAX_REPORTS) {
			v->reports++;
			free(v->bad_top_trees[i]);
			continue;
		}
		for (k = 0; k < v->bad_top_n[i]; k++) {
			const char *sep = k ? ", " : "";
			u32 t = v->bad_top_trees[i][k];
			const struct ev_file_entry *f =
				t ? ev_area_file_of_tree(v->a, t) : NULL;

			if (t == 0)
				snprintf(one, sizeof(one), "%smetadata", sep);
			else if (f)
				snprintf(one, sizeof(one), "%s%s", sep,
					 ev_area_file_path(v->a, f - v->a->files,
							   v->path));
			else
				snprintf(one, sizeof(one), "%stree %u", sep,
					 v->bad_top_trees[i][k]);
			if (used + strlen(one) + 5 >= sizeof(names)) {
				strcat(names, ", ...");
				break;
			}
			strcat(names, one);
			used += strlen(one);
		}
		it.block = v->bad_tops[i];
		it.trees = v->bad_top_trees[i];
		it.nr_trees = v->bad_top_n[i];
		report(v, &it, "packed top hash block %" PRIu64
		       " (trees of %s)", v->bad_tops[i], names);
		free(v->bad_top_trees[i]);
	}
}

static int read_hash(struct vctx *v, void *buf, size_t len, u64 off)
{
	int err = ev_pread(v->a->fd, buf, len, off);

	if (err) {
		ev_error("cannot read the hash blocks of %s: %s",
			 v->a->path, strerror(-err));
		return EV_EIO;
	}
	return 0;
}

/*
 * Digests [@first, @first + @n) of level @level of the current tree @i,
 * @n at most CHUNK: in the top block, or read into v->dig.  NULL on a read
 * error, with *@ioerr set.
 */
static const u8 *level_digests(struct vctx *v, u32 i, u32 level, u64 first,
			       u64 n, int *ioerr)
{
	const struct extverity_geometry *g = &v->a->geo[i];
	u32 bs = v->a->p.block_size, ds = v->a->p.digest_size;

	if (level == g->num_levels - 1)
		return v->top + first * ds;
	*ioerr = read_hash(v, v->dig, n * ds, v->levels +
			   g->level_start[level] * bs + first * ds);
	return *ioerr ? NULL : v->dig;
}

/*
 * Check tree @i's hash blocks from the root down, a chunk of each level at
 * a time against the digests in the level above, to name a damaged level
 * even where no data uses it.  A level read here is not trusted later: the
 * hash file may not return the same bytes twice (a file on storage someone
 * else serves), so check_extent() verifies again each hash block it uses
 * (verified_block()).  Returns false when the top or a level is damaged.
 */
static bool check_tree(struct vctx *v, u32 i, int *ioerr)
{
	const struct extverity_params *p = &v->a->p;
	const struct extverity_tree *t = ev_area_tree(v->a, i);
	const struct extverity_geometry *g = &v->a->geo[i];
	u32 bs = p->block_size, ds = p->digest_size;
	u64 top = le64_to_cpu(t->top), count[EXTVERITY_MAX_LEVELS];
	u8 digest[EXTVERITY_MAX_DIGEST_SIZE];
	const u8 *up;
	bool ok = true;
	int l;
	u64 j, k, n;

	v->tree_bad = false;
	for (l = 0; l < EXTVERITY_MAX_LEVELS; l++)
		v->vidx[l] = UINT64_MAX;
	if (!g->num_levels)
		return true;
	v->levels = v->a->offset +
		    (le64_to_cpu(t->levels) << p->log_blocksize);
	memset(v->top, 0, bs);
	*ioerr = read_hash(v, v->top, g->top_len, v->a->offset + top);
	if (*ioerr)
		return false;
	ev_hash_block(&v->h, v->top, digest);
	if (memcmp(digest, t->root_hash, ds)) {
		note_bad_top(v, top >> p->log_blocksize, i);
		return false;
	}
	count[0] = ev_div_round_up(g->data_blocks, bs / ds);
	for (l = 1; l < (int)g->num_levels; l++)
		count[l] = ev_div_round_up(count[l - 1], bs / ds);
	for (l = g->num_levels - 2; l >= 0; l--) {
		bool level_ok = true;

		for (j = 0; j < count[l]; j += n) {
			n = count[l] - j > CHUNK ? CHUNK : count[l] - j;
			*ioerr = read_hash(v, v->buf, n * bs, v->levels +
					   (g->level_start[l] + j) * bs);
			up = *ioerr ? NULL :
			     level_digests(v, i, l + 1, j, n, ioerr);
			if (!up)
				return false;
			for (k = 0; k < n; k++) {
				ev_hash_block(&v->h, v->buf + k * bs, digest);
				if (memcmp(digest, up + k * ds, ds))
					level_ok = false;
			}
		}
		if (!level_ok) {
			/* Named only when reported: most trees are intact. */
			report_tree(v, i, l);
			ok = false;
		}
	}
	return ok;
}

/*
 * Block @idx of level @level of the current tree @i, read and checked
 * against the digest its parent holds, the parent first, up to the top
 * (in memory, checked against the root): the bytes returned are the bytes
 * verified.  One block a level is kept, so extents in leaf order read each
 * hash block once.  NULL on a read error (*@ioerr set) or a mismatch
 * (*@bad_level set to the level).
 */
static const u8 *verified_block(struct vctx *v, u32 i, u32 level, u64 idx,
				int *ioerr, int *bad_level)
{
	const struct extverity_params *p = &v->a->p;
	const struct extverity_geometry *g = &v->a->geo[i];
	u32 bs = p->block_size, ds = p->digest_size;
	u64 mask = (1ULL << p->log_digests_per_block) - 1;
	u8 digest[EXTVERITY_MAX_DIGEST_SIZE];
	const u8 *parent;

	if (level == g->num_levels - 1)
		return v->top;
	if (v->vidx[level] == idx)
		return v->vblk[level];
	parent = verified_block(v, i, level + 1,
				idx >> p->log_digests_per_block, ioerr,
				bad_level);
	if (!parent)
		return NULL;
	v->vidx[level] = UINT64_MAX;
	*ioerr = read_hash(v, v->vblk[level], bs, v->levels +
			   (g->level_start[level] + idx) * bs);
	if (*ioerr)
		return NULL;
	ev_hash_block(&v->h, v->vblk[level], digest);
	if (memcmp(digest, parent + (idx & mask) * ds, ds)) {
		*bad_level = level;
		return NULL;
	}
	v->vidx[level] = idx;
	return v->vblk[level];
}

/*
 * The authenticated digest of leaf @lf of the current tree @tree, or NULL:
 * *@err set on a read error; else the hash block over it did not match,
 * which is reported once, and the rest of the tree's data left unchecked.
 */
static const u8 *leaf_digest(struct vctx *v, u32 tree, u64 lf, int *err)
{
	const struct extverity_params *p = &v->a->p;
	u64 mask = (1ULL << p->log_digests_per_block) - 1;
	const u8 *b;
	int bad_level;

	if (!v->a->geo[tree].num_levels)
		return ev_area_tree(v->a, tree)->root_hash;
	b = verified_block(v, tree, 0, lf >> p->log_digests_per_block, err,
			   &bad_level);
	if (b)
		return b + (lf & mask) * p->digest_size;
	if (!*err) {
		report_tree(v, tree, bad_level);
		v->tree_bad = true;
	}
	return NULL;
}

/* Check the data blocks of one extent against tree @tree's leaves. */
static int check_extent(struct vctx *v, const struct extverity_extent *e)
{
	const struct extverity_params *p = &v->a->p;
	u32 tree = le32_to_cpu(e->tree), bs = p->block_size;
	u64 start = le64_to_cpu(e->start), leaf = le64_to_cpu(e->leaf);
	u64 count = le32_to_cpu(e->count), ino = le64_to_cpu(e->inode);
	u8 digest[EXTVERITY_MAX_DIGEST_SIZE];
	const u8 *want;
	u64 done, k;

	for (done = 0; done < count; done += k) {
		u64 n = count - done > CHUNK ? CHUNK : count - done;
		int err = 0;

		err = ev_pread(v->data_fd, v->buf, n * bs,
			       (start + done) * bs);
		if (err) {
			ev_error("cannot read the data image: %s",
				 strerror(-err));
			return EV_EIO;
		}
		ev_progress_add(n * bs);
		for (k = 0; k < n; k++) {
			u64 blk = start + done + k, lf = leaf + done + k;

			want = leaf_digest(v, tree, lf, &err);
			if (!want)
				return err;
			ev_hash_block(&v->h, v->buf + k * bs, digest);
			if (!memcmp(digest, want, p->digest_size))
				continue;
			if (tree == EXTVERITY_TREE_RESIDUAL) {
				report_metadata(v, blk);
				continue;
			}
			report_file(v, ino, lf * bs, blk);
		}
	}
	return 0;
}

/* Extent indexes by tree, then by index; @arg: the extents. */
static int cmp_by_tree(const void *x, const void *y, void *arg)
{
	const struct extverity_extent *ext = arg;
	u64 a = *(const u64 *)x, b = *(const u64 *)y;
	u32 ta = le32_to_cpu(ext[a].tree), tb = le32_to_cpu(ext[b].tree);

	if (ta != tb)
		return ta < tb ? -1 : 1;
	return a < b ? -1 : a > b;
}

int ev_verify(struct ev_area *a, const char *image,
	      struct ev_verify_result *res)
{
	const struct extverity_params *p = &a->p;
	u64 nr_ext = p->sect[EXTVERITY_SECT_EXTENTS].nr_entries;
	u64 nr_trees = p->sect[EXTVERITY_SECT_TREES].nr_entries;
	struct vctx v = { .a = a, .res = res };
	struct stat st;
	u64 *order, i, t, bytes = 0;
	int err = 0;

	v.data_fd = open(image, O_RDONLY);
	if (v.data_fd < 0 || fstat(v.data_fd, &st)) {
		ev_error("cannot open %s: %s", image, strerror(errno));
		return EV_EIO;
	}
	if (S_ISREG(st.st_mode) &&
	    (u64)st.st_size < p->data_blocks << p->log_blocksize) {
		ev_error("%s is smaller than the %llu blocks the hash area "
			 "describes", image,
			 (unsigned long long)p->data_blocks);
		close(v.data_fd);
		return EV_EUSAGE;
	}
	err = ev_hasher_init(&v.h, p->hash_algorithm, a->sb.salt,
			     p->salt_size, p->block_size);
	if (err) {
		close(v.data_fd);
		return err;
	}
	v.buf = xmalloc((size_t)CHUNK * p->block_size);
	v.path = ev_path_new();
	v.dig = xmalloc((size_t)CHUNK * p->digest_size);
	v.top = xmalloc(p->block_size);
	for (i = 0; i < EXTVERITY_MAX_LEVELS; i++)
		v.vblk[i] = xmalloc(p->block_size);
	/* Group the extents by tree so each tree is loaded once. */
	order = xcalloc(nr_ext, sizeof(*order));
	for (i = 0; i < nr_ext; i++)
		order[i] = i;
	qsort_r(order, nr_ext, sizeof(*order), cmp_by_tree, a->extents);
	for (i = 0; i < nr_ext; i++)
		if (le32_to_cpu(a->extents[i].tree) != EXTVERITY_TREE_ZERO)
			bytes += (u64)le32_to_cpu(a->extents[i].count) <<
				 p->log_blocksize;
	ev_progress_begin("verifying", bytes);
	i = 0;
	for (t = 0; t < nr_trees && !err; t++) {
		bool ok = check_tree(&v, t, &err);

		for (; i < nr_ext; i++) {
			const struct extverity_extent *e = &a->extents[order[i]];

			if (le32_to_cpu(e->tree) != t)
				break;
			if (ok && !err && !v.tree_bad)
				err = check_extent(&v, e);
		}
	}
	ev_progress_end();
	print_bad_tops(&v);
	if (v.reports > EV_MAX_REPORTS)
		ev_error("... and %llu more corrupted items",
			 (unsigned long long)(v.reports - EV_MAX_REPORTS));
	if (!err && v.reports)
		err = EV_ECORRUPT;
	if (res) {
		res->data_bytes = bytes;
		res->corrupted = v.reports;
	}
	free(order);
	free(v.buf);
	free(v.path);
	free(v.top);
	for (i = 0; i < EXTVERITY_MAX_LEVELS; i++)
		free(v.vblk[i]);
	free(v.dig);
	free(v.bad_tops);
	free(v.bad_top_trees);
	free(v.bad_top_n);
	ev_hasher_free(&v.h);
	close(v.data_fd);
	return err;
}
