#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench-boot KVER=...: a real boot, timed.  A Debian 12 root
# (tests/lib/debian-root.sh: mmdebstrap --variant=minbase with
# systemd-sysv, udev and kmod, from the archive this machine's apt uses)
# boots under TCG to multi-user.target from the same ext4 image three ways,
# through one initramfs: Debian's mkinitramfs with scripts/initramfs-tools
# and bench/boot/'s dm-verity opener; on a kernel mkinitramfs cannot build
# for (7.3, unpacked: it reads /lib/modules; debian_initramfs_skip),
# Debian's dracut without systemd with scripts/dracut/90extverity and
# bench/boot/dracut/'s opener (tests/vm/debian-dracut.sh):
#
#   raw        root=/dev/vda
#   dm-verity  /dev/mapper/vroot opened by bench/boot/scripts/local-top/
#              bench-verity (or the dracut module's initqueue job) over
#              `veritysetup format`'s hash device
#   extverity  /dev/mapper/vroot opened by the project's local-top script
#              (or its dracut module) from extverity.root= over
#              `extverity format`'s hash area
#
# The time is the kernel's uptime when evb-up.service, ordered after
# multi-user.target, starts: from kernel start to a unit that runs once
# the system is up.  The unit also says what the root is (the dm target
# under it, or none), and a boot whose root is not the one intended fails
# the bench.  Every boot has fsck.mode=skip: the extverity script skips
# the initramfs's fsck of its read-only root (docs/boot.md), so the others
# do too (and rd.skipfsck, dracut's), and verification is what differs.
# BENCH_BOOTS rounds (default 3) of the three in turn; medians.  Writes
# bench/results/<stamp>-boot.{md,txt}.
set -eu
TOPDIR=$(cd "$(dirname "$0")/.." && pwd)
export TOPDIR
cd "$TOPDIR"
: "${BENCH_BOOTS:=3}"
# shellcheck disable=SC1091
. tests/lib.sh
# shellcheck disable=SC1091
. tests/vm/vm-lib.sh
# shellcheck disable=SC1091
. tests/vm/debian-initramfs.sh
# shellcheck disable=SC1091
. tests/vm/debian-dracut.sh
die() { echo "bench-boot: $*" >&2; exit 1; }
if [ -z "$(debian_initramfs_skip)" ]; then
	initramfs="initramfs-tools"
	why=$(debian_initramfs_why)
else
	initramfs=dracut
	why=$(debian_dracut_why)
fi
[ -z "$why" ] || die "$why"
command -v veritysetup >/dev/null || die "veritysetup not installed"

w=$TOPDIR/build/bench/boot-$KVER
rm -rf "$w"
mkdir -p "$w/ov/usr/local/sbin" "$w/ov/etc/systemd/system/multi-user.target.wants" bench/results
stamp=$(date -u +%Y%m%dT%H%M%SZ)

cat >"$w/ov/usr/local/sbin/evb-up" <<'EOF'
#!/bin/sh
read -r up _ </proc/uptime
target=$(dmsetup table vroot 2>/dev/null | cut -d' ' -f3)
echo "EVB-UP $up root=$(findmnt -no SOURCE /) target=${target:-none}"
systemctl --no-block poweroff
EOF
chmod 755 "$w/ov/usr/local/sbin/evb-up"
cat >"$w/ov/etc/systemd/system/evb-up.service" <<'EOF'
[Unit]
Description=make bench-boot: the system is up, say when, power off
After=multi-user.target

[Service]
Type=exec
ExecStart=/usr/local/sbin/evb-up
StandardOutput=tty
TTYPath=/dev/console

[Install]
WantedBy=multi-user.target
EOF
ln -s ../evb-up.service "$w/ov/etc/systemd/system/multi-user.target.wants/evb-up.service"

echo "bench-boot: the root (mmdebstrap, cached) and its two hash areas"
tests/lib/debian-root.sh --overlay "$w/ov" --exec /usr/sbin/dmsetup "$w" >"$w/debian-root.log" 2>&1 ||
	die "debian-root.sh failed: $(tail -n 3 "$w/debian-root.log")"
img=$w/image.ext4
blocks=$(($(stat -c %s "$img") / 4096))
"$EXTVERITY_RELEASE" format "$img" "$w/ehash" >"$w/eformat.out" || die "extverity format failed"
eroot=$(sed -n 's/^Root digest:[[:space:]]*//p' "$w/eformat.out")
veritysetup format "$img" "$w/vhash" >"$w/vformat.out" || die "veritysetup format failed"
vroot=$(sed -n 's/^Root hash:[[:space:]]*//p' "$w/vformat.out")
vsalt=$(sed -n 's/^Salt:[[:space:]]*//p' "$w/vformat.out")
if [ -z "$eroot" ] || [ -z "$vroot" ] || [ -z "$vsalt" ]; then
	die "no root digest or salt in the formats' output"
fi
if [ "$initramfs" = initramfs-tools ]; then
	RESULTS=$w/initramfs.results DEBIAN_INITRAMFS_EXTRA=$TOPDIR/bench/boot \
		debian_initramfs "$w" bench-boot >/dev/null || die "mkinitramfs failed: $(tail -n 3 "$w/mkinitramfs.log")"
	initrd=$w/initrd.img
else
	RESULTS=$w/initramfs.results DEBIAN_DRACUT_EXTRA=$TOPDIR/bench/boot/dracut/91bench-verity \
		debian_dracut "$w" bench-boot dracut >/dev/null || die "dracut failed: $(tail -n 3 "$w/dracut-dracut.log")"
	initrd=$w/initrd-dracut.img
fi

# boot SETUP ROUND: one boot; appends "SETUP SECONDS" to $w/times.  A
# kernel that fails before userspace (TCG and the kernel patching its own
# text: vm_died_booting) boots once more, as the tests' boots do.
boot() {
	local setup=$1 round=$2 root=/dev/mapper/vroot extra want out=$w/$1-$2 try
	case $setup in
	raw) root=/dev/vda extra='' want=none ;;
	dm-verity) extra="bench.verity=/dev/vda,/dev/vdc,$blocks,$vroot,$vsalt" want=verity ;;
	extverity) extra="extverity.root=/dev/vda,/dev/vdb,$eroot" want=extverity ;;
	esac
	mkdir -p "$out"
	for try in 1 2; do
		timeout --kill-after=5 600 "$QEMU" -machine accel=tcg -cpu max -smp "$VM_SMP" \
			-nographic -no-reboot -m 1024 -kernel "$VM_KERNEL" -initrd "$initrd" \
			-append "console=ttyS0 quiet panic=-1 fsck.mode=skip rd.skipfsck root=$root ro $extra $VM_CLOCK_ARGS $VM_APPEND" \
			-drive "file=$img,format=raw,if=virtio,readonly=on" \
			-drive "file=$w/ehash,format=raw,if=virtio,readonly=on" \
			-drive "file=$w/vhash,format=raw,if=virtio,readonly=on" \
			</dev/null 2>"$out/qemu.err" | tr -d '\r' >"$out/console.log" || true
		[ "$try" = 1 ] && ! grep -q '^EVB-UP ' "$out/console.log" &&
			vm_died_booting "$out" poweroff && continue
		break
	done
	local line
	line=$(grep -m1 '^EVB-UP ' "$out/console.log") || die "$setup boot $round: no EVB-UP line (see $out/console.log)"
	case $line in
	*" target=$want") ;;
	*) die "$setup boot $round: the root is not what it should be: $line" ;;
	esac
	echo "$setup $(echo "$line" | cut -d' ' -f2)" >>"$w/times"
	echo "bench-boot: round $round, $setup: $(echo "$line" | cut -d' ' -f2-)"
}

: >"$w/times"
for round in $(seq "$BENCH_BOOTS"); do
	for setup in raw dm-verity extverity; do
		boot "$setup" "$round"
	done
done

median() { grep "^$1 " "$w/times" | cut -d' ' -f2 | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
raw=$(median raw) verity=$(median dm-verity) ext=$(median extverity)
each() { grep "^$1 " "$w/times" | cut -d' ' -f2 | paste -sd' ' | sed 's/ /, /g'; }
ratio() { printf "%.3f" "$(echo "scale=6; $1 / $2" | bc)"; }
{
	echo "# make bench-boot ($BENCH_BOOTS boots each, medians; guest under qemu TCG; kernel $KVER)"
	echo
	echo "A Debian 12 root (mmdebstrap minbase with systemd-sysv, udev, kmod; $((blocks / 256)) MiB ext4) booted to multi-user.target through one initramfs ($initramfs); seconds from kernel start to a unit ordered after multi-user.target."
	echo
	echo "| root | boots (s) | median (s) | vs raw | vs dm-verity |"
	echo "|---|---|---|---|---|"
	echo "| raw /dev/vda | $(each raw) | $raw | 1.000 | $(ratio "$raw" "$verity") |"
	echo "| dm-verity | $(each dm-verity) | $verity | $(ratio "$verity" "$raw") | 1.000 |"
	echo "| extverity | $(each extverity) | $ext | $(ratio "$ext" "$raw") | $(ratio "$ext" "$verity") |"
	echo
	echo "Goal (issue 16): extverity within 1.05 of raw, and no slower than dm-verity (at most 1.000)."
} >"bench/results/$stamp-boot.md"
cp "$w/times" "bench/results/$stamp-boot.txt"
cat "bench/results/$stamp-boot.md"
