# shellcheck shell=bash
# Helpers for the userspace tests: build the shared image once per script
# and compute oracle digests with the reference fsverity tool.
. "$TOPDIR/tests/lib.sh"
export LC_ALL=C

# mkimg DIR [BS]: generate the test image into DIR (see tests/lib/mkimage.sh).
mkimg() {
	"$TOPDIR/tests/lib/mkimage.sh" "$@" 2>/dev/null >/dev/null
}

# oracle SRCDIR ALG BS [SALT]: `fsverity digest` of every regular file under
# SRCDIR, printed like `extverity dump --files` (/path, sorted by path).
oracle() {
	local dir=$1 alg=$2 bs=$3 salt=${4:-}
	(cd "$dir" && find . -type f -printf '%P\0' |
		xargs -0 fsverity digest --hash-alg="$alg" --block-size="$bs" \
			${salt:+--salt=$salt}) |
		sed 's| | /|' | sort -k2
}

# root_of FORMAT_OUTPUT_FILE: the root digest from format's summary.
root_of() {
	sed -n 's/^Root digest: *\([0-9a-f]*\).*/\1/p' "$1"
}
