// SPDX-License-Identifier: GPL-2.0
/*
 * extverity status: the state of an extverity device, as
 * `veritysetup status` shows a verity device, plus the target's counters.
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

enum { OPT_JSON = 256 };

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

/* Read and authenticate the superblock for block size, salt and uuid. */
static void read_sb(struct state *s)
{
	struct ev_area a;

	if (!s->hash.path)
		return;
	if (!ev_table_open_area(&a, s->hash.path, s->t.hash_sector * 512,
				s->t.root)) {
		s->have_sb = true;
		s->block_size = a.p.block_size;
		ev_bin2hex(a.sb.salt, a.p.salt_size, s->salt);
		ev_format_uuid(a.sb.uuid, s->uuid);
	}
	ev_area_close(&a);
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
	read_sb(s);
	return err;
}

int ev_cmd_status(const struct ev_command *cmd, int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ NULL, 0, NULL, 0 },
	};
	bool json = false;
	const char *name;
	struct state s;
	int c, err;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c != OPT_JSON)
			return ev_option_error(cmd, argv, longopts);
		if (!ev_once(&json, "json"))
			return EV_EUSAGE;
	}
	if (!ev_operands(cmd, argc, argv, "NAME"))
		return EV_EUSAGE;
	name = argv[optind];
	memset(&s, 0, sizeof(s));
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
	ev_table_line_free(&s.t);
	return err;
}
