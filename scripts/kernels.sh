#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernels Debian users run, and how to build for and boot each one
# (docs/testing.md "Kernels"):
#
#   6.1    Debian 12's default (linux-image-cloud-amd64, by apt)
#   6.12   Debian 12's point-release kernel and Debian 13's default: the
#          newest installed linux-image-6.12.*+deb12-cloud-amd64 (by apt,
#          scripts/install-deps.sh)
#   7.3    Debian 13 backports, unpacked under build/kernels/7.3 without
#          installing anything (scripts/kernel-7.3.sh)
#
#   scripts/kernels.sh list              the series, one a line
#   scripts/kernels.sh prepare SERIES    make the kernel and its headers usable
#   scripts/kernels.sh module SERIES     dm-extverity.ko for it, built from a
#                                        copy of the sources in
#                                        build/kernels/SERIES/module
#   scripts/kernels.sh env SERIES        NAME=VALUE lines: the harness
#                                        variables (KVER, VM_KERNEL,
#                                        VM_MODROOT, VM_KCONFIG, MODULE) and
#                                        the build's (KDIR, KMAKEFLAGS)
#   scripts/kernels.sh kdir SERIES|KVER  the build tree, for make KVER=
#   scripts/kernels.sh get SERIES NAME   one variable of env
#   scripts/kernels.sh sparse SERIES     a sparse that can check code
#                                        against its headers (make C=1
#                                        CHECK=), for scripts/lint.sh
#   scripts/kernels.sh run SERIES CMD... prepare, build the module, then run
#                                        CMD with env's variables exported
#                                        (make demo KVER=, make bench KVER=)
#
# SERIES may also be a full release (6.12.118+deb12-cloud-amd64): its
# series is taken from it, and it must be the one installed.
set -euo pipefail
TOPDIR=$(cd "$(dirname "$0")/.." && pwd)
SERIES_ALL="6.1 6.12 7.3"

die() { echo "kernels: $*" >&2; exit 1; }

# series_of ARG: 6.1, 6.12 or 7.3 for a series or a release of one.
series_of() {
	local s
	for s in $SERIES_ALL; do
		case $1 in "$s" | "$s".*) echo "$s"; return ;; esac
	done
	die "unknown kernel '$1' (one of: $SERIES_ALL, or a release of one)"
}

# apt_release SERIES: the newest release of SERIES with both its image and
# its headers installed.  Debian's releases sort with sort -V.
apt_release() {
	local pat=$1 r best=''
	for r in $(ls /boot 2>/dev/null | sed -n "s/^vmlinuz-\($pat\)\$/\1/p" | sort -V); do
		[ -f "/usr/src/linux-headers-$r/Makefile" ] && best=$r
	done
	[ -n "$best" ] || die "no $pat kernel with its headers installed (scripts/install-deps.sh)"
	echo "$best"
}

env_apt() {
	local krel=$1
	cat <<EOF
KVER=$krel
VM_KERNEL=/boot/vmlinuz-$krel
VM_MODROOT=
VM_KCONFIG=/boot/config-$krel
KDIR=/usr/src/linux-headers-$krel
KMAKEFLAGS=
EOF
}

# print_env SERIES: the variables, MODULE included.
print_env() {
	local s=$1
	case $s in
	6.1) env_apt "$(apt_release '6\.1\.[0-9]*-[0-9]*-cloud-amd64')" ;;
	6.12) env_apt "$(apt_release '6\.12\.[0-9]*+deb12-cloud-amd64')" ;;
	7.3) "$TOPDIR/scripts/kernel-7.3.sh" env ;;
	esac
	echo "MODULE=$TOPDIR/build/kernels/$s/module/drivers/md/dm-extverity.ko"
}

# get SERIES NAME: one variable of print_env.
get() {
	print_env "$1" | sed -n "s/^$2=//p"
}

build_module() {
	local s=$1 out=$TOPDIR/build/kernels/$1/module kdir flags
	kdir=$(get "$s" KDIR)
	flags=$(get "$s" KMAKEFLAGS)
	mkdir -p "$out/drivers/md" "$out/include"
	# A copy: Kbuild writes its objects next to the sources, and each
	# kernel needs its own.  cp -p keeps mtimes: unchanged files are not
	# recompiled.  A source removed here is removed there too.
	rm -f "$out"/drivers/md/*.[ch]
	cp -p "$TOPDIR/Kbuild" "$out/Kbuild"
	cp -p "$TOPDIR/drivers/md/Kbuild" "$TOPDIR"/drivers/md/*.[ch] "$out/drivers/md/"
	rm -f "$out"/drivers/md/*.mod.c
	cp -pr "$TOPDIR/include/." "$out/include/"
	# shellcheck disable=SC2086 # KMAKEFLAGS is a list of words
	make -C "$kdir" -s M="$out" $flags modules
	echo "kernels: built $out/drivers/md/dm-extverity.ko ($(get "$s" KVER))" >&2
}

cmd=${1:-}
case $cmd in
list) printf '%s\n' $SERIES_ALL ;;
prepare)
	s=$(series_of "${2:?series}")
	case $s in
	7.3) "$TOPDIR/scripts/kernel-7.3.sh" prepare ;;
	*) print_env "$s" >/dev/null ;;	# dies when not installed
	esac ;;
module) build_module "$(series_of "${2:?series}")" ;;
env) print_env "$(series_of "${2:?series}")" ;;
kdir)
	s=$(series_of "${2:?series or release}")
	k=$(get "$s" KDIR)
	[ "$2" = "$s" ] || [ "$2" = "$(get "$s" KVER)" ] ||
		die "kernel $2 is not the $s kernel here ($(get "$s" KVER))"
	echo "$k" ;;
get) get "$(series_of "${2:?series}")" "${3:?variable}" ;;
sparse)
	case $(series_of "${2:?series}") in
	7.3) "$TOPDIR/scripts/kernel-7.3.sh" sparse ;;
	*) command -v sparse || die "sparse is not installed" ;;
	esac
	;;
run)
	s=$(series_of "${2:?series}")
	shift 2
	"$0" prepare "$s"
	build_module "$s"
	while IFS='=' read -r name value; do
		export "$name=$value"
	done < <(print_env "$s")
	exec "$@" ;;
*) die "usage: $0 list | prepare SERIES | module SERIES | env SERIES | kdir SERIES | get SERIES NAME | run SERIES CMD..." ;;
esac
