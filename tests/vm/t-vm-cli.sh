#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `extverity open`, `status` and `close` in a qemu guest (see
# tests/vm/README.md): on image files (loop devices) found on an ext4 disk
# the guest mounts, on block devices, with the hash area appended, on LVM
# logical volumes when lvm2 is installed, and every command's bad input
# with its documented exit code.  One boot (scenarios/cli.sh).
# shellcheck disable=SC1091
. "$TOPDIR/tests/lib.sh"
. "$TOPDIR/tests/vm/vm-lib.sh"

why=$(vm_prereqs)
[ -z "$why" ] && [ ! -f "$MODULE" ] && why="kernel module $MODULE not built (make module)"
[ -z "$why" ] && [ ! -x "$EXTVERITY_RELEASE" ] && why="tool $EXTVERITY_RELEASE not built (make tools)"
if [ -n "$why" ]; then
	fail "extverity CLI VM scenario: $why"
	finish
fi

EV=$EXTVERITY_RELEASE
BS=4096
w=$WORKDIR/cli
rm -rf "$w"
mkdir -p "$w/ctl" "$w/files"
die() { fail "setup: $*"; finish; }

MKIMAGE_NO_BIG=1 "$TOPDIR/tests/vm/fixture.sh" "$w/fx" $BS >"$w/fixture.log" 2>&1 ||
	die "fixture: $(tail -n 3 "$w/fixture.log")"
IMG=$w/fx/image.ext4
[ -f "$IMG" ] || die "no $IMG"
SIZE=$(stat -c %s "$IMG")

"$EV" format "$IMG" "$w/files/image.hash" >"$w/format.out" 2>&1 ||
	die "extverity format: $(cat "$w/format.out")"
ROOT=$(sed -n 's/^Root digest:[[:space:]]*//p' "$w/format.out")
# The hash area's UUID without its dashes: open's device-mapper UUID.
HUUID=$(sed -n 's/^UUID:[[:space:]]*//p' "$w/format.out" | tr -d -)
[ ${#HUUID} = 32 ] || die "no UUID in: $(cat "$w/format.out")"
cp "$IMG" "$w/files/image.ext4"
cp "$IMG" "$w/files/image.app"
"$EV" format --hash-offset="$SIZE" "$w/files/image.app" "$w/files/image.app" \
	>"$w/format-app.out" 2>&1 || die "format --hash-offset: $(cat "$w/format-app.out")"
AROOT=$(sed -n 's/^Root digest:[[:space:]]*//p' "$w/format-app.out")
# A copy with one byte inverted in the first block of the largest file
# whose first block is allocated.
BIGBLK=
while read -r _ f; do
	BIGBLK=$(debugfs -R "bmap \"/$f\" 0" "$IMG" 2>/dev/null)
	[[ "$BIGBLK" =~ ^[1-9][0-9]*$ ]] && break
	BIGBLK=
done < <(cd "$w/fx/src" && find . -type f -size +8k -printf '%s %P\n' | sort -rn | head -n 20)
[ -n "$BIGBLK" ] || die "no file with an allocated first block"
# Block 32 of that file: unreadable under verify's device (dm-error), so
# that the damage 32 blocks before it is checked and reported first.
ERRBLK=$(debugfs -R "bmap \"/$f\" 32" "$IMG" 2>/dev/null)
[[ "$ERRBLK" =~ ^[1-9][0-9]*$ ]] || die "block 32 of /$f is not allocated"
cp "$IMG" "$w/files/image.bad"
b=$(od -An -tu1 -j $((BIGBLK * BS + 10)) -N1 "$IMG" | tr -d ' ')
printf '%b' "\\0$(printf %o $((b ^ 0xff)))" |
	dd of="$w/files/image.bad" bs=1 seek=$((BIGBLK * BS + 10)) conv=notrunc status=none
(cd "$w/fx/src" && find . -type f ! -name '*\\*' ! -name "*"$'\n'"*" -print0 |
	LC_ALL=C sort -z | xargs -0 sha256sum) >"$w/ctl/src.sha256"

# The disk with the image files: an ext4 made from the directory.
mib=$(( $(du -sm "$w/files" | cut -f1) * 5 / 4 + 16 ))
mke2fs -q -F -t ext4 -d "$w/files" "$w/files.ext4" "${mib}M" ||
	die "mke2fs -d of the image files"
# Two empty disks for the LVM volume group (data and hash LVs).
lvmib=$(( (SIZE >> 20) + 16 ))
truncate -s "${lvmib}M" "$w/pv1" "$w/pv2"
cp "$w/files/image.app" "$w/app.raw"

HSIZE=$(stat -c %s "$w/files/image.hash")
cat >"$w/ctl/params" <<EOF2
D_FILES=/dev/vdb
D_IMG=/dev/vdc
D_HASH=/dev/vdd
D_APP=/dev/vde
D_PV1=/dev/vdf
D_PV2=/dev/vdg
BS=$BS
SIZE=$SIZE
HSIZE=$HSIZE
BIGBLK=$BIGBLK
ERRBLK=$ERRBLK
ROOT=$ROOT
HUUID=$HUUID
AROOT=$AROOT
LEN=$((SIZE / 512))
IMAGE_SHA256=$(sha256sum <"$IMG" | cut -d' ' -f1)
EOF2
cp "$w/ctl/params" "$w/params.txt"

# LVM: the guest runs the lvm-* checks when tests/vm/mkinitramfs.sh put
# lvm in the initramfs (VM_EXTRA_BINS, when lvm2 is installed); declared
# here on that condition, read from the initramfs run_vm boots (built now,
# cached for run_vm), or reported as a skip.
initrd=$("$TOPDIR/tests/vm/mkinitramfs.sh" "$TOPDIR/build/vm/initramfs-$KVER.cpio.gz") ||
	die "initramfs build failed"
if gzip -dc "$initrd" | cpio -it --quiet 2>/dev/null | grep -Eqx '(\./)?sbin/lvm'; then
	printf '%s\n' lvm-setup lvm-open lvm-status lvm-mount lvm-files-match \
		lvm-close lvm-lvs-remain lvm-no-loop lvm-no-dm >"$w/ctl/checks"
else
	skip "cli/lvm: no lvm in the initramfs (apt-get install lvm2, or VM_EXTRA_BINS)"
fi

run_vm --name=cli --timeout=300 --ctl="$w/ctl" \
	"$TOPDIR/tests/vm/scenarios/cli.sh" "$w/files.ext4:ro" "$IMG:ro" \
	"$w/files/image.hash:ro" "$w/app.raw:ro" "$w/pv1" "$w/pv2"
vm_report cli
finish
