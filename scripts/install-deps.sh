#!/usr/bin/env bash
# Install what building and testing extverity needs, from Debian 12's
# archive, when it is missing.  Safe to run repeatedly; does nothing when all
# is present.
set -eu
pkgs=(
	build-essential pkg-config
	libext2fs-dev comerr-dev libssl-dev libfsverity-dev libdevmapper-dev
	e2fsprogs fsverity cryptsetup-bin dmsetup
	linux-image-cloud-amd64 linux-headers-cloud-amd64 linux-source-6.1
	bc bison flex libelf-dev
	qemu-system-x86 busybox-static kmod cpio sparse fio
	xz-utils python3 util-linux
	xfsprogs btrfs-progs erofs-utils squashfs-tools
	dkms lvm2 groff man-db
	openssl file clang libclang-rt-14-dev
	initramfs-tools zstd
)
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
