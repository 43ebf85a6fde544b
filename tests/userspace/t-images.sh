#!/usr/bin/env bash
# Filesystem images the shared test image does not have, each built here
# (mke2fs -d, then crafted with debugfs -w and dd; no root, no mount):
#   tail     non-zero bytes past end-of-file in a file's last block
#   unwritten  a fallocate'd file and a file with a written part, an
#            unwritten part and unwritten blocks past EOF (debugfs
#            fallocate: mke2fs -d turns a fallocate'd source into holes)
#   pastend  an image file larger than its filesystem, garbage past the end
#   xattr    a file whose large xattr lives in an xattr block
#   ext2     1 KiB blocks, block-mapped files through the indirect, double
#            and triple indirect blocks (a sparse file for the last)
#   ext3     4 KiB blocks, a journal and an indirect block
#   bs2048   2048-byte blocks, sha512
# For each: format, then verify accepts the intact image; every file's
# digest from `dump --files` equals `fsverity digest` of the content it must
# have (written here, independently of the image: the source files, zeros
# where unwritten; debugfs's reading of the image must agree with it); the
# extent map (read by evread.py) gives each crafted block the class
# docs/format.md says; one flipped byte fails verify naming the file and
# offset, or the metadata block.  Then dump's exit 2 (a manifest section
# whose digest does not match) and verify's cap of 100 reported items.
. "$TOPDIR/tests/userspace/common.sh"
W=$WORKDIR
E=$EXTVERITY
R=$TOPDIR/tests/userspace/evread.py
SALT=5a17c0ffee

# Seeded bytes: gen SEED SIZE > file
gen() {
	openssl enc -aes-128-ctr -pass "pass:$1" -nosalt -pbkdf2 </dev/zero \
		2>/dev/null | head -c "$2"
}

# put IMG BYTE_OFFSET SEED LEN: write LEN seeded non-zero bytes into IMG.
put() {
	gen "$3" "$4" | tr '\0' '\1' | dd of="$1" bs=64k seek="$2" \
		oflag=seek_bytes iflag=fullblock conv=notrunc status=none
}

# dbg IMG CMD: debugfs -w; what the crafting did is checked afterwards.
dbg() {
	debugfs -w -R "$2" "$1" >/dev/null 2>&1
}

# bmap IMG PATH LBLK: the physical block of logical block LBLK.
bmap() {
	debugfs -R "bmap $2 $3" "$1" 2>/dev/null | sed 's/ .*//'
}

# st_blk IMG PATH KIND: the file's first IND, DIND or TIND block (stat).
st_blk() {
	debugfs -R "stat $2" "$1" 2>/dev/null | tr -s ' ,' '\n' |
		sed -n "s/^($3):\([0-9]*\)\$/\1/p" | head -n 1
}

# mkfs SRC IMG SIZE OPTION...: mke2fs -d SRC IMG SIZE with OPTIONs.
mkfs() {
	local src=$1 img=$2 size=$3
	shift 3
	mke2fs -q -F -E root_owner=0:0 "$@" -d "$src" "$img" "$size" \
		>"$img.mkfs" 2>&1 ||
		fail "$what: mke2fs: $(cat "$img.mkfs")"
}

# fmt IMG BS ALG: format IMG into IMG.hash, set $root.  Nothing else runs
# for the image when it fails (the failure is recorded).
fmt() {
	root=
	if "$E" format --hash="$3" --data-block-size="$2" --salt=$SALT \
		"$1" "$1.hash" >"$1.fmt" 2>&1; then
		root=$(root_of "$1.fmt")
	fi
	if [ -z "$root" ]; then
		fail "$what: format: $(head -c 400 "$1.fmt")"
		return 1
	fi
}

# intact IMG: verify accepts the image as formatted.
intact() {
	check_exit "$what: intact image verifies" 0 "$E" verify "$1" "$1.hash" \
		"$root" >/dev/null
}

# digests IMG WANTDIR ALG BS: `dump --files` equals the oracle over WANTDIR
# (every regular file the image holds, with the content it must have), and
# debugfs's rdump of the image holds exactly that content.
digests() {
	local img=$1 want=$2 alg=$3 bs=$4 x=$W/rdump
	rm -rf "$x"
	mkdir "$x"
	debugfs -R "rdump / $x" "$img" >/dev/null 2>&1
	rm -rf "$x/lost+found"
	if ! diff -r "$want" "$x" >"$W/diff" 2>&1; then
		fail "$what: debugfs reads other content than expected: $(head -n 3 "$W/diff" | tr '\n' '|')"
	fi
	oracle "$want" "$alg" "$bs" "$SALT" >"$W/want"
	"$E" dump --files "$img.hash" >"$W/got" 2>&1
	if [ ! -s "$W/want" ]; then
		fail "$what: the oracle printed nothing"
	elif cmp -s "$W/want" "$W/got"; then
		pass "$what: dump --files equals fsverity digest ($(wc -l <"$W/want") files)"
	else
		fail "$what: dump --files differs from fsverity digest: $(diff "$W/want" "$W/got" | head -n 5 | tr '\n' '|')"
	fi
}

# classes IMG NAME BLOCK=CLASS...: in the extent map each BLOCK is of
# CLASS: "zero" (a zero range), "residual" (tree 0) or "file" (a file's).
classes() {
	local img=$1 name=$2 bad=
	shift 2
	if ! python3 "$R" "$img.hash" "$root" >"$W/ext" 2>"$W/err"; then
		fail "$what: $name: evread: $(cat "$W/err")"
		return
	fi
	bad=$(printf '%s\n' "$@" | awk '
		NR == FNR { split($0, kv, "="); want[kv[1]] = kv[2]; next }
		{ for (b in want) if (b + 0 >= $1 && b + 0 < $1 + $2)
			got[b] = $3 == "zero" ? "zero" : $3 == 0 ? "residual" : "file" }
		END { for (b in want) if (got[b] != want[b])
			printf "block %s is %s, want %s; ", b, got[b], want[b] }' - "$W/ext")
	if [ -z "$bad" ]; then pass "$what: $name"
	else fail "$what: $name: $bad"; fi
}

# bad_one NAME IMG OFFSET PATTERN: with the byte at OFFSET flipped, verify
# exits 2 and reports exactly one item, matching the extended regex.
bad_one() {
	local name=$1 img=$2 rc=0 n
	cp "$img" "$W/c"
	flip "$W/c" "$3"
	"$E" verify "$W/c" "$img.hash" "$root" >/dev/null 2>"$W/err" || rc=$?
	n=$(grep -c 'corrupted: ' "$W/err")
	if [ "$rc" -ne 2 ] || [ "$n" -ne 1 ] ||
		! grep -Eq "^extverity: corrupted: $4\$" "$W/err"; then
		fail "$what: $name: exit $rc, $n reports, want one matching /$4/: $(head -n 3 "$W/err" | tr '\n' '|')"
	else
		pass "$what: $name"
	fi
}

# reseal AREA OUT SECTION OFFSET: AREA with the record bytes at OFFSET in
# SECTION made invalid (a tree's size 2^62, an extent's start one block
# on, a FILES entry's prefix longer than the previous path), and the
# section's digest in the superblock recomputed; OUT's root is not AREA's.
reseal() {
	python3 - "$@" <<'PY'
import hashlib, struct, sys
src, out, name, off = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
a = bytearray(open(src, 'rb').read())
alg = {1: 'sha256', 2: 'sha512'}[a[20]]
bs, ds = 1 << a[21], {1: 32, 2: 64}[a[20]]
sid = ['EXTENTS', 'TREES', 'FILES'].index(name)
so = 88 + 96 * sid
start, nr = struct.unpack_from('<QQ', a, so)
pos = start * bs + off
if name == 'TREES':
    struct.pack_into('<Q', a, pos, 1 << 62)
elif name == 'EXTENTS':
    struct.pack_into('<Q', a, pos, struct.unpack_from('<Q', a, pos)[0] + 1)
else:
    struct.pack_into('<H', a, pos, 5)
d = hashlib.new(alg, bytes(a[start * bs:(start + nr) * bs])).digest()
a[so + 32:so + 32 + ds] = d
open(out, 'wb').write(a)
PY
}

# file_re PATH OFFSET BLOCK: verify's report of a file's data block.
file_re() {
	printf 'file %s \\(inode [0-9]+\\) at offset %s \\(data block %s\\)' "$1" "$2" "$3"
}

# ---------------------------------------------------------------- tail
# Bytes past EOF in a last block are not part of the file: fs-verity hashes
# the block zero-padded, so the block must be covered by the residual tree.
what='tail'
d=$W/tail
mkdir -p "$d/src"
gen t1 $((3 * 4096 + 100)) >"$d/src/t1"
gen t2 100 >"$d/src/t2"
gen t3 $((2 * 4096)) >"$d/src/t3"
gen t4 $((70 * 4096 + 1)) >"$d/src/t4"
img=$d/img
mkfs "$d/src" "$img" 4M -t ext4 -b 4096
t1=$(bmap "$img" /t1 3) t2=$(bmap "$img" /t2 0) t4=$(bmap "$img" /t4 70)
put "$img" $((t1 * 4096 + 100)) junk1 $((4096 - 100))
put "$img" $((t2 * 4096 + 4000)) junk2 96
put "$img" $((t4 * 4096 + 1)) junk4 1
if fmt "$img" 4096 sha256; then
	intact "$img"
	digests "$img" "$d/src" sha256 4096
	classes "$img" "dirty last blocks are residual, the others the files'" \
		"$t1=residual" "$t2=residual" "$t4=residual" \
		"$(bmap "$img" /t1 2)=file" "$(bmap "$img" /t3 1)=file" \
		"$(bmap "$img" /t4 69)=file"
	bad_one "flipped byte of a file with a dirty tail names it" "$img" \
		$(($(bmap "$img" /t1 1) * 4096 + 7)) \
		"$(file_re /t1 4096 "$(bmap "$img" /t1 1)")"
	bad_one "flipped byte past EOF is a metadata block" "$img" \
		$((t1 * 4096 + 3000)) "metadata block $t1"
	bad_one "flipped byte before EOF in a dirty last block is metadata" \
		"$img" $((t2 * 4096 + 50)) "metadata block $t2"
	bad_one "flipped byte of a clean last block names the file" "$img" \
		$(($(bmap "$img" /t3 1) * 4096 + 4095)) \
		"$(file_re /t3 4096 "$(bmap "$img" /t3 1)")"
fi

# ------------------------------------------------------------ unwritten
# Unwritten extents read as zeros: the file's tree hashes zeros, whatever
# the blocks hold; the blocks themselves are residual.
what='unwritten'
d=$W/unwritten
mkdir -p "$d/src" "$d/want"
gen w1 $((2 * 4096)) >"$d/src/w"
cp "$d/src/w" "$d/want/w"
img=$d/img
mkfs "$d/src" "$img" 4M -t ext4 -b 4096
gen m1 6000 >"$d/part"
# /fa: 10 blocks, all unwritten.  /fb: 2 written blocks, 8 unwritten ones,
# a hole, and 4 unwritten blocks past EOF (a preallocated tail).
dbg "$img" "write /dev/null fa"
dbg "$img" "sif fa size 40000"
dbg "$img" "fallocate fa 0 9"
dbg "$img" "write $d/part fb"
dbg "$img" "sif fb size $((11 * 4096 + 10))"
dbg "$img" "fallocate fb 2 9"
dbg "$img" "fallocate fb 12 15"
head -c 40000 /dev/zero >"$d/want/fa"
{ cat "$d/part"; head -c $((11 * 4096 + 10 - 6000)) /dev/zero; } >"$d/want/fb"
# Every fallocate'd block is unwritten (debugfs bmap says "(uninit)").
for i in $(seq 0 9); do echo "bmap fa $i"; done >"$d/cmds"
for i in 0 1 $(seq 2 9) $(seq 12 15); do echo "bmap fb $i"; done >>"$d/cmds"
n=$(debugfs -f "$d/cmds" "$img" 2>/dev/null | grep -v '^debugfs' |
	sed 's/^[0-9]* *//' | tr '\n' ,)
if [ "$n" = "$(printf '(uninit),%.0s' $(seq 10)),,$(printf '(uninit),%.0s' $(seq 12))" ]; then
	pass "$what: debugfs made the unwritten extents (fa 0-9, fb 2-9 and 12-15)"
else
	fail "$what: debugfs did not make the unwritten extents wanted: $n"
fi
# Garbage in every unwritten block: readers still see zeros.
for p in "fa 0" "fa 9" "fb 2" "fb 5" "fb 9" "fb 12" "fb 15"; do
	# shellcheck disable=SC2086 # PATH LBLK
	b=$(bmap "$img" $p)
	put "$img" $((b * 4096)) "u$b" 4096
done
fa0=$(bmap "$img" fa 0) fb5=$(bmap "$img" fb 5) fb12=$(bmap "$img" fb 12)
if fmt "$img" 4096 sha256; then
	intact "$img"
	digests "$img" "$d/want" sha256 4096
	classes "$img" "unwritten blocks are residual, written ones the file's" \
		"$fa0=residual" "$(bmap "$img" fa 9)=residual" "$fb5=residual" \
		"$fb12=residual" "$(bmap "$img" fb 1)=file"
	bad_one "flipped byte in the written part names the file" "$img" \
		$(($(bmap "$img" fb 1) * 4096 + 9)) \
		"$(file_re /fb 4096 "$(bmap "$img" fb 1)")"
	bad_one "flipped byte in an unwritten block is metadata" "$img" \
		$((fb5 * 4096 + 9)) "metadata block $fb5"
	bad_one "flipped byte in a fallocate'd file's block is metadata" \
		"$img" $((fa0 * 4096)) "metadata block $fa0"
	bad_one "flipped byte in a preallocated block past EOF is metadata" \
		"$img" $((fb12 * 4096 + 100)) "metadata block $fb12"
fi

# -------------------------------------------------------------- pastend
# An image file longer than its filesystem: the blocks past the end are
# not the filesystem's to call free; they are residual.
what='pastend'
d=$W/pastend
mkdir -p "$d/src"
gen p1 50000 >"$d/src/p"
img=$d/img
mkfs "$d/src" "$img" 4M -t ext4 -b 4096
truncate -s $(((1024 + 37) * 4096)) "$img"
put "$img" $((1024 * 4096)) past $((20 * 4096))
fsb=$(dumpe2fs -h "$img" 2>/dev/null | sed -n 's/^Block count: *//p')
if [ "$fsb" = 1024 ]; then
	pass "$what: filesystem of 1024 blocks in an image of 1061"
else
	fail "$what: filesystem has '$fsb' blocks, want 1024"
fi
if fmt "$img" 4096 sha256; then
	intact "$img"
	digests "$img" "$d/src" sha256 4096
	classes "$img" "blocks past the filesystem are residual" \
		1024=residual 1030=residual 1043=residual 1060=residual \
		"$(bmap "$img" /p 0)=file"
	bad_one "flipped byte past the filesystem is metadata" "$img" \
		$((1030 * 4096 + 11)) "metadata block 1030"
	bad_one "flipped byte in a zero block past the filesystem is metadata" \
		"$img" $((1060 * 4096 + 4095)) "metadata block 1060"
	bad_one "flipped byte of a file names it" "$img" \
		$(($(bmap "$img" /p 12) * 4096 + 1)) \
		"$(file_re /p 49152 "$(bmap "$img" /p 12)")"
fi

# ---------------------------------------------------------------- xattr
# An xattr that does not fit in the inode goes to an xattr block: metadata.
what='xattr'
d=$W/xattr
mkdir -p "$d/src"
gen x1 9000 >"$d/src/x"
gen x2 3000 >"$d/value"
img=$d/img
mkfs "$d/src" "$img" 4M -t ext4 -b 4096
dbg "$img" "ea_set -f $d/value /x user.big"
xb=$(debugfs -R "stat /x" "$img" 2>/dev/null | sed -n 's/^File ACL: *\([0-9]*\).*/\1/p')
if [ -n "$xb" ] && [ "$xb" -gt 0 ]; then
	pass "$what: /x has an xattr block ($xb)"
else
	fail "$what: /x has no xattr block (File ACL '$xb')"
	xb=0
fi
if fmt "$img" 4096 sha256; then
	intact "$img"
	digests "$img" "$d/src" sha256 4096
	classes "$img" "the xattr block is residual" "$xb=residual"
	bad_one "flipped byte in the xattr block is metadata" "$img" \
		$((xb * 4096 + 2000)) "metadata block $xb"
	bad_one "flipped byte of the file names it" "$img" \
		$(($(bmap "$img" /x 2) * 4096 + 808)) \
		"$(file_re /x 8192 "$(bmap "$img" /x 2)")"
fi

# ----------------------------------------------------------------- ext2
# Block-mapped files at 1 KiB: 12 direct blocks, then an indirect block
# (256 more), a double indirect one, and (a sparse file) a triple one.
what='ext2'
d=$W/ext2
mkdir -p "$d/src"
gen i1 $((20 * 1024 + 5)) >"$d/src/ind"
gen i2 $((300 * 1024 + 77)) >"$d/src/dind"
tind=$((12 + 256 + 65536))
truncate -s $(((tind + 3) * 1024 + 500)) "$d/src/tind"
gen i3 3000 | dd of="$d/src/tind" bs=1024 seek=$((tind + 1)) conv=notrunc status=none
gen i4 $((12 * 1024)) | dd of="$d/src/tind" bs=1024 conv=notrunc status=none
gen i5 $((5 * 1024 + 1)) >"$d/src/small"
img=$d/img
mkfs "$d/src" "$img" 2M -t ext2 -b 1024
ind=$(st_blk "$img" /ind IND) dind=$(st_blk "$img" /dind DIND)
tblk=$(st_blk "$img" /tind TIND)
if [ -n "$ind" ] && [ -n "$dind" ] && [ -n "$tblk" ]; then
	pass "$what: indirect $ind, double indirect $dind, triple indirect $tblk"
else
	fail "$what: missing an indirect block: IND '$ind' DIND '$dind' TIND '$tblk'"
fi
small=$(bmap "$img" /small 5)
put "$img" $((small * 1024 + 1)) small 1023
if fmt "$img" 1024 sha256; then
	intact "$img"
	digests "$img" "$d/src" sha256 1024
	classes "$img" "indirect blocks are residual, data blocks the files'" \
		"${ind:-0}=residual" "${dind:-0}=residual" "${tblk:-0}=residual" \
		"$small=residual" "$(bmap "$img" /dind 299)=file" \
		"$(bmap "$img" /tind $((tind + 2)))=file"
	b=$(bmap "$img" /ind 12)
	bad_one "flipped byte of the first indirect-mapped block names the file" \
		"$img" $((b * 1024 + 5)) "$(file_re /ind 12288 "$b")"
	b=$(bmap "$img" /dind 280)
	bad_one "flipped byte of a double-indirect-mapped block names the file" \
		"$img" $((b * 1024)) "$(file_re /dind $((280 * 1024)) "$b")"
	b=$(bmap "$img" /tind $((tind + 1)))
	bad_one "flipped byte of a triple-indirect-mapped block names the file" \
		"$img" $((b * 1024 + 1000)) \
		"$(file_re /tind $(((tind + 1) * 1024)) "$b")"
	bad_one "flipped byte in an indirect block is metadata" "$img" \
		$((${ind:-0} * 1024 + 4)) "metadata block ${ind:-0}"
	bad_one "flipped byte in a double indirect block is metadata" "$img" \
		$((${dind:-0} * 1024)) "metadata block ${dind:-0}"
	bad_one "flipped byte in a triple indirect block is metadata" "$img" \
		$((${tblk:-0} * 1024)) "metadata block ${tblk:-0}"
fi

# ----------------------------------------------------------------- ext3
what='ext3'
d=$W/ext3
mkdir -p "$d/src"
gen e1 $((40 * 4096 + 999)) >"$d/src/f"
img=$d/img
mkfs "$d/src" "$img" 8M -t ext3 -b 4096
ind=$(st_blk "$img" /f IND)
jb=$(debugfs -R "bmap <8> 5" "$img" 2>/dev/null | sed 's/ .*//')
if [ -n "$ind" ] && [ -n "$jb" ]; then
	pass "$what: /f has an indirect block ($ind), journal block 5 is $jb"
else
	fail "$what: indirect block '$ind', journal block '$jb'"
fi
if fmt "$img" 4096 sha256; then
	intact "$img"
	digests "$img" "$d/src" sha256 4096
	classes "$img" "indirect and journal blocks are residual" \
		"${ind:-0}=residual" "${jb:-0}=residual" "$(bmap "$img" /f 40)=file"
	b=$(bmap "$img" /f 13)
	bad_one "flipped byte of an indirect-mapped block names the file" \
		"$img" $((b * 4096 + 1)) "$(file_re /f $((13 * 4096)) "$b")"
	bad_one "flipped byte in the indirect block is metadata" "$img" \
		$((${ind:-0} * 4096 + 8)) "metadata block ${ind:-0}"
	bad_one "flipped byte in the journal is metadata" "$img" \
		$((${jb:-0} * 4096 + 8)) "metadata block ${jb:-0}"
fi

# --------------------------------------------------------------- bs2048
what='bs2048'
d=$W/bs2048
mkdir -p "$d/src/dir"
gen b1 1 >"$d/src/one"
gen b2 2048 >"$d/src/dir/block"
gen b3 $((40 * 2048 + 3)) >"$d/src/dir/two-levels"
gen b4 $((5 * 2048 + 1000)) >"$d/src/tail"
img=$d/img
mkfs "$d/src" "$img" 4M -t ext4 -b 2048
tb=$(bmap "$img" /tail 5)
put "$img" $((tb * 2048 + 1000)) b2048 1048
if fmt "$img" 2048 sha512; then
	intact "$img"
	digests "$img" "$d/src" sha512 2048
	classes "$img" "2048-byte blocks: data the files', the dirty tail residual" \
		"$tb=residual" "$(bmap "$img" /tail 4)=file" \
		"$(bmap "$img" /dir/two-levels 40)=file"
	b=$(bmap "$img" /dir/two-levels 33)
	bad_one "flipped byte of a two-level tree's block names the file" \
		"$img" $((b * 2048 + 2047)) "$(file_re /dir/two-levels $((33 * 2048)) "$b")"
	b=$(bmap "$img" /one 0)
	bad_one "flipped byte of a one-byte file names it" "$img" \
		$((b * 2048)) "$(file_re /one 0 "$b")"
	bad_one "flipped byte past EOF of a dirty tail is metadata" "$img" \
		$((tb * 2048 + 2000)) "metadata block $tb"
fi
# ------------------------------------------------------------------ dump
# dump authenticates each manifest section against the superblock's digest
# of it (nothing against a root): a mismatch is exit 2, as verify's
# corruption is (veritysetup's convention, docs/cli.md), and nothing of the
# area is printed.
what='dump'
img=$W/tail/img
if [ -s "$img.hash" ]; then
	python3 "$R" "$img.hash" "$(root_of "$img.fmt")" sections >"$W/sec"
	for opt in "" --files --json; do
		check_exit "$what: intact area${opt:+, $opt}: exit 0" 0 \
			"$E" dump $opt "$img.hash" >/dev/null
	done
	for s in EXTENTS TREES FILES; do
		start=$(awk -v s=$s '$1 == s { print $2 }' "$W/sec")
		cp "$img.hash" "$W/hc"
		flip "$W/hc" $((${start:-0} * 4096 + 5))
		for opt in "" --files --json; do
			rc=0
			"$E" dump $opt "$W/hc" >"$W/out" 2>"$W/err" || rc=$?
			if [ -n "$start" ] && [ "$rc" -eq 2 ] && [ ! -s "$W/out" ] &&
				[ "$(cat "$W/err")" = "extverity: corrupted: manifest section $s" ]; then
				pass "$what${opt:+ $opt}: flipped byte in section $s: exit 2, named"
			else
				fail "$what${opt:+ $opt}: flipped byte in section $s (block '$start'): exit $rc, stdout $(wc -c <"$W/out") bytes, stderr: $(head -c 300 "$W/err")"
			fi
		done
	done
	# The digest of EXTENTS in the superblock (struct extverity_section
	# at 88, its digest 32 bytes in).
	cp "$img.hash" "$W/hc"
	flip "$W/hc" $((88 + 32 + 3))
	check_err "$what: flipped byte of a section digest: exit 2" 2 \
		"^extverity: corrupted: manifest section EXTENTS\$" "$E" dump "$W/hc"
	# Records that are invalid under a matching section digest (dump
	# authenticates nothing against a root, so anyone can reseal one): the
	# same exit 2, from the validators.
	for f in "TREES 0 tree 0: " "EXTENTS 32 extent 1: " "FILES 12 FILES section"; do
		read -r s off why <<<"$f"
		rc=0
		reseal "$img.hash" "$W/hc" "$s" "$off" &&
			"$E" dump --files "$W/hc" >"$W/out" 2>"$W/err" || rc=$?
		if [ "$rc" -eq 2 ] && [ ! -s "$W/out" ] &&
			grep -q "^extverity: invalid hash area in $W/hc: $why" "$W/err"; then
			pass "$what: resealed invalid $s record: exit 2, named"
		else
			fail "$what: resealed invalid $s record: exit $rc, stdout $(wc -c <"$W/out") bytes, stderr: $(head -c 300 "$W/err")"
		fi
	done
else
	fail "$what: no hash area of the tail image to damage"
fi

# ---------------------------------------------------------------- cap
# verify reports at most 100 items, then how many more there are; the
# exit code and --json count them all.
what='cap'
d=$W/cap
mkdir -p "$d/src"
gen c1 $((150 * 4096)) >"$d/src/c"
gen c2 5000 >"$d/src/other"
img=$d/img
mkfs "$d/src" "$img" 4M -t ext4 -b 4096
for i in $(seq 0 149); do echo "bmap /c $i"; done >"$d/cmds"
debugfs -f "$d/cmds" "$img" 2>/dev/null | grep -v '^debugfs' >"$d/blocks"
c0=$(head -n 1 "$d/blocks")
if [ "$(grep -cx '[0-9][0-9]*' "$d/blocks")" -eq 150 ]; then
	pass "$what: /c has 150 blocks from $c0"
	ino=$(debugfs -R "stat /c" "$img" 2>/dev/null | sed -n 's/^Inode: *\([0-9]*\).*/\1/p')
else
	fail "$what: debugfs bmap of /c's 150 blocks: $(head -n 3 "$d/blocks" | tr '\n' ' ')"
	c0=
fi
# damaged N: verify of the image with /c's first N blocks overwritten.
damaged() {
	cp "$img" "$W/c"
	head -n "$1" "$d/blocks" | awk '
		NR > 1 && $1 != s + n { print s, n; n = 0 }
		n == 0 { s = $1 } { n++ } END { print s, n }' >"$W/runs"
	while read -r b n; do
		put "$W/c" $((b * 4096)) "cap$b" $((n * 4096))
	done <"$W/runs"
	rc=0
	"$E" verify "$W/c" "$img.hash" "$root" >"$W/out" 2>"$W/err" || rc=$?
	grep 'corrupted: ' "$W/err" >"$W/lines"
	grep -v 'corrupted: ' "$W/err" >"$W/rest"
}
# lines_ok N: the 100 lines name the first 100 of /c's N damaged blocks in
# the order verify reads them (physical).
lines_ok() {
	head -n "$1" "$d/blocks" |
		awk -v ino="$ino" '{ printf "%d extverity: corrupted: file /c " \
			"(inode %d) at offset %d (data block %d)\n",
			$1, ino, (NR - 1) * 4096, $1 }' |
		sort -n -k 1,1 | cut -d ' ' -f 2- | head -n 100 | cmp -s - "$W/lines"
}
if [ -n "$c0" ] && fmt "$img" 4096 sha256; then
	intact "$img"
	damaged 100
	if [ "$rc" -eq 2 ] && lines_ok 100 && [ ! -s "$W/rest" ]; then
		pass "$what: 100 damaged blocks: all 100 reported, no count line"
	else
		fail "$what: 100 damaged blocks: exit $rc, $(wc -l <"$W/lines") reports, then: $(head -c 200 "$W/rest")"
	fi
	damaged 101
	if [ "$rc" -eq 2 ] && lines_ok 101 &&
		[ "$(cat "$W/rest")" = "extverity: ... and 1 more corrupted items" ]; then
		pass "$what: 101 damaged blocks: 100 reported, then '... and 1 more'"
	else
		fail "$what: 101 damaged blocks: exit $rc, $(wc -l <"$W/lines") reports, then: $(head -c 200 "$W/rest")"
	fi
	damaged 150
	if [ "$rc" -eq 2 ] && lines_ok 150 &&
		[ "$(cat "$W/rest")" = "extverity: ... and 50 more corrupted items" ]; then
		pass "$what: 150 damaged blocks: 100 reported, then '... and 50 more'"
	else
		fail "$what: 150 damaged blocks: exit $rc, $(wc -l <"$W/lines") reports, then: $(head -c 200 "$W/rest")"
	fi
	rc=0
	"$E" verify --json "$W/c" "$img.hash" "$root" >"$W/out" 2>/dev/null || rc=$?
	n=$(python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
print(j["corrupted_items"] if j["verified"] is False else "verified")' "$W/out" 2>&1)
	if [ "$rc" -eq 2 ] && [ "$n" = 150 ]; then
		pass "$what: verify --json counts all 150"
	else
		fail "$what: verify --json: exit $rc, corrupted_items '$n'"
	fi
fi
finish
