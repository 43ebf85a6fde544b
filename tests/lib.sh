# shellcheck shell=bash
# Helpers shared by every test script.  Source it; each script runs under
# tests/run, which sets TOPDIR, RESULTS, EXTVERITY (the ASan/UBSan build of
# the tool), EXTVERITY_RELEASE (the optimised build), EXTVERITY_GENERATOR
# and EXTVERITY_GENERATOR_RELEASE (the systemd generator's builds), MODULE
# (the .ko, may be absent) and WORKDIR (a scratch directory of the script's
# own).
#
# A test case is recorded with pass/fail; tests/run counts the lines.  A
# script that exits non-zero without having recorded a failure counts as one
# failed case, so a crashed script can never look green.

: "${TOPDIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
: "${RESULTS:=/dev/stderr}"
: "${EXTVERITY:=$TOPDIR/build/asan/extverity}"
: "${EXTVERITY_RELEASE:=$TOPDIR/tools/extverity}"
: "${EXTVERITY_GENERATOR:=$TOPDIR/build/asan/extverity-generator}"
: "${EXTVERITY_GENERATOR_RELEASE:=$TOPDIR/tools/extverity-generator}"
: "${MODULE:=$TOPDIR/drivers/md/dm-extverity.ko}"
if [ -z "${WORKDIR:-}" ]; then
	WORKDIR=$(mktemp -d)
	trap 'rm -rf "$WORKDIR"' EXIT
fi
export TOPDIR RESULTS EXTVERITY EXTVERITY_RELEASE EXTVERITY_GENERATOR \
	EXTVERITY_GENERATOR_RELEASE MODULE WORKDIR
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# tests/run sets TEST_LABEL to the kernel series of a VM test run on one.
_test_name=${TEST_LABEL:+$TEST_LABEL/}$(basename "$0" .sh)

pass() {
	echo "PASS $_test_name: $*" >>"$RESULTS"
	echo "  ok    $*"
}

fail() {
	echo "FAIL $_test_name: $*" >>"$RESULTS"
	echo "  FAIL  $*" >&2
	_test_failed=1
}

skip() {
	echo "SKIP $_test_name: $*" >>"$RESULTS"
	echo "  skip  $*"
}

# check NAME CMD...: the case passes when CMD exits 0.
check() {
	local name=$1
	shift
	if "$@"; then pass "$name"; else fail "$name (exit $?: $*)"; fi
}

# check_exit NAME RC CMD...: the case passes when CMD exits with status RC.
check_exit() {
	local name=$1 want=$2 rc=0
	shift 2
	"$@" || rc=$?
	if [ "$rc" -eq "$want" ]; then pass "$name"; else fail "$name (exit $rc, want $want: $*)"; fi
}

# check_err NAME RC PATTERN CMD...: CMD exits with RC and its stderr
# matches the extended regex PATTERN.
check_err() {
	local name=$1 want=$2 pattern=$3 rc=0 err
	shift 3
	err=$("$@" 2>&1 >/dev/null) || rc=$?
	if [ "$rc" -ne "$want" ]; then
		fail "$name (exit $rc, want $want: $*; stderr: $err)"
	elif ! grep -Eq -- "$pattern" <<<"$err"; then
		fail "$name (stderr does not match /$pattern/: $err)"
	else
		pass "$name"
	fi
}

# flip FILE BYTE_OFFSET...: xor each byte with 0xff, so that it changes
# whatever it held (writing a fixed byte leaves it as it was, 1 time in 256
# on random data).
flip() {
	python3 - "$@" <<'PY'
import sys
with open(sys.argv[1], 'r+b') as f:
    for o in map(int, sys.argv[2:]):
        f.seek(o); b = f.read(1); f.seek(o); f.write(bytes([b[0] ^ 0xff]))
PY
}

# garble FILE BLOCK...: every byte of each 4 KiB block replaced by another
# (xor with a random byte that is never 0).  Random bytes alone leave a
# byte as it was 1 time in 256, which turns a test that puts one error
# more than FEC corrects into a given codeword into a flaky one.
garble() {
	python3 - "$@" <<'PY'
import os, sys
bs = 4096
with open(sys.argv[1], 'r+b') as f:
    for b in map(int, sys.argv[2:]):
        f.seek(b * bs)
        old = f.read(bs)
        new = bytes(o ^ (1 + r % 255) for o, r in zip(old, os.urandom(len(old))))
        f.seek(b * bs)
        f.write(new)
PY
}

# Finish a script: non-zero when any case failed.
finish() {
	exit "${_test_failed:-0}"
}
