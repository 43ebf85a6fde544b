#!/usr/bin/env bash
# run.sh SECONDS [TARGET...]: run each libFuzzer harness built in build/fuzz
# (make fuzz-build) for SECONDS, one after the other, and print its
# executions.  Exits non-zero when any harness finds a crash, a leak, a
# timeout or a broken invariant; the input that did it is kept as
# build/fuzz/artifacts/TARGET-crash-* (rerun: build/fuzz/TARGET FILE).
#
# Corpora: the committed seeds in tests/fuzz/corpus/TARGET, the manifests
# tests/fuzz/mkcorpus.sh makes in build/fuzz/seeds (once), and what the
# fuzzer adds in build/fuzz/corpus/TARGET (kept between runs).
# Environment: FUZZ_RUNS=N runs N inputs instead of SECONDS (a fixed-work
# pass); EXTVERITY is the tool mkcorpus.sh formats with; FUZZ_OUT replaces
# build/fuzz (binaries and everything written).
set -u
TOPDIR=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:?usage: run.sh SECONDS [TARGET...]}
shift
out=${FUZZ_OUT:-$TOPDIR/build/fuzz}
cd "$TOPDIR" || exit 1
if [ $# -eq 0 ]; then
	for f in "$out"/fuzz_*; do
		[ -f "$f" ] && [ -x "$f" ] && set -- "$@" "$(basename "$f")"
	done
fi
[ $# -gt 0 ] || { echo "no fuzz targets in $out (make fuzz-build)" >&2; exit 1; }

if [ ! -d "$out/seeds" ]; then
	ev=${EXTVERITY:-}
	{ [ -n "$ev" ] && [ -x "$ev" ]; } || ev=$TOPDIR/tools/extverity
	[ -x "$ev" ] || ev=$TOPDIR/build/asan/extverity
	rm -rf "$out/seeds.tmp"
	if ! "$TOPDIR/tests/fuzz/mkcorpus.sh" "$ev" "$out/seeds.tmp"; then
		echo "mkcorpus.sh failed" >&2
		exit 1
	fi
	mv "$out/seeds.tmp" "$out/seeds"
fi

mkdir -p "$out/artifacts" "$out/logs"
failed=0
total=0
for t in "$@"; do
	bin=$out/$t
	[ -x "$bin" ] || { echo "$t: not built" >&2; failed=1; continue; }
	mkdir -p "$out/corpus/$t"
	dirs=("$out/corpus/$t")
	for d in "$TOPDIR/tests/fuzz/corpus/$t" "$out/seeds/$t"; do
		[ -d "$d" ] && dirs+=("$d")
	done
	args=(-close_fd_mask=3 -print_final_stats=1 -timeout=20
	      -artifact_prefix="$out/artifacts/$t-")
	if [ -n "${FUZZ_RUNS:-}" ]; then
		args+=(-runs="$FUZZ_RUNS")
	else
		args+=(-max_total_time="$secs")
	fi
	[ -f "$TOPDIR/tests/fuzz/$t.dict" ] &&
		args+=(-dict="$TOPDIR/tests/fuzz/$t.dict")
	# A whole hash area: the seeds are 9-20 KiB.
	[ "$t" = fuzz_area ] && args+=(-max_len=32768)
	log=$out/logs/$t.log
	start=$(date +%s)
	"$bin" "${args[@]}" "${dirs[@]}" >"$log" 2>&1
	rc=$?
	took=$(($(date +%s) - start))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
	corp=$(find "$out/corpus/$t" -type f | wc -l)
	if [ "$rc" -ne 0 ] || grep -q 'invariant broken\|^==[0-9]*== *ERROR' "$log"; then
		echo "$t: FAILED (exit $rc) after ${execs:-?} executions in $took s; log $log"
		grep -m 5 'invariant broken\|ERROR:\|SUMMARY:\|Test unit written' "$log" |
			sed 's/^/    /'
		failed=1
	else
		echo "$t: ${execs:-0} executions in $took s (${rate:-0}/s), corpus $corp"
	fi
	total=$((total + ${execs:-0}))
done
echo "total: $total executions"
exit "$failed"
