# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC1091
# shellcheck shell=sh
#
# Guest side of t-vm-extverity.sh, scenario 4: MODE=restart|panic and
# KIND=corruption|error (/ctl/mode).  KIND=corruption reads the damaged
# block of /dev/vdd; KIND=error reads a block that the underlying device
# fails (a dm "error" range under the data device).  Either must take the
# guest down; the host checks how qemu ended and what the console shows.
# Declared: what comes before the fatal read (after it, nothing may come).
#@check insmod
#@check table-has-option
#@check create
#@check intact-block-reads
#@check intact-blocks-around-reads
. /ctl/guest-lib.sh
. /ctl/params
. /ctl/mode

if ext_insmod >/tmp/insmod.out 2>&1; then
	gpass insmod
else
	gfail insmod "$(cat /tmp/insmod.out)"
	exit 1
fi
data=$D_DATA
if [ "$KIND" = error ]; then
	spb=$((BS / 512))
	s=$((DPHYS * spb))
	printf '%s\n' "0 $s linear $D_IMG 0" "$s $spb error" \
		"$((s + spb)) $((BLOCKS * spb - s - spb)) linear $D_IMG $((s + spb))" |
		dmsetup create --noudevsync --readonly evio
	dmsetup mknodes evio
	data=/dev/mapper/evio
fi
line=$(extverity table "--$MODE-on-$KIND" "$data" "$D_HASH" "$ROOT" 2>&1)
echo "table: $line"
case $line in
*" 1 ${MODE}_on_$KIND"*) gpass table-has-option ;;
*) gfail table-has-option "$line" ;;
esac
if dmsetup create --noudevsync --readonly evf --table "$line" >/tmp/c.out 2>&1; then
	gpass create
else
	gfail create "$(cat /tmp/c.out)"
	exit 1
fi
dmsetup mknodes evf
# Intact reads first: a target that went down on any read must not pass.
gcheck intact-block-reads dd if=/dev/mapper/evf of=/dev/null bs="$BS" count=1 iflag=direct
gcheck intact-blocks-around-reads sh -c "dd if=/dev/mapper/evf of=/dev/null bs=$BS skip=$((DPHYS - 1)) count=1 iflag=direct &&
	dd if=/dev/mapper/evf of=/dev/null bs=$BS skip=$((DPHYS + 1)) count=1 iflag=direct"
# Not a result: the host finds this line on the console before the report
# of block $DPHYS and the restart or panic it caused.  Through the kernel
# log, which orders it with that report; after a pause, so that tee has
# put the results above on the console first.
sync
sleep 1
echo "EVT-READING-BAD-BLOCK $DPHYS" >/dev/kmsg
dd if=/dev/mapper/evf of=/dev/null bs="$BS" skip="$DPHYS" count=1 iflag=direct
sleep 5
gfail "$MODE" "still running 5 s after reading block $DPHYS"
