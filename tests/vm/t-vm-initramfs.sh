#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The initramfs-tools integration (docs/boot.md): Debian's mkinitramfs
# builds an initramfs with scripts/initramfs-tools (hook and local-top
# script, from a private copy of /etc/initramfs-tools: nothing is
# installed), Debian's kernel boots it with
#   root=/dev/mapper/vroot extverity.root=DATA,HASH,DIGEST[,OPTION]
# over two virtio disks (ext4 image, hash file).  The root holds a static
# busybox, dmsetup and tests/vm/initramfs-root-init.sh as /sbin/init.
# Three boots:
#
#   good   data disk given as UUID=, options check_at_most_once and
#          try_verify_in_tasklet: init runs from the dm device "vroot"
#          (read-only, target extverity with the digest and options given,
#          over vda and vdb), the initramfs did not fsck it, every file
#          reads back
#   bad    one block of /victim damaged (default eio mode): reading it
#          fails with EIO, the kernel's report names its inode and byte
#          offset, the rest reads
#   sb     the hash area's superblock altered: `extverity open` refuses
#          it, the local-top script stops the boot (panic=-1: reboot)
#          and no init runs
#   sig    the digest '-': the digest and its signature (by the test CA)
#          from the initramfs (the hook copied them from EXTVERITY_KEYDIR);
#          the digest authenticates the superblock, then the kernel refuses
#          the signature (Debian's kernels do not trust the test CA) and
#          the boot stops, no init runs
#
# Skipped on another kernel than the installed Debian one (mkinitramfs
# reads /lib/modules/$KVER).  VM_ONLY="good bad sb sig" picks boots.
# shellcheck disable=SC1091
. "$TOPDIR/tests/lib.sh"
. "$TOPDIR/tests/vm/vm-lib.sh"
. "$TOPDIR/tests/vm/debian-initramfs.sh"
. "$TOPDIR/tests/vm/busybox-root.sh"

why=$(debian_initramfs_skip)
if [ -n "$why" ]; then
	skip "initramfs: $why"
	finish
fi
why=$(debian_initramfs_why)
[ -z "$why" ] && why=$(busybox_root_why)
if [ -n "$why" ]; then
	fail "initramfs: $why"
	finish
fi

EV=$EXTVERITY_RELEASE
w=$WORKDIR/initramfs
rm -rf "$w"
mkdir -p "$w"
die() { fail "initramfs/setup: $*"; finish; }

# The root (tests/vm/busybox-root.sh).
busybox_root "$w" 2>"$w/root.err" || die "$(cat "$w/root.err")"
root=$(cat "$w/root-digest")
nfiles=$(wc -l <"$w/expected.sha256")

# sig: the digest and its signature, for the hook to copy in.
mkdir -p "$w/keys"
printf '%s\n' "$root" >"$w/keys/vroot.roothash"
"$EV" sign --key="$TOPDIR/tests/keys/test-ca.key" --cert="$TOPDIR/tests/keys/test-ca.pem" \
	"$root" "$w/keys/vroot.roothash.p7s" >/dev/null 2>&1 || die "extverity sign"

# The initramfs (tests/vm/debian-initramfs.sh).
initrd=$w/initrd.img
EXTVERITY_KEYDIR=$w/keys debian_initramfs "$w" initramfs || finish
for f in etc/extverity/vroot.roothash etc/extverity/vroot.roothash.p7s; do
	if grep -qxF "$f" "$w/initrd.list"; then
		pass "initramfs/contains-$f"
	else
		fail "initramfs/contains-$f: not in lsinitramfs $initrd"
	fi
done

# bad: a byte of /victim's block 5.
victim_blk=5
cp "$w/image" "$w/image.bad"
pblk=$(debugfs -R "bmap /victim $victim_blk" "$w/image" 2>/dev/null)
ino=$(debugfs -R "stat /victim" "$w/image" 2>/dev/null | sed -n 's/^Inode: \([0-9]*\).*/\1/p')
[ -n "$pblk" ] && [ -n "$ino" ] || die "debugfs found no /victim"
b=$(od -An -tu1 -j $((pblk * 4096 + 123)) -N1 "$w/image" | tr -d ' ')
printf '%b' "\\0$(printf %o $((b ^ 0xff)))" |
	dd of="$w/image.bad" bs=1 seek=$((pblk * 4096 + 123)) conv=notrunc status=none
cmp -s "$w/image" "$w/image.bad" && die "image.bad not damaged"
# sb: a byte of the superblock (its uuid field).
cp "$w/hash" "$w/hash.sb"
b=$(od -An -tu1 -j 100 -N1 "$w/hash" | tr -d ' ')
printf '%b' "\\0$(printf %o $((b ^ 0x5a)))" |
	dd of="$w/hash.sb" bs=1 seek=100 conv=notrunc status=none
cmp -s "$w/hash" "$w/hash.sb" && die "hash.sb not altered"

want() { [ -z "${VM_ONLY:-}" ] || [[ " $VM_ONLY " == *" $1 "* ]]; }

# The good boot names the data disk by its ext4 UUID and adds an option.
uuid=$(blkid -p -s UUID -o value "$w/image" 2>/dev/null)
[ -n "$uuid" ] || die "blkid found no UUID in $w/image"

# boot NAME EXPECT MODE DATA HASH SPEC [CHECK...]: one boot of the Debian
# initramfs with extverity.root=SPEC, reported as initramfs/NAME; leaves
# $w/boot-NAME (vm_console_boot).  The init declares its common checks,
# CHECK... are the mode's; MODE none: no init may run, nothing declared.
boot() {
	local name=$1 expect=$2 mode=$3 data=$4 hash=$5 spec=$6 decl=()
	shift 6
	if [ "$mode" != none ]; then
		printf '%s\n' "$@" >"$w/$name.checks"
		decl=(--scenario="$TOPDIR/tests/vm/initramfs-root-init.sh" --checks="$w/$name.checks")
	fi
	vm_console_boot "${decl[@]}" "$w/boot-$name" "$expect" 240 -m 512 \
		-kernel "$VM_KERNEL" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 root=/dev/mapper/vroot ro extverity.root=$spec evt.mode=$mode $VM_CLOCK_ARGS $VM_APPEND" \
		-drive "file=$data,format=raw,if=virtio,readonly=on" \
		-drive "file=$hash,format=raw,if=virtio,readonly=on"
	VM_OUTDIR=$w vm_report "$name" "$expect" "initramfs/$name"
}

# The local-top script's line, the table (the digest given, OPTS), and
# the root was mounted without an fsck (it is read-only).
opened() {
	local log=$w/boot-$1/console.log opts=$2
	if grep -q "^extverity: opening vroot: data /dev/vda, hash /dev/vdb$opts\$" "$log"; then
		pass "initramfs/$1/local-top-opened"
	else
		fail "initramfs/$1/local-top-opened: $(grep -i 'extverity' "$log" | head -n 3 | tr '\n' '|')"
	fi
	if grep -Eq "^EVT-TABLE 0 [0-9]+ extverity 1 [0-9]+:[0-9]+ [0-9]+:[0-9]+ 0 sha256 $root$3\$" "$log"; then
		pass "initramfs/$1/table-has-root-digest${3:+ and$3}"
	else
		fail "initramfs/$1/table-has-root-digest${3:+ and$3}: $(grep '^EVT-TABLE' "$log")"
	fi
	if grep -q 'Fast boot enabled, so skipping root file system check' "$log" &&
		! grep -q 'fsck exited' "$log"; then
		pass "initramfs/$1/no-fsck-of-verified-root"
	else
		fail "initramfs/$1/no-fsck-of-verified-root: $(grep -i 'fsck' "$log" | head -n 3 | tr '\n' '|')"
	fi
}

report_re='device-mapper: extverity: .*data block [0-9]+: .*file inode '"$ino"' byte offset '$((victim_blk * 4096))

if want good; then
	boot good poweroff good "$w/image" "$w/hash" "UUID=$uuid,/dev/vdb,$root,check_at_most_once,try_verify_in_tasklet" \
		all-files-read
	opened good ', options --check-at-most-once --use-tasklets' ' 2 check_at_most_once try_verify_in_tasklet'
	if grep -q "all-files-read ($nfiles files)" "$w/boot-good/console.log"; then
		pass "initramfs/good/all-$nfiles-files"
	else
		fail "initramfs/good/all-$nfiles-files: $(grep 'all-files-read' "$w/boot-good/console.log")"
	fi
	if grep -Eq 'device-mapper: extverity: .*data block' "$w/boot-good/console.log"; then
		fail "initramfs/good/no-corruption-report: $(grep -E 'extverity: .*data block' "$w/boot-good/console.log" | head -n 1)"
	else
		pass "initramfs/good/no-corruption-report"
	fi
fi

if want bad; then
	boot bad poweroff bad "$w/image.bad" "$w/hash" "/dev/vda,/dev/vdb,$root" \
		victim-eio other-files-read
	opened bad '' ''
	if grep -Eq "$report_re" "$w/boot-bad/console.log"; then
		pass "initramfs/bad/report-names-inode-$ino-offset-$((victim_blk * 4096))"
	else
		fail "initramfs/bad/report: no /$report_re/ on the console: $(grep 'extverity' "$w/boot-bad/console.log" | head -n 2 | tr '\n' '|')"
	fi
fi

# refused NAME CHECK RE: the boot NAME stopped before any init ran, the
# console shows why (/RE/, as CHECK) and the local-top script's panic.
refused() {
	local log=$w/boot-$1/console.log
	if grep -Eq "$3" "$log"; then
		pass "initramfs/$1/$2"
	else
		fail "initramfs/$1/$2: $(grep -i 'extverity' "$log" | head -n 4 | tr '\n' '|')"
	fi
	if grep -q 'extverity: cannot open vroot (data /dev/vda, hash /dev/vdb); not mounting an unverified root' "$log" &&
		grep -q 'Rebooting automatically due to panic= boot argument' "$log" &&
		! grep -q '^EVT-BEGIN' "$log"; then
		pass "initramfs/$1/boot-stopped-no-init"
	else
		fail "initramfs/$1/boot-stopped-no-init: see $log"
	fi
}

if want sb; then
	boot sb restart none "$w/image" "$w/hash.sb" "/dev/vda,/dev/vdb,$root"
	refused sb open-refused 'extverity: root digest does not match the superblock of /dev/vdb'
fi

if want sig; then
	boot sig restart none "$w/image" "$w/hash" "/dev/vda,/dev/vdb,-"
	refused sig kernel-refused-untrusted-signature \
		'extverity: kernel: device-mapper: table: [0-9]+:[0-9]+: extverity: Root digest signature is not from a trusted key'
fi
finish
