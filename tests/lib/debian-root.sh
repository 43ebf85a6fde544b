#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# debian-root.sh [--overlay DIR]... [--exec FILE]... [--fstab LINE]... OUTDIR
#
# A real Debian 12 root filesystem for the boot tests, prepared to run
# read-only (docs/boot.md "A systemd root, read-only"):
#
#   mmdebstrap --variant=minbase --include=systemd-sysv,udev,kmod bookworm
#
# into a tarball cached under build/debian-root/ (its name keyed by the
# suite, variant and package list; about 25 s and 220 MB on a first run,
# then reused).  The archive is the one this machine's apt already uses
# (the bookworm "Packages" index target's URI, `apt-get indextargets`):
# no host name is written here.  DEBIAN_ROOT_MIRROR=URI overrides it.
#
# Outputs, in OUTDIR:
#   root/         the unpacked tree, prepared (below), each overlay DIR
#                 copied over it (cp -a DIR/. root/), each --exec FILE (a
#                 host binary: this is Debian 12 too) as
#                 /usr/local/sbin/NAME with the libraries `ldd` lists that
#                 the root lacks, at the same paths
#   files.sha256  "HASH  ./PATH" for every regular file of root/, sorted,
#                 also installed in the image as
#                 /usr/local/share/evt-root/files.sha256 (not listed itself)
#   image.ext4    mke2fs -t ext4 -b 4096 -d root/
#
# Prepared for a read-only root:
#   /etc/fstab    / read-only (no fsck: the device cannot be written);
#                 /tmp, /var/tmp, /var/log on tmpfs; each --fstab LINE
#   journald      Storage=volatile (the journal in /run)
#   machine-id    /etc/machine-id empty: systemd mounts a transient id
#                 over it; no D-Bus machine id
#   .updated      /etc/.updated and /var/.updated stamped with /usr's
#                 mtime, so the ConditionNeedsUpdate= units (on Debian 12:
#                 systemd-sysusers) do not try to rewrite /etc and /var
#   masked        the serial getty on ttyS0 (the console carries the
#                 tests' output)
#   hostname      evt-debian; the host's resolv.conf emptied
# Runs as root (the tree keeps the packages' owners).
set -eu
TOPDIR=$(cd "$(dirname "$0")/../.." && pwd)
overlays=() execs=() fstab=()
while [ $# -gt 0 ]; do
	case $1 in
	--overlay) overlays+=("$2"); shift 2 ;;
	--overlay=*) overlays+=("${1#*=}"); shift ;;
	--exec) execs+=("$2"); shift 2 ;;
	--exec=*) execs+=("${1#*=}"); shift ;;
	--fstab) fstab+=("$2"); shift 2 ;;
	--fstab=*) fstab+=("${1#*=}"); shift ;;
	*) break ;;
	esac
done
out=${1:?usage: debian-root.sh [--overlay DIR]... [--exec FILE]... OUTDIR}
die() { echo "debian-root: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (the tree keeps its owners)"
command -v mmdebstrap >/dev/null || die "mmdebstrap not installed"

suite=bookworm variant=minbase include=systemd-sysv,udev,kmod
cache=${DEBIAN_ROOT_CACHE:-$TOPDIR/build/debian-root}
key=$(printf '%s\n' "$suite" "$variant" "$include" | sha256sum | cut -c1-12)
tarball=$cache/$suite-$variant-$key.tar
mkdir -p "$cache" "$out"

if [ ! -s "$tarball" ]; then
	# shellcheck disable=SC2016 # apt's $(FIELD) placeholders, not ours
	mirror=${DEBIAN_ROOT_MIRROR:-$(apt-get indextargets --format '$(RELEASE) $(REPO_URI)' \
		'Identifier: Packages' 2>/dev/null | awk -v s="$suite" '$1 == s { print $2; exit }')}
	[ -n "$mirror" ] || die "no $suite archive in this machine's apt configuration (set DEBIAN_ROOT_MIRROR)"
	# One builder at a time; the tarball appears whole or not at all.
	exec 9>"$cache/.lock"
	flock 9
	if [ ! -s "$tarball" ]; then
		# mmdebstrap picks the format from the name: keep ".tar".
		rm -rf "$cache/partial.tar"
		echo "debian-root: mmdebstrap $suite ($variant, $include) into $tarball" >&2
		mmdebstrap --quiet --variant="$variant" --include="$include" "$suite" \
			"$cache/partial.tar" "deb $mirror $suite main" >"$cache/mmdebstrap.log" 2>&1 ||
			die "mmdebstrap failed: $(tail -n 3 "$cache/mmdebstrap.log" | tr '\n' '|')"
		mv "$cache/partial.tar" "$tarball"
	fi
	exec 9>&-
fi

r=$out/root
rm -rf "$r" "$out/image.ext4" "$out/files.sha256"
mkdir -p "$r"
tar --numeric-owner -xpf "$tarball" -C "$r"

# Read-only root: what must be written goes to tmpfs.
cat >"$r/etc/fstab" <<'EOF'
# The root is an extverity device: read-only, never checked (fsck could
# not open it and nothing may repair it).
/dev/mapper/vroot	/		ext4	ro,noatime			0 0
tmpfs			/tmp		tmpfs	mode=1777,nosuid,nodev		0 0
tmpfs			/var/tmp	tmpfs	mode=1777,nosuid,nodev		0 0
tmpfs			/var/log	tmpfs	mode=0755,nosuid,nodev,noexec	0 0
EOF
for l in "${fstab[@]}"; do
	printf '%s\n' "$l" >>"$r/etc/fstab"
done
mkdir -p "$r/etc/systemd/journald.conf.d"
printf '[Journal]\nStorage=volatile\n' >"$r/etc/systemd/journald.conf.d/evt-volatile.conf"
: >"$r/etc/machine-id"
rm -f "$r/var/lib/dbus/machine-id"
echo evt-debian >"$r/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\tevt-debian\n' >"$r/etc/hosts"
: >"$r/etc/resolv.conf"
ln -sfn /dev/null "$r/etc/systemd/system/serial-getty@ttyS0.service"

for d in "${overlays[@]}"; do
	cp -a "$d/." "$r/"
done
for f in "${execs[@]}"; do
	install -D -m 755 "$f" "$r/usr/local/sbin/${f##*/}"
	for lib in $(ldd "$f" | grep -o '/[^ ]*'); do
		# /lib is a link to usr/lib in the root (merged /usr).
		[ -e "$r$lib" ] || cp -L "$lib" "$r$lib"
	done
done

# Stamps last: /usr must not change after them.
usr_ns=$(stat -c '%.9Y' "$r/usr" | tr -d .)
for d in etc var; do
	printf '# This file holds the time its directory was last updated.\nTIMESTAMP_NSEC=%s\n' \
		"$usr_ns" >"$r/$d/.updated"
	touch -r "$r/usr" "$r/$d/.updated"
done

list=usr/local/share/evt-root/files.sha256
mkdir -p "$r/${list%/*}"
(cd "$r" && find . -xdev -type f ! -path "./$list" -print0 | LC_ALL=C sort -z |
	xargs -0 sha256sum) >"$out/files.sha256"
cp "$out/files.sha256" "$r/$list"

kib=$(du -sk --apparent-size "$r" | cut -f1)
size=$(((kib * 13 / 10 + 65536) >> 10))M
mke2fs -q -t ext4 -b 4096 -L evt-debian -d "$r" "$out/image.ext4" "$size" >/dev/null ||
	die "mke2fs -d failed"
echo "debian-root: $out/image.ext4 ($size, $(wc -l <"$out/files.sha256") files) from $tarball" >&2
