#!/usr/bin/env bash
# The extent map, read by an independent parser (evread.py), is
# authenticated by the root digest, partitions [0, N), and agrees with
# debugfs: file extents point at the files' real blocks, zero ranges are
# free in the block bitmap.
. "$TOPDIR/tests/userspace/common.sh"
W=$WORKDIR
R=$TOPDIR/tests/userspace/evread.py
MKIMAGE_NO_BIG=1 mkimg "$W/i" 4096
img=$W/i/image.ext4
for alg in sha256 sha512; do
	"$EXTVERITY" format --hash=$alg --salt=abcd "$img" "$W/h" >"$W/f" 2>&1
	root=$(root_of "$W/f")
	if python3 "$R" "$W/h" "$root" >"$W/ext" 2>"$W/err"; then
		pass "$alg: superblock, section digests, extents partition [0,N)"
	else
		fail "$alg: $(cat "$W/err")"
	fi
done
json_root=$("$EXTVERITY" dump --json "$W/h" |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["root_digest"])')
check "dump --json root_digest equals format's" test "$json_root" = "$root"
n=$("$EXTVERITY" dump --json "$W/h" |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["extents"])')
check "dump --json extents equals the records read ($n)" \
	test "$n" -eq "$(wc -l <"$W/ext")"

# Every block of every file extent: bmap <inode> leaf == physical block.
awk '$3 != "zero" && $3 != 0 { for (i = 0; i < $2 && i < 64; i++)
	printf "bmap <%d> %d\n", $5, $4 + i }' "$W/ext" >"$W/cmds"
awk '$3 != "zero" && $3 != 0 { for (i = 0; i < $2 && i < 64; i++)
	print $1 + i }' "$W/ext" >"$W/want"
debugfs -f "$W/cmds" "$img" 2>/dev/null | grep -v '^debugfs' |
	tr -d ' ' >"$W/got"
if [ -s "$W/want" ] && cmp -s "$W/want" "$W/got"; then
	pass "file extents map to the files' blocks ($(wc -l <"$W/want") checked)"
else
	fail "file extents disagree with debugfs bmap: $(diff "$W/want" "$W/got" | head -4)"
fi
# Zero ranges are free, file and residual extents are in use.
awk '$3 == "zero" { printf "testb %d %d\n", $1, $2 }' "$W/ext" >"$W/cmds"
if debugfs -f "$W/cmds" "$img" 2>/dev/null | grep -q 'marked in use'; then
	fail "a zero range covers an allocated block"
else pass "zero ranges are free blocks"; fi
awk '$3 != "zero" && $1 < 32768 { printf "testb %d %d\n", $1, $2 }' "$W/ext" >"$W/cmds"
if debugfs -f "$W/cmds" "$img" 2>/dev/null | grep -q 'not in use'; then
	fail "a file or residual extent covers a free block"
else pass "file and residual extents are allocated blocks"; fi
# The fragmented files have several extents each.
ino=$(debugfs -R "stat /frag/a" "$img" 2>/dev/null | sed -n 's/^Inode: *\([0-9]*\).*/\1/p')
if [ -n "$ino" ]; then
	k=$(awk -v i="$ino" '$5 == i' "$W/ext" | wc -l)
	if [ "$k" -gt 1 ]; then pass "fragmented /frag/a has $k extent records"
	else fail "fragmented /frag/a has $k extent records"; fi
fi
finish
