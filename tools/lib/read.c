// SPDX-License-Identifier: GPL-2.0
/*
 * Opening a hash area.  Nothing is parsed before it is authenticated: the
 * superblock against the root digest (when one is given), the manifest
 * sections against the superblock; then the shared validators decide
 * whether the records are usable.
 */
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hash.h"
#include "read.h"

const char *ev_section_name(unsigned int id)
{
	static const char *const names[] = {
		"EXTENTS", "TREES", "FILES", "TOPS", "LEVELS", "INODES", "FEC",
		"TOP_DIGESTS",
	};

	return id < EV_ARRAY_SIZE(names) ? names[id] : "?";
}

int ev_area_open(struct ev_area *a, const char *path, u64 offset)
{
	int err;

	memset(a, 0, sizeof(*a));
	a->path = path;
	a->offset = offset;
	a->fd = open(path, O_RDONLY);
	if (a->fd < 0) {
		ev_error("cannot open %s: %s", path, strerror(errno));
		return EV_EIO;
	}
	err = ev_pread(a->fd, &a->sb, sizeof(a->sb), offset);
	if (err == -EIO || (!err && memcmp(a->sb.magic, EXTVERITY_MAGIC,
					   sizeof(a->sb.magic)))) {
		ev_error("%s is not an extverity hash area (no superblock at "
			 "offset %llu)", path, (unsigned long long)offset);
		return EV_EUSAGE;
	}
	if (err) {
		ev_error("cannot read %s: %s", path, strerror(-err));
		return EV_EIO;
	}
	if (extverity_digest_size(a->sb.hash_algorithm))
		return ev_hash_plain(a->sb.hash_algorithm, &a->sb,
				     sizeof(a->sb), a->root);
	return 0;
}

void ev_area_close(struct ev_area *a)
{
	if (a->fd > 0)
		close(a->fd);
	free(a->files);
	free(a->tree_file);
	free(a->by_ino);
	free(a->files_raw);
	free(a->extents);
	free(a->trees);
	free(a->geo);
	free(a->inodes);
	free(a->top_digests);
	memset(a, 0, sizeof(*a));
}

int ev_area_check_root(struct ev_area *a, const char *root_hex)
{
	u8 want[EXTVERITY_MAX_DIGEST_SIZE], got[EXTVERITY_MAX_DIGEST_SIZE];
	size_t len;
	unsigned int alg;
	int err;

	if (ev_hex2bin(root_hex, want, sizeof(want), &len) ||
	    (len != 32 && len != 64)) {
		ev_error("invalid root digest '%s' (expected 64 or 128 hex "
			 "digits)", root_hex);
		return EV_EUSAGE;
	}
	alg = len == 32 ? EXTVERITY_HASH_SHA256 : EXTVERITY_HASH_SHA512;
	err = ev_hash_plain(alg, &a->sb, sizeof(a->sb), got);
	if (err)
		return err;
	if (memcmp(want, got, len) || a->sb.hash_algorithm != alg) {
		ev_error("root digest does not match the superblock of %s",
			 a->path);
		return EV_EUSAGE;
	}
	return 0;
}

/* Bytes of a regular file or block device; 0 when it has no size. */
static int file_size(int fd, u64 *size)
{
	struct stat st;

	*size = 0;
	if (fstat(fd, &st))
		return -errno;
	if (S_ISREG(st.st_mode))
		*size = st.st_size;
	else if (S_ISBLK(st.st_mode) && ioctl(fd, BLKGETSIZE64, size))
		return -errno;
	return 0;
}

int ev_area_parse(struct ev_area *a)
{
	const char *why = NULL;
	u64 size, blocks;
	int err;

	if (extverity_parse_superblock(&a->sb, &a->p, &why)) {
		ev_error("invalid hash area in %s: %s", a->path, why);
		return EV_EUSAGE;
	}
	/*
	 * Every later read and allocation is sized by the superblock: check
	 * it against the file once, so that a short file is told as such and
	 * a huge count cannot make us allocate what the file cannot hold.
	 */
	err = file_size(a->fd, &size);
	if (err) {
		ev_error("cannot get the size of %s: %s", a->path,
			 strerror(-err));
		return EV_EIO;
	}
	blocks = size > a->offset ? (size - a->offset) >> a->p.log_blocksize : 0;
	if (a->p.hash_blocks > blocks) {
		ev_error("hash area in %s is truncated: %llu blocks, %llu "
			 "present", a->path,
			 (unsigned long long)a->p.hash_blocks,
			 (unsigned long long)blocks);
		return EV_EIO;
	}
	return 0;
}

/* Read a digest-protected section; 1 when its digest does not match. */
static int read_section(struct ev_area *a, unsigned int id, u8 **out)
{
	const struct extverity_section *s = &a->sb.sections[id];
	u64 blocks = a->p.sect[id].nr_blocks;
	u8 digest[EXTVERITY_MAX_DIGEST_SIZE];
	size_t len = blocks << a->p.log_blocksize;
	int err;

	*out = NULL;
	if (!blocks)
		return 0;
	*out = xmalloc(len);
	err = ev_pread(a->fd, *out, len, a->offset +
		       (a->p.sect[id].start_block << a->p.log_blocksize));
	if (err) {
		ev_error("cannot read section %s of %s: %s",
			 ev_section_name(id), a->path, strerror(-err));
		return -EV_EIO;
	}
	err = ev_hash_plain(a->p.hash_algorithm, *out, len, digest);
	if (err)
		return -err;
	if (memcmp(digest, s->digest, a->p.digest_size)) {
		ev_error("corrupted: manifest section %s", ev_section_name(id));
		return 1;
	}
	return 0;
}

static int decode_files(struct ev_area *a)
{
	const u8 *s = a->files_raw;
	size_t len = a->p.sect[EXTVERITY_SECT_FILES].nr_blocks <<
		     a->p.log_blocksize;
	u64 n = a->p.sect[EXTVERITY_SECT_FILES].nr_entries, i;
	size_t pos = 0, prev_len = 0;

	if (n > len / sizeof(struct extverity_file))
		goto bad;
	a->files = xcalloc(n, sizeof(*a->files));
	for (i = 0; i < n; i++) {
		struct extverity_file f;
		size_t pre, suf;

		if (len - pos < sizeof(f))
			goto bad;
		memcpy(&f, s + pos, sizeof(f));
		pos += sizeof(f);
		pre = le16_to_cpu(f.prefix_len);
		suf = le16_to_cpu(f.suffix_len);
		/* Paths are bounded as format bounds them (layout.c). */
		if (pre > prev_len || suf > len - pos ||
		    pre + suf > EV_FILE_PATH_MAX ||
		    le32_to_cpu(f.tree) >=
		    a->p.sect[EXTVERITY_SECT_TREES].nr_entries)
			goto bad;
		a->files[i].ino = le64_to_cpu(f.inode);
		a->files[i].tree = le32_to_cpu(f.tree);
		a->files[i].prefix_len = pre;
		a->files[i].suffix_len = suf;
		a->files[i].suffix = pos;
		a->nr_files++;
		pos += suf;
		prev_len = pre + suf;
	}
	return 0;
bad:
	ev_error("invalid hash area in %s: FILES section is malformed",
		 a->path);
	return EV_ECORRUPT;
}

static int cmp_ino_file(const void *x, const void *y)
{
	const struct ev_ino_file *a = x, *b = y;

	if (a->ino != b->ino)
		return a->ino < b->ino ? -1 : 1;
	return a->file < b->file ? -1 : a->file > b->file;
}

/*
 * Index the decoded FILES entries by tree and by inode, once: verify names
 * a tree for every tree it checks, and a search of the whole list each
 * time made it quadratic in files.  Both indexes cost O(files + trees).
 */
static void index_files(struct ev_area *a)
{
	u64 nr_trees = a->p.sect[EXTVERITY_SECT_TREES].nr_entries, t;
	size_t i;

	a->tree_file = xcalloc(nr_trees ? nr_trees : 1,
			       sizeof(*a->tree_file));
	for (t = 0; t < nr_trees; t++)
		a->tree_file[t] = SIZE_MAX;
	a->by_ino = xcalloc(a->nr_files ? a->nr_files : 1,
			    sizeof(*a->by_ino));
	for (i = 0; i < a->nr_files; i++) {
		u32 tree = a->files[i].tree;

		/* decode_files() checked tree < nr_trees. */
		if (a->tree_file[tree] == SIZE_MAX)
			a->tree_file[tree] = i;
		a->by_ino[i].ino = a->files[i].ino;
		a->by_ino[i].file = i;
	}
	if (a->nr_files)	/* qsort(NULL, 0) is undefined */
		qsort(a->by_ino, a->nr_files, sizeof(*a->by_ino),
		      cmp_ino_file);
}

/* The entry of @ino in the inode index, or NULL. */
static const struct extverity_inode *index_lookup(const struct ev_area *a,
						  u64 ino)
{
	u64 lo = 0, hi = a->nr_inodes;

	while (lo < hi) {
		u64 mid = lo + (hi - lo) / 2;
		u64 v = le64_to_cpu(a->inodes[mid].inode);

		if (v == ino)
			return &a->inodes[mid];
		if (v < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/*
 * Each entry as the kernel checks it (sorted, unique, a file's tree), then
 * against the FILES section, which format writes from the same files: every
 * path's inode indexed with the path's tree, and no inode indexed that no
 * path names.  The kernel never reads FILES, so only the tool can tell an
 * index that answers `measure` for a file with another file's tree.
 */
static int check_inodes(struct ev_area *a)
{
	u64 nr_trees = a->p.sect[EXTVERITY_SECT_TREES].nr_entries;
	u64 i, prev = 0, distinct = 0;
	const struct extverity_inode *e = NULL;
	const char *why;

	if (!a->has_inodes)
		return 0;
	for (i = 0; i < a->nr_inodes; i++) {
		if (extverity_check_inode(&a->inodes[i], prev, nr_trees,
					  &why)) {
			ev_error("invalid hash area in %s: inode index entry "
				 "%llu: %s", a->path, (unsigned long long)i,
				 why);
			return EV_ECORRUPT;
		}
		prev = le64_to_cpu(a->inodes[i].inode);
	}
	/*
	 * by_ino is sorted by inode: one lookup per distinct inode, and every
	 * path of it (hard links) checked against that entry's tree.
	 */
	for (i = 0; i < a->nr_files; i++) {
		const struct ev_ino_file *f = &a->by_ino[i];

		if (!i || f->ino != a->by_ino[i - 1].ino) {
			distinct++;
			e = index_lookup(a, f->ino);
		}
		if (!e || le32_to_cpu(e->tree) != a->files[f->file].tree) {
			ev_error("invalid hash area in %s: the inode index %s "
				 "inode %llu of the FILES section", a->path,
				 e ? "has another tree for" : "lacks",
				 (unsigned long long)f->ino);
			return EV_ECORRUPT;
		}
	}
	if (distinct != a->nr_inodes) {
		ev_error("invalid hash area in %s: the inode index has %llu "
			 "inodes, the FILES section %llu", a->path,
			 (unsigned long long)a->nr_inodes,
			 (unsigned long long)distinct);
		return EV_ECORRUPT;
	}
	return 0;
}

/* The FEC record, when the area has one; as read_section(). */
static int load_fec(struct ev_area *a)
{
	u8 *sect;
	const char *why;
	int r;

	a->has_fec = a->p.compat_flags & EXTVERITY_COMPAT_FEC;
	r = read_section(a, EXTVERITY_SECT_FEC, &sect);
	if (r || !a->has_fec) {
		free(sect);
		return r;
	}
	memcpy(&a->fec_record, sect, sizeof(a->fec_record));
	free(sect);
	if (extverity_check_fec(&a->p, &a->fec_record, &a->fec, &why)) {
		ev_error("invalid hash area in %s: %s", a->path, why);
		memset(&a->fec, 0, sizeof(a->fec));
		return 1;
	}
	return 0;
}

int ev_area_load_fec(struct ev_area *a)
{
	int r = load_fec(a);

	return r < 0 ? -r : r ? EV_ECORRUPT : 0;
}

int ev_area_load(struct ev_area *a)
{
	const struct extverity_params *p = &a->p;
	u64 nr_trees = p->sect[EXTVERITY_SECT_TREES].nr_entries;
	u64 nr_ext = p->sect[EXTVERITY_SECT_EXTENTS].nr_entries;
	struct extverity_tree_cursor cur = { 0 };
	u64 i, expect = 0;
	const char *why;
	int r, bad = 0;

	r = read_section(a, EXTVERITY_SECT_EXTENTS, (u8 **)&a->extents);
	if (r < 0)
		return -r;
	bad |= r;
	r = read_section(a, EXTVERITY_SECT_TREES, &a->trees);
	if (r < 0)
		return -r;
	bad |= r;
	r = read_section(a, EXTVERITY_SECT_FILES, &a->files_raw);
	if (r < 0)
		return -r;
	bad |= r;
	/* Zero in p->sect unless the compat flag says it is there. */
	a->has_inodes = p->compat_flags & EXTVERITY_COMPAT_INODE_INDEX;
	a->nr_inodes = p->sect[EXTVERITY_SECT_INODES].nr_entries;
	r = read_section(a, EXTVERITY_SECT_INODES, (u8 **)&a->inodes);
	if (r < 0)
		return -r;
	bad |= r;
	r = load_fec(a);
	if (r < 0)
		return -r;
	bad |= r;
	/* Checked against the TOPS blocks by verify, which reads those. */
	a->has_top_digests = p->compat_flags & EXTVERITY_COMPAT_TOP_DIGESTS;
	r = read_section(a, EXTVERITY_SECT_TOP_DIGESTS, &a->top_digests);
	if (r < 0)
		return -r;
	bad |= r;
	if (bad)
		return EV_ECORRUPT;
	a->geo = xcalloc(nr_trees, sizeof(*a->geo));
	for (i = 0; i < nr_trees; i++) {
		if (extverity_check_tree(p, ev_area_tree(a, i), &cur,
					 &a->geo[i], &why)) {
			ev_error("invalid hash area in %s: tree %llu: %s",
				 a->path, (unsigned long long)i, why);
			return EV_ECORRUPT;
		}
	}
	for (i = 0; i < nr_ext; i++) {
		const struct extverity_extent *e = &a->extents[i];
		u32 t = le32_to_cpu(e->tree);
		u64 tb = t < nr_trees ? a->geo[t].data_blocks : 0;

		if (extverity_check_extent(p, e, expect, nr_trees, tb, &why)) {
			ev_error("invalid hash area in %s: extent %llu: %s",
				 a->path, (unsigned long long)i, why);
			return EV_ECORRUPT;
		}
		expect += le32_to_cpu(e->count);
	}
	if (expect != p->data_blocks) {
		ev_error("invalid hash area in %s: extent map does not cover "
			 "the data image", a->path);
		return EV_ECORRUPT;
	}
	r = decode_files(a);
	if (r)
		return r;
	index_files(a);
	return check_inodes(a);
}

int ev_area_read(struct ev_area *a, const char *path, u64 offset,
		 const char *root_hex)
{
	int err = ev_area_open(a, path, offset);

	if (!err && root_hex)
		err = ev_area_check_root(a, root_hex);
	if (!err)
		err = ev_area_parse(a);
	if (!err)
		err = ev_area_load(a);
	return err;
}

struct ev_path_buf *ev_path_new(void)
{
	struct ev_path_buf *b = xmalloc(sizeof(*b));

	b->file = SIZE_MAX;
	return b;
}

const char *ev_area_file_path(const struct ev_area *a, size_t i,
			      struct ev_path_buf *b)
{
	const struct ev_file_entry *e = &a->files[i], *f;
	size_t need, end, j;

	if (b->file == i)
		return b->s;
	if (b->file == SIZE_MAX || b->file + 1 != i) {
		/*
		 * The first @need bytes of this path are those of the path
		 * before: the part of them past that entry's own prefix is
		 * its suffix, the rest is the path before it, and so on back.
		 * decode_files() checked that no prefix is longer than the
		 * path before it, so each step has the bytes asked of it.
		 */
		need = e->prefix_len;
		for (j = i; need; ) {
			/*
			 * @b holds entry j - 1 whole, and what was written
			 * so far lies past @need: the rest is there already.
			 */
			if (b->file != SIZE_MAX && b->file + 1 == j)
				break;
			f = &a->files[--j];
			end = need < (size_t)f->prefix_len + f->suffix_len ?
			      need : (size_t)f->prefix_len + f->suffix_len;
			if (end > f->prefix_len)
				memcpy(b->s + f->prefix_len,
				       a->files_raw + f->suffix,
				       end - f->prefix_len);
			if (need > f->prefix_len)
				need = f->prefix_len;
		}
	}
	/* b->s starts with the @prefix_len bytes shared with entry i - 1. */
	memcpy(b->s + e->prefix_len, a->files_raw + e->suffix, e->suffix_len);
	b->s[e->prefix_len + e->suffix_len] = '\0';
	b->file = i;
	return b->s;
}

const char *ev_area_path_of(const struct ev_area *a, u64 ino,
			    struct ev_path_buf *buf)
{
	size_t n = a->by_ino ? a->nr_files : 0, lo = 0, hi = n;

	/* The leftmost entry of @ino: its first path in path order. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a->by_ino[mid].ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == n || a->by_ino[lo].ino != ino)
		return NULL;
	return ev_area_file_path(a, a->by_ino[lo].file, buf);
}

const struct ev_file_entry *ev_area_file_of_tree(const struct ev_area *a,
						 u32 tree)
{
	u64 nr_trees = a->p.sect[EXTVERITY_SECT_TREES].nr_entries;

	if (!a->tree_file || tree >= nr_trees ||
	    a->tree_file[tree] == SIZE_MAX)
		return NULL;
	return &a->files[a->tree_file[tree]];
}
