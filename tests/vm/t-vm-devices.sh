#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The target on the devices and in the device lifecycle a storage stack
# gives it (one boot, scenarios/devices.sh; docs/testing.md):
#   - 4Kn devices (a loop device with 4096-byte logical blocks, as a 4Kn
#     disk or dm-crypt's sector_size:4096): as hash device, as data
#     device, and a hash start the hash device cannot address refused;
#   - direct I/O buffers aligned to the block size (dma_alignment);
#   - hash reads at the I/O priority of the read that needs them (6.10 on;
#     best-effort before): a realtime reader's hash reads seen queued as
#     realtime, and only so, by mq-deadline on a loop device over dm-delay;
#   - hash read-ahead in clusters: one block read from a fresh device reads
#     the hash blocks of its aligned data cluster (prefetch_cluster): more
#     than at 0, and exactly the sectors a read of each block of that
#     cluster reads at 0;
#   - verification in the completion context (try_verify_in_tasklet),
#     kprobe events counting which function verified each read:
#     reads whose hash blocks are cached never reach the worker (and run
#     in softirq context from 6.9 on), the same reads without the option
#     all do; a read of two blocks whose second needs a hash block still
#     being read goes on in the worker from that block, each counted once;
#     a corrupt block still fails, is reported and counted once;
#   - zero ranges served without I/O: under a data device whose free
#     blocks fail (dm-error), reads of free blocks, and of data and free
#     blocks together, return the right bytes and restart_on_error stays
#     quiet; the lower device sees no read of a free block;
#   - suspend under random reads, over a slow hash device (dm-delay) and a
#     small dm-bufio cache: once `dmsetup suspend` returns, no read of the
#     hash device is in flight or starts, and no read returns a wrong byte;
#     and, deterministically, the prefetch of a read that failed on the data
#     device (so nothing waited for it) is over when suspend returns,
#     without and with try_verify_in_tasklet (dm-bufio's NO_SLEEP client
#     does not wait for reads when emptied: no "leaked buffer");
#   - check_at_most_once refused past INT_MAX blocks (a 2 TiB dm-zero
#     device of 1 KiB blocks, its hash area written here), the same table
#     without it loads and reads zeros;
#   - memory: the loaded manifest is charged to the loader's memory cgroup
#     and freed with the table; a load killed with SIGKILL stops early.
# shellcheck disable=SC1091,SC2015
. "$TOPDIR/tests/lib.sh"
. "$TOPDIR/tests/vm/vm-lib.sh"

why=$(vm_prereqs)
[ -z "$why" ] && [ ! -f "$MODULE" ] && why="kernel module $MODULE not built (make module)"
[ -z "$why" ] && [ ! -x "$EXTVERITY_RELEASE" ] && why="tool $EXTVERITY_RELEASE not built (make tools)"
[ -z "$why" ] && [ ! -x /usr/sbin/losetup ] && why="util-linux losetup not installed"
if [ -n "$why" ]; then
	fail "devices VM scenario: $why"
	finish
fi

EV=$EXTVERITY_RELEASE
BS=4096
w=$WORKDIR/devices
rm -rf "$w"
mkdir -p "$w/ctl"
die() { fail "setup: $*"; finish; }

"$TOPDIR/tests/vm/fixture.sh" "$w/fx" $BS >"$w/fixture.log" 2>&1 ||
	die "fixture: $(tail -n 3 "$w/fixture.log")"
IMG=$w/fx/image.ext4
"$EV" format --salt=- "$IMG" "$w/hash" >"$w/format.out" 2>&1 ||
	die "extverity format: $(cat "$w/format.out")"
field() { sed -n "s/^$1:[[:space:]]*//p" "$w/format.out"; }
ROOT=$(field 'Root digest')
EXTENTS=$(field Extents)
TREES=$(field Trees)
[ -n "$ROOT" ] && [ -n "$EXTENTS" ] && [ -n "$TREES" ] ||
	die "no root, extent or tree count in: $(cat "$w/format.out")"
BLOCKS=$(($(stat -c %s "$IMG") / BS))

# A zero range of 4 blocks or more with two blocks of data right after it
# (a read across its end), found by the independent reader of the format,
# not the tool.  The largest: the image's layout varies from run to run.
read -r ZSTART ZCOUNT < <("$TOPDIR/tests/vm/evtloc.py" "$w/hash" zero-ranges |
	sort -n | awk -v n="$BLOCKS" '
		NR > 1 && ps > 0 && ps + pc + 2 <= $1 && pc >= 4 { print ps, pc }
		{ ps = $1; pc = $2 }
		END { if (ps > 0 && ps + pc + 2 <= n && pc >= 4) print ps, pc }' |
	sort -k2 -rn | head -n 1)
[ -n "$ZSTART" ] || die "no zero range of 4 blocks or more with 2 blocks of data after it"
# The bytes the target must return across its end: zeros, then the data.
dd if="$IMG" bs=$BS skip=$((ZSTART + ZCOUNT)) count=2 status=none |
	cat <(head -c $((2 * BS)) /dev/zero) - | md5sum | cut -d' ' -f1 >"$w/ctl/across.md5"
# A data block of the largest file, whose tree has hash blocks to prefetch.
BIGFILE=$(cd "$w/fx/src" && find . -type f -printf '%s %P\n' | sort -rn | head -n 1 | cut -d' ' -f2-)
PBLOCK=$(debugfs -R "bmap \"/$BIGFILE\" 5" "$IMG" 2>/dev/null)
[ -n "$PBLOCK" ] && [ "$PBLOCK" -gt 0 ] || die "no block 5 of /$BIGFILE"
# Block 0 of another file, 256 blocks or more from PBLOCK: neither's
# read-ahead cluster (64 blocks) covers the other, so that the hash reads
# of the read of PBLOCK are not all made by the read of QBLOCK.
QBLOCK=
while read -r f; do
	b=$(debugfs -R "bmap \"/$f\" 0" "$IMG" 2>/dev/null)
	[ -n "$b" ] && [ "$b" -gt 0 ] && [ $(((b - PBLOCK) * (b - PBLOCK))) -ge $((256 * 256)) ] &&
		{ QBLOCK=$b; break; }
done < <(cd "$w/fx/src" && find . -type f -size +0 -printf '%s %P\n' | sort -rn | sed 1d | cut -d' ' -f2- | head -n 50)
[ -n "$QBLOCK" ] || die "no file with block 0 256 blocks or more from PBLOCK ($PBLOCK)"
# Leaves 127 and 128 of that file, the last one under its first level-0
# hash block and the first under its second (128 SHA-256 digests a block),
# and the two after: contiguous on disk, so that one read takes two blocks
# whose hash blocks differ.
BH_BLOCK=$(debugfs -R "bmap \"/$BIGFILE\" 127" "$IMG" 2>/dev/null)
for i in 1 2 3; do
	b=$(debugfs -R "bmap \"/$BIGFILE\" $((127 + i))" "$IMG" 2>/dev/null)
	[ -n "$BH_BLOCK" ] && [ "$b" = $((BH_BLOCK + i)) ] ||
		die "blocks 127-130 of /$BIGFILE are not contiguous (${BH_BLOCK:-none}, then $b)"
done
# The read-ahead cluster around BH_BLOCK: prefetch_cluster's default, or
# twice that and more until leaves 127 and 128 fall in one cluster, so that
# the cluster's data blocks need a level-0 hash block their first one does
# not (the layout varies from run to run).
CLUSTER=$((262144 / BS))
while [ $(((BH_BLOCK + 1) % CLUSTER)) = 0 ]; do CLUSTER=$((CLUSTER * 2)); done
# The kernel's manifest tables: 32 bytes an extent (struct extverity_ext),
# 32 bytes and the 32-byte root digest a tree (extverity_mtree, roots).
MANIFEST_BYTES=$((EXTENTS * 32 + TREES * (32 + 32)))

# A hash area for a device of 2^31 + 8 blocks of 1 KiB (2 TiB, all one zero
# range; the data device is dm-zero), written here from docs/format.md:
# check_at_most_once must refuse it (its bitmap indexes blocks with int on
# arm64's generic bitops), a table without it must load.
BIG_BLOCKS=$(((1 << 31) + 8))
BIG_ROOT=$(python3 - "$w/big.hash" "$BIG_BLOCKS" <<'PY'
import hashlib, struct, sys
path, n = sys.argv[1], int(sys.argv[2])
bs = 1024
ext = struct.pack('<QQIIQ', 0, 0, n, 0xffffffff, 0).ljust(bs, b'\0')
tree = struct.pack('<QQQ', 0, 0, 0).ljust(24 + 32, b'\0').ljust(bs, b'\0')
def sect(start, blocks, entries, size, data):
    d = hashlib.sha256(data).digest() if data else b''
    return struct.pack('<QQQII', start, blocks, entries, size, 0) + d.ljust(64, b'\0')
sects = (sect(1, 1, 1, 32, ext) + sect(2, 1, 1, 56, tree) +
         sect(0, 0, 0, 0, None) * 6)
sb = (b'EXTVRITY' + struct.pack('<IIIBBBBQQ', 1, 0, 0, 1, 10, 0, 0, n, 3) +
      b'\0' * 16 + b'\0' * 32 + sects)
sb = sb.ljust(bs, b'\0')
open(path, 'wb').write(sb + ext + tree)
print(hashlib.sha256(sb).hexdigest())
PY
) || die "big hash area"

cat >"$w/ctl/params" <<P
ROOT=$ROOT
BLOCKS=$BLOCKS
ZSTART=$ZSTART
ZCOUNT=$ZCOUNT
MANIFEST_BYTES=$MANIFEST_BYTES
BIG_BLOCKS=$BIG_BLOCKS
BIG_ROOT=$BIG_ROOT
PBLOCK=$PBLOCK
QBLOCK=$QBLOCK
BH_BLOCK=$BH_BLOCK
CLUSTER=$CLUSTER
P

VM_OUTDIR=$w run_vm --name=devices --timeout=600 --ctl="$w/ctl" \
	"$TOPDIR/tests/vm/scenarios/devices.sh" "$IMG:ro" "$w/hash:ro" "$w/big.hash:ro"
VM_OUTDIR=$w vm_report devices
grep '^devices:' "$w/boot-devices/output" 2>/dev/null | sed 's/^/   /'
finish
