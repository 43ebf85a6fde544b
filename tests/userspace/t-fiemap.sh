#!/usr/bin/env bash
# format --fs=fiemap: images of XFS, btrfs, EROFS (plain and lz4),
# squashfs and ext4 (tests/lib/fsimages.sh) are read through a read-only
# loop mount.  For each: every digest equals
# `fsverity digest` of the files read back through the kernel, verify
# passes, file trees own image blocks (FIEMAP really used, except squashfs,
# which has no FIEMAP; a compressed file is left to the residual tree),
# a flipped byte in an owned block is reported under
# its file, and nothing stays mounted or attached, also through the
# LOOP_SET_FD fallback of kernels before 5.8.  Filesystems whose
# sectors or blocks are smaller than a data block are refused.
. "$TOPDIR/tests/userspace/common.sh"
W=$WORKDIR
R=$TOPDIR/tests/userspace/evread.py
salt=00112233445566778899aabbccddeeff
uuid=01234567-89ab-4def-8123-456789abcdef
if [ "$(id -u)" -ne 0 ]; then
	skip "fiemap: needs root for loop mounts"
	finish
fi

. "$TOPDIR/tests/lib/fsimages.sh"
src=$W/src
fsimg_src "$src"
mnt=$W/mnt
mkdir -p "$mnt"
# Filesystems whose tool is missing are skipped (scripts/install-deps.sh
# installs xfsprogs, btrfs-progs, erofs-utils and squashfs-tools).
have() { command -v "$1" >/dev/null 2>&1; }
imgs=()
for fs in xfs btrfs-rootdir btrfs erofs erofs-lz4 squashfs ext4; do
	if ! have "$(fsimg_tool $fs)"; then
		skip "$fs: $(fsimg_tool $fs) missing"
	elif fsimg_make $fs "$W/$fs.img" "$src" "$mnt"; then
		imgs+=("$fs")
	else
		fail "$fs: could not make the image"
	fi
done

# json_get FILE KEY...: values from format's --json output, one a line.
json_get() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
for k in sys.argv[2:]:
    print(d[k])' "$@"
}

# released IMAGE: no loop device left on it, no mount point left over.
released() {
	local i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		if [ -z "$(losetup -j "$1")" ] &&
			! grep -q ' /tmp/extverity-' /proc/self/mountinfo; then
			return 0
		fi
		sleep 0.2
	done
	return 1
}

flipat() {
	python3 -c 'import sys
f = open(sys.argv[1], "r+b"); o = int(sys.argv[2]); f.seek(o)
b = f.read(1)[0]; f.seek(o); f.write(bytes([b ^ 0xff]))' "$1" "$2"
}

for fs in "${imgs[@]}"; do
	img=$W/$fs.img
	if ! "$EXTVERITY" format --fs=fiemap --json --salt=$salt --uuid=$uuid \
		"$img" "$W/$fs.hash" >"$W/$fs.json" 2>"$W/err"; then
		fail "$fs: format --fs=fiemap failed: $(cat "$W/err")"
		continue
	fi
	check "$fs: nothing left mounted or attached" released "$img"
	read -r root data res zero < <(json_get "$W/$fs.json" root_digest \
		data_blocks residual_blocks zero_blocks | paste -sd' ')
	owned=$((data - res - zero))
	echo "  $fs: $owned of $data blocks owned by file trees" \
		"(zero $zero)" >&2
	mount -o ro,loop "$img" "$mnt"
	oracle "$mnt" sha256 4096 $salt >"$W/want"
	find "$mnt" -type f -printf '%i /%P\n' >"$W/inodes"
	umount "$mnt"
	"$EXTVERITY" dump --files "$W/$fs.hash" >"$W/got"
	if [ -s "$W/want" ] && cmp -s "$W/want" "$W/got"; then
		pass "$fs: dump --files equals fsverity digest ($(wc -l <"$W/want") files)"
	else
		fail "$fs: digests differ: $(diff "$W/want" "$W/got" | head -4)"
	fi
	check_exit "$fs: verify" 0 "$EXTVERITY" verify "$img" "$W/$fs.hash" "$root"
	if [ "$fs" = squashfs ]; then
		check "squashfs (no FIEMAP): all residual" test "$owned" -eq 0
		continue
	fi
	check "$fs: file trees own $owned of $data blocks" test "$owned" -gt 0
	[ "$fs" = btrfs ] && check "btrfs: all 3072 blocks of /big owned" \
		test "$owned" -ge 3072
	# The first block of the first file extent: flip its first byte.
	python3 "$R" "$W/$fs.hash" "$root" >"$W/ext"
	read -r blk ino < <(awk '$3 != "zero" && $3 != 0 { print $1, $5; exit }' \
		"$W/ext")
	if [ "$fs" = erofs-lz4 ]; then
		# Its compressed clusters hold other bytes than the file's
		# blocks: the residual tree covers those (the digest was
		# checked above); only clusters stored raw can be owned.
		tino=$(awk '$2 == "/text" { print $1 }' "$W/inodes")
		town=$(awk -v i="$tino" '$3 != "zero" && $3 != 0 && $5 == i \
			{ n += $2 } END { print n + 0 }' "$W/ext")
		tblocks=$((($(stat -c %s "$src/text") + 4095) / 4096))
		check "erofs-lz4: compressed /text owns $town of $tblocks blocks" \
			test -n "$tino" -a "$town" -lt "$tblocks"
	fi
	path=$(awk -v i="$ino" '$1 == i { print $2; exit }' "$W/inodes")
	cp --sparse=always "$img" "$W/bad.img"
	flipat "$W/bad.img" $((blk * 4096))
	check_err "$fs: flipped byte in $path reported under its name" 2 \
		"corrupted: file $path \(inode $ino\)" \
		"$EXTVERITY" verify "$W/bad.img" "$W/$fs.hash" "$root"
	rm -f "$W/bad.img"
done

# --fs=auto: fiemap for XFS (same root as --fs=fiemap), libext2fs for ext4.
if [ -f "$W/xfs.json" ]; then
	"$EXTVERITY" format --json --salt=$salt --uuid=$uuid "$W/xfs.img" \
		"$W/auto.hash" >"$W/auto.json" 2>"$W/err"
	check "xfs: --fs=auto picks fiemap" test \
		"$(json_get "$W/auto.json" root_digest 2>/dev/null)" = \
		"$(json_get "$W/xfs.json" root_digest)"
fi
if [ -f "$W/ext4.json" ]; then
	"$EXTVERITY" format --json --salt=$salt --uuid=$uuid "$W/ext4.img" \
		"$W/e2.hash" >"$W/e2.json" 2>"$W/err"
	e2root=$(json_get "$W/e2.json" root_digest)
	fmroot=$(json_get "$W/ext4.json" root_digest)
	python3 "$R" "$W/e2.hash" "$e2root" | awk '$3 != "zero" && $3 != 0' \
		>"$W/e2.ext"
	python3 "$R" "$W/ext4.hash" "$fmroot" | awk '$3 != "zero" && $3 != 0' \
		>"$W/fm.ext"
	if [ -s "$W/e2.ext" ] && cmp -s "$W/e2.ext" "$W/fm.ext"; then
		pass "ext4: fiemap gives files the same extents as libext2fs" \
			"($(wc -l <"$W/fm.ext"))"
	else
		fail "ext4: file extents differ: $(diff "$W/e2.ext" "$W/fm.ext" | head -4)"
	fi
fi

# Appended hash area: only the first BYTES are mounted (loop sizelimit).
if [ -f "$W/erofs.json" ]; then
	cp "$W/erofs.img" "$W/app.img"
	size=$(stat -c %s "$W/app.img")
	"$EXTVERITY" format --fs=fiemap --salt=- --hash-offset="$size" \
		"$W/app.img" "$W/app.img" >"$W/f" 2>"$W/err"
	check_exit "erofs: appended hash area verifies" 0 "$EXTVERITY" verify \
		--hash-offset="$size" "$W/app.img" "$W/app.img" "$(root_of "$W/f")"
	check "erofs: appended: nothing left attached" released "$W/app.img"
fi

# A kernel without LOOP_CONFIGURE (before 5.8, faked by an LD_PRELOAD
# shim): the same device through LOOP_SET_FD + LOOP_SET_STATUS64,
# read-only (1), autoclear (4) and limited to the data image.
if [ -f "$W/erofs.json" ] && have cc &&
	cc -shared -fPIC -o "$W/noconf.so" \
		"$TOPDIR/tests/userspace/no-loop-configure.c" -ldl; then
	cp "$W/erofs.img" "$W/old.img"
	size=$(stat -c %s "$W/old.img")
	if LD_PRELOAD=$W/noconf.so \
		ASAN_OPTIONS=$ASAN_OPTIONS:verify_asan_link_order=0 \
		"$EXTVERITY" format --fs=fiemap --salt=$salt --uuid=$uuid \
		--hash-offset="$size" "$W/old.img" "$W/old.img" \
		>"$W/f" 2>"$W/err"; then
		pass "no LOOP_CONFIGURE: format --fs=fiemap falls back"
	else
		fail "no LOOP_CONFIGURE: format failed: $(cat "$W/err")"
	fi
	check "no LOOP_CONFIGURE: read-only, autoclear, $size bytes" \
		grep -qx "shim: flags 5 sizelimit $size" "$W/err"
	check_exit "no LOOP_CONFIGURE: verify" 0 "$EXTVERITY" verify \
		--hash-offset="$size" "$W/old.img" "$W/old.img" "$(root_of "$W/f")"
	check "no LOOP_CONFIGURE: same digests" cmp -s \
		<("$EXTVERITY" dump --files "$W/erofs.hash") \
		<("$EXTVERITY" dump --files --hash-offset="$size" "$W/old.img")
	check "no LOOP_CONFIGURE: nothing left attached" released "$W/old.img"
fi

# I/O units smaller than a data block: the filesystem would refuse the
# target's 4 KiB logical blocks, so format refuses it, naming the fix.
if have mkfs.xfs; then
	truncate -s 320M "$W/xfs512.img"
	mkfs.xfs -q -f -s size=512 "$W/xfs512.img"
	check_err "xfs with 512-byte sectors refused, naming -s size=4096" 1 \
		"XFS sector size 512 is smaller than the data block size 4096.*mkfs.xfs -s size=4096" \
		"$EXTVERITY" format --fs=fiemap "$W/xfs512.img" "$W/xfs512.hash"
	check "xfs 512: no hash file" test ! -e "$W/xfs512.hash"
	check "xfs 512: nothing left attached" released "$W/xfs512.img"
	rm -f "$W/xfs512.img"
fi
mke2fs -q -F -t ext4 -b 1024 -d "$src" "$W/ext4k1.img" 16M >/dev/null
check_err "ext4 with 1 KiB blocks refused by --fs=fiemap" 1 \
	"filesystem block size 1024 is smaller than the data block size 4096.*--data-block-size=1024" \
	"$EXTVERITY" format --fs=fiemap "$W/ext4k1.img" "$W/ext4k1.hash"
check "ext4 1 KiB: no hash file" test ! -e "$W/ext4k1.hash"

# Without privilege: a clear error naming --fs=raw, nothing written.
if [ -f "$W/erofs.img" ] && have setpriv; then
	chmod 0755 "$W"
	chmod 0644 "$W/erofs.img"
	check_err "unprivileged --fs=fiemap names --fs=raw" 4 \
		"needs root.*--fs=raw" setpriv --reuid=65534 --regid=65534 \
		--clear-groups "$EXTVERITY" format --fs=fiemap "$W/erofs.img" \
		"$W/np.hash"
	check "unprivileged: no hash file" test ! -e "$W/np.hash"
fi
finish
