#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# corrupt-image.sh OUTDIR BLOCKSIZE DIGESTS_PER_BLOCK [journal|nojournal]
#
# A small ext4 image for the corruption matrix (t-vm-corrupt.sh): small, so
# that the whole device can be read back after every damage, yet with every
# file size class of the tree geometry (DIGESTS_PER_BLOCK = BLOCKSIZE /
# digest size, the leaves of one level-0 hash block):
#   sizes/empty      0 bytes (no tree, no block)
#   sizes/tiny       < 1 block
#   sizes/one        exactly 1 block (root = the block's digest)
#   sizes/few        a few blocks (packed top only)
#   sizes/l0full     exactly DIGESTS_PER_BLOCK blocks (a full top)
#   sizes/l0over     one block more (two level-0 blocks + top)
#   big/multi        a multi-level tree: 3 levels when that is small (1 KiB
#                    blocks, sha512), else 2 (4 KiB, sha256)
#   dup/a, dup/b     identical content (one shared tree)
#   sparse/holes     a hole between two written ranges
#   dir/             300 symlinks (a multi-block, hashed directory)
# plus a 1024-block journal (unless "nojournal": it would be half of a
# 4 KiB image, and every position reads the whole image) and free space.
# Content is seeded: the same image every run.  Outputs OUTDIR/src and
# OUTDIR/image.ext4.
set -eu
out=${1:?usage: corrupt-image.sh OUTDIR BLOCKSIZE DIGESTS_PER_BLOCK}
bs=${2:?}
per=${3:?}
src=$out/src
rm -rf "$out"
mkdir -p "$src/sizes" "$src/big" "$src/dup" "$src/sparse" "$src/dir"

gen() {
	openssl enc -aes-128-ctr -pass "pass:$1" -nosalt -pbkdf2 </dev/zero \
		2>/dev/null | head -c "$2"
}
: >"$src/sizes/empty"
gen tiny 100 >"$src/sizes/tiny"
gen one "$bs" >"$src/sizes/one"
gen few $((3 * bs + 500)) >"$src/sizes/few"
gen l0full $((per * bs)) >"$src/sizes/l0full"
gen l0over $((per * bs + 1)) >"$src/sizes/l0over"
# Blocks for a tree of 3 levels, or of 2 where that would make the image
# too large to read back after every damage.
multi=$((per * per + per + 5))
[ "$multi" -le 1000 ] || multi=$((3 * per + 7))
gen multi $((multi * bs - 7)) >"$src/big/multi"
gen dup $((5 * bs)) >"$src/dup/a"
cp "$src/dup/a" "$src/dup/b"
f=$src/sparse/holes
truncate -s $((40 * bs)) "$f"
gen sp1 $((2 * bs)) | dd of="$f" bs="$bs" conv=notrunc status=none
gen sp2 $((3 * bs)) | dd of="$f" bs="$bs" seek=30 conv=notrunc status=none
for i in $(seq 1 300); do
	ln -s "target-of-link-number-$i" "$src/dir/link-$i"
done

kb=$(du -sk --apparent-size "$src" | cut -f1)
size_kb=$(((kb * 11 / 10 + 2048) / (bs / 1024) * (bs / 1024)))
if [ "${4:-}" = nojournal ]; then
	journal=(-O ^has_journal)
else
	journal=(-J size=$((1024 * bs / 1048576)))
	# mke2fs makes no journal below 2048 blocks.
	[ "$size_kb" -ge $((2304 * bs / 1024)) ] || size_kb=$((2304 * bs / 1024))
fi
mke2fs -q -F -t ext4 -b "$bs" -N 512 "${journal[@]}" -E root_owner=0:0 \
	-d "$src" "$out/image.ext4" "${size_kb}k"
