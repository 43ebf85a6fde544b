#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The in-tree drop-in (docs/kernel-patch.md): Linux 6.1 with
# build/extverity-linux-6.1.patch applied and dm-extverity built in
# (scripts/builtin-kernel.sh builds it, once) boots with NO initramfs, its
# root set up by dm-mod.create= as an extverity device over two virtio
# disks (ext4 image, hash file).  The root holds a static busybox and
# tests/vm/builtin-init.sh as /sbin/init.  Three boots:
#
#   good   init runs from dm-0 "vroot" (read-only), every file reads back
#   bad    one block of /victim damaged: reading it fails with EIO, the
#          kernel's report names its inode and byte offset, the rest reads
#   sb     the hash area's superblock altered: dm-init's table load is
#          refused ("does not match the root digest"), so there is no root
#          and the kernel panics instead of running an unverified /sbin/init
#
# Skipped on the debug kernel (it boots its own kernel, no need to repeat
# it in make check-debug) and when /usr/src/linux-source-6.1.tar.xz is
# missing.  VM_ONLY="good bad sb" picks boots.
# shellcheck disable=SC1091
. "$TOPDIR/tests/lib.sh"
. "$TOPDIR/tests/vm/vm-lib.sh"

SRC_TAR=${LINUX_SOURCE_TAR:-/usr/src/linux-source-6.1.tar.xz}
if [ "$VM_DEBUG_KERNEL" = 1 ]; then
	skip "builtin: boots its own kernel (scripts/builtin-kernel.sh), not the debug kernel; runs in make check"
	finish
fi
if [ ! -r "$SRC_TAR" ]; then
	skip "builtin: no $SRC_TAR to build the kernel from (apt-get install linux-source-6.1)"
	finish
fi
for t in "$QEMU" mke2fs debugfs; do
	command -v "$t" >/dev/null || { fail "builtin: $t not installed"; finish; }
done
[ -x /bin/busybox ] && file -L /bin/busybox | grep -q 'statically linked' ||
	{ fail "builtin: no static /bin/busybox (busybox-static)"; finish; }

w=$WORKDIR/builtin
rm -rf "$w"
mkdir -p "$w"

start=$(date +%s)
if ! "$TOPDIR/scripts/builtin-kernel.sh" >"$w/kernel-build.log" 2>&1; then
	fail "builtin/kernel-build: see $w/kernel-build.log: $(tail -n 3 "$w/kernel-build.log" | tr '\n' '|')"
	finish
fi
kernel=$("$TOPDIR/scripts/builtin-kernel.sh" path)
pass "builtin/kernel-build ($(($(date +%s) - start)) s here; $(tail -n 1 "$w/kernel-build.log" | sed 's/^builtin-kernel: //'))"
kconfig=$TOPDIR/build/builtin-kernel/config
for sym in DM_EXTVERITY DM_INIT; do
	if grep -qx "CONFIG_$sym=y" "$kconfig"; then
		pass "builtin/config-$sym=y"
	else
		fail "builtin/config-$sym=y: $(grep "CONFIG_${sym}[= ]" "$kconfig" || echo unset)"
	fi
done

# The root: busybox with every applet linked, the init, a file to damage.
src=$w/root
mkdir -p "$src/bin" "$src/sbin" "$src/usr/bin" "$src/usr/sbin" \
	"$src/dev" "$src/proc" "$src/sys" "$src/data"
cp /bin/busybox "$src/bin/busybox"
for a in $(/bin/busybox --list-full); do
	[ -e "$src/$a" ] || ln -s /bin/busybox "$src/$a"
done
install -m 755 "$TOPDIR/tests/vm/builtin-init.sh" "$src/sbin/init"
head -c $((16 * 4096)) /dev/urandom >"$src/victim"
seq 1 30000 >"$src/data/numbers"
head -c 100000 /dev/urandom >"$src/data/random"
(cd "$src" && find . -type f ! -name expected.sha256 -print0 | sort -z |
	xargs -0 sha256sum | sed 's#  \./#  /#') >"$w/expected.sha256"
cp "$w/expected.sha256" "$src/expected.sha256"
mke2fs -q -t ext4 -b 4096 -d "$src" "$w/image" 16M >/dev/null
"$EXTVERITY" format "$w/image" "$w/hash" >"$w/format.out"
root=$(sed -n 's/^Root digest:[[:space:]]*//p' "$w/format.out")
# The table is the tool's, with the guest's device names.
table=$("$EXTVERITY" table "$w/image" "$w/hash" "$root") || {
	fail "builtin: extverity table failed"
	finish
}
table=${table/"$w/image"/\/dev\/vda}
table=${table/"$w/hash"/\/dev\/vdb}
echo "$table" >"$w/table"
[ -n "$root" ] && [[ $table == "0 $(($(stat -c %s "$w/image") / 512)) extverity 1 /dev/vda /dev/vdb 0 sha256 $root" ]] ||
	{ fail "builtin: unexpected table '$table'"; finish; }

# bad: flip a byte in /victim's block 5.
victim_blk=5
cp "$w/image" "$w/image.bad"
pblk=$(debugfs -R "bmap /victim $victim_blk" "$w/image" 2>/dev/null)
ino=$(debugfs -R "stat /victim" "$w/image" 2>/dev/null | sed -n 's/^Inode: \([0-9]*\).*/\1/p')
[ -n "$pblk" ] && [ -n "$ino" ] || { fail "builtin: debugfs found no /victim"; finish; }
flip "$w/image.bad" $((pblk * 4096 + 123))
cmp -s "$w/image" "$w/image.bad" && { fail "builtin: image.bad not damaged"; finish; }
# sb: a byte of the superblock (its uuid field, which nothing else checks).
cp "$w/hash" "$w/hash.sb"
printf '\x5a' | dd of="$w/hash.sb" bs=1 seek=100 conv=notrunc status=none
cmp -s "$w/hash" "$w/hash.sb" && { fail "builtin: hash.sb not altered"; finish; }

want() { [ -z "${VM_ONLY:-}" ] || [[ " $VM_ONLY " == *" $1 "* ]]; }

# boot NAME EXPECT MODE DATA HASH [CHECK...]: one boot with no initramfs,
# reported as builtin/NAME; leaves $w/boot-NAME (vm_console_boot).  The
# init declares its common checks, CHECK... are the mode's; MODE none: no
# init may run, so nothing is declared.
boot() {
	local name=$1 expect=$2 mode=$3 data=$4 hash=$5 decl=()
	shift 5
	if [ "$mode" != none ]; then
		printf '%s\n' "$@" >"$w/$name.checks"
		decl=(--scenario="$TOPDIR/tests/vm/builtin-init.sh" --checks="$w/$name.checks")
	fi
	# No rootwait: dm-init has made dm-0 (late_initcall) before the root
	# is looked up, and when it refused the table the boot must fail
	# rather than wait forever.  pci=noacpi: see docs/testing.md.
	vm_console_boot "${decl[@]}" "$w/boot-$name" "$expect" 300 -m 256 -kernel "$kernel" \
		-append "console=ttyS0 panic=-1 $VM_CLOCK_ARGS pci=noacpi ro root=/dev/dm-0 rootfstype=ext4 dm-mod.waitfor=/dev/vda,/dev/vdb dm-mod.create=\"vroot,,,ro,$table\" evt.mode=$mode" \
		-drive "file=$data,format=raw,if=virtio,readonly=on" \
		-drive "file=$hash,format=raw,if=virtio,readonly=on"
	VM_OUTDIR=$w vm_report "$name" "$expect" "builtin/$name"
}

report_re='device-mapper: extverity: .*data block [0-9]+: .*file inode '"$ino"' byte offset '$((victim_blk * 4096))

if want good; then
	boot good poweroff good "$w/image" "$w/hash" all-files-read
	if grep -Eq 'device-mapper: extverity: .*data block' "$w/boot-good/console.log"; then
		fail "builtin/good/no-corruption-report: $(grep -E 'extverity: .*data block' "$w/boot-good/console.log" | head -n 1)"
	else
		pass "builtin/good/no-corruption-report"
	fi
fi

if want bad; then
	boot bad poweroff bad "$w/image.bad" "$w/hash" victim-eio other-files-read
	if grep -Eq "$report_re" "$w/boot-bad/console.log"; then
		pass "builtin/bad/report-names-inode-$ino-offset-$((victim_blk * 4096))"
	else
		fail "builtin/bad/report: no /$report_re/ on the console: $(grep 'extverity' "$w/boot-bad/console.log" | head -n 2 | tr '\n' '|')"
	fi
fi

if want sb; then
	boot sb panic none "$w/image" "$w/hash.sb"
	log=$w/boot-sb/console.log
	if grep -q 'extverity: Superblock does not match the root digest' "$log"; then
		pass "builtin/sb/table-refused"
	else
		fail "builtin/sb/table-refused: $(grep 'device-mapper' "$log" | head -n 3 | tr '\n' '|')"
	fi
	if grep -q 'VFS: Unable to mount root fs' "$log" && ! grep -q '^EVT-BEGIN' "$log"; then
		pass "builtin/sb/no-root-no-init"
	else
		fail "builtin/sb/no-root-no-init: see $log"
	fi
fi
finish
