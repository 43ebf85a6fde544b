#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The target refuses hostile input at table load (one boot,
# scenarios/hostile.sh; docs/testing.md "Hostile manifests and table
# lines"):
#   - hash areas that authenticate (digests and superblock recomputed, the
#     root on the table line matches) but lie: extents overlapping, missing,
#     unsorted, past the end, empty; trees and sections out of bounds;
#     counts and sizes at integer limits; unknown flags, versions,
#     algorithms (hostile-manifests.py), packed on one disk and loaded at
#     their byte offsets;
#   - table lines with wrong arity, numbers at limits, bad digests, devices
#     that do not exist, unknown, duplicate and conflicting options, option
#     counts that lie (hostile-tables.py).
# Every hostile case must fail to load, leave no device and put its reason
# in the kernel log; the valid variants must load and read back; at the end
# the intact hash area still loads and its files read back.
# shellcheck disable=SC1091
. "$TOPDIR/tests/lib.sh"
. "$TOPDIR/tests/vm/vm-lib.sh"

why=$(vm_prereqs)
[ -z "$why" ] && [ ! -f "$MODULE" ] && why="kernel module $MODULE not built (make module)"
[ -z "$why" ] && [ ! -x "$EXTVERITY_RELEASE" ] && why="tool $EXTVERITY_RELEASE not built (make tools)"
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
"$EV" format "$IMG" "$w/image.hash" >"$w/format.out" 2>&1 ||
	die "extverity format: $(cat "$w/format.out")"
ROOT=$(sed -n 's/^Root digest:[[:space:]]*//p' "$w/format.out")
(cd "$w/src" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) \
	>"$w/ctl/src.sha256"

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
EOF

# Markers go to the kernel log through /dev/kmsg (not rate-limited with
# printk.devkmsg=on); a big log buffer keeps every case's lines.
run_vm --name=hostile --timeout=420 --ctl="$w/ctl" \
	--append="log_buf_len=16M printk.devkmsg=on" \
	"$TOPDIR/tests/vm/scenarios/hostile.sh" "$IMG:ro" "$w/areas.bin:ro"
vm_report hostile

out=$VM_OUTDIR/boot-hostile
if [ ! -f "$out/res/hostile.res" ] || [ ! -f "$out/res/hostile.dmesg" ]; then
	fail "hostile/cases: no results from the guest"
	finish
fi
python3 "$TOPDIR/tests/vm/hostile-tables.py" check "$w/ctl/manifest-expect" \
	"$w/ctl/table-expect" -- "$out/res/hostile.res" "$out/res/hostile.dmesg" \
	>"$out/check.out" 2>&1
rc=$?
grep '^COUNT' "$out/check.out"
echo "guest: $(cat "$out/res/hostile.time" 2>/dev/null), boot $(cat "$out/seconds") s"
if [ $rc -eq 0 ]; then
	pass "hostile/cases: every hostile case refused with its reason, every valid one loaded and read back ($(grep '^COUNT [mt]' "$out/check.out" | tr '\n' ' '))"
else
	fail "hostile/cases: $(grep -c '^FAIL' "$out/check.out") cases wrong, see $out/check.out: $(grep '^FAIL' "$out/check.out" | head -n 5 | tr '\n' '|')"
fi
finish
