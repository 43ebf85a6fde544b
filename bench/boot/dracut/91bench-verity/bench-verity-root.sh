#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# bench-verity-root: the initqueue job of make bench-boot's dracut module
# (parse-bench-verity.sh).  Opens the root as /dev/mapper/vroot with
# dm-verity from
#
#   bench.verity=DATA,HASH,DATA_BLOCKS,ROOT_HASH,SALT
#
# (4 KiB blocks, sha256, the tree at the start of HASH: what `veritysetup
# format` made) once DATA and HASH are there; does nothing before; exits 1
# when the open fails.
# shellcheck shell=dash disable=SC1091

[ -e /dev/mapper/vroot ] && exit 0
type getarg >/dev/null 2>&1 || . /lib/dracut-lib.sh

IFS=, read -r data hash blocks root salt <<SPEC
$(getarg bench.verity=)
SPEC
# Not there yet: the next round of the initqueue tries again.
[ -b "$data" ] && [ -b "$hash" ] || exit 0
if ! modprobe -q dm-verity; then
	warn "bench-verity: no dm-verity module"
	exit 1
fi
dmsetup create vroot --readonly --table \
	"0 $((blocks * 8)) verity 1 $data $hash 4096 4096 $blocks 1 sha256 $root $salt" || exit 1
info "bench-verity: opened vroot: data $data, hash $hash"
