// SPDX-License-Identifier: GPL-2.0
/*
 * extverity verify: check a whole image in userspace against its hash area
 * and root digest, reporting every damaged item.
 */
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <unistd.h>
#include <json-c/json.h>

#include "extverity.h"
#include "fec.h"
#include "progress.h"
#include "verify.h"

enum { OPT_OFFSET = 256, OPT_PROGRESS, OPT_JSON, OPT_ROOT_FILE, OPT_FEC };

static const struct option longopts[] = {
	{ "hash-offset", required_argument, NULL, OPT_OFFSET },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "root-hash-file", required_argument, NULL, OPT_ROOT_FILE },
	{ "fec-device", required_argument, NULL, OPT_FEC },
	{ NULL, 0, NULL, 0 },
};

/* What the FEC parity would change, for verify --fec-device. */
struct fec_report {
	const struct ev_area *a;
	u64 data;
	u64 hash;
};

static int report_fixed(u64 block, const u8 *data, void *arg)
{
	struct fec_report *r = arg;
	u64 n = r->a->p.data_blocks;

	(void)data;
	if (r->data + r->hash < EV_MAX_REPORTS) {
		if (block < n)
			ev_error("FEC corrects: data block %llu",
				 (unsigned long long)block);
		else
			ev_error("FEC corrects: hash block %llu",
				 (unsigned long long)(block - n));
	}
	if (block < n)
		r->data++;
	else
		r->hash++;
	return 0;
}

/*
 * Damage was found: which blocks the parity on @fec corrects (not checked
 * against the digests here: `extverity repair` does that); 0 or an exit
 * code.
 */
static int fec_check(const struct ev_area *a, const char *image,
		     const char *fec)
{
	struct fec_report r = { .a = a };
	u32 bs = a->p.block_size;
	int ifd, ffd, err;
	struct ev_fec_input in[2] = {
		{ .len = a->p.data_blocks * bs },
		{ .fd = a->fd, .start = a->offset,
		  .len = a->p.hash_blocks * bs },
	};
	const char *why = NULL;
	u64 bad = 0;

	if (!a->has_fec) {
		ev_error("%s has no FEC record: it was formatted without "
			 "--fec-device", a->path);
		return EV_EUSAGE;
	}
	ifd = open(image, O_RDONLY);
	ffd = open(fec, O_RDONLY);
	if (ifd < 0 || ffd < 0) {
		ev_error("cannot open %s: %s", ifd < 0 ? image : fec,
			 strerror(errno));
		err = EV_EIO;
		goto out;
	}
	in[0].fd = ifd;
	err = ev_fec_repair(in, 2, bs, a->fec.roots, ffd, a->fec.start * bs,
			    report_fixed, &r, &bad, &why);
	if (err) {
		ev_error("FEC: %s: %s", why, strerror(-err));
		err = EV_EIO;
		goto out;
	}
	ev_error("FEC corrects %llu data blocks and %llu hash blocks; %llu "
		 "rounds have more errors than it corrects%s",
		 (unsigned long long)r.data, (unsigned long long)r.hash,
		 (unsigned long long)bad,
		 r.data + r.hash ? " (extverity repair writes a corrected "
		 "copy and checks it)" : "");
out:
	if (ifd >= 0)
		close(ifd);
	if (ffd >= 0)
		close(ffd);
	return err;
}

/* What verify --json collects while ev_verify() runs. */
struct json_items {
	const struct ev_area *a;
	struct json_object *list;
	struct ev_path_buf *path;
};

static const char *const item_kinds[] = {
	[EV_ITEM_FILE] = "file",
	[EV_ITEM_METADATA] = "metadata",
	[EV_ITEM_HASH_TREE] = "hash-tree",
	[EV_ITEM_PACKED_TOP] = "packed-top",
	[EV_ITEM_TOP_DIGEST] = "top-digest",
};

/* Tree @tree into @j, with its file's path and inode if it is a file's. */
static void add_tree(const struct json_items *ji, struct json_object *j,
		     u32 tree)
{
	const struct ev_file_entry *f = NULL;

	ev_json_add_u64(j, "tree", tree);
	if (tree != EXTVERITY_TREE_RESIDUAL)
		f = ev_area_file_of_tree(ji->a, tree);
	if (f) {
		size_t i = f - ji->a->files;

		ev_json_add_str(j, "path", ev_area_file_path(ji->a, i,
							     ji->path));
		ev_json_add_u64(j, "inode", f->ino);
	}
}

/*
 * ev_verify()'s callback: each item it prints on stderr (at most
 * EV_MAX_REPORTS) as one object, with the same facts as fields.
 */
static void add_item(const struct ev_verify_item *it, void *arg)
{
	struct json_items *ji = arg;
	struct json_object *j = ev_json_object(), *trees, *t;
	size_t i;

	ev_json_add_str(j, "kind", item_kinds[it->kind]);
	switch (it->kind) {
	case EV_ITEM_FILE:
		ev_json_add_str(j, "path", it->path);
		ev_json_add_u64(j, "inode", it->inode);
		ev_json_add_u64(j, "offset", it->offset);
		ev_json_add_u64(j, "block", it->block);
		break;
	case EV_ITEM_METADATA:
	case EV_ITEM_TOP_DIGEST:
		ev_json_add_u64(j, "block", it->block);
		break;
	case EV_ITEM_HASH_TREE:
		add_tree(ji, j, it->tree);
		ev_json_add_u64(j, "level", it->level);
		break;
	case EV_ITEM_PACKED_TOP:
		ev_json_add_u64(j, "block", it->block);
		trees = ev_json_array();
		for (i = 0; i < it->nr_trees; i++) {
			t = ev_json_object();
			add_tree(ji, t, it->trees[i]);
			ev_json_append(trees, t);
		}
		ev_json_add(j, "trees", trees);
		break;
	}
	ev_json_append(ji->list, j);
}

/*
 * One object whatever the outcome once the area is loaded, so a script can
 * tell "verified" from "corrupted" without parsing stderr; @items: what
 * was reported.
 */
static void print_json(const char *image, const struct ev_verify_result *r,
		       int err, struct json_object *items)
{
	struct json_object *j = ev_json_object();

	ev_json_add_str(j, "image", image);
	ev_json_add_bool(j, "verified", !err);
	ev_json_add_u64(j, "corrupted_items", r->corrupted);
	ev_json_add_u64(j, "data_bytes", r->data_bytes);
	ev_json_add(j, "corrupted", json_object_get(items));
	ev_json_print(j);
}

int ev_cmd_verify(const struct ev_command *cmd, int argc, char *argv[])
{
	bool seen[5] = { false }, json = false, progress = false;
	char root_buf[EV_ROOT_HEX_SIZE];
	const char *root, *root_file = NULL, *fec = NULL;
	struct ev_verify_result res = { 0 };
	struct json_items ji = { 0 };
	struct ev_area a;
	u64 offset = 0;
	int c, err;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c < OPT_OFFSET)
			return ev_option_error(cmd, argv, longopts);
		if (!ev_once(&seen[c - OPT_OFFSET], longopts[c - OPT_OFFSET].name))
			return EV_EUSAGE;
		if (c == OPT_OFFSET && !ev_parse_offset(optarg, &offset))
			return EV_EUSAGE;
		if (c == OPT_ROOT_FILE)
			root_file = optarg;
		if (c == OPT_FEC)
			fec = optarg;
		json |= c == OPT_JSON;
		progress |= c == OPT_PROGRESS;
	}
	if (!ev_operands(cmd, argc, argv, root_file ? "IMAGE HASHFILE" :
			 "IMAGE HASHFILE ROOT_DIGEST"))
		return EV_EUSAGE;
	root = argv[optind + 2];
	err = ev_root_hash_file_read(root_file, root_buf, sizeof(root_buf),
				     &root);
	if (err)
		return err;
	ev_progress_setup(progress);
	err = ev_area_read(&a, argv[optind + 1], offset, root);
	/* A damaged manifest whose FEC record still authenticates. */
	if (err == EV_ECORRUPT && fec && a.fec.roots) {
		int ferr = fec_check(&a, argv[optind], fec);

		if (ferr)
			err = ferr;
	} else if (!err) {
		if (json) {
			ji.a = &a;
			ji.list = ev_json_array();
			ji.path = ev_path_new();
			res.item = add_item;
			res.arg = &ji;
		}
		err = ev_verify(&a, argv[optind], &res);
		if (json && (!err || err == EV_ECORRUPT))
			print_json(argv[optind], &res, err, ji.list);
		/* The damage stays damage: the exit code does not change. */
		if (err == EV_ECORRUPT && fec) {
			int ferr = fec_check(&a, argv[optind], fec);

			if (ferr)
				err = ferr;
		}
		json_object_put(ji.list);
		free(ji.path);
	}
	if (!err && !json)
		printf("Verification of %s succeeded.\n", argv[optind]);
	ev_area_close(&a);
	return err;
}
