#!/usr/bin/env bash
# Bytes past EOF that are not zero, in a file's last block (ext4 leaves
# whatever a writer put there; mke2fs -d writes zeros, so the image is
# patched).  fs-verity hashes the last block zero-padded, so that file's
# digest must still be fsverity's, the intact image must verify, and the
# block, whose bytes on disk are not what the file's leaf covers, must
# still be verified, as metadata (docs/format.md: the residual tree).
. "$TOPDIR/tests/userspace/common.sh"
W=$WORKDIR
MKIMAGE_NO_BIG=1 mkimg "$W/i" 4096
img=$W/t.ext4
cp "$W/i/image.ext4" "$img"
file=/big/two-levels	# 130 blocks, 17 bytes used in the last
last=129

# poke FILE OFFSET BYTE: write one byte (hex) at OFFSET.
poke() {
	printf '%b' "\\x$3" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
blk=$(debugfs -R "bmap $file $last" "$img" 2>/dev/null | tr -d ' ')
if ! [ "$blk" -gt 0 ] 2>/dev/null; then
	fail "no block $last of $file in the image (debugfs said '$blk')"
	finish
fi
poke "$img" $((blk * 4096 + 100)) 5a
poke "$img" $((blk * 4096 + 4095)) a5
"$EXTVERITY" format --salt=- "$img" "$W/h" >"$W/fmt" 2>&1 ||
	{ fail "format: $(cat "$W/fmt")"; finish; }
root=$(root_of "$W/fmt")

check_exit "junk past EOF: the intact image verifies" 0 \
	"$EXTVERITY" verify "$img" "$W/h" "$root"
"$EXTVERITY" dump --files "$W/h" | grep " $file\$" >"$W/got"
oracle "$W/i/src" sha256 4096 | grep " $file\$" >"$W/want"
if [ -s "$W/want" ] && cmp -s "$W/got" "$W/want"; then
	pass "junk past EOF: $file's digest is fsverity's"
else
	fail "junk past EOF: $file's digest: got '$(cat "$W/got")', fsverity '$(cat "$W/want")'"
fi
# Still verified: the file's byte in that block, and the junk itself.
for off in 0 100; do
	cp "$img" "$W/c"
	flip "$W/c" $((blk * 4096 + off))
	check_err "junk past EOF: a changed byte $off of the block is caught" 2 \
		"corrupted: metadata block $blk" "$EXTVERITY" verify "$W/c" "$W/h" "$root"
done
finish
