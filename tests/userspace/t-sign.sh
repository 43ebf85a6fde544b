#!/usr/bin/env bash
# Signed root digests on the host (docs/signing.md): `extverity sign` makes
# the detached PKCS#7 signature of the lowercase hex digest, byte for byte
# what the documented openssl command makes, verifiable by openssl against
# exactly that string and no other; its argument errors; the table option
# from `table --root-hash-signature-key`; `open --root-hash-signature`'s
# checks of the file before device-mapper.  The kernel side:
# tests/vm/t-vm-sig.sh.
. "$TOPDIR/tests/userspace/common.sh"
W=$WORKDIR
E=$EXTVERITY
K=$TOPDIR/tests/keys
msg="^extverity: "
MKIMAGE_NO_BIG=1 mkimg "$W/i" 4096
img=$W/i/image.ext4
"$E" format --salt=- "$img" "$W/h" >"$W/f" 2>&1
root=$(root_of "$W/f")
[ ${#root} -eq 64 ] || { fail "setup: no root digest from format"; finish; }
upper=$(tr a-f A-F <<<"$root")
other=$(printf '%s' "$root" | tr '0-9a-f' '1-9a-f0')

# verifies SIG STRING: openssl accepts SIG as the test CA's signature of
# exactly the bytes of STRING.
verifies() {
	printf '%s' "$2" >"$W/content"
	openssl smime -verify -binary -inform der -in "$1" -content "$W/content" \
		-certfile "$K/test-ca.pem" -noverify -out /dev/null 2>/dev/null
}

check "sign" "$E" sign --key="$K/test-ca.key" --cert="$K/test-ca.pem" "$root" "$W/s.p7s"
check "sign: openssl verifies it over the hex digest" verifies "$W/s.p7s" "$root"
if verifies "$W/s.p7s" "$other"; then fail "sign: openssl verifies it over another digest"
else pass "sign: openssl rejects it over another digest"; fi
if verifies "$W/s.p7s" "$root"$'\n'; then fail "sign: verifies with a trailing newline"
else pass "sign: the newline is not signed"; fi
# The documented command (docs/signing.md) gives the same bytes: RSA PKCS#1
# v1.5 signatures are deterministic.
printf '%s' "$root" | openssl smime -sign -nocerts -noattr -binary \
	-inkey "$K/test-ca.key" -signer "$K/test-ca.pem" -outform der -out "$W/o.p7s"
check "sign: same bytes as the documented openssl command" cmp "$W/s.p7s" "$W/o.p7s"
openssl pkcs7 -inform der -in "$W/s.p7s" -print -noout >"$W/p7.txt" 2>&1
if grep -q 'type: pkcs7-signedData' "$W/p7.txt" &&
	grep -Eq '^ +d.data: <ABSENT>' "$W/p7.txt" &&
	grep -Eq '^ +cert:' -A1 "$W/p7.txt" && grep -A1 -E '^ +cert:' "$W/p7.txt" | grep -q '<ABSENT>' &&
	grep -A1 -E '^ +auth_attr:' "$W/p7.txt" | grep -q '<ABSENT>'; then
	pass "sign: detached, no certificates, no signed attributes"
else
	fail "sign: unexpected PKCS#7 structure: $(head -c 600 "$W/p7.txt")"
fi
check "sign: upper-case digest" "$E" sign --key="$K/test-ca.key" --cert="$K/test-ca.pem" "$upper" "$W/u.p7s"
check "sign: upper case signs the lower-case string" cmp "$W/s.p7s" "$W/u.p7s"
r512=$(printf '%0128d' 0 | tr 0 c)
check "sign: sha512-sized digest" "$E" sign --key="$K/test-ca.key" --cert="$K/test-ca.pem" "$r512" "$W/l.p7s"
check "sign: sha512-sized digest verifies" verifies "$W/l.p7s" "$r512"
check "sign: other key" "$E" sign --key="$K/untrusted.key" --cert="$K/untrusted.pem" "$root" "$W/x.p7s"
if cmp -s "$W/s.p7s" "$W/x.p7s"; then fail "sign: two keys give the same signature"
else pass "sign: another key, another signature"; fi

# Argument errors: exit 1 for usage and bad input, 4 for unreadable files,
# and no output file left behind.
S=(--key="$K/test-ca.key" --cert="$K/test-ca.pem")
check_err "sign: no --key" 1 "${msg}sign needs --key and --cert" "$E" sign --cert="$K/test-ca.pem" "$root" "$W/e1"
check_err "sign: no --cert" 1 "${msg}sign needs --key and --cert" "$E" sign --key="$K/test-ca.key" "$root" "$W/e1"
check_err "sign: one argument" 1 "${msg}sign: missing OUT.p7s \\(expected ROOT_DIGEST OUT.p7s\\)$" "$E" sign "${S[@]}" "$root"
check_err "sign: three arguments" 1 "${msg}sign: unexpected argument 'x' " "$E" sign "${S[@]}" "$root" "$W/e1" x
check_err "sign: unknown option" 1 "${msg}sign: unknown option '--frob'$" "$E" sign --frob "${S[@]}" "$root" "$W/e1"
check_err "sign: repeated --key" 1 "${msg}option --key given more than once" \
	"$E" sign "${S[@]}" --key="$K/test-ca.key" "$root" "$W/e1"
check_err "sign: short digest" 1 "${msg}invalid root digest" "$E" sign "${S[@]}" "${root:1}" "$W/e1"
check_err "sign: not hex" 1 "${msg}invalid root digest" "$E" sign "${S[@]}" "${root:2}zz" "$W/e1"
check_err "sign: missing key" 4 "${msg}cannot read key '$W/nokey'" \
	"$E" sign --key="$W/nokey" --cert="$K/test-ca.pem" "$root" "$W/e1"
check_err "sign: missing cert" 4 "${msg}cannot read certificate '$W/nocert'" \
	"$E" sign --key="$K/test-ca.key" --cert="$W/nocert" "$root" "$W/e1"
check_err "sign: key not PEM" 1 "${msg}'$W/f' is not a PEM private key" \
	"$E" sign --key="$W/f" --cert="$K/test-ca.pem" "$root" "$W/e1"
check_err "sign: cert not PEM" 1 "${msg}'$K/test-ca.key' is not a PEM certificate" \
	"$E" sign --key="$K/test-ca.key" --cert="$K/test-ca.key" "$root" "$W/e1"
check_err "sign: key of another certificate" 1 "${msg}key '$K/untrusted.key' does not belong to certificate" \
	"$E" sign --key="$K/untrusted.key" --cert="$K/test-ca.pem" "$root" "$W/e1"
check_err "sign: output directory missing" 4 "${msg}cannot create '$W/nodir/s'" \
	"$E" sign "${S[@]}" "$root" "$W/nodir/s"
if [ -e "$W/e1" ]; then fail "sign: a failed sign left its output"
else pass "sign: failures leave no output"; fi
check "sign --help" "$E" sign --help

# table: the option and its key description, last, counted with its word.
line=$("$E" table --root-hash-signature-key=extverity:ev "$img" "$W/h" "$root")
want="0 $(($(stat -c %s "$img") / 512)) extverity 1 $img $W/h 0 sha256 $root 2 root_hash_sig_key_desc extverity:ev"
if [ "$line" = "$want" ]; then pass "table: root_hash_sig_key_desc"
else fail "table: '$line', want '$want'"; fi
line=$("$E" table --root-hash-signature-key=k --check-at-most-once --ignore-corruption "$img" "$W/h" "$root")
if [[ "$line" == *" sha256 $root 4 ignore_corruption check_at_most_once root_hash_sig_key_desc k" ]]; then
	pass "table: root_hash_sig_key_desc after the other options"
else fail "table with options: '$line'"; fi
for bad in "" "a b" "a,b" "a;b" 'a\b' "$(printf '%0256d' 0)" $'caf\xc3\xa9'; do
	check_err "table: key description '${bad:0:12}' refused" 1 "${msg}invalid --root-hash-signature-key" \
		"$E" table --root-hash-signature-key="$bad" "$img" "$W/h" "$root"
done
check_err "table: repeated --root-hash-signature-key" 1 "${msg}option --root-hash-signature-key given more than once" \
	"$E" table --root-hash-signature-key=a --root-hash-signature-key=a "$img" "$W/h" "$root"

# open: the signature file is read before device-mapper is touched.
check_err "open: missing signature file" 4 "${msg}cannot read signature '$W/nosig'" \
	"$E" open --root-hash-signature="$W/nosig" "$img" ev "$W/h" "$root"
: >"$W/empty"
check_err "open: empty signature file" 1 "${msg}signature '$W/empty' is empty" \
	"$E" open --root-hash-signature="$W/empty" "$img" ev "$W/h" "$root"
head -c 40000 /dev/zero >"$W/big"
check_err "open: signature file too large" 1 "${msg}signature '$W/big' is too large" \
	"$E" open --root-hash-signature="$W/big" "$img" ev "$W/h" "$root"
check_err "open: repeated --root-hash-signature" 1 "${msg}option --root-hash-signature given more than once" \
	"$E" open --root-hash-signature="$W/s.p7s" --root-hash-signature="$W/s.p7s" "$img" ev "$W/h" "$root"
check_err "open: wrong digest before the signature" 1 "${msg}root digest does not match" \
	"$E" open --root-hash-signature="$W/nosig" "$img" ev "$W/h" "$other"
finish
