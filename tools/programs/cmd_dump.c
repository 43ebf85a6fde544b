// SPDX-License-Identifier: GPL-2.0
/*
 * extverity dump: the parameters and counts of a hash area, or with --files
 * every file's fs-verity digest in `fsverity digest` format.
 */
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>

#include "extverity.h"
#include "fsverity_digest.h"
#include "read.h"
#include "tree.h"

enum { OPT_FILES = 256, OPT_JSON, OPT_OFFSET, OPT_ROOT, OPT_ROOT_FILE };

static const struct option longopts[] = {
	{ "files", no_argument, NULL, OPT_FILES },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "hash-offset", required_argument, NULL, OPT_OFFSET },
	{ "root-digest", required_argument, NULL, OPT_ROOT },
	{ "root-hash-file", required_argument, NULL, OPT_ROOT_FILE },
	{ NULL, 0, NULL, 0 },
};

struct counts {
	u64 shared_trees;
	u64 zero_blocks;
	u64 residual_blocks;
	u64 hole_hash_blocks;
};

static int cmp_u64_pair(const void *x, const void *y)
{
	const u64 *a = x, *b = y;

	if (a[0] != b[0])
		return a[0] < b[0] ? -1 : 1;
	return a[1] < b[1] ? -1 : a[1] > b[1];
}

static void count(const struct ev_area *a, struct counts *c)
{
	u64 n = a->p.sect[EXTVERITY_SECT_EXTENTS].nr_entries, i;
	u64 *pairs = xcalloc(a->nr_files + 1, 2 * sizeof(u64));

	struct ev_leaf_range *r = xcalloc(n + 1, sizeof(*r));
	size_t nr = 0;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < n; i++) {
		u32 t = le32_to_cpu(a->extents[i].tree);
		u32 cnt = le32_to_cpu(a->extents[i].count);

		if (t == EXTVERITY_TREE_ZERO) {
			c->zero_blocks += cnt;
			continue;
		}
		if (t == EXTVERITY_TREE_RESIDUAL)
			c->residual_blocks += cnt;
		r[nr++] = (struct ev_leaf_range){
			.tree = t, .leaf = le64_to_cpu(a->extents[i].leaf),
			.count = cnt,
		};
	}
	c->hole_hash_blocks =
		ev_hole_hash_blocks(&a->p, a->geo,
				    a->p.sect[EXTVERITY_SECT_TREES].nr_entries,
				    r, nr);
	free(r);
	/* A shared tree is one whose FILES entries name several inodes. */
	for (i = 0; i < a->nr_files; i++) {
		pairs[2 * i] = a->files[i].tree;
		pairs[2 * i + 1] = a->files[i].ino;
	}
	qsort(pairs, a->nr_files, 2 * sizeof(u64), cmp_u64_pair);
	for (i = 1; i < a->nr_files; i++) {
		if (pairs[2 * i] != pairs[2 * i - 2] ||
		    pairs[2 * i + 1] == pairs[2 * i - 1])
			continue;
		/* Second distinct inode of this tree: count it once. */
		if (i < 2 || pairs[2 * i - 4] != pairs[2 * i] ||
		    pairs[2 * i - 3] == pairs[2 * i - 1])
			c->shared_trees++;
	}
	free(pairs);
}

/*
 * With @json, an array of one object a file, printed an element at a
 * time: memory stays that of one file's entry however many there are.
 * 0 or an exit code, with the error printed.
 */
static int print_files(const struct ev_area *a, bool json)
{
	const struct extverity_params *p = &a->p;
	const char *alg = extverity_hash_name(p->hash_algorithm);
	u8 digest[EXTVERITY_MAX_DIGEST_SIZE];
	char hex[2 * EXTVERITY_MAX_DIGEST_SIZE + 1];
	struct ev_path_buf *pb = ev_path_new();
	struct json_object *j;
	const char *path;
	size_t i;
	int err = 0;

	if (json)
		putchar('[');
	for (i = 0; i < a->nr_files; i++) {
		const struct extverity_tree *t =
			ev_area_tree(a, a->files[i].tree);

		err = ev_fsverity_digest(p->hash_algorithm, p->log_blocksize,
					 a->sb.salt, p->salt_size,
					 le64_to_cpu(t->data_size),
					 t->root_hash, digest);
		if (err)
			break;
		ev_bin2hex(digest, p->digest_size, hex);
		/* In order: each path is the one before and its own bytes. */
		path = ev_area_file_path(a, i, pb);
		if (!json) {
			printf("%s:%s %s\n", alg, hex, path);
			continue;
		}
		j = ev_json_object();
		ev_json_add_str(j, "path", path);
		ev_json_add_u64(j, "inode", a->files[i].ino);
		ev_json_add_u64(j, "size", le64_to_cpu(t->data_size));
		ev_json_add_str(j, "algorithm", alg);
		ev_json_add_str(j, "digest", hex);
		fputs(i ? ",\n" : "\n", stdout);
		ev_json_write(j);
		json_object_put(j);
	}
	if (json && !err)
		fputs("\n]\n", stdout);
	free(pb);
	return err;
}

static void print_params(const struct ev_area *a, bool json)
{
	const struct extverity_params *p = &a->p;
	char root[2 * EXTVERITY_MAX_DIGEST_SIZE + 1];
	char salt[2 * EXTVERITY_MAX_SALT_SIZE + 1];
	char uuid[37];
	struct counts c;
	u64 trees = p->sect[EXTVERITY_SECT_TREES].nr_entries;
	u64 extents = p->sect[EXTVERITY_SECT_EXTENTS].nr_entries;

	count(a, &c);
	ev_bin2hex(a->root, p->digest_size, root);
	ev_bin2hex(a->sb.salt, p->salt_size, salt);
	ev_format_uuid(a->sb.uuid, uuid);
	if (json) {
		struct json_object *j = ev_json_object();

		ev_json_add_str(j, "root_digest", root);
		ev_json_add_str(j, "hash_algorithm",
				extverity_hash_name(p->hash_algorithm));
		ev_json_add_u64(j, "data_block_size", p->block_size);
		ev_json_add_u64(j, "data_blocks", p->data_blocks);
		ev_json_add_u64(j, "hash_offset", a->offset);
		ev_json_add_u64(j, "hash_blocks", p->hash_blocks);
		ev_json_add_u64(j, "hash_bytes",
				p->hash_blocks << p->log_blocksize);
		ev_json_add_u64(j, "hole_hash_blocks", c.hole_hash_blocks);
		ev_json_add_str(j, "salt", salt);
		ev_json_add_str(j, "uuid", uuid);
		ev_json_add_u64(j, "files", a->nr_files);
		/* null: an area made before the index, which has none. */
		if (a->has_inodes)
			ev_json_add_u64(j, "inode_index", a->nr_inodes);
		else
			ev_json_add(j, "inode_index", NULL);
		/* null: an area made before the top digests. */
		if (a->has_top_digests)
			ev_json_add_u64(j, "top_digests",
					p->sect[EXTVERITY_SECT_TOP_DIGESTS]
					.nr_entries);
		else
			ev_json_add(j, "top_digests", NULL);
		ev_json_add_u64(j, "trees", trees);
		ev_json_add_u64(j, "shared_trees", c.shared_trees);
		ev_json_add_u64(j, "extents", extents);
		ev_json_add_u64(j, "zero_blocks", c.zero_blocks);
		ev_json_add_u64(j, "residual_blocks", c.residual_blocks);
		if (a->has_fec) {
			ev_json_add_u64(j, "fec_offset",
					a->fec.start * p->block_size);
			ev_json_add_u64(j, "fec_roots", a->fec.roots);
			ev_json_add_u64(j, "fec_blocks", a->fec.blocks);
			ev_json_add_u64(j, "fec_bytes",
					a->fec.parity_blocks * p->block_size);
		}
		ev_json_print(j);
		return;
	}
	printf("extverity hash area of %s\n", a->path);
	printf("Format version:     %u\n", le32_to_cpu(a->sb.version));
	printf("UUID:               %s\n", uuid);
	printf("Hash algorithm:     %s\n", extverity_hash_name(p->hash_algorithm));
	printf("Data block size:    %u\n", p->block_size);
	printf("Data blocks:        %" PRIu64 "\n", p->data_blocks);
	printf("Hash offset:        %" PRIu64 "\n", a->offset);
	printf("Hash blocks:        %" PRIu64 "\n", p->hash_blocks);
	printf("Hash bytes:         %" PRIu64 "\n",
	       p->hash_blocks << p->log_blocksize);
	printf("Hole hash blocks:   %" PRIu64 "\n", c.hole_hash_blocks);
	printf("Salt:               %s\n", p->salt_size ? salt : "-");
	printf("Files:              %zu\n", a->nr_files);
	if (a->has_inodes)
		printf("Inode index:        %" PRIu64 "\n", a->nr_inodes);
	else
		printf("Inode index:        none (made by an older extverity)\n");
	if (a->has_top_digests)
		printf("Top digests:        %" PRIu64 "\n",
		       p->sect[EXTVERITY_SECT_TOP_DIGESTS].nr_entries);
	else
		printf("Top digests:        none (made by an older extverity)\n");
	printf("Trees:              %" PRIu64 "\n", trees);
	printf("Shared trees:       %" PRIu64 "\n", c.shared_trees);
	printf("Extents:            %" PRIu64 "\n", extents);
	printf("Zero blocks:        %" PRIu64 "\n", c.zero_blocks);
	printf("Residual blocks:    %" PRIu64 "\n", c.residual_blocks);
	if (a->has_fec) {
		printf("FEC offset:         %" PRIu64 "\n",
		       a->fec.start * p->block_size);
		printf("FEC roots:          %u\n", a->fec.roots);
		printf("FEC blocks:         %" PRIu64 "\n", a->fec.blocks);
		printf("FEC bytes:          %" PRIu64 "\n",
		       a->fec.parity_blocks * p->block_size);
	} else {
		printf("FEC:                none\n");
	}
	printf("Root digest:        %s\n", root);
}

int ev_cmd_dump(const struct ev_command *cmd, int argc, char *argv[])
{
	bool files = false, json = false, seen[5] = { false };
	const char *root = NULL, *root_file = NULL;
	char root_buf[EV_ROOT_HEX_SIZE];
	struct ev_area a;
	u64 offset = 0;
	int c, err;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c < OPT_FILES)
			return ev_option_error(cmd, argv, longopts);
		if (!ev_once(&seen[c - OPT_FILES],
			     longopts[c - OPT_FILES].name))
			return EV_EUSAGE;
		if (c == OPT_FILES)
			files = true;
		else if (c == OPT_JSON)
			json = true;
		else if (c == OPT_ROOT)
			root = optarg;
		else if (c == OPT_ROOT_FILE)
			root_file = optarg;
		else if (!ev_parse_offset(optarg, &offset))
			return EV_EUSAGE;
	}
	if (!ev_operands(cmd, argc, argv, "HASHFILE"))
		return EV_EUSAGE;
	if (root && root_file) {
		ev_error("--root-digest and --root-hash-file exclude each other");
		return EV_EUSAGE;
	}
	err = ev_root_hash_file_read(root_file, root_buf, sizeof(root_buf),
				     &root);
	if (err)
		return err;
	/*
	 * With a root digest, what is printed is authenticated.  Without one,
	 * it is what the file says.
	 */
	err = ev_area_read(&a, argv[optind], offset, root);
	if (!err) {
		if (files)
			err = print_files(&a, json);
		else
			print_params(&a, json);
	}
	ev_area_close(&a);
	return err;
}
