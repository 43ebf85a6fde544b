#!/usr/bin/env bash
# Bad input: clear error, the spec's exit code, no partial hash file left.
. "$TOPDIR/tests/userspace/common.sh"
W=$WORKDIR
E=$EXTVERITY
MKIMAGE_NO_BIG=1 mkimg "$W/i" 4096
img=$W/i/image.ext4
"$E" format --salt=- "$img" "$W/h" >"$W/f" 2>&1
root=$(root_of "$W/f")
msg="^(extverity: |ERROR: )"

# refuse NAME RC ARGS...: format must fail with RC and leave no $W/out.
refuse() {
	local name=$1 rc=$2
	shift 2
	local before
	rm -f "$W/out"
	# In a variable, not a file in $W: find would race with its creation.
	before=$(find "$W" -maxdepth 1 | sort)
	check_err "$name" "$rc" "$msg" "$E" format "$@"
	if [ -e "$W/out" ]; then fail "$name: left $W/out behind"; fi
	if [ "$(find "$W" -maxdepth 1 | sort)" != "$before" ]; then
		fail "$name: left a file behind"
	fi
}
refuse "missing image" 4 "$W/nope" "$W/out"
refuse "unknown algorithm" 1 --hash=md5 "$img" "$W/out"
refuse "bad salt hex" 1 --salt=xyz "$img" "$W/out"
refuse "odd-length salt" 1 --salt=abc "$img" "$W/out"
refuse "salt over 32 bytes" 1 --salt="$(printf '%066d' 0)" "$img" "$W/out"
for bs in 512 8192 3000; do
	refuse "block size $bs" 1 --data-block-size=$bs --fs=raw "$img" "$W/out"
done
head -c $((4096 * 10 + 100)) /dev/zero >"$W/odd"
refuse "image size not a block multiple" 1 --fs=raw "$W/odd" "$W/out"
refuse "hash offset not block-aligned" 1 --hash-offset=1000 "$img" "$W/out"
refuse "unknown option" 1 --frobnicate "$img" "$W/out"
refuse "missing argument" 1 "$img"
refuse "repeated option" 1 --hash=sha256 --hash=sha512 "$img" "$W/out"
refuse "bad uuid" 1 --uuid=not-a-uuid "$img" "$W/out"
check_err "hash file in a missing directory" 4 "$msg" "$E" format "$img" "$W/nodir/h"

check_err "verify: missing hash file" 4 "$msg" "$E" verify "$img" "$W/nope" "$root"
check_err "verify: missing image" 4 "$msg" "$E" verify "$W/nope" "$W/h" "$root"
head -c 3000 "$W/h" >"$W/trunc"
# The spec leaves 1 (not a hash area) or 4 (cannot read) open here.
rc=0; "$E" verify "$img" "$W/trunc" "$root" 2>"$W/err" >/dev/null || rc=$?
if { [ "$rc" -eq 1 ] || [ "$rc" -eq 4 ]; } && grep -Eq "$msg" "$W/err"; then
	pass "verify: truncated hash file (exit $rc)"
else fail "verify: truncated hash file: exit $rc $(cat "$W/err")"; fi
cp "$W/h" "$W/short"
truncate -s $(($(stat -c %s "$W/h") - 4096)) "$W/short"
rc=0; "$E" verify "$img" "$W/short" "$root" 2>"$W/err" >/dev/null || rc=$?
if [ "$rc" -ne 0 ] && grep -Eq "$msg" "$W/err"; then
	pass "verify: hash file missing its last block (exit $rc)"
else fail "verify: hash file missing its last block: exit $rc"; fi
head -c 65536 /dev/urandom >"$W/rand"
check_err "verify: random hash file" 1 "$msg" "$E" verify "$img" "$W/rand" "$root"
check_err "dump: random hash file" 1 "$msg" "$E" dump "$W/rand"
veritysetup format "$img" "$W/vh" >/dev/null 2>&1
check_err "dump: veritysetup hash file" 1 "$msg" "$E" dump "$W/vh"
check_err "verify: bad digest hex" 1 "$msg" "$E" verify "$img" "$W/h" "zz$root"
check_err "verify: short digest" 1 "$msg" "$E" verify "$img" "$W/h" "${root:0:20}"
check_err "verify: missing arguments" 1 "$msg" "$E" verify "$img" "$W/h"
check_err "table: wrong root" 1 "$msg" "$E" table "$img" "$W/h" \
	"$(printf '%s' "$root" | tr '0-9a-f' '1-9a-f0')"
check_err "table: two error modes" 1 "$msg" "$E" table --restart-on-error \
	--panic-on-error "$img" "$W/h" "$root"
# Exclusive table options, every pair in both orders: the second given is
# refused, naming both.  Options of different groups go together.
for group in "ignore-corruption restart-on-corruption panic-on-corruption" \
	"restart-on-error panic-on-error"; do
	for a in $group; do
		for b in $group; do
			[ "$a" = "$b" ] && continue
			check_err "table: --$a then --$b" 1 "${msg}--$b and --$a exclude each other" \
				"$E" table "--$a" "--$b" "$img" "$W/h" "$root"
		done
	done
done
check "table: a corruption mode with an error mode" \
	"$E" table --panic-on-corruption --restart-on-error "$img" "$W/h" "$root"
check_err "unknown command" 1 "$msg" "$E" frobnicate
# An existing hash file is only replaced on success.
cp "$W/h" "$W/keep"
"$E" format --hash=md5 "$img" "$W/keep" >/dev/null 2>&1
check "failed format keeps the old hash file" cmp -s "$W/h" "$W/keep"
# OpenSSL without sha256 (a configuration loading only its null provider):
# each command says so once and exits 1.  The library returns the error
# up to the command; it used to exit() inside a hashing thread, printing
# it once per thread and at times crashing the threads still hashing.
cat >"$W/null.cnf" <<'CNF'
openssl_conf = openssl_init
[openssl_init]
providers = provider_sect
[provider_sect]
null = null_sect
[null_sect]
activate = 1
CNF
# nossl NAME CMD...: CMD exits 1, its whole stderr the one message.
nossl() {
	local name=$1 rc=0 err
	shift
	err=$(OPENSSL_CONF=$W/null.cnf "$@" 2>&1 >/dev/null) || rc=$?
	if [ "$rc" -eq 1 ] &&
		[ "$err" = "extverity: hash algorithm sha256 is not available" ]; then
		pass "no sha256 in OpenSSL: $name"
	else
		fail "no sha256 in OpenSSL: $name (exit $rc, stderr: $err)"
	fi
}
for i in 1 2 3 4 5; do
	nossl "format --fs=raw, 8 threads ($i)" \
		"$E" format --fs=raw --threads=8 --salt=- "$img" "$W/out"
done
check "no sha256 in OpenSSL: no hash file" test ! -e "$W/out"
nossl "format" "$E" format --salt=- "$img" "$W/out"
nossl "verify" "$E" verify "$img" "$W/h" "$root"
nossl "dump" "$E" dump "$W/h"
nossl "dump --files" "$E" dump --files "$W/h"
nossl "dump --root-digest" "$E" dump --root-digest="$root" "$W/h"
finish
