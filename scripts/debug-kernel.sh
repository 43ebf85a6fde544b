#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the debug kernel the VM tests can boot instead of Debian's (make
# check-debug, docs/testing.md "Debug kernel"), and dm-extverity.ko against
# it.
#
#   scripts/debug-kernel.sh [kernel|module|all|env]      (default: all)
#
# kernel  Linux 6.12 (the LTS Debian 12 and 13 share) from Debian's
#         /usr/src/linux-source-6.12.tar.xz (LINUX_SOURCE_TAR= another), unpacked
#         once into build/debug-kernel/linux, configured as `make tinyconfig`
#         plus scripts/debug-kernel.config (KASAN, lockdep, kmemleak, ...).
#         Leaves build/debug-kernel/bzImage, the modules installed under
#         build/debug-kernel/modroot/lib/modules/KVER, config, kernelrelease
#         and build-seconds.  Skipped when the source tarball, the fragment
#         and tests/keys/test-ca.pem (copied into the tree as the trusted
#         key) are unchanged since the last build and bzImage exists.
# module  dm-extverity.ko for that kernel, built from a copy of the sources
#         in build/debug-module (drivers/md/dm-extverity.ko, the Debian
#         kernel's module, is left alone), with UBSAN on for its files.
# env     print the harness variables for this kernel (VM_KERNEL, KVER,
#         VM_MODROOT, VM_KCONFIG, MODULE, VM_APPEND, VM_MEM, VM_TIME_FACTOR,
#         VM_DEBUG_KERNEL), one NAME=VALUE a line
#
# JOBS (default: nproc) sets make -j.
set -euo pipefail
TOPDIR=$(cd "$(dirname "$0")/.." && pwd)
SRC_TAR=${LINUX_SOURCE_TAR:-/usr/src/linux-source-6.12.tar.xz}
# The directory the tarball unpacks to: linux-source-6.12.
SRC_DIR=$(basename "$SRC_TAR" .tar.xz)
FRAG=$TOPDIR/scripts/debug-kernel.config
# The test CA the kernel trusts (tests/vm/t-vm-sig.sh), at the path the
# fragment's CONFIG_SYSTEM_TRUSTED_KEYS names, relative to the tree.
TEST_CA=$TOPDIR/tests/keys/test-ca.pem
TEST_CA_IN_TREE=certs/extverity-test-ca.pem
OUT=$TOPDIR/build/debug-kernel
TREE=$OUT/linux
MODOUT=$TOPDIR/build/debug-module
JOBS=${JOBS:-$(nproc)}

die() { echo "debug-kernel: $*" >&2; exit 1; }
log() { echo "debug-kernel: $*" >&2; }

# What a build depends on: the tarball (path, size, mtime), the fragment
# and the test CA.
signature() {
	{ stat -L -c '%n %s %Y' "$SRC_TAR"; cat "$FRAG" "$TEST_CA"; } | sha256sum | cut -d' ' -f1
}

# Copied only when different: an unchanged CA must not look new to make.
install_test_ca() {
	cmp -s "$TEST_CA" "$TREE/$TEST_CA_IN_TREE" ||
		cp "$TEST_CA" "$TREE/$TEST_CA_IN_TREE"
}

unpack() {
	local want have=''
	want=$(stat -L -c '%n %s %Y' "$SRC_TAR")
	[ -f "$TREE/.evt-source" ] && have=$(cat "$TREE/.evt-source")
	[ -f "$TREE/Makefile" ] && [ "$have" = "$want" ] && return 0
	log "unpacking $SRC_TAR"
	rm -rf "$TREE" "${OUT:?}/$SRC_DIR"
	mkdir -p "$OUT"
	tar -xf "$SRC_TAR" -C "$OUT"
	mv "$OUT/$SRC_DIR" "$TREE"
	echo "$want" >"$TREE/.evt-source"
}

# Every CONFIG_X=y/m line and "# CONFIG_X is not set" line of the fragment
# must hold in .config (olddefconfig drops what it cannot satisfy).
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

# Every module modules.dep names is installed (a `make M=... clean` run over
# the project deletes them).
modroot_complete() {
	local dir=$OUT/modroot/lib/modules/$1 ko
	[ -f "$dir/modules.dep" ] || return 1
	for ko in $(cut -d: -f1 "$dir/modules.dep"); do
		[ -f "$dir/$ko" ] || return 1
	done
}

build_kernel() {
	[ -r "$SRC_TAR" ] || die "no $SRC_TAR (apt-get install $SRC_DIR)"
	local sig
	sig=$(signature)
	if [ -f "$OUT/bzImage" ] && [ -f "$OUT/kernelrelease" ] && [ -f "$OUT/config" ] &&
		modroot_complete "$(cat "$OUT/kernelrelease")" &&
		[ "$(cat "$OUT/signature" 2>/dev/null)" = "$sig" ]; then
		log "up to date: $OUT/bzImage ($(cat "$OUT/kernelrelease"), built in $(cat "$OUT/build-seconds" 2>/dev/null || echo '?') s)"
		return 0
	fi
	unpack
	install_test_ca
	rm -f "$OUT/signature"
	local start
	start=$(date +%s)
	log "configuring (tinyconfig + $FRAG)"
	make -C "$TREE" -s tinyconfig >/dev/null
	(cd "$TREE" && scripts/kconfig/merge_config.sh -m .config "$FRAG" >/dev/null)
	make -C "$TREE" -s olddefconfig >/dev/null
	check_config || die "the config fragment did not apply (see above)"
	log "building bzImage and modules with -j$JOBS"
	make -C "$TREE" -s -j"$JOBS" bzImage modules
	local krel
	krel=$(make -C "$TREE" -s kernelrelease)
	rm -rf "$OUT/modroot"
	make -C "$TREE" -s modules_install INSTALL_MOD_PATH="$OUT/modroot" \
		DEPMOD=/sbin/depmod >/dev/null
	cp "$TREE/arch/x86/boot/bzImage" "$OUT/bzImage"
	cp "$TREE/.config" "$OUT/config"
	echo "$krel" >"$OUT/kernelrelease"
	echo $(($(date +%s) - start)) >"$OUT/build-seconds"
	echo "$sig" >"$OUT/signature"
	log "built $OUT/bzImage ($krel) in $(cat "$OUT/build-seconds") s"
}

build_module() {
	[ -f "$OUT/signature" ] || die "build the kernel first ($0 kernel)"
	mkdir -p "$MODOUT/drivers/md" "$MODOUT/include"
	# A copy: Kbuild writes its objects next to the sources.  cp -p keeps
	# the mtimes, so an unchanged file is not recompiled.
	cp -p "$TOPDIR/Kbuild" "$MODOUT/Kbuild"
	cp -p "$TOPDIR/drivers/md/Kbuild" "$TOPDIR"/drivers/md/*.[ch] "$MODOUT/drivers/md/"
	rm -f "$MODOUT"/drivers/md/*.mod.c
	cp -pr "$TOPDIR/include/." "$MODOUT/include/"
	make -C "$TREE" -s M="$MODOUT" UBSAN_SANITIZE=y modules
	log "built $MODOUT/drivers/md/dm-extverity.ko"
}

# no5lvl: 4-level paging.  qemu's -cpu max offers LA57, and under 5-level
# paging 6.12's KASAN misreads an interrupt that arrives while
# identify_cpu() has cleared the CPU's feature bits at boot: without LA57
# pgtable_l5_enabled() is false, KASAN's shadow is computed for 47-bit
# addresses, and the direct map (0xff11...) looks wild ("BUG: KASAN:
# wild-memory-access in do_raw_spin_lock" from handle_edge_irq, the
# interrupted RIP get_cpu_vendor+0x0; 2 of 4 boots of boot-sig once).
print_env() {
	local krel
	krel=$(cat "$OUT/kernelrelease" 2>/dev/null) || die "no debug kernel built"
	cat <<EOF
VM_DEBUG_KERNEL=1
VM_KERNEL=$OUT/bzImage
KVER=$krel
VM_MODROOT=$OUT/modroot
VM_KCONFIG=$OUT/config
MODULE=$MODOUT/drivers/md/dm-extverity.ko
VM_APPEND=pci=noacpi no5lvl
VM_MEM=2048
VM_TIME_FACTOR=3
EOF
}

case ${1:-all} in
kernel) build_kernel ;;
module) build_module ;;
all) build_kernel; build_module ;;
env) print_env ;;
*) die "usage: $0 [kernel|module|all|env]" ;;
esac
