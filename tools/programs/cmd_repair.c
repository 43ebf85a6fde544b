// SPDX-License-Identifier: GPL-2.0
/*
 * extverity repair: write a copy of an image, and of its hash area, with
 * every block its FEC parity corrects, and keep it only if it verifies.
 */
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "extverity.h"
#include "fec.h"
#include "verify.h"
#include "write.h"

enum { OPT_OFFSET = 256, OPT_FEC, OPT_HASH_OUT, OPT_ROOT_FILE };

static const struct option longopts[] = {
	{ "hash-offset", required_argument, NULL, OPT_OFFSET },
	{ "fec-device", required_argument, NULL, OPT_FEC },
	{ "hash-output", required_argument, NULL, OPT_HASH_OUT },
	{ "root-hash-file", required_argument, NULL, OPT_ROOT_FILE },
	{ NULL, 0, NULL, 0 },
};

static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return !strcmp(a, b) || (!stat(a, &sa) && !stat(b, &sb) &&
				 sa.st_dev == sb.st_dev &&
				 sa.st_ino == sb.st_ino);
}

static bool is_dev(const char *path)
{
	struct stat st;

	return !stat(path, &st) && !S_ISREG(st.st_mode);
}

/* Bytes copied at a time. */
#define COPY_CHUNK	(1024 * 1024)

/*
 * One output: @len bytes of @fd from @start, then the blocks of
 * [@first, @first + @len / block size) of the covered area that FEC
 * corrects, at their place.
 */
struct repair_out {
	const struct ev_area *a;
	int fd;
	u64 start;
	u64 len;
	u64 first;
	int fec;
	int image;
	u64 fixed;
	u64 other;	/* corrected blocks outside this output */
	u64 bad_rounds;
	int out;	/* while filling */
	u64 out_offset;
};

static int put_fixed(u64 block, const u8 *data, void *arg)
{
	struct repair_out *r = arg;
	u32 bs = r->a->p.block_size;

	if (block < r->first || block - r->first >= r->len / bs) {
		r->other++;
		return 0;
	}
	r->fixed++;
	return ev_pwrite(r->out, data, bs, r->out_offset +
			 (block - r->first) * bs);
}

/* Scan the whole covered area, reporting the blocks FEC changes. */
static int scan(struct repair_out *r, ev_fec_fixed_fn fn, const char **why)
{
	const struct ev_area *a = r->a;
	u32 bs = a->p.block_size;
	struct ev_fec_input in[2] = {
		{ .fd = r->image, .len = a->p.data_blocks * bs },
		{ .fd = a->fd, .start = a->offset, .len = a->p.hash_blocks * bs },
	};

	return ev_fec_repair(in, 2, bs, a->fec.roots, r->fec,
			     a->fec.start * bs, fn, r, &r->bad_rounds, why);
}

/* ev_write_begin()'s: the copy, then the corrected blocks over it. */
static int fill_repair(int fd, u64 offset, bool over_old, void *arg,
		       const char **src_why)
{
	struct repair_out *r = arg;
	u8 *buf = xmalloc(COPY_CHUNK);
	u64 done, n;
	int err = 0;

	(void)over_old;
	for (done = 0; !err && done < r->len; done += n) {
		n = r->len - done < COPY_CHUNK ? r->len - done : COPY_CHUNK;
		err = ev_pread(r->fd, buf, n, r->start + done);
		if (err) {
			*src_why = "cannot read what is repaired";
			break;
		}
		err = ev_pwrite(fd, buf, n, offset + done);
	}
	free(buf);
	if (err)
		return err;
	r->out = fd;
	r->out_offset = offset;
	r->fixed = 0;
	r->other = 0;
	err = scan(r, put_fixed, src_why);
	if (!err && fdatasync(fd))
		err = -errno;
	return err;
}

int ev_cmd_repair(const struct ev_command *cmd, int argc, char *argv[])
{
	bool seen[4] = { false };
	const char *root, *root_file = NULL, *fec = NULL, *hash_out = NULL;
	const char *image, *out;
	char root_buf[EV_ROOT_HEX_SIZE];
	struct ev_pending_write pw_data = { 0 }, pw_hash = { 0 };
	struct repair_out rd = { 0 }, rh = { 0 };
	struct ev_verify_result res = { 0 };
	struct ev_area a, check;
	u64 offset = 0;
	int c, err;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c < OPT_OFFSET)
			return ev_option_error(cmd, argv, longopts);
		if (!ev_once(&seen[c - OPT_OFFSET], longopts[c - OPT_OFFSET].name))
			return EV_EUSAGE;
		if (c == OPT_OFFSET && !ev_parse_offset(optarg, &offset))
			return EV_EUSAGE;
		if (c == OPT_FEC)
			fec = optarg;
		if (c == OPT_HASH_OUT)
			hash_out = optarg;
		if (c == OPT_ROOT_FILE)
			root_file = optarg;
	}
	if (!ev_operands(cmd, argc, argv, root_file ?
			 "IMAGE HASHFILE OUTPUT" :
			 "IMAGE HASHFILE ROOT_DIGEST OUTPUT"))
		return EV_EUSAGE;
	if (!fec) {
		ev_error("repair needs --fec-device");
		return EV_EUSAGE;
	}
	image = argv[optind];
	out = argv[optind + (root_file ? 2 : 3)];
	/* Copies: an output over an input would be read while written. */
	if (same_file(out, image) || same_file(out, argv[optind + 1]) ||
	    (hash_out && (same_file(hash_out, image) ||
			  same_file(hash_out, argv[optind + 1]) ||
			  !strcmp(hash_out, out)))) {
		ev_error("OUTPUT and --hash-output must be new files, not the "
			 "image, the hash file or each other");
		return EV_EUSAGE;
	}
	/* A device would be written before the check, and not put back. */
	if (is_dev(out) || (hash_out && is_dev(hash_out))) {
		ev_error("OUTPUT and --hash-output must be files, not devices");
		return EV_EUSAGE;
	}
	root = argv[optind + 2];
	err = ev_root_hash_file_read(root_file, root_buf, sizeof(root_buf),
				     &root);
	if (err)
		return err;
	/*
	 * The area must load: its FEC record says where the parity is and
	 * its digests judge the result.  A damaged manifest is repaired into
	 * --hash-output when the record still authenticates: the repaired
	 * copy is then loaded and judged like any other.
	 */
	err = ev_area_read(&a, argv[optind + 1], offset, root);
	if (err == EV_ECORRUPT && a.fec.roots) {
		if (hash_out)
			err = 0;
		else
			ev_error("the manifest of %s is damaged: repairing it "
				 "needs --hash-output", argv[optind + 1]);
	}
	if (!err && !a.has_fec) {
		ev_error("%s has no FEC record: it was formatted without "
			 "--fec-device", argv[optind + 1]);
		err = EV_EUSAGE;
	}
	if (err) {
		ev_area_close(&a);
		return err;
	}
	rd.a = &a;
	rd.image = open(image, O_RDONLY);
	rd.fec = open(fec, O_RDONLY);
	if (rd.image < 0 || rd.fec < 0) {
		ev_error("cannot open %s: %s", rd.image < 0 ? image : fec,
			 strerror(errno));
		err = EV_EIO;
		goto out;
	}
	rd.fd = rd.image;
	rd.len = a.p.data_blocks * a.p.block_size;
	rh = rd;
	rh.fd = a.fd;
	rh.start = a.offset;
	rh.len = a.p.hash_blocks * a.p.block_size;
	rh.first = a.p.data_blocks;
	err = ev_write_begin(out, 0, fill_repair, &rd, &pw_data);
	if (!err && hash_out)
		err = ev_write_begin(hash_out, 0, fill_repair, &rh, &pw_hash);
	if (err)
		goto out;
	/* The copies as they will be, against the authenticated digests. */
	err = ev_area_read(&check, !hash_out ? argv[optind + 1] :
			   pw_hash.tmp ? pw_hash.tmp : hash_out,
			   hash_out ? 0 : offset, root);
	if (!err)
		err = ev_verify(&check, pw_data.tmp ? pw_data.tmp : out, &res);
	ev_area_close(&check);
	if (err == EV_ECORRUPT && !hash_out && rd.other)
		ev_error("the repaired copy still has %" PRIu64 " damaged "
			 "items (%" PRIu64 " rounds past what FEC corrects; "
			 "%" PRIu64 " hash blocks FEC corrects need "
			 "--hash-output): nothing written", res.corrupted,
			 rd.bad_rounds, rd.other);
	else if (err == EV_ECORRUPT)
		ev_error("the repaired copy still has %" PRIu64 " damaged "
			 "items (%" PRIu64 " rounds past what FEC corrects): "
			 "nothing written", res.corrupted, rd.bad_rounds);
	if (!err)
		err = ev_write_commit(&pw_data);
	if (!err)
		err = ev_write_commit(&pw_hash);
	if (!err)
		printf("Repaired %" PRIu64 " data blocks and %" PRIu64
		       " hash blocks; %s verifies.\n", rd.fixed,
		       hash_out ? rh.fixed : 0, out);
out:
	ev_write_abort(&pw_data);
	ev_write_abort(&pw_hash);
	if (rd.image >= 0)
		close(rd.image);
	if (rd.fec >= 0)
		close(rd.fec);
	ev_area_close(&a);
	return err;
}
