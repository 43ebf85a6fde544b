#!/usr/bin/env bash
# What the ext4 reader refuses, on images built here (mke2fs -d, then
# damaged with debugfs -w and dd; no root, no mount).  The oracles are
# e2fsck, debugfs and dumpe2fs, never the tool itself:
#   bitmap   a live block marked free (debugfs freeb; e2fsck then reports
#            "Block bitmap differences: +N" and debugfs icheck names its
#            inode, or none for metadata): a directory block, a file's data
#            block, an extent-tree block, an xattr block, a slow symlink's
#            block, a journal block, a verity file's Merkle-tree block past
#            EOF, an ext2 file's indirect block, group descriptors, a block
#            bitmap and an inode table.  The block would read as zeros
#            through the target, so format must exit 4 naming the block and
#            the inode (or "metadata"), and write no hash file.
#   state    needs_recovery set, or the superblock marked with errors
#            (dumpe2fs shows it): format exits 4 naming it and e2fsck.
#   verity   an fs-verity inode (EXT4_VERITY_FL, blocks past EOF, which
#            e2fsck accepts): formats; its blocks past EOF are residual, a
#            flipped byte there is a corrupt metadata block; its digest is
#            fs-verity's over its i_size bytes.
#   compr    a file with EXT2_COMPR_FL (ext4 ignores it): hashed as stored.
#   encrypt  EXT4_ENCRYPT_FL on a file and a directory (flags only, which
#            e2fsck rejects for lack of a policy, but enough for the
#            reader): the file is hashed as stored (ciphertext on a real
#            image); the directory's names are listed in hex, as ciphertext
#            names may hold any byte.
#   errtext  libext2fs errors print as text (the com_err table), the text
#            debugfs prints for the same damage, never "Unknown code".
#   dirleak  a directory block that cannot be read: exit 4 naming the
#            directory, and (the ASan build) no leak of the names read
#            from its earlier blocks.
. "$TOPDIR/tests/userspace/common.sh"
W=$WORKDIR
E=$EXTVERITY

# Seeded bytes: gen SEED SIZE > file
gen() {
	openssl enc -aes-128-ctr -pass "pass:$1" -nosalt -pbkdf2 </dev/zero \
		2>/dev/null | head -c "$2"
}

# dbg IMG CMD: debugfs -w; what the crafting did is checked afterwards.
dbg() {
	debugfs -w -R "$2" "$1" >/dev/null 2>&1
}

# bmap IMG PATH LBLK: the physical block of logical block LBLK.
bmap() {
	debugfs -R "bmap $2 $3" "$1" 2>/dev/null | sed 's/ .*//'
}

# mkfs SRC IMG SIZE OPTION...: mke2fs -d SRC IMG SIZE with OPTIONs.
mkfs() {
	local src=$1 img=$2 size=$3
	shift 3
	mke2fs -q -F -E root_owner=0:0 "$@" -d "$src" "$img" "$size" \
		>"$img.mkfs" 2>&1 ||
		fail "mke2fs: $(cat "$img.mkfs")"
}

# fsck_clean IMG NAME: e2fsck -fn finds nothing to fix.
fsck_clean() {
	if e2fsck -fn "$1" >"$W/fsck" 2>&1; then
		pass "$2: e2fsck finds the image clean"
	else
		fail "$2: e2fsck: $(grep -v '^Pass\|^e2fsck' "$W/fsck" | head -n 3 | tr '\n' '|')"
	fi
}

# fmt_ok IMG NAME: format succeeds (1 KiB blocks); sets $root.
fmt_ok() {
	root=
	if "$E" format --salt=- --data-block-size=1024 "$1" "$1.hash" \
		>"$1.fmt" 2>&1; then
		root=$(root_of "$1.fmt")
	fi
	if [ -n "$root" ]; then
		pass "$2: format accepts the image"
	else
		fail "$2: format: $(head -c 400 "$1.fmt")"
		return 1
	fi
}

# refused NAME IMG PATTERN: format exits 4, its stderr matches PATTERN and
# no hash file is left.
refused() {
	rm -f "$2.hash"
	check_err "$1: format refuses the image" 4 "$3" \
		"$E" format --salt=- --data-block-size=1024 "$2" "$2.hash"
	if [ -e "$2.hash" ]; then
		fail "$1: a hash file was written"
	fi
}

# freed NAME BASE BLOCK: BASE with BLOCK marked free; e2fsck must report
# it as in use but free, and format must refuse naming the block and the
# inode debugfs's icheck finds for it (or "metadata" when none).
freed() {
	local name=$1 img=$W/freed blk=$3 ino who
	if [ -z "$blk" ] || [ "$blk" -eq 0 ]; then
		fail "$name: no block found to free"
		return
	fi
	cp "$2" "$img"
	dbg "$img" "freeb $blk"
	e2fsck -fn "$img" >"$W/fsck" 2>&1
	if ! grep -Eq "Block bitmap differences: .*\\+$blk( |\$)" "$W/fsck"; then
		fail "$name: e2fsck does not see block $blk in use but free: $(grep -i bitmap "$W/fsck" | head -n 2 | tr '\n' '|')"
		return
	fi
	ino=$(debugfs -R "icheck $blk" "$img" 2>/dev/null |
		awk -v b="$blk" '$1 == b && $2 ~ /^[0-9]+$/ { print $2 }')
	if [ -n "$ino" ]; then who="inode $ino \\("; else who='metadata'; fi
	refused "$name (block $blk, ${ino:+inode }${ino:-metadata})" "$img" \
		"^extverity: $who.* uses block $blk as .*, which the block bitmap marks free: .*e2fsck"
}

# ------------------------------------------------------------- the image
# 1 KiB blocks, ext4 with a journal and fs-verity support; /d takes two
# directory blocks, /frag has more extents than the inode holds (an
# extent-tree block), /x an xattr block, /link a block of its own.
s=$W/src
mkdir -p "$s/d"
for i in $(seq 1 60); do
	echo "$i" >"$s/d/a-rather-long-file-name-to-fill-blocks-$i"
done
gen big 20000 >"$s/big"
gen v 10240 >"$s/vfile"
gen c 5000 >"$s/compr"
truncate -s 40k "$s/frag"
for i in 0 4 8 12 16 20 24 28 32 36; do
	gen "f$i" 1024 | dd of="$s/frag" bs=1024 seek="$i" conv=notrunc \
		status=none
done
gen x 600 >"$W/xvalue"
gen x 1500 >"$s/x"
ln -s "/$(printf 'l%.0s' $(seq 1 100))" "$s/link"
base=$W/base
mkfs "$s" "$base" 4M -t ext4 -b 1024 -O verity
dbg "$base" "ea_set -f $W/xvalue /x user.big"
# /vfile as fs-verity leaves it: i_size 3000 with its Merkle tree (here the
# file's other blocks) past EOF, EXT4_VERITY_FL | EXT4_EXTENTS_FL.
dbg "$base" "sif /vfile size 3000"
dbg "$base" "sif /vfile flags 0x180000"
# /compr with EXT2_COMPR_FL, which ext4 ignores.
dbg "$base" "sif /compr flags 0x80004"

fsck_clean "$base" "base"
if debugfs -R "stat /vfile" "$base" 2>/dev/null | grep -q 'Flags: 0x180000' &&
	[ "$(debugfs -R "stat /vfile" "$base" 2>/dev/null |
		sed -n 's/.*Project: .*Size: *\([0-9]*\)$/\1/p')" = 3000 ]; then
	pass "base: /vfile is a verity inode of 3000 bytes"
else
	fail "base: debugfs did not make /vfile a verity inode"
fi
etb=$(debugfs -R "stat /frag" "$base" 2>/dev/null | tr -s ' ,' '\n' |
	sed -n 's/^(ETB0):\([0-9]*\)$/\1/p' | head -n 1)
xb=$(debugfs -R "stat /x" "$base" 2>/dev/null |
	sed -n 's/^File ACL: *\([0-9]*\).*/\1/p')
gd=$(dumpe2fs "$base" 2>/dev/null |
	sed -n 's/.*Group descriptors at \([0-9]*\).*/\1/p' | head -n 1)
bb=$(dumpe2fs "$base" 2>/dev/null |
	sed -n 's/.*Block bitmap at \([0-9]*\).*/\1/p' | head -n 1)
it=$(dumpe2fs "$base" 2>/dev/null |
	sed -n 's/.*Inode table at \([0-9]*\)-.*/\1/p' | head -n 1)

# ---------------------------------------------------------------- verity
# Blocks 3-9 of /vfile lie past its EOF: residual, never a zero range.
what=verity
if fmt_ok "$base" "$what"; then
	check_exit "$what: the intact image verifies" 0 \
		"$E" verify "$base" "$base.hash" "$root" >/dev/null
	want=$(head -c 3000 "$s/vfile" >"$W/vhead" &&
		fsverity digest --hash-alg=sha256 --block-size=1024 "$W/vhead" |
		sed 's/ .*//')
	got=$("$E" dump --files "$base.hash" 2>&1 | sed -n 's| /vfile$||p')
	if [ -n "$want" ] && [ "$want" = "$got" ]; then
		pass "$what: /vfile's digest is fs-verity's of its 3000 bytes"
	else
		fail "$what: /vfile's digest $got, want $want"
	fi
	want=$(fsverity digest --hash-alg=sha256 --block-size=1024 "$s/compr" |
		sed 's/ .*//')
	got=$("$E" dump --files "$base.hash" 2>&1 | sed -n 's| /compr$||p')
	if [ -n "$want" ] && [ "$want" = "$got" ]; then
		pass "compr: /compr (EXT2_COMPR_FL) is hashed as stored"
	else
		fail "compr: /compr's digest $got, want $want"
	fi
	past=$(bmap "$base" /vfile 5)
	if python3 "$TOPDIR/tests/userspace/evread.py" "$base.hash" "$root" \
		>"$W/ext" 2>"$W/err"; then
		cls=$(awk -v b="$past" 'b >= $1 && b < $1 + $2 { print $3 }' "$W/ext")
		if [ "$cls" = 0 ]; then
			pass "$what: block $past past EOF is residual"
		else
			fail "$what: block $past past EOF is in tree '$cls', want 0"
		fi
	else
		fail "$what: evread: $(cat "$W/err")"
	fi
	cp "$base" "$W/c"
	printf '\x5a' | dd of="$W/c" bs=1 seek=$((past * 1024 + 10)) \
		conv=notrunc status=none
	check_err "$what: a flipped byte past EOF is a corrupt metadata block" \
		2 "corrupted: metadata block $past\$" \
		"$E" verify "$W/c" "$base.hash" "$root"
fi

# --------------------------------------------------------------- encrypt
what=encrypt
img=$W/encrypt
cp "$base" "$img"
dbg "$img" "sif /d flags 0x80800"
dbg "$img" "sif /big flags 0x80800"
if [ "$(debugfs -R "stat /d" "$img" 2>/dev/null |
	sed -n 's/.*Flags: \(0x[0-9a-f]*\).*/\1/p')" != 0x80800 ]; then
	fail "$what: debugfs did not flag /d encrypted"
elif fmt_ok "$img" "$what"; then
	name=a-rather-long-file-name-to-fill-blocks-7
	hex=$(printf %s "$name" | od -An -tx1 | tr -d ' \n')
	want=$(fsverity digest --hash-alg=sha256 --block-size=1024 \
		"$s/d/$name" | sed 's/ .*//')
	got=$("$E" dump --files "$img.hash" 2>&1 | sed -n "s| /d/$hex\$||p")
	if [ -n "$want" ] && [ "$want" = "$got" ]; then
		pass "$what: /d/$name is listed as /d/$hex"
	else
		fail "$what: /d/$hex: digest '$got', want $want: $("$E" dump --files "$img.hash" 2>&1 | grep ' /d/' | head -n 2 | tr '\n' '|')"
	fi
	want=$(fsverity digest --hash-alg=sha256 --block-size=1024 "$s/big" |
		sed 's/ .*//')
	got=$("$E" dump --files "$img.hash" 2>&1 | sed -n 's| /big$||p')
	if [ -n "$want" ] && [ "$want" = "$got" ]; then
		pass "$what: /big (EXT4_ENCRYPT_FL) is hashed as stored"
	else
		fail "$what: /big's digest '$got', want $want"
	fi
fi

# ---------------------------------------------------------------- bitmap
freed "bitmap: directory block" "$base" "$(bmap "$base" /d 1)"
freed "bitmap: file data block" "$base" "$(bmap "$base" /big 3)"
freed "bitmap: extent-tree block" "$base" "$etb"
freed "bitmap: xattr block" "$base" "$xb"
freed "bitmap: slow symlink block" "$base" "$(bmap "$base" /link 0)"
freed "bitmap: journal block" "$base" "$(bmap "$base" '<8>' 3)"
freed "bitmap: verity Merkle block past EOF" "$base" \
	"$(bmap "$base" /vfile 5)"
freed "bitmap: group descriptors" "$base" "$gd"
freed "bitmap: block bitmap" "$base" "$bb"
freed "bitmap: inode table" "$base" "$((it + 1))"

# An ext2 file's indirect block (block-mapped: block 12 on is indirect).
mkdir -p "$W/src2"
gen i 20000 >"$W/src2/ind"
ext2=$W/ext2
mkfs "$W/src2" "$ext2" 1M -t ext2 -b 1024
ind=$(debugfs -R "stat /ind" "$ext2" 2>/dev/null | tr -s ' ,' '\n' |
	sed -n 's/^(IND):\([0-9]*\)$/\1/p' | head -n 1)
fsck_clean "$ext2" "ext2"
fmt_ok "$ext2" "ext2" || true
freed "bitmap: ext2 indirect block" "$ext2" "$ind"

# ----------------------------------------------------------------- state
img=$W/recover
cp "$base" "$img"
dbg "$img" "feature needs_recovery"
if dumpe2fs -h "$img" 2>/dev/null | grep -q '^Filesystem features:.*needs_recovery'; then
	refused "state: needs_recovery" "$img" \
		"journal .*needs recovery.*e2fsck"
else
	fail "state: debugfs did not set needs_recovery"
fi
img=$W/errors
cp "$base" "$img"
dbg "$img" "ssv state 3"
if dumpe2fs -h "$img" 2>/dev/null | grep -q '^Filesystem state: *clean with errors'; then
	refused "state: errors" "$img" "marked as having errors.*e2fsck"
else
	fail "state: debugfs did not mark the image with errors"
fi

# --------------------------------------------------------------- errtext
# Group 0 without an inode table: libext2fs cannot read the root.
img=$W/noitable
cp "$base" "$img"
dbg "$img" "set_bg 0 inode_table 0"
text=$(debugfs -R "ls /" "$img" 2>&1 >/dev/null |
	sed -n 's/^ls: \(.*\) while reading inode 2$/\1/p')
if [ -z "$text" ]; then
	fail "errtext: debugfs names no error for the damaged image"
else
	refused "errtext: libext2fs's message ($text)" "$img" \
		"^extverity: cannot read directory /: $text\$"
fi

# --------------------------------------------------------------- dirleak
# /d's second block made unreadable (a bad checksum and record length):
# the names of its first block were collected before the error.
img=$W/baddir
cp "$base" "$img"
blk=$(bmap "$img" /d 1)
printf '\xff\xff\xff\xff\xff\xff\xff\xff' |
	dd of="$img" bs=1 seek=$((blk * 1024)) conv=notrunc status=none
if e2fsck -fn "$img" >"$W/fsck" 2>&1; then
	fail "dirleak: e2fsck finds no damage in /d"
else
	refused "dirleak: unreadable directory block" "$img" \
		"^extverity: cannot read directory /d: "
fi

# --------------------------------------------------------------- nofiles
# No regular file at all (one empty directory): nothing to sort, which the
# sanitizers check is not done through a null pointer.
mkdir -p "$W/nofiles/d"
mke2fs -q -F -t ext4 -b 4096 -d "$W/nofiles" "$W/nofiles.img" 4M >/dev/null 2>&1
if "$EXTVERITY" format "$W/nofiles.img" "$W/nofiles.h" >"$W/nofiles.out" 2>&1; then
	r=$(root_of "$W/nofiles.out")
	if [ -z "$("$EXTVERITY" dump --files "$W/nofiles.h")" ] &&
		"$EXTVERITY" verify "$W/nofiles.img" "$W/nofiles.h" "$r" >/dev/null 2>&1; then
		pass "nofiles: an image without a regular file formats and verifies"
	else
		fail "nofiles: dump --files not empty or verify failed"
	fi
else
	fail "nofiles: format: $(tail -n 2 "$W/nofiles.out")"
fi

finish
