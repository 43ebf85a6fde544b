#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# extverity-root [--check] DATA,HASH,ROOT_DIGEST[,OPTION...]
#
# dracut without systemd (module-setup.sh): opens the verified root as
# /dev/mapper/vroot, as the initramfs-tools script does (docs/boot.md).
# Run by the initqueue on each of its rounds until the device exists: it
# does nothing while DATA or HASH is missing, opens the root once both are
# there, and when that fails logs why and exits 1: the queue's job
# (parse-extverity.sh) then stops the boot.  --check only checks the form
# of the value (parse-extverity.sh), which is then quoted into the job:
# letters, digits and / = , . _ : + - only.
#
# DATA and HASH: /dev/... paths or UUID=, LABEL=, PARTUUID=, PARTLABEL=.
# ROOT_DIGEST: hex, or '-' for /etc/extverity/vroot.roothash with its
# signature /etc/extverity/vroot.roothash.p7s.  OPTIONs: eio (the
# default), ignore_corruption, restart_on_corruption, panic_on_corruption,
# restart_on_error, panic_on_error, check_at_most_once, try_verify_in_tasklet, hash_offset=BYTES.
# shellcheck shell=dash disable=SC1091

check=
if [ "$1" = --check ]; then
	check=1
	shift
fi
[ -e /dev/mapper/vroot ] && [ -z "$check" ] && exit 0
type getarg >/dev/null 2>&1 || . /lib/dracut-lib.sh

bad() {
	echo "extverity.root=$spec: $*" >&2
	exit 1
}

spec=$1
case $spec in
*[!A-Za-z0-9/=,._:+-]*) bad "only letters, digits and / = , . _ : + - may be in the value" ;;
esac
old_ifs=$IFS
IFS=,
# shellcheck disable=SC2086
set -- $spec
IFS=$old_ifs
[ $# -ge 3 ] || bad "want DATA,HASH,ROOT_DIGEST[,OPTION...]"
data=$1 hash=$2 digest=$3
shift 3
case $digest in
-)
	digest="--root-hash-file=/etc/extverity/vroot.roothash --root-hash-signature=/etc/extverity/vroot.roothash.p7s"
	;;
*[!0-9a-fA-F]*) bad "root digest '$digest' is not hex" ;;
esac
opts=
for o in "$@"; do
	case $o in
	eio) ;;
	ignore_corruption | restart_on_corruption | panic_on_corruption | \
		restart_on_error | panic_on_error | check_at_most_once)
		opts="$opts --$(echo "$o" | tr _ -)"
		;;
	try_verify_in_tasklet) opts="$opts --use-tasklets" ;;
	hash_offset=*[!0-9]* | hash_offset=) bad "bad option '$o'" ;;
	hash_offset=*) opts="$opts --hash-offset=${o#hash_offset=}" ;;
	*) bad "unknown option '$o'" ;;
	esac
done
for d in "$data" "$hash"; do
	case $d in
	/dev/* | UUID=?* | LABEL=?* | PARTUUID=?* | PARTLABEL=?*) ;;
	*) bad "'$d' is not a /dev path or UUID=, LABEL=, PARTUUID=, PARTLABEL=" ;;
	esac
done
[ -n "$check" ] && exit 0

ddev=$(label_uuid_to_dev "$data")
hdev=$(label_uuid_to_dev "$hash")
# Not there yet: the next round of the initqueue tries again.
[ -b "$ddev" ] && [ -b "$hdev" ] || exit 0

modprobe -q dm-mod
if ! modprobe -q dm-extverity; then
	warn "extverity: cannot load the dm-extverity module"
	exit 1
fi
info "extverity: opening vroot: data $ddev, hash $hdev${opts:+, options$opts}"
# shellcheck disable=SC2086 # $digest and $opts: options, split on purpose
case $digest in
-*) set -- $digest "$ddev" vroot "$hdev" ;;
*) set -- "$ddev" vroot "$hdev" "$digest" ;;
esac
# shellcheck disable=SC2086
if ! why=$(extverity open $opts "$@" 2>&1); then
	warn "extverity: cannot open vroot (data $ddev, hash $hdev): $why"
	exit 1
fi
exit 0
