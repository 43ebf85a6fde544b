# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC1091,SC2154,SC2046
# shellcheck shell=sh
#
# Guest side of t-vm-corrupt.sh, boot odirect.  O_DIRECT reads land in the
# reader's own pages, which another thread of /ctl/corrupt-io keeps
# overwriting while the read is in flight, so the block the target hashes
# is often not what the disk returned.  The target must read the block
# again into its own buffer before calling it corrupt: no read may fail, no
# corruption may be reported (no message, no uevent, status V, corrupt
# counter 0).  The data disk's read counter shows those re-reads happened
# (else the race was never hit and the test proved nothing).  Then the same
# tampering over a really damaged block: every read fails, status C.
# Last, a read of 64 blocks (256 KiB, over split_bytes) is verified in two
# halves, on two workers: the status counts the split, a damaged block on
# either side of it fails the read, and the reads beside it return the
# reference.
#@check insmod
#@check create
#@check intact-16-no-read-fails
#@check intact-16-quiet-reads-match
#@check intact-16-race-hit
#@check intact-1-no-read-fails
#@check intact-1-quiet-reads-match
#@check intact-1-race-hit
#@check intact-status-V
#@check intact-no-message
#@check intact-no-uevent
#@check create-damaged
#@check damaged-every-read-fails
#@check damaged-status-C
#@check damaged-uevent
#@check split-32-read-fails
#@check split-32-counted
#@check split-32-reads-beside
#@check split-31-read-fails
#@check split-31-counted
#@check split-31-reads-beside
. /ctl/guest-lib.sh
. /ctl/params

CIO=/ctl/corrupt-io
if ext_insmod >/tmp/insmod.out 2>&1; then
	gpass insmod
else
	gfail insmod "$(cat /tmp/insmod.out)"
	exit 1
fi
spb=8
len=$(blockdev --getsz "$IMG_c4")
# The first data block of big/multi, and its damaged copy in the patch disk.
set -- $(grep ' data:multi ' /ctl/c4.pos | head -n 1)
first=$4 pidx=$5

# sectors DISK: sectors read from DISK so far (/sys/block/X/stat field 3).
sectors() {
	awk '{print $3}' "/sys/block/${1#/dev/}/stat"
}

# tamper NAME DEV COUNT SECONDS: prints the T line, returns its fields in $T.
tamper() {
	"$CIO" tamper "$2" "$REF_c4" 4096 "$first" "$3" "$4" >/tmp/t.out 2>&1
	T=$(grep '^T ' /tmp/t.out)
	echo "$1 (reads of $3 blocks, $4 s): ${T:-$(cat /tmp/t.out)}"
}
field() {
	echo "$T" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

if ! dmsetup create --noudevsync --readonly ev \
	--table "0 $len extverity 1 $IMG_c4 $HASH_c4 0 sha256 $ROOT_c4"; then
	gfail create "cannot create ev"
	exit 1
fi
gpass create
dmsetup mknodes ev
uevent_start /tmp/ue
dmesg_mark
for count in 16 1; do
	s0=$(sectors "$IMG_c4")
	secs=$TAMPER_SECONDS
	[ "$count" = 1 ] && secs=$((TAMPER_SECONDS / 2))
	tamper "intact-$count" /dev/mapper/ev "$count" "$secs"
	reads=$(field reads)
	extra=$(($(sectors "$IMG_c4") - s0 - ${reads:-0} * count * spb))
	echo "intact-$count: $((extra / spb)) blocks read again by the target"
	if [ -z "$T" ] || [ "$(field eio)" != 0 ] || [ "$(field other)" != 0 ]; then
		gfail "intact-$count-no-read-fails" "${T:-$(cat /tmp/t.out)}"
	else
		gpass "intact-$count-no-read-fails"
	fi
	if [ -n "$T" ] && [ "$(field checked)" -gt 0 ] && [ "$(field wrong)" = 0 ]; then
		gpass "intact-$count-quiet-reads-match"
	else
		gfail "intact-$count-quiet-reads-match" "$T"
	fi
	if [ "$extra" -gt 0 ]; then
		gpass "intact-$count-race-hit"
	else
		gfail "intact-$count-race-hit" "no block was read again ($extra sectors): the tampering never changed a block under the hash"
	fi
done
sleep 1
uevent_stop
set -- $(dmsetup status ev)
echo "status ev: $*"
if [ "$4" = V ] && [ "$6" = 0 ]; then
	gpass intact-status-V
else
	gfail intact-status-V "$*"
fi
if dmesg_new | grep -q 'extverity.*corrupted'; then
	gfail intact-no-message "$(dmesg_new | grep 'extverity' | head -n 2)"
else
	gpass intact-no-message
fi
if grep -q DM_EXTVERITY /tmp/ue; then
	gfail intact-no-uevent "$(grep DM_EXTVERITY /tmp/ue | head -n 3 | tr '\n' ' ')"
else
	gpass intact-no-uevent
fi
dmsetup remove ev

# Genuine corruption under the same tampering: block FIRST is damaged.
s=$((first * spb))
total=$(blockdev --getsz "$IMG_c4")
printf '%s\n' "0 $s linear $IMG_c4 0" "$s $spb linear $PATCH_c4 $((pidx * spb))" \
	"$((s + spb)) $((total - s - spb)) linear $IMG_c4 $((s + spb))" |
	dmsetup create --noudevsync --readonly cdmg && dmsetup mknodes cdmg
if ! dmsetup create --noudevsync --readonly evd \
	--table "0 $len extverity 1 /dev/mapper/cdmg $HASH_c4 0 sha256 $ROOT_c4"; then
	gfail create-damaged "cannot create evd"
	exit 1
fi
gpass create-damaged
dmsetup mknodes evd
uevent_start /tmp/ue
tamper damaged /dev/mapper/evd 16 3
sleep 1
uevent_stop
if [ -n "$T" ] && [ "$(field reads)" -gt 0 ] && [ "$(field eio)" = "$(field reads)" ]; then
	gpass damaged-every-read-fails
else
	gfail damaged-every-read-fails "${T:-$(cat /tmp/t.out)}"
fi
set -- $(dmsetup status evd)
echo "status evd: $*"
if [ "$4" = C ] && [ "$6" -gt 0 ]; then
	gpass damaged-status-C
else
	gfail damaged-status-C "$*"
fi
if grep -q "DM_EXTVERITY_ERR_BLOCK_NR=$first\$" /tmp/ue; then
	gpass damaged-uevent
else
	gfail damaged-uevent "no uevent for block $first"
fi
dmsetup remove evd
dmsetup remove cdmg

# A read of 64 blocks of big/multi (391 blocks in c4) from FIRST, whose
# block FIRST + AT holds the damaged copy of block FIRST: 32 is the first
# block the second worker verifies, 31 the last the first one does.  The
# read of 64 blocks from FIRST + AT + 1 (still in big/multi, so split too)
# and the read of every block before FIRST + AT then return what REF_c4
# holds there.
# readn DEV BLOCK N: one O_DIRECT read of N blocks from BLOCK, into /tmp/rd.
readn() {
	dd if="$1" of=/tmp/rd bs=$(($3 * 4096)) count=1 skip=$(($2 * 4096)) \
		iflag=skip_bytes,direct 2>/tmp/dd.err
}
# reads_as_ref BLOCK N: one such read of evs returns what REF_c4 holds.
reads_as_ref() {
	readn /dev/mapper/evs "$1" "$2" &&
		dd if="$REF_c4" of=/tmp/ref bs=$(($2 * 4096)) count=1 skip=$(($1 * 4096)) \
			iflag=skip_bytes 2>/dev/null &&
		{ cmp /tmp/rd /tmp/ref >>/tmp/dd.err 2>&1 || return 1; }
}
for at in 32 31; do
	s=$(((first + at) * spb))
	printf '%s\n' "0 $s linear $IMG_c4 0" "$s $spb linear $PATCH_c4 $((pidx * spb))" \
		"$((s + spb)) $((total - s - spb)) linear $IMG_c4 $((s + spb))" |
		dmsetup create --noudevsync --readonly csplit && dmsetup mknodes csplit
	dmsetup create --noudevsync --readonly evs \
		--table "0 $len extverity 1 /dev/mapper/csplit $HASH_c4 0 sha256 $ROOT_c4" &&
		dmsetup mknodes evs
	if readn /dev/mapper/evs "$first" 64; then
		gfail "split-$at-read-fails" "64 blocks from $first, block $((first + at)) damaged: read"
	elif grep -q 'Input/output error' /tmp/dd.err; then
		gpass "split-$at-read-fails"
	else
		gfail "split-$at-read-fails" "$(cat /tmp/dd.err)"
	fi
	# That read, the first of evs, is one bio of 256 KiB here (on 6.1, 6.12
	# and 7.3): it was split, once, and the status's <split> counts it.
	set -- $(dmsetup status evs)
	echo "status evs: $*"
	if [ "${10:-}" = 1 ]; then
		gpass "split-$at-counted"
	else
		gfail "split-$at-counted" "status '$*': want split 1"
	fi
	if reads_as_ref $((first + at + 1)) 64 && reads_as_ref 0 $((first + at)); then
		gpass "split-$at-reads-beside"
	else
		gfail "split-$at-reads-beside" "$(tail -n 1 /tmp/dd.err)"
	fi
	dmsetup remove evs
	dmsetup remove csplit
done
