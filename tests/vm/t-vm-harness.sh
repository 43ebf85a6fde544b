#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Proves the VM harness with the in-kernel dm-verity target: an ext4 image
# formatted with veritysetup on the host is mapped in the guest, compared
# with the image and mounted; every file must match its source.  Then the
# harness's own rules, each a boot: panic, restart, a scenario that dies,
# one that leaves without its completion marker, declarations; on the
# debug kernel, detect (a KASAN report and a leak fail a boot).
# VM_ONLY="harness panic restart dies leaves declared detect" picks boots
# (tests/vm/kernels runs the rules, which do not depend on the kernel, on
# 6.12 alone, and detect alone on the debug kernel).
# shellcheck disable=SC1091
. "$TOPDIR/tests/lib.sh"
. "$TOPDIR/tests/vm/vm-lib.sh"

why=$(vm_prereqs)
if [ -n "$why" ]; then
	fail "vm harness: $why"
	finish
fi
command -v veritysetup >/dev/null || { fail "veritysetup not installed"; finish; }

want() { [[ " ${VM_ONLY:-harness panic restart dies leaves declared detect} " == *" $1 "* ]]; }

w=$WORKDIR/harness
rm -rf "$w"
mkdir -p "$w/src/d" "$w/ctl"
if want harness; then
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
	flip "$w/image.bad" $((blk * 4096 + 10))
	cat >"$w/ctl/params" <<-P
	ROOT=$root
	DATA_BLOCKS=$(($(stat -c %s "$w/image") / 4096))
	IMAGE_SHA256=$(sha256sum <"$w/image" | cut -d' ' -f1)
	P
	run_vm --name=harness --timeout=120 --ctl="$w/ctl" \
		"$TOPDIR/tests/vm/scenarios/verity-selftest.sh" \
		"$w/image:ro" "$w/hash:ro" "$w/image.bad:ro"
	vm_report harness
fi

# The harness must tell a panic and a restart from a clean power-off.
# The sleep lets tee copy the result to the console before the guest dies.
if want panic; then
	printf '%s\n' '. /ctl/guest-lib.sh' '#@check before-panic' 'gpass before-panic' 'sleep 1' \
		'echo 1 >/proc/sys/kernel/sysrq' 'echo c >/proc/sysrq-trigger' >"$w/panic.sh"
	run_vm --name=panic --expect=panic --timeout=60 "$w/panic.sh"
	vm_report panic panic
fi
if want restart; then
	printf '%s\n' '. /ctl/guest-lib.sh' '#@check before-restart' 'gpass before-restart' \
		'sleep 1' 'reboot -f' >"$w/restart.sh"
	run_vm --name=restart --expect=restart --timeout=60 "$w/restart.sh"
	vm_report restart restart
fi

# self_report NAME [EXPECT]: vm_report NAME into $WORKDIR/NAME.results, not
# into the test's own results (these boots must fail); prints that file.
self_report() {
	local r=$WORKDIR/$1.results
	rm -f "$r"
	(RESULTS=$r; _test_name=$1; vm_report "$1" "${2:-poweroff}") >/dev/null 2>&1
	echo "$r"
}

# A scenario that dies after a check must fail its boot, however clean the
# power-off: a shell error ends it early, and /init's exit status says so;
# the checks it declared but never reached fail too.
if want dies; then
	printf '%s\n' '. /ctl/guest-lib.sh' '#@check before-dying' '#@check never-reached' \
		'gpass before-dying' 'no_such_command_here' 'exit 7' 'gpass never-reached' >"$w/dies.sh"
	run_vm --name=dies --timeout=60 "$w/dies.sh"
	r=$(self_report dies)
	if grep -q "^FAIL dies: dies/scenario did not complete: exit '7'" "$r" &&
		grep -q '^PASS dies: dies/before-dying' "$r" &&
		grep -q "^FAIL dies: dies/declared-checks: 'never-reached' was declared but has no result" "$r" &&
		! grep -q '^[A-Z]* dies: dies/never-reached' "$r"; then
		pass "dies/a scenario that exits 7 after one check fails its boot, and its unreached check"
	else
		fail "dies/the dying scenario was not failed: $(tr '\n' '|' <"$r")"
	fi
fi

# A scenario that powers off by itself, clean as it looks (EVT-POWEROFF),
# never wrote the completion marker: the boot fails.
if want leaves; then
	printf '%s\n' '. /ctl/guest-lib.sh' '#@check before-leaving' 'gpass before-leaving' \
		'sync' 'sleep 1' 'echo EVT-POWEROFF' 'sleep 1' 'poweroff -f' >"$w/leaves.sh"
	run_vm --name=leaves --timeout=60 "$w/leaves.sh"
	r=$(self_report leaves)
	if grep -q '^PASS leaves: leaves/boot (poweroff' "$r" &&
		grep -q '^FAIL leaves: leaves/scenario did not complete: no completion marker' "$r" &&
		grep -q '^PASS leaves: leaves/declared-checks' "$r"; then
		pass "leaves/a scenario that powers off without the completion marker fails its boot"
	else
		fail "leaves/the scenario without a completion marker was not failed: $(tr '\n' '|' <"$r")"
	fi
fi

# Declarations: a scenario that exits 0 but leaves out a check it declared
# (by "#@check", in the control directory's checks file, or with --checks)
# or reports one nobody declared fails its boot, one failure naming each;
# so does a malformed declaration.  The checks that were declared and
# reported pass.
if want declared; then
	mkdir -p "$w/decl-ctl"
	printf '%s\n' ctl-declared ctl-unreported >"$w/decl-ctl/checks"
	printf '%s\n' '# declared with --checks' option-declared option-unreported >"$w/decl.checks"
	printf '%s\n' '. /ctl/guest-lib.sh' '#@check declared' '#@check never-reported' \
		'#@check two words' 'gpass declared' 'gpass ctl-declared' \
		'gpass "option-declared (with a comment)"' 'gfail undeclared-result "reported, never declared"' \
		'gpass undeclared-pass' >"$w/decl.sh"
	run_vm --name=declared --timeout=60 --ctl="$w/decl-ctl" --checks="$w/decl.checks" "$w/decl.sh"
	r=$(self_report declared)
	why=
	grep -q '^PASS declared: declared/scenario-completed' "$r" || why+=" not completed?"
	for c in never-reported ctl-unreported option-unreported; do
		grep -q "^FAIL declared: declared/declared-checks: '$c' was declared but has no result" "$r" ||
			why+=" no failure for the missing $c;"
	done
	for c in undeclared-result undeclared-pass; do
		grep -q "^FAIL declared: declared/declared-checks: result '$c' was not declared" "$r" ||
			why+=" no failure for the undeclared $c;"
	done
	grep -q "^FAIL declared: declared/declared-checks: malformed declaration: .*#@check two words" "$r" ||
		why+=" no failure for the malformed declaration;"
	[ "$(grep -c '^FAIL declared: declared/declared-checks' "$r")" -eq 6 ] ||
		why+=" not exactly 6 declaration failures;"
	for c in declared ctl-declared option-declared; do
		grep -q "^PASS declared: declared/$c" "$r" || why+=" $c did not pass;"
	done
	if [ -z "$why" ]; then
		pass "declared/missing, undeclared and malformed checks each fail the boot; declared ones pass"
	else
		fail "declared/the declarations were not enforced:$why see $r"
	fi
fi

# The debug kernel: a KASAN report and a leak must each fail a boot.  The
# kernel's own test modules make both (kasan_test_module: out-of-bounds
# copy_to/from_user, use after free; kmemleak-test: objects it never frees).
if [ "$VM_DEBUG_KERNEL" = 1 ] && want detect; then
	mkdir -p "$w/dbg"
	for m in kasan_test_module kmemleak-test; do
		f=$(find "$VM_MODROOT/lib/modules/$KVER" -name "$m.ko" | head -n 1)
		[ -n "$f" ] && cp "$f" "$w/dbg/"
	done
	printf '%s\n' '. /ctl/guest-lib.sh' '#@check inserted' 'insmod /ctl/kasan_test_module.ko' \
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
