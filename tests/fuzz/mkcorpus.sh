#!/usr/bin/env bash
# mkcorpus.sh EXTVERITY OUTDIR: seed inputs for the manifest harnesses,
# made by `extverity format` on tiny ext4 images (a few KiB of manifest
# each), so that nothing binary is committed.  Writes
#   OUTDIR/fuzz_area/NAME    a whole hash area
#   OUTDIR/fuzz_format/NAME  its superblock, a byte N, N tree records and
#                            the extent map (fuzz_format.c's input)
# Deterministic: fixed salt and UUID, seeded file contents.
set -eu
ev=${1:?usage: mkcorpus.sh EXTVERITY OUTDIR}
out=${2:?usage: mkcorpus.sh EXTVERITY OUTDIR}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out/fuzz_area" "$out/fuzz_format"

gen() {
	openssl enc -aes-128-ctr -pass "pass:$1" -nosalt -pbkdf2 </dev/zero \
		2>/dev/null | head -c "$2"
}

# A tree with files of 0, 1 and several blocks, one needing two levels at
# 1 KiB blocks, a hard link, a duplicate (shared tree) and a symlink.
src=$tmp/src
mkdir -p "$src/d/e"
gen a 1 >"$src/one"
gen b 3000 >"$src/d/three"
gen c 40000 >"$src/d/e/big"
cp "$src/d/three" "$src/d/dup"
: >"$src/empty"
ln "$src/one" "$src/d/link"
ln -s one "$src/sym"

uuid=01234567-89ab-cdef-0123-456789abcdef
# NAME BLOCKSIZE FORMAT-OPTIONS...
seed() {
	local name=$1 bs=$2 img=$tmp/$1.img
	shift 2
	mke2fs -q -F -t ext4 -O ^has_journal -b "$bs" -N 64 -E root_owner=0:0 -d "$src" \
		"$img" $((256 * 1024 / bs)) >/dev/null
	"$ev" format --uuid=$uuid --data-block-size="$bs" "$@" "$img" \
		"$out/fuzz_area/$name" >/dev/null
	python3 - "$out/fuzz_area/$name" "$out/fuzz_format/$name" <<'PY'
import struct, sys
area = open(sys.argv[1], 'rb').read()
sb = area[:1024]
alg, log = sb[20], sb[21]
bs, ds = 1 << log, 32 if alg == 1 else 64
def section(i):
    start, nblocks, nent, esize = struct.unpack_from('<QQQI', sb, 88 + 96 * i)
    return area[start * bs:start * bs + nent * esize], nent
extents, _ = section(0)
trees, ntrees = section(1)
n = min(ntrees, 16)
if struct.unpack_from('<I', sb, 16)[0] & 2:
    # fuzz_format.c takes the FEC record from the reserved bytes.
    rec, _ = section(6)
    sb = sb[:856] + rec + sb[856 + len(rec):]
open(sys.argv[2], 'wb').write(sb + bytes([n]) + trees[:n * (24 + ds)] + extents)
PY
}
seed ext4-1k-sha256 1024 --hash=sha256 --salt=-
seed ext4-1k-sha512-salt 1024 --hash=sha512 --salt=0011223344556677
seed ext4-2k-sha256 2048 --hash=sha256 --salt=ab
seed ext4-4k-sha512 4096 --hash=sha512 --salt=-
seed raw-1k-sha256 1024 --fs=raw --salt=-
seed ext4-4k-fec 4096 --hash=sha256 --salt=- --fec-device="$tmp/fec" --fec-roots=4
