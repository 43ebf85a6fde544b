#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Stress (tests/vm/README.md, docs/testing.md): two extverity devices over
# two different images (the fixture at 4 KiB/sha256; many small files and a
# big one at 1 KiB/sha512) read for VM_STRESS_DURATION seconds by
# concurrent sequential (dd and stress-io, 4 KiB and 1 MiB, buffered and
# O_DIRECT), random 4 KiB and filesystem readers, each checking every byte,
# while a chaos loop suspends, resumes, reloads, removes and re-creates the
# devices and drops caches, and a hog puts memory under pressure
# (scenarios/stress.sh).  Must end with no data error, both devices intact
# and a clean kernel log.  `make stress` runs it for 600 s.
#
#   VM_STRESS_DURATION  seconds of stress (default 50)
# shellcheck disable=SC1091
. "$TOPDIR/tests/lib.sh"
. "$TOPDIR/tests/vm/vm-lib.sh"
: "${VM_STRESS_DURATION:=50}"

why=$(vm_prereqs)
[ -z "$why" ] && [ ! -f "$MODULE" ] && why="kernel module $MODULE not built (make module)"
[ -z "$why" ] && [ ! -x "$EXTVERITY_RELEASE" ] && why="tool $EXTVERITY_RELEASE not built (make tools)"
[ -z "$why" ] && ! command -v gcc >/dev/null && why="gcc not installed"
if [ -n "$why" ]; then
	fail "stress VM scenario: $why"
	finish
fi

EV=$EXTVERITY_RELEASE
w=$WORKDIR/stress
rm -rf "$w"
mkdir -p "$w/ctl"
die() { fail "setup: $*"; finish; }

gcc -static -O2 -Wall -Wextra -Werror -o "$w/ctl/stress-io" \
	"$TOPDIR/tests/vm/stress-io.c" 2>"$w/gcc.log" ||
	die "gcc -static stress-io.c: $(head -n 5 "$w/gcc.log")"

# Device a: the shared fixture without its 65 MiB file, so that a pass is
# seconds, not minutes, under TCG with 14 readers.
MKIMAGE_NO_BIG=1 "$TOPDIR/tests/vm/fixture.sh" "$w/a" 4096 >"$w/fixture.log" 2>&1 ||
	die "fixture: $(tail -n 3 "$w/fixture.log")"

# Device b: 1500 small files of 0 to 8 KiB in 40 directories, a few copies,
# and an 8 MiB file, in a 1 KiB-block filesystem.
python3 - "$w/b/src" <<'PY' || die "image b tree"
import os, random, sys
base = sys.argv[1]
rng = random.Random(6)
for i in range(1500):
    d = f'{base}/d{i % 40:02}'
    os.makedirs(d, exist_ok=True)
    with open(f'{d}/f{i:04}', 'wb') as f:
        f.write(rng.randbytes(rng.randrange(0, 8193)))
for i in range(5):
    with open(f'{base}/d00/f0000', 'rb') as s, open(f'{base}/copy{i}', 'wb') as f:
        f.write(s.read())
with open(f'{base}/big', 'wb') as f:
    for _ in range(8):
        f.write(rng.randbytes(1 << 20))
PY
kb=$(du -sk "$w/b/src" | cut -f1)
mke2fs -q -F -t ext4 -b 1024 -d "$w/b/src" "$w/b/image.ext4" \
	$(((kb * 13 / 10 + 8192) / 4 * 4))k >"$w/mke2fs.log" 2>&1 ||
	die "mke2fs b: $(tail -n 3 "$w/mke2fs.log")"

# manifest DIR: sha256sum lines for busybox sha256sum -c; names it cannot
# take back (newline, backslash) are left out.
manifest() {
	(cd "$1" && find . -type f ! -name '*\\*' ! -name "*"$'\n'"*" -print0 |
		LC_ALL=C sort -z | xargs -0 sha256sum)
}

params=$w/ctl/params
echo "DURATION=$VM_STRESS_DURATION" >"$params"
for d in a b; do
	case $d in
	a) fmt=(--hash=sha256 --data-block-size=4096 --salt=5e55c0de) ;;
	b) fmt=(--hash=sha512 --data-block-size=1024 --salt=-) ;;
	esac
	img=$w/$d/image.ext4
	"$EV" format "${fmt[@]}" "$img" "$w/$d/hash" >"$w/$d/format.out" 2>&1 ||
		die "format $d: $(cat "$w/$d/format.out")"
	root=$(sed -n 's/^Root digest:[[:space:]]*//p' "$w/$d/format.out")
	[ -n "$root" ] || die "format $d: no root digest"
	manifest "$w/$d/src" >"$w/ctl/$d.sha256"
	split -l 200 -d -a 3 "$w/ctl/$d.sha256" "$w/ctl/$d.part."
	# What the device must return: the image with its zero ranges (found
	# by evtloc.py, not the tool) zeroed.  A CRC-32 per 4 KiB chunk for
	# stress-io, the sha256 of it all for the dd readers, and a copy of
	# the sums with one entry wrong for the guest's control run.
	bs=${fmt[1]#*=}
	"$TOPDIR/tests/vm/evtloc.py" "$w/$d/hash" zero-ranges >"$w/$d/zero" ||
		die "evtloc $d"
	sha=$(python3 - "$img" "$bs" "$w/$d/zero" "$w/ctl/$d.sums" "$w/ctl/$d.bad.sums" <<'PY'
import hashlib, struct, sys, zlib
img, bs, zero, out, bad = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
data = bytearray(open(img, 'rb').read())
if len(data) % 4096:
    sys.exit('image size %d is not a multiple of 4096' % len(data))
for line in open(zero):
    start, count = map(int, line.split())
    data[start * bs:(start + count) * bs] = bytes(count * bs)
sums = [zlib.crc32(data[i:i + 4096]) for i in range(0, len(data), 4096)]
open(out, 'wb').write(b''.join(struct.pack('<I', s) for s in sums))
sums[len(sums) // 3] ^= 1
open(bad, 'wb').write(b''.join(struct.pack('<I', s) for s in sums))
print(hashlib.sha256(data).hexdigest())
PY
) || die "reference $d"
	size=$(stat -c %s "$img")
	fbytes=$(cd "$w/$d/src" && find . -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
	echo "ROOT_$d=$root SHA_$d=$sha SIZE_$d=$size FBYTES_$d=$fbytes" >>"$params"
	echo "   device $d: $((size >> 20)) MiB, block size $bs, $(wc -l <"$w/ctl/$d.sha256") files," \
		"$(wc -l <"$w/$d/zero") zero ranges"
done
rm -rf "$w/a/src" "$w/b/src" "$w/a/src-inline" "$w/a/image-inline.ext4"

VM_OUTDIR=$w run_vm --name=stress --timeout=$((VM_STRESS_DURATION + 300)) --ctl="$w/ctl" \
	"$TOPDIR/tests/vm/scenarios/stress.sh" \
	"$w/a/image.ext4:ro" "$w/a/hash:ro" "$w/b/image.ext4:ro" "$w/b/hash:ro"
VM_OUTDIR=$w vm_report stress
grep '^stress:' "$w/boot-stress/output" 2>/dev/null | sed 's/^/   /'
finish
