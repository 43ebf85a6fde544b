#!/usr/bin/env bash
# tests/run itself: a TEST naming no script fails the run, so does a script
# that records no result (BOOTS naming no boot of it, a silent skip), and a
# skip is counted and shown, not hidden.
# shellcheck disable=SC1091,SC2016 # the scripts written here expand $TOPDIR
. "$TOPDIR/tests/lib.sh"
W=$WORKDIR/run
rm -rf "$W"
mkdir -p "$W"
printf '%s\n' '. "$TOPDIR/tests/lib.sh"' 'finish' >"$W/t-nothing.sh"
printf '%s\n' '. "$TOPDIR/tests/lib.sh"' 'pass one' 'skip two: not here' 'finish' >"$W/t-skips.sh"

# run NAME TEST...: tests/run in a directory of its own; its exit status,
# its results in $W/NAME/results and its output in $W/NAME.out.
run() {
	local name=$1
	shift
	TESTS_OUTDIR=$W/$name "$TOPDIR/tests/run" "$@" >"$W/$name.out" 2>&1
}

rc=0; run missing "$W/t-no-such-test.sh" || rc=$?
if [ "$rc" -ne 0 ] && grep -q "^FAIL .*t-no-such-test.sh: no such test script" "$W/missing/results"; then
	pass "a TEST naming no script fails the run"
else
	fail "a TEST naming no script: exit $rc, $(tr '\n' '|' <"$W/missing.out")"
fi
rc=0; run missing-vm "6.12:$W/t-no-such-test.sh" || rc=$?
if [ "$rc" -ne 0 ] && grep -q "^FAIL 6.12/.*t-no-such-test.sh: no such test script" "$W/missing-vm/results"; then
	pass "a SERIES:SCRIPT naming no script fails the run"
else
	fail "a SERIES:SCRIPT naming no script: exit $rc, $(tr '\n' '|' <"$W/missing-vm.out")"
fi
rc=0; run nothing "$W/t-nothing.sh" || rc=$?
if [ "$rc" -ne 0 ] && grep -q '^FAIL t-nothing: the script (exit 0) recorded no result' "$W/nothing/results"; then
	pass "a script that records no result fails the run"
else
	fail "a script that records no result: exit $rc, $(tr '\n' '|' <"$W/nothing.out")"
fi
rc=0; run skips "$W/t-skips.sh" || rc=$?
if [ "$rc" -eq 0 ] && grep -q '^SKIP t-skips: two: not here' "$W/skips/results" &&
	[ "$(tail -n 1 "$W/skips.out")" = "1 passed, 0 failed, 1 skipped" ]; then
	pass "a skip is counted and shown"
else
	fail "a skip: exit $rc, $(tr '\n' '|' <"$W/skips.out")"
fi
rc=0; TESTS_JOBS=x run badjobs "$W/t-skips.sh" || rc=$?
if [ "$rc" -eq 2 ] && grep -q 'TESTS_JOBS=x: a count, 1 or more' "$W/badjobs.out"; then
	pass "TESTS_JOBS that is no count is refused"
else
	fail "TESTS_JOBS=x: exit $rc, $(tr '\n' '|' <"$W/badjobs.out")"
fi
rc=0; TESTS_JOBS=2 run lanes "$W/t-skips.sh" "6.12:$W/t-no-such-test.sh" || rc=$?
if [ "$rc" -ne 0 ] && grep -q '^== 2 lanes, 2 items' "$W/lanes.out" &&
	grep -q '^SKIP t-skips: two: not here' "$W/lanes/results" &&
	grep -q "^FAIL 6.12/.*t-no-such-test.sh: no such test script" "$W/lanes/results" &&
	! grep -q '^PASS kernel-6.12' "$W/lanes/results" &&
	[ "$(tail -n 1 "$W/lanes.out")" = "1 passed, 1 failed, 1 skipped" ]; then
	pass "two lanes: every item's results merged, no kernel readied for a missing script"
else
	fail "two lanes: exit $rc, $(tr '\n' '|' <"$W/lanes.out")"
fi
finish
