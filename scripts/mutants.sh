#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-mutants: show that the tests can fail.  Each
# tests/mutants/NN-name.patch is one deliberate, plausible bug; its header
# names the tests that must catch it ("Tests:", tests/run syntax) and says
# what the bug is ("Why:").  For each mutant, in a fresh copy of the tree:
# apply the patch, build, run its tests one after another, stop at the
# first that reports a failure.  Verdicts:
#   KILLED    a test reported a failure
#   SURVIVED  every test passed: the suite has a gap
#   ERROR     the patch does not apply, the tool or the module does not
#             build (or the module builds with a warning), or a test did
#             not run (no closing "N passed, N failed", nothing passed)
# Prints a table and a total; exits 0 only when every mutant is killed.
#
# Usage: scripts/mutants.sh [NN|NAME...]      (default: every mutant)
#   MUTANTS           the same selection as the arguments ("03 12 ...")
#   KVER              kernel series the VM tests run on (default 6.12):
#                     it replaces the series of each SERIES:SCRIPT entry
#   MUTANTS_OUTDIR    logs, results and the summary (default build/mutants;
#                     emptied first)
#   MUTANTS_BASELINE  0: skip the baseline (the union of the selected
#                     mutants' tests, once, on an unmutated copy: a test
#                     that fails there would "kill" every mutant for
#                     nothing, so the run stops)
#   MUTANTS_KEEP      1: keep the copies (under MUTANTS_OUTDIR/work)
#
# A copy is the tracked files (git ls-files, as they are in the working
# tree), plus the tool's objects (build/release, build/asan and
# tools/extverity, mtimes kept, so that make rebuilds only what the patch
# touched) and, for 7.3, the record of the prepared kernel (its env and
# stamp point at the unpacked kernel under this tree's build/, which is
# only read).  Nothing else: the module and the VM initramfs are built per
# copy, as they differ per mutant.
set -u
TOPDIR=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOPDIR" || exit 1
# Not exported as KVER: tests/run and the Makefile give KVER other meanings.
SERIES=${KVER:-6.12}
unset KVER
OUT=${MUTANTS_OUTDIR:-$TOPDIR/build/mutants}
MDIR=$TOPDIR/tests/mutants

die() { echo "mutants: $*" >&2; exit 2; }

case $SERIES in 6.1 | 6.12 | 7.3) ;; *) die "KVER=$SERIES: one of 6.1, 6.12, 7.3" ;; esac
command -v patch >/dev/null || die "patch(1) is needed (apt-get install patch)"

# select_mutants WORD...: the patch files named (by number or name), in
# order; all of them without a word.  An unknown word is fatal.
select_mutants() {
	local w f found
	if [ $# -eq 0 ]; then
		ls "$MDIR"/[0-9]*.patch
		return
	fi
	for w in "$@"; do
		found=
		for f in "$MDIR"/[0-9]*.patch; do
			case $(basename "$f" .patch) in
			"$w" | "$w"-*) echo "$f"; found=1 ;;
			esac
		done
		[ -n "$found" ] || die "no mutant '$w' in tests/mutants"
	done
}

# header FILE KEY: the value of "KEY: ..." lines before the diff, joined.
header() {
	sed -n '/^--- /q; s/^'"$2"': *//p' "$1" | tr '\n' ' ' | sed 's/ *$//'
}

# tests_of FILE: the mutant's tests, one a line, VM tests on $SERIES.  A
# tests/vm script given without a series gets one: without it tests/run
# would boot the copy's unbuilt in-place module.
tests_of() {
	local t
	for t in $(header "$1" Tests); do
		case $t in
		*:tests/*) echo "$SERIES:${t#*:}" ;;
		tests/vm/*) echo "$SERIES:$t" ;;
		*) echo "$t" ;;
		esac
	done
}

# make_copy DIR: the tracked tree and the build products worth reusing
# (see the top).  Tracked files deleted in the working tree are skipped.
make_copy() {
	local dir=$1
	rm -rf "$dir"
	mkdir -p "$dir"
	git ls-files -z | while IFS= read -r -d '' f; do
		[ -e "$f" ] && printf '%s\0' "$f"
	done | xargs -0 -r cp -p --parents -t "$dir" || return 1
	[ -d build/release ] && cp -pr --parents build/release "$dir/"
	[ -d build/asan ] && cp -pr --parents build/asan "$dir/"
	[ -f tools/extverity ] && cp -p tools/extverity "$dir/tools/"
	[ -f tools/extverity-generator ] && cp -p tools/extverity-generator "$dir/tools/"
	if [ "$SERIES" = 7.3 ] && [ -f build/kernels/7.3/stamp ]; then
		mkdir -p "$dir/build/kernels/7.3"
		cp -p build/kernels/7.3/env build/kernels/7.3/stamp "$dir/build/kernels/7.3/"
	fi
	return 0
}

# build DIR LOG NEED_MODULE: the tool (release and ASan, -Werror) and, when
# asked, the module for $SERIES, which must build without a warning
# (modpost's included).
build() {
	local dir=$1 log=$2
	(cd "$dir" && make -s tools build/asan/extverity build/asan/extverity-generator) >"$log" 2>&1 ||
		{ echo "tool build failed"; return 1; }
	[ "$3" = yes ] || return 0
	(cd "$dir" && scripts/kernels.sh prepare "$SERIES" &&
		scripts/kernels.sh module "$SERIES") >>"$log" 2>&1 ||
		{ echo "module build failed"; return 1; }
	# Not ours: 7.3's headers were made with a newer pahole (scripts/lint.sh).
	if grep -iE 'warning:|error:' "$log" | grep -v 'pahole version differs' | grep -q .; then
		echo "module build warns"
		return 1
	fi
}

# script_of TEST: the script of a tests/run entry (SERIES:SCRIPT[:...]).
script_of() {
	case $1 in
	*:*) cut -d: -f2 <<<"$1" ;;
	*) echo "$1" ;;
	esac
}

# run_tests DIR LOGDIR TEST...: each test in turn, its own TESTS_OUTDIR;
# prints "KILLED test", "SURVIVED" or "ERROR why" for the first that
# decides.  The first failed case of a kill goes to LOGDIR/killed-by.
run_tests() {
	local dir=$1 logdir=$2 t k=0 log sum passed failed res
	shift 2
	for t in "$@"; do
		k=$((k + 1))
		log=$logdir/test-$k.log
		echo "   -- $t" >&2
		if [ ! -f "$dir/$(script_of "$t")" ]; then
			echo "ERROR no test script $t"
			return
		fi
		(cd "$dir" && TESTS_OUTDIR=$dir/build/tests-$k tests/run "$t") >"$log" 2>&1
		res=$dir/build/tests-$k/results
		[ -f "$res" ] && cp "$res" "$logdir/results-$k"
		sum=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
		if [ -z "$sum" ]; then
			echo "ERROR $t: tests/run did not finish"
			return
		fi
		passed=${sum%% passed*}
		failed=${sum#*passed, }
		failed=${failed%% failed*}
		if [ "$failed" -gt 0 ]; then
			# A kernel that could not be made ready is no kill.
			if [ -f "$res" ] && ! grep '^FAIL' "$res" | grep -qv '^FAIL kernel-'; then
				echo "ERROR $t: its kernel could not be made ready"
			else
				grep -m 1 '^FAIL' "$res" >"$logdir/killed-by" 2>/dev/null
				# The copy goes: keep the consoles of the boots
				# (a baseline that fails must be explainable).
				(cd "$dir/build/tests-$k" 2>/dev/null &&
					find . -name console.log -print0 |
					xargs -0 -r tar -czf "$logdir/consoles-$k.tar.gz")
				echo "KILLED $t"
			fi
			return
		fi
		if [ "$passed" -eq 0 ]; then
			echo "ERROR $t: no case passed"
			return
		fi
	done
	echo SURVIVED
}

# kill_tree PID: end PID's descendants, deepest first, so that a stopped
# run leaves no tests/run or qemu behind writing into a removed copy.
kill_tree() {
	local c
	for c in $(pgrep -P "$1"); do
		kill_tree "$c"
		kill "$c" 2>/dev/null
	done
}

# release DIR: unmount what a stopped test left mounted under DIR (mkimage.sh
# loop-mounts its image) and detach the loop devices of its files.
release() {
	local m l
	for m in $(findmnt -rn -o TARGET | grep "^$1/" | sort -r); do
		umount -l "$m" 2>/dev/null
	done
	for l in $(losetup -l -n -O NAME,BACK-FILE 2>/dev/null | awk -v d="$1/" 'index($2, d) == 1 {print $1}'); do
		losetup -d "$l" 2>/dev/null
	done
}

# Copies live under $OUT/work, one at a time; whatever is left there goes
# on the way out, unless kept.
cleanup() {
	[ -d "$OUT/work" ] && release "$OUT/work"
	[ "${MUTANTS_KEEP:-0}" = 1 ] || rm -rf "$OUT/work"
}
trap cleanup EXIT
trap 'echo "mutants: stopped" >&2; kill_tree $$; exit 130' INT TERM

# drop_copy DIR: remove a copy once done with it, unless kept.
drop_copy() {
	[ "${MUTANTS_KEEP:-0}" = 1 ] || rm -rf "$1"
}

# run_one NAME PATCH|- TEST...: copy, patch (- for none), build, test;
# prints the verdict line "VERDICT DETAIL".
run_one() {
	local name=$1 patch=$2 logdir=$OUT/$1 work=$OUT/work/$1 why module=no
	shift 2
	mkdir -p "$logdir"
	if ! make_copy "$work"; then
		echo "ERROR cannot copy the tree"
		drop_copy "$work"
		return
	fi
	# -f: never ask (a patch that looks reversed fails); -F1: small
	# contexts, one line of which may have moved on.
	if [ "$patch" != - ]; then
		if ! (cd "$work" && patch -p1 -s -f -F1 --no-backup-if-mismatch -r - <"$patch") \
			>"$logdir/patch.log" 2>&1; then
			echo "ERROR patch does not apply: $(head -n 2 "$logdir/patch.log" | tr '\n' ' ')"
			drop_copy "$work"
			return
		fi
		grep -qE '^\+\+\+ [^ ]*(drivers|include)/' "$patch" && module=yes
	fi
	# A VM test boots the module built from this copy.
	printf '%s\n' "$@" | grep -q : && module=yes
	if ! why=$(build "$work" "$logdir/build.log" $module); then
		echo "ERROR $why (build.log)"
		drop_copy "$work"
		return
	fi
	run_tests "$work" "$logdir" "$@"
	drop_copy "$work"
}

# shellcheck disable=SC2086 # MUTANTS is a list of words
selected=$(select_mutants ${MUTANTS:-} "$@") || exit 2
mapfile -t patches <<<"$selected"
[ -n "$selected" ] || die "no mutants in tests/mutants"
# One run per output directory: a second would empty the first's.
mkdir -p "$(dirname "$OUT")"
exec 9>"$OUT.lock"
flock -n 9 || die "another run is using $OUT (set MUTANTS_OUTDIR to run beside it)"
rm -rf "$OUT"
mkdir -p "$OUT/work"
for p in "${patches[@]}"; do
	[ -n "$(header "$p" Tests)" ] || die "$(basename "$p"): no Tests: line"
	[ -n "$(header "$p" Why)" ] || die "$(basename "$p"): no Why: line"
done
start_all=$(date +%s)

if [ "${MUTANTS_BASELINE:-1}" != 0 ]; then
	mapfile -t all < <(for p in "${patches[@]}"; do tests_of "$p"; done | awk '!seen[$0]++')
	echo "== baseline (unmutated): ${all[*]}"
	t0=$(date +%s)
	read -r verdict detail < <(run_one baseline - "${all[@]}")
	echo "   baseline: $verdict${detail:+ $detail} ($(($(date +%s) - t0)) s)"
	if [ "$verdict" != SURVIVED ]; then
		echo "mutants: the unmutated tree does not pass its tests ($verdict ${detail:-}):" \
			"no kill would mean anything; logs in $OUT/baseline" >&2
		exit 2
	fi
fi

killed=0 survived=0 errors=0
: >"$OUT/summary"
for p in "${patches[@]}"; do
	name=$(basename "$p" .patch)
	mapfile -t tests < <(tests_of "$p")
	echo "== $name: $(header "$p" Why)"
	t0=$(date +%s)
	read -r verdict detail < <(run_one "$name" "$p" "${tests[@]}")
	secs=$(($(date +%s) - t0))
	case $verdict in
	KILLED) killed=$((killed + 1)) ;;
	SURVIVED) survived=$((survived + 1)) ;;
	*) verdict=ERROR errors=$((errors + 1)) ;;
	esac
	echo "   $verdict${detail:+ $detail} ($secs s)"
	printf '%s\t%s\t%s\t%s\n' "$name" "$verdict" "${detail:--}" "$secs" >>"$OUT/summary"
done
total=$(($(date +%s) - start_all))

echo
printf '%-40s %-9s %-44s %6s\n' mutant verdict "killed by (or why not)" seconds
while IFS=$'\t' read -r name verdict detail secs; do
	printf '%-40s %-9s %-44s %6s\n' "$name" "$verdict" "$detail" "$secs"
done <"$OUT/summary"
echo
echo "${#patches[@]} mutants: $killed killed, $survived survived, $errors errors" \
	"in $total s (kernel $SERIES; logs in $OUT)"
[ "$killed" -eq "${#patches[@]}" ]
