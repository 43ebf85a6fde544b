#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench-uml: the CPU cost of dm-verity and extverity, side by side,
# under User-Mode Linux (../shared/notes/uml.md), where kernel code runs at
# native speed.  The same reference image as make bench; cold sequential
# read of the whole device (4 MiB reads) and cold whole-tree read of the
# mounted filesystem, for raw (linear), verity and extverity, each of the
# two with and without try_verify_in_tasklet, interleaved, pinned to one
# CPU (so a rate is the inverse of the CPU time per MiB), medians.  Writes
# bench/results/<stamp>-uml.{json,md}.
#
#   BENCH_UML_ROUNDS  interleaved rounds (default 5)
#   BENCH_UML_CPU     host CPU to pin to (default: the last one)
set -euo pipefail
TOPDIR=$(cd "$(dirname "$0")/.." && pwd)
export TOPDIR
cd "$TOPDIR"
: "${BENCH_UML_ROUNDS:=5}"
: "${BENCH_UML_CPU:=$(($(nproc) - 1))}"
EV=$TOPDIR/tools/extverity
. bench/ref.sh
die() { echo "bench-uml: $*" >&2; exit 1; }

scripts/uml-kernel.sh all
KERNEL=$TOPDIR/build/uml-kernel/linux-um
KO=$TOPDIR/build/uml-module/drivers/md/dm-extverity.ko
bench_ref
w=$BENCH_DIR/uml
# ubd reads go through the host page cache: keep the disks in memory.
shm=$(mktemp -d /dev/shm/extverity-uml.XXXXXX)
trap 'rm -rf "$shm"' EXIT
mkdir -p "$w" bench/results
stamp=$(date -u +%Y%m%dT%H%M%SZ)

SALT=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
cp "$IMG" "$shm/data"
"$EV" format --salt="$SALT" "$shm/data" "$shm/ehash" >"$w/eformat.out"
veritysetup format --salt="$SALT" "$shm/data" "$shm/vhash" >"$w/vformat.out"
EROOT=$(sed -n 's/^Root digest:[[:space:]]*//p' "$w/eformat.out")
VROOT=$(sed -n 's/^Root hash:[[:space:]]*//p' "$w/vformat.out")
ETABLE=$("$EV" table "$shm/data" "$shm/ehash" "$EROOT" |
	sed "s|$shm/data|/dev/ubdb|; s|$shm/ehash|/dev/ubdd|")
# The guest appends "1 try_verify_in_tasklet": no optional arguments here.
[[ "$ETABLE" == *" $EROOT" ]] || die "unexpected table line: $ETABLE"

# The root: static busybox, dmsetup with its libraries, the module, /init.
root=$w/root
rm -rf "$root"
mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,mnt}
cp /bin/busybox "$root/bin/"
# The root is read-only in the guest: the applet links are made here.
for a in $(/bin/busybox --list); do
	[ -e "$root/bin/$a" ] || ln -s busybox "$root/bin/$a"
done
cp /usr/sbin/dmsetup "$root/sbin/"
for l in $(ldd /usr/sbin/dmsetup | grep -Eo '/[^ ]+'); do
	mkdir -p "$root$(dirname "$l")"
	cp -L "$l" "$root$l"
done
cp "$KO" "$root/dm-extverity.ko"
cp bench/uml-guest.sh "$root/init"
cat >"$root/params" <<P
LEN=$((BLOCKS * 8))
VTABLE_ARGS="1 /dev/ubdb /dev/ubdc 4096 4096 $BLOCKS 1 sha256 $VROOT $SALT"
ETABLE="$ETABLE"
ROUNDS=$BENCH_UML_ROUNDS
P
mke2fs -q -F -t ext4 -d "$root" "$shm/root" 64M

echo "bench-uml: $BENCH_UML_ROUNDS rounds, pinned to CPU $BENCH_UML_CPU"
TMPDIR=/dev/shm timeout 1800 taskset -c "$BENCH_UML_CPU" "$KERNEL" mem=1024M \
	ubd0r="$shm/root" ubd1r="$shm/data" ubd2r="$shm/vhash" ubd3r="$shm/ehash" \
	root=/dev/ubda ro rootfstype=ext4 init=/init con=null con0=fd:0,fd:1 \
	</dev/null >"$w/console.raw" 2>&1 || true
tr -d '\r' <"$w/console.raw" >"$w/console.log"
grep -q '^EVT-UML-END' "$w/console.log" ||
	die "the guest did not finish; see $w/console.log"
if grep '^EVT-UML-FAIL' "$w/console.log" >&2; then
	die "the guest reported failures; see $w/console.log"
fi
grep '^EVT-UML ' "$w/console.log" >"$w/times"
python3 bench/uml-report.py "$w/times" "$(stat -c %s "$IMG")" "$FILE_BYTES" \
	"bench/results/$stamp-uml"
cat "bench/results/$stamp-uml.md"
