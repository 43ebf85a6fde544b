#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Proves the VM harness with the in-kernel dm-verity target: an ext4 image
# formatted with veritysetup on the host is mapped in the guest, compared
# with the image and mounted; every file must match its source.
# shellcheck disable=SC1091
. "$TOPDIR/tests/lib.sh"
. "$TOPDIR/tests/vm/vm-lib.sh"

why=$(vm_prereqs)
if [ -n "$why" ]; then
	fail "vm harness: $why"
	finish
fi
command -v veritysetup >/dev/null || { fail "veritysetup not installed"; finish; }

w=$WORKDIR/harness
rm -rf "$w"
mkdir -p "$w/src/d" "$w/ctl"
head -c 300000 /dev/urandom >"$w/src/a.bin"
echo hello >"$w/src/d/hello.txt"
seq 1 20000 >"$w/src/d/numbers"
mke2fs -q -t ext4 -b 4096 -d "$w/src" "$w/image" 8M >/dev/null
veritysetup format --salt=- "$w/image" "$w/hash" >"$w/format.out"
root=$(sed -n 's/^Root hash:[[:space:]]*//p' "$w/format.out")
(cd "$w/src" && find . -type f -print0 | sort -z | xargs -0 sha256sum) >"$w/ctl/src.sha256"
cp "$w/image" "$w/image.bad"
# Flip a byte inside a.bin's first block.
blk=$(debugfs -R "bmap /a.bin 0" "$w/image" 2>/dev/null)
printf '\xff' | dd of="$w/image.bad" bs=1 seek=$((blk * 4096 + 10)) conv=notrunc status=none
cat >"$w/ctl/params" <<P
ROOT=$root
DATA_BLOCKS=$(($(stat -c %s "$w/image") / 4096))
IMAGE_SHA256=$(sha256sum <"$w/image" | cut -d' ' -f1)
P
run_vm --name=harness --timeout=120 --ctl="$w/ctl" \
	"$TOPDIR/tests/vm/scenarios/verity-selftest.sh" \
	"$w/image:ro" "$w/hash:ro" "$w/image.bad:ro"
vm_report harness

# The harness must tell a panic and a restart from a clean power-off.
printf '%s\n' '. /ctl/guest-lib.sh' 'gpass before-panic' \
	'echo 1 >/proc/sys/kernel/sysrq' 'echo c >/proc/sysrq-trigger' >"$w/panic.sh"
run_vm --name=panic --expect=panic --timeout=60 "$w/panic.sh"
vm_report panic panic
printf '%s\n' '. /ctl/guest-lib.sh' 'gpass before-restart' 'reboot -f' >"$w/restart.sh"
run_vm --name=restart --expect=restart --timeout=60 "$w/restart.sh"
vm_report restart restart

# A scenario that dies after a check must fail its boot, however clean the
# power-off: a shell error ends it early, and /init's exit status says so.
printf '%s\n' '. /ctl/guest-lib.sh' 'gpass before-dying' 'no_such_command_here' \
	'exit 7' 'gpass never-reached' >"$w/dies.sh"
run_vm --name=dies --timeout=60 "$w/dies.sh"
dies_results=$WORKDIR/dies.results
(RESULTS=$dies_results; _test_name=dies; vm_report dies) >/dev/null 2>&1
if grep -q "^FAIL dies: dies/scenario did not complete: exit '7'" "$dies_results" &&
	grep -q '^PASS dies: dies/before-dying' "$dies_results" &&
	! grep -q never-reached "$dies_results"; then
	pass "dies/a scenario that exits 7 after one check fails its boot"
else
	fail "dies/the dying scenario was not failed: $(tr '\n' '|' <"$dies_results")"
fi

# The debug kernel: a KASAN report and a leak must each fail a boot.  The
# kernel's own test modules make both (kasan_test_module: out-of-bounds
# copy_to/from_user, use after free; kmemleak-test: objects it never frees).
if [ "$VM_DEBUG_KERNEL" = 1 ]; then
	mkdir -p "$w/dbg"
	for m in kasan_test_module kmemleak-test; do
		f=$(find "$VM_MODROOT/lib/modules/$KVER" -name "$m.ko" | head -n 1)
		[ -n "$f" ] && cp "$f" "$w/dbg/"
	done
	printf '%s\n' '. /ctl/guest-lib.sh' 'insmod /ctl/kasan_test_module.ko' \
		'insmod /ctl/kmemleak-test.ko' 'gpass inserted' >"$w/detect.sh"
	if run_vm --name=detect --timeout=120 --ctl="$w/dbg" "$w/detect.sh"; then
		fail "detect: a boot with KASAN reports and leaks passed"
	fi
	p=$VM_OUTDIR/boot-detect/problems
	if grep -q 'BUG: KASAN' "$p"; then pass "detect/KASAN report fails the boot"
	else fail "detect/no KASAN report in $p"; fi
	if grep -q 'kmemleak: unreferenced object' "$p"; then pass "detect/kmemleak report fails the boot"
	else fail "detect/no kmemleak report in $p"; fi
fi
finish
