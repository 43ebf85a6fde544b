// SPDX-License-Identifier: GPL-2.0
/*
 * extverity format: hash an image and write its hash area.
 */
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "extverity.h"
#include "layout.h"
#include "parallel.h"
#include "progress.h"
#include "write.h"

enum {
	OPT_HASH = 256, OPT_BLOCK_SIZE, OPT_SALT, OPT_UUID, OPT_OFFSET,
	OPT_FS, OPT_JSON, OPT_PROGRESS, OPT_ROOT_FILE, OPT_THREADS,
	OPT_FEC_DEVICE, OPT_FEC_OFFSET, OPT_FEC_ROOTS,
};

static const struct option longopts[] = {
	{ "hash", required_argument, NULL, OPT_HASH },
	{ "data-block-size", required_argument, NULL, OPT_BLOCK_SIZE },
	{ "salt", required_argument, NULL, 's' },
	{ "uuid", required_argument, NULL, OPT_UUID },
	{ "hash-offset", required_argument, NULL, OPT_OFFSET },
	{ "fs", required_argument, NULL, OPT_FS },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "root-hash-file", required_argument, NULL, OPT_ROOT_FILE },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "fec-device", required_argument, NULL, OPT_FEC_DEVICE },
	{ "fec-offset", required_argument, NULL, OPT_FEC_OFFSET },
	{ "fec-roots", required_argument, NULL, OPT_FEC_ROOTS },
	{ NULL, 0, NULL, 0 },
};

/* Where --fec-device puts the parity. */
struct fec_dest {
	const char *path;
	u64 offset;
};

/* Size of a regular file or block device; 0 or an exit code. */
static int data_size_of(int fd, const char *path, u64 *size)
{
	struct stat st;

	if (fstat(fd, &st)) {
		ev_error("cannot stat %s: %s", path, strerror(errno));
		return EV_EIO;
	}
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(fd, BLKGETSIZE64, size)) {
			ev_error("cannot get the size of %s: %s", path,
				 strerror(errno));
			return EV_EIO;
		}
		return 0;
	}
	if (!S_ISREG(st.st_mode)) {
		ev_error("%s is not a regular file or block device", path);
		return EV_EUSAGE;
	}
	*size = st.st_size;
	return 0;
}

static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* @a and @b name the same file, or will (neither exists yet). */
static bool same_dest(const char *a, const char *b)
{
	return same_file(a, b) || !strcmp(a, b);
}

/*
 * The parity must not overlap the image's data or the hash area when it
 * shares their file; 0 or EV_EUSAGE, with what overlaps printed.
 */
static int check_fec_place(const struct fec_dest *fec, const char *image,
			   const char *hashfile, u64 data_bytes, u64 offset,
			   const struct ev_area_out *r, u32 bs)
{
	u64 end = fec->offset + r->fec.parity_blocks * bs;
	u64 area_end = offset + r->hash_blocks * bs;

	if (same_dest(fec->path, image) && fec->offset < data_bytes) {
		ev_error("--fec-offset %" PRIu64 " puts the FEC parity over "
			 "the data of %s (its first %" PRIu64 " bytes)",
			 fec->offset, image, data_bytes);
		return EV_EUSAGE;
	}
	if (same_dest(fec->path, hashfile) && fec->offset < area_end &&
	    end > offset) {
		ev_error("--fec-offset %" PRIu64 " puts the FEC parity over "
			 "the hash area (bytes %" PRIu64 " to %" PRIu64 " of "
			 "%s)", fec->offset, offset, area_end, hashfile);
		return EV_EUSAGE;
	}
	return 0;
}

static void print_result(const struct ev_format_opts *o,
			 const struct ev_area_out *r, u64 offset,
			 const struct fec_dest *fec, bool json)
{
	u32 bs = 1U << o->log_blocksize;
	u32 ds = extverity_digest_size(o->hash_algorithm);
	char root[2 * EXTVERITY_MAX_DIGEST_SIZE + 1];
	char salt[2 * EXTVERITY_MAX_SALT_SIZE + 1];
	char uuid[37];

	ev_bin2hex(r->root, ds, root);
	ev_bin2hex(o->salt, o->salt_size, salt);
	ev_format_uuid(o->uuid, uuid);
	if (json) {
		struct json_object *j = ev_json_object();

		ev_json_add_str(j, "root_digest", root);
		ev_json_add_str(j, "hash_algorithm",
				extverity_hash_name(o->hash_algorithm));
		ev_json_add_u64(j, "data_block_size", bs);
		ev_json_add_u64(j, "data_blocks", o->data_blocks);
		ev_json_add_u64(j, "hash_offset", offset);
		ev_json_add_u64(j, "hash_blocks", r->hash_blocks);
		ev_json_add_u64(j, "hash_bytes", r->hash_blocks * bs);
		ev_json_add_u64(j, "hole_hash_blocks", r->hole_hash_blocks);
		ev_json_add_str(j, "salt", salt);
		ev_json_add_str(j, "uuid", uuid);
		ev_json_add_u64(j, "files", r->files);
		ev_json_add_u64(j, "inode_index", r->inodes);
		ev_json_add_u64(j, "top_digests", r->top_digests);
		ev_json_add_u64(j, "trees", r->trees);
		ev_json_add_u64(j, "shared_trees", r->shared_trees);
		ev_json_add_u64(j, "extents", r->extents);
		ev_json_add_u64(j, "zero_blocks", r->zero_blocks);
		ev_json_add_u64(j, "residual_blocks", r->residual_blocks);
		if (fec->path) {
			ev_json_add_str(j, "fec_device", fec->path);
			ev_json_add_u64(j, "fec_offset", fec->offset);
			ev_json_add_u64(j, "fec_roots", r->fec.roots);
			ev_json_add_u64(j, "fec_blocks", r->fec.blocks);
			ev_json_add_u64(j, "fec_bytes",
					r->fec.parity_blocks * bs);
		}
		ev_json_print(j);
		return;
	}
	printf("UUID:               %s\n", uuid);
	printf("Hash algorithm:     %s\n", extverity_hash_name(o->hash_algorithm));
	printf("Data block size:    %u\n", bs);
	printf("Data blocks:        %" PRIu64 "\n", o->data_blocks);
	printf("Hash offset:        %" PRIu64 "\n", offset);
	printf("Hash blocks:        %" PRIu64 "\n", r->hash_blocks);
	printf("Hash bytes:         %" PRIu64 "\n", r->hash_blocks * bs);
	printf("Hole hash blocks:   %" PRIu64 "\n", r->hole_hash_blocks);
	printf("Salt:               %s\n", o->salt_size ? salt : "-");
	printf("Files:              %" PRIu64 "\n", r->files);
	printf("Inode index:        %" PRIu64 "\n", r->inodes);
	printf("Top digests:        %" PRIu64 "\n", r->top_digests);
	printf("Trees:              %" PRIu64 "\n", r->trees);
	printf("Shared trees:       %" PRIu64 "\n", r->shared_trees);
	printf("Extents:            %" PRIu64 "\n", r->extents);
	printf("Zero blocks:        %" PRIu64 "\n", r->zero_blocks);
	printf("Residual blocks:    %" PRIu64 "\n", r->residual_blocks);
	if (fec->path) {
		printf("FEC device:         %s\n", fec->path);
		printf("FEC offset:         %" PRIu64 "\n", fec->offset);
		printf("FEC roots:          %u\n", r->fec.roots);
		printf("FEC blocks:         %" PRIu64 "\n", r->fec.blocks);
		printf("FEC bytes:          %" PRIu64 "\n",
		       r->fec.parity_blocks * bs);
	}
	printf("Root digest:        %s\n", root);
}

/* Parse the options into @o; 0 or an exit code. */
static int parse_opts(const struct ev_command *cmd, int argc, char *argv[],
		      struct ev_format_opts *o, u64 *offset,
		      enum ev_fs_type *fs, bool *json, bool *progress,
		      const char **root_file, struct fec_dest *fec)
{
	bool seen[13] = { false }, have_salt = false, have_uuid = false;
	const char *salt_arg = NULL;
	u64 threads, roots;
	size_t len;
	u32 bs;
	int c;

	o->hash_algorithm = EXTVERITY_HASH_SHA256;
	o->log_blocksize = 12;
	/* -s is --salt, as veritysetup's (docs/cli.md "Short options"). */
	while ((c = getopt_long(argc, argv, "s:", longopts, NULL)) != -1) {
		if (c == 's')
			c = OPT_SALT;
		if (c < OPT_HASH)
			return ev_option_error(cmd, argv, longopts);
		if (!ev_once(&seen[c - OPT_HASH],
			     longopts[c - OPT_HASH].name))
			return EV_EUSAGE;
		switch (c) {
		case OPT_HASH:
			o->hash_algorithm = extverity_hash_by_name(optarg);
			if (!o->hash_algorithm) {
				ev_error("unknown hash algorithm '%s' (use "
					 "sha256 or sha512)", optarg);
				return EV_EUSAGE;
			}
			break;
		case OPT_BLOCK_SIZE:
			if (ev_parse_block_size(optarg, &o->log_blocksize)) {
				ev_error("invalid --data-block-size '%s' (1024, "
					 "2048 or 4096)", optarg);
				return EV_EUSAGE;
			}
			break;
		case OPT_SALT:
			salt_arg = optarg;
			have_salt = true;
			break;
		case OPT_UUID:
			if (ev_parse_uuid(optarg, o->uuid)) {
				ev_error("invalid --uuid '%s' (expected "
					 "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)",
					 optarg);
				return EV_EUSAGE;
			}
			have_uuid = true;
			break;
		case OPT_OFFSET:
			if (!ev_parse_offset(optarg, offset))
				return EV_EUSAGE;
			break;
		case OPT_FS:
			if (ev_fs_type_by_name(optarg, fs)) {
				ev_error("invalid --fs '%s' (auto, ext4, fiemap "
					 "or raw)", optarg);
				return EV_EUSAGE;
			}
			break;
		case OPT_JSON:
			*json = true;
			break;
		case OPT_PROGRESS:
			*progress = true;
			break;
		case OPT_ROOT_FILE:
			*root_file = optarg;
			break;
		case OPT_THREADS:
			if (ev_parse_u64(optarg, &threads) || !threads ||
			    threads > EV_MAX_THREADS) {
				ev_error("invalid --threads '%s' (1 to %d)",
					 optarg, EV_MAX_THREADS);
				return EV_EUSAGE;
			}
			o->threads = threads;
			break;
		case OPT_FEC_DEVICE:
			fec->path = optarg;
			break;
		case OPT_FEC_OFFSET:
			if (!ev_parse_offset(optarg, &fec->offset))
				return EV_EUSAGE;
			break;
		case OPT_FEC_ROOTS:
			if (ev_parse_u64(optarg, &roots) ||
			    roots < EXTVERITY_FEC_MIN_ROOTS ||
			    roots > EXTVERITY_FEC_MAX_ROOTS) {
				ev_error("invalid --fec-roots '%s' (%d to %d)",
					 optarg, EXTVERITY_FEC_MIN_ROOTS,
					 EXTVERITY_FEC_MAX_ROOTS);
				return EV_EUSAGE;
			}
			o->fec_roots = roots;
			break;
		}
	}
	if (!ev_operands(cmd, argc, argv, "IMAGE HASHFILE"))
		return EV_EUSAGE;
	bs = 1U << o->log_blocksize;
	if (*offset % bs) {
		ev_error("--hash-offset %" PRIu64 " is not a multiple of the "
			 "block size %u", *offset, bs);
		return EV_EUSAGE;
	}
	if (!fec->path && (seen[OPT_FEC_OFFSET - OPT_HASH] ||
			   seen[OPT_FEC_ROOTS - OPT_HASH])) {
		ev_error("--fec-offset and --fec-roots need --fec-device");
		return EV_EUSAGE;
	}
	if (fec->path && !o->fec_roots)
		o->fec_roots = 2;	/* veritysetup's default */
	if (fec->offset % bs) {
		ev_error("--fec-offset %" PRIu64 " is not a multiple of the "
			 "block size %u", fec->offset, bs);
		return EV_EUSAGE;
	}
	o->fec_start = fec->offset / bs;
	/*
	 * No salt by default, as fs-verity: each file's digest is then the
	 * one `fsverity digest`, composefs, IMA and IPE compute, which is what
	 * a policy names.  A salt only makes the digests of one image differ
	 * from another's; --salt=random gives one as veritysetup does.
	 */
	if (have_salt && !strcmp(salt_arg, "random")) {
		o->salt_size = EXTVERITY_MAX_SALT_SIZE;
		if (ev_random(o->salt, o->salt_size)) {
			ev_error("cannot get random bytes: %s",
				 strerror(errno));
			return EV_EIO;
		}
	} else if (have_salt) {
		if (ev_parse_salt(salt_arg, o->salt, EXTVERITY_MAX_SALT_SIZE,
				  &len)) {
			ev_error("invalid --salt '%s' (an even number of hex "
				 "digits, at most %d bytes, - for none or "
				 "random)", salt_arg, EXTVERITY_MAX_SALT_SIZE);
			return EV_EUSAGE;
		}
		o->salt_size = len;
	} else {
		o->salt_size = 0;
	}
	if (!have_uuid) {
		if (ev_random(o->uuid, 16)) {
			ev_error("cannot get random bytes: %s",
				 strerror(errno));
			return EV_EIO;
		}
		o->uuid[6] = (o->uuid[6] & 0x0f) | 0x40;	/* version 4 */
		o->uuid[8] = (o->uuid[8] & 0x3f) | 0x80;
	}
	return 0;
}

static int write_fec(const struct fec_dest *fec, int image_fd,
		     const struct ev_format_opts *o,
		     const struct ev_area_out *r, struct ev_pending_write *pw)
{
	u32 bs = 1U << o->log_blocksize;

	return ev_write_fec_begin(fec->path, fec->offset, image_fd,
				  o->data_blocks * bs, &r->area, bs,
				  o->fec_roots, o->threads ? o->threads :
				  ev_default_threads(), pw);
}

int ev_cmd_format(const struct ev_command *cmd, int argc, char *argv[])
{
	struct ev_format_opts o;
	struct ev_pending_write fec_pw = { 0 };
	struct fec_dest fec = { 0 };
	struct ev_area_out r;
	struct ev_fs fs;
	struct ev_fs_image img;
	enum ev_fs_type type = EV_FS_AUTO;
	u64 offset = 0, size;
	bool json = false, progress = false, same, fec_shares = false;
	const char *image, *hashfile, *root_file = NULL;
	char root[2 * EXTVERITY_MAX_DIGEST_SIZE + 1];
	u32 bs;
	int fd, err;

	memset(&o, 0, sizeof(o));
	memset(&fs, 0, sizeof(fs));
	memset(&r, 0, sizeof(r));
	r.area.fd = -1;
	err = parse_opts(cmd, argc, argv, &o, &offset, &type, &json,
			 &progress, &root_file, &fec);
	if (err)
		return err;
	ev_progress_setup(progress);
	image = argv[optind];
	hashfile = argv[optind + 1];
	bs = 1U << o.log_blocksize;
	fd = open(image, O_RDONLY);
	if (fd < 0) {
		ev_error("cannot open %s: %s", image, strerror(errno));
		return EV_EIO;
	}
	err = data_size_of(fd, image, &size);
	if (err)
		goto out;
	same = same_file(image, hashfile);
	err = EV_EUSAGE;
	if (same) {
		if (!offset) {
			ev_error("%s is the image itself: give --hash-offset "
				 "to append the hash area", hashfile);
			goto out;
		}
		if (offset > size) {
			ev_error("--hash-offset %" PRIu64 " is past the end of "
				 "%s", offset, image);
			goto out;
		}
		size = offset;
	} else if (size % bs) {
		ev_error("size of %s (%" PRIu64 " bytes) is not a multiple of "
			 "the block size %u", image, size, bs);
		goto out;
	}
	o.data_blocks = size / bs;
	if (!o.data_blocks) {
		ev_error("%s holds no data", image);
		goto out;
	}
	if (o.data_blocks > EXTVERITY_MAX_DATA_BLOCKS) {
		ev_error("%s is too large", image);
		goto out;
	}
	img = (struct ev_fs_image){ .path = image, .fd = fd,
				    .data_blocks = o.data_blocks,
				    .block_size = bs };
	err = ev_fs_read(&img, type, &fs);
	if (err)
		goto out;
	err = ev_build_area(&o, &fs, fd, &r);
	/* Unmount before writing: the hash area may go into the image. */
	ev_fs_free(&fs);
	if (err)
		goto out;
	/*
	 * The parity is computed from the area in memory and the image, so
	 * that a FEC file of its own is renamed into place only once the area
	 * is written.  Parity that shares the area's or the image's file goes
	 * there after the area, in place.
	 */
	if (fec.path) {
		err = check_fec_place(&fec, image, hashfile, o.data_blocks * bs,
				      offset, &r, bs);
		if (err)
			goto out;
		fec_shares = same_dest(fec.path, hashfile) ||
			     same_dest(fec.path, image);
	}
	if (fec.path && !fec_shares)
		err = write_fec(&fec, fd, &o, &r, &fec_pw);
	if (!err)
		err = ev_write_area_data(hashfile, offset, &r.area);
	if (!err && fec_shares)
		err = write_fec(&fec, fd, &o, &r, &fec_pw);
	if (!err)
		err = ev_write_commit(&fec_pw);
	if (err)
		goto out;
	if (root_file) {
		ev_bin2hex(r.root, extverity_digest_size(o.hash_algorithm),
			   root);
		err = ev_root_hash_file_write(root_file, root);
		if (err)
			goto out;
	}
	print_result(&o, &r, offset, &fec, json);
out:
	ev_write_abort(&fec_pw);
	ev_area_out_free(&r);
	ev_fs_free(&fs);
	close(fd);
	return err;
}
