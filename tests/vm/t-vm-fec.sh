#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Forward error correction in the kernel (issue 19; one boot,
# scenarios/fec.sh; docs/table.md "FEC"): the image is formatted with
# --fec-device (2 roots), and the guest opens copies damaged within and
# just past what the code corrects:
#   - data blocks (file blocks of a two-level tree, an inode-table block)
#     and hash blocks (the level-0 block of a two-level tree, a block of
#     packed tops), each a block of random bytes, each in its own round:
#     the whole device reads back byte for byte as the image, no EIO, the
#     status counts exactly those corrections and no corruption, and each
#     is logged "corrected by FEC" with its block;
#   - one more error than a codeword corrects (a damaged block and a
#     parity byte of its codeword): that block fails with EIO and is
#     reported corrupt, as without FEC; a damaged block of another round
#     is corrected;
#   - an I/O error (dm-error under one block of a file): a direct read of
#     that block, and a 64 KiB read around it, return the image's bytes;
#   - a FEC device of zeros: the damaged blocks fail, never wrong data; a
#     truncated FEC device: the table is refused;
#   - FEC options the area does not match (roots 1 and 25, blocks, start,
#     one missing, an area without a FEC record, parity over the data or
#     the hash area): refused with the precise error;
#   - extverity table/open --fec-device make the table line the kernel
#     takes, and status shows the FEC device and the corrected count.
# Which blocks are damaged comes from debugfs and evtloc.py (independent
# readers), the rounds from docs/format.md's formula.
# shellcheck disable=SC1091
. "$TOPDIR/tests/lib.sh"
. "$TOPDIR/tests/vm/vm-lib.sh"

why=$(vm_prereqs)
[ -z "$why" ] && [ ! -f "$MODULE" ] && why="kernel module $MODULE not built (make module)"
[ -z "$why" ] && [ ! -x "$EXTVERITY_RELEASE" ] && why="tool $EXTVERITY_RELEASE not built (make tools)"
[ -z "$why" ] && ! command -v debugfs >/dev/null && why="debugfs (e2fsprogs) not installed"
if [ -n "$why" ]; then
	fail "fec VM scenario: $why"
	finish
fi
if [ "$(vm_kconfig REED_SOLOMON_DEC8)" != y ]; then
	skip "fec: the kernel has no Reed-Solomon decoder (CONFIG_REED_SOLOMON_DEC8)"
	finish
fi

EV=$EXTVERITY_RELEASE
LOC=$TOPDIR/tests/vm/evtloc.py
BS=4096
w=$WORKDIR/fec
rm -rf "$w"
mkdir -p "$w/ctl"
die() { fail "setup: $*"; finish; }

MKIMAGE_NO_BIG=1 "$TOPDIR/tests/vm/fixture.sh" "$w/fx" $BS >"$w/fixture.log" 2>&1 ||
	die "fixture: $(tail -n 3 "$w/fixture.log")"
IMG=$w/fx/image.ext4
"$EV" format --salt=- --fec-device="$w/fec" "$IMG" "$w/hash" >"$w/format.out" 2>&1 ||
	die "extverity format: $(cat "$w/format.out")"
"$EV" format --salt=- "$IMG" "$w/nofec.hash" >"$w/nofec.out" 2>&1 ||
	die "extverity format without FEC: $(cat "$w/nofec.out")"
field() { sed -n "s/^$1:[[:space:]]*//p" "$2"; }
ROOT=$(field "Root digest" "$w/format.out")
ROOT2=$(field "Root digest" "$w/nofec.out")
N=$(field "Data blocks" "$w/format.out")
H=$(field "Hash blocks" "$w/format.out")
FEC_BLOCKS=$(field "FEC blocks" "$w/format.out")
[ -n "$ROOT" ] && [ "$FEC_BLOCKS" = $((N + H)) ] ||
	die "format printed root '$ROOT', FEC blocks '$FEC_BLOCKS' for $N + $H"
# docs/format.md: rsn = 255 - roots, rounds = ceil(blocks / rsn).
ROUNDS=$(((FEC_BLOCKS + 252) / 253))
[ "$(stat -c %s "$w/fec")" = $((ROUNDS * 2 * BS)) ] ||
	die "the FEC file is $(stat -c %s "$w/fec") bytes, want $ROUNDS rounds of 2 blocks"

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
ITABLE=$(debugfs -R stats "$IMG" 2>/dev/null | sed -n 's/^ *Group  *0:.*inode table at \([0-9]*\).*/\1/p')
[ -n "$ITABLE" ] || die "no inode table of group 0"
eval "$("$LOC" "$w/hash" tree "$TWO_INO")" || die "evtloc tree $TWO_INO"
# shellcheck disable=SC2154 # set by evtloc's output
[ "$NLEVELS" = 2 ] || die "two-levels has $NLEVELS levels, want 2"
# shellcheck disable=SC2154
L0B=$((L0 / BS))
TOPF=/sizes/f65536
TOPF_INO=$(ino $TOPF)
[ -n "$TOPF_INO" ] || die "no $TOPF in the image"
eval "$("$LOC" "$w/hash" tree "$TOPF_INO" | sed 's/^/TOPF_/')" || die "evtloc tree $TOPF_INO"
# shellcheck disable=SC2154
TOPB=$((TOPF_TOP / BS))

# The data blocks to damage: two-levels' blocks 3, 100 and 129 (under the
# level-0 block damaged too: both must be corrected to read it), an
# inode-table block; each in a round of its own, apart from the hash
# blocks' rounds (covered index N + block).
read -r D1 D2 D3 < <(bmap $TWO 3 100 129 | tr '\n' ' ')
D4=$((ITABLE + 1))
[ -n "$D3" ] || die "no physical blocks of $TWO"
rounds=" "
for b in "$D1" "$D2" "$D3" "$D4" $((N + L0B)) $((N + TOPB)); do
	r=$((b % ROUNDS))
	case $rounds in *" $r "*) die "blocks share round $r: $D1 $D2 $D3 $D4 hash $L0B $TOPB";; esac
	rounds="$rounds$r "
done
# A manifest damaged within the capacity: the extent map's last block and
# the tree table's first, in rounds of their own; over it, the extent
# map's block and one parity byte of its round.
read -r off len < <("$LOC" "$w/hash" section EXTENTS) || die "evtloc section EXTENTS"
MEXT=$(((off + len) / BS - 1))
read -r off len < <("$LOC" "$w/hash" section TREES) || die "evtloc section TREES"
MTREE=$((off / BS))
[ $(((N + MEXT) % ROUNDS)) != $(((N + MTREE) % ROUNDS)) ] ||
	die "the manifest blocks $MEXT and $MTREE share a round"
# Over the capacity: D1 again, and the first parity byte of its round's
# first codeword flipped in a copy of the FEC file: two errors in that
# codeword (garble changes every byte, so D1's byte in it is wrong too:
# with random bytes, 1 run in 256 left it and FEC corrected D1).  D2 is
# damaged too and must still be corrected.
OVER_PARITY=$(((D1 % ROUNDS) * 2 * BS))
# The I/O error: two-levels' block 60, and the 16 blocks from 56.
read -r E1 E0 < <(bmap $TWO 60 56 | tr '\n' ' ')
[ "$E1" = $((E0 + 4)) ] || die "two-levels is not contiguous at block 56"

cp --sparse=always "$IMG" "$w/bad.ext4"
garble "$w/bad.ext4" "$D1" "$D2" "$D3" "$D4" || die "damaging bad.ext4 failed"
cp "$w/hash" "$w/badhash"
garble "$w/badhash" "$L0B" "$TOPB" || die "damaging badhash failed"
cp --sparse=always "$IMG" "$w/over.ext4"
garble "$w/over.ext4" "$D1" "$D2" || die "damaging over.ext4 failed"
cp "$w/fec" "$w/fec-over"
flip "$w/fec-over" "$OVER_PARITY"
cp "$w/hash" "$w/manhash"
garble "$w/manhash" "$MEXT" "$MTREE" || die "damaging manhash failed"
cp "$w/fec" "$w/fec-man-over"
flip "$w/fec-man-over" $((((N + MEXT) % ROUNDS) * 2 * BS))
# The superblock's block (covered block N) garbled; over the capacity,
# one parity byte of its round as well.
cp "$w/hash" "$w/sbhash"
garble "$w/sbhash" 0 || die "damaging sbhash failed"
cp "$w/fec" "$w/fec-sb-over"
flip "$w/fec-sb-over" $(((N % ROUNDS) * 2 * BS))
head -c "$(stat -c %s "$w/fec")" /dev/zero >"$w/fec-zero"
head -c $(($(stat -c %s "$w/fec") - BS)) "$w/fec" >"$w/fec-short"

cat >"$w/ctl/params" <<P
ROOT=$ROOT
ROOT2=$ROOT2
N=$N
BS=$BS
FEC_BLOCKS=$FEC_BLOCKS
IMG_MD5=$(md5sum <"$IMG" | cut -d' ' -f1)
TWO_INO=$TWO_INO
D1=$D1
D2=$D2
D3=$D3
D4=$D4
L0B=$L0B
TOPB=$TOPB
E0=$E0
E1=$E1
P

VM_OUTDIR=$w run_vm --name=fec --timeout=600 --ctl="$w/ctl" \
	"$TOPDIR/tests/vm/scenarios/fec.sh" "$IMG:ro" "$w/hash:ro" "$w/fec:ro" \
	"$w/bad.ext4:ro" "$w/badhash:ro" "$w/over.ext4:ro" "$w/fec-over:ro" \
	"$w/fec-zero:ro" "$w/fec-short:ro" "$w/nofec.hash:ro" "$w/manhash:ro" \
	"$w/fec-man-over:ro" "$w/sbhash:ro" "$w/fec-sb-over:ro"
VM_OUTDIR=$w vm_report fec
grep '^fec:' "$w/boot-fec/output" 2>/dev/null | sed 's/^/   /'
finish
