// SPDX-License-Identifier: GPL-2.0
/*
 * Building the hash area of docs/format.md.  The steps, in order:
 *  1. hash every file's tree in parallel (this also tells which last blocks
 *     have non-zero bytes past EOF);
 *  2. serially: give each physical block of a file to that file (first
 *     claim by inode number wins), order the trees by the position of their
 *     first extent, dedup identical content;
 *  3. sweep the image: unowned allocated blocks form the residual tree,
 *     free blocks zero ranges; hash the residual tree in parallel;
 *  4. serialise the sections, pack the tops, index the inodes, digest the
 *     TOPS blocks, write the superblock.
 * Trees keep only their tops in memory; their lower levels, whose size
 * follows the files' apparent sizes, go to a scratch file (tree.h) from
 * which ev_write_area() copies them to the LEVELS section.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "hash.h"
#include "layout.h"
#include "parallel.h"
#include "write.h"
#include "read.h"

/* A run of image blocks owned by a file. */
struct owned {
	u64 phys;
	u64 leaf;
	u64 count;
	size_t inode;
};

/* Extent map under construction, in CPU order. */
struct emap {
	struct extverity_extent *v;
	size_t n, cap;
};

struct ctx {
	const struct ev_format_opts *o;
	struct extverity_params p;
	struct ev_fs *fs;
	size_t nr_inodes;
	struct ev_tree *itrees;		/* per inode */
	struct owned *owned;
	size_t nr_owned, owned_cap;
	u32 *tree_of;			/* per inode: final tree index */
	size_t *order;			/* inodes in tree order */
	struct ev_tree **trees;		/* final tree table, [0] residual */
	size_t nr_trees;
	struct ev_tree residual;
	struct ev_run *res_runs;
	size_t nr_res_runs, res_cap;
	struct emap map;
	u64 zero_blocks;
	int scratch;		/* lower tree levels, -1 until needed */
	u64 scratch_len;
};

static void set_params(struct ctx *c)
{
	struct extverity_params *p = &c->p;

	/* As the kernel will derive them from the superblock written here. */
	extverity_init_params(p, c->o->hash_algorithm, c->o->log_blocksize);
	p->salt_size = c->o->salt_size;
	p->data_blocks = c->o->data_blocks;
}

/*
 * An unlinked file for the lower tree levels, in $TMPDIR or /var/tmp (not
 * /tmp, often a tmpfs, that is memory).  O_TMPFILE leaves nothing behind
 * even if we are killed; without it, the file is unlinked at once.
 */
static int open_scratch(struct ctx *c)
{
	const char *dir = getenv("TMPDIR");
	char *path;
	int fd;

	if (!dir || !*dir)
		dir = "/var/tmp";
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) {
		path = xmalloc(strlen(dir) + 32);
		sprintf(path, "%s/.extverity.XXXXXX", dir);
		fd = mkostemp(path, O_CLOEXEC);
		if (fd >= 0)
			unlink(path);
		free(path);
	}
	if (fd < 0) {
		ev_error("cannot create a scratch file in %s (set TMPDIR to "
			 "another directory): %s", dir, strerror(errno));
		return EV_EIO;
	}
	c->scratch = fd;
	return 0;
}

/*
 * Give @t room for its lower levels in the scratch file; ev_tree_hash_data()
 * relies on the room reading as zeros until written (the last block of a
 * level is zero-padded), which a file extended by ftruncate() does.
 */
static int place_tree(struct ctx *c, struct ev_tree *t)
{
	u64 len = ev_tree_lower_bytes(t, c->p.block_size);
	int err;

	if (!len)
		return 0;
	if (c->scratch < 0) {
		err = open_scratch(c);
		if (err)
			return err;
	}
	t->scratch_fd = c->scratch;
	t->scratch_off = c->scratch_len;
	if (ftruncate(c->scratch, c->scratch_len + len)) {
		ev_error("cannot extend the scratch file of the hash trees: "
			 "%s", strerror(errno));
		return EV_EIO;
	}
	c->scratch_len += len;
	return 0;
}

static int hash_files(struct ctx *c, int fd)
{
	struct ev_jobs jobs = { .progress = "hashing files",
				.threads = c->o->threads };
	size_t i;
	int err;

	if (!c->nr_inodes)
		return 0;
	c->itrees = xcalloc(c->nr_inodes, sizeof(*c->itrees));
	for (i = 0; i < c->nr_inodes; i++) {
		struct ev_inode *in = &c->fs->inodes[i];
		struct ev_tree *t = &c->itrees[i];

		if (ev_tree_init(t, &c->p, in->size)) {
			ev_error("inode %llu: size %llu bytes is more than "
				 "a hash tree covers (%llu blocks)",
				 (unsigned long long)in->ino,
				 (unsigned long long)in->size,
				 (unsigned long long)EXTVERITY_MAX_TREE_BLOCKS);
			free(jobs.v);
			return EV_EUSAGE;
		}
		err = place_tree(c, t);
		if (err) {
			free(jobs.v);
			return err;
		}
		t->runs = in->runs;
		t->nr_runs = in->nr_runs;
		t->inline_data = in->inline_data;
		t->src_dir = c->fs->root_fd;
		t->src_path = in->src;
		ev_jobs_add_data(&jobs, t);
	}
	err = ev_jobs_run(&jobs, &c->p, c->o->salt, fd);
	for (i = 0; !err && i < c->nr_inodes; i++)
		ev_jobs_add_finish(&jobs, &c->itrees[i]);
	if (!err)
		err = ev_jobs_run(&jobs, &c->p, c->o->salt, fd);
	free(jobs.v);
	return err;
}

static void add_owned(struct ctx *c, u64 phys, u64 leaf, u64 count,
		      size_t inode)
{
	xgrow((void **)&c->owned, &c->owned_cap, c->nr_owned + 1,
	      sizeof(*c->owned));
	c->owned[c->nr_owned++] = (struct owned){ phys, leaf, count, inode };
}

/*
 * Give each block to the first file (by inode number) that maps it.  A
 * last block with bytes past EOF that are not zero stays unowned: its leaf
 * digest covers the zero-padded block, not what is on disk.
 */
static void claim_blocks(struct ctx *c)
{
	u8 *claimed;
	size_t i, r;

	/* A raw image has no files: no bitmap of a bit per block for them. */
	if (!c->nr_inodes)
		return;
	claimed = xcalloc(ev_div_round_up(c->p.data_blocks, 8), 1);

	for (i = 0; i < c->nr_inodes; i++) {
		const struct ev_tree *t = &c->itrees[i];
		u64 limit = t->g.data_blocks - (t->tail_dirty ? 1 : 0);

		for (r = 0; r < t->nr_runs; r++) {
			const struct ev_run *run = &t->runs[r];
			u64 k, start = 0;
			bool in = false;

			for (k = 0; k < run->count; k++) {
				u64 b = run->physical + k;
				bool ok = run->logical + k < limit &&
					  !ev_test_bit(claimed, b);

				if (ok)
					ev_set_bit(claimed, b);
				if (ok && !in) {
					start = k;
					in = true;
				} else if (!ok && in) {
					add_owned(c, run->physical + start,
						  run->logical + start,
						  k - start, i);
					in = false;
				}
			}
			if (in)
				add_owned(c, run->physical + start,
					  run->logical + start,
					  run->count - start, i);
		}
	}
	free(claimed);
}

static int cmp_owned(const void *a, const void *b)
{
	const struct owned *x = a, *y = b;

	return x->phys < y->phys ? -1 : x->phys > y->phys;
}

/* Order of identical content: (size, root), then tree order; @arg: ctx. */
static int cmp_content(const void *a, const void *b, void *arg)
{
	const struct ctx *c = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	const struct ev_tree *tx = &c->itrees[x], *ty = &c->itrees[y];
	int r;

	if (tx->data_size != ty->data_size)
		return tx->data_size < ty->data_size ? -1 : 1;
	r = memcmp(tx->root, ty->root, c->p.digest_size);
	if (r)
		return r;
	return x < y ? -1 : x > y;
}

/* Tree order: by first owned block, then extent-less files by inode. */
static void order_trees(struct ctx *c)
{
	size_t n = c->nr_inodes, k = 0, i;
	size_t *rank = xcalloc(n, sizeof(*rank));
	size_t *by_content = xcalloc(n, sizeof(*by_content));
	u8 *seen = xcalloc(n, 1);
	u32 next = 1;

	c->order = xcalloc(n, sizeof(*c->order));
	for (i = 0; i < c->nr_owned; i++) {
		size_t in = c->owned[i].inode;

		if (!seen[in]) {
			seen[in] = 1;
			c->order[k++] = in;
		}
	}
	for (i = 0; i < n; i++)
		if (!seen[i])
			c->order[k++] = i;
	/* Group equal content; in each group the first in order wins. */
	for (i = 0; i < n; i++) {
		rank[c->order[i]] = i;
		by_content[i] = i;
	}
	qsort_r(by_content, n, sizeof(*by_content), cmp_content, c);
	c->tree_of = xcalloc(n, sizeof(*c->tree_of));
	/* Representative of each content group: lowest rank. */
	{
		size_t *rep = xcalloc(n, sizeof(*rep));
		size_t g = 0;

		while (g < n) {
			size_t e = g + 1, best = by_content[g];

			while (e < n &&
			       c->itrees[by_content[e]].data_size ==
			       c->itrees[best].data_size &&
			       !memcmp(c->itrees[by_content[e]].root,
				       c->itrees[best].root,
				       c->p.digest_size))
				e++;
			for (i = g; i < e; i++)
				if (rank[by_content[i]] < rank[best])
					best = by_content[i];
			for (i = g; i < e; i++)
				rep[by_content[i]] = best;
			g = e;
		}
		c->trees = xcalloc(n + 1, sizeof(*c->trees));
		c->trees[0] = &c->residual;
		for (i = 0; i < n; i++) {
			size_t in = c->order[i];

			if (rep[in] == in) {
				c->tree_of[in] = next;
				c->trees[next++] = &c->itrees[in];
			}
		}
		for (i = 0; i < n; i++)
			c->tree_of[i] = c->tree_of[rep[i]];
		free(rep);
	}
	c->nr_trees = next;
	free(rank);
	free(by_content);
	free(seen);
}

static void emit(struct ctx *c, u64 start, u64 leaf, u64 count, u32 tree,
		 u64 inode)
{
	struct extverity_extent *last;

	while (count) {
		u64 n = count > 0xffffffffULL ? 0xffffffffULL : count;

		last = c->map.n ? &c->map.v[c->map.n - 1] : NULL;
		if (last && last->tree == tree && last->inode == inode &&
		    last->start + last->count == start &&
		    (tree == EXTVERITY_TREE_ZERO ||
		     last->leaf + last->count == leaf) &&
		    (u64)last->count + n <= 0xffffffffULL) {
			last->count += n;
		} else {
			xgrow((void **)&c->map.v, &c->map.cap, c->map.n + 1,
			      sizeof(*c->map.v));
			c->map.v[c->map.n++] = (struct extverity_extent){
				.start = start, .leaf = leaf, .count = n,
				.tree = tree, .inode = inode,
			};
		}
		start += n;
		count -= n;
		if (tree != EXTVERITY_TREE_ZERO)
			leaf += n;
	}
}

static void add_residual(struct ctx *c, u64 phys, u64 rank, u64 count)
{
	struct ev_run *last = c->nr_res_runs ?
			      &c->res_runs[c->nr_res_runs - 1] : NULL;

	emit(c, phys, rank, count, EXTVERITY_TREE_RESIDUAL, 0);
	if (last && last->physical + last->count == phys) {
		last->count += count;
		return;
	}
	xgrow((void **)&c->res_runs, &c->res_cap, c->nr_res_runs + 1,
	      sizeof(*c->res_runs));
	c->res_runs[c->nr_res_runs++] = (struct ev_run){ rank, phys, count };
}

/* Blocks [from, to) owned by no file: residual if allocated, else zero. */
static void sweep_gap(struct ctx *c, u64 from, u64 to, u64 *rank)
{
	const u8 *used = c->fs->used;	/* NULL: every block in use */

	while (from < to) {
		bool u = !used || ev_test_bit(used, from);
		u64 e = from + 1;

		while (e < to && (!used || ev_test_bit(used, e)) == u)
			e++;
		if (u) {
			add_residual(c, from, *rank, e - from);
			*rank += e - from;
		} else {
			emit(c, from, 0, e - from, EXTVERITY_TREE_ZERO, 0);
			c->zero_blocks += e - from;
		}
		from = e;
	}
}

static int build_map(struct ctx *c, int fd)
{
	struct ev_jobs jobs = { .progress = "hashing metadata",
				.threads = c->o->threads };
	u64 pos = 0, rank = 0;
	size_t i;
	int err;

	for (i = 0; i < c->nr_owned; i++) {
		const struct owned *o = &c->owned[i];

		sweep_gap(c, pos, o->phys, &rank);
		emit(c, o->phys, o->leaf, o->count, c->tree_of[o->inode],
		     c->fs->inodes[o->inode].ino);
		pos = o->phys + o->count;
	}
	sweep_gap(c, pos, c->p.data_blocks, &rank);
	if (ev_tree_init(&c->residual, &c->p, rank << c->p.log_blocksize)) {
		ev_error("image too large for one residual tree");
		return EV_EUSAGE;
	}
	err = place_tree(c, &c->residual);
	if (err)
		return err;
	c->residual.runs = c->res_runs;
	c->residual.nr_runs = c->nr_res_runs;
	ev_jobs_add_data(&jobs, &c->residual);
	err = ev_jobs_run(&jobs, &c->p, c->o->salt, fd);
	if (!err) {
		ev_jobs_add_finish(&jobs, &c->residual);
		err = ev_jobs_run(&jobs, &c->p, c->o->salt, fd);
	}
	free(jobs.v);
	return err;
}

/*
 * The INODES section: (inode, tree) of every regular file, one entry an
 * inode whatever its number of paths, in inode order (the readers give
 * struct ev_fs.inodes sorted by inode number, each number once).  16 bytes
 * a file, the kernel's lookup from st_ino to the file's tree.
 */
static struct extverity_inode *build_inodes(struct ctx *c)
{
	struct extverity_inode *v = xcalloc(c->nr_inodes ? c->nr_inodes : 1,
					    sizeof(*v));
	size_t i;

	for (i = 0; i < c->nr_inodes; i++) {
		v[i].inode = cpu_to_le64(c->fs->inodes[i].ino);
		v[i].tree = cpu_to_le32(c->tree_of[i]);
	}
	return v;
}

/* Front-coded FILES stream, paths already sorted bytewise. */
static u8 *build_files(struct ctx *c, size_t *len)
{
	size_t cap = 0, n = 0, i;
	u8 *buf = NULL;
	const char *prev = "";

	for (i = 0; i < c->fs->nr_paths; i++) {
		const struct ev_path *pa = &c->fs->paths[i];
		size_t plen = strlen(pa->path), pre = 0;
		struct extverity_file f;

		/* check_paths() bounded plen, so both lengths fit 16 bits. */
		while (prev[pre] && prev[pre] == pa->path[pre])
			pre++;
		f.inode = cpu_to_le64(c->fs->inodes[pa->inode].ino);
		f.tree = cpu_to_le32(c->tree_of[pa->inode]);
		f.prefix_len = cpu_to_le16(pre);
		f.suffix_len = cpu_to_le16(plen - pre);
		xgrow((void **)&buf, &cap, n + sizeof(f) + plen - pre, 1);
		memcpy(buf + n, &f, sizeof(f));
		memcpy(buf + n + sizeof(f), pa->path + pre, plen - pre);
		n += sizeof(f) + plen - pre;
		prev = pa->path;
	}
	*len = n;
	return buf;
}

static void set_section(struct extverity_superblock *sb, unsigned int id,
			u64 *next, u64 blocks, u64 entries, u32 entry_size)
{
	struct extverity_section *s = &sb->sections[id];

	/* An empty section keeps its record size: the parser checks it. */
	s->entry_size = cpu_to_le32(entry_size);
	if (!blocks)
		return;
	s->start_block = cpu_to_le64(*next);
	s->nr_blocks = cpu_to_le64(blocks);
	s->nr_entries = cpu_to_le64(entries);
	*next += blocks;
}

/*
 * The salted digest of each of the @n TOPS blocks at @tops into @out, as
 * the kernel hashes a tree block; 0 or an exit code, printed.
 */
static int top_digests(const struct ctx *c, const u8 *tops, u64 n, u8 *out)
{
	struct ev_hasher h;
	int err;

	err = ev_hasher_init(&h, c->p.hash_algorithm, c->o->salt,
			     c->p.salt_size, c->p.block_size);
	if (err)
		return err;
	err = ev_hash_blocks(&h, tops, n, out);
	if (err)
		ev_hash_error(c->p.hash_algorithm, "hashing the top blocks");
	ev_hasher_free(&h);
	return err;
}

static int serialise(struct ctx *c, struct ev_area_out *out)
{
	const struct extverity_params *p = &c->p;
	u32 bs = p->block_size, ds = p->digest_size;
	struct extverity_superblock sb;
	size_t files_len, i;
	u8 *files = build_files(c, &files_len);
	struct extverity_inode *inodes = build_inodes(c);
	u64 inodes_bytes = (u64)c->nr_inodes * sizeof(*inodes);
	u64 *top_off = xcalloc(c->nr_trees, sizeof(u64));
	u64 tops_len = 0, lower = 0, next = 1, ext_bytes, tree_bytes;
	u64 tops_start, levels_start, inodes_start, fec_start = 0, lv;
	u64 nr_tops, digests_start;
	struct extverity_fec fec = { 0 };
	struct ev_area_data *area = &out->area;
	size_t pieces_cap = 0;
	u8 *buf, *tail = NULL;
	int err = 0;

	/* Next-fit packing of the top blocks, in tree order. */
	for (i = 0; i < c->nr_trees; i++) {
		const struct ev_tree *t = c->trees[i];

		if (!t->g.num_levels)
			continue;
		if ((tops_len & (bs - 1)) + t->g.top_len > bs)
			tops_len = (tops_len + bs - 1) & ~(u64)(bs - 1);
		top_off[i] = tops_len;
		tops_len += t->g.top_len;
		lower += t->g.lower_blocks;
	}
	for (i = 0; i < c->map.n; i++)
		if (c->map.v[i].tree == EXTVERITY_TREE_RESIDUAL)
			out->residual_blocks += c->map.v[i].count;
	ext_bytes = (u64)c->map.n * sizeof(struct extverity_extent);
	tree_bytes = (u64)c->nr_trees * p->tree_entry_size;

	memset(&sb, 0, sizeof(sb));
	memcpy(sb.magic, EXTVERITY_MAGIC, sizeof(sb.magic));
	sb.version = cpu_to_le32(EXTVERITY_FORMAT_VERSION);
	sb.hash_algorithm = p->hash_algorithm;
	sb.log_blocksize = p->log_blocksize;
	sb.salt_size = p->salt_size;
	sb.data_blocks = cpu_to_le64(p->data_blocks);
	memcpy(sb.uuid, c->o->uuid, 16);
	memcpy(sb.salt, c->o->salt, p->salt_size);
	set_section(&sb, EXTVERITY_SECT_EXTENTS, &next,
		    ev_div_round_up(ext_bytes, bs), c->map.n,
		    sizeof(struct extverity_extent));
	set_section(&sb, EXTVERITY_SECT_TREES, &next,
		    ev_div_round_up(tree_bytes, bs), c->nr_trees,
		    p->tree_entry_size);
	set_section(&sb, EXTVERITY_SECT_FILES, &next,
		    ev_div_round_up(files_len, bs), c->fs->nr_paths, 0);
	tops_start = next;
	set_section(&sb, EXTVERITY_SECT_TOPS, &next,
		    ev_div_round_up(tops_len, bs), 0, 0);
	levels_start = next;
	set_section(&sb, EXTVERITY_SECT_LEVELS, &next, lower, 0, 0);
	/*
	 * The inode index, after LEVELS (sections are in id order), always:
	 * a raw image has an empty one, so that the flag still says "this
	 * area has an index" and the kernel can tell "no such file" from
	 * "made by an older tool".
	 */
	sb.compat_flags = cpu_to_le32(EXTVERITY_COMPAT_INODE_INDEX);
	inodes_start = next;
	set_section(&sb, EXTVERITY_SECT_INODES, &next,
		    ev_div_round_up(inodes_bytes, bs), c->nr_inodes,
		    sizeof(struct extverity_inode));
	if (c->o->fec_roots) {
		sb.compat_flags |= cpu_to_le32(EXTVERITY_COMPAT_FEC);
		fec_start = next;
		set_section(&sb, EXTVERITY_SECT_FEC, &next, 1, 1,
			    sizeof(struct extverity_fec));
		fec.start = cpu_to_le64(c->o->fec_start);
		fec.roots = c->o->fec_roots;
	}
	/*
	 * A digest per TOPS block, after FEC, always (empty without TOPS):
	 * the kernel hashes a block of tops once instead of each top in it.
	 */
	sb.compat_flags |= cpu_to_le32(EXTVERITY_COMPAT_TOP_DIGESTS);
	nr_tops = ev_div_round_up(tops_len, bs);
	digests_start = next;
	set_section(&sb, EXTVERITY_SECT_TOP_DIGESTS, &next,
		    ev_div_round_up(nr_tops * ds, bs), nr_tops, ds);
	sb.hash_blocks = cpu_to_le64(next);
	/* FEC covers the area it is part of: its length is known now. */
	if (fec_start)
		fec.blocks = cpu_to_le64(p->data_blocks + next);

	/*
	 * In memory: everything but LEVELS, which is O(files + extents); the
	 * INODES, FEC and TOP_DIGESTS sections are the area's tail.
	 */
	area->len = next * bs;
	area->mem_len = levels_start * bs;
	buf = xzalloc(area->mem_len);
	area->mem = buf;
	area->tail_len = (next - inodes_start) * bs;
	if (area->tail_len) {
		tail = xzalloc(area->tail_len);
		memcpy(tail, inodes, inodes_bytes);
		if (fec_start)
			memcpy(tail + (fec_start - inodes_start) * bs, &fec,
			       sizeof(fec));
		area->tail = tail;
	}
	/* EXTENTS */
	for (i = 0; i < c->map.n; i++) {
		struct extverity_extent e = c->map.v[i];
		struct extverity_extent *d = (void *)(buf + bs) + i * sizeof(e);

		d->start = cpu_to_le64(e.start);
		d->leaf = cpu_to_le64(e.leaf);
		d->count = cpu_to_le32(e.count);
		d->tree = cpu_to_le32(e.tree);
		d->inode = cpu_to_le64(e.inode);
	}
	/* TREES, TOPS, LEVELS */
	lv = levels_start;
	for (i = 0; i < c->nr_trees; i++) {
		const struct ev_tree *t = c->trees[i];
		u64 off = le64_to_cpu(sb.sections[EXTVERITY_SECT_TREES]
				      .start_block) * bs +
			  i * p->tree_entry_size;
		struct extverity_tree *r = (void *)(buf + off);

		r->data_size = cpu_to_le64(t->data_size);
		memcpy(r->root_hash, t->root, ds);
		if (!t->g.num_levels)
			continue;
		r->top = cpu_to_le64(tops_start * bs + top_off[i]);
		memcpy(buf + tops_start * bs + top_off[i], t->top,
		       t->g.top_len);
		if (t->g.lower_blocks) {
			r->levels = cpu_to_le64(lv);
			xgrow((void **)&area->pieces, &pieces_cap,
			      area->nr_pieces + 1, sizeof(*area->pieces));
			area->pieces[area->nr_pieces++] = (struct ev_area_piece){
				.dst = lv * bs, .src = t->scratch_off,
				.len = t->g.lower_blocks * bs,
			};
			lv += t->g.lower_blocks;
		}
	}
	if (files_len)
		memcpy(buf + le64_to_cpu(sb.sections[EXTVERITY_SECT_FILES]
					 .start_block) * bs,
		       files, files_len);
	/* The TOPS blocks as stored, packed tops and zero slack. */
	if (nr_tops)
		err = top_digests(c, buf + tops_start * bs, nr_tops,
				  tail + (digests_start - inodes_start) * bs);
	for (i = 0; i < EXTVERITY_NR_SECTIONS && !err; i++) {
		struct extverity_section *s = &sb.sections[i];
		u64 start = le64_to_cpu(s->start_block);
		const u8 *data;

		if (!EXTVERITY_SECT_HAS_DIGEST(i) || !s->nr_blocks)
			continue;
		data = i >= EXTVERITY_SECT_INODES ?
		       area->tail + (start - inodes_start) * bs :
		       buf + start * bs;
		err = ev_hash_plain(p->hash_algorithm, data,
				    le64_to_cpu(s->nr_blocks) * bs, s->digest);
	}
	if (!err && fec_start) {
		const char *why;

		/* What readers will check, so that format writes nothing less. */
		c->p.hash_blocks = next;
		if (extverity_check_fec(&c->p, &fec, &out->fec, &why)) {
			ev_error("cannot place the FEC parity: %s", why);
			err = EV_EUSAGE;
		}
	}
	memcpy(buf, &sb, sizeof(sb));
	if (!err)
		err = ev_hash_plain(p->hash_algorithm, &sb, sizeof(sb),
				    out->root);
	if (err) {
		/* @out, with area->mem, is freed by the caller. */
		free(files);
		free(inodes);
		free(top_off);
		return err;
	}
	out->hash_blocks = next;
	out->extents = c->map.n;
	out->trees = c->nr_trees;
	out->files = c->fs->nr_paths;
	out->inodes = c->nr_inodes;
	out->top_digests = nr_tops;
	out->zero_blocks = c->zero_blocks;
	/* The scratch file now belongs to @out (ev_area_out_free()). */
	area->fd = c->scratch;
	c->scratch = -1;
	free(files);
	free(inodes);
	free(top_off);
	return 0;
}

/* Hash blocks over holes only, from the extent map, as dump counts them. */
static u64 hole_hash_blocks(struct ctx *c)
{
	struct extverity_geometry *geo = xcalloc(c->nr_trees + 1,
						 sizeof(*geo));
	struct ev_leaf_range *r = xcalloc(c->map.n + 1, sizeof(*r));
	size_t i, n = 0;
	u64 holes;

	for (i = 0; i < c->nr_trees; i++)
		geo[i] = c->trees[i]->g;
	for (i = 0; i < c->map.n; i++)
		if (c->map.v[i].tree != EXTVERITY_TREE_ZERO)
			r[n++] = (struct ev_leaf_range){
				.tree = c->map.v[i].tree,
				.leaf = c->map.v[i].leaf,
				.count = c->map.v[i].count,
			};
	holes = ev_hole_hash_blocks(&c->p, geo, c->nr_trees, r, n);
	free(r);
	free(geo);
	return holes;
}

static void count_shared(struct ctx *c, struct ev_area_out *out)
{
	u32 *users = xcalloc(c->nr_trees, sizeof(*users));
	size_t i;

	for (i = 0; i < c->nr_inodes; i++)
		users[c->tree_of[i]]++;
	for (i = 1; i < c->nr_trees; i++)
		if (users[i] > 1)
			out->shared_trees++;
	out->hole_hash_blocks = hole_hash_blocks(c);
	free(users);
}

/*
 * The FILES stream stores a path's length in 16 bits, and ext4 does not
 * bound the depth of a tree (PATH_MAX bounds only what one system call
 * takes).  Refuse a longer path before any hashing rather than write an area
 * that dump and verify cannot read back, or that names a file wrongly.
 */
static int check_paths(const struct ev_fs *fs)
{
	size_t i;

	for (i = 0; i < fs->nr_paths; i++) {
		const struct ev_path *pa = &fs->paths[i];
		size_t len = strlen(pa->path);

		if (len <= EV_FILE_PATH_MAX)
			continue;
		ev_error("path of inode %llu is %zu bytes long, more than the "
			 "%u the hash area can record: %.64s...",
			 (unsigned long long)fs->inodes[pa->inode].ino, len,
			 EV_FILE_PATH_MAX, pa->path);
		return EV_EUSAGE;
	}
	return 0;
}

int ev_build_area(const struct ev_format_opts *o, struct ev_fs *fs, int fd,
		  struct ev_area_out *out)
{
	struct ctx c = { .o = o, .fs = fs, .scratch = -1 };
	size_t i;
	int err = 0;

	memset(out, 0, sizeof(*out));
	out->area.fd = -1;
	err = check_paths(fs);
	if (err)
		return err;
	set_params(&c);
	c.nr_inodes = fs->nr_inodes;
	err = hash_files(&c, fd);
	if (err)
		goto out;
	claim_blocks(&c);
	if (c.nr_owned)	/* qsort(NULL, 0) is undefined */
		qsort(c.owned, c.nr_owned, sizeof(*c.owned), cmp_owned);
	order_trees(&c);
	err = build_map(&c, fd);
	if (err)
		goto out;
	count_shared(&c, out);
	err = serialise(&c, out);
out:
	for (i = 0; c.itrees && i < c.nr_inodes; i++)
		ev_tree_free(&c.itrees[i]);
	ev_tree_free(&c.residual);
	free(c.itrees);
	free(c.owned);
	free(c.tree_of);
	free(c.order);
	free(c.trees);
	free(c.res_runs);
	free(c.map.v);
	if (c.scratch >= 0)
		close(c.scratch);
	if (err)
		ev_area_out_free(out);
	return err;
}

void ev_area_out_free(struct ev_area_out *out)
{
	free((void *)out->area.mem);
	free((void *)out->area.tail);
	free(out->area.pieces);
	if (out->area.fd >= 0)
		close(out->area.fd);
	memset(&out->area, 0, sizeof(out->area));
	out->area.fd = -1;
}
