#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Signed root digests at boot (docs/boot.md "Signed root digests at
# boot"), on a kernel that trusts the test CA (tests/keys/test-ca.pem,
# built into the debug kernel): the verified root of t-vm-initramfs.sh
# (tests/vm/busybox-root.sh) booted with
#   root=/dev/mapper/vroot ro extverity.root=/dev/vda,/dev/vdb,-
# through Debian's dracut without systemd (tests/vm/debian-dracut.sh, the
# kernel's modules from its own tree: --kmoddir), the digest and its
# signature copied into the initramfs from a key directory
# (EXTVERITY_KEYDIR).  Two boots:
#
#   signed  the signature (test CA) over the root digest: the kernel
#           accepts it, init runs on vroot, whose table carries
#           root_hash_sig_key_desc, and every file reads back
#   other   a signature by the same trusted CA, over another digest: the
#           kernel refuses the table ("does not match the root digest"),
#           the initqueue job stops the boot (dracut's die; with
#           rd.shell=0 its emergency action, halt, is not in this
#           initramfs, so init exits and the kernel panics), no init runs
#
# Only the debug kernel trusts the test CA, so this test lives in
# tests/vm/debug/ (make check-debug); on Debian's kernels,
# t-vm-initramfs.sh's "sig" boot shows an untrusted signature stopping
# the boot.  Run on a kernel without the CA it fails, saying so.
# shellcheck disable=SC1091
. "$TOPDIR/tests/lib.sh"
. "$TOPDIR/tests/vm/vm-lib.sh"
. "$TOPDIR/tests/vm/debian-initramfs.sh"
. "$TOPDIR/tests/vm/debian-dracut.sh"
. "$TOPDIR/tests/vm/busybox-root.sh"

why=$(debian_dracut_why)
[ -z "$why" ] && why=$(busybox_root_why)
if [ -z "$why" ]; then
	case $(vm_kconfig SYSTEM_TRUSTED_KEYS) in
	*extverity-test-ca*) ;;
	*) why="the kernel does not trust tests/keys/test-ca.pem ($VM_KCONFIG): this test is for the debug kernel (make check-debug)" ;;
	esac
fi
if [ -n "$why" ]; then
	fail "boot-sig: $why"
	finish
fi

w=$WORKDIR/boot-sig
rm -rf "$w"
mkdir -p "$w"
die() { fail "boot-sig/setup: $*"; finish; }

busybox_root "$w" 2>"$w/root.err" || die "$(cat "$w/root.err")"
root=$(cat "$w/root-digest")
# Another digest of the same length: the last hex digit changed.
other=${root%?}$(printf '%x' $(((0x${root: -1} + 1) % 16)))

# keys DIR DIGEST_SIGNED: the root digest and a test-CA signature over
# DIGEST_SIGNED, as the dracut module takes them.
keys() {
	mkdir -p "$1"
	printf '%s\n' "$root" >"$1/vroot.roothash"
	"$EXTVERITY_RELEASE" sign --key="$TOPDIR/tests/keys/test-ca.key" \
		--cert="$TOPDIR/tests/keys/test-ca.pem" "$2" "$1/vroot.roothash.p7s" \
		>/dev/null 2>&1 || die "extverity sign"
}
keys "$w/keys-signed" "$root"
keys "$w/keys-other" "$other"

# boot NAME EXPECT MODE [CHECK...]: one boot through $w/NAME's initramfs,
# reported as boot-sig/NAME; MODE none: no init may run.
boot() {
	local name=$1 expect=$2 mode=$3 decl=()
	shift 3
	mkdir -p "$w/$name"
	EXTVERITY_KEYDIR=$w/keys-$name debian_dracut "$w/$name" "boot-sig/$name" dracut || return
	for f in etc/extverity/vroot.roothash etc/extverity/vroot.roothash.p7s; do
		want_in_dracut "$w/$name" "boot-sig/$name" dracut "$f"
	done
	if [ "$mode" != none ]; then
		printf '%s\n' "$@" >"$w/$name.checks"
		decl=(--scenario="$TOPDIR/tests/vm/initramfs-root-init.sh" --checks="$w/$name.checks")
	fi
	vm_console_boot "${decl[@]}" "$w/boot-$name" "$expect" 300 -m "${VM_MEM:-1024}" \
		-kernel "$VM_KERNEL" -initrd "$w/$name/initrd-dracut.img" \
		-append "console=ttyS0 panic=-1 rd.shell=0 root=/dev/mapper/vroot ro extverity.root=/dev/vda,/dev/vdb,- evt.mode=$mode $VM_CLOCK_ARGS $VM_APPEND" \
		-drive "file=$w/image,format=raw,if=virtio,readonly=on" \
		-drive "file=$w/hash,format=raw,if=virtio,readonly=on"
	VM_OUTDIR=$w vm_report "$name" "$expect" "boot-sig/$name"
}

boot signed poweroff good all-files-read
log=$w/boot-signed/console.log
if grep -Eq "^EVT-TABLE 0 [0-9]+ extverity 1 [0-9]+:[0-9]+ [0-9]+:[0-9]+ 0 sha256 $root 2 root_hash_sig_key_desc extverity:vroot\$" "$log"; then
	pass "boot-sig/signed/table-has-digest-and-signature-key"
else
	fail "boot-sig/signed/table-has-digest-and-signature-key: $(grep '^EVT-TABLE' "$log")"
fi
if grep -q "all-files-read ($(wc -l <"$w/expected.sha256") files)" "$log"; then
	pass "boot-sig/signed/all-files"
else
	fail "boot-sig/signed/all-files: $(grep 'all-files-read' "$log")"
fi

boot other panic none
log=$w/boot-other/console.log
if grep -Eq 'device-mapper: table: [0-9]+:[0-9]+: extverity: Root digest signature does not match the root digest' "$log"; then
	pass "boot-sig/other/kernel-refused-signature"
else
	fail "boot-sig/other/kernel-refused-signature: $(grep -i 'extverity' "$log" | head -n 4 | tr '\n' '|')"
fi
if grep -q 'dracut Warning: extverity: cannot open vroot (data /dev/vda, hash /dev/vdb)' "$log" &&
	grep -q 'dracut: FATAL: extverity: not mounting an unverified root' "$log" &&
	grep -q 'Kernel panic - not syncing: Attempted to kill init' "$log" &&
	! grep -q '^EVT-BEGIN' "$log"; then
	pass "boot-sig/other/boot-stopped-no-init"
else
	fail "boot-sig/other/boot-stopped-no-init: see $log"
fi
finish
