# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The small verified root of the initramfs boot tests (t-vm-initramfs.sh,
# debug/t-vm-boot-sig.sh).  Source it after tests/lib.sh.
#
#   busybox_root DIR    builds DIR/root: a static busybox with every applet
#                       linked, dmsetup and its libraries,
#                       tests/vm/initramfs-root-init.sh as /sbin/init, an
#                       /etc/fstab giving / read-only and never checked (as
#                       docs/boot.md asks: dracut reads it), /victim (16
#                       blocks) and two files in /data; DIR/expected.sha256
#                       (also /expected.sha256 in the root); DIR/image, an
#                       ext4 image of it; DIR/hash and the root digest in
#                       DIR/root-digest (extverity format).  Returns 1 with
#                       the reason on stderr when a step fails.
#   busybox_root_why    prints what is missing (empty: nothing)

busybox_root_why() {
	local why='' t
	for t in mke2fs debugfs; do
		[ -z "$why" ] && ! command -v $t >/dev/null && why="$t not installed"
	done
	[ -z "$why" ] && ! file -L /bin/busybox | grep -q 'statically linked' &&
		why="no static /bin/busybox (busybox-static)"
	echo "$why"
}

busybox_root() {
	local w=$1 src=$1/root a lib
	mkdir -p "$src/bin" "$src/sbin" "$src/usr/bin" "$src/usr/sbin" "$src/etc" \
		"$src/dev" "$src/proc" "$src/sys" "$src/run" "$src/tmp" "$src/data"
	cp /bin/busybox "$src/bin/busybox"
	for a in $(/bin/busybox --list-full); do
		[ -e "$src/$a" ] || ln -s /bin/busybox "$src/$a"
	done
	rm -f "$src/sbin/dmsetup" "$src/usr/sbin/dmsetup"
	cp /usr/sbin/dmsetup "$src/sbin/dmsetup"
	for lib in $(ldd /usr/sbin/dmsetup | grep -o '/[^ ]*'); do
		mkdir -p "$src$(dirname "$lib")"
		cp -L "$lib" "$src$lib"
	done
	install -m 755 "$TOPDIR/tests/vm/initramfs-root-init.sh" "$src/sbin/init"
	printf '/dev/mapper/vroot\t/\text4\tro\t0 0\n' >"$src/etc/fstab"
	head -c $((16 * 4096)) /dev/urandom >"$src/victim"
	seq 1 30000 >"$src/data/numbers"
	head -c 100000 /dev/urandom >"$src/data/random"
	(cd "$src" && find . -type f ! -name expected.sha256 -print0 | sort -z |
		xargs -0 sha256sum | sed 's#  \./#  /#') >"$w/expected.sha256"
	cp "$w/expected.sha256" "$src/expected.sha256"
	mke2fs -q -t ext4 -b 4096 -d "$src" "$w/image" 32M >/dev/null ||
		{ echo "mke2fs -d failed" >&2; return 1; }
	"$EXTVERITY_RELEASE" format "$w/image" "$w/hash" >"$w/format.out" 2>&1 ||
		{ echo "extverity format: $(cat "$w/format.out")" >&2; return 1; }
	sed -n 's/^Root digest:[[:space:]]*//p' "$w/format.out" >"$w/root-digest"
	[ -s "$w/root-digest" ] || { echo "no root digest in $w/format.out" >&2; return 1; }
}
