#!/usr/bin/env bash
# format --fs=fiemap: images of XFS, btrfs, EROFS, squashfs and ext4 are
# read through a read-only loop mount.  For each: every digest equals
# `fsverity digest` of the files read back through the kernel, verify
# passes, file trees own image blocks (FIEMAP really used, except squashfs,
# which has no FIEMAP), a flipped byte in an owned block is reported under
# its file, and nothing stays mounted or attached.
. "$TOPDIR/tests/userspace/common.sh"
W=$WORKDIR
R=$TOPDIR/tests/userspace/evread.py
salt=00112233445566778899aabbccddeeff
uuid=01234567-89ab-4def-8123-456789abcdef
if [ "$(id -u)" -ne 0 ]; then
	skip "fiemap: needs root for loop mounts"
	finish
fi

gen() {
	openssl enc -aes-128-ctr -pass "pass:$1" -nosalt -pbkdf2 </dev/zero \
		2>/dev/null | head -c "$2"
}
src=$W/src
rm -rf "$src"
mkdir -p "$src/sizes" "$src/dup/a" "$src/dup/b" "$src/links" "$src/deep/x/y"
for n in 0 1 4095 4096 4097; do gen "s$n" $n >"$src/sizes/f$n"; done
gen mib $((1024 * 1024)) >"$src/mib"
gen two $((512 * 1024 + 4096 + 17)) >"$src/deep/x/y/two-levels"
truncate -s $((2 * 1024 * 1024)) "$src/sparse"
gen sp 9000 | dd of="$src/sparse" bs=4096 seek=100 conv=notrunc status=none
gen hl 10000 >"$src/links/target"
ln "$src/links/target" "$src/links/hardlink"
ln -s target "$src/links/symlink"
gen dup 20000 >"$src/dup/a/same"
cp "$src/dup/a/same" "$src/dup/b/same"
cp "$src/dup/a/same" "$src/dup/b/other"
for i in $(seq 1 40); do printf 'small %d\n' "$i" >"$src/deep/s$i"; done

mnt=$W/mnt
mkdir -p "$mnt"
# Filesystems whose tool is missing are skipped (scripts/install-deps.sh
# installs xfsprogs, btrfs-progs, erofs-utils and squashfs-tools).
have() { command -v "$1" >/dev/null 2>&1; }

# copy_in IMAGE: fill a fresh filesystem through a loop mount.
copy_in() {
	mount -o loop "$1" "$mnt" && cp -a "$src/." "$mnt/" && umount "$mnt"
}

imgs=()
if have mkfs.xfs; then
	truncate -s 320M "$W/xfs.img"
	mkfs.xfs -q -f "$W/xfs.img" && copy_in "$W/xfs.img" &&
		imgs+=(xfs)
else
	skip "xfs: mkfs.xfs missing"
fi
if have mkfs.btrfs; then
	truncate -s 128M "$W/btrfs.img" "$W/btrfs-rootdir.img"
	mkfs.btrfs -q -f --rootdir "$src" "$W/btrfs-rootdir.img" \
		>/dev/null 2>&1 && imgs+=(btrfs-rootdir)
	# Written by the kernel, with data past mkfs's first data chunk,
	# where btrfs addresses are not image offsets (chunk tree mapping).
	mkfs.btrfs -q -f "$W/btrfs.img" >/dev/null 2>&1 &&
		copy_in "$W/btrfs.img" && mount "$W/btrfs.img" "$mnt" &&
		gen big $((12 * 1024 * 1024)) >"$mnt/big" && umount "$mnt" &&
		imgs+=(btrfs)
else
	skip "btrfs: mkfs.btrfs missing"
fi
if have mkfs.erofs; then
	mkfs.erofs "$W/erofs.img" "$src" >/dev/null 2>&1 &&
		truncate -s %4096 "$W/erofs.img" && imgs+=(erofs)
else
	skip "erofs: mkfs.erofs missing"
fi
if have mksquashfs; then
	mksquashfs "$src" "$W/squashfs.img" -quiet -noappend >/dev/null &&
		truncate -s %4096 "$W/squashfs.img" && imgs+=(squashfs)
else
	skip "squashfs: mksquashfs missing"
fi
mke2fs -q -F -t ext4 -b 4096 -d "$src" "$W/ext4.img" 32M >/dev/null &&
	imgs+=(ext4)

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
