# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC1091
# shellcheck shell=sh
#
# Guest side of t-vm-extverity.sh, main boot: scenarios 1-3, 4
# (ignore_corruption), 5-12 (12: the measure and corrupted messages).  /ctl/params (written by the host) names the
# disks (D_*) and what was damaged where.  Each check is declared
# ("#@check NAME", tests/vm/vm-lib.sh) before its section; the host
# declares s3-l0-next-range-reads, which needs a third level-0 block.
. /ctl/guest-lib.sh
. /ctl/params

mkdir -p /mnt/e /mnt/o
LEN=$((BLOCKS * BS / 512))
SPB=$((BS / 512))

#@check insmod
if ext_insmod >/tmp/insmod.out 2>&1; then
	gpass insmod
else
	gfail insmod "$(cat /tmp/insmod.out)"
	exit 1
fi

# table_for DATA HASH [ROOT] [OPTS...]: the line `extverity table` prints.
table_for() {
	_d=$1 _h=$2 _r=$ROOT
	shift 2
	if [ $# -gt 0 ]; then
		_r=$1
		shift
	fi
	extverity table "$@" "$_d" "$_h" "$_r"
}

# line_ok LINE DATA HASH SECTOR ROOT: the fields of a table line.
line_ok() {
	echo "$1" | awk -v len="$LEN" -v s="$4" -v r="$5" -v d="$2" -v h="$3" '
		$1 == 0 && $2 == len && $3 == "extverity" && $4 == 1 &&
		$7 == s && $8 == "sha256" && $9 == r && NF == 9 {ok = 1}
		END {exit !ok}'
}

# create NAME DATA HASH [ROOT] [TABLE OPTIONS...]
create() {
	_cr_n=$1
	shift
	_line=$(table_for "$@") || { echo "extverity table failed"; return 1; }
	echo "table $_cr_n: $_line"
	dmsetup create --noudevsync --readonly "$_cr_n" --table "$_line" &&
		dmsetup mknodes "$_cr_n"
}

status_flag() {
	dmsetup status "$1" | awk '{print $4}'
}

# blk_read DEV BLOCK: read one block of DEV, not from the page cache.
blk_read() {
	echo 1 >/proc/sys/vm/drop_caches
	dd if="$1" of=/dev/null bs="$BS" skip="$2" count=1 2>/dev/null
}

# file_blk FILE BLOCK: read block BLOCK of a file through the page cache.
file_blk() {
	dd if="$1" of=/dev/null bs="$BS" skip="$2" count=1 2>/dev/null
}

# corrupted NAME: the device's answer to the corrupted message.
corrupted() {
	dmsetup message "$1" 0 corrupted 2>&1
}

# corrupt_count NAME: the corrupt block count of the status line.
corrupt_count() {
	dmsetup status "$1" | awk '{print $6}'
}

# ---------------------------------------------------------------- 1
#@check s1-table-line
#@check s1-create
#@check s1-device-equals-image
#@check s1-mount
#@check s1-files-match
#@check s1-status-V
#@check s1-paired
#@check s6-write-fails
#@check s6-write-rw-table-fails
#@check s6-write-disk-unchanged
echo "== 1: intact image"
line=$(extverity table "$D_IMG" "$D_HASH" "$ROOT" 2>&1)
if line_ok "$line" "$D_IMG" "$D_HASH" 0 "$ROOT"; then gpass s1-table-line
else gfail s1-table-line "got: $line"; fi
if create ev "$D_IMG" "$D_HASH" >/tmp/c.out 2>&1; then
	gpass s1-create
	sum=$(sha256sum </dev/mapper/ev | cut -d' ' -f1)
	if [ "$sum" = "$IMAGE_SHA256" ]; then gpass s1-device-equals-image
	else gfail s1-device-equals-image "device $sum, image $IMAGE_SHA256"; fi
	gcheck s1-mount mount -t ext4 -o ro,noload /dev/mapper/ev /mnt/e
	gcheck s1-files-match sh -c 'cd /mnt/e && sha256sum -c -s /ctl/src.sha256'
	case $(status_flag ev) in
	V*) gpass s1-status-V ;;
	*) gfail s1-status-V "$(dmsetup status ev)" ;;
	esac
	echo "status ev: $(dmsetup status ev)"
	# Data blocks hashed two at a time (the status's last field): some of
	# a whole-device read, never more than were verified, on a kernel
	# whose SHA-256 library has sha256_finup_2x() (7.x); none elsewhere.
	set -- $(dmsetup status ev)
	if grep -qw sha256_finup_2x /proc/kallsyms; then
		if [ "${9:-0}" -gt 0 ] && [ "$9" -le "$5" ]; then gpass s1-paired
		else gfail s1-paired "status '$*': want 0 < paired <= verified"; fi
	elif [ "${9:-}" = 0 ]; then gpass s1-paired
	else gfail s1-paired "status '$*': want 0 paired without sha256_finup_2x"; fi
	# Scenario 6: writes fail.
	gcheck_fails s6-write-fails dd if=/dev/zero of=/dev/mapper/ev bs=$BS count=1 seek=1 conv=fsync
	umount /mnt/e
else
	gfail s1-create "$(cat /tmp/c.out)"
fi

# A table without --readonly over writable disks: refused, or writes fail
# and never reach the disk.
line=$(extverity table "$D_RW" "$D_HRW" "$ROOT")
if dmsetup create --noudevsync evw --table "$line" >/tmp/c.out 2>&1; then
	dmsetup mknodes evw
	gcheck_fails "s6-write-rw-table-fails (table accepted read-write)" \
		dd if=/dev/zero of=/dev/mapper/evw bs=$BS count=1 seek=1 oflag=direct
	dmsetup remove --noudevsync evw
else
	gpass "s6-write-rw-table-fails (read-write table refused: $(tail -n 1 /tmp/c.out))"
fi
sum=$(sha256sum <"$D_RW" | cut -d' ' -f1)
if [ "$sum" = "$IMAGE_SHA256" ]; then gpass s6-write-disk-unchanged
else gfail s6-write-disk-unchanged "the data disk changed"; fi

# ---------------------------------------------------------------- 2
#@check s2-create
#@check s2-mount
#@check s2-block0-reads
#@check s2-block1-reads
#@check s2-block2-eio
#@check s2-error-is-EIO
#@check s2-block3-reads
#@check s2-other-files-read
#@check s2-status-C
#@check s2-dmesg-names-inode-and-offset
#@check s2-raw-reads-before
#@check s2-raw-fails-at-block
#@check s2-raw-reads-after
#@check s2-raw-prefix-reads
#@check s2-uevent
#@check s2-uevent-DM_EXTVERITY_ERR_BLOCK_NR
#@check s2-uevent-DM_EXTVERITY_ERR_INODE
#@check s2-uevent-DM_EXTVERITY_ERR_OFFSET
#@check s2-corrupted-names-the-file
#@check s2-corrupted-empty-after-reload
#@check s2-corrupted-counts-each-read
echo "== 2: flipped byte in $DFILE block 2 (disk block $DPHYS)"
dmesg_mark
if create evd "$D_DATA" "$D_HASH" >/tmp/c.out 2>&1; then
	gpass s2-create
	# After the create: dm's own change event (DM_COOKIE) does not count.
	uevent_start /tmp/uevents
	gcheck s2-mount mount -t ext4 -o ro,noload /dev/mapper/evd /mnt/o
	gcheck s2-block0-reads file_blk "/mnt/o$DFILE" 0
	gcheck s2-block1-reads file_blk "/mnt/o$DFILE" 1
	gcheck_fails s2-block2-eio file_blk "/mnt/o$DFILE" 2
	err=$(dd if="/mnt/o$DFILE" of=/dev/null bs=$BS skip=2 count=1 2>&1)
	case $err in
	*"Input/output error"* | *"I/O error"*) gpass s2-error-is-EIO ;;
	*) gfail s2-error-is-EIO "dd said: $err" ;;
	esac
	# $DFILE has 5 blocks or more (the host picks it so).
	gcheck s2-block3-reads file_blk "/mnt/o$DFILE" 3
	gcheck s2-other-files-read sh -c "cd /mnt/o && grep -v ' \\.$DFILE\$' /ctl/src.sha256 | sha256sum -c -s"
	sleep 0.5
	case $(status_flag evd) in
	C*) gpass s2-status-C ;;
	*) gfail s2-status-C "$(dmsetup status evd)" ;;
	esac
	echo "status evd: $(dmsetup status evd)"
	new=$(dmesg_new | grep -i extverity)
	echo "$new"
	if echo "$new" | grep -w -q "$DINO" && echo "$new" | grep -w -q -E '8192|8292'; then
		gpass s2-dmesg-names-inode-and-offset
	else
		gfail s2-dmesg-names-inode-and-offset "inode $DINO / offset 8192 not in: $(echo "$new" | head -n 3)"
	fi
	umount /mnt/o
	gcheck s2-raw-reads-before blk_read /dev/mapper/evd $((DPHYS - 1))
	gcheck_fails s2-raw-fails-at-block blk_read /dev/mapper/evd "$DPHYS"
	gcheck s2-raw-reads-after blk_read /dev/mapper/evd $((DPHYS + 1))
	# O_DIRECT: through the page cache, a kernel with large block-device
	# folios (7.x) reads the bad block with its neighbours in one bio.
	gcheck s2-raw-prefix-reads dd if=/dev/mapper/evd of=/dev/null bs=$BS count="$DPHYS" iflag=direct
	sleep 0.5
	uevent_stop
	if grep -q '^== change .*dm-' /tmp/uevents &&
		grep -E '^(DM_|EXTVERITY)' /tmp/uevents | grep -q -v '^DM_COOKIE='; then
		gpass "s2-uevent ($(grep -E '^(DM_|EXTVERITY)' /tmp/uevents | grep -v '^DM_COOKIE=' | head -n 1))"
	else
		gfail s2-uevent "no change uevent with DM_ variables: $(head -c 300 /tmp/uevents | tr '\n' ' ')"
	fi
	# The uevent names the block, the file and the offset (block 2 of the
	# file: byte 2 * BS), as the log line does.
	for kv in "DM_EXTVERITY_ERR_BLOCK_NR=$DPHYS" "DM_EXTVERITY_ERR_INODE=$DINO" \
		"DM_EXTVERITY_ERR_OFFSET=$((2 * BS))"; do
		if grep -qx "$kv" /tmp/uevents; then gpass "s2-uevent-${kv%%=*}"
		else gfail "s2-uevent-${kv%%=*}" "no $kv in the uevents"; fi
	done
	cat /tmp/uevents
	# One file damaged, one block of it: every bad block the status
	# counts is that file's, first at byte 2 * BS.
	c=$(corrupted evd)
	want="$DINO $((2 * BS)) $(corrupt_count evd)"
	if [ "$c" = "$want" ]; then gpass s2-corrupted-names-the-file
	else gfail s2-corrupted-names-the-file "corrupted: '$c', want '$want'"; fi
	# A new table (reload, resume) starts empty; each read of the bad
	# block counts (O_DIRECT: one read each).
	dmsetup table evd >/tmp/evd.table
	if dmsetup load --readonly evd /tmp/evd.table && dmsetup resume evd; then
		c=$(corrupted evd)
		if [ -z "$c" ]; then gpass s2-corrupted-empty-after-reload
		else gfail s2-corrupted-empty-after-reload "corrupted: '$c'"; fi
		dd if=/dev/mapper/evd of=/dev/null bs=$BS skip="$DPHYS" count=1 iflag=direct 2>/dev/null
		dd if=/dev/mapper/evd of=/dev/null bs=$BS skip="$DPHYS" count=1 iflag=direct 2>/dev/null
		c=$(corrupted evd)
		if [ "$c" = "$DINO $((2 * BS)) 2" ]; then gpass s2-corrupted-counts-each-read
		else gfail s2-corrupted-counts-each-read "corrupted after two reads of block $DPHYS: '$c', want '$DINO $((2 * BS)) 2'"; fi
	else
		gfail s2-corrupted-empty-after-reload "reload of evd failed"
		gfail s2-corrupted-counts-each-read "reload of evd failed"
	fi
	dmsetup remove --noudevsync evd
else
	gfail s2-create "$(cat /tmp/c.out)"
fi

# ---------------------------------------------------------------- 3
#@check s3-meta-create
#@check s3-meta-mount
#@check s3-meta-dir-fails
#@check s3-meta-other-file-reads
#@check s3-meta-raw-fails-at-block
#@check s3-meta-raw-reads-before
#@check s3-meta-raw-reads-after
#@check s3-meta-dmesg-names-block
#@check s3-meta-corrupted-inode-0
echo "== 3: directory $DIR block (disk block $MPHYS)"
dmesg_mark
if create evm "$D_META" "$D_HASH" >/tmp/c.out 2>&1; then
	gpass s3-meta-create
	gcheck s3-meta-mount mount -t ext4 -o ro,noload /dev/mapper/evm /mnt/o
	# busybox ls ignores a failing readdir (exit 0), so look a file up
	# in the directory instead: the lookup must read the damaged block.
	dfile=$(awk -v d="./${DIR#/}/" 'index($2, d) == 1 &&
		index(substr($2, length(d) + 1), "/") == 0 {print substr($2, 2); exit}' /ctl/src.sha256)
	gcheck_fails s3-meta-dir-fails cat "/mnt/o$dfile"
	gcheck s3-meta-other-file-reads sh -c "cd /mnt/o && grep ' \\.$OTHER\$' /ctl/src.sha256 | sha256sum -c -s"
	umount /mnt/o
	gcheck_fails s3-meta-raw-fails-at-block blk_read /dev/mapper/evm "$MPHYS"
	gcheck s3-meta-raw-reads-before blk_read /dev/mapper/evm $((MPHYS - 1))
	gcheck s3-meta-raw-reads-after blk_read /dev/mapper/evm $((MPHYS + 1))
	if dmesg_new | grep -i extverity | grep -q -w "$MPHYS"; then gpass s3-meta-dmesg-names-block
	else gfail s3-meta-dmesg-names-block "block $MPHYS not in: $(dmesg_new | grep -i extverity | head -n 2)"; fi
	# Metadata: inode 0, the block's byte offset on the device.
	c=$(corrupted evm)
	want="0 $((MPHYS * BS)) $(corrupt_count evm)"
	if [ "$c" = "$want" ]; then gpass s3-meta-corrupted-inode-0
	else gfail s3-meta-corrupted-inode-0 "corrupted: '$c', want '$want'"; fi
	dmsetup remove --noudevsync evm
else
	gfail s3-meta-create "$(cat /tmp/c.out)"
fi

#@check s3-l0-two-levels
#@check s3-l0-create
#@check s3-l0-mount
#@check s3-l0-block0-reads
#@check s3-l0-last-of-first-range-reads
#@check s3-l0-damaged-range-fails
#@check s3-l0-damaged-range-end-fails
#@check s3-l0-other-files-read
#@check s3-l0-corrupted-names-the-file
#@check s3-top-create
#@check s3-top-mount
#@check s3-top-block0-fails
#@check s3-top-file-fails
#@check s3-top-neighbour-reads
#@check s3-top-other-files-read
echo "== 3: $LFILE tree levels ($LNLEVELS levels, $L0BLOCKS level-0 blocks)"
per=$((BS / 32))
if [ "$LNLEVELS" -ge 2 ] && [ "$L0BLOCKS" -ge 2 ]; then
	gpass s3-l0-two-levels
	if create evl "$D_IMG" "$D_HL0" >/tmp/c.out 2>&1; then
		gpass s3-l0-create
		gcheck s3-l0-mount mount -t ext4 -o ro,noload /dev/mapper/evl /mnt/o
		gcheck s3-l0-block0-reads file_blk "/mnt/o$LFILE" 0
		gcheck s3-l0-last-of-first-range-reads file_blk "/mnt/o$LFILE" $((per - 1))
		gcheck_fails s3-l0-damaged-range-fails file_blk "/mnt/o$LFILE" $per
		gcheck_fails s3-l0-damaged-range-end-fails file_blk "/mnt/o$LFILE" $((2 * per - 1))
		# Declared by the host on the same condition.
		if [ "$L0BLOCKS" -ge 3 ]; then
			gcheck s3-l0-next-range-reads file_blk "/mnt/o$LFILE" $((2 * per))
		fi
		gcheck s3-l0-other-files-read sh -c "cd /mnt/o && grep -v ' \\.$LFILE\$' /ctl/src.sha256 | sha256sum -c -s"
		umount /mnt/o
		# A damaged hash block counts for the file whose tree it is.
		c=$(corrupted evl)
		want="$LINO $((per * BS)) $(corrupt_count evl)"
		if [ "$c" = "$want" ]; then gpass s3-l0-corrupted-names-the-file
		else gfail s3-l0-corrupted-names-the-file "corrupted: '$c', want '$want'"; fi
		dmsetup remove --noudevsync evl
	else
		gfail s3-l0-create "$(cat /tmp/c.out)"
	fi
else
	gfail s3-l0-two-levels "fixture's largest file $LFILE has no two-level tree"
fi
if create evt "$D_IMG" "$D_HTOP" >/tmp/c.out 2>&1; then
	gpass s3-top-create
	gcheck s3-top-mount mount -t ext4 -o ro,noload /dev/mapper/evt /mnt/o
	gcheck_fails s3-top-block0-fails file_blk "/mnt/o$LFILE" 0
	gcheck_fails s3-top-file-fails cat "/mnt/o$LFILE"
	if [ -n "$SHARE_PATH" ]; then
		gcheck s3-top-neighbour-reads sh -c "cd /mnt/o && grep ' \\.$SHARE_PATH\$' /ctl/src.sha256 | sha256sum -c -s"
	else
		gfail s3-top-neighbour-reads "no other tree's top in the same packed block"
	fi
	gcheck s3-top-other-files-read sh -c "cd /mnt/o && grep -v ' \\.$LFILE\$' /ctl/src.sha256 | sha256sum -c -s"
	umount /mnt/o
	dmsetup remove --noudevsync evt
else
	gfail s3-top-create "$(cat /tmp/c.out)"
fi

#@check s3-manifest-create-fails
#@check s3-manifest-no-device
#@check s3-manifest-dmesg
#@check s3-wrong-root-create-fails
#@check s3-wrong-root-no-device
#@check s3-wrong-root-dmesg
#@check s3-wrong-root-tool-refuses
echo "== 3: manifest and root digest"
dmesg_mark
gcheck_fails s3-manifest-create-fails create evx "$D_IMG" "$D_HEXT"
gcheck s3-manifest-no-device dev_gone evx
new=$(dmesg_new)
# The reason, not any line that names the target.
if echo "$new" | grep -q 'extverity: Extent map digest mismatch'; then gpass s3-manifest-dmesg
else gfail s3-manifest-dmesg "no 'Extent map digest mismatch' in dmesg: $new"; fi
echo "$new"
badroot=$( [ "${ROOT#0}" != "$ROOT" ] && echo "1${ROOT#0}" || echo "0${ROOT#?}")
dmesg_mark
# `extverity table` checks the digest itself; hand dmsetup the line anyway.
line="0 $LEN extverity 1 $D_IMG $D_HASH 0 sha256 $badroot"
gcheck_fails s3-wrong-root-create-fails dmsetup create --noudevsync --readonly evr --table "$line"
gcheck s3-wrong-root-no-device dev_gone evr
if dmesg_new | grep -q 'extverity: Superblock does not match the root digest'; then
	gpass s3-wrong-root-dmesg
else gfail s3-wrong-root-dmesg "no 'Superblock does not match the root digest' in dmesg"; fi
dmesg_new
gcheck_fails s3-wrong-root-tool-refuses extverity table "$D_IMG" "$D_HASH" "$badroot"

# ---------------------------------------------------------------- 4
#@check s4-ignore-create
#@check s4-ignore-table-has-option
#@check s4-ignore-raw-block-reads
#@check s4-ignore-whole-device-reads
#@check s4-ignore-returns-disk-bytes
#@check s4-ignore-logged
#@check s4-ioerror-create
#@check s4-ioerror-read-fails
#@check s4-ioerror-next-block-reads
echo "== 4: ignore_corruption"
dmesg_mark
if create evi "$D_DATA" "$D_HASH" "$ROOT" --ignore-corruption >/tmp/c.out 2>&1; then
	gpass s4-ignore-create
	gcheck s4-ignore-table-has-option sh -c 'dmsetup table evi | grep -q ignore_corruption'
	gcheck s4-ignore-raw-block-reads blk_read /dev/mapper/evi "$DPHYS"
	gcheck s4-ignore-whole-device-reads dd if=/dev/mapper/evi of=/dev/null bs=1M
	sum=$(sha256sum </dev/mapper/evi | cut -d' ' -f1)
	want=$(sha256sum <"$D_DATA" | cut -d' ' -f1)
	if [ "$sum" = "$want" ]; then gpass s4-ignore-returns-disk-bytes
	else gfail s4-ignore-returns-disk-bytes "device $sum, disk $want"; fi
	if dmesg_new | grep -i extverity | grep -q -w -E "$DINO|$DPHYS"; then gpass s4-ignore-logged
	else gfail s4-ignore-logged "no extverity line naming inode $DINO or block $DPHYS"; fi
	dmsetup remove --noudevsync evi
else
	gfail s4-ignore-create "$(cat /tmp/c.out)"
fi

echo "== 4: an I/O error below, no options"
s=$((DPHYS * SPB))
printf '%s\n' "0 $s linear $D_IMG 0" "$s $SPB error" \
	"$((s + SPB)) $((LEN - s - SPB)) linear $D_IMG $((s + SPB))" |
	dmsetup create --noudevsync --readonly evio && dmsetup mknodes evio
if create eve /dev/mapper/evio "$D_HASH" >/tmp/c.out 2>&1; then
	gpass s4-ioerror-create
	gcheck_fails s4-ioerror-read-fails blk_read /dev/mapper/eve "$DPHYS"
	gcheck s4-ioerror-next-block-reads blk_read /dev/mapper/eve $((DPHYS + 1))
	dmsetup remove --noudevsync eve
else
	gfail s4-ioerror-create "$(cat /tmp/c.out)"
fi
dmsetup remove --noudevsync evio

# ---------------------------------------------------------------- 5
#@check s5-create
#@check s5-table-has-option
#@check s5-second-read-not-verified
#@check s5-corrupt-block-fails-every-read
echo "== 5: check_at_most_once"
# counters NAME: the numeric fields of the status, one per line.
counters() {
	dmsetup status "$1" | cut -d' ' -f5- | tr ' ' '\n' | sed 's/[^0-9]//g'
}
# deltas A B: per-field differences.
deltas() {
	printf '%s\n' "$1" >/tmp/d.a
	printf '%s\n' "$2" >/tmp/d.b
	paste -d' ' /tmp/d.a /tmp/d.b | awk '{print ($2 == "" || $1 == "") ? 0 : $2 - $1}'
}
twice() {
	c0=$(counters "$1")
	blk_read "/dev/mapper/$1" "$DPHYS"
	c1=$(counters "$1")
	blk_read "/dev/mapper/$1" "$DPHYS"
	c2=$(counters "$1")
	echo "status $1: $(dmsetup status "$1")"
	deltas "$c0" "$c1" >"/tmp/$1.d1"
	deltas "$c1" "$c2" >"/tmp/$1.d2"
}
if create evn "$D_IMG" "$D_HASH" && create evo "$D_IMG" "$D_HASH" "$ROOT" --check-at-most-once; then
	gpass s5-create
	gcheck s5-table-has-option sh -c 'dmsetup table evo | grep -q check_at_most_once'
	twice evn
	twice evo
	# Some counter moves on every verified read of the normal device and
	# moves on the first read only with check_at_most_once.
	if paste -d' ' /tmp/evn.d2 /tmp/evo.d1 /tmp/evo.d2 |
		awk '$1 > 0 && $2 > 0 && $3 == 0 {f = 1} END {exit !f}'; then
		gpass s5-second-read-not-verified
	else
		gfail s5-second-read-not-verified "deltas normal 2nd read: $(tr '\n' ' ' </tmp/evn.d2); once 1st: $(tr '\n' ' ' </tmp/evo.d1); once 2nd: $(tr '\n' ' ' </tmp/evo.d2)"
	fi
	dmsetup remove --noudevsync evn
	dmsetup remove --noudevsync evo
else
	gfail s5-create "could not create the devices"
	dmsetup remove --noudevsync evn 2>/dev/null
fi
# A corrupt block is never marked verified: with check_at_most_once every
# read of it fails, the second as the first.
if create evoc "$D_DATA" "$D_HASH" "$ROOT" --check-at-most-once >/tmp/c.out 2>&1; then
	if blk_read /dev/mapper/evoc "$DPHYS"; then
		gfail s5-corrupt-block-fails-every-read "the first read of block $DPHYS succeeded"
	elif blk_read /dev/mapper/evoc "$DPHYS"; then
		gfail s5-corrupt-block-fails-every-read "the second read of block $DPHYS succeeded"
	else
		gpass s5-corrupt-block-fails-every-read
	fi
	dmsetup remove --noudevsync evoc
else
	gfail s5-corrupt-block-fails-every-read "$(cat /tmp/c.out)"
fi

# ---------------------------------------------------------------- 6
#@check s6-free-create
#@check s6-free-block-on-disk-is-garbage
#@check s6-free-block-reads-zeros
#@check s6-free-device-equals-clean-image
echo "== 6: free block $FREEBLK holds 0xff on disk"
if create evf "$D_FREE" "$D_HASH" >/tmp/c.out 2>&1; then
	gpass s6-free-create
	gcheck s6-free-block-on-disk-is-garbage sh -c "dd if=$D_FREE bs=$BS skip=$FREEBLK count=1 2>/dev/null | od -An -tx1 | head -n 1 | grep -q ff"
	dd if=/dev/mapper/evf of=/tmp/fb bs=$BS skip="$FREEBLK" count=1 2>/dev/null
	head -c "$BS" /dev/zero >/tmp/zb
	gcheck s6-free-block-reads-zeros cmp /tmp/fb /tmp/zb
	sum=$(sha256sum </dev/mapper/evf | cut -d' ' -f1)
	if [ "$sum" = "$IMAGE_SHA256" ]; then gpass s6-free-device-equals-clean-image
	else gfail s6-free-device-equals-clean-image "device $sum"; fi
	dmsetup remove --noudevsync evf
else
	gfail s6-free-create "$(cat /tmp/c.out)"
fi

# ---------------------------------------------------------------- 7
#@check s7-table-line
#@check s7-create
#@check s7-device-equals-image
#@check s7-mount
#@check s7-files-match
echo "== 7: hash area appended at byte $SIZE"
line=$(extverity table --hash-offset="$SIZE" "$D_APP" "$D_APP" "$AROOT" 2>&1)
if line_ok "$line" "$D_APP" "$D_APP" $((SIZE / 512)) "$AROOT"; then gpass s7-table-line
else gfail s7-table-line "got: $line"; fi
if dmsetup create --noudevsync --readonly eva --table "$line" >/tmp/c.out 2>&1; then
	gpass s7-create
	dmsetup mknodes eva
	sum=$(sha256sum </dev/mapper/eva | cut -d' ' -f1)
	if [ "$sum" = "$IMAGE_SHA256" ]; then gpass s7-device-equals-image
	else gfail s7-device-equals-image "device $sum"; fi
	gcheck s7-mount mount -t ext4 -o ro,noload /dev/mapper/eva /mnt/o
	gcheck s7-files-match sh -c 'cd /mnt/o && sha256sum -c -s /ctl/src.sha256'
	umount /mnt/o
	dmsetup remove --noudevsync eva
else
	gfail s7-create "$(cat /tmp/c.out)"
fi

# ---------------------------------------------------------------- 8
#@check s8-create
#@check s8-verity-equals-extverity
echo "== 8: dm-verity cross-check"
vt="0 $LEN verity 1 $D_IMG $D_VHASH $BS $BS $BLOCKS 1 sha256 $VROOT -"
if dmsetup create --noudevsync --readonly evv --table "$vt" >/tmp/c.out 2>&1 &&
	create ev8 "$D_IMG" "$D_HASH" >>/tmp/c.out 2>&1; then
	gpass s8-create
	dmsetup mknodes
	gcheck s8-verity-equals-extverity cmp /dev/mapper/evv /dev/mapper/ev8
	dmsetup remove --noudevsync evv
	dmsetup remove --noudevsync ev8
else
	gfail s8-create "$(cat /tmp/c.out)"
	dmsetup remove --noudevsync evv 2>/dev/null
fi

# ---------------------------------------------------------------- 11
#@check s11-table-line
#@check s11-create
#@check s11-device-equals-image
#@check s11-mount
#@check s11-files-match
#@check s11-damaged-create
#@check s11-damaged-block-fails
#@check s11-block-before-reads
#@check s11-block-after-reads
echo "== 11: sha512, 1 KiB blocks, no salt"
line=$(extverity table "$D_IMG1K" "$D_HASH1K" "$ROOT1K" 2>&1)
echo "table: $line"
case $line in
"0 $((BLOCKS1K * 2)) extverity 1 "*" sha512 $ROOT1K") gpass s11-table-line ;;
*) gfail s11-table-line "got: $line" ;;
esac
if dmsetup create --noudevsync --readonly ev1k --table "$line" >/tmp/c.out 2>&1; then
	gpass s11-create
	dmsetup mknodes ev1k
	sum=$(sha256sum </dev/mapper/ev1k | cut -d' ' -f1)
	if [ "$sum" = "$IMAGE1K_SHA256" ]; then gpass s11-device-equals-image
	else gfail s11-device-equals-image "device $sum"; fi
	gcheck s11-mount mount -t ext4 -o ro,noload /dev/mapper/ev1k /mnt/o
	gcheck s11-files-match sh -c 'cd /mnt/o && sha256sum -c -s /ctl/src1k.sha256'
	umount /mnt/o
	dmsetup remove --noudevsync ev1k
else
	gfail s11-create "$(cat /tmp/c.out)"
fi
line=$(extverity table "$D_DATA1K" "$D_HASH1K" "$ROOT1K" 2>&1)
if dmsetup create --noudevsync --readonly ev1d --table "$line" >/tmp/c.out 2>&1; then
	gpass s11-damaged-create
	dmsetup mknodes ev1d
	echo 1 >/proc/sys/vm/drop_caches
	gcheck s11-damaged-block-fails sh -c "! dd if=/dev/mapper/ev1d of=/dev/null bs=1024 skip=$P1K count=1 iflag=direct"
	# busybox dd drops O_DIRECT when its buffer is misaligned, so these
	# reads go through the page cache, which reads the whole 4 KiB page:
	# read the blocks just outside the damaged block's page.
	gcheck s11-block-before-reads dd if=/dev/mapper/ev1d of=/dev/null bs=1024 skip=$(((P1K & ~3) - 1)) count=1 iflag=direct
	gcheck s11-block-after-reads dd if=/dev/mapper/ev1d of=/dev/null bs=1024 skip=$(((P1K | 3) + 1)) count=1 iflag=direct
	dmsetup remove --noudevsync ev1d
else
	gfail s11-damaged-create "$(cat /tmp/c.out)"
fi

# ---------------------------------------------------------------- 12
#@check s12-create
#@check s12-measure-every-file
#@check s12-measure-dmsetup
#@check s12-measure1k-create
#@check s12-measure1k-every-file
#@check s12-measure-root-dir-ENOENT
#@check s12-measure-dir-ENOENT
#@check s12-measure-symlink-ENOENT
#@check s12-measure-inode0-ENOENT
#@check s12-measure-unknown-ENOENT
#@check s12-measure-2^64-1-ENOENT
#@check s12-message-no-arg-EINVAL
#@check s12-message-not-a-number-EINVAL
#@check s12-message-negative-EINVAL
#@check s12-message-past-2^64-EINVAL
#@check s12-message-two-args-EINVAL
#@check s12-message-unknown-verb-EINVAL
#@check s12-message-corrupted-arg-EINVAL
#@check s12-corrupted-empty-when-intact
#@check s12-tool-mount
#@check s12-tool-measure-every-path
#@check s12-tool-measure-directory-refused
#@check s12-tool-measure-device-node-refused
#@check s12-tool-measure-other-fs-refused
#@check s12-tool-measure-layer-over-refused
#@check s12-tool-measure1k-every-path
#@check s12-noindex-create
#@check s12-noindex-ENODATA
#@check s12-noindex-tool-refused
#@check s12-emptyidx-create
#@check s12-emptyidx-ENOENT
echo "== 12: measure and corrupted messages"
# measure_all NAME FILE: every "INODE DIGEST" line of FILE against the
# device's measure (dm-measure: the message's ioctl, without a dmsetup
# process per file); prints the mismatches.
measure_all() {
	/ctl/dm-measure "$1" <"$2" >/tmp/measure.got 2>&1
	awk 'NR == FNR { want[$1] = $2; next }
		{ seen[$1] = 1 }
		want[$1] != $2 { print "inode " $1 ": " $2 " " $3 ", want " want[$1] }
		END { for (i in want) if (!(i in seen)) print "inode " i ": no answer" }' \
		"$2" /tmp/measure.got
}
# msg_fails CHECK NAME ERROR WORDS...: the message fails, prints nothing
# and dmsetup shows ERROR (strerror of the errno).
msg_fails() {
	_c=$1 _n=$2 _e=$3
	shift 3
	if dmsetup message -- "$_n" 0 "$@" >/tmp/m.out 2>/tmp/m.err; then
		gfail "$_c" "'$*' answered: $(cat /tmp/m.out)"
	elif [ -s /tmp/m.out ]; then
		gfail "$_c" "'$*' failed but printed: $(cat /tmp/m.out)"
	elif grep -q "$_e" /tmp/m.err; then
		gpass "$_c"
	else
		gfail "$_c" "'$*': want '$_e', dmsetup said: $(cat /tmp/m.err)"
	fi
}
ENOENT='No such file or directory'
EINVAL='Invalid argument'
# tool_measure_all CHECK DIR WANT: `extverity measure` of every regular file
# under the mount DIR, paths sorted bytewise, prints exactly WANT (the
# host's fsverity digest of each path's source: hard links and copies
# each under their own path).
tool_measure_all() {
	(cd "$2" && find . -type f | LC_ALL=C sort | xargs extverity measure) \
		>/tmp/tm.out 2>&1
	_rc=$?
	if [ $_rc -eq 0 ] && cmp -s /tmp/tm.out "$3"; then
		gpass "$1 ($(grep -c . "$3") paths)"
	else
		gfail "$1" "exit $_rc: $(diff "$3" /tmp/tm.out | head -n 4 | tr '\n' '|')"
	fi
}
# tool_refuses CHECK REGEX FILE: `extverity measure FILE` exits 1 with a
# message matching REGEX and prints no digest.
tool_refuses() {
	extverity measure "$3" >/tmp/tr.out 2>&1
	_rc=$?
	if [ $_rc -eq 1 ] && grep -Eq "$2" /tmp/tr.out && ! grep -q '^sha' /tmp/tr.out; then
		gpass "$1"
	else
		gfail "$1" "exit $_rc: $(head -n 2 /tmp/tr.out | tr '\n' '|')"
	fi
}
if create evq "$D_IMG" "$D_HASH" >/tmp/c.out 2>&1; then
	gpass s12-create
	t0=$(cut -d' ' -f1 /proc/uptime)
	bad=$(measure_all evq /ctl/measure)
	n=$(grep -c . /ctl/measure)
	echo "measure: $n inodes in $(awk -v a="$t0" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN {print b - a}') s"
	if [ -z "$bad" ] && [ "$n" -gt 100 ]; then gpass "s12-measure-every-file ($n inodes, sha256, salted, 4 KiB)"
	else gfail s12-measure-every-file "$n inodes; $(echo "$bad" | grep -c .) wrong: $(echo "$bad" | head -n 3 | tr '\n' '|')"; fi
	# dmsetup prints the answer as is (and a newline).
	read -r i want </ctl/measure
	got=$(dmsetup message evq 0 measure "$i" 2>&1)
	if [ "$got" = "$want" ]; then gpass s12-measure-dmsetup
	else gfail s12-measure-dmsetup "inode $i: '$got', want '$want'"; fi
	msg_fails s12-measure-root-dir-ENOENT evq "$ENOENT" measure 2
	msg_fails s12-measure-dir-ENOENT evq "$ENOENT" measure "$DIR_INO"
	msg_fails s12-measure-symlink-ENOENT evq "$ENOENT" measure "$SYMLINK_INO"
	msg_fails s12-measure-inode0-ENOENT evq "$ENOENT" measure 0
	msg_fails s12-measure-unknown-ENOENT evq "$ENOENT" measure $((LAST_INO + 1))
	msg_fails s12-measure-2^64-1-ENOENT evq "$ENOENT" measure 18446744073709551615
	msg_fails s12-message-no-arg-EINVAL evq "$EINVAL" measure
	msg_fails s12-message-not-a-number-EINVAL evq "$EINVAL" measure 12abc
	msg_fails s12-message-negative-EINVAL evq "$EINVAL" measure -12
	msg_fails s12-message-past-2^64-EINVAL evq "$EINVAL" measure 18446744073709551616
	msg_fails s12-message-two-args-EINVAL evq "$EINVAL" measure 12 13
	msg_fails s12-message-unknown-verb-EINVAL evq "$EINVAL" frobnicate 12
	msg_fails s12-message-corrupted-arg-EINVAL evq "$EINVAL" corrupted all
	c=$(corrupted evq)
	if [ -z "$c" ]; then gpass s12-corrupted-empty-when-intact
	else gfail s12-corrupted-empty-when-intact "corrupted: '$c'"; fi
	# The tool, on the mounted filesystem: FILE -> st_dev -> the device
	# -> measure st_ino.
	if mount -t ext4 -o ro,noload /dev/mapper/evq /mnt/o 2>/tmp/c.out; then
		gpass s12-tool-mount
		tool_measure_all s12-tool-measure-every-path /mnt/o /ctl/measure.paths
		tool_refuses s12-tool-measure-directory-refused \
			'/mnt/o: is a directory; only regular files' /mnt/o
		tool_refuses s12-tool-measure-device-node-refused \
			'/dev/null: is a character device' /dev/null
		tool_refuses s12-tool-measure-other-fs-refused \
			'/ctl/params: not on an extverity device' /ctl/params
		f=$(cd /mnt/o && find . -type f | LC_ALL=C sort | head -n 1)
		umount /mnt/o
		# Another device-mapper layer over the device: refused, not
		# answered from the layer's own inode numbers.
		if dmsetup create --noudevsync --readonly evql \
			--table "0 $LEN linear /dev/mapper/evq 0" >/tmp/c.out 2>&1 &&
			dmsetup mknodes evql && mount -t ext4 -o ro,noload /dev/mapper/evql /mnt/o 2>>/tmp/c.out; then
			tool_refuses s12-tool-measure-layer-over-refused \
				"not on an extverity device .*evql, a 'linear' target" "/mnt/o/$f"
			umount /mnt/o
		else
			gfail s12-tool-measure-layer-over-refused "linear over evq: $(cat /tmp/c.out)"
		fi
		dmsetup remove --noudevsync evql 2>/dev/null
	else
		gfail s12-tool-mount "$(cat /tmp/c.out)"
		for c in every-path directory-refused device-node-refused \
			other-fs-refused layer-over-refused; do
			gfail "s12-tool-measure-$c" "evq did not mount"
		done
	fi
	dmsetup remove --noudevsync evq
else
	gfail s12-create "$(cat /tmp/c.out)"
fi
line=$(extverity table "$D_IMG1K" "$D_HASH1K" "$ROOT1K" 2>&1)
if dmsetup create --noudevsync --readonly evq1k --table "$line" >/tmp/c.out 2>&1; then
	gpass s12-measure1k-create
	bad=$(measure_all evq1k /ctl/measure1k)
	n=$(grep -c . /ctl/measure1k)
	if [ -z "$bad" ] && [ "$n" -gt 100 ]; then gpass "s12-measure1k-every-file ($n inodes, sha512, no salt, 1 KiB)"
	else gfail s12-measure1k-every-file "$n inodes; $(echo "$bad" | grep -c .) wrong: $(echo "$bad" | head -n 3 | tr '\n' '|')"; fi
	if dmsetup mknodes evq1k &&
		mount -t ext4 -o ro,noload /dev/mapper/evq1k /mnt/o 2>/tmp/c.out; then
		tool_measure_all s12-tool-measure1k-every-path /mnt/o /ctl/measure1k.paths
		umount /mnt/o
	else
		gfail s12-tool-measure1k-every-path "evq1k did not mount: $(cat /tmp/c.out)"
	fi
	dmsetup remove --noudevsync evq1k
else
	gfail s12-measure1k-create "$(cat /tmp/c.out)"
	gfail s12-tool-measure1k-every-path "evq1k not created"
fi
# A hash area made before the index: loads, measure has nothing to say.
if dmsetup create --noudevsync --readonly evqn --table \
	"0 $LEN extverity 1 $D_IMG $D_HNOIDX 0 sha256 $NOIDX_ROOT" >/tmp/c.out 2>&1; then
	gpass s12-noindex-create
	msg_fails s12-noindex-ENODATA evqn 'No data available' measure "$LAST_INO"
	if dmsetup mknodes evqn &&
		mount -t ext4 -o ro,noload /dev/mapper/evqn /mnt/o 2>/tmp/c.out; then
		f=$(cd /mnt/o && find . -type f | LC_ALL=C sort | head -n 1)
		tool_refuses s12-noindex-tool-refused \
			'the hash area of evqn has no inode index; re-format it' "/mnt/o/$f"
		umount /mnt/o
	else
		gfail s12-noindex-tool-refused "evqn did not mount: $(cat /tmp/c.out)"
	fi
	dmsetup remove --noudevsync evqn
else
	gfail s12-noindex-create "$(cat /tmp/c.out)"
	gfail s12-noindex-tool-refused "evqn not created"
fi
# The flag set, the index empty: every inode is unknown.
if dmsetup create --noudevsync --readonly evqe --table \
	"0 $LEN extverity 1 $D_IMG $D_HEMPTYIDX 0 sha256 $EMPTYIDX_ROOT" >/tmp/c.out 2>&1; then
	gpass s12-emptyidx-create
	bad=
	for i in $(head -n 1 /ctl/measure | cut -d' ' -f1) "$LAST_INO" 2 0; do
		dmsetup message evqe 0 measure "$i" >/tmp/m.out 2>/tmp/m.err &&
			bad="$bad $i:answered"
		grep -q "$ENOENT" /tmp/m.err || bad="$bad $i:$(cat /tmp/m.err)"
	done
	if [ -z "$bad" ]; then gpass s12-emptyidx-ENOENT
	else gfail s12-emptyidx-ENOENT "$bad"; fi
	dmsetup remove --noudevsync evqe
else
	gfail s12-emptyidx-create "$(cat /tmp/c.out)"
fi

# ---------------------------------------------------------------- 10
# One check s10-bad-N per call of bad below, in order.
#@check s10-bad-1
#@check s10-bad-2
#@check s10-bad-3
#@check s10-bad-4
#@check s10-bad-5
#@check s10-bad-6
#@check s10-bad-7
#@check s10-bad-8
#@check s10-bad-9
#@check s10-bad-10
#@check s10-bad-11
#@check s10-bad-12
#@check s10-bad-13
#@check s10-bad-14
#@check s10-bad-15
#@check s10-bad-16
#@check s10-bad-17
#@check s10-bad-18
#@check s10-bad-19
#@check s10-bad-20
#@check s10-bad-21
#@check s10-bad-22
#@check s10-bad-23
#@check s10-bad-24
#@check s10-bad-25
#@check s10-bad-26
#@check s10-bad-27
#@check s10-bad-28
#@check s10-bad-29
#@check s10-bad-30
#@check s10-bad-31
#@check s10-bad-32
#@check s10-bad-33
#@check s10-bad-34
#@check s10-bad-35
#@check s10-bad-36
#@check s10-bad-37
#@check s10-bad-38
#@check s10-bad-39
#@check s10-bad-40
#@check s10-bad-41
#@check s10-bad-42
#@check s10-bad-43
#@check s10-good-line-accepted
#@check s10-no-device-left
echo "== 10: malformed tables"
H="$D_IMG $D_HASH"
n=0
# bad WHY LINE: LINE is refused, and the reason dm logs for it is WHY, the
# ti->error of docs/table.md its one fault must cause ("... table: DEV:
# extverity: WHY (ERRNO)").
bad() {
	n=$((n + 1))
	dmesg_mark
	if dmsetup create --noudevsync --readonly evbad --table "$2" >/tmp/b.out 2>&1; then
		gfail "s10-bad-$n" "accepted: $2"
		dmsetup remove --noudevsync evbad
	elif ! dev_gone evbad; then
		gfail "s10-bad-$n" "device left after: $2"
		dmsetup remove --noudevsync evbad
	elif dmesg_new | grep -q -E 'WARNING|BUG|Call Trace'; then
		gfail "s10-bad-$n" "kernel warning for: $2"
	elif dmesg_new | grep -q -F ": extverity: $1 ("; then
		gpass "s10-bad-$n ($1)"
	else
		gfail "s10-bad-$n" "want '$1' for: $2; got: $(dmesg_new | grep -i extverity | tail -n 1 | sed 's/^\[[^]]*\] //')"
	fi
}
ok="0 $LEN extverity 1 $H 0 sha256 $ROOT"
bad "Not enough arguments" "0 $LEN extverity"
bad "Not enough arguments" "0 $LEN extverity 1"
bad "Not enough arguments" "0 $LEN extverity 1 $D_IMG"
bad "Not enough arguments" "0 $LEN extverity 1 $H 0 sha256"
bad "Not enough arguments" "0 $LEN extverity 1 $H 0"
bad "Invalid number of options" "$ok extra"
bad "Invalid version" "0 $LEN extverity 2 $H 0 sha256 $ROOT"
bad "Invalid version" "0 $LEN extverity 0 $H 0 sha256 $ROOT"
bad "Invalid version" "0 $LEN extverity x $H 0 sha256 $ROOT"
bad "Invalid version" "0 $LEN extverity -1 $H 0 sha256 $ROOT"
bad "Data device lookup failed" "0 $LEN extverity 1 /dev/nonexistent $D_HASH 0 sha256 $ROOT"
bad "Hash device lookup failed" "0 $LEN extverity 1 $D_IMG /dev/nonexistent 0 sha256 $ROOT"
bad "Invalid hash start sector" "0 $LEN extverity 1 $H abc sha256 $ROOT"
bad "Invalid hash start sector" "0 $LEN extverity 1 $H -8 sha256 $ROOT"
bad "Superblock does not match the root digest" "0 $LEN extverity 1 $H 1 sha256 $ROOT"
bad "Superblock does not match the root digest" "0 $LEN extverity 1 $H 4 sha256 $ROOT"
bad "Superblock does not match the root digest" "0 $LEN extverity 1 $H $SPB sha256 $ROOT"
bad "Hash start beyond the end of the hash device" "0 $LEN extverity 1 $H 99999999999999 sha256 $ROOT"
bad "Hash start beyond the end of the hash device" "0 $LEN extverity 1 $H 18446744073709551615 sha256 $ROOT"
bad "Unknown hash algorithm" "0 $LEN extverity 1 $H 0 md5 $ROOT"
bad "Unknown hash algorithm" "0 $LEN extverity 1 $H 0 sha1 $ROOT"
bad "Invalid root digest" "0 $LEN extverity 1 $H 0 sha512 $ROOT"
bad "Superblock does not match the root digest" "0 $LEN extverity 1 $H 0 sha512 $ROOT$ROOT"
bad "Invalid root digest" "0 $LEN extverity 1 $H 0 sha256 ${ROOT%??}"
bad "Invalid root digest" "0 $LEN extverity 1 $H 0 sha256 ${ROOT}00"
bad "Invalid root digest" "0 $LEN extverity 1 $H 0 sha256 g${ROOT#?}"
bad "Superblock does not match the root digest" "0 $LEN extverity 1 $H 0 sha256 $badroot"
bad "Target length does not match the image size" "0 $((LEN - SPB)) extverity 1 $H 0 sha256 $ROOT"
bad "Target length does not match the image size" "0 $((LEN + SPB)) extverity 1 $H 0 sha256 $ROOT"
bad "Unknown option" "$ok 1 frobnicate"
bad "Invalid number of options" "$ok 2 ignore_corruption"
bad "Invalid number of options" "$ok x ignore_corruption"
bad "Invalid number of options" "$ok -1"
bad "Unexpected argument after the options" "$ok 1 ignore_corruption check_at_most_once"
bad "Duplicate option" "$ok 2 check_at_most_once check_at_most_once"
bad "Duplicate option" "$ok 2 ignore_corruption ignore_corruption"
bad "Conflicting options" "$ok 2 ignore_corruption restart_on_corruption"
bad "Conflicting options" "$ok 2 restart_on_corruption panic_on_corruption"
bad "Conflicting options" "$ok 2 ignore_corruption panic_on_corruption"
bad "Conflicting options" "$ok 2 restart_on_error panic_on_error"
bad "Unknown option" "$ok 1 IGNORE_CORRUPTION"
bad "Superblock does not match the root digest" "0 $LEN extverity 1 $D_IMG $D_VHASH 0 sha256 $ROOT"
bad "Superblock does not match the root digest" "0 $LEN extverity 1 $D_HASH $D_IMG 0 sha256 $ROOT"
# The unmodified line still works after all that.
if dmsetup create --noudevsync --readonly evgood --table "$ok" >/tmp/b.out 2>&1; then
	gpass s10-good-line-accepted
	dmsetup remove --noudevsync evgood
else
	gfail s10-good-line-accepted "$(cat /tmp/b.out)"
fi
gcheck s10-no-device-left sh -c '! dmsetup ls | grep -q evbad'

# ---------------------------------------------------------------- 9
#@check s9-mount
#@check s9-stress-no-errors
#@check s9-status-still-V
#@check s9-umount
#@check s9-remove
#@check s9-rmmod
#@check s9-module-gone
echo "== 9: 8 concurrent readers for $STRESS_SECONDS s"
dev_gone ev && create ev "$D_IMG" "$D_HASH" >/dev/null 2>&1
gcheck s9-mount mount -t ext4 -o ro,noload /dev/mapper/ev /mnt/e
rm -f /tmp/stress.*
end=$(($(cut -d. -f1 /proc/uptime) + STRESS_SECONDS))
reader_fs() {
	while [ "$(cut -d. -f1 /proc/uptime)" -lt "$end" ]; do
		(cd /mnt/e && sha256sum -c -s /ctl/src.sha256) || echo "fs reader $1 failed" >>/tmp/stress.err
		echo x >>"/tmp/stress.fs$1"
	done
}
reader_raw() {
	while [ "$(cut -d. -f1 /proc/uptime)" -lt "$end" ]; do
		dd if=/dev/mapper/ev of=/dev/null bs=64k iflag=direct skip="$1" 2>/dev/null ||
			echo "raw reader $1 failed" >>/tmp/stress.err
		echo x >>"/tmp/stress.raw$1"
	done
}
for i in 1 2 3 4; do
	reader_fs $i &
	reader_raw $((i * 7)) &
done
dropper() {
	while [ "$(cut -d. -f1 /proc/uptime)" -lt "$end" ]; do
		echo 3 >/proc/sys/vm/drop_caches
		sleep 1
	done
}
dropper &
wait
passes=$(cat /tmp/stress.fs* /tmp/stress.raw* 2>/dev/null | wc -l)
echo "stress: $passes passes; status $(dmsetup status ev)"
if [ -s /tmp/stress.err ]; then
	gfail s9-stress-no-errors "$(sort /tmp/stress.err | uniq -c | tr '\n' ' ')"
elif [ "$passes" -lt 8 ]; then
	gfail s9-stress-no-errors "only $passes passes"
else
	gpass "s9-stress-no-errors ($passes passes)"
fi
case $(status_flag ev) in
V*) gpass s9-status-still-V ;;
*) gfail s9-status-still-V "$(dmsetup status ev)" ;;
esac
gcheck s9-umount umount /mnt/e
gcheck s9-remove dmsetup remove --noudevsync ev
left=$(dmsetup ls 2>/dev/null | grep -v 'No devices found')
[ -n "$left" ] && echo "devices left: $left"
gcheck s9-rmmod rmmod dm_extverity
gcheck_fails s9-module-gone grep -q '^dm_extverity ' /proc/modules
