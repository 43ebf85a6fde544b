# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh disable=SC1091
# Guest half of `make demo` (run by tests/vm/init): /dev/vdb is the sample
# ext4 image, /dev/vdc its hash area, /dev/vdd a copy of the image with one
# flipped byte in /big/two-levels.  /ctl/params holds ROOT.
. /ctl/guest-lib.sh
. /ctl/params
say() { printf '\n=== %s\n' "$*"; }

ext_insmod || exit 1
say "extverity table /dev/vdb /dev/vdc <root>"
table=$(extverity table /dev/vdb /dev/vdc "$ROOT") || exit 1
echo "$table"

say "dmsetup create demo, mount it read-only, read every file"
dmsetup create --noudevsync --readonly demo --table "$table" || exit 1
dmsetup mknodes
mkdir -p /mnt/demo
mount -t ext4 -o ro,noload /dev/mapper/demo /mnt/demo || exit 1
ls /mnt/demo
n=$(find /mnt/demo -type f | wc -l)
find /mnt/demo -type f -exec cat {} + >/dev/null && echo "read all $n files: ok"
echo "dmsetup status demo: $(dmsetup status demo)"
say "extverity measure: the kernel's fs-verity digest of a file (as 'fsverity measure')"
extverity measure /mnt/demo/big/two-levels
umount /mnt/demo
dmsetup remove --noudevsync demo

say "The corrupted copy: reading /big/two-levels fails at the flipped block"
dmsetup create --noudevsync --readonly demo-bad \
	--table "$(extverity table /dev/vdd /dev/vdc "$ROOT")" || exit 1
dmsetup mknodes
mount -t ext4 -o ro,noload /dev/mapper/demo-bad /mnt/demo || exit 1
dmesg_mark
if cat /mnt/demo/big/two-levels >/dev/null; then
	echo "unexpected: the corrupted file read back without error"
else
	echo "cat /big/two-levels failed, as it must"
fi
cat /mnt/demo/deep/a/b/c/leaf >/dev/null && echo "other files still read fine"
echo "dmsetup status demo-bad: $(dmsetup status demo-bad)"
say "The kernel log names the file's inode and byte offset"
dmesg_new | grep extverity | sed 's/^\[[^]]*\] //'
say "extverity status demo-bad: the damaged file by path"
extverity status demo-bad | sed -n '/status:/p; /damaged:/,$p'
umount /mnt/demo
dmsetup remove --noudevsync demo-bad
