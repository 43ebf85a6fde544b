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
flip "$W/bad.img" $((blk * 4096 + 7))
check_err "a damaged data block names the first of three paths" 2 \
	"corrupted: file /a/f20.link \(inode [0-9]+\) at offset 12288 \(data block $blk\)" \
	"$EXTVERITY" verify "$W/bad.img" "$W/links.hash" "$root"
python3 "$TOPDIR/tests/userspace/evread.py" "$W/links.hash" "$root" sections >"$W/sec"
read -r _ _ _ _ lev < <(awk '$1 == "TREE" && $3 == 600000' "$W/sec")
cp "$W/links.hash" "$W/bad.hash"
flip "$W/bad.hash" $((lev * 4096 + 64))
check_err "a damaged hash tree level names the first of three paths" 2 \
	"corrupted: hash tree of /a/f20.link \(inode [0-9]+\) level 0" \
	"$EXTVERITY" verify "$W/links.img" "$W/bad.hash" "$root"
# Depth (issue 15 item 6).  The walk of a tree keeps one path and the
# entries still to be walked at each level, not a copy of the full path per
# level (which made memory grow with the square of the depth), and keeps
# its levels on the heap, not on the C stack.
#
# A chain of 1000 directories of 255-byte names, with files at a few depths
# (/f at depth 255 is a 65282-byte path; a hard link deeper down) and a
# file at the bottom, whose 256,002-byte path must be refused.  Made with
# paths relative to a directory descriptor: the whole path is far beyond
# PATH_MAX, and a shell's cd gives up there.
# deep_chain SRC BOTTOM: the tree, with the file at the bottom if BOTTOM=1.
deep_chain() {
	python3 - "$1" "$2" <<-'EOF'
		import os, sys
		name = 'd' * 255
		os.makedirs(sys.argv[1])
		fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
		top = fd
		for depth in range(1001):
		    if depth in (0, 1, 16, 100, 255) or \
		       (depth == 1000 and sys.argv[2] == '1'):
		        f = os.open('f', os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
		        os.write(f, b'depth %d\n' % depth * (depth * 10 + 1))
		        os.close(f)
		    if depth == 200:
		        os.link('f', 'link', src_dir_fd=one, dst_dir_fd=fd)
		    if depth == 1000:
		        break
		    os.mkdir(name, dir_fd=fd)
		    sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
		    if depth == 1:
		        one = fd
		    elif fd != top:
		        os.close(fd)
		    fd = sub
		EOF
}

# deep_oracle SRC: `fsverity digest` of each regular file under SRC, as
# dump --files prints it, each digested from its own directory.
deep_oracle() {
	python3 - "$1" <<-'EOF' | sort -k2
		import os, stat, subprocess, sys
		todo = [(os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY), '')]
		while todo:
		    fd, path = todo.pop()
		    for name in sorted(os.listdir(fd)):
		        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
		        if stat.S_ISDIR(st.st_mode):
		            sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY,
		                          dir_fd=fd)
		            todo.append((sub, path + '/' + name))
		        elif stat.S_ISREG(st.st_mode):
		            os.fchdir(fd)
		            out = subprocess.run(['fsverity', 'digest',
		                                  '--hash-alg=sha256',
		                                  '--block-size=4096', name],
		                                 check=True, capture_output=True,
		                                 text=True).stdout
		            print(out.split()[0], path + '/' + name)
		    os.close(fd)
		EOF
}

# The bound is functional, `ulimit -v` on the release build (ASan reserves
# terabytes of address space).  Copies of the full path of each level add
# up to 1000 * 1001 / 2 * 256 bytes, 122 MiB, for this tree: format needed
# 160 MiB of address space before the change and runs in under 16 MiB
# after it (at most one thread when the limit leaves no room for others),
# so 64 MiB sits well clear of both.
DEEP_LIMIT_KB=$((64 * 1024))
if ! deep_chain "$W/chain" 0 || ! deep_chain "$W/chain-bottom" 1; then
	fail "making the 1000-deep trees"
elif ! mke2fs -q -F -t ext4 -b 4096 -N 2048 -d "$W/chain" "$W/chain.img" \
	32M >/dev/null 2>&1 ||
	! mke2fs -q -F -t ext4 -b 4096 -N 2048 -d "$W/chain-bottom" \
		"$W/chain-bottom.img" 32M >/dev/null 2>&1; then
	fail "mke2fs -d of the 1000-deep trees"
else
	rc=0
	(ulimit -v "$DEEP_LIMIT_KB" && "$EXTVERITY_RELEASE" format --salt=- \
		"$W/chain.img" "$W/chain.hash") >/dev/null 2>"$W/err" || rc=$?
	if [ "$rc" -eq 0 ]; then
		pass "a tree 1000 directories deep is formatted in $DEEP_LIMIT_KB KiB of address space"
		"$EXTVERITY" dump --files "$W/chain.hash" 2>&1 | sort -k2 >"$W/got"
		deep_oracle "$W/chain" >"$W/want"
		if [ "$(wc -l <"$W/want")" -eq 6 ] && cmp -s "$W/got" "$W/want"; then
			pass "dump --files of the 1000-deep tree = fsverity digest (6 paths)"
		else
			fail "dump --files of the 1000-deep tree: $(cut -c 1-80 "$W/got" | tr '\n' ' '), want $(cut -c 1-80 "$W/want" | tr '\n' ' ')"
		fi
	else
		fail "a tree 1000 directories deep within $DEEP_LIMIT_KB KiB: exit $rc: $(head -c 300 "$W/err")"
	fi
	rc=0
	(ulimit -v "$DEEP_LIMIT_KB" && "$EXTVERITY_RELEASE" format --salt=- \
		"$W/chain-bottom.img" "$W/chain-bottom.hash") \
		>/dev/null 2>"$W/err" || rc=$?
	if [ "$rc" -eq 1 ] && grep -q 'path of inode [0-9]* is 256002 bytes long, more than the 65535 ' "$W/err" &&
		[ ! -e "$W/chain-bottom.hash" ]; then
		pass "a 256002-byte path is refused within $DEEP_LIMIT_KB KiB, leaving no hash file"
	else
		fail "a 256002-byte path is refused within $DEEP_LIMIT_KB KiB: exit $rc: $(head -c 300 "$W/err")"
	fi
fi

# 30,000 directories one in the other, with a file at the bottom (a 60,007-
# byte path), made with debugfs (mke2fs -d gives up at such depths); inline
# data keeps each directory in its inode.  The image is clean (e2fsck), yet
# a walk recursing on the C stack overflowed 8 MiB of it (SIGSEGV).
echo "at the bottom of 30000" >"$W/bottom"
mke2fs -q -F -t ext4 -b 4096 -O inline_data -N 30100 "$W/stack.img" 64M \
	>/dev/null 2>&1
{
	for _ in {1..30000}; do echo "mkdir d"; echo "cd d"; done
	echo "write $W/bottom bottom"
} >"$W/stack.cmds"
debugfs -w -f "$W/stack.cmds" "$W/stack.img" >/dev/null 2>&1
if ! e2fsck -fn "$W/stack.img" >/dev/null 2>&1; then
	fail "debugfs made a clean image 30000 directories deep"
elif ! (ulimit -s 8192 && "$EXTVERITY" format --salt=- "$W/stack.img" \
	"$W/stack.hash") >"$W/fmt" 2>&1; then
	fail "a tree 30000 directories deep is formatted with an 8 MiB stack: $(head -c 300 "$W/fmt")"
else
	pass "a tree 30000 directories deep is formatted with an 8 MiB stack"
	want="$(fsverity digest --hash-alg=sha256 --block-size=4096 "$W/bottom" |
		cut -d' ' -f1) $(printf '/d%.0s' {1..30000})/bottom"
	if [ "$("$EXTVERITY" dump --files "$W/stack.hash")" = "$want" ]; then
		pass "dump --files lists the file 30000 directories down, with its fsverity digest"
	else
		fail "dump --files of the 30000-deep tree: $("$EXTVERITY" dump --files "$W/stack.hash" 2>&1 | cut -c 1-200)"
	fi
fi

# A directory loop in a damaged image (an entry naming an ancestor, which
# e2fsck would remove) ends the walk: each directory is walked once.
cp "$W/links.img" "$W/loop.img"
debugfs -w -R "link /a /z/up" "$W/loop.img" >/dev/null 2>&1
if ! debugfs -R "ls /z/up" "$W/loop.img" 2>/dev/null | grep -qw f1; then
	fail "debugfs made a directory loop"
elif ! timeout 60 "$EXTVERITY" format --salt=- "$W/loop.img" \
	"$W/loop.hash" >"$W/fmt" 2>&1; then
	fail "format of an image with a directory loop: $(head -c 300 "$W/fmt")"
else
	check "a directory loop is walked once" \
		test "$("$EXTVERITY" dump --files "$W/loop.hash" | wc -l)" -eq 43
fi
finish
