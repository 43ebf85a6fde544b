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
check_err "open: three arguments" 1 "${msg}open: missing ROOT_DIGEST \\(expected DATA NAME HASH ROOT_DIGEST\\)$" "$E" open "$img" ev "$W/h"
check_err "open: unknown option" 1 "${msg}open: unknown option '--frob'$" "$E" open --frob "$img" ev "$W/h" "$root"
check_err "open: repeated --json" 1 "${msg}option --json given more than once" "$E" open --json --json "$img" ev "$W/h" "$root"
check_err "open: repeated table option" 1 "${msg}option --check-at-most-once given more than once" \
	"$E" open --check-at-most-once --check-at-most-once "$img" ev "$W/h" "$root"
check_err "open: two corruption modes" 1 "${msg}--panic-on-corruption and --ignore-corruption exclude each other" \
	"$E" open --ignore-corruption --panic-on-corruption "$img" ev "$W/h" "$root"
check_err "close: no name" 1 "${msg}close: missing NAME " "$E" close
check_err "close: two names" 1 "${msg}close: unexpected argument 'b' " "$E" close a b
check_err "close: an option" 1 "${msg}close: unknown option '--frob'$" "$E" close --frob a
check_err "status: unknown option" 1 "${msg}status: unknown option '--frob'$" "$E" status --frob x
# -v/--verbose and --debug, anywhere before "--", as veritysetup's.
check "-v: Command successful. last" bash -c \
	"[ \"\$('$E' -v dump '$W/h' | tail -n 1)\" = 'Command successful.' ]"
check "--verbose after the command" bash -c \
	"[ \"\$('$E' dump --verbose '$W/h' | tail -n 1)\" = 'Command successful.' ]"
check "-v with --json: JSON alone" bash -c \
	"'$E' dump -v --json '$W/h' | python3 -c 'import json,sys; json.load(sys.stdin)'"
check "-v on failure: not successful" bash -c \
	"! '$E' -v dump '$W/nope' 2>/dev/null | grep -q successful"
check "--debug: what is done, as # lines" bash -c \
	"'$E' --debug format --salt=- '$img' '$W/hd' 2>&1 >/dev/null | grep -q '^# hashing files: [0-9]* jobs on [0-9]* threads\$'"
check "no --debug: no # lines" bash -c \
	"! '$E' format --salt=- '$img' '$W/hd' 2>&1 >/dev/null | grep -q '^# '"
check_err "-v after --: an argument" 4 "${msg}cannot open -v" "$E" dump -- -v
# Usage errors name what is wrong, as veritysetup's do.
check_err "format: no operands" 1 "${msg}format: missing IMAGE HASHFILE \\(expected IMAGE HASHFILE\\)$" "$E" format
check_err "format: one operand" 1 "${msg}format: missing HASHFILE " "$E" format "$img"
check_err "verify: extra operands" 1 "${msg}verify: unexpected argument 'y' \\(expected IMAGE HASHFILE ROOT_DIGEST\\)$" \
	"$E" verify "$img" "$W/h" "$root" x y
check_err "format: option without its value" 1 "${msg}format: option --salt needs a value$" "$E" format "$img" "$W/x" --salt
check_err "format: value for a flag" 1 "${msg}format: option --json takes no value$" "$E" format --json=yes "$img" "$W/x"
check_err "dump: unknown option with a value" 1 "${msg}dump: unknown option '--frob=1'$" "$E" dump --frob=1 "$W/h"
check_err "table: table option with a value" 1 "${msg}table: option --check-at-most-once takes no value$" \
	"$E" table --check-at-most-once=1 a b "$root"
test -e "$W/x" && fail "a refused format left $W/x behind"
# Standard output that cannot be written fails the command (exit 4):
# a lost root digest or a truncated digest list must not exit 0.
# shellcheck disable=SC2317 # called through check_err
to_full() { "$@" >/dev/full; }
check_err "format > /dev/full" 4 "${msg}cannot write standard output: No space left on device" \
	to_full "$E" format "$img" "$W/full.h"
check_err "dump --files > /dev/full" 4 "${msg}cannot write standard output" to_full "$E" dump --files "$W/h"
check_err "dump --json > /dev/full" 4 "${msg}cannot write standard output" to_full "$E" dump --json "$W/h"
check_err "verify > /dev/full" 4 "${msg}cannot write standard output" to_full "$E" verify --json "$img" "$W/h" "$root"
check_err "table > /dev/full" 4 "${msg}cannot write standard output" to_full "$E" table "$img" "$W/h" "$root"
check_err "--version > /dev/full" 4 "${msg}cannot write standard output" to_full "$E" --version
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
# --use-tasklets is veritysetup's name for try_verify_in_tasklet.
line=$("$E" table --use-tasklets --check-at-most-once --ignore-corruption "$img" "$W/h" "$root")
want="0 $(($(stat -c %s "$img") / 512)) extverity 1 $img $W/h 0 sha256 $root 3 ignore_corruption check_at_most_once try_verify_in_tasklet"
if [ "$line" = "$want" ]; then pass "table line with options"
else fail "table line: '$line', want '$want'"; fi
finish
