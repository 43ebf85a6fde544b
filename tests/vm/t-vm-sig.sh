#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Signed root digests in a qemu guest (docs/signing.md; one boot,
# scenarios/sig.sh): a table naming a missing key, a signature by an
# untrusted key and a malformed one are refused with their own messages,
# and with require_signatures=1 so is an unsigned table.  On a kernel that
# trusts the test CA (tests/keys/test-ca.pem, built into the debug kernel
# by scripts/debug-kernel.sh) a signed open also loads and reads back, and
# a signature of another digest is refused; on Debian's kernel, whose
# trusted keys are Debian's, those cases are skipped.
# shellcheck disable=SC1091
. "$TOPDIR/tests/lib.sh"
. "$TOPDIR/tests/vm/vm-lib.sh"

why=$(vm_prereqs)
[ -z "$why" ] && [ ! -f "$MODULE" ] && why="kernel module $MODULE not built (make module)"
[ -z "$why" ] && [ ! -x "$EXTVERITY_RELEASE" ] && why="tool $EXTVERITY_RELEASE not built (make tools)"
if [ -n "$why" ]; then
	fail "signature VM scenario: $why"
	finish
fi

EV=$EXTVERITY_RELEASE
K=$TOPDIR/tests/keys
BS=4096
w=$WORKDIR/sig
rm -rf "$w"
mkdir -p "$w/ctl"
die() { fail "setup: $*"; finish; }

MKIMAGE_NO_BIG=1 "$TOPDIR/tests/vm/fixture.sh" "$w/fx" $BS >"$w/fixture.log" 2>&1 ||
	die "fixture: $(tail -n 3 "$w/fixture.log")"
IMG=$w/fx/image.ext4
[ -f "$IMG" ] || die "no $IMG"
"$EV" format "$IMG" "$w/image.hash" >"$w/format.out" 2>&1 ||
	die "extverity format: $(cat "$w/format.out")"
ROOT=$(sed -n 's/^Root digest:[[:space:]]*//p' "$w/format.out")
OTHER=$(printf '%s' "$ROOT" | tr '0-9a-f' '1-9a-f0')

sign() {
	"$EV" sign --key="$K/$1.key" --cert="$K/$1.pem" "$2" "$w/ctl/$3" ||
		die "extverity sign $1 $3"
}
sign test-ca "$ROOT" good.p7s
sign test-ca "$OTHER" other.p7s
sign untrusted "$ROOT" untrusted.p7s
head -c 300 /dev/urandom >"$w/ctl/junk.p7s"

# The test CA is trusted when the kernel was built with it (the debug
# kernel); the guest checks that /proc/keys agrees.
TRUSTED=0
case $(vm_kconfig SYSTEM_TRUSTED_KEYS) in
*extverity-test-ca*) TRUSTED=1 ;;
esac
if [ "$(vm_kconfig SYSTEM_DATA_VERIFICATION)" != y ]; then
	skip "signatures: the kernel has no CONFIG_SYSTEM_DATA_VERIFICATION ($VM_KCONFIG)"
	finish
fi
# The signed opens run only where the CA is trusted: their checks are
# declared on the same condition (the others are sig.sh's "#@check" lines).
: >"$w/ctl/checks"
if [ "$TRUSTED" = 1 ]; then
	for s in signed signed-camo require-signed; do
		for c in open table-round-trip reads-image status status-json close no-dm; do
			echo "$s-$c"
		done
	done >"$w/ctl/checks"
	printf '%s\n' other-digest other-digest-no-dm require-other-digest \
		require-other-digest-no-dm >>"$w/ctl/checks"
else
	skip "signed opens: the kernel does not trust tests/keys/test-ca.pem (CONFIG_SYSTEM_TRUSTED_KEYS=$(vm_kconfig SYSTEM_TRUSTED_KEYS)); refusals only"
fi

cat >"$w/ctl/params" <<EOF
D_IMG=/dev/vdb
D_HASH=/dev/vdc
ROOT=$ROOT
TRUSTED=$TRUSTED
IMAGE_SHA256=$(sha256sum <"$IMG" | cut -d' ' -f1)
EOF

# dm-ima records every table that loads, with the target's IMA string.
ima=
[ "$(vm_kconfig IMA)" = y ] && ima=--append=ima_policy=critical_data
run_vm --name=sig --timeout=240 --ctl="$w/ctl" $ima \
	"$TOPDIR/tests/vm/scenarios/sig.sh" "$IMG:ro" "$w/image.hash:ro"
vm_report sig

if [ -z "$ima" ]; then
	skip "sig/ima records: the kernel has no CONFIG_IMA"
	finish
fi
awk '$5 == "dm_table_load" {print $6}' "$VM_OUTDIR/boot-sig/output" |
	python3 -c 'import sys
for h in sys.stdin.read().split():
    print(bytes.fromhex(h).decode("ascii", "replace").replace("\0", " "))' |
	grep -ao 'target_name=extverity,[^;]*;' >"$w/ima.txt" || true
tail_of() { grep -c -- "root_digest=$ROOT,.*$1\$" "$w/ima.txt"; }
n=$(tail_of 'check_at_most_once=n,try_verify_in_tasklet=n;')
if [ "$n" -ge 1 ]; then pass "sig/ima: unsigned tables recorded without a key"
else fail "sig/ima: no unsigned record in $w/ima.txt"; fi
if [ "$TRUSTED" = 1 ]; then
	for camo in n y; do
		n=$(tail_of "check_at_most_once=$camo,try_verify_in_tasklet=n,root_hash_sig_key_desc=extverity:evs;")
		if [ "$n" -ge 1 ]; then pass "sig/ima: signed table (check_at_most_once=$camo) records its key"
		else fail "sig/ima: no signed record with check_at_most_once=$camo in $w/ima.txt"; fi
	done
elif grep -q root_hash_sig_key_desc "$w/ima.txt"; then
	fail "sig/ima: a signed table loaded on a kernel without the test CA: $(cat "$w/ima.txt")"
else
	pass "sig/ima: no signed table loaded"
fi
finish
