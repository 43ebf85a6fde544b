#!/usr/bin/env bash
# Every file's digest from `extverity dump --files` must equal what the
# reference `fsverity digest` computes from the same source file.
. "$TOPDIR/tests/userspace/common.sh"
W=$WORKDIR
mkimg "$W/i4k" 4096
MKIMAGE_NO_BIG=1 mkimg "$W/i1k" 1024
salt=0123456789abcdef0011223344556677

# case NAME IMAGE SRC ALG BS SALT
digests() {
	local name=$1 img=$2 src=$3 alg=$4 bs=$5 salt=$6 sopt=--salt=-
	[ -n "$salt" ] && sopt=--salt=$salt
	if ! "$EXTVERITY" format --hash="$alg" --data-block-size="$bs" \
		"$sopt" "$img" "$W/h" >"$W/fmt.out" 2>"$W/fmt.err"; then
		fail "$name: format failed: $(cat "$W/fmt.err")"
		return
	fi
	"$EXTVERITY" dump --files "$W/h" >"$W/got" 2>"$W/dump.err" ||
		{ fail "$name: dump --files failed: $(cat "$W/dump.err")"; return; }
	oracle "$src" "$alg" "$bs" "$salt" >"$W/want"
	if [ ! -s "$W/want" ]; then
		fail "$name: oracle produced nothing"
	elif cmp -s "$W/got" "$W/want"; then
		pass "$name ($(wc -l <"$W/want") files)"
	else
		fail "$name: dump --files differs from fsverity digest:" \
			"$(diff "$W/want" "$W/got" | head -5)"
	fi
}

digests "sha256 4K unsalted" "$W/i4k/image.ext4" "$W/i4k/src" sha256 4096 ""
digests "sha256 4K salted" "$W/i4k/image.ext4" "$W/i4k/src" sha256 4096 "$salt"
digests "sha512 4K unsalted" "$W/i4k/image.ext4" "$W/i4k/src" sha512 4096 ""
digests "sha512 4K salted" "$W/i4k/image.ext4" "$W/i4k/src" sha512 4096 "$salt"
digests "sha256 1K salted" "$W/i1k/image.ext4" "$W/i1k/src" sha256 1024 "$salt"
digests "sha512 1K unsalted" "$W/i1k/image.ext4" "$W/i1k/src" sha512 1024 ""
digests "inline_data sha256" "$W/i4k/image-inline.ext4" "$W/i4k/src-inline" \
	sha256 4096 ""
digests "inline_data sha512 salted" "$W/i4k/image-inline.ext4" \
	"$W/i4k/src-inline" sha512 4096 "$salt"

# Defaults on both sides: format with no option lists what plain
# `fsverity digest` (SHA-256, 4 KiB blocks, no salt) prints, the digests a
# composefs, IMA or IPE policy names.
if "$EXTVERITY" format "$W/i4k/image.ext4" "$W/h" >/dev/null 2>"$W/fmt.err" &&
	"$EXTVERITY" dump --files "$W/h" >"$W/got" 2>"$W/dump.err"; then
	(cd "$W/i4k/src" && find . -type f -printf '%P\0' | xargs -0 fsverity digest) |
		sed 's| | /|' | sort -k2 >"$W/want"
	if [ -s "$W/want" ] && cmp -s "$W/got" "$W/want"; then
		pass "default format = plain fsverity digest ($(wc -l <"$W/want") files)"
	else
		fail "default format differs from plain fsverity digest: $(diff "$W/want" "$W/got" | head -3)"
	fi
else
	fail "default format: $(cat "$W/fmt.err" "$W/dump.err" 2>/dev/null)"
fi

# Hard links must appear under every path.
"$EXTVERITY" format --salt=- "$W/i4k/image.ext4" "$W/h" >/dev/null 2>&1
"$EXTVERITY" dump --files "$W/h" >"$W/got" 2>/dev/null
n=$(grep -cE ' /(links/target|links/hardlink|deep/a/b/c/hardlink2)$' "$W/got")
if [ "$n" -eq 3 ]; then pass "hard links listed under every path"
else fail "hard links: $n of 3 paths listed"; fi
# The multi-extent files exist and are covered.
if grep -q ' /frag/a$' "$W/got"; then pass "fragmented file listed"
else skip "no fragmented file (loop mount unavailable)"; fi

# Three-level tree (the ~65 MiB file): verify, then damage each level.
"$EXTVERITY" format --salt=- "$W/i4k/image.ext4" "$W/h" >"$W/f" 2>&1
root=$(root_of "$W/f")
check_exit "verify with the 65 MiB file" 0 "$EXTVERITY" verify \
	"$W/i4k/image.ext4" "$W/h" "$root"
python3 "$TOPDIR/tests/userspace/evread.py" "$W/h" "$root" sections >"$W/sec"
read -r _ _ size top lev < <(awk '$1 == "TREE" && $3 > 64 * 1048576' "$W/sec")
n=$(((size + 4095) / 4096)); l0=$(((n + 127) / 128)); l1=$(((l0 + 127) / 128))
flipat() {
	python3 -c 'import sys
f = open(sys.argv[1], "r+b"); o = int(sys.argv[2]); f.seek(o)
b = f.read(1)[0]; f.seek(o); f.write(bytes([b ^ 0xff]))' "$1" "$2"
}
# fs-verity order below the top: level 1 blocks, then level 0 blocks.
while read -r level blk; do
	cp "$W/h" "$W/hc"; flipat "$W/hc" $((blk * 4096 + 33))
	check_err "3-level tree: flipped level $level block names file and level" 2 \
		"corrupted: hash tree of /big/three-levels .*level $level" \
		"$EXTVERITY" verify "$W/i4k/image.ext4" "$W/hc" "$root"
done <<<"1 $lev
0 $((lev + l1 + l0 - 1))"
cp "$W/h" "$W/hc"; flipat "$W/hc" $((top + 2))
check_err "3-level tree: flipped top (level 2) names the file" 2 \
	"corrupted: packed top hash block .*/big/three-levels" \
	"$EXTVERITY" verify "$W/i4k/image.ext4" "$W/hc" "$root"
finish
