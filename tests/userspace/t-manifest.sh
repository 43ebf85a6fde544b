#!/usr/bin/env bash
# Hash areas that authenticate but lie, in userspace: evforge.py changes one
# thing and re-signs the sections and the superblock, so only the tool's
# validators stand between the lie and a verify that reads past what the
# manifest covers.  Each must be refused for what was changed; the three
# rewrites that keep the area valid must verify.  Then a root computed with
# the wrong algorithm.  The kernel's side: tests/vm/t-vm-hostile.sh.
. "$TOPDIR/tests/userspace/common.sh"
W=$WORKDIR
F=$TOPDIR/tests/userspace/evforge.py
MKIMAGE_NO_BIG=1 mkimg "$W/i" 4096
img=$W/i/image.ext4
"$EXTVERITY" format --salt=- "$img" "$W/h" >"$W/fmt" 2>&1 ||
	{ fail "format: $(cat "$W/fmt")"; finish; }
root=$(root_of "$W/fmt")

# forged NAME RC PATTERN CHANGE: the area with CHANGE (evforge.py) must
# verify with exit RC, its stderr matching PATTERN when RC is not 0.
forged() {
	local name=$1 rc=$2 pattern=$3 change=$4 r
	rm -f "$W/hf"
	if ! r=$(python3 "$F" "$W/h" "$W/hf" "$root" "$change" 2>"$W/forge.err"); then
		fail "$name: evforge.py $change: $(cat "$W/forge.err")"
		return
	fi
	if [ "$change" != same ] && [ "$r" = "$root" ]; then
		fail "$name: evforge.py $change left the root unchanged"
	elif [ "$rc" -eq 0 ]; then
		check_exit "$name" 0 "$EXTVERITY" verify "$img" "$W/hf" "$r"
	else
		check_err "$name" "$rc" "$pattern" "$EXTVERITY" verify "$img" "$W/hf" "$r"
	fi
}

forged "re-encoded unchanged: same root, verifies" 0 '' same
check "re-encoded area is byte-identical" cmp -s "$W/h" "$W/hf"
forged "an extent cut in two verifies" 0 '' split-extent
forged "an extent map grown by a block (all after it moved) verifies" 0 '' grow-extents
check "the grown area is one block longer" \
	test "$(stat -c %s "$W/hf")" -eq $(($(stat -c %s "$W/h") + 4096))
forged "extent map stopping short of the image refused" 2 \
	'extent map does not cover the data image' drop-last-extent
forged "gap in the extent map refused" 2 \
	'extent [0-9]+: extent map is not sorted and contiguous' drop-middle-extent
forged "extent running past its tree refused" 2 \
	'extent [0-9]+: extent runs past the end of its tree' extent-past-tree
forged "section starting past the hash area refused" 1 \
	'section lies outside the hash area' section-past-area

# The inode index (INODES, after LEVELS): moved with the sections above
# (grow-extents keeps it valid); each malformed entry refused, naming the
# entry and the fault, exit 2 as any inconsistent manifest record; a count
# the section cannot hold refused by the superblock's checks, exit 1.
forged "inode index unsorted refused" 2 \
	'inode index entry 1: inode index is not sorted, or repeats an inode' index-unsorted
forged "inode index repeating an inode refused" 2 \
	'inode index entry 1: inode index is not sorted, or repeats an inode' index-duplicate
forged "inode index with inode 0 refused" 2 \
	'inode index entry 0: inode index is not sorted, or repeats an inode' index-inode-zero
forged "inode index naming the residual tree refused" 2 \
	"inode index entry 0: inode index names a tree that is not a file's" index-tree-zero
forged "inode index naming a tree past the table refused" 2 \
	"inode index entry 0: inode index names a tree that is not a file's" index-tree-range
forged "inode index entry with reserved bits refused" 2 \
	'inode index entry 0: inode index entry has reserved bits set' index-reserved
forged "inode index counting more entries than its section holds refused" 1 \
	'section length does not match its record count' index-count
forged "inode index lacking a file of FILES refused" 2 \
	'the inode index lacks inode [0-9]+ of the FILES section' index-drop
forged "inode index giving a file another tree than FILES refused" 2 \
	'the inode index has another tree for inode [0-9]+ of the FILES section' index-other-tree
# The same refusals from dump, which loads the manifest the same way.
r=$(python3 "$F" "$W/h" "$W/hf" "$root" index-unsorted 2>/dev/null)
check_err "dump refuses an unsorted inode index" 2 \
	'inode index entry 1: inode index is not sorted' \
	"$EXTVERITY" dump --root-digest="$r" "$W/hf"
# nr_blocks of slot SLOT of area FILE.
slot_blocks() {
	python3 -c 'import struct, sys; print(struct.unpack_from("<Q", open(sys.argv[1], "rb").read(), 88 + int(sys.argv[2]) * 96 + 8)[0])' "$1" "$2"
}
# An area as the oldest extverity wrote it: no flags, no slots 5 and 7,
# no sections after LEVELS.
forged "an area without the inode index (older format) verifies" 0 '' old-format
check "the older area is its INODES and TOP_DIGESTS sections shorter" \
	test "$(stat -c %s "$W/hf")" -eq $(($(stat -c %s "$W/h") - 4096 * \
		($(slot_blocks "$W/h" 5) + $(slot_blocks "$W/h" 7))))
r=$(python3 "$F" "$W/h" "$W/hf" "$root" old-format 2>/dev/null)
if "$EXTVERITY" dump --root-digest="$r" "$W/hf" >"$W/dump" 2>&1 &&
	grep -Eq '^Inode index: +none' "$W/dump" &&
	grep -Eq '^Top digests: +none' "$W/dump"; then
	pass "dump of the older area says it has no index, no top digests"
else
	fail "dump of the older area: $(cat "$W/dump")"
fi

# The top digests (TOP_DIGESTS, the last section, a digest per TOPS
# block): an area made before them still verifies and dumps; a count other
# than the TOPS section's is refused by the superblock's checks; a digest
# that no longer matches its block (re-signed: the section authenticates)
# is reported naming the block, though every top in it matches its root.
forged "an area without top digests (older format) verifies" 0 '' no-top-digests
check "the area without top digests is its section shorter" \
	test "$(stat -c %s "$W/hf")" -eq $(($(stat -c %s "$W/h") - 4096 * \
		$(slot_blocks "$W/h" 7)))
r=$(python3 "$F" "$W/h" "$W/hf" "$root" no-top-digests 2>/dev/null)
if "$EXTVERITY" dump --root-digest="$r" "$W/hf" >"$W/dump" 2>&1 &&
	grep -Eq '^Top digests: +none' "$W/dump" &&
	"$EXTVERITY" dump --json --root-digest="$r" "$W/hf" >"$W/dump" 2>&1 &&
	grep -q '"top_digests": *null' "$W/dump"; then
	pass "dump of the area without top digests says it has none"
else
	fail "dump of the area without top digests: $(cat "$W/dump")"
fi
forged "top digests counting one more than the TOPS blocks refused" 1 \
	'top digest count does not match the TOPS section' top-digest-count
forged "a signed top digest not matching its TOPS block reported" 2 \
	'corrupted: packed top hash block [0-9]+ \(its top digest; the tops in it match their trees\)' \
	top-digest-wrong

# The root is the superblock's digest by the superblock's own algorithm:
# the same bytes hashed with the other one are no root.
"$EXTVERITY" format --hash=sha512 --salt=- "$img" "$W/h512" >/dev/null 2>&1
r=$(head -c 1024 "$W/h512" | sha256sum | cut -d' ' -f1)
check_err "sha256 of a sha512 area's superblock is no root" 1 \
	'root digest does not match' "$EXTVERITY" verify "$img" "$W/h512" "$r"
r=$(head -c 1024 "$W/h" | sha512sum | cut -d' ' -f1)
check_err "sha512 of a sha256 area's superblock is no root" 1 \
	'root digest does not match' "$EXTVERITY" verify "$img" "$W/h" "$r"
finish
