#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A real Debian 12 system booted from an extverity root (docs/boot.md "A
# systemd root, read-only"): tests/lib/debian-root.sh builds a minbase
# root with systemd-sysv, udev and kmod (mmdebstrap, tarball cached under
# build/debian-root/), prepared to run read-only, as an ext4 image;
# `extverity format` hashes it; Debian's mkinitramfs builds the initramfs
# with scripts/initramfs-tools (tests/vm/debian-initramfs.sh, as
# t-vm-initramfs.sh does), and Debian's kernel boots it under TCG with
#   root=/dev/mapper/vroot ro extverity.root=/dev/vda,/dev/vdb,DIGEST
# and the root's own /sbin/init (systemd).  evt-check.service (ordered
# after multi-user.target) runs tests/vm/debian-root-check.sh, which
# reports on the console and powers off.  Two boots:
#
#   good   / is the dm device vroot, target extverity with the digest
#          given, read-only; /tmp, /var/tmp, /var/log on tmpfs, a
#          transient machine id; multi-user.target reached and
#          `systemctl is-system-running` says running; every regular file
#          of the image reads back as the host hashed it; no corruption
#          report
#   bad    one byte of the first block of a binary nothing runs at boot
#          (/usr/bin/sha1sum: no unit, generator, udev rule or /etc file
#          names it, checked here; and no corruption is reported before
#          the check starts) flipped: executing and reading it fail with
#          EIO, the kernel log and the journal (journalctl -k) name its
#          inode and byte offset, the system still reaches
#          multi-user.target and runs, every other file reads
#
# Skipped where t-vm-initramfs.sh is (a kernel mkinitramfs cannot use).
# VM_ONLY="good bad" picks boots.
# shellcheck disable=SC1091
. "$TOPDIR/tests/lib.sh"
. "$TOPDIR/tests/vm/vm-lib.sh"
. "$TOPDIR/tests/vm/debian-initramfs.sh"

why=$(debian_initramfs_skip)
if [ -n "$why" ]; then
	skip "debian-root: $why"
	finish
fi
why=$(debian_initramfs_why)
for t in mmdebstrap mke2fs debugfs; do
	[ -z "$why" ] && ! command -v $t >/dev/null && why="$t not installed"
done
if [ -n "$why" ]; then
	fail "debian-root: $why"
	finish
fi

w=$WORKDIR/debian-root
rm -rf "$w"
mkdir -p "$w"
die() { fail "debian-root/setup: $*"; finish; }
want() { [ -z "${VM_ONLY:-}" ] || [[ " $VM_ONLY " == *" $1 "* ]]; }

debian_initramfs "$w" debian-root || finish

# The root, with the test unit enabled and dmsetup (for the table).
ov=$w/overlay
mkdir -p "$ov/usr/local/sbin" "$ov/etc/systemd/system/multi-user.target.wants"
install -m 755 "$TOPDIR/tests/vm/debian-root-check.sh" "$ov/usr/local/sbin/evt-check"
install -m 644 "$TOPDIR/tests/vm/evt-check.service" "$ov/etc/systemd/system/evt-check.service"
ln -s ../evt-check.service "$ov/etc/systemd/system/multi-user.target.wants/evt-check.service"
start=$(date +%s)
"$TOPDIR/tests/lib/debian-root.sh" --overlay "$ov" --exec /usr/sbin/dmsetup "$w" \
	>"$w/debian-root.log" 2>&1 || die "debian-root.sh: $(tail -n 3 "$w/debian-root.log" | tr '\n' '|')"
img=$w/image.ext4
nfiles=$(wc -l <"$w/files.sha256")
pass "debian-root/image ($(($(date +%s) - start)) s, $nfiles files, $(($(stat -c %s "$img") >> 20)) MiB)"
start=$(date +%s)
"$EXTVERITY_RELEASE" format "$img" "$w/hash" >"$w/format.out" 2>&1 ||
	die "extverity format: $(cat "$w/format.out")"
root=$(sed -n 's/^Root digest:[[:space:]]*//p' "$w/format.out")
[ -n "$root" ] || die "no root digest in $w/format.out"
pass "debian-root/format ($(($(date +%s) - start)) s)"

# bad: the victim is a binary nothing runs at boot.  No unit, generator,
# udev rule or configuration file names it (checked here); that nothing
# read it before the check ran is checked on the console below.
victim=/usr/bin/sha1sum
users=$(cd "$w/root" && grep -rlw "${victim##*/}" usr/lib/systemd usr/lib/udev etc \
	usr/lib/tmpfiles.d usr/lib/sysusers.d 2>/dev/null | head -n 3)
if [ -z "$users" ]; then
	pass "debian-root/victim-$victim-not-named-by-boot-files"
else
	fail "debian-root/victim-$victim-not-named-by-boot-files: $users"
fi
ino=$(debugfs -R "stat $victim" "$img" 2>/dev/null | sed -n 's/^Inode: \([0-9]*\).*/\1/p')
pblk=$(debugfs -R "bmap $victim 0" "$img" 2>/dev/null)
if [ -z "$ino" ] || [ -z "$pblk" ] || [ "$pblk" -eq 0 ]; then
	die "debugfs found no $victim"
fi
# A byte of its first block (not the ELF header's first bytes): exec
# reads that block, so execve itself fails.
off=$((pblk * 4096 + 1000))
cp "$img" "$w/image.bad"
b=$(od -An -tu1 -j "$off" -N1 "$img" | tr -d ' ')
printf '%b' "\\0$(printf %o $((b ^ 0xff)))" |
	dd of="$w/image.bad" bs=1 seek="$off" conv=notrunc status=none
cmp -s "$img" "$w/image.bad" && die "image.bad not damaged"

# boot NAME DATA [CHECK...]: one boot of the Debian root through the
# initramfs, reported as debian-root/NAME; leaves $w/boot-NAME.  The
# check script declares its common checks, CHECK... are the mode's.
boot() {
	local name=$1 data=$2
	shift 2
	printf '%s\n' "$@" >"$w/$name.checks"
	vm_console_boot --scenario="$TOPDIR/tests/vm/debian-root-check.sh" --checks="$w/$name.checks" \
		"$w/boot-$name" poweroff 400 -m 1024 \
		-kernel "$VM_KERNEL" -initrd "$w/initrd.img" \
		-append "console=ttyS0 panic=-1 root=/dev/mapper/vroot ro extverity.root=/dev/vda,/dev/vdb,$root evt.mode=$name evt.victim=$victim $VM_CLOCK_ARGS $VM_APPEND" \
		-drive "file=$data,format=raw,if=virtio,readonly=on" \
		-drive "file=$w/hash,format=raw,if=virtio,readonly=on"
	VM_OUTDIR=$w vm_report "$name" poweroff "debian-root/$name"
	log=$w/boot-$name/console.log
	# The table line carries the digest given; the boot's timing.
	if grep -Eq "^EVT-TABLE 0 [0-9]+ extverity 1 [0-9]+:[0-9]+ [0-9]+:[0-9]+ 0 sha256 $root\$" "$log"; then
		pass "debian-root/$name/table-has-root-digest"
	else
		fail "debian-root/$name/table-has-root-digest: $(grep '^EVT-TABLE' "$log")"
	fi
	echo "  info  $name: $(sed -n 's/^EVT-BEGIN .*(pid [0-9]*, //p' "$log" | tr -d ')') to the check," \
		"$(cat "$w/boot-$name/seconds") s in all; $(sed -n 's/^EVT-INFO //p' "$log")"
}

report_re="device-mapper: extverity: [0-9]+:[0-9]+: data block $pblk: corrupted, file inode $ino byte offset 0\$"

if want good; then
	boot good "$img" all-files-read
	if grep -q "all-files-read ($nfiles files)" "$log"; then
		pass "debian-root/good/all-$nfiles-files"
	else
		fail "debian-root/good/all-$nfiles-files: $(grep 'all-files-read' "$log")"
	fi
	if grep -Eq 'device-mapper: extverity: .*(corrupted|failed)' "$log"; then
		fail "debian-root/good/no-corruption-report: $(grep -E 'extverity: .*(corrupted|failed)' "$log" | head -n 1)"
	else
		pass "debian-root/good/no-corruption-report"
	fi
fi

if want bad; then
	boot bad "$w/image.bad" victim-exec-eio victim-read-eio journal-names-victim other-files-read
	if grep -Eq "^[[]?[ 0-9.]*[]]? ?$report_re" "$log"; then
		pass "debian-root/bad/kernel-log-names-inode-$ino-offset-0"
	else
		fail "debian-root/bad/kernel-log-names-inode-$ino-offset-0: no /$report_re/ on the console: $(grep 'extverity' "$log" | head -n 2 | tr '\n' '|')"
	fi
	if grep -Eq "^EVT-JOURNAL $report_re" "$log"; then
		pass "debian-root/bad/journal-names-inode-$ino-offset-0"
	else
		fail "debian-root/bad/journal-names-inode-$ino-offset-0: $(grep '^EVT-JOURNAL' "$log" | head -n 2 | tr '\n' '|')"
	fi
	# Nothing read the victim before the check did: the first report
	# comes after EVT-BEGIN.
	if lines=$(vm_console_in_order "$w/boot-bad" '^EVT-BEGIN ' 'device-mapper: extverity: .*corrupted'); then
		pass "debian-root/bad/victim-first-read-by-the-check (lines $lines)"
	else
		fail "debian-root/bad/victim-first-read-by-the-check: EVT-BEGIN and the first report at lines $lines"
	fi
fi
finish
