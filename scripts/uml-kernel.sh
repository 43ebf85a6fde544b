#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the User-Mode Linux kernel of `make bench-uml` (bench/uml.sh): Linux
# 6.1 from Debian's /usr/src/linux-source-6.1.tar.xz as ARCH=um, where
# kernel code runs natively as a host process, so hashing costs what it
# costs on hardware (TCG emulates the CPU).  dm-verity and dm-bufio are
# built in; dm-extverity.ko is built against the tree.
#
#   scripts/uml-kernel.sh [kernel|module|all]     (default: all)
#
# kernel  unpack the tarball once into build/uml-kernel/linux (its own
#         copy), `make ARCH=um defconfig` plus the options below, optimised
#         for speed and without debug info, with scripts/uml-xstate.patch
#         (hosts with AMX); leaves build/uml-kernel/linux-um.  Nothing is
#         done when the tarball, the patch and the options are unchanged.
# module  dm-extverity.ko for it, from a copy of the sources in
#         build/uml-module (leaves build/uml-module/drivers/md/dm-extverity.ko)
#
# JOBS (default: nproc) sets make -j.
set -euo pipefail
TOPDIR=$(cd "$(dirname "$0")/.." && pwd)
SRC_TAR=${LINUX_SOURCE_TAR:-/usr/src/linux-source-6.1.tar.xz}
PATCH=$TOPDIR/scripts/uml-xstate.patch
OUT=$TOPDIR/build/uml-kernel
TREE=$OUT/linux
MODOUT=$TOPDIR/build/uml-module
JOBS=${JOBS:-$(nproc)}
M=(make -C "$TREE" -s ARCH=um)

# What the bench needs (../shared/notes/uml.md): ubd disks, loop, dm with
# verity, ext4, SHA-256, devtmpfs, hostfs, the null console channel,
# modules; the rest of defconfig stays.
ENABLE="64BIT MODULES MODULE_UNLOAD BLK_DEV BLK_DEV_UBD BLK_DEV_LOOP MD
	BLK_DEV_DM DM_VERITY EXT4_FS CRYPTO_SHA256 DEVTMPFS DEVTMPFS_MOUNT
	HOSTFS NULL_CHAN CC_OPTIMIZE_FOR_PERFORMANCE DEBUG_INFO_NONE"
DISABLE="CC_OPTIMIZE_FOR_SIZE DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT
	DEBUG_INFO_DWARF4 DEBUG_INFO_DWARF5"

die() { echo "uml-kernel: $*" >&2; exit 1; }
log() { echo "uml-kernel: $*" >&2; }

signature() {
	{ stat -L -c '%n %s %Y' "$SRC_TAR"; sha256sum <"$PATCH"; echo $ENABLE / $DISABLE; } |
		sha256sum | cut -d' ' -f1
}

build_kernel() {
	local sig start o
	[ -r "$SRC_TAR" ] || die "no $SRC_TAR (apt-get install linux-source-6.1)"
	sig=$(signature)
	if [ -x "$OUT/linux-um" ] && [ "$(cat "$OUT/signature" 2>/dev/null)" = "$sig" ]; then
		log "cached: $OUT/linux-um"
		return
	fi
	if [ ! -f "$TREE/Makefile" ]; then
		log "unpacking $SRC_TAR"
		rm -rf "$TREE" "$OUT/linux-source-6.1"
		mkdir -p "$OUT"
		tar -xf "$SRC_TAR" -C "$OUT"
		mv "$OUT/linux-source-6.1" "$TREE"
	fi
	# A tree unpacked before the patch existed gets it too.
	if ! patch -d "$TREE" -p1 -R -s -f --dry-run <"$PATCH" >/dev/null 2>&1; then
		log "applying $(basename "$PATCH")"
		patch -d "$TREE" -p1 -s -f <"$PATCH" || die "$PATCH does not apply"
	fi
	start=$(date +%s)
	"${M[@]}" defconfig
	# shellcheck disable=SC2086,SC2046
	"$TREE/scripts/config" --file "$TREE/.config" \
		$(printf -- '-e %s ' $ENABLE) $(printf -- '-d %s ' $DISABLE)
	"${M[@]}" olddefconfig
	for o in $ENABLE; do
		grep -q "^CONFIG_$o=y" "$TREE/.config" || die "CONFIG_$o did not stay on"
	done
	log "building (make -j$JOBS linux modules)"
	"${M[@]}" -j"$JOBS" linux modules
	cp "$TREE/linux" "$OUT/linux-um"
	echo $(($(date +%s) - start)) >"$OUT/build-seconds"
	echo "$sig" >"$OUT/signature"
	log "built $OUT/linux-um in $(cat "$OUT/build-seconds") s"
}

build_module() {
	[ -f "$OUT/signature" ] || die "build the kernel first ($0 kernel)"
	mkdir -p "$MODOUT/drivers/md" "$MODOUT/include"
	# A copy, as scripts/debug-kernel.sh makes: Kbuild writes its objects
	# next to the sources.
	cp -p "$TOPDIR/Kbuild" "$MODOUT/Kbuild"
	cp -p "$TOPDIR/drivers/md/Kbuild" "$TOPDIR"/drivers/md/*.[ch] "$MODOUT/drivers/md/"
	rm -f "$MODOUT"/drivers/md/*.mod.c
	cp -pr "$TOPDIR/include/." "$MODOUT/include/"
	"${M[@]}" M="$MODOUT" modules
	log "built $MODOUT/drivers/md/dm-extverity.ko"
}

case ${1:-all} in
kernel) build_kernel ;;
module) build_module ;;
all) build_kernel; build_module ;;
*) die "usage: $0 [kernel|module|all]" ;;
esac
