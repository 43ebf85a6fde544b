# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC1091
# shellcheck shell=sh
#
# Guest side of t-vm-sig.sh: signed root digests (root_hash_sig_key_desc,
# require_signatures).  Refusals are checked on every kernel; a signature
# that verifies only where the kernel trusts the test CA (TRUSTED=1): the
# host declares those checks (/ctl/checks) when it sets TRUSTED=1.
#@check insmod
#@check require-default-off
#@check require-read-only
#@check test-ca-trust-as-configured
#@check unsigned-open
#@check unsigned-close
#@check missing-key
#@check missing-key-no-dm
#@check untrusted
#@check untrusted-no-dm
#@check opt-no-argument
#@check opt-bad-desc
#@check opt-twice
#@check opt-too-many
#@check opt-arg-counted
#@check opts-no-dm
#@check junk
#@check junk-no-dm
#@check rmmod
#@check insmod-require
#@check require-on
#@check require-unsigned
#@check require-unsigned-no-dm
#@check require-unsigned-dmsetup
#@check require-untrusted
#@check require-untrusted-no-dm
#@check require-missing-key
#@check rmmod-end
. /ctl/guest-lib.sh
. /ctl/params

# expect NAME RC PATTERN CMD...: CMD exits RC and its output matches the
# extended regex PATTERN.
expect() {
	_ex_n=$1 _ex_rc=$2 _ex_p=$3
	shift 3
	"$@" >/tmp/ex.out 2>&1
	_ex_r=$?
	if [ "$_ex_r" -ne "$_ex_rc" ]; then
		gfail "$_ex_n" "exit $_ex_r, want $_ex_rc: $* ($(tail -n 3 /tmp/ex.out | tr '\n' ' '))"
	elif ! grep -Eq -- "$_ex_p" /tmp/ex.out; then
		gfail "$_ex_n" "output does not match /$_ex_p/: $(tail -n 3 /tmp/ex.out | tr '\n' ' ')"
	else
		gpass "$_ex_n"
	fi
	cat /tmp/ex.out
}

# no_dm NAME: no device-mapper device is left.
no_dm() {
	if dmsetup ls 2>/dev/null | grep -vq 'No devices found'; then
		gfail "$1-no-dm" "$(dmsetup ls | tr '\n' ' ')"
	else
		gpass "$1-no-dm"
	fi
}

# refused_by_dmsetup NAME PATTERN TABLE: dmsetup cannot load TABLE and the
# kernel log gives PATTERN as the reason.
refused_by_dmsetup() {
	dmesg_mark
	if dmsetup create --noudevsync --readonly evsig --table "$3" >/tmp/dm.out 2>&1; then
		gfail "$1" "table loaded: $3"
		dmsetup remove --noudevsync evsig
		return
	fi
	if dmesg_new | grep -Eq -- "extverity: $2"; then
		gpass "$1"
	else
		gfail "$1" "no /$2/ in the kernel log: $(dmesg_new | tail -n 3 | tr '\n' ' ')"
	fi
}

# signed_open NAME SIG [OPTION]: open with SIG succeeds, the table names the
# key, the device reads back as the image, and close leaves nothing.
signed_open() {
	# shellcheck disable=SC2086 # $3: no option, or one
	expect "$1-open" 0 '"table"' extverity open --json $3 \
		--root-hash-signature="$2" "$D_IMG" evs "$D_HASH" "$ROOT"
	sed -n 's/.*"table": "\(.*\)"}$/\1/p' /tmp/ex.out >/tmp/want.table
	dmsetup table evs >/tmp/got.table 2>&1
	if grep -q " root_hash_sig_key_desc extverity:evs\$" /tmp/got.table &&
		cmp -s /tmp/want.table /tmp/got.table; then
		gpass "$1-table-round-trip"
	else
		gfail "$1-table-round-trip" "loaded '$(cat /tmp/want.table)', kernel '$(cat /tmp/got.table)'"
	fi
	_sum=$(sha256sum </dev/mapper/evs | cut -d' ' -f1)
	if [ "$_sum" = "$IMAGE_SHA256" ]; then gpass "$1-reads-image"
	else gfail "$1-reads-image" "device $_sum, image $IMAGE_SHA256"; fi
	expect "$1-status" 0 'signature: +key extverity:evs ' extverity status evs
	expect "$1-status-json" 0 '"root_hash_sig_key_desc": "extverity:evs"' \
		extverity status --json evs
	gcheck "$1-close" extverity close evs
	no_dm "$1"
}

if ext_insmod >/tmp/insmod.out 2>&1; then
	gpass insmod
else
	gfail insmod "$(cat /tmp/insmod.out)"
	exit 1
fi
P=/sys/module/dm_extverity/parameters/require_signatures
if [ "$(cat $P 2>/dev/null)" = N ]; then gpass require-default-off
else gfail require-default-off "$P: $(cat $P 2>&1)"; fi
if echo Y >$P 2>/dev/null || [ "$(cat $P)" != N ]; then
	gfail require-read-only "$P written: $(cat $P)"
else
	gpass require-read-only
fi

# The host's expectation against what the kernel loaded.
if grep -q 'extverity test CA' /proc/keys 2>/dev/null; then HAS_CA=1; else HAS_CA=0; fi
if [ "$HAS_CA" = "$TRUSTED" ]; then gpass test-ca-trust-as-configured
else gfail test-ca-trust-as-configured "test CA in /proc/keys: $HAS_CA, expected $TRUSTED"; fi

echo "== without require_signatures"
gcheck unsigned-open extverity open "$D_IMG" evu "$D_HASH" "$ROOT"
gcheck unsigned-close extverity close evu
refused_by_dmsetup missing-key 'Root digest signature key not found' \
	"$(extverity table --root-hash-signature-key=extverity:nokey "$D_IMG" "$D_HASH" "$ROOT")"
no_dm missing-key
expect untrusted 1 'kernel: .*extverity: Root digest signature is not from a trusted key' \
	extverity open --root-hash-signature=/ctl/untrusted.p7s "$D_IMG" evs "$D_HASH" "$ROOT"
no_dm untrusted
# The option's argument, in the one-pass parser.
T=$(extverity table "$D_IMG" "$D_HASH" "$ROOT")
refused_by_dmsetup opt-no-argument 'Missing option argument' "$T 1 root_hash_sig_key_desc"
refused_by_dmsetup opt-bad-desc 'Invalid signature key description' "$T 2 root_hash_sig_key_desc a,b"
refused_by_dmsetup opt-twice 'Duplicate option' \
	"$T 4 root_hash_sig_key_desc a root_hash_sig_key_desc b"
# One word more than every option once with an argument each (12 options).
refused_by_dmsetup opt-too-many 'Invalid number of options' \
	"$T 25 a b c d e f g h i j k l m n o p q r s t u v w x y"
refused_by_dmsetup opt-arg-counted 'Unexpected argument after the options' \
	"$T 2 root_hash_sig_key_desc a check_at_most_once"
no_dm opts
expect junk 1 'kernel: .*extverity: Invalid root digest signature' \
	extverity open --root-hash-signature=/ctl/junk.p7s "$D_IMG" evs "$D_HASH" "$ROOT"
no_dm junk
if [ "$TRUSTED" = 1 ]; then
	signed_open signed /ctl/good.p7s
	signed_open signed-camo /ctl/good.p7s --check-at-most-once
	expect other-digest 1 'kernel: .*extverity: Root digest signature does not match the root digest' \
		extverity open --root-hash-signature=/ctl/other.p7s "$D_IMG" evs "$D_HASH" "$ROOT"
	no_dm other-digest
else
	echo "SKIP signed opens: the kernel does not trust the test CA"
fi

echo "== require_signatures=1"
gcheck rmmod rmmod dm_extverity
gcheck insmod-require insmod /modules/dm-extverity.ko require_signatures=1
if [ "$(cat $P 2>/dev/null)" = Y ]; then gpass require-on
else gfail require-on "$P: $(cat $P 2>&1)"; fi
expect require-unsigned 1 'kernel: .*extverity: Root digest signature required \(require_signatures\) but not given' \
	extverity open "$D_IMG" evu "$D_HASH" "$ROOT"
no_dm require-unsigned
refused_by_dmsetup require-unsigned-dmsetup 'Root digest signature required' \
	"$(extverity table "$D_IMG" "$D_HASH" "$ROOT")"
expect require-untrusted 1 'kernel: .*extverity: Root digest signature is not from a trusted key' \
	extverity open --root-hash-signature=/ctl/untrusted.p7s "$D_IMG" evs "$D_HASH" "$ROOT"
no_dm require-untrusted
refused_by_dmsetup require-missing-key 'Root digest signature key not found' \
	"$(extverity table --root-hash-signature-key=extverity:nokey "$D_IMG" "$D_HASH" "$ROOT")"
if [ "$TRUSTED" = 1 ]; then
	signed_open require-signed /ctl/good.p7s
	expect require-other-digest 1 'kernel: .*Root digest signature does not match the root digest' \
		extverity open --root-hash-signature=/ctl/other.p7s "$D_IMG" evs "$D_HASH" "$ROOT"
	no_dm require-other-digest
fi
gcheck rmmod-end rmmod dm_extverity

# With ima_policy=critical_data, dm-ima logged every table that loaded: the
# host checks the records.
mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
log=/sys/kernel/security/ima/ascii_runtime_measurements
if [ -r "$log" ]; then grep ' dm_table_load ' "$log"
else echo "no IMA log"; fi
