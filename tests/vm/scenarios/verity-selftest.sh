# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC1091
# shellcheck shell=sh
# Guest side of t-vm-harness.sh: proves the harness with the in-kernel
# dm-verity.  /dev/vdb is an ext4 image, /dev/vdc its veritysetup hash
# device; /ctl/params holds ROOT, DATA_BLOCKS, IMAGE_SHA256; /ctl/src.sha256
# the sha256sum manifest of the image's source tree.
#@check verity-create
#@check verity-node
#@check verity-device-equals-image
#@check verity-mount
#@check verity-files-match
#@check verity-status-V
#@check verity-remove
#@check verity-bad-create
#@check verity-bad-read-fails
#@check verity-bad-logged
. /ctl/guest-lib.sh
. /ctl/params

table="0 $((DATA_BLOCKS * 8)) verity 1 /dev/vdb /dev/vdc 4096 4096 $DATA_BLOCKS 1 sha256 $ROOT -"
gcheck verity-create dmsetup create --noudevsync --readonly vroot --table "$table"
dmsetup mknodes
gcheck verity-node test -b /dev/mapper/vroot
sum=$(sha256sum </dev/mapper/vroot | cut -d' ' -f1)
if [ "$sum" = "$IMAGE_SHA256" ]; then gpass verity-device-equals-image
else gfail verity-device-equals-image "sha256 $sum, image $IMAGE_SHA256"; fi
mkdir -p /mnt/v
gcheck verity-mount mount -t ext4 -o ro,noload /dev/mapper/vroot /mnt/v
gcheck verity-files-match sh -c 'cd /mnt/v && sha256sum -c -s /ctl/src.sha256'
st=$(dmsetup status vroot)
case $st in
*" V"*) gpass verity-status-V ;;
*) gfail verity-status-V "status: $st" ;;
esac
umount /mnt/v
gcheck verity-remove dmsetup remove --noudevsync vroot
# A corrupted data block (/dev/vdd = the image with one flipped byte): the
# read must fail with EIO and the kernel must log it.
dmesg_mark
gcheck verity-bad-create dmsetup create --noudevsync --readonly vbad --table \
	"0 $((DATA_BLOCKS * 8)) verity 1 /dev/vdd /dev/vdc 4096 4096 $DATA_BLOCKS 1 sha256 $ROOT -"
dmsetup mknodes
gcheck_fails verity-bad-read-fails dd if=/dev/mapper/vbad of=/dev/null bs=1M
if dmesg_new | grep -q 'verity.*data block .* is corrupted'; then gpass verity-bad-logged
else gfail verity-bad-logged "no corruption message in dmesg"; fi
dmsetup remove --noudevsync vbad
