# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
#
# The reference image of `make bench` and `make bench-uml`: an ext4 image
# holding BENCH_BYTES (default 300000000) of files whose sizes follow
# Debian 12's /usr.  Source it with TOPDIR set; bench_ref builds the image
# once (kept in build/bench while BENCH_BYTES is unchanged) and sets
#   BENCH_DIR   build/bench
#   IMG         the image;  BLOCKS  its size in 4 KiB blocks
#   FILES, FILE_BYTES   the number and total size of its files
# shellcheck disable=SC2034
: "${BENCH_BYTES:=300000000}"
BENCH_DIR=$TOPDIR/build/bench

bench_ref() {
	local w=$BENCH_DIR kb
	local sizes=$TOPDIR/../shared/data/debian12-usr-file-sizes.txt.gz
	[ -r "$sizes" ] || sizes=/work/shared/data/debian12-usr-file-sizes.txt.gz
	mkdir -p "$w"
	if [ ! -f "$w/ref.ext4" ] ||
		[ "$(cat "$w/ref.bytes" 2>/dev/null)" != "$BENCH_BYTES" ]; then
		rm -rf "$w/src" "$w/ref.ext4"
		echo "bench: building the reference tree ($BENCH_BYTES bytes, /usr file sizes)"
		python3 "$TOPDIR/bench/mkref.py" "$sizes" "$w/src" "$BENCH_BYTES"
		kb=$(du -sk "$w/src" | cut -f1)
		mke2fs -q -F -t ext4 -b 4096 -d "$w/src" "$w/ref.ext4" \
			$((kb + kb / 5 + 32768))k
		echo "$BENCH_BYTES" >"$w/ref.bytes"
	fi
	IMG=$w/ref.ext4
	BLOCKS=$(($(stat -c %s "$IMG") / 4096))
	FILES=$(find "$w/src" -type f | wc -l)
	FILE_BYTES=$(find "$w/src" -type f -printf '%s\n' | awk '{s += $1} END {print s}')
}
