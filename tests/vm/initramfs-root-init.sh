#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# /sbin/init of the verified root that tests/vm/t-vm-initramfs.sh boots
# through Debian's initramfs and scripts/initramfs-tools (busybox sh; the
# root is read-only).  Results go to the console as EVT-RESULT lines.
# evt.mode= on the command line: "good" (every file reads back as
# /expected.sha256 says) or "bad" (/victim has a damaged block: reading it
# fails with EIO, everything else still reads).  The checks below are
# declared here ("#@check", tests/vm/vm-lib.sh), the mode's own by
# t-vm-initramfs.sh; after the last one "EVT-END exit=N".
#@check init-is-pid1
#@check vroot-exists
#@check root-is-vroot
#@check vroot-read-only
#@check vroot-slaves-vda-vdb
#@check target-extverity
export PATH=/sbin:/bin:/usr/sbin:/usr/bin
# The initramfs moved its /proc, /sys and /dev here.
[ -e /proc/self ] || mount -t proc proc /proc
[ -d /sys/block ] || mount -t sysfs sysfs /sys

ok() { echo "EVT-RESULT PASS $1"; }
bad() {
	n=$1
	shift
	echo "EVT-RESULT FAIL $n: $*"
}

mode=
for arg in $(cat /proc/cmdline); do
	case $arg in
	evt.mode=*) mode=${arg#evt.mode=} ;;
	esac
done
echo "EVT-BEGIN initramfs $mode (pid $$)"

checks() {
	[ $$ -eq 1 ] && ok init-is-pid1 || bad init-is-pid1 "pid $$"
	# "/" is the dm device named vroot, read-only, over vda (data) and vdb (hash).
	dm=
	for d in /sys/block/dm-*; do
		[ "$(cat "$d/dm/name" 2>/dev/null)" = vroot ] && dm=${d##*/}
	done
	[ -n "$dm" ] && ok "vroot-exists ($dm)" || bad vroot-exists "no dm device named vroot"
	want=$(cat "/sys/block/$dm/dev" 2>&1)
	got=$(awk '$5 == "/" { print $3 }' /proc/self/mountinfo)
	[ -n "$want" ] && [ "$got" = "$want" ] && ok "root-is-vroot ($dm)" ||
		bad root-is-vroot "/ is $got, $dm is $want"
	[ "$(cat "/sys/block/$dm/ro" 2>&1)" = 1 ] && ok vroot-read-only ||
		bad vroot-read-only "ro=$(cat "/sys/block/$dm/ro" 2>&1)"
	slaves=$(ls "/sys/block/$dm/slaves" 2>&1 | tr '\n' ' ')
	[ "$slaves" = "vda vdb " ] && ok vroot-slaves-vda-vdb || bad vroot-slaves-vda-vdb "$slaves"
	grep ' / ' /proc/mounts | sed 's/^/EVT-MOUNT /'
	table=$(dmsetup table vroot 2>&1)
	echo "EVT-TABLE $table"
	set -- $table
	[ "$3" = extverity ] && ok target-extverity || bad target-extverity "$table"

	case $mode in
	good)
		if out=$(sha256sum -c /expected.sha256 2>&1); then
			n=$(echo "$out" | grep -c ': OK$')
			ok "all-files-read ($n files)"
		else
			bad all-files-read "$(echo "$out" | grep -v ': OK$' | head -n 3)"
		fi
		;;
	bad)
		if err=$(cat /victim 2>&1 >/dev/null); then
			bad victim-eio "reading /victim succeeded"
		else
			case $err in
			*"Input/output error"* | *"I/O error"*) ok victim-eio ;;
			*) bad victim-eio "unexpected error: $err" ;;
			esac
		fi
		if out=$(grep -v '  /victim$' /expected.sha256 | sha256sum -c - 2>&1); then
			ok other-files-read
		else
			bad other-files-read "$(echo "$out" | grep -v ': OK$' | head -n 3)"
		fi
		;;
	*) bad mode "evt.mode='$mode'" ;;
	esac
}

# In a subshell: a check that dies leaves a non-zero status, not pid 1 dead.
(checks)
echo "EVT-END exit=$?"
echo "EVT-POWEROFF"
poweroff -f
