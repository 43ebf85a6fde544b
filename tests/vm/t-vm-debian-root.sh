#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A real Debian 12 system booted from an extverity root (docs/boot.md),
# through each initramfs flavour: tests/lib/debian-root.sh builds a
# minbase root with systemd-sysv, udev and kmod (mmdebstrap, tarball
# cached under build/debian-root/), prepared to run read-only, as an ext4
# image; `extverity format` hashes it; Debian's kernel boots it under TCG
# with
#   root=/dev/mapper/vroot ro extverity.root=/dev/vda,/dev/vdb,DIGEST
# and the root's own /sbin/init (systemd).  The root also carries the
# tool, extverity-generator (as a package installs it), and a second
# verified volume "data" (a small ext4 image on vdc, its hash area on vdd)
# in /etc/extveritytab (data given as LABEL=) and /etc/fstab (on
# /srv/data).  evt-check.service (ordered after multi-user.target) runs
# tests/vm/debian-root-check.sh, which reports on the console and powers
# off.  Boots:
#
#   good     initramfs-tools (tests/vm/debian-initramfs.sh): / is the dm
#            device vroot, target extverity with the digest given,
#            read-only; /tmp, /var/tmp, /var/log on tmpfs, a transient
#            machine id; multi-user.target reached and `systemctl
#            is-system-running` says running; every regular file of the
#            image reads back as the host hashed it; the data volume's
#            unit is active, /srv/data is mounted from it and its files
#            read back; no corruption report
#   bad      initramfs-tools, one byte of the first block of a binary
#            nothing runs at boot (/usr/bin/sha1sum: no unit, generator,
#            udev rule or /etc file names it, checked here; and no
#            corruption is reported before the check starts) flipped:
#            executing and reading it fail with EIO, the kernel log and
#            the journal (journalctl -k) name its inode and byte offset,
#            the system still reaches multi-user.target and runs, every
#            other file reads
#   dracut   as good, through Debian's dracut without systemd
#            (tests/vm/debian-dracut.sh; the module's cmdline hook and
#            initqueue job open the root: their message is on the console)
#   systemd  as good, through dracut with systemd: extverity-generator in
#            the initrd turns extverity.root= into extverity@vroot.service
#            (its run is in the journal)
#
# Skipped on the debug kernel; where mkinitramfs cannot build for the
# kernel (7.3, unpacked) only the dracut boots run.  VM_ONLY picks boots: by default "bad dracut systemd"; "good" is the
# intact root through initramfs-tools, which bad's boot already takes to
# multi-user.target.
# shellcheck disable=SC1091
. "$TOPDIR/tests/lib.sh"
. "$TOPDIR/tests/vm/vm-lib.sh"
. "$TOPDIR/tests/vm/debian-initramfs.sh"
. "$TOPDIR/tests/vm/debian-dracut.sh"

# The debug kernel: the boots are Debian's kernels' business (minutes
# each under KASAN).  An unpacked kernel (7.3): dracut reads its modules
# from VM_MODROOT, mkinitramfs cannot, so only the dracut boots run.
if [ "$VM_DEBUG_KERNEL" = 1 ]; then
	skip "debian-root: not on the debug kernel (tests/vm/debug/t-vm-boot-sig.sh boots it through dracut)"
	finish
fi
itools_why=$(debian_initramfs_skip)
[ -n "$itools_why" ] && skip "debian-root: the initramfs-tools boots: $itools_why"
why=$(debian_dracut_why)
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
# good (initramfs-tools, intact) only when asked for: bad boots through
# the same initramfs to the same state, and t-vm-initramfs.sh boots it
# intact; leaving it out keeps make check within its time.
want() {
	case $1 in good | bad) [ -z "$itools_why" ] || return 1 ;; esac
	[[ " ${VM_ONLY:-bad dracut systemd} " == *" $1 "* ]]
}

want good || want bad && { debian_initramfs "$w" debian-root || finish; }
if want dracut; then
	debian_dracut "$w" debian-root dracut || finish
fi
if want systemd; then
	debian_dracut "$w" debian-root systemd || finish
fi

# The data volume: a few files of several sizes, hashed.
mkdir -p "$w/data-src/sub"
head -c 1048577 /dev/urandom >"$w/data-src/one-mib-and-a-byte"
head -c 5000 /dev/urandom >"$w/data-src/sub/small"
echo "a verified volume from /etc/extveritytab" >"$w/data-src/README"
mke2fs -q -t ext4 -b 4096 -L evt-data -d "$w/data-src" "$w/data.ext4" 16M >/dev/null ||
	die "mke2fs of the data volume"
"$EXTVERITY_RELEASE" format "$w/data.ext4" "$w/data.hash" >"$w/data-format.out" 2>&1 ||
	die "extverity format of the data volume: $(cat "$w/data-format.out")"
data_root=$(sed -n 's/^Root digest:[[:space:]]*//p' "$w/data-format.out")

# The root, with the test unit enabled, dmsetup (for the table), the tool
# and the generator, and the data volume in /etc/extveritytab.
ov=$w/overlay
mkdir -p "$ov/usr/local/sbin" "$ov/etc/systemd/system/multi-user.target.wants" \
	"$ov/usr/lib/systemd/system-generators" "$ov/usr/local/share/evt-root" "$ov/srv/data"
install -m 755 "$TOPDIR/tests/vm/debian-root-check.sh" "$ov/usr/local/sbin/evt-check"
install -m 644 "$TOPDIR/tests/vm/evt-check.service" "$ov/etc/systemd/system/evt-check.service"
ln -s ../evt-check.service "$ov/etc/systemd/system/multi-user.target.wants/evt-check.service"
install -m 755 "$EXTVERITY_GENERATOR_RELEASE" "$ov/usr/lib/systemd/system-generators/extverity-generator"
printf '# name\tdata\t\thash\t\troot digest\n''data\tLABEL=evt-data\t/dev/vdd\t%s\n' "$data_root" >"$ov/etc/extveritytab"
(cd "$w/data-src" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) \
	>"$ov/usr/local/share/evt-root/data.sha256"
start=$(date +%s)
"$TOPDIR/tests/lib/debian-root.sh" --overlay "$ov" --exec /usr/sbin/dmsetup \
	--exec "$EXTVERITY_RELEASE" --fstab "/dev/mapper/data	/srv/data	ext4	ro,noatime	0 0" "$w" \
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

# boot NAME MODE INITRD DATA [CHECK...]: one boot of the Debian root
# through INITRD, reported as debian-root/NAME; leaves $w/boot-NAME.  The
# check script declares its common checks, CHECK... are the mode's and
# the flavour's.
boot() {
	local name=$1 mode=$2 initrd=$3 data=$4
	shift 4
	printf '%s\n' "$@" >"$w/$name.checks"
	vm_console_boot --scenario="$TOPDIR/tests/vm/debian-root-check.sh" --checks="$w/$name.checks" \
		"$w/boot-$name" poweroff 400 -m 1024 \
		-kernel "$VM_KERNEL" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 root=/dev/mapper/vroot ro extverity.root=/dev/vda,/dev/vdb,$root evt.mode=$mode evt.flavour=$name evt.victim=$victim $VM_CLOCK_ARGS $VM_APPEND" \
		-drive "file=$data,format=raw,if=virtio,readonly=on" \
		-drive "file=$w/hash,format=raw,if=virtio,readonly=on" \
		-drive "file=$w/data.ext4,format=raw,if=virtio,readonly=on" \
		-drive "file=$w/data.hash,format=raw,if=virtio,readonly=on"
	VM_OUTDIR=$w vm_report "$name" poweroff "debian-root/$name"
	log=$w/boot-$name/console.log
	# The table line carries the digest given; the boot's timing.
	if grep -Eq "^EVT-TABLE 0 [0-9]+ extverity 1 [0-9]+:[0-9]+ [0-9]+:[0-9]+ 0 sha256 $root\$" "$log"; then
		pass "debian-root/$name/table-has-root-digest"
	else
		fail "debian-root/$name/table-has-root-digest: $(grep '^EVT-TABLE' "$log")"
	fi
	if grep -Eq "^EVT-DATA-TABLE 0 [0-9]+ extverity 1 [0-9]+:32 [0-9]+:48 0 sha256 $data_root\$" "$log"; then
		pass "debian-root/$name/data-table-has-its-digest"
	else
		fail "debian-root/$name/data-table-has-its-digest: $(grep '^EVT-DATA-TABLE' "$log")"
	fi
	echo "  info  $name: $(sed -n 's/^EVT-BEGIN .*(pid [0-9]*, //p' "$log" | tr -d ')') to the check," \
		"$(cat "$w/boot-$name/seconds") s in all; $(sed -n 's/^EVT-INFO //p' "$log")"
}

report_re="device-mapper: extverity: [0-9]+:[0-9]+: data block $pblk: corrupted, file inode $ino byte offset 0\$"

# good_boot NAME INITRD OPENED_RE [CHECK...]: a boot of the intact root;
# OPENED_RE is the console line of the flavour's opener.
good_boot() {
	local name=$1 initrd=$2 re=$3
	shift 3
	boot "$name" good "$initrd" "$img" all-files-read "$@"
	if grep -q "all-files-read ($nfiles files)" "$log"; then
		pass "debian-root/$name/all-$nfiles-files"
	else
		fail "debian-root/$name/all-$nfiles-files: $(grep 'all-files-read' "$log")"
	fi
	if grep -Eq 'device-mapper: extverity: .*(corrupted|failed)' "$log"; then
		fail "debian-root/$name/no-corruption-report: $(grep -E 'extverity: .*(corrupted|failed)' "$log" | head -n 1)"
	else
		pass "debian-root/$name/no-corruption-report"
	fi
	if grep -Eq "$re" "$log"; then
		pass "debian-root/$name/root-opened-by-$name"
	else
		fail "debian-root/$name/root-opened-by-$name: no /$re/ on the console"
	fi
}

want good && good_boot good "$w/initrd.img" '^extverity: opening vroot: data /dev/vda, hash /dev/vdb$'
want dracut && good_boot dracut "$w/initrd-dracut.img" 'dracut: extverity: opening vroot: data /dev/vda, hash /dev/vdb$'
want systemd && good_boot systemd "$w/initrd-systemd.img" 'Finished .*extverity.*vroot' root-opened-by-unit

if want bad; then
	boot bad bad "$w/initrd.img" "$w/image.bad" victim-exec-eio victim-read-eio journal-names-victim other-files-read
	if grep -Eq "^[[]?[ 0-9.]*[]]? ?$report_re" "$log"; then
		pass "debian-root/bad/kernel-log-names-inode-$ino-offset-0"
	else
		fail "debian-root/bad/kernel-log-names-inode-$ino-offset-0: no /$report_re/ on the console: $(grep 'extverity' "$log" | head -n 2 | tr '\n' '|')"
	fi
	if grep -Eq '^extverity: opening vroot: data /dev/vda, hash /dev/vdb$' "$log"; then
		pass "debian-root/bad/root-opened-by-initramfs-tools"
	else
		fail "debian-root/bad/root-opened-by-initramfs-tools: no local-top message on the console"
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
