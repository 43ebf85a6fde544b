#!/usr/bin/env bash
# mkimage.sh OUTDIR [BLOCKSIZE]
#
# Build the shared ext4 test image, deterministically (content is seeded).
# Outputs, in OUTDIR:
#   src/               the directory tree that went into the image
#   image.ext4         mke2fs -t ext4 -b BLOCKSIZE -d src, plus two files
#                      (frag/a, frag/b) written interleaved through a loop
#                      mount so that each has several extents; they are
#                      copied back into src/ so src/ mirrors the image
#   image-inline.ext4  the same tree (without frag/) with -O inline_data
#   manifest.txt       what was built (one line per regular file: size path)
# BLOCKSIZE defaults to 4096.  MKIMAGE_NO_BIG=1 leaves out the ~65 MiB file.
# Needs root for the loop mount; without it frag/ is simply not made.
set -eu
out=${1:?usage: mkimage.sh OUTDIR [BLOCKSIZE]}
bs=${2:-4096}
src=$out/src
rm -rf "$src" "$out/image.ext4" "$out/image-inline.ext4"
mkdir -p "$src"

# Seeded bytes: gen SEED SIZE > file
gen() {
	openssl enc -aes-128-ctr -pass "pass:$1" -nosalt -pbkdf2 </dev/zero \
		2>/dev/null | head -c "$2"
}

mkdir -p "$src/sizes" "$src/big" "$src/sparse" "$src/links" \
	"$src/many" "$src/dup/one" "$src/dup/two" "$src/deep/a/b/c"
for n in 0 1 4095 4096 4097 65536; do
	gen "size$n" "$n" >"$src/sizes/f$n"
done
gen level2 $((512 * 1024 + 4096 + 17)) >"$src/big/two-levels"
if [ -z "${MKIMAGE_NO_BIG:-}" ]; then
	gen level3 $((65 * 1024 * 1024 + 123)) >"$src/big/three-levels"
fi
# Sparse: holes at start, middle and end.
f=$src/sparse/holes
truncate -s $((3 * 1024 * 1024)) "$f"
gen sp1 8192 | dd of="$f" bs=4096 seek=64 conv=notrunc status=none
gen sp2 5000 | dd of="$f" bs=4096 seek=300 conv=notrunc status=none
truncate -s 1M "$src/sparse/all-hole"
# Hard links and symlinks.
gen hl 10000 >"$src/links/target"
ln "$src/links/target" "$src/links/hardlink"
ln "$src/links/target" "$src/deep/a/b/c/hardlink2"
ln -s target "$src/links/short-symlink"
ln -s "$(printf 'very-long-target-%.0s' $(seq 10))/x" "$src/links/long-symlink"
# Many entries (htree directory).
for i in $(seq 1 600); do
	printf 'entry %d\n' "$i" >"$src/many/file-$i"
done
# Identical content: same name in two dirs, different names too.
gen dup 20000 >"$src/dup/one/same"
cp "$src/dup/one/same" "$src/dup/two/same"
cp "$src/dup/one/same" "$src/dup/two/other-name"
gen deep 7777 >"$src/deep/a/b/c/leaf"
setfattr -n user.test -v hello "$src/sizes/f4096" 2>/dev/null || true

kb=$(du -sk --apparent-size "$src" | cut -f1)
size_kb=$((kb * 13 / 10 + 16384))
size_kb=$((size_kb / (bs / 1024) * (bs / 1024)))
mke2fs -q -F -t ext4 -b "$bs" -E root_owner=0:0 \
	-d "$src" "$out/image.ext4" "${size_kb}k"

# Fragmented pair through a loop mount.
mnt=$out/mnt
mkdir -p "$mnt"
if mount -o loop "$out/image.ext4" "$mnt" 2>/dev/null; then
	mkdir -p "$mnt/frag"
	: >"$mnt/frag/a"
	: >"$mnt/frag/b"
	for i in $(seq 1 16); do
		for w in a b; do
			gen "frag$w$i" 4096 | dd of="$mnt/frag/$w" bs=4096 \
				conv=notrunc oflag=append status=none
			sync
		done
	done
	mkdir -p "$src/frag"
	cp "$mnt/frag/a" "$mnt/frag/b" "$src/frag/"
	ext_a=$(filefrag "$mnt/frag/a" | sed 's/.*: \([0-9]*\) extent.*/\1/')
	umount "$mnt"
	echo "frag/a has $ext_a extents" >&2
fi
rmdir "$mnt" 2>/dev/null || true

# Inline-data variant (the fragmented pair lives only in image.ext4).
isrc=$out/src-inline
rm -rf "$isrc"
cp -a "$src" "$isrc"
rm -rf "$isrc/frag"
mke2fs -q -F -t ext4 -b "$bs" -O inline_data -E root_owner=0:0 \
	-d "$isrc" "$out/image-inline.ext4" "${size_kb}k"
# mke2fs 1.47.0 -d mis-copies some files into an inline_data filesystem
# (a 4097-byte file is stored as 4096 bytes, a sparse file is cut short), so
# src-inline is replaced by what the image really holds, read back through
# the kernel's ext4 (or debugfs without root), for the digest oracle.
rm -rf "$isrc"
mkdir -p "$isrc" "$out/mnt-inline"
if mount -o ro,loop "$out/image-inline.ext4" "$out/mnt-inline" 2>/dev/null; then
	cp -a "$out/mnt-inline/." "$isrc/"
	umount "$out/mnt-inline"
else
	debugfs -R "rdump / $isrc" "$out/image-inline.ext4" >/dev/null 2>&1
fi
rmdir "$out/mnt-inline"
rm -rf "$isrc/lost+found"

(cd "$src" && find . -type f -printf '%s %P\n' | sort -k2) >"$out/manifest.txt"
echo "mkimage: $(wc -l <"$out/manifest.txt") files, image $size_kb KiB," \
	"block size $bs in $out" >&2
