#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# What the target reports, and when it must not act (one boot,
# scenarios/reports.sh; docs/table.md "Corruption reports"):
#   - the log's three forms, each with the exact block, inode and offset:
#     "corrupted, file inode I byte offset O" (a block of a file with
#     several extents, so the offset is the leaf's, not the extent's),
#     "corrupted, metadata" (an inode-table block) and "hash tree
#     corrupted, file inode I byte offset O" (a level-0 hash block of a
#     two-level tree damaged: the two blocks under it fail, their
#     neighbour under the other level-0 block reads);
#   - a packed top is checked again when its buffer is read from disk
#     again: a one-level file's block and its digest in the top are forged
#     under the target after the top was checked (lower linear devices
#     swapped to forged copies, the cache emptied by a suspend); the forged
#     block and an intact block of the same file fail as "hash tree
#     corrupted";
#   - the uevent cap: over a copy of the image with more than 100 blocks
#     damaged (inode-table blocks and file blocks), each read once: every
#     read fails, exactly 100 change uevents, for the first 100 blocks
#     read, each with its block, inode and offset; "reached the maximum of
#     100 corruption uevents" logged once; another device has its own cap;
#   - the corrupted message after each of those: the damaged files (inode
#     0 for metadata), each with its first bad offset and its bad blocks,
#     in the order they were found; over the cap's 73 damaged files, the
#     first 64 and "more N" for the blocks of the others; a new device
#     starts with none;
#   - a failed readahead never triggers restart_on_error / panic_on_error:
#     a lower data device that fails one block, then a lower hash device
#     that fails the level-0 hash block of a two-level tree; buffered
#     sequential reads that stop 32 blocks before the failing one, with a
#     large readahead window.  The reads return the right bytes, the guest
#     neither restarts nor panics, and the readahead is proven to have
#     reached the failing block: the linear device in front of the failing
#     one counted the read, and (on a kernel with event tracing) a read-ahead
#     bio of the target completed with EIO.
# The expectations come from debugfs (the filesystem's own map of its
# files) and are cross-checked with evtloc.py (an independent reader of the
# hash area), never from the tool.
# shellcheck disable=SC1091
. "$TOPDIR/tests/lib.sh"
. "$TOPDIR/tests/vm/vm-lib.sh"

why=$(vm_prereqs)
[ -z "$why" ] && [ ! -f "$MODULE" ] && why="kernel module $MODULE not built (make module)"
[ -z "$why" ] && [ ! -x "$EXTVERITY_RELEASE" ] && why="tool $EXTVERITY_RELEASE not built (make tools)"
[ -z "$why" ] && ! command -v debugfs >/dev/null && why="debugfs (e2fsprogs) not installed"
if [ -n "$why" ]; then
	fail "reports VM scenario: $why"
	finish
fi

EV=$EXTVERITY_RELEASE
LOC=$TOPDIR/tests/vm/evtloc.py
BS=4096
w=$WORKDIR/reports
rm -rf "$w"
mkdir -p "$w/ctl"
die() { fail "setup: $*"; finish; }

MKIMAGE_NO_BIG=1 "$TOPDIR/tests/vm/fixture.sh" "$w/fx" $BS >"$w/fixture.log" 2>&1 ||
	die "fixture: $(tail -n 3 "$w/fixture.log")"
IMG=$w/fx/image.ext4
"$EV" format --salt=- "$IMG" "$w/hash" >"$w/format.out" 2>&1 ||
	die "extverity format: $(cat "$w/format.out")"
ROOT=$(sed -n 's/^Root digest:[[:space:]]*//p' "$w/format.out")
[ -n "$ROOT" ] || die "no root digest in: $(cat "$w/format.out")"
BLOCKS=$(($(stat -c %s "$IMG") / BS))

# ino PATH: the file's inode; bmap PATH L...: its physical blocks at
# logical blocks L (debugfs: the filesystem's own map).
ino() { debugfs -R "stat $1" "$IMG" 2>/dev/null | sed -n 's/^Inode: \([0-9]*\).*/\1/p'; }
bmap() {
	local p=$1
	shift
	printf "bmap $p %s\n" "$@" >"$w/bmap.cmd"
	debugfs -f "$w/bmap.cmd" "$IMG" 2>/dev/null | grep -v '^debugfs'
}

TWO=/big/two-levels
TWO_INO=$(ino $TWO)
[ -n "$TWO_INO" ] || die "no $TWO in the image"
# The frag/ files (several extents each) exist when the fixture could
# loop-mount (root); the one-extent file stands in for them otherwise.
FRAG=/frag/b
FRAG_INO=$(ino $FRAG)
ITABLE=$(debugfs -R stats "$IMG" 2>/dev/null | sed -n 's/^ *Group  *0:.*inode table at \([0-9]*\).*/\1/p')
[ -n "$ITABLE" ] || die "no inode table of group 0 in debugfs stats"

# flips: the blocks damaged in the copy for the cap, in the order they are
# read, "BLOCK INODE OFFSET" as a report must give them: five inode-table
# blocks (metadata: inode 0, offset of the block on the device), the 16
# blocks of frag/b, then two-levels' blocks 0-99.
: >"$w/ctl/flips"
for b in $(seq "$ITABLE" $((ITABLE + 4))); do
	echo "$b 0 $((b * BS))" >>"$w/ctl/flips"
done
if [ -n "$FRAG_INO" ]; then
	l=0
	for b in $(bmap $FRAG $(seq 0 15)); do
		echo "$b $FRAG_INO $((l * BS))" >>"$w/ctl/flips"
		l=$((l + 1))
	done
fi
l=0
for b in $(bmap $TWO $(seq 0 99)); do
	echo "$b $TWO_INO $((l * BS))" >>"$w/ctl/flips"
	l=$((l + 1))
done
# Then the one block of each of 70 small files, so that more files than
# the corrupted message keeps (64) are damaged.
for i in $(seq 1 70); do
	printf 'stat /many/file-%d\nbmap /many/file-%d 0\n' "$i" "$i"
done >"$w/many.cmd"
debugfs -f "$w/many.cmd" "$IMG" 2>/dev/null | awk '
	/^Inode: / { ino = $2; next }
	/^[0-9]+$/ && ino { print $1, ino, 0; ino = "" }' >>"$w/ctl/flips"
[ "$(grep -c . "$w/ctl/flips")" -ge 170 ] || die "no blocks of the 70 many/ files: $(tail -n 2 "$w/ctl/flips")"
NFLIPS=$(grep -c . "$w/ctl/flips")
[ "$NFLIPS" -gt 100 ] || die "only $NFLIPS blocks to damage"
[ "$(cut -d' ' -f1 "$w/ctl/flips" | sort -u | grep -c .)" = "$NFLIPS" ] ||
	die "a block is listed twice: $(cut -d' ' -f1 "$w/ctl/flips" | sort | uniq -d | head -n 3)"
# The hash area must agree with debugfs on every one of them: tree 0 and
# inode 0 for metadata; for a file, its inode and the leaf of its offset.
# shellcheck disable=SC2046 # the block numbers
"$LOC" "$w/hash" block $(cut -d' ' -f1 "$w/ctl/flips") >"$w/flips.rules" ||
	die "evtloc block: $(tail -n 1 "$w/flips.rules")"
bad=$(paste -d' ' "$w/ctl/flips" "$w/flips.rules" | awk -v bs=$BS '
	$1 != $4 { print "line " NR ": " $0; next }
	$2 == 0 && ($5 != 0 || $6 != 0) { print "not metadata: " $0; next }
	$2 != 0 && ($5 == 0 || $5 == 4294967295 || $6 != $2 || $7 * bs != $3) { print "not the file block: " $0 }')
[ -z "$bad" ] || die "evtloc disagrees with debugfs: $(echo "$bad" | head -n 3 | tr '\n' ' ')"

# The damaged data copy: the first byte of each block inverted.
cp --sparse=always "$IMG" "$w/bad.ext4"
python3 - "$w/bad.ext4" "$w/ctl/flips" $BS <<'PY' || die "flipping blocks failed"
import sys
img, flips, bs = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(img, "r+b") as f:
    for line in open(flips):
        pos = int(line.split()[0]) * bs
        f.seek(pos)
        b = f.read(1)
        f.seek(pos)
        f.write(bytes([b[0] ^ 0xFF]))
PY
cmp -s "$IMG" "$w/bad.ext4" && die "the damaged copy equals the image"
# The log's file form on the first damaged file block that starts an extent
# past the file's first one (not right after the block before it in the
# file): its offset is its extent's first leaf, not its place in the
# extent; without one (no frag/), two-levels' block 1.  The metadata form
# on the first inode-table block.
read -r META_BLK _ <"$w/ctl/flips"
read -r FILE_BLK FILE_INO FILE_OFF < <(awk '
	$2 != 0 && $2 == ino && $3 > 0 && $1 != prev + 1 { print; exit }
	{ ino = $2; prev = $1 }' "$w/ctl/flips")
[ -n "$FILE_BLK" ] || read -r FILE_BLK FILE_INO FILE_OFF < <(sed -n 7p "$w/ctl/flips")
# Its paths (debugfs), for extverity status, which names it by one of them.
FILE_PATHS=$(debugfs -R "ncheck $FILE_INO" "$IMG" 2>/dev/null |
	awk -v i="$FILE_INO" '$1 == i { print $2 }' | tr '\n' ' ')
[ -n "$FILE_PATHS" ] || die "debugfs ncheck $FILE_INO: no path"

# The hash tree form: two-levels has 130 blocks, a level-0 hash block for
# its blocks 0-127 and one for 128-129.  Damage the second in a copy of the
# hash area.
eval "$("$LOC" "$w/hash" tree "$TWO_INO")" || die "evtloc tree $TWO_INO"
# shellcheck disable=SC2154 # set by evtloc's output
if [ "$NLEVELS" != 2 ] || [ "$L0_BLOCKS" != 2 ]; then
	die "two-levels: NLEVELS=$NLEVELS L0_BLOCKS=$L0_BLOCKS, want 2 and 2"
fi
# shellcheck disable=SC2154
L0B1=$((L0 / BS + 1))
read -r T127 T128 T129 T110 < <(bmap $TWO 127 128 129 110 | tr '\n' ' ')
[ -n "$T110" ] || die "no physical blocks for two-levels' blocks 127-129, 110"
"$LOC" "$w/hash" block "$T127" "$T128" "$T129" >"$w/tree.rules"
# shellcheck disable=SC2154
[ "$(awk '{ print $2, $3, $4 }' "$w/tree.rules" | tr '\n' ' ')" = "$TREE $TWO_INO 127 $TREE $TWO_INO 128 $TREE $TWO_INO 129 " ] ||
	die "evtloc: blocks $T127 $T128 $T129 are not two-levels' leaves 127-129: $(cat "$w/tree.rules")"
cp "$w/hash" "$w/badhash"
python3 - "$w/badhash" $((L0B1 * BS)) <<'PY' || die "flipping the hash block failed"
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2]))
    b = f.read(1)
    f.seek(int(sys.argv[2]))
    f.write(bytes([b[0] ^ 0xFF]))
PY

# A top checked again once its buffer is read again: sizes/f65536 has 16
# blocks, one level, so its top is its only hash block, packed in TOPS.
# The forged copies replace its block 3 and that block's digest in the top
# with a forged block's, so that only the top's own check against the root
# can tell, and only if the target checks the top again when its buffer
# has been read from disk again (after a suspend empties the cache).
TOPF=/sizes/f65536
TOPF_INO=$(ino $TOPF)
[ -n "$TOPF_INO" ] || die "no $TOPF in the image"
eval "$("$LOC" "$w/hash" tree "$TOPF_INO" | sed 's/^/TOPF_/')" || die "evtloc tree $TOPF_INO"
# shellcheck disable=SC2154 # set by evtloc's output
if [ "$TOPF_NLEVELS" != 1 ] || [ "$TOPF_TOP" = 0 ] || [ "$TOPF_TOP_BYTES" != $((16 * 32)) ]; then
	die "$TOPF: NLEVELS=$TOPF_NLEVELS TOP=$TOPF_TOP TOP_BYTES=$TOPF_TOP_BYTES, want one level of 16 digests"
fi
read -r TOPF_B0 TOPF_B3 < <(bmap $TOPF 0 3 | tr '\n' ' ')
[ -n "$TOPF_B3" ] || die "no physical blocks for $TOPF's blocks 0 and 3"
cp --sparse=always "$IMG" "$w/forged.ext4"
cp "$w/hash" "$w/forgedhash"
python3 - "$w/forged.ext4" "$w/forgedhash" $((TOPF_B3 * BS)) $((TOPF_TOP + 3 * 32)) $BS <<'PY' || die "forging $TOPF failed"
import hashlib, sys
img, area, pos, dpos, bs = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:])
with open(img, "r+b") as f, open(area, "r+b") as h:
    f.seek(pos)
    old = f.read(bs)
    h.seek(dpos)
    # The format (empty salt): the leaf digest is SHA-256 of the block.
    if h.read(32) != hashlib.sha256(old).digest():
        sys.exit("the top's digest 3 is not SHA-256 of block 3")
    new = bytes([0x5A]) * bs
    f.seek(pos)
    f.write(new)
    h.seek(dpos)
    h.write(hashlib.sha256(new).digest())
PY

# Readahead: buffered reads of 64 blocks that end 32 blocks before the
# failing block (two-levels' block 110 on the data side: its blocks
# 14-77 are read; on the hash side, the same reads, whose readahead
# reaches blocks 128-129 under the failing level-0 hash block).
RA_BAD=$T110
RA_SKIP=$((T110 - 96))
RA_COUNT=64
[ "$(bmap $TWO 14)" = "$RA_SKIP" ] || die "two-levels is not contiguous"
TRACING=0
[ "$(vm_kconfig EVENT_TRACING)" = y ] && TRACING=1

cat >"$w/ctl/params" <<P
ROOT=$ROOT
BLOCKS=$BLOCKS
BS=$BS
NFLIPS=$NFLIPS
META_BLK=$META_BLK
FILE_BLK=$FILE_BLK
FILE_INO=$FILE_INO
FILE_OFF=$FILE_OFF
FILE_PATHS="$FILE_PATHS"
TWO_INO=$TWO_INO
T127=$T127
T128=$T128
T129=$T129
L0B1=$L0B1
TOPF_INO=$TOPF_INO
TOPF_B0=$TOPF_B0
TOPF_B3=$TOPF_B3
RA_BAD=$RA_BAD
RA_SKIP=$RA_SKIP
RA_COUNT=$RA_COUNT
TRACING=$TRACING
P
# The trace checks need the kernel's block tracepoints (the debug kernel
# has no tracing): declared here from the same condition the guest uses.
: >"$w/ctl/checks"
if [ $TRACING = 1 ]; then
	for c in ra-data-restart ra-data-panic ra-hash-restart ra-hash-panic; do
		echo "$c-traced" >>"$w/ctl/checks"
	done
fi

# The tracepoint is enabled from the kernel command line, before userspace,
# and the guest only starts and stops recording (tracing_on): enabling an
# event patches kernel text (static keys, through int3), and under TCG
# with two vCPUs that once oopsed a boot here ("Oops: int3" in
# __schedule, 6.12, 21 s in, as the guest enabled the event).
trace_args=()
[ $TRACING = 1 ] && trace_args=(--append=trace_event=block:block_bio_complete)

VM_OUTDIR=$w run_vm --name=reports --timeout=600 --ctl="$w/ctl" \
	"${trace_args[@]}" "$TOPDIR/tests/vm/scenarios/reports.sh" "$IMG:ro" "$w/hash:ro" \
	"$w/bad.ext4:ro" "$w/badhash:ro" "$w/forged.ext4:ro" "$w/forgedhash:ro"
VM_OUTDIR=$w vm_report reports
grep '^reports:' "$w/boot-reports/output" 2>/dev/null | sed 's/^/   /'
finish
