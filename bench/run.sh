#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: extverity against dm-verity and the raw device in one VM boot,
# and `extverity format` against `veritysetup format` (also both with FEC
# parity, --fec-device) and `fsverity digest`, `extverity verify` against
# `veritysetup verify` on the host.  Ratios are what count: the guest runs under TCG, and this
# machine is shared.  Writes bench/results/<stamp>.{json,md,png}.
#
#   BENCH_BYTES     data in the reference image (default 300000000)
#   BENCH_RUNTIME   seconds per random-read run (default 10)
#   BENCH_ROUNDS    interleaved rounds in the guest (default 2)
#   BENCH_HOST_RUNS alternating host format runs (default 5)
#   BENCH_MANY_FILES files in the image verify is timed on (default 100000)
#   BENCH_VERIFY_RUNS timed verify runs on it (default 5)
set -eu
TOPDIR=$(cd "$(dirname "$0")/.." && pwd)
export TOPDIR
cd "$TOPDIR"
: "${BENCH_RUNTIME:=10}"
: "${BENCH_ROUNDS:=2}"
: "${BENCH_HOST_RUNS:=5}"
for c in fio:fio gnuplot:gnuplot-nox bc:bc; do
	command -v "${c%%:*}" >/dev/null && continue
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${c#*:}" >/dev/null ||
		echo "bench: cannot install ${c#*:}" >&2
done
EV=$TOPDIR/tools/extverity
. bench/ref.sh
w=$BENCH_DIR
mkdir -p bench/results
stamp=$(date -u +%Y%m%dT%H%M%SZ)
bench_ref
SALT=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')

# Host: format throughput, alternating, medians.
now() { date +%s.%N; }
: >"$w/host.txt"
for _ in $(seq "$BENCH_HOST_RUNS"); do
	echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true
	cat "$IMG" >/dev/null
	t0=$(now); "$EV" format --salt="$SALT" "$IMG" "$w/ehash" >"$w/eformat.out"; t1=$(now)
	veritysetup format --salt="$SALT" "$IMG" "$w/vhash" >"$w/vformat.out"; t2=$(now)
	(cd "$w/src" && find . -type f -print0 | xargs -0 -P "$(nproc)" -n 256 \
		fsverity digest --salt="$SALT" >/dev/null); t3=$(now)
	echo "extverity $(echo "$t1 - $t0" | bc)" >>"$w/host.txt"
	echo "veritysetup $(echo "$t2 - $t1" | bc)" >>"$w/host.txt"
	echo "fsverity $(echo "$t3 - $t2" | bc)" >>"$w/host.txt"
done
# Host: format with Reed-Solomon parity (2 roots, both), alternating,
# medians; what the parity costs each is its time less format's alone.
for _ in $(seq "$BENCH_HOST_RUNS"); do
	echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true
	cat "$IMG" >/dev/null
	t0=$(now)
	"$EV" format --salt="$SALT" --fec-device="$w/efec" --fec-roots=2 "$IMG" "$w/ehash" >/dev/null
	t1=$(now)
	veritysetup format --salt="$SALT" --fec-device="$w/vfec" --fec-roots=2 "$IMG" "$w/vhash" >/dev/null
	t2=$(now)
	echo "extverity-fec $(echo "$t1 - $t0" | bc)" >>"$w/host.txt"
	echo "veritysetup-fec $(echo "$t2 - $t1" | bc)" >>"$w/host.txt"
done
rm -f "$w/efec" "$w/vfec"
"$EV" format --salt="$SALT" "$IMG" "$w/ehash" >"$w/eformat.out"
veritysetup format --salt="$SALT" "$IMG" "$w/vhash" >"$w/vformat.out"
EROOT=$(sed -n 's/^Root digest:[[:space:]]*//p' "$w/eformat.out")
VROOT=$(sed -n 's/^Root hash:[[:space:]]*//p' "$w/vformat.out")
# Host: verify throughput on the same image, page cache dropped and the
# image read back in first, as for format: hashing, not the disk, is timed.
for _ in $(seq "$BENCH_HOST_RUNS"); do
	echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true
	cat "$IMG" "$w/ehash" "$w/vhash" >/dev/null
	t0=$(now); "$EV" verify "$IMG" "$w/ehash" "$EROOT" >/dev/null; t1=$(now)
	veritysetup verify "$IMG" "$w/vhash" "$VROOT" >/dev/null; t2=$(now)
	echo "extverity-verify $(echo "$t1 - $t0" | bc)" >>"$w/host.txt"
	echo "veritysetup-verify $(echo "$t2 - $t1" | bc)" >>"$w/host.txt"
done

# Host: peak RSS (KiB) of format and verify, on the reference image and on
# a 32 MiB ext4 image holding an 8 GiB sparse file (64.6 MiB of hash area:
# memory must not follow file sizes, goal < 64 MiB; issue 15).
rm -rf "$w/sparse"; mkdir -p "$w/sparse/d"
truncate -s 8G "$w/sparse/d/big"
mke2fs -q -F -t ext4 -b 4096 -d "$w/sparse/d" "$w/sparse/img" 32M >/dev/null
: >"$w/rss.txt"
for im in "reference:$IMG" "sparse-8G:$w/sparse/img"; do
	/usr/bin/time -f %M -o "$w/rss" "$EV" format "${im#*:}" "$w/sparse/h" >"$w/sparse/out"
	echo "format ${im%%:*} $(cat "$w/rss")" >>"$w/rss.txt"
	/usr/bin/time -f %M -o "$w/rss" "$EV" verify "${im#*:}" "$w/sparse/h" \
		"$(sed -n 's/^Root digest:[[:space:]]*//p' "$w/sparse/out")" >/dev/null
	echo "verify ${im%%:*} $(cat "$w/rss")" >>"$w/rss.txt"
done
rm -rf "$w/sparse"

# Host: verify of an image of BENCH_MANY_FILES (default 100,000) files of
# 1-6 KB, each its own tree (issue 15: goal < 1 s): one warm-up run, then
# the median of BENCH_VERIFY_RUNS.  The image is kept in build/bench while
# the count is unchanged; its tree is made in /dev/shm when it can be (10 s
# rather than 30 on a disk) and removed once the image is built.
: "${BENCH_MANY_FILES:=100000}"
: "${BENCH_VERIFY_RUNS:=5}"
many=$w/many.ext4
if [ ! -f "$many" ] || [ "$(cat "$w/many.count" 2>/dev/null)" != "$BENCH_MANY_FILES" ]; then
	echo "bench: building an image of $BENCH_MANY_FILES small files"
	rm -f "$many"
	tree=$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d -p "$w")
	python3 bench/mkmany.py "$tree" "$BENCH_MANY_FILES"
	kb=$(du -sk "$tree" | cut -f1)
	mke2fs -q -F -t ext4 -b 4096 -N $((BENCH_MANY_FILES + 1000)) -d "$tree" \
		"$many" $((kb + kb / 5 + 32768))k >/dev/null
	rm -rf "$tree"
	echo "$BENCH_MANY_FILES" >"$w/many.count"
fi
"$EV" format "$many" "$w/many.hash" >"$w/many.out"
MROOT=$(sed -n 's/^Root digest:[[:space:]]*//p' "$w/many.out")
"$EV" verify "$many" "$w/many.hash" "$MROOT" >/dev/null
: >"$w/verify.txt"
for _ in $(seq "$BENCH_VERIFY_RUNS"); do
	t0=$(now); "$EV" verify "$many" "$w/many.hash" "$MROOT" >/dev/null; t1=$(now)
	echo "verify many-$BENCH_MANY_FILES $(echo "$t1 - $t0" | bc)" >>"$w/verify.txt"
done
rm -f "$w/many.hash"

# Guest.
. tests/vm/vm-lib.sh
why=$(vm_prereqs)
[ -z "$why" ] && [ ! -f drivers/md/dm-extverity.ko ] && why="drivers/md/dm-extverity.ko not built"
[ -n "$why" ] && { echo "bench: $why" >&2; exit 1; }
rm -rf "$w/ctl"
mkdir -p "$w/ctl/bin" "$w/ctl/lib"
cp /usr/bin/fio "$w/ctl/bin/fio"
for l in $(ldd /usr/bin/fio | grep -Eo '/[^ ]+'); do cp -L "$l" "$w/ctl/lib/"; done
cat >"$w/ctl/params" <<P
BLOCKS=$BLOCKS
VROOT=$VROOT
VSALT=$SALT
EROOT=$EROOT
FILE_BYTES=$FILE_BYTES
RUNTIME=$BENCH_RUNTIME
ROUNDS=$BENCH_ROUNDS
P
echo "bench: booting the guest ($BENCH_ROUNDS rounds x 5 devices)"
VM_MEM=2048 VM_OUTDIR=$w run_vm --name=bench --timeout=$((600 + BENCH_ROUNDS * 5 * (4 * BENCH_RUNTIME + 120))) \
	--ctl="$w/ctl" bench/guest.sh "$IMG:ro" "$w/vhash:ro" "$w/ehash:ro" || {
	echo "bench: the guest run failed: $(cat "$w/boot-bench/outcome"); see $w/boot-bench/console.log" >&2
	cat "$w/boot-bench/problems" >&2 2>/dev/null || true
	exit 1
}
if grep -q '^FAIL' "$w/boot-bench/results"; then
	grep '^FAIL' "$w/boot-bench/results" >&2
	exit 1
fi

python3 bench/report.py --res "$w/boot-bench/res" --host "$w/host.txt" \
	--image "$IMG" --ehash "$w/ehash" --vhash "$w/vhash" --files "$FILES" \
	--file-bytes "$FILE_BYTES" --free-blocks "$FREE_BLOCKS" --rss "$w/rss.txt" --verify "$w/verify.txt" --out "bench/results/$stamp"
cp "bench/results/$stamp.md" bench/results/latest.md
cp "bench/results/$stamp.json" bench/results/latest.json
[ -f "bench/results/$stamp.png" ] && cp "bench/results/$stamp.png" bench/results/latest.png
cat "bench/results/$stamp.md"
