#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the initramfs the VM tests boot: static busybox, dmsetup and the
# extverity tool with the libraries ldd lists, the kernel modules a virtio
# disk and device-mapper need, our dm-extverity.ko when it has been built,
# and a generic /init (tests/vm/init) that runs the scenario found on the
# control disk.
#
# Usage: tests/vm/mkinitramfs.sh [OUTPUT]      (default build/vm/initramfs.cpio.gz)
#   KVER     kernel version (default: the newest in $VM_MODROOT/lib/modules)
#   VM_MODROOT  where that kernel's modules are installed (default: empty,
#            i.e. /lib/modules/$KVER; the debug kernel's are under
#            build/debug-kernel/modroot).  A module of the list below that
#            the kernel has built in (modules.builtin) is left out.
#   EXTVERITY_RELEASE, MODULE   the tool and the .ko to include (default:
#            tools/extverity and drivers/md/dm-extverity.ko)
#   VM_EXTRA_BINS  more binaries for /sbin, with their libraries, each when
#            installed (default /sbin/lvm, and util-linux's losetup, whose
#            --sector-size busybox's lacks: a loop device with 4096-byte
#            logical blocks stands for a 4Kn disk; call it /sbin/losetup,
#            as busybox sh runs its own applet before looking at PATH)
#   VM_OPT_MODULES  modules a scenario loads itself (opt_modprobe in
#            guest-lib.sh), each when the kernel has it (default: xfs btrfs
#            erofs dm-delay dm-zero mq-deadline; the debug kernel has only
#            the dm ones, and mq-deadline built in).  Not loaded at boot: btrfs alone takes seconds to
#            initialise under TCG.
#
# The image is rebuilt only when an input changed: a signature of every
# input (path, size, mtime) is kept next to it.  Prints the output path.
set -eu
TOPDIR=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$TOPDIR/build/vm/initramfs.cpio.gz}
: "${VM_MODROOT:=}"
: "${KVER:=$(ls "$VM_MODROOT/lib/modules" | sort -V | tail -n 1)}"
MODDIR=$VM_MODROOT/lib/modules/$KVER

# Loaded by /init in this order (dependencies are added in front).  A|B:
# the first of A, B the kernel has, as a module or built in (7.3 has
# SHA-256 in its library, built in, where 6.x has sha256-ssse3; its
# sha512_generic is called sha512).
MODULES="virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev
	virtio_pci virtio_blk dm-mod dm-bufio reed_solomon dm-verity dm-flakey loop
	sha256-ssse3|sha256 sha512_generic|sha512"
BINARIES="/bin/busybox /usr/sbin/dmsetup"
# Optional: put in /sbin when installed (lvm for tests/vm/scenarios/cli.sh,
# losetup for devices.sh).
EXTRA_BINS=""
for b in ${VM_EXTRA_BINS-/sbin/lvm /usr/sbin/losetup}; do
	[ -x "$b" ] && EXTRA_BINS="$EXTRA_BINS $b"
done
TOOL=${EXTVERITY_RELEASE:-$TOPDIR/tools/extverity}
EXTMOD=${MODULE:-$TOPDIR/drivers/md/dm-extverity.ko}
INIT=$TOPDIR/tests/vm/init

die() { echo "mkinitramfs: $*" >&2; exit 1; }
[ -d "$MODDIR" ] || die "no modules for kernel $KVER in $MODDIR"

# modpath NAME: the module's path relative to $MODDIR, from modules.dep.
modpath() {
	local re=${1//[-_]/[-_]}
	grep -Eo "^[^:]*/${re}\.ko(\.xz|\.zst|\.gz)?:" "$MODDIR/modules.dep" |
		head -n 1 | tr -d :
}

# builtin NAME: the kernel has the module built in.
builtin() {
	local re=${1//[-_]/[-_]}
	[ -f "$MODDIR/modules.builtin" ] &&
		grep -Eq "/${re}\.ko\$" "$MODDIR/modules.builtin"
}

# Resolve every module with its dependencies, dependencies first, into the
# array named by ORDER, each once (seen).
declare -A seen=()
order=()
order_opt=()
add_module() {
	local path=$1 dep
	[ -n "${seen[$path]:-}" ] && return 0
	seen[$path]=1
	for dep in $(grep -E "^$path:" "$MODDIR/modules.dep" | cut -d: -f2); do
		add_module "$dep"
	done
	local -n list=$ORDER
	list+=("$path")
}
ORDER=order
for alts in $MODULES; do
	p='' found=''
	for m in ${alts//|/ }; do
		p=$(modpath "$m")
		[ -n "$p" ] && break
		builtin "$m" && { found=builtin; break; }
	done
	[ -n "$found" ] && continue
	[ -n "$p" ] || die "module ${alts//|/ or } not found in $MODDIR/modules.dep"
	add_module "$p"
done
# Optional modules: /modules/opt_NAME lists what NAME needs loaded that
# the boot has not loaded, in order (empty when built in); a module the
# kernel lacks gets no list.  Each list stands alone: xfs and btrfs both
# list libcrc32c.
declare -A opt_lists=() boot_seen=()
for p in "${!seen[@]}"; do boot_seen[$p]=1; done
for m in ${VM_OPT_MODULES-xfs btrfs erofs dm-delay dm-zero mq-deadline}; do
	p=$(modpath "$m")
	seen=()
	for q in "${!boot_seen[@]}"; do seen[$q]=1; done
	opt=()
	ORDER=opt
	if [ -n "$p" ]; then
		add_module "$p"
	elif ! builtin "$m"; then
		continue
	fi
	opt_lists[$m]="${opt[*]}"
	order_opt+=("${opt[@]}")
done

libs_of() {
	ldd "$1" 2>/dev/null | grep -Eo '(/[^ ]+)' | grep -v "^$1\$" || true
}
files=("$INIT" "$0")
for b in $BINARIES $EXTRA_BINS; do files+=("$b"); done
[ -x "$TOOL" ] && files+=("$TOOL")
[ -f "$EXTMOD" ] && files+=("$EXTMOD")
for p in "${order[@]}" "${order_opt[@]}"; do files+=("$MODDIR/$p"); done
libs=$(for b in $BINARIES $EXTRA_BINS $([ -x "$TOOL" ] && echo "$TOOL"); do libs_of "$b"; done | sort -u)
for l in $libs; do files+=("$l"); done

sig=$(for f in "${files[@]}"; do stat -L -c '%n %s %Y' "$f"; done
	echo "$KVER $MODDIR ${!opt_lists[*]}")
sig=$(sha256sum <<<"$sig" | cut -d' ' -f1)
if [ -f "$OUT" ] && [ "$(cat "$OUT.sig" 2>/dev/null)" = "$sig" ]; then
	echo "$OUT"
	exit 0
fi

root=$(mktemp -d)
trap 'rm -rf "$root" "$OUT.tmp.$$" "$OUT.sig.tmp.$$"' EXIT
mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,run,mnt,ctl,results,modules,lib64}
mknod "$root/dev/console" c 5 1
mknod "$root/dev/null" c 1 3
cp "$INIT" "$root/init"
chmod 755 "$root/init"
cp /bin/busybox "$root/bin/busybox"
cp /usr/sbin/dmsetup "$root/sbin/dmsetup"
[ -x "$TOOL" ] && cp "$TOOL" "$root/bin/extverity"
for b in $EXTRA_BINS; do cp "$b" "$root/sbin/"; done
for l in $libs; do
	mkdir -p "$root$(dirname "$l")"
	cp -L "$l" "$root$l"
done
# put_module PATH LIST: copy $MODDIR/PATH to /modules, uncompressed, and
# append its file name to LIST.
put_module() {
	local name
	name=$(basename "$1")
	case $name in
	*.xz) xz -dc "$MODDIR/$1" >"$root/modules/${name%.xz}"; name=${name%.xz} ;;
	*.zst) zstd -qdc "$MODDIR/$1" >"$root/modules/${name%.zst}"; name=${name%.zst} ;;
	*.gz) gzip -dc "$MODDIR/$1" >"$root/modules/${name%.gz}"; name=${name%.gz} ;;
	*) cp "$MODDIR/$1" "$root/modules/$name" ;;
	esac
	echo "$name" >>"$2"
}
: >"$root/modules/load"
for p in "${order[@]}"; do put_module "$p" "$root/modules/load"; done
for m in "${!opt_lists[@]}"; do
	: >"$root/modules/opt_$m"
	for p in ${opt_lists[$m]}; do put_module "$p" "$root/modules/opt_$m"; done
done
# Not in the load list: scenarios insert it themselves, to test the result.
[ -f "$EXTMOD" ] && cp "$EXTMOD" "$root/modules/dm-extverity.ko"
echo "$KVER" >"$root/modules/kver"

# Tests running at once (tests/run TESTS_JOBS) may build the same OUTPUT:
# each writes its own temporary files and renames them into place.
mkdir -p "$(dirname "$OUT")"
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) |
	gzip -1 >"$OUT.tmp.$$"
echo "$sig" >"$OUT.sig.tmp.$$"
mv "$OUT.tmp.$$" "$OUT"
mv "$OUT.sig.tmp.$$" "$OUT.sig"
echo "$OUT"
