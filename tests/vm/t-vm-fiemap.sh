#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# XFS, btrfs and EROFS (plain and lz4) images formatted with
# `extverity format --fs=fiemap` (tests/lib/fsimages.sh), opened with
# `extverity open` in the guest and mounted read-only through the target:
# every file's sha256 matches the host's, status says verified, and
# `extverity measure` of every file prints what `fsverity digest` printed
# for it on the host (btrfs: refused, its st_dev is not the device).  A
# copy of each image with one byte flipped in a block a file tree owns:
# that file's read fails with EIO, every other file reads intact, the
# kernel report names the file's inode, status says corrupted and names
# the file's path.  One boot
# (scenarios/fiemap.sh).  A filesystem the kernel lacks (the debug kernel
# builds none of them) is skipped.
# shellcheck disable=SC1091
. "$TOPDIR/tests/lib.sh"
. "$TOPDIR/tests/vm/vm-lib.sh"
. "$TOPDIR/tests/lib/fsimages.sh"

why=$(vm_prereqs)
[ -z "$why" ] && [ ! -f "$MODULE" ] && why="kernel module $MODULE not built (make module)"
[ -z "$why" ] && [ ! -x "$EXTVERITY_RELEASE" ] && why="tool $EXTVERITY_RELEASE not built (make tools)"
if [ -n "$why" ]; then
	fail "fiemap VM scenario: $why"
	finish
fi
if [ "$(id -u)" -ne 0 ]; then
	skip "fiemap VM scenario: needs root for loop mounts"
	finish
fi

w=$WORKDIR/fiemap
rm -rf "$w"
mkdir -p "$w/ctl" "$w/mnt"
fsimg_src "$w/src"

disks=()
letters=(b c d e f g h i j k l m n o p)
: >"$w/ctl/plan"
for fs in xfs btrfs erofs erofs-lz4; do
	mtype=${fs%-lz4}
	case $fs in
	xfs) syms=XFS_FS ;;
	btrfs) syms=BTRFS_FS ;;
	erofs) syms=EROFS_FS ;;
	erofs-lz4) syms="EROFS_FS EROFS_FS_ZIP" ;;
	esac
	missing=
	for sym in $syms; do
		[ -n "$(vm_kconfig "$sym")" ] || missing=$sym
	done
	if [ -n "$missing" ]; then
		skip "$fs: the guest kernel has no CONFIG_$missing"
		continue
	fi
	if ! command -v "$(fsimg_tool $fs)" >/dev/null; then
		skip "$fs: $(fsimg_tool $fs) missing"
		continue
	fi
	img=$w/$fs.img
	if ! fsimg_make $fs "$img" "$w/src" "$w/mnt"; then
		fail "$fs: could not make the image"
		continue
	fi
	if ! "$EXTVERITY_RELEASE" format --fs=fiemap --json "$img" \
		"$w/$fs.hash" >"$w/$fs.json" 2>"$w/err"; then
		fail "$fs: format --fs=fiemap: $(cat "$w/err")"
		continue
	fi
	root=$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["root_digest"])' "$w/$fs.json")
	# What the guest must read back, and inode numbers for the report.
	mount -o ro,loop "$img" "$w/mnt"
	(cd "$w/mnt" && find . -type f -print0 | LC_ALL=C sort -z |
		xargs -0 sha256sum) >"$w/ctl/$fs.sha256"
	find "$w/mnt" -type f -printf '%i /%P\n' >"$w/$fs.inodes"
	# What `extverity measure` must print in the guest for every file:
	# fs-verity's own digests of the files (fsverity-utils, the oracle).
	# A btrfs file is refused instead (anonymous st_dev).
	(cd "$w/mnt" && find . -type f -print0 | LC_ALL=C sort -z |
		xargs -0 fsverity digest --hash-alg=sha256 --block-size=4096) \
		>"$w/ctl/$fs.fsverity"
	umount "$w/mnt"
	# The bad copy: the first block of the first extent a file tree owns.
	python3 "$TOPDIR/tests/userspace/evread.py" "$w/$fs.hash" "$root" \
		>"$w/$fs.ext"
	read -r blk ino < <(awk '$3 != "zero" && $3 != 0 { print $1, $5; exit }' \
		"$w/$fs.ext")
	path=$(awk -v i="$ino" '$1 == i { print $2; exit }' "$w/$fs.inodes")
	if [ -z "$path" ]; then
		fail "$fs: no file owns a block (FIEMAP unused?)"
		continue
	fi
	cp --sparse=always "$img" "$w/$fs.bad"
	flip "$w/$fs.bad" $((blk * 4096 + 100))
	n=${#disks[@]}
	echo "$fs $mtype /dev/vd${letters[n]} /dev/vd${letters[n + 1]}" \
		"/dev/vd${letters[n + 2]} $root $ino $path" >>"$w/ctl/plan"
	disks+=("$img:ro" "$w/$fs.bad:ro" "$w/$fs.hash:ro")
	echo "  $fs: $(wc -l <"$w/ctl/$fs.sha256") files; block $blk of $path" \
		"(inode $ino) damaged in the bad copy"
done
[ -s "$w/ctl/plan" ] || finish
# The checks scenarios/fiemap.sh reports for each filesystem of the plan:
# none may go missing (vm_report, declared checks).
while read -r fs _; do
	for c in module open mount every-file-matches \
		"file-count-$(wc -l <"$w/ctl/$fs.sha256")" verified measure \
		close gone bad-open bad-mount bad-file-EIO bad-others-match \
		bad-report-names-inode bad-corrupted bad-status-names-path \
		bad-close bad-gone; do
		echo "$fs-$c"
	done
done <"$w/ctl/plan" >"$w/ctl/checks"

VM_OUTDIR=$w run_vm --name=fiemap --timeout=300 --ctl="$w/ctl" \
	"$TOPDIR/tests/vm/scenarios/fiemap.sh" "${disks[@]}"
VM_OUTDIR=$w vm_report fiemap
finish
