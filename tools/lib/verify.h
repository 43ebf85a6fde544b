/* SPDX-License-Identifier: GPL-2.0 */
/* Checking a whole image against a loaded hash area, in userspace. */
#ifndef EXTVERITY_VERIFY_H
#define EXTVERITY_VERIFY_H

#include "read.h"

/* At most this many "corrupted:" lines are printed. */
#define EV_MAX_REPORTS	100

/* What ev_verify() looked at, for verify --json. */
struct ev_verify_result {
	u64 data_bytes;		/* data bytes checked (zero ranges are not) */
	u64 corrupted;		/* damaged items, printed or not */
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
