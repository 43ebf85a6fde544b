# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Debian's initramfs with scripts/initramfs-tools (docs/boot.md), for the
# boot tests (t-vm-initramfs.sh, t-vm-debian-root.sh).  Source it after
# tests/lib.sh and tests/vm/vm-lib.sh.
#
#   debian_initramfs_skip   prints why this kernel cannot have one (empty:
#                           it can): mkinitramfs reads /lib/modules/$KVER,
#                           so an unpacked kernel (VM_MODROOT: 7.3) or the
#                           debug kernel is skipped
#   debian_initramfs_why    prints what is missing to build and boot one
#                           (empty: nothing): qemu and the kernel
#                           (vm_prereqs), the module, the tool, mkinitramfs
#   debian_initramfs DIR LABEL
#                           builds DIR/initrd.img with Debian's mkinitramfs
#                           from a private configuration directory DIR/conf
#                           (MODULES=list: virtio_pci, virtio_blk, ext4,
#                           dm-mod; the project's hook and local-top script
#                           copied in; EXTVERITY_KO and EXTVERITY_TOOL point
#                           at this tree's module and tool: nothing is
#                           installed on the host), records LABEL/mkinitramfs
#                           and LABEL/contains-FILE for the files the hook
#                           must add; returns 1 when mkinitramfs failed.
#                           DEBIAN_INITRAMFS_EXTRA=DIR adds DIR's hooks/*
#                           and scripts/local-top/* to the configuration
#                           (make bench-boot's dm-verity opener)

debian_initramfs_skip() {
	if [ -n "$VM_MODROOT" ] || [ "$VM_DEBUG_KERNEL" = 1 ]; then
		echo "mkinitramfs uses /lib/modules/$KVER, not another kernel's tree"
	fi
}

debian_initramfs_why() {
	local why
	why=$(vm_prereqs)
	[ -z "$why" ] && [ ! -f "$MODULE" ] && why="kernel module $MODULE not built (make module)"
	[ -z "$why" ] && [ ! -x "$EXTVERITY_RELEASE" ] && why="tool $EXTVERITY_RELEASE not built (make tools)"
	[ -z "$why" ] && [ ! -x /usr/sbin/mkinitramfs ] && why="mkinitramfs not installed (initramfs-tools)"
	echo "$why"
}

debian_initramfs() {
	local w=$1 label=$2 conf=$1/conf initrd=$1/initrd.img start f g
	rm -rf "$conf"
	mkdir -p "$conf/conf.d" "$conf/hooks" "$conf/scripts/local-top"
	cat >"$conf/initramfs.conf" <<EOF2
MODULES=list
BUSYBOX=auto
KEYMAP=n
COMPRESS=zstd
DEVICE=
NFSROOT=auto
RUNSIZE=10%
FSTYPE=ext4
EOF2
	printf '%s\n' virtio_pci virtio_blk ext4 dm-mod >"$conf/modules"
	install -m 755 "$TOPDIR/scripts/initramfs-tools/hooks/extverity" "$conf/hooks/extverity"
	install -m 755 "$TOPDIR/scripts/initramfs-tools/scripts/local-top/extverity" \
		"$conf/scripts/local-top/extverity"
	if [ -n "${DEBIAN_INITRAMFS_EXTRA:-}" ]; then
		for f in "$DEBIAN_INITRAMFS_EXTRA"/hooks/* "$DEBIAN_INITRAMFS_EXTRA"/scripts/local-top/*; do
			install -m 755 "$f" "$conf/${f#"$DEBIAN_INITRAMFS_EXTRA"/}"
		done
	fi
	start=$(date +%s)
	if EXTVERITY_KO=$MODULE EXTVERITY_TOOL=$EXTVERITY_RELEASE \
		mkinitramfs -d "$conf" -o "$initrd" "$KVER" >"$w/mkinitramfs.log" 2>&1; then
		pass "$label/mkinitramfs ($(($(date +%s) - start)) s, $(($(stat -c %s "$initrd") >> 10)) KiB)"
	else
		fail "$label/mkinitramfs: $(tail -n 3 "$w/mkinitramfs.log" | tr '\n' '|')"
		return 1
	fi
	lsinitramfs "$initrd" >"$w/initrd.list" 2>/dev/null
	for f in usr/sbin/extverity scripts/local-top/extverity \
		"usr/lib/modules/$KVER/updates/dm-extverity.ko" "usr/lib/modules/$KVER/kernel/drivers/md/dm-bufio.ko"; do
		g=${f#usr/}
		# Fixed strings: a release such as 6.12.118+deb12 is no regex.
		if grep -qxF -e "$g" -e "usr/$g" "$w/initrd.list"; then
			pass "$label/contains-$g"
		else
			fail "$label/contains-$g: not in lsinitramfs $initrd"
		fi
	done
}
