// SPDX-License-Identifier: GPL-2.0
/*
 * A whole hash area, read the way the tool reads one: tools/lib/read.c
 * (open, authenticate, parse, load the sections, decode FILES), then the
 * dump, verify and table commands themselves on the same bytes.
 *
 * The input is the hash area.  Before use the harness writes the right
 * digests of the EXTENTS, TREES, FILES, INODES, FEC and TOP_DIGESTS
 * sections into the superblock and passes the superblock's own hash as
 * the root digest: a forger cannot do that, but a signed manifest from a
 * buggy or hostile `format` can, and it is what the validators are for.
 * Without it the fuzzer would never get past the digests.
 *
 * Invariants: the commands agree with the library (dump and verify fail
 * exactly when loading fails, with the same exit code; table works exactly
 * when the superblock parses); a loaded area's extent map partitions the
 * data device, its FILES entries name existing trees, every tree's stored
 * geometry is the one its size gives, its inode index is sorted, names
 * file trees and agrees with FILES, its top digests (when it has them)
 * are one per TOPS block; the table line of an area parses back to the
 * area's values; which answers for block 0 exactly when the area loads.
 */
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "extverity.h"
#include "fuzz.h"
#include "hash.h"
#include "read.h"
#include "table.h"

/* Data images larger than this are not verified (time per input). */
#define MAX_VERIFY_BYTES	(256 * 1024)

static int area_fd, data_fd;
static char area_path[64], data_path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	area_fd = memfd_create("fuzz-area", 0);
	data_fd = memfd_create("fuzz-data", 0);
	if (area_fd < 0 || data_fd < 0)
		abort();
	snprintf(area_path, sizeof(area_path), "/proc/self/fd/%d", area_fd);
	snprintf(data_path, sizeof(data_path), "/proc/self/fd/%d", data_fd);
	opterr = 0;
	return 0;
}

/* Give each digest-protected section that lies in @buf its digest. */
static void fix_digests(u8 *buf, size_t size)
{
	struct extverity_superblock *sb = (void *)buf;
	u32 log = sb->log_blocksize, ds;
	u64 blocks = size >> (log & 63), id;

	ds = extverity_digest_size(sb->hash_algorithm);
	if (!ds || log < EXTVERITY_MIN_LOG_BLOCKSIZE ||
	    log > EXTVERITY_MAX_LOG_BLOCKSIZE)
		return;
	for (id = 0; id < EXTVERITY_NR_SECTIONS; id++) {
		struct extverity_section *s = &sb->sections[id];

		if (!EXTVERITY_SECT_HAS_DIGEST(id))
			continue;
		u64 start = le64_to_cpu(s->start_block);
		u64 n = le64_to_cpu(s->nr_blocks);

		if (!n || start < 1 || start > blocks || n > blocks - start)
			continue;
		ev_hash_plain(sb->hash_algorithm, buf + (start << log),
			      n << log, s->digest);
	}
}

static int run(int (*func)(const struct ev_command *, int, char **),
	       const char *name, const char *a1, const char *a2,
	       const char *a3, const char *a4)
{
	const struct ev_command cmd = { name, func, "", "" };
	char *argv[6] = { (char *)name, (char *)a1, (char *)a2, (char *)a3,
			  (char *)a4, NULL };
	int argc = 1;

	while (argc < 5 && argv[argc])
		argc++;
	optind = 0;	/* glibc: start over, as for a new process */
	return func(&cmd, argc, argv);
}

static void check_loaded(const struct ev_area *a)
{
	const struct extverity_params *p = &a->p;
	u64 nr_trees = p->sect[EXTVERITY_SECT_TREES].nr_entries;
	u64 nr_ext = p->sect[EXTVERITY_SECT_EXTENTS].nr_entries, i, next = 0;
	struct ev_path_buf *seq = ev_path_new(), *alone = ev_path_new();

	for (i = 0; i < nr_ext; i++) {
		const struct extverity_extent *e = &a->extents[i];
		u32 t = le32_to_cpu(e->tree);

		FUZZ_CHECK(le64_to_cpu(e->start) == next && e->count,
			   "extent %llu does not follow", (unsigned long long)i);
		next += le32_to_cpu(e->count);
		FUZZ_CHECK(t == EXTVERITY_TREE_ZERO ||
			   (t < nr_trees && le64_to_cpu(e->leaf) +
			    le32_to_cpu(e->count) <= a->geo[t].data_blocks),
			   "extent %llu: tree %u", (unsigned long long)i, t);
	}
	/* verify reads a digest for each TOPS block. */
	FUZZ_CHECK(a->has_top_digests ==
		   !!(p->compat_flags & EXTVERITY_COMPAT_TOP_DIGESTS) &&
		   (!a->has_top_digests ||
		    (p->sect[EXTVERITY_SECT_TOP_DIGESTS].nr_entries ==
		     p->sect[EXTVERITY_SECT_TOPS].nr_blocks &&
		     (a->top_digests ||
		      !p->sect[EXTVERITY_SECT_TOPS].nr_blocks))),
		   "top digests: %llu for %llu TOPS blocks",
		   (unsigned long long)
		   p->sect[EXTVERITY_SECT_TOP_DIGESTS].nr_entries,
		   (unsigned long long)p->sect[EXTVERITY_SECT_TOPS].nr_blocks);
	FUZZ_CHECK(next == p->data_blocks, "extents cover %llu of %llu blocks",
		   (unsigned long long)next,
		   (unsigned long long)p->data_blocks);
	for (i = 0; i < nr_trees; i++) {
		struct extverity_geometry g;

		FUZZ_CHECK(!extverity_tree_geometry(p,
				le64_to_cpu(ev_area_tree(a, i)->data_size), &g) &&
			   !memcmp(&g, &a->geo[i], sizeof(g)),
			   "tree %llu: stored geometry", (unsigned long long)i);
	}
	/*
	 * Each path rebuilt in order (from the one before) equals the same
	 * path rebuilt alone (walking back to where its prefix comes from).
	 */
	for (i = 0; i < a->nr_files; i++) {
		const struct ev_file_entry *f = &a->files[i];
		size_t len = (size_t)f->prefix_len + f->suffix_len;

		/* Bytes, not strings: a crafted name may hold a NUL. */
		ev_area_file_path(a, i, seq);
		alone->file = SIZE_MAX;
		ev_area_file_path(a, i, alone);
		FUZZ_CHECK(f->tree < nr_trees &&
			   !memcmp(seq->s, alone->s, len + 1),
			   "file %llu: path rebuilt two ways differs",
			   (unsigned long long)i);
		FUZZ_CHECK(ev_area_path_of(a, f->ino, alone) &&
			   ev_area_file_of_tree(a, f->tree),
			   "file %llu cannot be found back",
			   (unsigned long long)i);
	}
	free(seq);
	free(alone);
	FUZZ_CHECK(a->has_inodes || !a->nr_inodes, "inode index without flag");
	for (i = 0; i < a->nr_inodes; i++) {
		u64 ino = le64_to_cpu(a->inodes[i].inode);
		u32 t = le32_to_cpu(a->inodes[i].tree);

		FUZZ_CHECK(ino && (!i || ino >
				   le64_to_cpu(a->inodes[i - 1].inode)) &&
			   t && t < nr_trees && !a->inodes[i].__reserved,
			   "inode entry %llu: inode %llu tree %u",
			   (unsigned long long)i, (unsigned long long)ino, t);
	}
	for (i = 0; a->has_inodes && i < a->nr_files; i++) {
		const struct ev_file_entry *f = &a->files[i];
		u64 k;

		for (k = 0; k < a->nr_inodes; k++)
			if (le64_to_cpu(a->inodes[k].inode) == f->ino)
				break;
		FUZZ_CHECK(k < a->nr_inodes &&
			   le32_to_cpu(a->inodes[k].tree) == f->tree,
			   "file %llu: inode %llu not indexed with tree %u",
			   (unsigned long long)i, (unsigned long long)f->ino,
			   f->tree);
	}
}

/* The table line made from @a parses back to @a's values. */
static void check_table_line(const struct ev_area *a, const char *root)
{
	struct ev_table_line t;
	char *line = ev_table_params(a, "254:0", area_path,
				     1U << EV_OPT_CHECK_AT_MOST_ONCE, NULL,
				     NULL);

	FUZZ_CHECK(!ev_table_parse(line, &t), "table line '%s' does not "
		   "parse", line);
	FUZZ_CHECK(t.version == EXTVERITY_FORMAT_VERSION &&
		   !strcmp(t.data, "254:0") && !strcmp(t.hash, area_path) &&
		   t.hash_sector == a->offset / 512 &&
		   !strcmp(t.alg, extverity_hash_name(a->p.hash_algorithm)) &&
		   !strcmp(t.root, root) &&
		   t.flags == 1U << EV_OPT_CHECK_AT_MOST_ONCE && !t.sig_key,
		   "table line '%s' parsed to other values", line);
	ev_table_line_free(&t);
	free(line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct extverity_superblock *sb;
	u8 *buf, root[EXTVERITY_MAX_DIGEST_SIZE];
	char root_hex[2 * EXTVERITY_MAX_DIGEST_SIZE + 1];
	unsigned int alg;
	struct ev_area a;
	int open_err, parse_err = -1, load_err = -1, r;
	bool verify = false;

	if (size < sizeof(*sb))
		return 0;
	buf = malloc(size);
	memcpy(buf, data, size);
	fix_digests(buf, size);
	sb = (const void *)buf;
	alg = extverity_digest_size(sb->hash_algorithm) ?
	      sb->hash_algorithm : EXTVERITY_HASH_SHA256;
	ev_hash_plain(alg, sb, sizeof(*sb), root);
	ev_bin2hex(root, extverity_digest_size(alg), root_hex);
	if (ftruncate(area_fd, 0) || pwrite(area_fd, buf, size, 0) !=
	    (ssize_t)size || ftruncate(data_fd, 0))
		abort();
	free(buf);

	open_err = ev_area_open(&a, area_path, 0);
	if (!open_err)
		open_err = ev_area_check_root(&a, root_hex);
	if (!open_err)
		parse_err = ev_area_parse(&a);
	if (!open_err && !parse_err) {
		load_err = ev_area_load(&a);
		if (!load_err)
			check_loaded(&a);
		check_table_line(&a, root_hex);
		if (a.p.data_blocks <= MAX_VERIFY_BYTES >> a.p.log_blocksize) {
			verify = true;
			if (ftruncate(data_fd, a.p.data_blocks <<
				      a.p.log_blocksize))
				abort();
		}
	}
	ev_area_close(&a);

	/* The commands reach the same verdicts as the library. */
	r = run(ev_cmd_table, "table", "254:0", area_path, root_hex, NULL);
	FUZZ_CHECK(r == (open_err ? open_err : parse_err),
		   "table exits %d, open %d parse %d", r, open_err, parse_err);
	if (open_err || parse_err)
		return 0;
	r = run(ev_cmd_dump, "dump", area_path, NULL, NULL, NULL);
	FUZZ_CHECK(r == load_err, "dump exits %d, load %d", r, load_err);
	r = run(ev_cmd_dump, "dump", "--json", area_path, NULL, NULL);
	FUZZ_CHECK(r == load_err, "dump --json exits %d, load %d", r,
		   load_err);
	r = run(ev_cmd_dump, "dump", "--files", area_path, NULL, NULL);
	FUZZ_CHECK(r == load_err, "dump --files exits %d, load %d", r,
		   load_err);
	{
		char opt[sizeof(root_hex) + 16];

		snprintf(opt, sizeof(opt), "--root-digest=%s", root_hex);
		r = run(ev_cmd_which, "which", opt, area_path, "0", NULL);
		FUZZ_CHECK(r == load_err, "which exits %d, load %d", r,
			   load_err);
	}
	if (!verify)
		return 0;
	r = run(ev_cmd_verify, "verify", "--json", data_path, area_path,
		root_hex);
	FUZZ_CHECK(load_err ? r == load_err : (r == 0 || r == EV_ECORRUPT),
		   "verify exits %d, load %d", r, load_err);
	fflush(stdout);
	return 0;
}
