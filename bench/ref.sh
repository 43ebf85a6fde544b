# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
#
# The reference image of `make bench` and `make bench-uml`: an ext4 image
# holding BENCH_BYTES (default 300000000) of files whose sizes follow
# Debian 12's /usr, in an image BENCH_IMAGE:
#   full   (the default) its free space then filled with more such files
#          (another draw), to within about 1 %: no zero range to skip, so
#          extverity hashes what dm-verity hashes
#   half   about half of its blocks free
#   spare  a fifth and 32 MiB free (the image of the runs before
#          2026-12-07)
# Source it with TOPDIR set; bench_ref builds the image once (kept in
# build/bench while BENCH_BYTES and BENCH_IMAGE are unchanged) and sets
#   BENCH_DIR   build/bench
#   IMG         the image;  BLOCKS  its size in 4 KiB blocks
#   FILES, FILE_BYTES   the number and total size of its files
#   FREE_BLOCKS         its free blocks
# shellcheck disable=SC2034
: "${BENCH_BYTES:=300000000}"
: "${BENCH_IMAGE:=full}"
BENCH_DIR=$TOPDIR/build/bench

# free_blocks IMAGE: the free blocks ext4's superblock counts.
free_blocks() {
	dumpe2fs -h "$1" 2>/dev/null | sed -n 's/^Free blocks:[[:space:]]*//p'
}

bench_ref() {
	local w=$BENCH_DIR kb size free pct
	local sizes=$TOPDIR/../shared/data/debian12-usr-file-sizes.txt.gz
	[ -r "$sizes" ] || sizes=/work/shared/data/debian12-usr-file-sizes.txt.gz
	mkdir -p "$w"
	if [ ! -f "$w/ref.ext4" ] ||
		[ "$(cat "$w/ref.bytes" 2>/dev/null)" != "$BENCH_BYTES $BENCH_IMAGE" ]; then
		rm -rf "$w/src" "$w/ref.ext4" "$w/ref.bytes"
		echo "bench: building the reference tree ($BENCH_BYTES bytes, /usr file sizes; $BENCH_IMAGE image)"
		python3 "$TOPDIR/bench/mkref.py" "$sizes" "$w/src" "$BENCH_BYTES"
		kb=$(du -sk "$w/src" | cut -f1)
		case $BENCH_IMAGE in
		full | spare) size=$((kb + kb / 5 + 32768)) ;;
		half) size=$((2 * (kb + kb / 20) + 32768)) ;;
		*) echo "bench: BENCH_IMAGE=$BENCH_IMAGE: full, half or spare" >&2; return 1 ;;
		esac
		mke2fs -q -F -t ext4 -b 4096 -d "$w/src" "$w/ref.ext4" "${size}k"
		if [ "$BENCH_IMAGE" = full ]; then
			# Files cost more than their bytes (extent blocks, directory
			# entries): fill less until it fits.
			free=$(free_blocks "$w/ref.ext4")
			for pct in 97 95 93 90 85; do
				rm -rf "$w/src/fill"
				python3 "$TOPDIR/bench/mkref.py" "$sizes" "$w/src/fill" \
					$((free * 4096 / 100 * pct)) 2 >/dev/null
				mke2fs -q -F -t ext4 -b 4096 -d "$w/src" "$w/ref.ext4" "${size}k" \
					2>/dev/null && break
			done
		fi
		echo "$BENCH_BYTES $BENCH_IMAGE" >"$w/ref.bytes"
	fi
	IMG=$w/ref.ext4
	BLOCKS=$(($(stat -c %s "$IMG") / 4096))
	FILES=$(find "$w/src" -type f | wc -l)
	FILE_BYTES=$(find "$w/src" -type f -printf '%s\n' | awk '{s += $1} END {print s}')
	FREE_BLOCKS=$(free_blocks "$IMG")
}
