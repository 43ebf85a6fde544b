#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# /sbin/init of the verified root that tests/vm/t-vm-builtin.sh boots with
# dm-mod.create= and no initramfs (busybox sh; the root is read-only, so
# nothing is written).  Results go to the console as EVT-RESULT lines, as
# the other VM tests' do.  evt.mode= on the command line: "good" (every
# file reads back as /expected.sha256 says) or "bad" (/victim has a damaged
# block: reading it fails with EIO, everything else still reads).  The
# checks below are declared here ("#@check", tests/vm/vm-lib.sh), the
# mode's own by t-vm-builtin.sh; after the last one "EVT-END exit=N".
#@check init-is-pid1
#@check root-dm-name
#@check root-is-dm-0
#@check dm-0-read-only
#@check dm-init-ready
export PATH=/sbin:/bin:/usr/sbin:/usr/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys

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
echo "EVT-BEGIN builtin $mode (pid $$)"

checks() {
	# We run from the mapped device dm-init made: "/" is dm-0, named vroot,
	# read-only.
	[ $$ -eq 1 ] && ok init-is-pid1 || bad init-is-pid1 "pid $$"
	name=$(cat /sys/block/dm-0/dm/name 2>&1)
	[ "$name" = vroot ] && ok root-dm-name || bad root-dm-name "dm-0 is '$name'"
	want=$(cat /sys/block/dm-0/dev 2>&1)
	got=$(awk '$5 == "/" { print $3 }' /proc/self/mountinfo)
	[ -n "$want" ] && [ "$got" = "$want" ] && ok root-is-dm-0 ||
		bad root-is-dm-0 "/ is $got, dm-0 is $want"
	[ "$(cat /sys/block/dm-0/ro)" = 1 ] && ok dm-0-read-only || bad dm-0-read-only "ro=$(cat /sys/block/dm-0/ro)"
	# The table line is not in sysfs; dm-init's log line names the device.
	dmesg | grep -q 'dm-0 (vroot) is ready' && ok dm-init-ready ||
		bad dm-init-ready "$(dmesg | grep 'device-mapper' | tail -n 3)"

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
		# The damage is one block of one file: the others still read.
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
