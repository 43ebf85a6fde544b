# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC1091
# shellcheck shell=sh
#
# Guest side of tests/vm/debug/t-vm-kunit.sh: the KUnit suite dm_extverity.
# Inserting /ctl/dm-extverity-kunit.ko runs the suite (kunit.enable is on
# by default) before insmod returns; its KTAP report is read back from the
# kernel log after a mark.  One check kunit-CASE per test case: the host
# declares them from the KUNIT_CASE() lines of the source (/ctl/checks), so
# a case that reports nothing fails, and so does one the source does not
# have; a case passes only on "ok" (not "not ok", not "# SKIP").  The
# plan ("1..N") and the number of case results must both equal CASES, the
# number of cases the host declared, and the suite's own result line must
# be "ok".
#@check kunit-insmod
#@check kunit-suite
#@check kunit-plan
#@check kunit-rmmod
. /ctl/guest-lib.sh
. /ctl/params

dmesg_mark
gcheck kunit-insmod insmod /ctl/dm-extverity-kunit.ko
dmesg_new | sed 's/^\[[^]]*\] //' >/tmp/ktap
echo "== the kernel log since insmod"
cat /tmp/ktap

# The report of suite dm_extverity, as lines of its own: "plan N",
# "case NUMBER NAME ok|not-ok|skip [DIAGNOSTICS]", "suite ok|not-ok".
# Case lines are indented under the suite's header; the suite's result
# is not.
awk '
	!in_suite && /^[[:space:]]*# Subtest: dm_extverity$/ { in_suite = 1; next }
	!in_suite || done { next }
	plan == "" && /^[[:space:]]+1\.\.[0-9]+$/ {
		plan = $0
		sub(/^[[:space:]]*1\.\./, "", plan)
		print "plan " plan
		diag = ""
		n = 0
		next
	}
	/^[[:space:]]+(not )?ok [0-9]+ / {
		st = "ok"
		if ($1 == "not") { st = "not-ok"; $1 = "" ; $0 = $0 }
		if ($0 ~ /# SKIP/) st = "skip"
		print "case " $2 " " $3 " " st diag
		diag = ""
		n = 0
		next
	}
	/^(not )?ok [0-9]+ dm_extverity/ {
		print "suite " ($1 == "not" ? "not-ok" : "ok")
		done = 1
		next
	}
	# A failed case prints its diagnostics before its result (the
	# message of a _MSG check unindented): the first few go with it.
	# The totals ("# dm_extverity: pass:..") do not.
	/^# / || /^[[:space:]]*$/ { next }
	++n <= 6 {
		line = $0
		sub(/^[[:space:]]+/, "", line)
		diag = diag " | " line
	}
' /tmp/ktap >/tmp/report
echo "== the report as read"
cat /tmp/report

if grep -q '^suite ok$' /tmp/report; then
	gpass kunit-suite
else
	gfail kunit-suite "$(grep -q '^suite' /tmp/report &&
		echo "the suite reported 'not ok'" ||
		echo "no result line of suite dm_extverity in the kernel log")"
fi

plan=$(sed -n 's/^plan //p' /tmp/report)
ncases=$(grep -c '^case ' /tmp/report)
numbers=$(awk '$1 == "case" { printf "%s%s", sep, $2; sep = " " }' /tmp/report)
want=$(i=1; while [ $i -le "$CASES" ]; do printf '%s%s' "${sep:-}" $i; sep=' '; i=$((i + 1)); done)
if [ "$plan" = "$CASES" ] && [ "$ncases" = "$CASES" ] && [ "$numbers" = "$want" ]; then
	gpass "kunit-plan (1..$plan, $ncases results, as declared)"
else
	gfail kunit-plan "declared $CASES cases; the suite planned '${plan:-none}' and reported $ncases, numbered '$numbers'"
fi

while read -r what num name st diag; do
	[ "$what" = case ] || continue
	if [ "$st" = ok ]; then
		gpass "kunit-$name (case $num)"
	else
		gfail "kunit-$name" "case $num: $st$diag"
	fi
done </tmp/report

gcheck kunit-rmmod rmmod dm_extverity_kunit
