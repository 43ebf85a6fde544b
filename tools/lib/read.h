/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Opening an existing hash area: superblock, authentication, sections,
 * validation with the shared format code, the FILES stream.
 */
#ifndef EXTVERITY_READ_H
#define EXTVERITY_READ_H

#include "dm-extverity-format.h"
#include "util.h"

/*
 * Longest path in the FILES stream: format refuses a longer one and readers
 * call an entry that encodes one malformed.  A path no longer than what one
 * suffix_len can carry fits whatever entry precedes it, so the limit is a
 * property of the path alone; it also bounds what one entry can make a
 * reader allocate.
 */
#define EV_FILE_PATH_MAX	65535U
_Static_assert(EV_FILE_PATH_MAX <=
	       (1ULL << (8 * sizeof(((struct extverity_file *)0)->suffix_len))) - 1,
	       "a path of EV_FILE_PATH_MAX bytes must fit one suffix_len");

/*
 * One FILES entry.  Its path is not kept: an entry of 16 bytes can repeat
 * up to EV_FILE_PATH_MAX bytes of the path before it, so decoding every
 * path could take thousands of times the section's size.  It is rebuilt
 * on demand by ev_area_file_path(), from @prefix_len bytes of the path
 * before and its own @suffix_len bytes at @suffix in the FILES section.
 */
struct ev_file_entry {
	u64 ino;
	u32 tree;
	u16 prefix_len;
	u16 suffix_len;
	size_t suffix;
};

/*
 * A path rebuilt by ev_area_file_path(), and which entry it is: entries
 * taken in order cost the length of their own bytes; any other, a walk
 * back to the entries its prefix comes from.
 */
struct ev_path_buf {
	size_t file;		/* SIZE_MAX: none */
	char s[EV_FILE_PATH_MAX + 1];
};

/* One entry of the inode index of struct ev_area. */
struct ev_ino_file {
	u64 ino;
	size_t file;
};

/**
 * struct ev_area - an opened hash area
 * @fd: the hash file
 * @path: its name
 * @offset: byte offset of the area in it
 * @sb: the superblock as stored
 * @p: its parameters, after ev_area_parse()
 * @root: hash of the superblock with its own algorithm
 * @extents: EXTENTS section (little-endian records)
 * @trees: TREES section
 * @geo: geometry of each tree
 * @files_raw: FILES section
 * @files: FILES entries, in path order
 * @nr_files: their number
 * @tree_file: for each tree, the index in @files of its first entry, or
 *	SIZE_MAX when no entry uses it
 * @by_ino: (inode, index in @files) of every entry, sorted, so that a
 *	lookup by inode finds the inode's first path in path order
 * @has_inodes: the area has an inode index (EXTVERITY_COMPAT_INODE_INDEX;
 *	areas made before it have none)
 * @inodes: INODES section, (inode, tree) of each regular file, validated
 * @nr_inodes: its number of entries
 * @has_top_digests: the area has a TOP_DIGESTS section
 *	(EXTVERITY_COMPAT_TOP_DIGESTS; areas made before it have none)
 * @top_digests: that section, a digest per TOPS block (NULL when there
 *	are none)
 * @has_fec: the area has a FEC section (EXTVERITY_COMPAT_FEC)
 * @fec_record: its record, as stored
 * @fec: its geometry, validated; @fec.roots is 0 until then, and stays 0
 *	when the section fails, so that a caller can tell whether FEC can
 *	still be used on an area ev_area_load() found damaged
 */
struct ev_area {
	int fd;
	const char *path;
	u64 offset;
	struct extverity_superblock sb;
	struct extverity_params p;
	u8 root[EXTVERITY_MAX_DIGEST_SIZE];
	struct extverity_extent *extents;
	u8 *trees;
	struct extverity_geometry *geo;
	u8 *files_raw;
	struct ev_file_entry *files;
	size_t nr_files;
	size_t *tree_file;
	struct ev_ino_file *by_ino;
	bool has_inodes;
	struct extverity_inode *inodes;
	u64 nr_inodes;
	bool has_top_digests;
	u8 *top_digests;
	bool has_fec;
	struct extverity_fec fec_record;
	struct extverity_fec_geometry fec;
};

/**
 * ev_area_open() - open a hash area and read its superblock
 * @a: filled in
 * @path: file or device
 * @offset: byte offset of the area
 *
 * Return: 0 or an exit code (EV_EIO, EV_EUSAGE for no extverity magic),
 * with the error printed.
 */
int ev_area_open(struct ev_area *a, const char *path, u64 offset);
void ev_area_close(struct ev_area *a);

/**
 * ev_area_check_root() - authenticate the superblock
 * @a: the area
 * @root_hex: the expected root digest, hex; its length picks the algorithm
 *
 * Return: 0 or EV_EUSAGE, with the error printed.
 */
int ev_area_check_root(struct ev_area *a, const char *root_hex);

/*
 * Validate the superblock and check that the file holds the whole area;
 * 0, EV_EUSAGE or EV_EIO (truncated), with the error printed.
 */
int ev_area_parse(struct ev_area *a);

/**
 * ev_area_load() - read, authenticate and validate the manifest sections
 * @a: a parsed area
 *
 * Prints "corrupted: manifest section X" for a section whose digest does
 * not match.  The inode index, when the area has one, is validated entry
 * by entry and against the FILES section.
 *
 * Return: 0, EV_ECORRUPT (bad digest or inconsistent records) or EV_EIO.
 */
int ev_area_load(struct ev_area *a);

/*
 * Read, authenticate and validate the FEC section alone, into @a->fec when
 * @a->has_fec (what table and open need of a parsed area); 0, EV_ECORRUPT
 * or EV_EIO, with the error printed.
 */
int ev_area_load_fec(struct ev_area *a);

/**
 * ev_area_read() - open, authenticate, parse and load a hash area
 * @a: filled in; close with ev_area_close() whatever the result
 * @path: file or device
 * @offset: byte offset of the area
 * @root_hex: the root digest, hex, or NULL to read the area unauthenticated
 *	(dump without --root-digest: what the file says)
 *
 * What dump, verify and which do before they use an area: with a root
 * digest everything loaded is authenticated (the root covers the
 * superblock, which holds the digest of every section loaded).
 *
 * Return: 0 or an exit code, with the error printed.
 */
int ev_area_read(struct ev_area *a, const char *path, u64 offset,
		 const char *root_hex);

static inline const struct extverity_tree *
ev_area_tree(const struct ev_area *a, u64 i)
{
	return (const void *)(a->trees + i * a->p.tree_entry_size);
}

/* A new buffer for ev_area_file_path() (64 KiB: allocated, not on a stack). */
struct ev_path_buf *ev_path_new(void);

/* The path of FILES entry @i, rebuilt in @buf (which it returns). */
const char *ev_area_file_path(const struct ev_area *a, size_t i,
			      struct ev_path_buf *buf);

/* The first path of inode @ino, in @buf, or NULL. */
const char *ev_area_path_of(const struct ev_area *a, u64 ino,
			    struct ev_path_buf *buf);
/* The first FILES entry that uses tree @tree, or NULL. */
const struct ev_file_entry *ev_area_file_of_tree(const struct ev_area *a,
						 u32 tree);
/* Section name for messages. */
const char *ev_section_name(unsigned int id);

#endif /* EXTVERITY_READ_H */
