#!/usr/bin/env bash
# The inode index format writes (INODES, docs/format.md), against debugfs
# and fsverity: for the shared ext4 image (4 KiB unsalted sha256, 1 KiB
# salted sha512, and its inline-data twin) the index has exactly one entry
# per regular file of the image, the inodes being those debugfs finds for
# the source's paths (`ncheck`: every name of each indexed inode, which
# together must be the source's regular files, hard links grouped as in the
# source), and each entry's tree gives the `fsverity digest` of every path
# of that inode.  evread.py reads the section and builds the fs-verity
# descriptor itself.  Hard links: one entry; identical files: an entry each,
# one tree.  A raw image: the flag and an empty index.  --fs=fiemap (root,
# loop devices) indexes the same inodes with the same digests as --fs=ext4.
. "$TOPDIR/tests/userspace/common.sh"
W=$WORKDIR
E=$EXTVERITY
R=$TOPDIR/tests/userspace/evread.py

# index NAME IMG SRC ALG BS SALT: format IMG and check its index against
# debugfs and SRC; leaves the "inode tree digest" lines in $W/NAME.idx.
index() {
	local name=$1 img=$2 src=$3 alg=$4 bs=$5 salt=$6 root
	if ! "$E" format --hash="$alg" --data-block-size="$bs" --salt="$salt" \
		"$img" "$W/$name.h" >"$W/$name.fmt" 2>&1; then
		fail "$name: format: $(cat "$W/$name.fmt")"
		return 1
	fi
	root=$(root_of "$W/$name.fmt")
	if ! python3 "$R" "$W/$name.h" "$root" inodes >"$W/$name.idx" 2>"$W/$name.err"; then
		fail "$name: evread inodes: $(cat "$W/$name.err")"
		return 1
	fi
	# Every name of every indexed inode, as debugfs sees the image.
	# shellcheck disable=SC2046 # one word an inode
	debugfs -R "ncheck -c $(cut -d' ' -f1 "$W/$name.idx" | tr '\n' ' ')" "$img" 2>/dev/null |
		sed -n 's|^\([0-9][0-9]*\)\t/*\(.*\)$|\1 /\2|p' | sort -k2 >"$W/$name.names"
	# The source's regular files, by path, with their source inode.
	(cd "$src" && find . -type f -printf '%i /%P\n') | sort -k2 >"$W/$name.src"
	if ! cmp -s <(cut -d' ' -f2- "$W/$name.names") <(cut -d' ' -f2- "$W/$name.src"); then
		fail "$name: the indexed inodes' names are not the source's regular files: $(diff <(cut -d' ' -f2- "$W/$name.names") <(cut -d' ' -f2- "$W/$name.src") | head -n 6 | tr '\n' '|')"
		return 1
	fi
	pass "$name: one entry per regular file, every file's inode indexed ($(wc -l <"$W/$name.idx") inodes, $(wc -l <"$W/$name.src") paths)"
	# Hard links grouped alike: two paths share an image inode exactly
	# when they share a source inode.
	join -1 2 -2 2 "$W/$name.names" "$W/$name.src" | awk '{print $2, $3}' |
		sort -u >"$W/$name.pairs"
	if [ -z "$(cut -d' ' -f1 "$W/$name.pairs" | sort | uniq -d)" ] &&
		[ -z "$(cut -d' ' -f2 "$W/$name.pairs" | sort | uniq -d)" ]; then
		pass "$name: paths share an indexed inode exactly when they are hard links in the source"
	else
		fail "$name: hard links differ between the source and the index"
	fi
	# The digest of each path from the index is fsverity's of the source.
	oracle "$src" "$alg" "$bs" "$([ "$salt" = - ] || echo "$salt")" >"$W/$name.want"
	join -1 1 -2 1 <(sort -k1,1 "$W/$name.names") <(sort -k1,1 "$W/$name.idx") |
		awk '{print $4, $2}' | sort -k2 >"$W/$name.got"
	if cmp -s "$W/$name.want" "$W/$name.got"; then
		pass "$name: every file's digest from the index is fsverity digest's"
	else
		fail "$name: index digests differ from fsverity digest: $(diff "$W/$name.want" "$W/$name.got" | head -n 6 | tr '\n' '|')"
	fi
	# dump counts the same entries.
	if "$E" dump --root-digest="$root" "$W/$name.h" 2>&1 |
		grep -Eq "^Inode index: +$(wc -l <"$W/$name.idx")\$"; then
		pass "$name: dump counts the index"
	else
		fail "$name: dump: $("$E" dump "$W/$name.h" 2>&1 | grep -i inode)"
	fi
}

# entries NAME PATH...: the index entries ("inode tree") of PATHs.
entries() {
	local name=$1 p
	shift
	for p in "$@"; do
		grep " $p\$" "$W/$name.names" | cut -d' ' -f1
	done | sort -u | while read -r ino; do
		grep "^$ino " "$W/$name.idx" | cut -d' ' -f1,2
	done
}

mkimg "$W/i" 4096
if index i4k "$W/i/image.ext4" "$W/i/src" sha256 4096 -; then
	n=$(entries i4k /links/target /links/hardlink /deep/a/b/c/hardlink2 | wc -l)
	if [ "$n" -eq 1 ]; then pass "three hard links: one entry"
	else fail "three hard links: $n entries: $(entries i4k /links/target /links/hardlink /deep/a/b/c/hardlink2 | tr '\n' '|')"; fi
	entries i4k /dup/one/same /dup/two/same /dup/two/other-name >"$W/dup"
	if [ "$(wc -l <"$W/dup")" -eq 3 ] && [ "$(cut -d' ' -f2 "$W/dup" | sort -u | wc -l)" -eq 1 ]; then
		pass "three identical files: three entries, one shared tree"
	else
		fail "identical files: $(tr '\n' '|' <"$W/dup")"
	fi
fi
[ -f "$W/i/image-inline.ext4" ] &&
	index inline "$W/i/image-inline.ext4" "$W/i/src-inline" sha256 4096 -
mkimg "$W/k" 1024
index k1 "$W/k/image.ext4" "$W/k/src" sha512 1024 0123456789abcdef

# A raw image: the flag, an empty section, no blocks.
"$E" format --fs=raw "$W/i/image.ext4" "$W/raw.h" >"$W/raw.fmt" 2>&1
root=$(root_of "$W/raw.fmt")
out=$(python3 "$R" "$W/raw.h" "$root" inodes 2>&1)
if [ -z "$out" ] && grep -Eq '^Inode index: +0$' "$W/raw.fmt"; then
	pass "raw image: an empty inode index"
else
	fail "raw image: index '$out', format: $(grep -i inode "$W/raw.fmt")"
fi

# --fs=fiemap reads the same files through a mount: same inodes, digests.
if "$E" format --fs=fiemap "$W/i/image.ext4" "$W/fm.h" >"$W/fm.fmt" 2>&1; then
	python3 "$R" "$W/fm.h" "$(root_of "$W/fm.fmt")" inodes | cut -d' ' -f1,3 >"$W/fm.idx"
	if cmp -s "$W/fm.idx" <(cut -d' ' -f1,3 "$W/i4k.idx"); then
		pass "--fs=fiemap indexes the inodes and digests --fs=ext4 does"
	else
		fail "--fs=fiemap index differs: $(diff "$W/fm.idx" <(cut -d' ' -f1,3 "$W/i4k.idx") | head -n 4 | tr '\n' '|')"
	fi
else
	skip "--fs=fiemap: $(tail -n 1 "$W/fm.fmt")"
fi
finish
