#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# /usr/local/sbin/evt-check in the Debian root that
# tests/vm/t-vm-debian-root.sh boots from an extverity device through
# Debian's initramfs (dash; run by evt-check.service, ordered after
# multi-user.target; its output is the console).  Results are EVT-RESULT
# lines; after the last one "EVT-END exit=N", then the system powers off.
# evt.mode= on the command line: "good" (every regular file of the image
# reads back as /usr/local/share/evt-root/files.sha256 says) or "bad"
# (evt.victim=PATH has a damaged first block: executing and reading it
# fail with EIO, the journal has the kernel's report naming its inode,
# every other file reads).  In every mode, the second verified volume
# "data" (/etc/extveritytab, opened by extverity-generator's unit on the
# running system) is mounted on /srv/data by /etc/fstab and reads back as
# /usr/local/share/evt-root/data.sha256 says.  evt.flavour=systemd: the
# initrd's systemd opened the root (extverity@vroot.service, from the
# generator, in the journal).  The checks below are declared here
# ("#@check", tests/vm/vm-lib.sh), the mode's and flavour's own by the host.
#@check init-is-systemd
#@check root-is-vroot
#@check root-read-only
#@check vroot-slaves-vda-vdb
#@check target-extverity
#@check tmpfs-mounts
#@check machine-id-transient
#@check multi-user-reached
#@check system-running
#@check data-unit-active
#@check data-volume-mounted
#@check data-files-read
# ok and bad only echo (A && ok || bad is if-then-else here); the table and
# the command line are split into words on purpose.
# shellcheck disable=SC2015,SC2086,SC2013,SC2012,SC2046
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export SYSTEMD_PAGER='' SYSTEMD_COLORS=0
list=/usr/local/share/evt-root/files.sha256

ok() { echo "EVT-RESULT PASS $1"; }
bad() {
	n=$1
	shift
	echo "EVT-RESULT FAIL $n: $*"
}

mode='' victim='' flavour=''
for arg in $(cat /proc/cmdline); do
	case $arg in
	evt.mode=*) mode=${arg#evt.mode=} ;;
	evt.flavour=*) flavour=${arg#evt.flavour=} ;;
	evt.victim=*) victim=${arg#evt.victim=} ;;
	esac
done
echo "EVT-BEGIN debian-root $mode $flavour (pid $$, $(cut -d' ' -f1 /proc/uptime) s after boot)"

# Every regular file of the list, read through a bind mount of / (no
# submounts: the files under /var/log and /etc/machine-id too), page cache
# dropped first.  Prints the failures; status 1 when there is one.
read_all() {
	mkdir -p /run/evt-root
	mountpoint -q /run/evt-root || mount --bind / /run/evt-root || return 1
	sync
	echo 3 >/proc/sys/vm/drop_caches
	(cd /run/evt-root && grep -v "  \\.$1\$" "$list" | sha256sum -c --quiet - 2>&1)
}

checks() {
	[ "$(cat /proc/1/comm)" = systemd ] && ok init-is-systemd ||
		bad init-is-systemd "pid 1 is $(cat /proc/1/comm)"
	dm=
	for d in /sys/block/dm-*; do
		[ "$(cat "$d/dm/name" 2>/dev/null)" = vroot ] && dm=${d##*/}
	done
	want=$(cat "/sys/block/$dm/dev" 2>&1)
	got=$(awk '$5 == "/" { print $3 }' /proc/self/mountinfo)
	[ -n "$dm" ] && [ "$got" = "$want" ] && ok "root-is-vroot ($dm)" ||
		bad root-is-vroot "/ is $got, vroot is '$dm' $want"
	grep ' / ' /proc/mounts | sed 's/^/EVT-MOUNT /'
	opts=$(awk '$2 == "/" { o = $4 } END { print o }' /proc/mounts)
	case ,$opts, in
	*,ro,*) [ "$(cat "/sys/block/$dm/ro" 2>&1)" = 1 ] && ok root-read-only ||
		bad root-read-only "device ro=$(cat "/sys/block/$dm/ro" 2>&1)" ;;
	*) bad root-read-only "mounted $opts" ;;
	esac
	slaves=$(ls "/sys/block/$dm/slaves" 2>&1 | tr '\n' ' ')
	[ "$slaves" = "vda vdb " ] && ok vroot-slaves-vda-vdb || bad vroot-slaves-vda-vdb "$slaves"
	table=$(dmsetup table vroot 2>&1)
	echo "EVT-TABLE $table"
	set -- $table
	[ "${3:-}" = extverity ] && ok target-extverity || bad target-extverity "$table"

	t=
	for m in /tmp /var/tmp /var/log; do
		[ "$(awk -v m="$m" '$2 == m { print $3 }' /proc/mounts)" = tmpfs ] || t="$t $m"
	done
	[ -z "$t" ] && ok tmpfs-mounts || bad tmpfs-mounts "not tmpfs:$t"
	id=$(cat /etc/machine-id)
	if mountpoint -q /etc/machine-id && echo "$id" | grep -Eqx '[0-9a-f]{32}'; then
		ok machine-id-transient
	else
		bad machine-id-transient "'$id', $(mountpoint /etc/machine-id 2>&1)"
	fi

	state=$(timeout 120 systemctl is-system-running --wait 2>&1)
	echo "EVT-STATE $state"
	systemctl list-units --failed --plain --no-legend 2>&1 | sed 's/^/EVT-FAILED /'
	echo "EVT-INFO $(systemd-analyze time 2>&1 | head -n 1)"
	[ "$(systemctl is-active multi-user.target)" = active ] && ok multi-user-reached ||
		bad multi-user-reached "multi-user.target $(systemctl is-active multi-user.target)"
	[ "$state" = running ] && ok system-running ||
		bad system-running "$state: $(systemctl list-units --failed --plain --no-legend | awk '{ print $1 }' | tr '\n' ' ')"

	# The second volume, from /etc/extveritytab and /etc/fstab.
	state=$(systemctl is-active extverity@data.service 2>&1)
	[ "$state" = active ] && ok data-unit-active ||
		bad data-unit-active "extverity@data.service $state: $(systemctl status --no-pager -n 5 extverity@data.service 2>&1 | tr '\n' '|')"
	echo "EVT-DATA-TABLE $(dmsetup table data 2>&1)"
	dev=$(awk '$2 == "/srv/data" { print $1 }' /proc/mounts)
	set -- $(dmsetup table data 2>&1)
	if [ "${3:-}" = extverity ] && [ "$(readlink -f "$dev")" = "$(readlink -f /dev/mapper/data)" ]; then
		ok data-volume-mounted
	else
		bad data-volume-mounted "/srv/data from '$dev', table: $*"
	fi
	if out=$(cd /srv/data && sha256sum -c --quiet /usr/local/share/evt-root/data.sha256 2>&1); then
		ok "data-files-read ($(wc -l </usr/local/share/evt-root/data.sha256) files)"
	else
		bad data-files-read "$(echo "$out" | head -n 3)"
	fi
	case $flavour in
	systemd)
		j=$(journalctl -b -o cat --no-pager -u extverity@vroot.service 2>&1)
		echo "$j" | sed 's/^/EVT-VROOT-UNIT /'
		case $j in
		*"Finished extverity@vroot.service"* | *"Finished extverity: verified volume vroot"*)
			ok root-opened-by-unit ;;
		*) bad root-opened-by-unit "extverity@vroot.service: $j" ;;
		esac
		;;
	esac

	case $mode in
	good)
		if out=$(read_all /dev/null); then
			ok "all-files-read ($(wc -l <"$list") files)"
		else
			bad all-files-read "$(echo "$out" | head -n 3)"
		fi
		;;
	bad)
		ino=$(stat -c %i "$victim")
		if out=$("$victim" --version 2>&1); then
			bad victim-exec-eio "$victim ran: $out"
		else
			case $out in
			*"Input/output error"*) ok "victim-exec-eio ($out)" ;;
			*) bad victim-exec-eio "$out" ;;
			esac
		fi
		if out=$(cat "$victim" 2>&1 >/dev/null); then
			bad victim-read-eio "reading $victim succeeded"
		else
			case $out in
			*"Input/output error"*) ok victim-read-eio ;;
			*) bad victim-read-eio "$out" ;;
			esac
		fi
		# journald reads the kernel log on its own time.
		i=0
		while :; do
			j=$(journalctl -k -o cat --no-pager 2>&1 | grep 'extverity: .*corrupted')
			case $j in *"file inode $ino "*) break ;; esac
			[ $i -ge 20 ] && break
			i=$((i + 1))
			sleep 0.5
		done
		echo "$j" | sed 's/^/EVT-JOURNAL /'
		case $j in
		*"file inode $ino "*) ok journal-names-victim ;;
		*) bad journal-names-victim "no report of inode $ino in journalctl -k" ;;
		esac
		if out=$(read_all "$victim"); then
			ok other-files-read
		else
			bad other-files-read "$(echo "$out" | head -n 3)"
		fi
		;;
	*) bad mode "evt.mode='$mode'" ;;
	esac
}

# In a subshell: a check that dies leaves a non-zero status.
(checks)
echo "EVT-END exit=$?"
echo "EVT-POWEROFF"
systemctl --force poweroff
