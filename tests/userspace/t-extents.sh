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
# Zero ranges are free, file and residual extents are in use: debugfs must
# say so of every block tested (up to 64 a range; block 0, which testb
# refuses, left out), so that no output, or an error, cannot pass.
# testb_all NAME SELECT WANT: the blocks of the extents matching the awk
# condition SELECT, each reported "Block N WANT" by debugfs testb.
testb_all() {
	awk "$2"' { for (i = 0; i < $2 && i < 64; i++) if ($1 + i > 0) print $1 + i }' \
		"$W/ext" >"$W/blocks"
	sed 's/^/testb /' "$W/blocks" >"$W/cmds"
	sed "s/.*/Block & $3/" "$W/blocks" >"$W/want"
	debugfs -f "$W/cmds" "$img" 2>&1 | grep -v '^debugfs' >"$W/got"
	if [ -s "$W/want" ] && cmp -s "$W/want" "$W/got"; then
		pass "$1 ($(wc -l <"$W/want") blocks tested)"
	else
		fail "$1: $(wc -l <"$W/want") blocks, debugfs: $(diff "$W/want" "$W/got" | head -n 4 | tr '\n' '|')"
	fi
}
testb_all "zero ranges are free blocks" '$3 == "zero"' 'not in use'
testb_all "file and residual extents are allocated blocks" '$3 != "zero" && $1 < 32768' 'marked in use'
# The fragmented files have several extents each (they exist only when
# mkimage.sh could loop-mount the image: root).
if [ -e "$W/i/src/frag/a" ]; then
	ino=$(debugfs -R "stat /frag/a" "$img" 2>/dev/null | sed -n 's/^Inode: *\([0-9]*\).*/\1/p')
	k=$(awk -v i="${ino:-none}" '$5 == i' "$W/ext" | wc -l)
	if [ "$k" -gt 1 ]; then pass "fragmented /frag/a has $k extent records"
	else fail "fragmented /frag/a (inode '${ino:-none}') has $k extent records"; fi
else
	skip "fragmented /frag/a: no /frag in the image (mkimage.sh needs root for its loop mount)"
fi
finish
