# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC1091,SC2154,SC2046
# shellcheck shell=sh
#
# Guest side of t-vm-corrupt.sh, boots restart-hash-error and
# panic-hash-error (MODE in /ctl/mode): a dm-error range under the hash
# device covers the first level-0 block of big/multi's tree; reading a data
# block that needs it must take the guest down under MODE_on_error.  (The
# data device's error is t-vm-extverity.sh's restart-error/panic-error.)
# Declared: what comes before the fatal read (after it, nothing may come).
#@check insmod
#@check create
#@check intact-block-reads
. /ctl/guest-lib.sh
. /ctl/params
. /ctl/mode

if ext_insmod >/tmp/insmod.out 2>&1; then
	gpass insmod
else
	gfail insmod "$(cat /tmp/insmod.out)"
	exit 1
fi
spb=8
len=$(blockdev --getsz "$IMG_c4")
hlen=$(blockdev --getsz "$HASH_c4")
s=$((IOE_HASH_BLOCK * spb))
printf '%s\n' "0 $s linear $HASH_c4 0" "$s $spb error" \
	"$((s + spb)) $((hlen - s - spb)) linear $HASH_c4 $((s + spb))" |
	dmsetup create --noudevsync --readonly lh && dmsetup mknodes lh
if ! dmsetup create --noudevsync --readonly evf \
	--table "0 $len extverity 1 $IMG_c4 /dev/mapper/lh 0 sha256 $ROOT_c4 1 ${MODE}_on_error" >/tmp/c.out 2>&1; then
	gfail create "$(cat /tmp/c.out)"
	exit 1
fi
gpass create
dmsetup mknodes evf
# Intact reads first: a target that went down on any read must not pass.
gcheck intact-block-reads dd if=/dev/mapper/evf of=/dev/null bs=4096 count=1 iflag=direct
# Not a result: the host finds it on the console before the report and
# the restart or panic (through the kernel log, which orders it with them;
# after a pause, so that tee has put the results above on the console).
sync
sleep 1
echo "EVT-READING-BAD-BLOCK $IOE_DATA_BLOCK" >/dev/kmsg
dd if=/dev/mapper/evf of=/dev/null bs=4096 skip="$IOE_DATA_BLOCK" count=1 iflag=direct
sleep 5
gfail "$MODE" "still running 5 s after reading block $IOE_DATA_BLOCK"
