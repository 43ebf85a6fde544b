#!/usr/bin/env bash
# extverity which: data blocks named from the authenticated manifest,
# against debugfs: every block of a few files (`blocks PATH`, in logical
# order: block i is at byte i * B) is that file at that offset, under the
# file's first path in path order (a hard-linked file's), a copy of another
# file under its own path (dedup shares the tree, not the blocks); the
# superblock and a directory's block are metadata; blocks debugfs finds
# free are free.  --json says the same; an appended area with
# --hash-offset; a block past the image, a bad number, a missing or wrong
# root digest are refused with the reason.
. "$TOPDIR/tests/userspace/common.sh"
W=$WORKDIR
E=$EXTVERITY
MKIMAGE_NO_BIG=1 mkimg "$W/i" 4096
img=$W/i/image.ext4
"$E" format "$img" "$W/h" >"$W/fmt" 2>&1 || { fail "format: $(cat "$W/fmt")"; finish; }
root=$(root_of "$W/fmt")
n=$(($(stat -c %s "$img") / 4096))

: >"$W/blocks"
: >"$W/want"
# expect PATH SHOWN: every block of PATH is SHOWN at its offset, from the
# extents debugfs stat lists ("(L):P", "(L-M):P-Q"); its extent tree
# blocks ("(ETBn):P") are metadata.
expect() {
	local before
	before=$(wc -l <"$W/want")
	debugfs -R "stat $1" "$img" 2>/dev/null | python3 -c '
import re, sys
shown = sys.argv[1]
for m in re.finditer(r"\((ETB)?(\d+)(?:-(\d+))?\):(\d+)(?:-(\d+))?", sys.stdin.read()):
    etb, l0, l1, p0, p1 = m.groups()
    if etb:
        print(p0, "metadata")
        continue
    for k in range(int(l1 or l0) - int(l0) + 1):
        print(int(p0) + k, shown, (int(l0) + k) * 4096)
' "$2" >>"$W/want"
	cut -d' ' -f1 "$W/want" >"$W/blocks"
	[ "$(wc -l <"$W/want")" -gt "$before" ] || fail "debugfs lists no blocks of $1"
}
expect /sizes/f4097 /sizes/f4097
expect /sizes/f65536 /sizes/f65536
expect /big/two-levels /big/two-levels
# Three hard links: the first path in path order.
expect /links/target /deep/a/b/c/hardlink2
# Identical content: own blocks, own path.
expect /dup/two/same /dup/two/same
expect /dup/one/same /dup/one/same
[ -f "$W/i/src/frag/a" ] && expect /frag/a /frag/a
echo "0 metadata" >>"$W/want"
for b in $(debugfs -R "blocks /deep/a" "$img" 2>/dev/null); do
	echo "$b metadata" >>"$W/want"
done
for b in $(debugfs -R "ffb 3 $((n / 2))" "$img" 2>/dev/null | sed -n 's/^Free blocks found: //p'); do
	echo "$b free" >>"$W/want"
done
cut -d' ' -f1 "$W/want" >"$W/blocks"
# shellcheck disable=SC2046 # one word a block
if "$E" which --root-digest="$root" "$W/h" $(cat "$W/blocks") >"$W/got" 2>"$W/err" &&
	cmp -s "$W/want" "$W/got"; then
	pass "which names $(wc -l <"$W/want") blocks as debugfs does (files, hard links, copies, metadata, free)"
else
	fail "which: $(cat "$W/err") $(diff "$W/want" "$W/got" | head -n 6 | tr '\n' '|')"
fi
grep -q ' free$' "$W/want" || fail "debugfs found no free block to ask about"

# --json: the same facts, one object a block, in argument order.
# shellcheck disable=SC2046
"$E" which --json --root-hash-file=<(echo "$root") "$W/h" $(cat "$W/blocks") >"$W/json" 2>"$W/err" ||
	fail "which --json: $(cat "$W/err")"
if python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
out = []
for o in j:
    if o["kind"] == "file":
        assert type(o["inode"]) is int and o["inode"] > 0, o
        out.append("%d %s %d" % (o["block"], o["path"], o["offset"]))
    else:
        assert set(o) == {"block", "kind"}, o
        out.append("%d %s" % (o["block"], o["kind"]))
assert out == open(sys.argv[2]).read().splitlines(), out
' "$W/json" "$W/want"; then
	pass "which --json says what the text says"
else
	fail "which --json: $(head -c 300 "$W/json")"
fi

# An area appended to the image: --hash-offset.
cp "$img" "$W/app.ext4"
off=$(stat -c %s "$img")
"$E" format --hash-offset="$off" "$W/app.ext4" "$W/app.ext4" >"$W/afmt" 2>&1
first=$(head -n 1 "$W/blocks")
check "appended area: which --hash-offset" \
	test "$("$E" which --hash-offset="$off" --root-digest="$(root_of "$W/afmt")" "$W/app.ext4" "$first" 2>&1)" = "$(head -n 1 "$W/want")"

check_err "a block past the image refused, naming it" 1 \
	"block $n is past the end of the data image \\($n blocks" \
	"$E" which --root-digest="$root" "$W/h" 0 "$n"
check_err "a block number that is not one refused" 1 \
	"invalid block number '12x'" "$E" which --root-digest="$root" "$W/h" 12x
check_err "without a root digest refused" 1 'which needs the root digest' \
	"$E" which "$W/h" 0
check_err "a wrong root digest refused" 1 'root digest does not match' \
	"$E" which --root-digest="$(printf '%064d' 0)" "$W/h" 0
check_err "no block refused" 1 'missing BLOCK' "$E" which --root-digest="$root" "$W/h"
# Nothing printed before a refusal.
check "nothing printed when a later block is refused" \
	test -z "$("$E" which --root-digest="$root" "$W/h" 0 "$n" 2>/dev/null)"
finish
