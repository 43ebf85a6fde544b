# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Helpers for scenario scripts running inside the test guest (busybox sh).
# The host gets these lines back through the results file and the console.
# A check's NAME is one word (a comment may follow after a space); every
# NAME a scenario reports is declared on a "#@check NAME" line of it or by
# the host, and the boot fails on a declared check with no result or a
# result not declared (tests/vm/vm-lib.sh, "Declared checks").
#
#   gpass NAME            record "PASS NAME"
#   gfail NAME WHY...     record "FAIL NAME: WHY"
#   gcheck NAME CMD...    pass when CMD exits 0
#   gcheck_fails NAME CMD...  pass when CMD exits non-zero
#   dmesg_mark            write a mark into the kernel log
#   dmesg_new             the kernel log lines since the last dmesg_mark
#   uevent_start FILE / uevent_stop   record kernel uevents to FILE
#   ext_insmod            insert /modules/dm-extverity.ko (once)
#   opt_modprobe NAME     load optional module NAME with what it needs
#                         (tests/vm/mkinitramfs.sh VM_OPT_MODULES); fails
#                         when the kernel has no NAME

: "${RESULTS:=/results/results}"

gpass() {
	echo "PASS $1" >>"$RESULTS"
	echo "EVT-RESULT PASS $1"
}

gfail() {
	_gf_n=$1
	shift
	echo "FAIL $_gf_n: $*" >>"$RESULTS"
	echo "EVT-RESULT FAIL $_gf_n: $*"
}

# Scenario functions share the shell's variables: these use their own names.
gcheck() {
	_gc_n=$1
	shift
	if "$@" >/tmp/gcheck.out 2>&1; then
		gpass "$_gc_n"
	else
		gfail "$_gc_n" "exit $?: $* ($(tail -n 3 /tmp/gcheck.out | tr '\n' ' '))"
	fi
}

gcheck_fails() {
	_gc_n=$1
	shift
	if "$@" >/tmp/gcheck.out 2>&1; then
		gfail "$_gc_n" "succeeded, should have failed: $*"
	else
		gpass "$_gc_n"
	fi
}

# A mark is a line of our own in the kernel log, not a line count: once the
# ring buffer wraps, a count points at the wrong line and a "no message"
# check passes on nothing.  When the mark itself has been overwritten, the
# lines since are unknown: dmesg_new then prints a line that every check
# for or against a corruption report trips over.
dmesg_mark() {
	_dmesg_n=$((${_dmesg_n:-0} + 1))
	_dmesg_mark="evt-dmesg-mark $_dmesg_n"
	echo "$_dmesg_mark" >/dev/kmsg
}

dmesg_new() {
	dmesg | awk -v m="${_dmesg_mark:-}" '
		m == "" || found { print; next }
		substr($0, length($0) - length(m) + 1) == m { found = 1 }
		END { if (m != "" && !found)
			print "extverity corrupted: EVT-DMESG-WRAPPED: the mark \"" m "\" left the kernel log; the lines since are unknown" }'
}

# busybox uevent runs a helper per event with the event in its environment.
uevent_start() {
	_uevent_file=$1
	: >"$_uevent_file"
	cat >/tmp/uevent-helper <<EOF
#!/bin/sh
{ echo "== \$ACTION \$DEVPATH"; env | grep -v -E '^(PATH|HOME|PWD|SHLVL|TERM|_)=' | sort; } >>$_uevent_file
EOF
	chmod 755 /tmp/uevent-helper
	uevent /tmp/uevent-helper &
	_uevent_pid=$!
	sleep 0.2
}

uevent_stop() {
	[ -n "${_uevent_pid:-}" ] && kill "$_uevent_pid" 2>/dev/null
	_uevent_pid=
}

ext_insmod() {
	grep -q '^dm_extverity ' /proc/modules && return 0
	if [ ! -f /modules/dm-extverity.ko ]; then
		echo "no /modules/dm-extverity.ko in the initramfs"
		return 1
	fi
	insmod /modules/dm-extverity.ko
}

opt_modprobe() {
	[ -f "/modules/opt_$1" ] || {
		echo "the kernel has no module $1"
		return 1
	}
	while read -r _om_ko; do
		_om_name=$(echo "${_om_ko%.ko}" | tr - _)
		[ -d "/sys/module/$_om_name" ] && continue
		insmod "/modules/$_om_ko" || return
	done <"/modules/opt_$1"
}

# dev_gone NAME: the mapped device NAME does not exist.
dev_gone() {
	! dmsetup ls 2>/dev/null | grep -q "^$1[[:space:]]"
}
