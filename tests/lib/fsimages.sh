# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
#
# Filesystem images for the FIEMAP tests (tests/userspace/t-fiemap.sh on the
# host, tests/vm/t-vm-fiemap.sh in the guest).  Source it.  Needs root for
# the loop mounts that fill XFS and btrfs.
#
#   fsimg_gen SEED BYTES     BYTES of pseudo-random data, the same per SEED
#   fsimg_src DIR            fill DIR with the test tree: every size class
#                            around a block, a 1 MiB file, a two-level tree,
#                            a sparse file, hard links, a symlink, equal
#                            files, 40 one-line files, 200 KB of text (the
#                            one file a compressing filesystem shrinks)
#   fsimg_tool FS            the mkfs program FS needs (for a skip message)
#   fsimg_make FS IMG SRC MNT
#                            make IMG, a FS image holding SRC (MNT is an
#                            empty directory to mount on).  FS is one of
#                            xfs, btrfs (filled by the kernel, with a 12 MiB
#                            file past mkfs's first data chunk, where btrfs
#                            addresses are not image offsets), btrfs-rootdir
#                            (filled by mkfs.btrfs), erofs, erofs-lz4
#                            (compressed: only the residual tree covers the
#                            file data), squashfs, ext4.  Images are a
#                            multiple of 4 KiB.  Returns non-zero on failure.

fsimg_gen() {
	openssl enc -aes-128-ctr -pass "pass:$1" -nosalt -pbkdf2 </dev/zero \
		2>/dev/null | head -c "$2"
}

fsimg_src() {
	local src=$1 n i
	rm -rf "$src"
	mkdir -p "$src/sizes" "$src/dup/a" "$src/dup/b" "$src/links" \
		"$src/deep/x/y"
	for n in 0 1 4095 4096 4097; do
		fsimg_gen "s$n" $n >"$src/sizes/f$n"
	done
	fsimg_gen mib $((1024 * 1024)) >"$src/mib"
	fsimg_gen two $((512 * 1024 + 4096 + 17)) >"$src/deep/x/y/two-levels"
	truncate -s $((2 * 1024 * 1024)) "$src/sparse"
	fsimg_gen sp 9000 |
		dd of="$src/sparse" bs=4096 seek=100 conv=notrunc status=none
	fsimg_gen hl 10000 >"$src/links/target"
	ln "$src/links/target" "$src/links/hardlink"
	ln -s target "$src/links/symlink"
	fsimg_gen dup 20000 >"$src/dup/a/same"
	cp "$src/dup/a/same" "$src/dup/b/same"
	cp "$src/dup/a/same" "$src/dup/b/other"
	seq 1 33000 >"$src/text"
	for i in $(seq 1 40); do
		printf 'small %d\n' "$i" >"$src/deep/s$i"
	done
}

fsimg_tool() {
	case $1 in
	xfs) echo mkfs.xfs ;;
	btrfs*) echo mkfs.btrfs ;;
	erofs*) echo mkfs.erofs ;;
	squashfs) echo mksquashfs ;;
	ext4) echo mke2fs ;;
	esac
}

# _fsimg_fill IMG SRC MNT: copy SRC into the filesystem on IMG.
_fsimg_fill() {
	local rc=0
	mount -o loop "$1" "$3" || return
	cp -a "$2/." "$3/" || rc=1
	umount "$3" || rc=1
	return $rc
}

fsimg_make() {
	local fs=$1 img=$2 src=$3 mnt=$4
	rm -f "$img"
	case $fs in
	xfs)
		# 300 MiB is mkfs.xfs's minimum; the file is sparse.  4 KiB
		# sectors: XFS refuses (ENOSYS) a device whose logical block,
		# the verity block here, is larger than its sector.
		truncate -s 320M "$img" &&
			mkfs.xfs -q -f -s size=4096 "$img" && _fsimg_fill "$img" "$src" "$mnt"
		;;
	btrfs)
		truncate -s 128M "$img" &&
			mkfs.btrfs -q -f "$img" >/dev/null 2>&1 &&
			_fsimg_fill "$img" "$src" "$mnt" &&
			mount -o loop "$img" "$mnt" || return
		fsimg_gen big $((12 * 1024 * 1024)) >"$mnt/big"
		umount "$mnt"
		;;
	btrfs-rootdir)
		truncate -s 128M "$img" &&
			mkfs.btrfs -q -f --rootdir "$src" "$img" >/dev/null 2>&1
		;;
	erofs)
		mkfs.erofs "$img" "$src" >/dev/null 2>&1 &&
			truncate -s %4096 "$img"
		;;
	erofs-lz4)
		mkfs.erofs -zlz4 "$img" "$src" >/dev/null 2>&1 &&
			truncate -s %4096 "$img"
		;;
	squashfs)
		mksquashfs "$src" "$img" -quiet -noappend >/dev/null &&
			truncate -s %4096 "$img"
		;;
	ext4)
		mke2fs -q -F -t ext4 -b 4096 -d "$src" "$img" 32M >/dev/null
		;;
	*)
		echo "fsimg_make: unknown filesystem $fs" >&2
		return 1
		;;
	esac
}
