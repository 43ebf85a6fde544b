#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A 100,000-file ext4 image through the target: the manifest (about 100k
# extents and 100k trees) loads, every sampled file reads back intact, and
# the guest reports how long `dmsetup create` took and how much kernel
# memory (slab + vmalloc) the loaded table holds.  The figures are printed,
# not asserted: speed is a benchmark matter (docs/testing.md).
#
#   VM_MANY_FILES   number of files (default 100000)
# shellcheck disable=SC1091
. "$TOPDIR/tests/lib.sh"
. "$TOPDIR/tests/vm/vm-lib.sh"
: "${VM_MANY_FILES:=100000}"

why=$(vm_prereqs)
[ -z "$why" ] && [ ! -f "$MODULE" ] && why="kernel module $MODULE not built (make module)"
[ -z "$why" ] && [ ! -x "$EXTVERITY_RELEASE" ] && why="tool $EXTVERITY_RELEASE not built (make tools)"
if [ -n "$why" ]; then
	fail "many-files VM scenario: $why"
	finish
fi

w=$WORKDIR/mf
rm -rf "$w"
mkdir -p "$w/src" "$w/ctl"
# Files of 1 to 6000 bytes (one or two blocks), 1000 to a directory, each
# with distinct content so that no tree is shared.
python3 - "$w/src" "$VM_MANY_FILES" <<'PY'
import os, sys
base, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = f'{base}/d{i // 1000:03}'
    if i % 1000 == 0:
        os.mkdir(d)
    with open(f'{d}/f{i % 1000:03}', 'wb') as f:
        f.write((b'%d.' % i) * (1 + (i * 7919) % 1000))
PY
kb=$(du -sk "$w/src" | cut -f1)
mke2fs -q -F -t ext4 -b 4096 -N $((VM_MANY_FILES + 10000)) -d "$w/src" \
	"$w/image.ext4" $((kb + kb / 4 + 65536))k >"$w/mke2fs.log" 2>&1 ||
	{ fail "mke2fs: $(tail -n 3 "$w/mke2fs.log")"; finish; }
"$EXTVERITY_RELEASE" format --salt=- "$w/image.ext4" "$w/hash" >"$w/format.out" 2>&1 ||
	{ fail "extverity format: $(cat "$w/format.out")"; finish; }
root=$(sed -n 's/^Root digest:[[:space:]]*//p' "$w/format.out")
extents=$(sed -n 's/^Extents:[[:space:]]*//p' "$w/format.out")
trees=$(sed -n 's/^Trees:[[:space:]]*//p' "$w/format.out")
# Every 50th file is read back in the guest.
(cd "$w/src" && find . -type f | LC_ALL=C sort | awk 'NR % 50 == 1' |
	xargs sha256sum) >"$w/ctl/sample.sha256"
cat >"$w/ctl/params" <<P
ROOT=$root
EXTENTS=$extents
TREES=$trees
P
rm -rf "$w/src"

VM_OUTDIR=$w run_vm --name=manyfiles --timeout=400 --ctl="$w/ctl" \
	"$TOPDIR/tests/vm/scenarios/manyfiles.sh" "$w/image.ext4:ro" "$w/hash:ro"
VM_OUTDIR=$w vm_report manyfiles
grep '^load:' "$w/boot-manyfiles/output" 2>/dev/null | sed 's/^/   /'
finish
