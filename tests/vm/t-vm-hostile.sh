#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The target refuses hostile input at table load (one boot,
# scenarios/hostile.sh; docs/testing.md "Hostile manifests and table
# lines"):
#   - hash areas that authenticate (digests and superblock recomputed, the
#     root on the table line matches), each with one field set to one
#     bound: extents overlapping, missing, unsorted, past the end, empty;
#     trees and sections out of bounds; trees' hash blocks shared or out
#     of order; the inode index unsorted, repeating an inode, naming the
#     residual tree or none, with reserved bits, counts past its section,
#     the section out of place, empty, or ignored with its flag clear;
#     counts and sizes at integer limits; unknown flags,
#     versions, algorithms; the table's algorithm or hash start against
#     the superblock; and the bounds themselves, which must load
#     (hostile-manifests.py: each outcome written by hand in its table),
#     packed on one disk and loaded at their byte offsets;
#   - table lines with wrong arity, numbers at limits, bad digests, devices
#     that do not exist, unknown, duplicate and conflicting options, option
#     counts that lie (hostile-tables.py);
#   - a 1 KiB-block image on loop devices whose logical blocks are 1024
#     (loads), 2048 or 4096 bytes (refused), as data and as hash device.
# Every hostile case must fail to load, leave no device and put its reason
# in the kernel log; the valid variants must load and read back; at the end
# the intact hash area still loads and its files read back.
# shellcheck disable=SC1091
. "$TOPDIR/tests/lib.sh"
. "$TOPDIR/tests/vm/vm-lib.sh"

why=$(vm_prereqs)
[ -z "$why" ] && [ ! -f "$MODULE" ] && why="kernel module $MODULE not built (make module)"
[ -z "$why" ] && [ ! -x "$EXTVERITY_RELEASE" ] && why="tool $EXTVERITY_RELEASE not built (make tools)"
[ -z "$why" ] && [ ! -x /usr/sbin/losetup ] && why="util-linux losetup not installed (the guest's --sector-size)"
if [ -n "$why" ]; then
	fail "hostile input VM scenario: $why"
	finish
fi

EV=$EXTVERITY_RELEASE
w=$WORKDIR/hostile
rm -rf "$w"
mkdir -p "$w/ctl" "$w/src/d"
die() { fail "setup: $*"; finish; }

# A small ext4 image: a two-level tree (> 128 blocks), one-level trees,
# one-block, empty and sparse files, zero ranges.
python3 - "$w/src" <<'EOF' || die "source tree"
import random, sys
d = sys.argv[1]
r = random.Random(6)
def wr(p, n):
    with open(d + '/' + p, 'wb') as f:
        f.write(bytes(r.getrandbits(8) for _ in range(n)))
wr('big.bin', 700000)
wr('mid', 40000)
wr('small', 3000)
wr('d/tail', 5000)
for i in range(8):
    wr('d/f%d' % i, 1800 * (i + 1))
open(d + '/empty', 'w').close()
with open(d + '/sparse', 'wb') as f:
    f.seek(300000)
    f.write(b'middle')
    f.truncate(600000)
EOF
IMG=$w/image.ext4
mke2fs -q -F -t ext4 -b 4096 -d "$w/src" "$IMG" 4M >"$w/mke2fs.log" 2>&1 ||
	die "mke2fs: $(cat "$w/mke2fs.log")"
# A salt of 32 bytes, the limit: the table's salt_size cases start there.
SALT32=5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a
"$EV" format --salt=$SALT32 "$IMG" "$w/image.hash" >"$w/format.out" 2>&1 ||
	die "extverity format: $(cat "$w/format.out")"
ROOT=$(sed -n 's/^Root digest:[[:space:]]*//p' "$w/format.out")
(cd "$w/src" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) \
	>"$w/ctl/src.sha256"

# The same files in 1 KiB blocks, for devices whose logical block is
# larger (docs/table.md: "Device logical block size exceeds the block
# size"): /dev/vdd holds the image, then its hash area, padded to 4 KiB.
# Each case: the logical block size of the data device's and of the hash
# device's loop device, and the outcome.
IMG1K=$w/image1k.ext4
mke2fs -q -F -t ext4 -b 1024 -d "$w/src" "$IMG1K" 4M >"$w/mke2fs1k.log" 2>&1 ||
	die "mke2fs -b 1024: $(cat "$w/mke2fs1k.log")"
"$EV" format --salt=$SALT32 --data-block-size=1024 "$IMG1K" "$w/image1k.hash" >"$w/format1k.out" 2>&1 ||
	die "extverity format (1 KiB): $(cat "$w/format1k.out")"
L1_ROOT=$(sed -n 's/^Root digest:[[:space:]]*//p' "$w/format1k.out")
L1_BYTES=$(stat -c %s "$IMG1K")
L1_HBYTES=$((($(stat -c %s "$w/image1k.hash") + 4095) / 4096 * 4096))
cp "$IMG1K" "$w/lbs.bin"
truncate -s $((L1_BYTES + L1_HBYTES)) "$w/lbs.bin"
dd if="$w/image1k.hash" of="$w/lbs.bin" bs=1M seek="$L1_BYTES" oflag=seek_bytes \
	conv=notrunc status=none || die "lbs.bin"
cat >"$w/ctl/lbs-cases" <<EOF
l01 V 512 512
l02 V 1024 512
l03 R 2048 512
l04 R 4096 512
l05 V 512 1024
l06 R 512 2048
l07 R 512 4096
EOF
LBS_EXCEEDS='extverity: Device logical block size exceeds the block size'
printf '%s\t%s\n' >"$w/ctl/lbs-expect" \
	'l01 V data-lbs=512,hash-lbs=512' '' \
	'l02 V data-lbs=1024(the-block-size)' '' \
	'l03 R data-lbs=2048' "$LBS_EXCEEDS" \
	'l04 R data-lbs=4096' "$LBS_EXCEEDS" \
	'l05 V hash-lbs=1024(the-block-size)' '' \
	'l06 R hash-lbs=2048' "$LBS_EXCEEDS" \
	'l07 R hash-lbs=4096' "$LBS_EXCEEDS"

python3 "$TOPDIR/tests/vm/hostile-manifests.py" "$w/image.hash" "$IMG" "$w/ctl" \
	>"$w/manifests.out" 2>&1 || die "hostile-manifests.py: $(tail -n 5 "$w/manifests.out")"
mv "$w/ctl/areas.bin" "$w/areas.bin"
# Slot 0 is the area as format wrote it: the re-encoding is exact.
cmp -s -n "$(stat -c %s "$w/image.hash")" "$w/image.hash" "$w/areas.bin" ||
	die "slot 0 of areas.bin differs from the hash area"
grep -q "^m000 V ro .* $ROOT\$" "$w/ctl/manifest-cases" ||
	die "case m000 does not carry the root digest format printed"
AREA_SECTORS=$(($(stat -c %s "$w/areas.bin") / 512))
python3 "$TOPDIR/tests/vm/hostile-tables.py" gen "$w/ctl" \
	$(($(stat -c %s "$IMG") / 512)) "$ROOT" "$AREA_SECTORS" >"$w/tables.out" 2>&1 ||
	die "hostile-tables.py: $(tail -n 5 "$w/tables.out")"
cat "$w/manifests.out" "$w/tables.out"

cat >"$w/ctl/params" <<EOF
ROOT=$ROOT
LEN=$(($(stat -c %s "$IMG") / 512))
IMAGE_SHA256=$(sha256sum <"$IMG" | cut -d' ' -f1)
L1_ROOT=$L1_ROOT
L1_LEN=$((L1_BYTES / 512))
L1_BYTES=$L1_BYTES
L1_HOFF=$L1_BYTES
L1_HBYTES=$L1_HBYTES
L1_SHA256=$(sha256sum <"$IMG1K" | cut -d' ' -f1)
EOF

# Markers go to the kernel log through /dev/kmsg (not rate-limited with
# printk.devkmsg=on); a big log buffer keeps every case's lines.
run_vm --name=hostile --timeout=420 --ctl="$w/ctl" \
	--append="log_buf_len=16M printk.devkmsg=on" \
	"$TOPDIR/tests/vm/scenarios/hostile.sh" "$IMG:ro" "$w/areas.bin:ro" "$w/lbs.bin:ro"
vm_report hostile

out=$VM_OUTDIR/boot-hostile
if [ ! -f "$out/res/hostile.res" ] || [ ! -f "$out/res/hostile.dmesg" ]; then
	fail "hostile/cases: no results from the guest"
	finish
fi
python3 "$TOPDIR/tests/vm/hostile-tables.py" check "$w/ctl/manifest-expect" \
	"$w/ctl/table-expect" "$w/ctl/lbs-expect" -- \
	"$out/res/hostile.res" "$out/res/hostile.dmesg" \
	>"$out/check.out" 2>&1
rc=$?
grep '^COUNT' "$out/check.out"
echo "guest: $(cat "$out/res/hostile.time" 2>/dev/null), boot $(cat "$out/seconds") s"
if [ $rc -eq 0 ]; then
	pass "hostile/cases: every hostile case refused with its reason, every valid one loaded and read back ($(grep '^COUNT [lmt]' "$out/check.out" | tr '\n' ' '))"
else
	fail "hostile/cases: $(grep -c '^FAIL' "$out/check.out") cases wrong, see $out/check.out: $(grep '^FAIL' "$out/check.out" | head -n 5 | tr '\n' '|')"
fi
finish
