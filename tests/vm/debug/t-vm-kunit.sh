#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The KUnit suite of dm-extverity (drivers/md/dm-extverity-kunit.c,
# docs/testing.md "KUnit") in one qemu boot of the debug kernel
# (scenarios/kunit.sh): dm-extverity-kunit.ko is inserted, runs its suite,
# and the guest reads the KTAP report from the kernel log.  Every case the
# source declares (its KUNIT_CASE() lines, declared here as kunit-CASE
# checks) must report ok, the plan and the number of results must equal
# their number, and the suite must report ok.
#
# Only the debug kernel has KUnit (scripts/debug-kernel.config), so this
# test lives in tests/vm/debug/, which make check-debug runs and make
# check does not: tests/vm/kernels' '*' means tests/vm/t-*.sh.  Run on a
# kernel without CONFIG_KUNIT=y it fails, saying so.
# shellcheck disable=SC1091
. "$TOPDIR/tests/lib.sh"
. "$TOPDIR/tests/vm/vm-lib.sh"

SRC=$TOPDIR/drivers/md/dm-extverity-kunit.c
KO=$(dirname "$MODULE")/dm-extverity-kunit.ko
why=$(vm_prereqs)
[ -z "$why" ] && [ "$(vm_kconfig KUNIT)" != y ] &&
	why="the kernel has no CONFIG_KUNIT=y ($VM_KCONFIG): this test is for the debug kernel (make check-debug)"
[ -z "$why" ] && [ ! -f "$KO" ] &&
	why="no $KO (scripts/debug-kernel.sh module builds it for a kernel with KUnit)"
if [ -n "$why" ]; then
	fail "kunit: $why"
	finish
fi

w=$WORKDIR/kunit
rm -rf "$w"
mkdir -p "$w/ctl"
cp "$KO" "$w/ctl/"
# The cases, as the source declares them; one check each.
sed -n 's/^[[:space:]]*KUNIT_CASE(\([A-Za-z0-9_]*\)),[[:space:]]*$/\1/p' "$SRC" >"$w/cases"
n=$(grep -c . "$w/cases")
if [ "$n" -eq 0 ]; then
	fail "kunit: no KUNIT_CASE() line in $SRC"
	finish
fi
sed 's/^/kunit-/' "$w/cases" >"$w/ctl/checks"
echo "CASES=$n" >"$w/ctl/params"

run_vm --name=kunit --timeout=120 --ctl="$w/ctl" "$TOPDIR/tests/vm/scenarios/kunit.sh"
vm_report kunit
finish
