/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-extverity: the out-of-tree build's bridge to older kernels.
 *
 * The target is written against the newest kernel Debian ships (7.3): its
 * names for block device open modes, its <linux/hex.h>, its explicit
 * per-CPU workqueues, its typed allocations.  This header, and nothing else, lets the same code
 * build on the older kernels still in use (6.1, 6.12).  It is the only
 * place kernel differences may be handled; function bodies never do.
 *
 * In a kernel tree there is nothing to bridge: scripts/kernel-patch.sh
 * drops this header and rewrites its few names for the tree it patches, so
 * the in-tree patch carries no compatibility code.  Every entry below must
 * therefore be a rename, an include, a one-line macro or a wrapper that
 * the script knows how to resolve (it fails on one it does not); keep it
 * so.
 */
#ifndef DM_EXTVERITY_COMPAT_H
#define DM_EXTVERITY_COMPAT_H

#include <linux/blkdev.h>
#include <linux/dm-bufio.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

/*
 * Features are tested, not version numbers: stable kernels receive
 * backports (6.12.y has WQ_PERCPU).  What the preprocessor cannot see,
 * drivers/md/Kbuild asks of the headers and passes as EXTVERITY_HAVE_*.
 */

/* 6.5 made the open mode a blk_mode_t with its own flags. */
#ifndef BLK_OPEN_READ
#define BLK_OPEN_READ	FMODE_READ
#define BLK_OPEN_WRITE	FMODE_WRITE
#endif

/*
 * hex2bin() and bin2hex() live in <linux/hex.h>, which 7.x no longer
 * reaches through <linux/kernel.h>.  6.1 has no such header and declares
 * them in <linux/kernel.h>.
 */
#ifdef EXTVERITY_HAVE_LINUX_HEX_H
#include <linux/hex.h>
#endif

/*
 * Workqueues are to become unbound by default: since 6.17 a per-CPU one
 * says so with WQ_PERCPU, and 7.x warns when neither flag is given.
 * Before, per-CPU was the default and the flag did not exist.
 */
#ifndef EXTVERITY_HAVE_WQ_PERCPU
#define WQ_PERCPU	0
#endif

/*
 * 7.0 added typed allocation helpers (6.12.y received them), which its
 * checkpatch asks for; the one-object forms used here, flags always given.
 */
#ifndef kmalloc_obj
#define kmalloc_obj(var, gfp)	kmalloc(sizeof(var), gfp)
#define kzalloc_obj(var, gfp)	kzalloc(sizeof(var), gfp)
#endif

/*
 * 6.10 let dm-bufio's reads carry the I/O priority of the bio that needs
 * them; before, they had the default priority.  Functions, not macros, so
 * that the priority is still evaluated and type-checked.
 */
#ifndef EXTVERITY_HAVE_BUFIO_IOPRIO
static inline void *dm_bufio_read_with_ioprio(struct dm_bufio_client *c,
					      sector_t block,
					      struct dm_buffer **bp,
					      unsigned short ioprio)
{
	return dm_bufio_read(c, block, bp);
}

static inline void dm_bufio_prefetch_with_ioprio(struct dm_bufio_client *c,
						 sector_t block,
						 unsigned int n_blocks,
						 unsigned short ioprio)
{
	dm_bufio_prefetch(c, block, n_blocks);
}
#endif

/*
 * 6.9 added workqueues whose work runs in softirq context, system_bh_wq
 * among them.  6.1 has tasklets instead, which a rename cannot reach: there,
 * try_verify_in_tasklet's attempts that cannot run where the read completed
 * (hard interrupt context) run in the system's high-priority workqueue,
 * still without sleeping (docs/table.md).
 */
#ifndef EXTVERITY_HAVE_SYSTEM_BH_WQ
#define system_bh_wq	system_highpri_wq
#endif

#endif /* DM_EXTVERITY_COMPAT_H */
