#!/bin/busybox sh
# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the User-Mode Linux bench (bench/uml.sh).  /dev/ubdb is the
# reference image, /dev/ubdc its veritysetup hash device, /dev/ubdd its
# extverity hash area; /params has LEN, VTABLE_ARGS, ETABLE, ROUNDS.
# Prints "EVT-UML TEST KIND ROUND CENTISECONDS" lines; the host computes.
export PATH=/bin:/sbin DM_DISABLE_UDEV=1
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp
. /params

insmod /dm-extverity.ko || echo "EVT-UML-FAIL insmod"
table() {
	case $1 in
	raw) echo "0 $LEN linear /dev/ubdb 0" ;;
	verity) echo "0 $LEN verity $VTABLE_ARGS" ;;
	verity-bh) echo "0 $LEN verity $VTABLE_ARGS 1 try_verify_in_tasklet" ;;
	extverity) echo "$ETABLE" ;;
	extverity-bh) echo "$ETABLE 1 try_verify_in_tasklet" ;;
	esac
}
fresh() {
	dmsetup remove b 2>/dev/null
	echo 3 >/proc/sys/vm/drop_caches
	dmsetup create --readonly b --table "$(table "$1")" ||
		echo "EVT-UML-FAIL create $1"
	dmsetup mknodes b
}
now_cs() { awk '{ printf "%d\n", $1 * 100 }' /proc/uptime; }
# The guest's user space runs under ptrace: large reads, so the figure is
# the kernel's work, not the system calls'.
seq_read() { dd if=/dev/mapper/b of=/dev/null bs=4M 2>/dev/null; }
tree_read() {
	mount -t ext4 -o ro,noload /dev/mapper/b /mnt || return 1
	find /mnt -type f -exec cat {} + >/dev/null
	umount /mnt
}

# Warm up: the first touches of guest memory are slow.
fresh verity
seq_read
r=1
while [ "$r" -le "$ROUNDS" ]; do
	# Interleaved, the order turned every round.
	if [ $((r % 2)) -eq 1 ]; then kinds="raw verity verity-bh extverity extverity-bh"
	else kinds="extverity-bh extverity verity-bh verity raw"; fi
	for kind in $kinds; do
		fresh $kind
		t0=$(now_cs); seq_read; t1=$(now_cs)
		echo "EVT-UML seq $kind $r $((t1 - t0))"
		fresh $kind
		t0=$(now_cs); tree_read || echo "EVT-UML-FAIL mount $kind"; t1=$(now_cs)
		echo "EVT-UML tree $kind $r $((t1 - t0))"
		case $kind in
		verity | verity-bh) dmsetup status b | grep -q ' V$' ;;
		extverity | extverity-bh) dmsetup status b | grep -q ' V ' ;;
		esac || echo "EVT-UML-FAIL status $kind: $(dmsetup status b)"
	done
	r=$((r + 1))
done
dmsetup remove b
echo "EVT-UML-END"
poweroff -f
