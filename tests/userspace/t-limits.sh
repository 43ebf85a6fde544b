#!/usr/bin/env bash
# Limits of the FILES section: a path is stored with a 16-bit length, and
# ext4 does not bound a tree's depth (PATH_MAX bounds one system call), so a
# deep tree holds paths the section cannot.  A path of 65,535 bytes must
# round-trip through format, dump and verify; one byte more must be refused
# by format, naming the inode and the length, leaving no hash file, rather
# than give an area that dump and verify call malformed (or that names a
# file by a cut path).  Then verify names a hard-linked file by its first
# path, through the indexes that replaced its linear searches.
. "$TOPDIR/tests/userspace/common.sh"
W=$WORKDIR
name=$(printf 'd%.0s' {1..255})

# deep DIR LEAF: DIR/ with 255 directories of 255-byte names, one in the
# other, and a file LEAF at the bottom: its path in the image is 255 * 256
# bytes, "/" and LEAF.  Built one level at a time, each mkdir relative to
# the last, since the whole path is longer than PATH_MAX.
deep() {
	mkdir -p "$1"
	(
		cd "$1" || exit 1
		for _ in {1..255}; do
			mkdir "$name" && cd "$name" || exit 1
		done
		echo "at the bottom" >"$2"
	)
}

# mkfs DIR IMAGE: an ext4 image of DIR's tree.
mkfs() {
	mke2fs -q -F -t ext4 -b 4096 -d "$1" "$2" 16M >/dev/null 2>&1
}

# The longest path format accepts: 255 * 256 + 1 + 254 = 65535 bytes.
leaf=$(printf 'f%.0s' {1..254})
deep "$W/ok" "$leaf"
echo top >"$W/ok/top"
want=$( (for _ in {1..255}; do printf '/%s' "$name"; done; printf '/%s\n' "$leaf"; echo /top) | sort)
if ! mkfs "$W/ok" "$W/ok.img"; then
	fail "mke2fs -d of a 65535-byte path"
elif ! "$EXTVERITY" format --salt=- "$W/ok.img" "$W/ok.hash" >"$W/fmt" 2>&1; then
	fail "a 65535-byte path is formatted: $(head -c 300 "$W/fmt")"
else
	pass "a 65535-byte path is formatted"
	got=$("$EXTVERITY" dump --files "$W/ok.hash" | cut -d' ' -f2- | sort)
	if [ "$got" = "$want" ]; then
		pass "dump --files gives the 65535-byte path back whole"
	else
		fail "dump --files: $(awk '{ print length($0) }' <<<"$got" | tr '\n' ' ')bytes, want 65535 and 4"
	fi
	check "verify accepts the area of a 65535-byte path" \
		"$EXTVERITY" verify "$W/ok.img" "$W/ok.hash" "$(root_of "$W/fmt")"
	# The reader's bound is the writer's: an authenticated entry that
	# encodes a 65538-byte path (/top made to keep all of the path before
	# it) is refused too.
	if ! r=$(python3 - "$W/ok.hash" "$W/long-entry.hash" "$(root_of "$W/fmt")" <<-'EOF'
		import hashlib, struct, sys
		buf = bytearray(open(sys.argv[1], 'rb').read())
		assert hashlib.sha256(buf[:1024]).hexdigest() == sys.argv[3]
		bs = 1 << buf[21]
		files = 88 + 2 * 96	# the FILES slot of the superblock
		start, nr = struct.unpack_from('<QQ', buf, files)
		second = start * bs + 16 + 65535	# the entry after the long path
		assert struct.unpack_from('<HH', buf, second + 12) == (1, 3)
		struct.pack_into('<H', buf, second + 12, 65535)
		body = bytes(buf[start * bs:(start + nr) * bs])
		buf[files + 32:files + 64] = hashlib.sha256(body).digest()
		open(sys.argv[2], 'wb').write(buf)
		print(hashlib.sha256(buf[:1024]).hexdigest())
		EOF
	); then
		fail "forging a 65538-byte path entry"
	else
		check_err "verify refuses an entry of a 65538-byte path" 2 \
			'FILES section is malformed' \
			"$EXTVERITY" verify "$W/ok.img" "$W/long-entry.hash" "$r"
		check_err "dump --files refuses an entry of a 65538-byte path" 2 \
			'FILES section is malformed' \
			"$EXTVERITY" dump --files "$W/long-entry.hash"
	fi
fi

# One byte more, with a short path next to it as in any real tree.
deep "$W/long" "${leaf}f"
echo top >"$W/long/top"
if ! mkfs "$W/long" "$W/long.img"; then
	fail "mke2fs -d of a 65536-byte path"
else
	rc=0
	"$EXTVERITY" format --salt=- "$W/long.img" "$W/long.hash" \
		>/dev/null 2>"$W/err" || rc=$?
	ino=$(sed -n 's/.*path of inode \([0-9]*\) is 65536 bytes long, more than the 65535 .*/\1/p' "$W/err")
	if [ "$rc" -ne 1 ] || [ -z "$ino" ]; then
		fail "a 65536-byte path is refused, naming the inode and length (exit $rc: $(head -c 300 "$W/err"))"
	elif ! debugfs -R "ncheck $ino" "$W/long.img" 2>/dev/null | tail -n 1 |
		grep -q "/${leaf}f\$"; then
		fail "the refusal names inode $ino, not the deep file's"
	else
		pass "a 65536-byte path is refused, naming the inode and length"
	fi
	if [ -e "$W/long.hash" ]; then
		fail "a refused format left $W/long.hash behind"
	else
		pass "a refused format leaves no hash file"
	fi
fi

# Hard links: verify names the damaged file by its first path in path order,
# both for a data block and for a level of its hash tree.
mkdir -p "$W/links/a" "$W/links/z"
for i in $(seq 1 40); do head -c 5000 /dev/urandom >"$W/links/a/f$i"; done
head -c 600000 /dev/urandom >"$W/links/z/two-levels"
ln "$W/links/z/two-levels" "$W/links/a/link"
ln "$W/links/z/two-levels" "$W/links/a/f20.link"
mkfs "$W/links" "$W/links.img"
"$EXTVERITY" format --salt=- "$W/links.img" "$W/links.hash" >"$W/fmt" 2>&1 ||
	{ fail "format of the hard-link image: $(cat "$W/fmt")"; finish; }
root=$(root_of "$W/fmt")
blk=$(debugfs -R "bmap /z/two-levels 3" "$W/links.img" 2>/dev/null)
cp "$W/links.img" "$W/bad.img"
printf 'X' | dd of="$W/bad.img" bs=1 seek=$((blk * 4096 + 7)) conv=notrunc status=none
check_err "a damaged data block names the first of three paths" 2 \
	"corrupted: file /a/f20.link \(inode [0-9]+\) at offset 12288 \(data block $blk\)" \
	"$EXTVERITY" verify "$W/bad.img" "$W/links.hash" "$root"
python3 "$TOPDIR/tests/userspace/evread.py" "$W/links.hash" "$root" sections >"$W/sec"
read -r _ _ _ _ lev < <(awk '$1 == "TREE" && $3 == 600000' "$W/sec")
cp "$W/links.hash" "$W/bad.hash"
printf 'X' | dd of="$W/bad.hash" bs=1 seek=$((lev * 4096 + 64)) conv=notrunc status=none
check_err "a damaged hash tree level names the first of three paths" 2 \
	"corrupted: hash tree of /a/f20.link \(inode [0-9]+\) level 0" \
	"$EXTVERITY" verify "$W/links.img" "$W/bad.hash" "$root"
finish
