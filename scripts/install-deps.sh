#!/usr/bin/env bash
# Install what building and testing extverity needs, from Debian 12's
# archive, when it is missing.  Safe to run repeatedly; does nothing when all
# is present.
set -eu
pkgs=(
	build-essential pkg-config
	libext2fs-dev comerr-dev libssl-dev libfsverity-dev libdevmapper-dev
	libjson-c-dev
	e2fsprogs fsverity cryptsetup-bin dmsetup
	linux-image-cloud-amd64 linux-headers-cloud-amd64 linux-source-6.1
	bc bison flex libelf-dev
	qemu-system-x86 busybox-static kmod cpio sparse fio
	xz-utils python3 util-linux strace
	xfsprogs btrfs-progs erofs-utils squashfs-tools
	dkms lvm2 groff man-db
	openssl file clang libclang-rt-14-dev
	initramfs-tools zstd mmdebstrap dracut-core
	# systemd-escape and systemd-analyze check the generator's units.
	systemd
)
# Linux 6.12, Debian 12's point-release kernel: its packages carry the ABI
# in their names, so take the newest the archive offers unless one is
# installed (scripts/kernels.sh uses the newest installed).  linux-source-6.12
# is the debug kernel's source (scripts/debug-kernel.sh).
pkgs+=(linux-source-6.12)
if ! ls -d /usr/src/linux-headers-6.12.*-cloud-amd64 >/dev/null 2>&1 ||
	! ls /boot/vmlinuz-6.12.*-cloud-amd64 >/dev/null 2>&1; then
	[ "$(id -u)" -eq 0 ] && apt-get update -qq
	abi=$(apt-cache search --names-only '^linux-image-6\.12\.[0-9]+\+deb12-cloud-amd64$' |
		sed -E 's/^linux-image-(6\.12\.[0-9]+\+deb12)-cloud-amd64 .*/\1/' |
		sort -V | tail -n 1)
	[ -n "$abi" ] || { echo "install-deps: no 6.12 cloud kernel in the archive" >&2; exit 1; }
	pkgs+=("linux-image-$abi-cloud-amd64" "linux-headers-$abi-cloud-amd64")
fi
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "missing packages: ${missing[*]} (run as root, or install them)" >&2
	exit 1
fi
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
