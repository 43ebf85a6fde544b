#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# fixture.sh OUTDIR [BLOCKSIZE]: OUTDIR/src and OUTDIR/image.ext4 for the VM
# tests.  Uses the project's generator tests/lib/mkimage.sh when it exists;
# otherwise builds a smaller tree of its own with what the scenarios need:
# a file with two tree levels (> 128 blocks at 4 KiB), files of a few
# blocks, one-block, empty and sparse files, hard links, duplicates, a
# symlink and nested directories.
set -eu
TOPDIR=$(cd "$(dirname "$0")/../.." && pwd)
out=$1
bs=${2:-4096}
if [ -x "$TOPDIR/tests/lib/mkimage.sh" ]; then
	exec "$TOPDIR/tests/lib/mkimage.sh" "$out" "$bs"
fi
rm -rf "$out"
mkdir -p "$out/src/usr/bin" "$out/src/etc/conf.d" "$out/src/var/log" \
	"$out/src/data/deep/er/still"
s=$out/src
# Deterministic pseudo-random content: the same fixture every run.
prng() { openssl enc -aes-128-ctr -nosalt -pass "pass:$1" -pbkdf2 </dev/zero 2>/dev/null | head -c "$2"; }
prng big 1600000 >"$s/data/big.bin"
prng mid 40000 >"$s/usr/bin/tool"
prng mid2 23000 >"$s/usr/bin/other"
prng one 4096 >"$s/data/oneblock"
prng tail 5000 >"$s/data/deep/er/still/tail"
for i in $(seq 1 40); do
	prng "small$i" $((i * 700)) >"$s/etc/conf.d/file$i.conf"
done
seq 1 30000 >"$s/var/log/messages"
: >"$s/etc/empty"
cp "$s/usr/bin/tool" "$s/usr/bin/tool.copy"
ln "$s/usr/bin/other" "$s/usr/bin/other.link"
ln -s ../data/big.bin "$s/etc/big.link"
truncate -s 1M "$s/data/sparse"
printf 'middle' | dd of="$s/data/sparse" bs=1 seek=600000 conv=notrunc status=none
mke2fs -q -F -t ext4 -b "$bs" -d "$s" "$out/image.ext4" 16M >/dev/null
