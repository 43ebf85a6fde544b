#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dracut module of make bench-boot (bench/boot.sh), for a kernel
# mkinitramfs cannot build for (7.3, unpacked): dm-verity opens the root as
# /dev/mapper/vroot from bench.verity=, as bench/boot/scripts/local-top/
# bench-verity does under initramfs-tools.  Not installed anywhere: the
# bench copies it into its private dracut tree (tests/vm/debian-dracut.sh).
# shellcheck shell=bash disable=SC2154 # dracut's variables

# called by dracut
check() {
	return 0
}

# called by dracut
depends() {
	echo dm
	return 0
}

# called by dracut
installkernel() {
	instmods dm-verity
}

# called by dracut
install() {
	inst_multiple dmsetup
	inst_hook cmdline 31 "$moddir/parse-bench-verity.sh"
	inst_script "$moddir/bench-verity-root.sh" /sbin/bench-verity-root
	dracut_need_initqueue
}
