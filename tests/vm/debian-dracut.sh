# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Debian's dracut (dracut-core) with scripts/dracut/90extverity
# (docs/boot.md), for t-vm-debian-root.sh.  Source it after tests/lib.sh
# and tests/vm/vm-lib.sh.
#
#   debian_dracut_why       prints what is missing to build one (empty:
#                           nothing)
#   debian_dracut DIR LABEL FLAVOUR
#                           builds DIR/initrd-FLAVOUR.img for $KVER with
#                           Debian's dracut, --no-hostonly, from a private
#                           configuration (an empty dracut.conf and
#                           directory) and a private copy of
#                           /usr/lib/dracut with the module added
#                           (dracutbasedir: nothing is installed on the
#                           host), the modules from
#                           $VM_MODROOT/lib/modules/$KVER (an unpacked or
#                           built kernel: 7.3, the debug kernel); FLAVOUR "dracut" leaves systemd out (the
#                           module's cmdline hook and initqueue job open
#                           the root), "systemd" puts systemd in (the
#                           generator does).  EXTVERITY_KO, EXTVERITY_TOOL
#                           and EXTVERITY_GENERATOR point at this tree's
#                           builds.  DEBIAN_DRACUT_EXTRA= names more
#                           module directories (NNname) to copy in and
#                           include (make bench-boot's dm-verity opener).
#                           Records LABEL/dracut-FLAVOUR and
#                           LABEL/FLAVOUR-contains-FILE for what the module
#                           must add; returns 1 when dracut failed

debian_dracut_why() {
	local why
	why=$(debian_initramfs_why)
	[ -z "$why" ] && [ ! -x /usr/bin/dracut ] && why="dracut not installed (dracut-core)"
	[ -z "$why" ] && [ ! -x "$EXTVERITY_GENERATOR_RELEASE" ] &&
		why="generator $EXTVERITY_GENERATOR_RELEASE not built (make tools)"
	echo "$why"
}

debian_dracut() {
	local w=$1 label=$2 flavour=$3 base=$1/dracut-base initrd mods start f bufio d
	initrd=$w/initrd-$flavour.img
	if [ ! -d "$base" ]; then
		cp -a /usr/lib/dracut "$base"
		for d in "$TOPDIR/scripts/dracut/90extverity" ${DEBIAN_DRACUT_EXTRA:-}; do
			cp -a "$d" "$base/modules.d/"
		done
		mkdir -p "$w/dracut.conf.d"
		: >"$w/dracut.conf"
	fi
	# The smallest set that boots a root from a dm device; dracut adds
	# what they depend on.
	mods="base kernel-modules rootfs-block udev-rules dm fs-lib extverity"
	for d in ${DEBIAN_DRACUT_EXTRA:-}; do
		d=${d##*/}
		mods="$mods ${d#[0-9][0-9]}"
	done
	[ "$flavour" = systemd ] && mods="$mods systemd systemd-initrd dracut-systemd"
	start=$(date +%s)
	# shellcheck disable=SC2046 # no word, or two
	if dracutbasedir=$base EXTVERITY_KO=$MODULE EXTVERITY_TOOL=$EXTVERITY_RELEASE \
		EXTVERITY_GENERATOR=$EXTVERITY_GENERATOR_RELEASE \
		dracut --quiet --force --no-hostonly --no-early-microcode --reproducible \
		--conf "$w/dracut.conf" --confdir "$w/dracut.conf.d" \
		--tmpdir "$w" --compress zstd --kver "$KVER" --modules "$mods" \
		$([ -n "$VM_MODROOT" ] && echo --kmoddir "$VM_MODROOT/lib/modules/$KVER") \
		--drivers "virtio_pci virtio_blk ext4" "$initrd" >"$w/dracut-$flavour.log" 2>&1; then
		pass "$label/dracut-$flavour ($(($(date +%s) - start)) s, $(($(stat -c %s "$initrd") >> 10)) KiB)"
	else
		fail "$label/dracut-$flavour: $(tail -n 3 "$w/dracut-$flavour.log" | tr '\n' '|')"
		return 1
	fi
	lsinitrd "$initrd" 2>/dev/null | awk '{ print $NF }' >"$w/initrd-$flavour.list"
	# dm-bufio compressed as the kernel's modules are (Debian's: xz).
	bufio=lib/modules/$KVER/kernel/drivers/md/dm-bufio.ko
	[ -f "$VM_MODROOT/$bufio.xz" ] && bufio=$bufio.xz
	for f in usr/sbin/extverity usr/sbin/dmsetup \
		"lib/modules/$KVER/updates/dm-extverity.ko" "$bufio"; do
		want_in_dracut "$w" "$label" "$flavour" "$f"
	done
	if [ "$flavour" = systemd ]; then
		want_in_dracut "$w" "$label" "$flavour" usr/lib/systemd/system-generators/extverity-generator
		want_in_dracut "$w" "$label" "$flavour" usr/lib/systemd/system/veritysetup.target
	else
		want_in_dracut "$w" "$label" "$flavour" usr/sbin/extverity-root
		want_in_dracut "$w" "$label" "$flavour" usr/lib/dracut/hooks/cmdline/30-parse-extverity.sh
	fi
}

# want_in_dracut DIR LABEL FLAVOUR FILE: FILE is in the image, under
# /usr or through the merged /usr's links.
want_in_dracut() {
	local g=${4#usr/}
	if grep -qxF -e "$g" -e "usr/$g" "$1/initrd-$3.list"; then
		pass "$2/$3-contains-$g"
	else
		fail "$2/$3-contains-$g: not in lsinitrd $1/initrd-$3.img"
	fi
}
