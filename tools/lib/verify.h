/* SPDX-License-Identifier: GPL-2.0 */
/* Checking a whole image against a loaded hash area, in userspace. */
#ifndef EXTVERITY_VERIFY_H
#define EXTVERITY_VERIFY_H

#include "read.h"

/* At most this many "corrupted:" lines are printed. */
#define EV_MAX_REPORTS	100

/* One damaged item, as its "corrupted: ..." line names it. */
struct ev_verify_item {
	enum {
		EV_ITEM_FILE,		/* a file's data block */
		EV_ITEM_METADATA,	/* a data block of the residual tree */
		EV_ITEM_HASH_TREE,	/* a level of a tree's hash blocks */
		EV_ITEM_PACKED_TOP,	/* a hash block of packed tree tops */
		EV_ITEM_TOP_DIGEST,	/* one that fails its top digest only */
	} kind;
	const char *path;	/* FILE, HASH_TREE: the file, or NULL */
	u64 inode;		/* FILE; HASH_TREE when @path is set */
	u64 offset;		/* FILE: byte offset in the file */
	u64 block;		/* data block; a top item's hash block */
	u32 tree;		/* HASH_TREE (0: the residual tree) */
	int level;		/* HASH_TREE */
	const u32 *trees;	/* PACKED_TOP: the trees whose tops it holds */
	size_t nr_trees;
};

/* What ev_verify() looked at, for verify --json. */
struct ev_verify_result {
	u64 data_bytes;		/* data bytes checked (zero ranges are not) */
	u64 corrupted;		/* damaged items, printed or not */
	/*
	 * Set by the caller, or NULL: called with each item printed (the
	 * first EV_MAX_REPORTS), valid during the call only.
	 */
	void (*item)(const struct ev_verify_item *it, void *arg);
	void *arg;
};

/**
 * ev_verify() - check every tree's hash blocks and every mapped data block
 * @a: an area that passed ev_area_load()
 * @image: the data image
 * @res: filled in (when not NULL) even when damage is found
 *
 * Prints one "corrupted: ..." line per damaged item and keeps going.
 *
 * Return: 0 when intact, EV_ECORRUPT, or EV_EIO / EV_EUSAGE.
 */
int ev_verify(struct ev_area *a, const char *image,
	      struct ev_verify_result *res);

#endif /* EXTVERITY_VERIFY_H */
