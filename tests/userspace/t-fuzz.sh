#!/usr/bin/env bash
# A short pass of every libFuzzer harness (tests/fuzz, docs/testing.md):
# each must run without a crash, leak or broken invariant and actually
# execute inputs.  `make fuzz` is the long run.  First, a canary harness
# whose invariant breaks on a two-byte input shows that a failure stops
# the run and is reported.
. "$TOPDIR/tests/userspace/common.sh"
W=$WORKDIR
cd "$TOPDIR" || exit 1
FUZZ_T_SECONDS=${FUZZ_T_SECONDS:-8}

if make -s fuzz-build >"$W/build.log" 2>&1; then
	pass "fuzz harnesses build (clang, libFuzzer, ASan, UBSan)"
else
	fail "make fuzz-build: $(tail -n 5 "$W/build.log")"
	finish
fi

mkdir -p "$W/canary"
cat >"$W/canary.c" <<'C'
#include "fuzz.h"
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	FUZZ_CHECK(n < 2 || d[0] != 'E' || d[1] != 'V', "canary");
	return 0;
}
C
if clang -fsanitize=fuzzer,address,undefined -Itests/fuzz -o "$W/canary/fuzz_canary" \
	"$W/canary.c" 2>"$W/canary.log"; then
	mkdir -p "$W/canary/seeds/fuzz_canary"
	printf 'EW' >"$W/canary/seeds/fuzz_canary/near"
	rc=0
	FUZZ_OUT=$W/canary tests/fuzz/run.sh 30 fuzz_canary >"$W/canary.out" 2>&1 || rc=$?
	if [ "$rc" -ne 0 ] && grep -q 'FAILED' "$W/canary.out" &&
		grep -q 'invariant broken.*canary' "$W/canary.out" &&
		ls "$W/canary/artifacts/fuzz_canary-crash-"* >/dev/null 2>&1; then
		pass "a broken invariant fails the run and keeps the input"
	else
		fail "canary not caught (exit $rc): $(cat "$W/canary.out")"
	fi
else
	fail "canary does not build: $(cat "$W/canary.log")"
fi

rc=0
tests/fuzz/run.sh "$FUZZ_T_SECONDS" >"$W/run.out" 2>&1 || rc=$?
cat "$W/run.out"
for t in build/fuzz/fuzz_*; do
	[ -x "$t" ] && [ -f "$t" ] || continue
	t=$(basename "$t")
	line=$(grep "^$t: " "$W/run.out")
	n=$(sed -n "s/^$t: \([0-9]*\) executions.*/\1/p" <<<"$line")
	if [ -n "$n" ] && [ "$n" -gt 0 ]; then
		pass "$t: $n executions in ${FUZZ_T_SECONDS} s, no failure"
	else
		fail "$t: ${line:-no result}"
	fi
done
[ "$rc" -eq 0 ] || fail "tests/fuzz/run.sh exited $rc"
finish
