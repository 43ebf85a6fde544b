// SPDX-License-Identifier: GPL-2.0
/*
 * extverity which: what a data block holds (a file and the byte offset of
 * the block in it, filesystem metadata, or free space), from the
 * authenticated manifest: the extent map and the FILES section.
 */
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>

#include "extverity.h"
#include "read.h"

enum { OPT_JSON = 256, OPT_OFFSET, OPT_ROOT, OPT_ROOT_FILE };

static const struct option longopts[] = {
	{ "json", no_argument, NULL, OPT_JSON },
	{ "hash-offset", required_argument, NULL, OPT_OFFSET },
	{ "root-digest", required_argument, NULL, OPT_ROOT },
	{ "root-hash-file", required_argument, NULL, OPT_ROOT_FILE },
	{ NULL, 0, NULL, 0 },
};

/* The extent record that maps data block @b (the map covers [0, N)). */
static const struct extverity_extent *find_extent(const struct ev_area *a,
						  u64 b)
{
	u64 lo = 0, hi = a->p.sect[EXTVERITY_SECT_EXTENTS].nr_entries;

	/* The last record starting at or before @b. */
	while (hi - lo > 1) {
		u64 mid = lo + (hi - lo) / 2;

		if (le64_to_cpu(a->extents[mid].start) <= b)
			lo = mid;
		else
			hi = mid;
	}
	return &a->extents[lo];
}

/* One line, or one JSON object appended to @list, for block @b. */
static void which_one(const struct ev_area *a, u64 b, struct ev_path_buf *pb,
		      struct json_object *list)
{
	const struct extverity_extent *e = find_extent(a, b);
	u32 tree = le32_to_cpu(e->tree);
	u64 ino = le64_to_cpu(e->inode), off;
	const char *kind, *path = NULL;
	struct json_object *j;

	if (tree == EXTVERITY_TREE_ZERO)
		kind = "free";
	else if (tree == EXTVERITY_TREE_RESIDUAL)
		kind = "metadata";
	else
		kind = "file";
	/* Leaf i of a file's tree is the file's block i. */
	off = (le64_to_cpu(e->leaf) + b - le64_to_cpu(e->start)) <<
	      a->p.log_blocksize;
	if (tree != EXTVERITY_TREE_ZERO && tree != EXTVERITY_TREE_RESIDUAL)
		path = ev_area_path_of(a, ino, pb);
	if (!list) {
		if (strcmp(kind, "file"))
			printf("%" PRIu64 " %s\n", b, kind);
		else if (path)
			printf("%" PRIu64 " %s %" PRIu64 "\n", b, path, off);
		else	/* a file the FILES section does not name */
			printf("%" PRIu64 " <inode %" PRIu64 "> %" PRIu64 "\n",
			       b, ino, off);
		return;
	}
	j = ev_json_object();
	ev_json_add_u64(j, "block", b);
	ev_json_add_str(j, "kind", kind);
	if (!strcmp(kind, "file")) {
		ev_json_add_str(j, "path", path);
		ev_json_add_u64(j, "inode", ino);
		ev_json_add_u64(j, "offset", off);
	}
	ev_json_append(list, j);
}

int ev_cmd_which(const struct ev_command *cmd, int argc, char *argv[])
{
	bool json = false, seen[4] = { false };
	const char *root = NULL, *root_file = NULL;
	char root_buf[EV_ROOT_HEX_SIZE];
	struct json_object *list = NULL;
	struct ev_path_buf *pb;
	struct ev_area a;
	u64 offset = 0, *blocks;
	int c, i, n, err;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c < OPT_JSON)
			return ev_option_error(cmd, argv, longopts);
		if (!ev_once(&seen[c - OPT_JSON], longopts[c - OPT_JSON].name))
			return EV_EUSAGE;
		if (c == OPT_JSON)
			json = true;
		else if (c == OPT_ROOT)
			root = optarg;
		else if (c == OPT_ROOT_FILE)
			root_file = optarg;
		else if (!ev_parse_offset(optarg, &offset))
			return EV_EUSAGE;
	}
	if (argc - optind < 2) {
		/* One name for one or more blocks: say so, then usage. */
		ev_error("which: missing %s", argc - optind ?
			 "BLOCK (expected HASHFILE BLOCK...)" :
			 "HASHFILE BLOCK...");
		ev_usage(cmd, stderr);
		return EV_EUSAGE;
	}
	if (root && root_file) {
		ev_error("--root-digest and --root-hash-file exclude each other");
		return EV_EUSAGE;
	}
	if (!root && !root_file) {
		ev_error("which needs the root digest (--root-digest or "
			 "--root-hash-file): it answers from the authenticated "
			 "manifest only");
		return EV_EUSAGE;
	}
	/* Every block number checked before anything is printed. */
	n = argc - optind - 1;
	blocks = xcalloc(n, sizeof(*blocks));
	for (i = 0; i < n; i++) {
		if (ev_parse_u64(argv[optind + 1 + i], &blocks[i])) {
			ev_error("invalid block number '%s' (expected a "
				 "decimal data block number)",
				 argv[optind + 1 + i]);
			free(blocks);
			return EV_EUSAGE;
		}
	}
	err = ev_root_hash_file_read(root_file, root_buf, sizeof(root_buf),
				     &root);
	if (!err)
		err = ev_area_read(&a, argv[optind], offset, root);
	else
		memset(&a, 0, sizeof(a));
	for (i = 0; !err && i < n; i++) {
		if (blocks[i] < a.p.data_blocks)
			continue;
		ev_error("block %" PRIu64 " is past the end of the data image "
			 "(%" PRIu64 " blocks of %u bytes: 0 to %" PRIu64 ")",
			 blocks[i], a.p.data_blocks, a.p.block_size,
			 a.p.data_blocks - 1);
		err = EV_EUSAGE;
	}
	if (!err) {
		pb = ev_path_new();
		if (json)
			list = ev_json_array();
		for (i = 0; i < n; i++)
			which_one(&a, blocks[i], pb, list);
		if (json)
			ev_json_print(list);
		free(pb);
	}
	free(blocks);
	ev_area_close(&a);
	return err;
}
