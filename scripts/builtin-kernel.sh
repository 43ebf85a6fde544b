#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the kernel of tests/vm/t-vm-builtin.sh: Linux 6.1 from Debian's
# /usr/src/linux-source-6.1.tar.xz with build/extverity-linux-6.1.patch
# (make kernel-patch) applied and dm-extverity built in, so that
# dm-mod.create= sets up a verified root with no initramfs
# (docs/kernel-patch.md).
#
#   scripts/builtin-kernel.sh [kernel|path]      (default: kernel)
#
# kernel  unpack the tarball once into build/builtin-kernel/linux (its own
#         copy: build/debug-kernel is another kernel's), apply the patch,
#         configure `make tinyconfig` + scripts/builtin-kernel.config and
#         build bzImage.  Leaves build/builtin-kernel/bzImage, config,
#         kernelrelease and build-seconds.  Nothing is done when the
#         tarball, the fragment and the patch (hence the driver's sources)
#         are unchanged and bzImage exists; a changed patch is reverted and
#         the new one applied to the same tree, so only what changed is
#         recompiled.
# path    print the bzImage's path (fails when it is not built)
#
# JOBS (default: nproc) sets make -j.
set -euo pipefail
TOPDIR=$(cd "$(dirname "$0")/.." && pwd)
SRC_TAR=${LINUX_SOURCE_TAR:-/usr/src/linux-source-6.1.tar.xz}
FRAG=$TOPDIR/scripts/builtin-kernel.config
OUT=$TOPDIR/build/builtin-kernel
TREE=$OUT/linux
PATCH=$OUT/extverity-linux-6.1.patch
JOBS=${JOBS:-$(nproc)}

die() { echo "builtin-kernel: $*" >&2; exit 1; }
log() { echo "builtin-kernel: $*" >&2; }

# What a build depends on: the tarball (path, size, mtime), the fragment
# and the patch.
signature() {
	{ stat -L -c '%n %s %Y' "$SRC_TAR"; cat "$FRAG" "$PATCH"; } |
		sha256sum | cut -d' ' -f1
}

unpack() {
	log "unpacking $SRC_TAR"
	rm -rf "$TREE" "$OUT/linux-source-6.1" "$OUT/applied.patch"
	mkdir -p "$OUT"
	tar -xf "$SRC_TAR" -C "$OUT"
	mv "$OUT/linux-source-6.1" "$TREE"
	stat -L -c '%n %s %Y' "$SRC_TAR" >"$TREE/.evt-source"
}

# The tree as the tarball had it plus the new patch: revert the patch the
# last build applied (a fresh unpack when that fails or the tarball
# changed), then apply.
patch_tree() {
	local have=''
	[ -f "$TREE/.evt-source" ] && have=$(cat "$TREE/.evt-source")
	if [ ! -f "$TREE/Makefile" ] || [ "$have" != "$(stat -L -c '%n %s %Y' "$SRC_TAR")" ]; then
		unpack
	elif [ -f "$OUT/applied.patch" ]; then
		if cmp -s "$OUT/applied.patch" "$PATCH"; then
			return 0
		fi
		log "reverting the previous patch"
		if ! (cd "$TREE" && patch -p1 -R -s --force <"$OUT/applied.patch" >/dev/null); then
			unpack
		fi
		rm -f "$OUT/applied.patch"
	fi
	# New files keep their patch-time mtimes, so make rebuilds them.
	(cd "$TREE" && patch -p1 -s --force <"$PATCH") || die "$PATCH does not apply"
	cp "$PATCH" "$OUT/applied.patch"
}

check_config() {
	local line sym bad=0
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*)
			grep -qxF -- "$line" "$TREE/.config" || {
				log "wanted $line, got: $(grep -E "^(# )?${line%%=*}[= ]" "$TREE/.config" || echo unset)"
				bad=1
			} ;;
		"# CONFIG_"*" is not set")
			sym=${line#\# }
			sym=${sym%% *}
			grep -qE "^$sym=[ym]" "$TREE/.config" && {
				log "wanted $sym off, got: $(grep -E "^$sym=" "$TREE/.config")"
				bad=1
			} ;;
		esac
	done <"$FRAG"
	return $bad
}

build_kernel() {
	[ -r "$SRC_TAR" ] || die "no $SRC_TAR (apt-get install linux-source-6.1)"
	mkdir -p "$OUT"
	"$TOPDIR/scripts/kernel-patch.sh" 6.1 "$PATCH"
	local sig
	sig=$(signature)
	if [ -f "$OUT/bzImage" ] && [ -f "$OUT/kernelrelease" ] &&
		[ "$(cat "$OUT/signature" 2>/dev/null)" = "$sig" ]; then
		log "up to date: $OUT/bzImage ($(cat "$OUT/kernelrelease"), built in $(cat "$OUT/build-seconds" 2>/dev/null || echo '?') s)"
		return 0
	fi
	rm -f "$OUT/signature"
	local start
	start=$(date +%s)
	patch_tree
	log "configuring (tinyconfig + $FRAG)"
	make -C "$TREE" -s tinyconfig >/dev/null
	(cd "$TREE" && scripts/kconfig/merge_config.sh -m .config "$FRAG" >/dev/null)
	make -C "$TREE" -s olddefconfig >/dev/null
	check_config || die "the config fragment did not apply (see above)"
	log "building bzImage with -j$JOBS"
	make -C "$TREE" -s -j"$JOBS" bzImage
	cp "$TREE/arch/x86/boot/bzImage" "$OUT/bzImage"
	cp "$TREE/.config" "$OUT/config"
	make -C "$TREE" -s kernelrelease >"$OUT/kernelrelease"
	echo $(($(date +%s) - start)) >"$OUT/build-seconds"
	echo "$sig" >"$OUT/signature"
	log "built $OUT/bzImage ($(cat "$OUT/kernelrelease")) in $(cat "$OUT/build-seconds") s"
}

case ${1:-kernel} in
kernel) build_kernel ;;
path)
	[ -f "$OUT/signature" ] && [ -f "$OUT/bzImage" ] || die "not built (run $0)"
	echo "$OUT/bzImage" ;;
*) die "usage: $0 [kernel|path]" ;;
esac
