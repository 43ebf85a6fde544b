#!/usr/bin/env bash
# open / close / status on the host, where no device-mapper is needed for
# these: argument checking, the digest is checked before device-mapper is
# touched, the table line is the one `table` prints, and without
# device-mapper a clear message and exit 4.  (The devices themselves:
# tests/vm/t-vm-cli.sh.)
. "$TOPDIR/tests/userspace/common.sh"
W=$WORKDIR
E=$EXTVERITY
MKIMAGE_NO_BIG=1 mkimg "$W/i" 4096
img=$W/i/image.ext4
"$E" format --salt=- "$img" "$W/h" >"$W/f" 2>&1
root=$(root_of "$W/f")
wrong=$(printf '%s' "$root" | tr '0-9a-f' '1-9a-f0')
msg="^extverity: "

check_err "open: missing data" 4 "${msg}cannot access $W/nope" "$E" open "$W/nope" ev "$W/h" "$root"
check_err "open: missing hash" 4 "${msg}cannot access $W/nope" "$E" open "$img" ev "$W/nope" "$root"
check_err "open: wrong digest, before device-mapper" 1 "${msg}root digest does not match" \
	"$E" open "$img" ev "$W/h" "$wrong"
check_err "open: bad digest" 1 "${msg}invalid root digest" "$E" open "$img" ev "$W/h" xyz
check_err "open: not a hash area" 1 "${msg}.*not an extverity hash area" "$E" open "$img" ev "$img" "$root"
check_err "open: name with /" 1 "${msg}invalid device name" "$E" open "$img" a/b "$W/h" "$root"
check_err "open: empty name" 1 "${msg}invalid device name" "$E" open "$img" "" "$W/h" "$root"
check_err "open: name too long" 1 "${msg}invalid device name" "$E" open "$img" "$(printf '%0200d' 0)" "$W/h" "$root"
check_err "open: directory" 1 "${msg}.*neither a block device nor a regular file" "$E" open "$W" ev "$W/h" "$root"
check_err "open: three arguments" 1 "${msg}open: unknown option or wrong number" "$E" open "$img" ev "$W/h"
check_err "open: unknown option" 1 "${msg}open: unknown option" "$E" open --frob "$img" ev "$W/h" "$root"
check_err "open: repeated --json" 1 "${msg}option --json given more than once" "$E" open --json --json "$img" ev "$W/h" "$root"
check_err "open: repeated table option" 1 "${msg}option --check-at-most-once given more than once" \
	"$E" open --check-at-most-once --check-at-most-once "$img" ev "$W/h" "$root"
check_err "open: two corruption modes" 1 "${msg}--panic-on-corruption and --ignore-corruption exclude each other" \
	"$E" open --ignore-corruption --panic-on-corruption "$img" ev "$W/h" "$root"
check_err "close: no name" 1 "${msg}close: unknown option" "$E" close
check_err "close: two names" 1 "${msg}close: unknown option" "$E" close a b
check_err "status: unknown option" 1 "${msg}status: unknown option" "$E" status --frob x
check "open --help" "$E" open --help
if ! dmsetup version >/dev/null 2>&1; then
	check_err "open: no device-mapper" 4 "${msg}device-mapper is not available" \
		"$E" open "$img" ev "$W/h" "$root"
	check_err "close: no device-mapper" 4 "${msg}device-mapper is not available" "$E" close ev
	check_err "status: no device-mapper" 4 "${msg}device-mapper is not available" "$E" status ev
else
	skip "no-device-mapper cases: this host has device-mapper"
fi
# The table line open builds is the one table prints (same code).
line=$("$E" table --check-at-most-once --ignore-corruption "$img" "$W/h" "$root")
want="0 $(($(stat -c %s "$img") / 512)) extverity 1 $img $W/h 0 sha256 $root 2 ignore_corruption check_at_most_once"
if [ "$line" = "$want" ]; then pass "table line with options"
else fail "table line: '$line', want '$want'"; fi
finish
