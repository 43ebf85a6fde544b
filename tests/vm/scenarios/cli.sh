# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC1091
# shellcheck shell=sh
#
# Guest side of t-vm-cli.sh: extverity open/status/close on image files
# (loop devices), block devices, an appended hash area and LVM volumes,
# and the documented exit code and message of each bad input.  The LVM
# checks are declared by the host, which knows whether lvm is in the
# initramfs; the others here:
#@check files-disk
#@check no-module
#@check no-module-no-loop
#@check no-module-no-dm
#@check insmod
#@check file-open
#@check file-node
#@check file-status
#@check file-two-loops
#@check file-device-equals-image
#@check file-mount
#@check file-files-match
#@check file-status-in-use
#@check close-mounted
#@check file-still-there
#@check file-close
#@check file-node-gone
#@check file-no-loop
#@check file-no-dm
#@check rhf-open
#@check rhf-dm-uuid
#@check rhf-mount
#@check deferred-close
#@check deferred-still-there
#@check deferred-gone
#@check rhf-no-loop
#@check rhf-no-dm
#@check bad-open
#@check bad-read-fails
#@check bad-status
#@check bad-status-json
#@check bad-close
#@check bad-no-loop
#@check bad-no-dm
#@check verify-ioerr-create
#@check verify-ioerr
#@check verify-ioerr-no-loop
#@check verify-ioerr-no-dm
#@check json-open
#@check json-status
#@check flags-status
#@check json-close
#@check json-no-loop
#@check json-no-dm
#@check blk-open
#@check blk-status
#@check blk-no-loop-line
#@check busy-name
#@check blk-device-equals-image
#@check blk-mount
#@check blk-files-match
#@check blk-close
#@check blk-no-loop
#@check blk-no-dm
#@check app-file-open
#@check app-file-one-loop
#@check app-file-status
#@check app-file-device-equals-image
#@check app-file-mount
#@check app-file-files-match
#@check app-file-close
#@check app-file-no-loop
#@check app-file-no-dm
#@check app-blk-open
#@check app-blk-device-equals-image
#@check app-blk-mount
#@check app-blk-files-match
#@check app-blk-close
#@check app-blk-no-loop
#@check app-blk-no-dm
#@check open-missing-data
#@check open-missing-hash
#@check open-wrong-digest
#@check open-bad-digest
#@check open-not-hash-area
#@check open-bad-name
#@check open-two-modes
#@check open-usage
#@check open-kernel-refuses
#@check open-kernel-refuses-no-loop
#@check open-kernel-refuses-no-dm
#@check close-nonexistent
#@check status-nonexistent
#@check status-json-nonexistent
#@check close-not-extverity
#@check status-not-extverity
#@check bad-input-no-loop
#@check bad-input-no-dm
. /ctl/guest-lib.sh
. /ctl/params

F=/mnt/x
mkdir -p $F /mnt/e

# expect NAME RC PATTERN CMD...: CMD exits RC and its output matches the
# extended regex PATTERN.
expect() {
	_ex_n=$1 _ex_rc=$2 _ex_p=$3
	shift 3
	"$@" >/tmp/ex.out 2>&1
	_ex_r=$?
	if [ "$_ex_r" -ne "$_ex_rc" ]; then
		gfail "$_ex_n" "exit $_ex_r, want $_ex_rc: $* ($(tail -n 3 /tmp/ex.out | tr '\n' ' '))"
	elif ! grep -Eq -- "$_ex_p" /tmp/ex.out; then
		gfail "$_ex_n" "output does not match /$_ex_p/: $(tail -n 3 /tmp/ex.out | tr '\n' ' ')"
	else
		gpass "$_ex_n"
	fi
	cat /tmp/ex.out
}

# The loop devices that have a backing file.
loops() {
	for _l in /sys/block/loop*/loop/backing_file; do
		[ -e "$_l" ] && echo "$_l: $(cat "$_l")"
	done
}

# no_leftovers NAME: no dm device and no loop device remains.
no_leftovers() {
	_i=0
	while [ -n "$(loops)" ] && [ $_i -lt 20 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	if [ -n "$(loops)" ]; then
		gfail "$1-no-loop" "$(loops | tr '\n' ' ')"
	else
		gpass "$1-no-loop"
	fi
	if dmsetup ls 2>/dev/null | grep -vq 'No devices found'; then
		gfail "$1-no-dm" "$(dmsetup ls | tr '\n' ' ')"
	else
		gpass "$1-no-dm"
	fi
}

# contents NAME DEV: the device reads back as the image, and mounted, the
# files match the manifest.
contents() {
	_sum=$(sha256sum <"$2" | cut -d' ' -f1)
	if [ "$_sum" = "$IMAGE_SHA256" ]; then gpass "$1-device-equals-image"
	else gfail "$1-device-equals-image" "device $_sum, image $IMAGE_SHA256"; fi
	gcheck "$1-mount" mount -t ext4 -o ro,noload "$2" /mnt/e
	gcheck "$1-files-match" sh -c 'cd /mnt/e && sha256sum -c -s /ctl/src.sha256'
}

# status_has NAME DEV REGEX...: every REGEX matches `extverity status DEV`.
status_has() {
	_sh_n=$1 _sh_d=$2
	shift 2
	extverity status "$_sh_d" >/tmp/st.out 2>&1
	_sh_r=$?
	cat /tmp/st.out
	[ $_sh_r -eq 0 ] || { gfail "$_sh_n" "status exit $_sh_r"; return; }
	for _re in "$@"; do
		if ! grep -Eq -- "$_re" /tmp/st.out; then
			gfail "$_sh_n" "no /$_re/ in: $(tr '\n' '|' </tmp/st.out)"
			return
		fi
	done
	gpass "$_sh_n"
}

gcheck files-disk mount -t ext4 -o ro "$D_FILES" $F

# ------------------------------------------- no module loaded, no modprobe
echo "== module not loaded"
expect no-module 4 'dm-extverity target not available \(load dm-extverity.ko\)' \
	extverity open $F/image.ext4 evf $F/image.hash "$ROOT"
no_leftovers no-module
if ext_insmod >/tmp/insmod.out 2>&1; then
	gpass insmod
else
	gfail insmod "$(cat /tmp/insmod.out)"
	exit 1
fi

# --------------------------------------------------- image files, loop
echo "== image files"
gcheck file-open extverity open $F/image.ext4 evf $F/image.hash "$ROOT"
gcheck file-node test -b /dev/mapper/evf
status_has file-status evf '^/dev/mapper/evf is active\.$' \
	'status: +verified' "data loop: +$F/image.ext4\$" \
	"hash loop: +$F/image.hash\$" 'data device: +/dev/loop' \
	"root digest: +$ROOT\$" "size: +$LEN sectors" 'hash offset: +0 sectors' \
	"data block: +$BS\$" 'hash name: +sha256'
if [ "$(loops | wc -l)" -eq 2 ]; then gpass file-two-loops
else gfail file-two-loops "$(loops | tr '\n' ' ')"; fi
contents file /dev/mapper/evf
status_has file-status-in-use evf '^/dev/mapper/evf is active and is in use\.$' \
	'verified: +[1-9][0-9]* blocks' 'corrupt: +0 blocks' \
	'paired: +[0-9]+ blocks \(hashed two at a time\)$' \
	'split: +[0-9]+ reads \(verified in two halves\)$'
expect close-mounted 5 'in use' extverity close evf
gcheck file-still-there test -b /dev/mapper/evf
umount /mnt/e
gcheck file-close extverity close evf
gcheck file-node-gone sh -c '! test -e /dev/mapper/evf'
no_leftovers file

# ------------------- --root-hash-file, the dm UUID, close --deferred
echo "== root hash file, dm UUID, deferred close"
printf '%s' "$ROOT" >/tmp/rh
gcheck rhf-open extverity open --root-hash-file=/tmp/rh $F/image.ext4 evr $F/image.hash
u=$(dmsetup info -c --noheadings -o uuid evr 2>&1)
if [ "$u" = "EXTVERITY-$HUUID-evr" ]; then gpass rhf-dm-uuid
else gfail rhf-dm-uuid "dm UUID '$u', want EXTVERITY-$HUUID-evr"; fi
gcheck rhf-mount mount -t ext4 -o ro,noload /dev/mapper/evr /mnt/e
# Mounted: --deferred succeeds and the kernel removes it on the last close.
gcheck deferred-close extverity close --deferred evr
gcheck deferred-still-there sh -c 'dmsetup info evr >/dev/null && cd /mnt/e && sha256sum -c -s /ctl/src.sha256'
umount /mnt/e
_i=0
while dmsetup info evr >/dev/null 2>&1 && [ $_i -lt 50 ]; do
	sleep 0.1
	_i=$((_i + 1))
done
if dmsetup info evr >/dev/null 2>&1; then gfail deferred-gone "evr still there 5 s after umount"
else gpass deferred-gone; fi
no_leftovers rhf

# ------------------------------------------------------- a damaged image
echo "== damaged image"
gcheck bad-open extverity open $F/image.bad evbad $F/image.hash "$ROOT"
echo 1 >/proc/sys/vm/drop_caches
gcheck_fails bad-read-fails dd if=/dev/mapper/evbad of=/dev/null bs="$BS" skip="$BIGBLK" count=1
status_has bad-status evbad 'status: +corrupted' 'corrupt: +[1-9][0-9]* blocks'
expect bad-status-json 0 '"status": "corrupted"' extverity status --json evbad
gcheck bad-close extverity close evbad
no_leftovers bad

# verify of a device with an unreadable block (dm-error over ERRBLK, block
# 32 of the damaged file): the damage at BIGBLK, queued before it, is
# reported first, then the read error, exit 4.
spb=$((BS / 512))
if lb=$(/sbin/losetup -r -f --show $F/image.bad 2>/tmp/lo.out) &&
	printf '%s\n' "0 $((ERRBLK * spb)) linear $lb 0" "$((ERRBLK * spb)) $spb error" \
		"$(((ERRBLK + 1) * spb)) $((LEN - (ERRBLK + 1) * spb)) linear $lb $(((ERRBLK + 1) * spb))" |
	dmsetup create --noudevsync --readonly everr >/tmp/lo.out 2>&1 && dmsetup mknodes everr; then
	gpass verify-ioerr-create
	rc=0
	extverity verify /dev/mapper/everr $F/image.hash "$ROOT" >/tmp/vr.out 2>&1 || rc=$?
	cat /tmp/vr.out
	bad=$(grep -n "corrupted: file .*(data block $BIGBLK)" /tmp/vr.out | cut -d: -f1 | head -n 1)
	ioerr=$(grep -n 'cannot read the data image: Input/output error' /tmp/vr.out | cut -d: -f1 | head -n 1)
	if [ "$rc" = 4 ] && [ -n "$bad" ] && [ -n "$ioerr" ] && [ "$bad" -lt "$ioerr" ]; then
		gpass verify-ioerr
	else
		gfail verify-ioerr "exit $rc, want 4; block $BIGBLK reported on line ${bad:-none}, the read error on ${ioerr:-none}"
	fi
	dmsetup remove everr
else
	gfail verify-ioerr-create "$(cat /tmp/lo.out)"
fi
[ -n "${lb:-}" ] && /sbin/losetup -d "$lb"
no_leftovers verify-ioerr

# ------------------------------------------------- --json and flags
echo "== json"
expect json-open 0 "^\\{\"name\": \"evj\", \"device\": \"/dev/mapper/evj\", \"table\": \"0 $LEN extverity 1 [0-9]+:[0-9]+ [0-9]+:[0-9]+ 0 sha256 $ROOT 2 ignore_corruption check_at_most_once\"\\}\$" \
	extverity open --json --check-at-most-once --ignore-corruption \
	$F/image.ext4 evj $F/image.hash "$ROOT"
expect json-status 0 "\"status\": \"verified\".*\"paired_blocks\": [0-9][0-9]*, \"split_reads\": [0-9][0-9]*,.*\"data_backing_file\": \"$F/image.ext4\".*\"flags\": \\[\"ignore_corruption\", \"check_at_most_once\"\\]" \
	extverity status --json evj
status_has flags-status evj 'flags: +ignore_corruption check_at_most_once$'
gcheck json-close extverity close evj
no_leftovers json

# --------------------------------------------------- block devices
echo "== block devices"
gcheck blk-open extverity open "$D_IMG" evb "$D_HASH" "$ROOT"
status_has blk-status evb "data device: +$D_IMG\$" "hash device: +$D_HASH\$"
if grep -q 'loop:' /tmp/st.out; then gfail blk-no-loop-line "$(cat /tmp/st.out)"
else gpass blk-no-loop-line; fi
expect busy-name 5 'device evb already exists' \
	extverity open "$D_IMG" evb "$D_HASH" "$ROOT"
contents blk /dev/mapper/evb
umount /mnt/e
gcheck blk-close extverity close evb
no_leftovers blk

# ------------------------------------------------ appended hash area
echo "== appended hash area"
gcheck app-file-open extverity open --hash-offset="$SIZE" $F/image.app eva $F/image.app "$AROOT"
if [ "$(loops | wc -l)" -eq 1 ]; then gpass app-file-one-loop
else gfail app-file-one-loop "$(loops | tr '\n' ' ')"; fi
status_has app-file-status eva "hash offset: +$((SIZE / 512)) sectors" \
	"data loop: +$F/image.app\$" "hash loop: +$F/image.app\$"
contents app-file /dev/mapper/eva
umount /mnt/e
gcheck app-file-close extverity close eva
no_leftovers app-file
gcheck app-blk-open extverity open --hash-offset="$SIZE" "$D_APP" evab "$D_APP" "$AROOT"
contents app-blk /dev/mapper/evab
umount /mnt/e
gcheck app-blk-close extverity close evab
no_leftovers app-blk

# ----------------------------------------------------------- bad input
echo "== bad input"
WRONG=$(echo "$ROOT" | tr '0-9a-f' '1-9a-f0')
expect open-missing-data 4 '^extverity: cannot access /dev/nonexistent' \
	extverity open /dev/nonexistent evx "$D_HASH" "$ROOT"
expect open-missing-hash 4 '^extverity: cannot access /dev/nonexistent' \
	extverity open "$D_IMG" evx /dev/nonexistent "$ROOT"
expect open-wrong-digest 1 '^extverity: root digest does not match' \
	extverity open $F/image.ext4 evx $F/image.hash "$WRONG"
expect open-bad-digest 1 '^extverity: invalid root digest' \
	extverity open "$D_IMG" evx "$D_HASH" 1234
expect open-not-hash-area 1 '^extverity: .* is not an extverity hash area' \
	extverity open "$D_IMG" evx "$D_IMG" "$ROOT"
expect open-bad-name 1 '^extverity: invalid device name' \
	extverity open "$D_IMG" a/b "$D_HASH" "$ROOT"
expect open-two-modes 1 'exclude each other' \
	extverity open --panic-on-error --restart-on-error "$D_IMG" evx "$D_HASH" "$ROOT"
expect open-usage 1 'Usage' extverity open "$D_IMG" evx "$D_HASH"
# The kernel refuses: the data (the hash file itself) is smaller than the image.
expect open-kernel-refuses 1 'extverity: kernel: .*Data device is smaller than the image' \
	extverity open $F/image.hash evx $F/image.hash "$ROOT"
no_leftovers open-kernel-refuses
expect close-nonexistent 4 '^extverity: device evnone is not active' \
	extverity close evnone
expect status-nonexistent 4 '^evnone is inactive\.$' extverity status evnone
expect status-json-nonexistent 4 '^\{"name": "evnone", "active": false\}$' \
	extverity status --json evnone
dmsetup create --noudevsync --readonly lin --table "0 8 linear $D_IMG 0" &&
	dmsetup mknodes lin
expect close-not-extverity 1 'not an extverity device \(target linear\)' \
	extverity close lin
expect status-not-extverity 1 'not an extverity device' extverity status lin
dmsetup remove --noudevsync lin
dmsetup mknodes
no_leftovers bad-input

# ------------------------------------------------------------------ LVM
echo "== LVM"
# t-vm-cli.sh declares the lvm-* checks when it put lvm in the initramfs,
# and reports the skip when it did not.
if ! command -v lvm >/dev/null; then
	echo "no lvm in the initramfs: no LVM checks"
else
	LVMCFG='devices { obtain_device_list_from_udev = 0 } activation { udev_sync = 0 udev_rules = 0 verify_udev_operations = 1 monitoring = 0 } global { use_lvmetad = 0 locking_dir = "/run/lock/lvm" }'
	mkdir -p /run/lock/lvm /etc/lvm
	lv() { lvm "$@" --config "$LVMCFG"; }
	DMB=$(( (SIZE + 4 * 1048576 - 1) / 1048576 ))
	HMB=$(( (HSIZE + 4 * 1048576 - 1) / 1048576 ))
	if lv pvcreate -q -y "$D_PV1" "$D_PV2" >/tmp/lvm.out 2>&1 &&
		lv vgcreate -q evvg "$D_PV1" "$D_PV2" >>/tmp/lvm.out 2>&1 &&
		lv lvcreate -q -y -Wn -Zn -L "${DMB}m" -n data evvg "$D_PV1" >>/tmp/lvm.out 2>&1 &&
		lv lvcreate -q -y -Wn -Zn -L "${HMB}m" -n hash evvg "$D_PV2" >>/tmp/lvm.out 2>&1; then
		gpass lvm-setup
		dd if=$F/image.ext4 of=/dev/evvg/data bs=1M conv=fsync 2>/dev/null
		dd if=$F/image.hash of=/dev/evvg/hash bs=1M conv=fsync 2>/dev/null
		gcheck lvm-open extverity open /dev/evvg/data evl /dev/evvg/hash "$ROOT"
		status_has lvm-status evl 'status: +verified' 'data device: +/dev/dm-' \
			'hash device: +/dev/dm-'
		gcheck lvm-mount mount -t ext4 -o ro,noload /dev/mapper/evl /mnt/e
		gcheck lvm-files-match sh -c 'cd /mnt/e && sha256sum -c -s /ctl/src.sha256'
		umount /mnt/e
		gcheck lvm-close extverity close evl
		gcheck lvm-lvs-remain test -b /dev/evvg/data
		lv vgchange -q -an evvg >/dev/null 2>&1
		no_leftovers lvm
	else
		gfail lvm-setup "$(tail -n 5 /tmp/lvm.out | tr '\n' ' ')"
	fi
fi
