// SPDX-License-Identifier: GPL-2.0
/*
 * extverity status: the state of an extverity device, as
 * `veritysetup status` shows a verity device, plus the target's counters
 * and the files in which the target saw corruption (its `corrupted`
 * message), by path when the hash area can be read and authenticated.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sysmacros.h>

#include "dm.h"
#include "extverity.h"
#include "loop.h"
#include "table.h"

enum { OPT_JSON = 256, OPT_HASH_DEVICE, OPT_OFFSET };

/* One device of the table line: its /dev path, its loop file. */
struct dev_desc {
	char *path;
	char *backing;
};

/* What the table, the status line and the superblock say. */
struct state {
	struct ev_dm_info info;
	struct ev_table_line t;
	struct ev_target_status st;
	struct dev_desc data, hash;
	u64 sectors;
	bool have_sb;	/* the fields below are known */
	unsigned int block_size;
	char salt[2 * EXTVERITY_MAX_SALT_SIZE + 1];
	char uuid[37];
	const char *hash_device;	/* --hash-device, or NULL */
	u64 hash_offset;		/* with it, --hash-offset */
	bool have_damage;	/* the target answered `corrupted` */
	struct ev_damage *damage;
	size_t nr_damage;
	u64 damage_more;
	bool have_area;		/* @area is loaded: paths are known */
	struct ev_area area;
	struct ev_path_buf *pb;
};

/* @mm: the device as the kernel prints it, major:minor. */
static void describe(struct dev_desc *d, const char *mm)
{
	unsigned int ma, mi;

	if (sscanf(mm, "%u:%u", &ma, &mi) != 2)
		return;
	d->path = ev_blockdev_path(makedev(ma, mi));
	d->backing = ev_loop_backing_file(makedev(ma, mi));
}

/*
 * Read and authenticate the superblock (against the table's root digest)
 * for block size, salt and uuid; from --hash-device when given, else the
 * table's hash device.  With damage to name, load the manifest too, for
 * the paths.  0 or, when the area cannot be read or authenticated, its
 * exit code (the error printed).
 */
static int read_sb(struct state *s)
{
	struct ev_area *a = &s->area;
	const char *path = s->hash_device ? s->hash_device : s->hash.path;
	u64 offset = s->hash_device ? s->hash_offset : s->t.hash_sector * 512;
	int err;

	if (!path)
		return 0;
	err = ev_table_open_area(a, path, offset, s->t.root);
	if (!err) {
		s->have_sb = true;
		s->block_size = a->p.block_size;
		ev_bin2hex(a->sb.salt, a->p.salt_size, s->salt);
		ev_format_uuid(a->sb.uuid, s->uuid);
		if (s->nr_damage || s->damage_more)
			err = ev_area_load(a);
		if (!err && (s->nr_damage || s->damage_more)) {
			s->have_area = true;
			s->pb = ev_path_new();
			return 0;
		}
	}
	ev_area_close(a);
	return err;
}

/*
 * Ask the target which files it saw corrupted.  A target that does not
 * know the message (a module older than the tool) leaves the list unknown:
 * status is still printed, without it.
 */
static void read_damage(const char *name, struct state *s)
{
	char *answer;
	int err = ev_dm_message(name, "corrupted", &answer);

	if (err) {
		ev_debug("%s: no answer to 'corrupted': %s", name,
			 strerror(-err));
		return;
	}
	if (ev_damage_parse(answer, &s->damage, &s->nr_damage,
			    &s->damage_more))
		ev_error("%s: cannot parse the target's list of corrupted "
			 "files: %s", name, answer);
	else
		s->have_damage = true;
	free(answer);
}

/* The path of damaged inode @ino, or NULL when it is not known. */
static const char *damage_path(const struct state *s, u64 ino)
{
	if (!s->have_area || !ino)
		return NULL;
	return ev_area_path_of(&s->area, ino, s->pb);
}

static void print_damage_text(const struct state *s)
{
	const char *lead = "  damaged:     ", *path;
	size_t i;

	for (i = 0; i < s->nr_damage; i++) {
		const struct ev_damage *d = &s->damage[i];
		const char *bl = d->blocks == 1 ? "block" : "blocks";

		path = damage_path(s, d->inode);
		if (!d->inode)
			printf("%smetadata at byte %" PRIu64 " (%" PRIu64
			       " %s)\n", lead, d->offset, d->blocks, bl);
		else if (path)
			printf("%s%s (inode %" PRIu64 ", byte %" PRIu64 ", %"
			       PRIu64 " %s)\n", lead, path, d->inode,
			       d->offset, d->blocks, bl);
		else
			printf("%sinode %" PRIu64 " (byte %" PRIu64 ", %"
			       PRIu64 " %s)\n", lead, d->inode, d->offset,
			       d->blocks, bl);
		lead = "               ";
	}
	if (s->damage_more)
		printf("%sand %" PRIu64 " bad blocks in other files\n", lead,
		       s->damage_more);
}

static void add_damage_json(struct json_object *j, const struct state *s)
{
	struct json_object *list, *d;
	size_t i;

	if (!s->have_damage) {
		ev_json_add(j, "damaged", NULL);
		ev_json_add(j, "damaged_more", NULL);
		return;
	}
	list = ev_json_array();
	for (i = 0; i < s->nr_damage; i++) {
		d = ev_json_object();
		ev_json_add_str(d, "kind", s->damage[i].inode ? "file" :
				"metadata");
		ev_json_add_u64(d, "inode", s->damage[i].inode);
		if (s->damage[i].inode)
			ev_json_add_str(d, "path",
					damage_path(s, s->damage[i].inode));
		ev_json_add_u64(d, "offset", s->damage[i].offset);
		ev_json_add_u64(d, "blocks", s->damage[i].blocks);
		ev_json_append(list, d);
	}
	ev_json_add(j, "damaged", list);
	ev_json_add_u64(j, "damaged_more", s->damage_more);
}

static void print_json(const char *name, const struct state *s)
{
	struct json_object *j = ev_json_object(), *flags = ev_json_array();
	char dev[160];
	int i;

	snprintf(dev, sizeof(dev), "/dev/mapper/%s", name);
	ev_json_add_str(j, "name", name);
	ev_json_add_str(j, "device", dev);
	ev_json_add_bool(j, "active", true);
	ev_json_add_bool(j, "in_use", s->info.open_count > 0);
	ev_json_add_str(j, "type", "extverity");
	ev_json_add_str(j, "status",
			s->st.health == 'V' ? "verified" : "corrupted");
	ev_json_add_u64(j, "verified_blocks", s->st.verified);
	ev_json_add_u64(j, "corrupt_blocks", s->st.corrupt);
	ev_json_add_u64(j, "zero_blocks", s->st.zero);
	if (s->st.has_corrected)
		ev_json_add_u64(j, "corrected_blocks", s->st.corrected);
	else
		ev_json_add(j, "corrected_blocks", NULL);
	if (s->st.has_paired)
		ev_json_add_u64(j, "paired_blocks", s->st.paired);
	else
		ev_json_add(j, "paired_blocks", NULL);
	if (s->st.has_split)
		ev_json_add_u64(j, "split_reads", s->st.split);
	else
		ev_json_add(j, "split_reads", NULL);
	ev_json_add_u64(j, "version", s->t.version);
	ev_json_add_str(j, "hash_algorithm", s->t.alg);
	/* Unknown (null) when the superblock could not be read. */
	if (s->have_sb)
		ev_json_add_u64(j, "data_block_size", s->block_size);
	else
		ev_json_add(j, "data_block_size", NULL);
	ev_json_add_str(j, "salt", s->have_sb ? s->salt : NULL);
	ev_json_add_str(j, "uuid", s->have_sb ? s->uuid : NULL);
	ev_json_add_u64(j, "size_sectors", s->sectors);
	ev_json_add_str(j, "data_device", s->data.path);
	ev_json_add_str(j, "data_devno", s->t.data);
	ev_json_add_str(j, "data_backing_file", s->data.backing);
	ev_json_add_str(j, "hash_device", s->hash.path);
	ev_json_add_str(j, "hash_devno", s->t.hash);
	ev_json_add_str(j, "hash_backing_file", s->hash.backing);
	ev_json_add_u64(j, "hash_offset", s->t.hash_sector * 512);
	ev_json_add_str(j, "root_digest", s->t.root);
	for (i = 0; i < EV_NR_TABLE_OPTS; i++) {
		if (!(s->t.flags & (1U << i)))
			continue;
		ev_json_append(flags,
			       ev_json_new_string(ev_table_opts[i].param));
	}
	ev_json_add(j, "flags", flags);
	ev_json_add_str(j, "root_hash_sig_key_desc", s->t.sig_key);
	ev_json_add_str(j, "fec_devno", s->t.fec_dev);
	if (s->t.fec_dev) {
		ev_json_add_u64(j, "fec_roots", s->t.fec_roots);
		ev_json_add_u64(j, "fec_blocks", s->t.fec_blocks);
		ev_json_add_u64(j, "fec_start", s->t.fec_start);
	}
	add_damage_json(j, s);
	ev_json_print(j);
}

static void print_text(const char *name, const struct state *s)
{
	int i, n = 0;

	printf("/dev/mapper/%s is active%s.\n", name,
	       s->info.open_count > 0 ? " and is in use" : "");
	printf("  type:        EXTVERITY\n");
	printf("  status:      %s\n",
	       s->st.health == 'V' ? "verified" : "corrupted");
	printf("  verified:    %" PRIu64 " blocks\n", s->st.verified);
	printf("  corrupt:     %" PRIu64 " blocks\n", s->st.corrupt);
	printf("  zero:        %" PRIu64 " blocks\n", s->st.zero);
	if (s->st.has_corrected)
		printf("  corrected:   %" PRIu64 " blocks (by FEC)\n",
		       s->st.corrected);
	if (s->st.has_paired)
		printf("  paired:      %" PRIu64 " blocks (hashed two at a time)\n",
		       s->st.paired);
	if (s->st.has_split)
		printf("  split:       %" PRIu64 " reads (verified in two halves)\n",
		       s->st.split);
	printf("  hash type:   %u\n", s->t.version);
	if (s->have_sb)
		printf("  data block:  %u\n", s->block_size);
	printf("  hash name:   %s\n", s->t.alg);
	if (s->have_sb) {
		printf("  salt:        %s\n", *s->salt ? s->salt : "-");
		printf("  uuid:        %s\n", s->uuid);
	}
	printf("  data device: %s\n", s->data.path ? s->data.path : s->t.data);
	if (s->data.backing)
		printf("  data loop:   %s\n", s->data.backing);
	printf("  size:        %" PRIu64 " sectors\n", s->sectors);
	printf("  mode:        readonly\n");
	printf("  hash device: %s\n", s->hash.path ? s->hash.path : s->t.hash);
	if (s->hash.backing)
		printf("  hash loop:   %s\n", s->hash.backing);
	printf("  hash offset: %" PRIu64 " sectors\n", s->t.hash_sector);
	printf("  root digest: %s\n", s->t.root);
	if (s->t.flags) {
		printf("  flags:       ");
		for (i = 0; i < EV_NR_TABLE_OPTS; i++)
			if (s->t.flags & (1U << i))
				printf("%s%s", n++ ? " " : "",
				       ev_table_opts[i].param);
		printf("\n");
	}
	if (s->t.sig_key)
		printf("  signature:   key %s (verified by the kernel)\n",
		       s->t.sig_key);
	if (s->t.fec_dev)
		printf("  FEC:         device %s, %" PRIu64 " roots over %"
		       PRIu64 " blocks, parity at block %" PRIu64 "\n",
		       s->t.fec_dev, s->t.fec_roots, s->t.fec_blocks,
		       s->t.fec_start);
	print_damage_text(s);
}

static int get_state(const char *name, struct state *s)
{
	struct ev_dm_target t;
	int err;

	err = ev_dm_target(name, false, &t);
	if (err)
		return err;
	if (strcmp(t.type, EXTVERITY_TARGET_NAME)) {
		ev_error("device %s is not an extverity device (target %s)",
			 name, t.type);
		err = EV_EUSAGE;
	} else if (ev_table_parse(t.params, &s->t)) {
		ev_error("cannot parse the table of %s: %s", name, t.params);
		err = EV_EUSAGE;
	}
	s->sectors = t.len;
	ev_dm_target_free(&t);
	if (err)
		return err;
	err = ev_dm_target(name, true, &t);
	if (err)
		return err;
	if (ev_status_parse(t.params, &s->st)) {
		ev_error("cannot parse the status of %s: %s", name, t.params);
		err = EV_EUSAGE;
	}
	ev_dm_target_free(&t);
	describe(&s->data, s->t.data);
	describe(&s->hash, s->t.hash);
	if (err)
		return err;
	read_damage(name, s);
	/* The table's hash device is best effort; one named must work. */
	err = read_sb(s);
	return s->hash_device ? err : 0;
}

int ev_cmd_status(const struct ev_command *cmd, int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "hash-device", required_argument, NULL, OPT_HASH_DEVICE },
		{ "hash-offset", required_argument, NULL, OPT_OFFSET },
		{ NULL, 0, NULL, 0 },
	};
	bool json = false, seen[3] = { false };
	const char *name;
	struct state s;
	int c, err;

	memset(&s, 0, sizeof(s));
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c < OPT_JSON)
			return ev_option_error(cmd, argv, longopts);
		if (!ev_once(&seen[c - OPT_JSON], longopts[c - OPT_JSON].name))
			return EV_EUSAGE;
		if (c == OPT_JSON)
			json = true;
		else if (c == OPT_HASH_DEVICE)
			s.hash_device = optarg;
		else if (!ev_parse_offset(optarg, &s.hash_offset))
			return EV_EUSAGE;
	}
	if (seen[OPT_OFFSET - OPT_JSON] && !s.hash_device) {
		ev_error("--hash-offset is the offset in --hash-device: give "
			 "both, or neither (the table's)");
		return EV_EUSAGE;
	}
	if (!ev_operands(cmd, argc, argv, "NAME"))
		return EV_EUSAGE;
	name = argv[optind];
	err = ev_dm_init();
	if (!err)
		err = ev_dm_info(name, &s.info);
	if (err)
		return err;
	if (!s.info.exists) {
		if (json) {
			struct json_object *j = ev_json_object();

			ev_json_add_str(j, "name", name);
			ev_json_add_bool(j, "active", false);
			ev_json_print(j);
		} else {
			printf("%s is inactive.\n", name);
		}
		return EV_EIO;
	}
	err = get_state(name, &s);
	if (!err) {
		if (json)
			print_json(name, &s);
		else
			print_text(name, &s);
	}
	free(s.data.path);
	free(s.data.backing);
	free(s.hash.path);
	free(s.hash.backing);
	free(s.damage);
	free(s.pb);
	if (s.have_area)
		ev_area_close(&s.area);
	ev_table_line_free(&s.t);
	return err;
}
