#!/usr/bin/env bash
# OpenSSL failing part-way through (ssl-fail-shim.c): the library returns
# the error to the command, which says once what failed and exits 3 (out of
# memory, veritysetup's code for it) through its normal path, leaving the
# old hash file or image as it was and no temporary file.  The library used
# to exit() from inside a hashing thread: each failing thread printed the
# error, and the others, still hashing, crashed on what exit() freed.
. "$TOPDIR/tests/userspace/common.sh"
W=$WORKDIR
E=$EXTVERITY
if ! cc -shared -fPIC -O2 -o "$W/sslfail.so" \
	"$TOPDIR/tests/userspace/ssl-fail-shim.c" -ldl; then
	fail "cannot build the shim"
	finish
fi
MKIMAGE_NO_BIG=1 mkimg "$W/i" 4096
img=$W/i/image.ext4
mkdir "$W/d"
"$E" format --threads=4 "$img" "$W/d/h" >"$W/f" 2>&1
root=$(root_of "$W/f")
cp "$W/d/h" "$W/keep"

# ssl VAR=VALUE... CMD...: CMD with the shim.
ssl() {
	env LD_PRELOAD="$W/sslfail.so" \
		ASAN_OPTIONS="$ASAN_OPTIONS:verify_asan_link_order=0" "$@"
}
# Digests a format computes, for the failure points below.
calls=$(ssl SHIM_COUNT=1 "$E" format --threads=4 "$img" "$W/count" 2>&1 \
	>/dev/null | sed -n 's/^shim: \([0-9]*\) calls$/\1/p')
rm -f "$W/count"
if [ -z "$calls" ] || [ "$calls" -lt 1000 ]; then
	fail "the shim counted no digests ($calls)"
	finish
fi

# failed NAME RC OUT ERR: the command exited RC == 3 and its whole stderr
# (ERR) is one line naming the failed hashing, with nothing on stdout (OUT:
# no root digest of an area that was not written).
failed() {
	local name=$1 rc=$2 out=$3 err=$4
	if [ "$rc" -ne 3 ]; then
		fail "$name: exit $rc, want 3 (stderr: $(head -c 600 "$err"))"
	elif [ "$(wc -l <"$err")" -ne 1 ] ||
		! grep -Eq '^extverity: (.*: )?OpenSSL.* failed$' "$err"; then
		fail "$name: stderr is not the one error: $(head -c 600 "$err")"
	elif [ -s "$out" ]; then
		fail "$name: printed $(head -c 200 "$out")"
	else
		pass "$name"
	fi
}

# format_fails NAME AFTER TOGETHER: format over the existing hash file, its
# digests failing after AFTER, TOGETHER threads at once; the old file stays,
# and the directory holds nothing new.
format_fails() {
	local name=$1 after=$2 together=$3 rc=0 before
	before=$(ls -A "$W/d")
	ssl SHIM_FAIL_AFTER="$after" SHIM_TOGETHER="$together" \
		"$E" format --threads=4 \
		"$img" "$W/d/h" >"$W/out" 2>"$W/err" || rc=$?
	failed "format, $name" "$rc" "$W/out" "$W/err"
	check "format, $name: old hash file untouched" cmp -s "$W/keep" "$W/d/h"
	check "format, $name: no file left" test "$(ls -A "$W/d")" = "$before"
}
for round in 1 2 3; do
	format_fails "files' trees, 4 threads failing ($round)" 500 4
done
# The last digest: the superblock's, the root digest.
format_fails "the root digest" $((calls - 1)) 1
# The first: a hasher being made, before any thread starts.
format_fails "first digest" 0 1

# An area appended to the image, formatted again: written in place, so a
# failure before writing must leave the image and its old area as they were.
cp "$img" "$W/d/app.img"
size=$(stat -c %s "$img")
"$E" format --hash-offset="$size" "$W/d/app.img" "$W/d/app.img" >/dev/null 2>&1
cp "$W/d/app.img" "$W/app.keep"
rc=0
ssl SHIM_FAIL_AFTER=500 SHIM_TOGETHER=4 "$E" format --threads=4 \
	--hash-offset="$size" "$W/d/app.img" "$W/d/app.img" \
	>"$W/out" 2>"$W/err" || rc=$?
failed "format --hash-offset into the image" "$rc" "$W/out" "$W/err"
check "format --hash-offset into the image: image and old area untouched" \
	cmp -s "$W/app.keep" "$W/d/app.img"

# verify: a digest OpenSSL did not compute is not damage (exit 2).
rc=0
ssl SHIM_FAIL_AFTER=300 "$E" verify "$img" "$W/d/h" "$root" \
	>"$W/out" 2>"$W/err" || rc=$?
failed "verify" "$rc" "$W/out" "$W/err"
finish
