#!/usr/bin/env bash
# --root-hash-file (format writes it, verify/table/open/dump read it, as
# veritysetup's) and dump --root-digest: a listing authenticated against a
# root digest.
. "$TOPDIR/tests/userspace/common.sh"
W=$WORKDIR
E=$EXTVERITY
MKIMAGE_NO_BIG=1 mkimg "$W/i" 4096
img=$W/i/image.ext4
msg="^extverity: "

"$E" format --root-hash-file="$W/rh" "$img" "$W/h" >"$W/f" 2>&1
root=$(root_of "$W/f")
# The file holds the digest alone, as veritysetup writes it.
check "format --root-hash-file: the summary's digest, no newline" \
	bash -c "[ -n '$root' ] && [ \"\$(od -An -c '$W/rh' | tr -d ' \n')\" = '$root' ]"
check_exit "verify --root-hash-file" 0 "$E" verify --root-hash-file="$W/rh" "$img" "$W/h"
check_exit "table --root-hash-file = table ROOT_DIGEST" 0 bash -c \
	"[ \"\$('$E' table --root-hash-file='$W/rh' '$img' '$W/h')\" = \"\$('$E' table '$img' '$W/h' '$root')\" ]"
# A newline after the digest (echo, or an editor) is accepted.
echo "$root" >"$W/rh-nl"
check_exit "a newline after the digest" 0 "$E" verify --root-hash-file="$W/rh-nl" "$img" "$W/h"
# veritysetup's own root hash file, for the same hash file format family.
truncate -s 1M "$W/vd"
if veritysetup format --root-hash-file="$W/vrh" "$W/vd" "$W/vh" >/dev/null 2>&1; then
	check_err "a file of another device's digest: mismatch" 1 "${msg}root digest does not match" \
		"$E" verify --root-hash-file="$W/vrh" "$img" "$W/h"
else
	fail "veritysetup format --root-hash-file failed"
fi

# Bad files: named, with veritysetup's exit codes.
printf 'xyz' >"$W/rh-bad"
check_err "not hex" 1 "${msg}$W/rh-bad does not hold a root digest" \
	"$E" verify --root-hash-file="$W/rh-bad" "$img" "$W/h"
: >"$W/rh-empty"
check_err "empty" 1 "${msg}$W/rh-empty does not hold a root digest" \
	"$E" table --root-hash-file="$W/rh-empty" "$img" "$W/h"
printf '%s%s' "$root" "$root$root" >"$W/rh-long"
check_err "three digests long" 1 "${msg}$W/rh-long does not hold a root digest" \
	"$E" dump --root-hash-file="$W/rh-long" "$W/h"
printf '%s\nxx' "$root" >"$W/rh-more"
check_err "a second line" 1 "${msg}$W/rh-more does not hold a root digest" \
	"$E" verify --root-hash-file="$W/rh-more" "$img" "$W/h"
printf '%s' "${root:0:63}" >"$W/rh-short"
check_err "63 digits" 1 "${msg}invalid root digest" \
	"$E" verify --root-hash-file="$W/rh-short" "$img" "$W/h"
check_err "missing file" 4 "${msg}cannot open $W/nope" \
	"$E" verify --root-hash-file="$W/nope" "$img" "$W/h"
check_err "file and operand" 1 "${msg}verify: unexpected argument '$root'" \
	"$E" verify --root-hash-file="$W/rh" "$img" "$W/h" "$root"
check_err "open: file and operand" 1 "${msg}open: unexpected argument '$root'" \
	"$E" open --root-hash-file="$W/rh" "$img" ev "$W/h" "$root"
check_err "format: unwritable root hash file" 4 "${msg}cannot create a file next to $W/nodir/rh" \
	"$E" format --root-hash-file="$W/nodir/rh" "$img" "$W/h2"
# Never written into, nor removed: a device is refused.
check_err "format: root hash file a device" 4 "${msg}cannot write the root digest to /dev/full: not a regular file" \
	"$E" format --root-hash-file=/dev/full "$img" "$W/h3"
check "format: /dev/full still there" test -c /dev/full

# dump --root-digest: the listing is authenticated.  An area re-signed
# after a change (an extent split: still a valid area) dumps without a
# root digest, and is refused against the original one.
check_exit "dump --files --root-digest" 0 "$E" dump --files --root-digest="$root" "$W/h"
check_exit "dump --root-hash-file" 0 "$E" dump --root-hash-file="$W/rh" "$W/h"
python3 "$TOPDIR/tests/userspace/evforge.py" "$W/h" "$W/hf" "$root" split-extent >"$W/froot" 2>"$W/forge.err" ||
	fail "evforge: $(cat "$W/forge.err")"
check_exit "re-signed area: dump without a digest lists it" 0 "$E" dump --files "$W/hf"
check_err "re-signed area: dump --root-digest refuses it" 1 "${msg}root digest does not match" \
	"$E" dump --files --root-digest="$root" "$W/hf"
check_exit "re-signed area: its own digest" 0 "$E" dump --files --root-digest="$(cat "$W/froot")" "$W/hf"
check_err "dump: digest and file" 1 "${msg}--root-digest and --root-hash-file exclude each other" \
	"$E" dump --root-digest="$root" --root-hash-file="$W/rh" "$W/h"
finish
