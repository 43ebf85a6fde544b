# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Host side of the VM harness.  Source it (after tests/lib.sh when run from
# tests/run).  See tests/vm/README.md.
#
#   vm_prereqs                 "" when qemu, the kernel and the modules exist,
#                              else the reason on stdout
#   run_vm [OPTIONS] SCENARIO DISK...
#       --name=NAME            results go to $VM_OUTDIR/NAME (default: the
#                              scenario's basename)
#       --expect=poweroff|restart|panic   how the boot must end (poweroff)
#       --timeout=SECONDS      kill qemu after this long (default 300)
#       --ctl=DIR              extra files for the control disk (in /ctl)
#       --append=ARGS          extra kernel command line arguments
#       --checks=FILE          more declared checks, one NAME a line (may be
#                              given more than once)
#       DISK                   a raw image; append ":ro" for a read-only drive
#     Boots the guest with the control disk as /dev/vda and the DISKs as
#     /dev/vdb, /dev/vdc, ...  Leaves in $VM_OUTDIR/NAME: console.log (CRs
#     stripped), results (PASS/FAIL lines from the guest), output (the
#     scenario's stdout), dmesg, outcome (poweroff|restart|panic|timeout|
#     crash), problems (kernel log lines that fail the run) and
#     checks.declared (below).  Returns 0 when the boot ended as expected
#     and the log is clean.
#   vm_report NAME [EXPECT [LABEL]]
#                              turn $VM_OUTDIR/NAME's results into
#                              pass/fail cases (prefix LABEL/, default
#                              NAME/) plus LABEL/boot, LABEL/kernel-log,
#                              LABEL/scenario-completed (powered-off boots)
#                              and LABEL/declared-checks
#   vm_console_boot [--scenario=FILE] [--checks=FILE]... OUT EXPECT SECONDS QEMU_ARG...
#                              a boot with the caller's kernel, disks and
#                              command line whose guest reports EVT-RESULT
#                              lines on the console; leaves OUT as run_vm
#                              (declarations: FILE's #@check lines, the
#                              lists; none given: the guest reports nothing)
#   vm_console_in_order OUT RE...  the console has lines matching each RE,
#                              in that order (prints their line numbers)
#
# The kernel (make check-debug sets these from scripts/debug-kernel.sh env):
#   VM_KERNEL       the bzImage (default /boot/vmlinuz-$KVER)
#   KVER            its release: the modules come from
#   VM_MODROOT      $VM_MODROOT/lib/modules/$KVER (default: empty, i.e. /)
#   VM_APPEND       extra kernel arguments for every boot
#   VM_TIME_FACTOR  multiplies every --timeout (a slower kernel; default 1)
#   VM_KCONFIG      its .config (default /boot/config-$KVER): vm_kconfig
#   VM_DEBUG_KERNEL 1 on the debug kernel (KASAN, lockdep, kmemleak)
#   vm_kconfig SYM  prints CONFIG_SYM's value in $VM_KCONFIG (y, m, ...;
#                   nothing when unset), for a boot that needs an option
#
# Declared checks.  A boot passes only when the guest reported exactly the
# checks declared for it: a declared check with no PASS or FAIL line fails
# (the guest stopped early, or skipped it), and so does a result nobody
# declared (the declarations must stay complete).  A check's NAME is the
# first word given to gpass/gfail/gcheck/gcheck_fails (what follows a
# space is a comment); it is declared by
#   - a line "#@check NAME" of the scenario (leading blanks allowed), one
#     per line, for the checks it always reports;
#   - the host, for checks known only at run time (per-case lists it
#     generated, checks that depend on the kernel or the host): a file
#     "checks" in the --ctl directory, or run_vm --checks=FILE, one NAME a
#     line (blank lines and "#" comments ignored).
# The declarations are the union of all of them.  A restart or panic boot
# declares only what its scenario reports before the fatal read.

VM_TOPDIR=${TOPDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
: "${VM_MODROOT:=}"
: "${KVER:=$(ls "$VM_MODROOT/lib/modules" 2>/dev/null | sort -V | tail -n 1)}"
: "${VM_KERNEL:=/boot/vmlinuz-$KVER}"
: "${VM_APPEND:=}"
: "${VM_TIME_FACTOR:=1}"
: "${VM_KCONFIG:=/boot/config-$KVER}"
: "${VM_DEBUG_KERNEL:=0}"
: "${VM_OUTDIR:=${WORKDIR:-/tmp/vm-out}}"
: "${VM_MEM:=1024}"
: "${VM_SMP:=2}"
: "${QEMU:=qemu-system-x86_64}"
# Every guest's kernel is told its TSC is reliable.  Under TCG the TSC and
# the clock the clocksource watchdog checks it against (HPET or ACPI PM
# timer) are both emulated, and a loaded host delays one read against the
# other ("Long readout interval" in the consoles); the watchdog may then
# mark the TSC unstable, which flips the sched_clock static keys: kernel
# text patched through int3 while the other vCPU runs it.  TCG does not
# make that safe: Debian's 6.12 oopsed twice with "Oops: int3" in
# sched_clock_cpu()/sched_clock_idle_wakeup_event() as it marked sched_clock
# stable at boot (which vm_died_booting retries), and once with an int3
# Oops in interrupt 38 s into a loaded t-vm-devices boot (console lost;
# most likely this flip).  The flip at boot cannot be avoided without
# giving up the TSC; the one mid-test can.
VM_CLOCK_ARGS=tsc=reliable
export KVER VM_MODROOT

# Kernel log lines that fail a run unless the scenario asked for them.  RCU
# stalls count without a trace: "rcu: INFO: rcu_sched detected stalls on
# CPUs/tasks", "rcu: INFO: rcu_preempt self-detected stall on CPU",
# "rcu_tasks detected stalls", "rcu: INFO: rcu_sched detected expedited
# stalls", "rcu: rcu_sched kthread starved for N jiffies".
VM_BAD_RE='BUG[: ]|WARNING:|Oops|Call Trace|KASAN|possible circular locking|kmemleak|general protection|Kernel panic|UBSAN|refcount_t:|list_add corruption|list_del corruption|hung_task|blocked for more than|detected (expedited )?stalls|self-detected stall|kthread starved'
# ... except these, which every debug kernel boot prints.
VM_OK_RE='kmemleak: (Kernel memory leak detector initialized|Automatic memory scanning thread (started|ended))'

vm_kconfig() {
	sed -n "s/^CONFIG_$1=//p" "$VM_KCONFIG" 2>/dev/null | head -n 1
}

vm_prereqs() {
	command -v "$QEMU" >/dev/null || { echo "$QEMU not installed"; return; }
	[ -r "$VM_KERNEL" ] || { echo "no kernel $VM_KERNEL"; return; }
	[ -d "$VM_MODROOT/lib/modules/$KVER" ] || { echo "no $VM_MODROOT/lib/modules/$KVER"; return; }
	command -v cpio >/dev/null || { echo "cpio not installed"; return; }
	[ -x /bin/busybox ] || { echo "busybox-static not installed"; return; }
	[ -x /usr/sbin/dmsetup ] || { echo "dmsetup not installed"; return; }
}

run_vm() {
	local name='' expect=poweroff timeout=300 ctl='' append='' arg
	local checks=()
	while [ $# -gt 0 ]; do
		case $1 in
		--name=*) name=${1#*=} ;;
		--expect=*) expect=${1#*=} ;;
		--timeout=*) timeout=${1#*=} ;;
		--ctl=*) ctl=${1#*=} ;;
		--append=*) append=${1#*=} ;;
		--checks=*) checks+=("$1") ;;
		*) break ;;
		esac
		shift
	done
	local scenario=$1
	shift
	[ -n "$name" ] || name=$(basename "$scenario" .sh)
	local out=$VM_OUTDIR/boot-$name
	rm -rf "$out"
	mkdir -p "$out/ctl"
	local decl=(--scenario="$scenario" "${checks[@]}")
	[ -n "$ctl" ] && [ -f "$ctl/checks" ] && decl+=(--checks="$ctl/checks")
	vm_declare "$out" "${decl[@]}"

	local initrd
	timeout=$((timeout * VM_TIME_FACTOR))
	# One image per kernel: the modules differ.
	initrd=$("$VM_TOPDIR/tests/vm/mkinitramfs.sh" "$VM_TOPDIR/build/vm/initramfs-$KVER.cpio.gz") || {
		echo "initramfs build failed" >"$out/problems"
		echo crash >"$out/outcome"
		return 1
	}

	# Control disk: a tar at offset 0, room for the results tar after it.
	[ -n "$ctl" ] && cp -a "$ctl/." "$out/ctl/"
	cp "$scenario" "$out/ctl/scenario.sh"
	cp "$VM_TOPDIR/tests/vm/guest-lib.sh" "$out/ctl/guest-lib.sh"
	tar -cf "$out/ctl.img" -C "$out/ctl" .
	local size mib
	size=$(stat -c %s "$out/ctl.img")
	mib=$(((size >> 20) + 1))
	truncate -s $(((mib + 64) << 20)) "$out/ctl.img"

	local drives=(-drive "file=$out/ctl.img,format=raw,if=virtio")
	for arg in "$@"; do
		case $arg in
		*:ro) drives+=(-drive "file=${arg%:ro},format=raw,if=virtio,readonly=on") ;;
		*) drives+=(-drive "file=$arg,format=raw,if=virtio") ;;
		esac
	done

	local start rc attempt
	for attempt in 1 2; do
		rc=0
		start=$(date +%s)
		timeout --kill-after=5 "$timeout" "$QEMU" -machine accel=tcg -cpu max \
			-smp "$VM_SMP" -m "$VM_MEM" -nographic -no-reboot \
			-kernel "$VM_KERNEL" -initrd "$initrd" \
			-append "console=ttyS0 quiet panic=-1 $VM_CLOCK_ARGS evt.out=$mib $VM_APPEND $append" \
			"${drives[@]}" </dev/null >"$out/console.raw" 2>"$out/qemu.err" || rc=$?
		echo $(($(date +%s) - start)) >"$out/seconds"
		tr -d '\r' <"$out/console.raw" >"$out/console.log"
		[ "$attempt" = 1 ] && vm_died_booting "$out" "$expect" || break
	done

	mkdir -p "$out/res"
	dd if="$out/ctl.img" bs=1M skip="$mib" status=none |
		tar -xf - -C "$out/res" 2>/dev/null || true
	local f
	for f in results output dmesg exit; do
		[ -f "$out/res/$f" ] && mv "$out/res/$f" "$out/$f"
	done
	vm_judge "$out" "$rc" "$expect"
	local outcome
	outcome=$(cat "$out/outcome")

	local ok=0
	[ "$outcome" = "$expect" ] || ok=1
	[ -s "$out/problems" ] && ok=1
	return $ok
}

# vm_died_booting OUT EXPECT: the kernel reported a problem before it reached
# userspace (before "Freeing unused kernel image", which a kernel prints as
# it starts /init and "quiet" hides, and before any EVT- line of our
# guests), so before any of our code but what a built-in target does at
# boot.  Debian's
# 6.12 kernel did, once, under TCG with two vCPUs: an "Oops: int3" in an
# initcall (most likely a TCG race with the kernel patching its own code,
# which uses int3).  Such a boot is tried once
# more; its console is kept as console.boot-crash.log and the retry said.
# A crash of ours before userspace (a built-in target's dm-mod.create=)
# happens again and still fails the boot.  So does a guest that reset
# before its kernel printed a word (nothing after the firmware's "Booting
# from ROM" but the terminal reset it prints again): seen once, 4 s into a
# t-vm-reports boot of Debian's 6.12 kernel on a loaded host.
vm_died_booting() {
	local out=$1 why
	# What the kernel printed before userspace started; a boot meant to
	# panic may do so before (t-vm-builtin's sb): only a report before its
	# panic counts, as in vm_judge.  A report there is retried even when the
	# boot went on to userspace: the debug kernel once reported a
	# wild-memory-access in an interrupt 0.01 s into its boot.
	sed -E '/Freeing unused kernel image|EVT-/,$d' "$out/console.log" |
		if [ "$2" = panic ]; then sed '/Kernel panic - not syncing/,$d'; else cat; fi |
		grep -Ev "$VM_OK_RE" >"$out/console.early"
	grep -Eq "$VM_BAD_RE" "$out/console.early" &&
		why=$(grep -m1 -Eo "$VM_BAD_RE.{0,40}" "$out/console.early")
	if [ -z "${why:-}" ] && ! grep -Eq 'Freeing unused kernel image|EVT-' "$out/console.log" &&
		grep -q 'Booting from ROM' "$out/console.log" &&
		! sed '1,/Booting from ROM/d' "$out/console.log" | grep -q '[[:alnum:]]\{3\}'; then
		why="the guest reset before its kernel printed anything"
	fi
	rm -f "$out/console.early"
	[ -n "${why:-}" ] || return 1
	cp "$out/console.log" "$out/console.boot-crash.log"
	echo "  note: $(basename "$out"): the kernel failed before userspace" \
		"($why); booting again" >&2
	return 0
}

# vm_judge OUT RC EXPECT: after a boot whose console is OUT/console.log and
# whose qemu ended with RC, write OUT/outcome (timeout, panic, poweroff,
# restart, crash), OUT/problems (kernel reports; an expected panic's own
# message and backtrace excepted; OUT/dmesg scanned too when there is one)
# and, when the guest left none, OUT/results from the console's EVT-RESULT
# lines.
vm_judge() {
	local out=$1 rc=$2 expect=$3 outcome
	if [ ! -f "$out/results" ]; then
		sed -n 's/^.*EVT-RESULT //p' "$out/console.log" >"$out/results"
	fi
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		outcome=timeout
	elif grep -q 'Kernel panic - not syncing' "$out/console.log"; then
		outcome=panic
	elif grep -q 'EVT-POWEROFF' "$out/console.log"; then
		outcome=poweroff
	elif grep -Eq 'reboot: Restarting system|Restarting system' "$out/console.log"; then
		outcome=restart
	else
		outcome=crash
	fi
	echo "$outcome" >"$out/outcome"
	{
		if [ "$expect" = panic ]; then
			sed '/Kernel panic - not syncing/,$d' "$out/console.log"
		else
			cat "$out/console.log"
		fi
		[ -f "$out/dmesg" ] && cat "$out/dmesg"
	} | grep -E "$VM_BAD_RE" | grep -Ev "$VM_OK_RE" | sort -u >"$out/problems" || true
}

# vm_declare OUT [--scenario=FILE | --checks=FILE]...: write the checks
# declared for a boot to OUT/checks.declared (sorted, once each): the
# "#@check NAME" lines of each scenario FILE and the NAME lines of each
# checks FILE.  A declaration that is not one word (or ends in ':'), and a
# checks FILE that does not exist, go to OUT/checks.malformed, which fails
# the boot in vm_report.
vm_declare() {
	local out=$1 a f
	shift
	mkdir -p "$out"
	: >"$out/checks.malformed"
	for a in "$@"; do
		f=${a#*=}
		if [ ! -f "$f" ]; then
			echo "${a%%=*} $f: no such file" >>"$out/checks.malformed"
			continue
		fi
		case $a in
		--scenario=*)
			awk -v f="$f" '
				/^[[:space:]]*#@check([[:space:]]|$)/ {
					n = $0
					sub(/^[[:space:]]*#@check[[:space:]]*/, "", n)
					sub(/[[:space:]]+$/, "", n)
					if (n == "" || n ~ /[[:space:]]|:$/)
						print f ":" FNR ": malformed: " $0 >"/dev/stderr"
					else
						print n
				}' "$f" ;;
		--checks=*)
			awk -v f="$f" '
				/^[[:space:]]*(#|$)/ { next }
				{
					n = $0
					sub(/^[[:space:]]+/, "", n)
					sub(/[[:space:]]+$/, "", n)
					if (n ~ /[[:space:]]|:$/)
						print f ":" FNR ": malformed: " $0 >"/dev/stderr"
					else
						print n
				}' "$f" ;;
		*) echo "vm_declare: unknown argument $a" >&2 ;;
		esac
	done 2>>"$out/checks.malformed" | LC_ALL=C sort -u >"$out/checks.declared"
}

# vm_console_boot [--scenario=FILE] [--checks=FILE]... OUT EXPECT SECONDS
# QEMU_ARG...: a boot of a guest that reports on the console only (no
# control disk: its own kernel or root, as in t-vm-builtin.sh and
# t-vm-initramfs.sh); SECONDS is scaled by VM_TIME_FACTOR.  The checks
# declared for it: FILE's "#@check" lines and the lists (none: the guest
# must report nothing).  A guest powering off writes "EVT-END exit=0" after
# its last check.  Leaves OUT as run_vm does, for vm_report.
vm_console_boot() {
	local decl=()
	while [ $# -gt 0 ]; do
		case $1 in
		--scenario=* | --checks=*) decl+=("$1") ;;
		*) break ;;
		esac
		shift
	done
	local out=$1 expect=$2 t=$(($3 * VM_TIME_FACTOR)) rc start attempt
	shift 3
	mkdir -p "$out"
	rm -f "$out/results"
	vm_declare "$out" "${decl[@]}"
	for attempt in 1 2; do
		rc=0
		start=$(date +%s)
		timeout --kill-after=5 "$t" "$QEMU" -machine accel=tcg -cpu max \
			-smp "$VM_SMP" -nographic -no-reboot "$@" \
			</dev/null >"$out/console.raw" 2>"$out/qemu.err" || rc=$?
		echo $(($(date +%s) - start)) >"$out/seconds"
		tr -d '\r' <"$out/console.raw" >"$out/console.log"
		[ "$attempt" = 1 ] && vm_died_booting "$out" "$expect" || break
	done
	vm_judge "$out" "$rc" "$expect"
}

# vm_console_in_order OUT RE...: each extended regex RE matches a line of
# OUT/console.log, each one after the one before (first matches).  Prints
# the line numbers ("none" for a missing one), for the failure message.
vm_console_in_order() {
	local con=$1/console.log re n prev=0 ok=0 lines=''
	shift
	for re in "$@"; do
		n=$(grep -n -m1 -E -- "$re" "$con" | cut -d: -f1)
		lines+="${lines:+, }${n:-none}"
		if [ -z "$n" ] || [ "$n" -le "$prev" ]; then
			ok=1
		else
			prev=$n
		fi
	done
	echo "$lines"
	return $ok
}

# vm_check_declared OUT LABEL: every check declared for the boot in OUT has
# a PASS or FAIL line in OUT/results, and every result was declared.  One
# case LABEL/declared-checks when all is well, else one failure per check
# missing, per result undeclared and per malformed declaration.
vm_check_declared() {
	local out=$1 name=$2 n bad=0 see=$1/output
	[ -f "$see" ] || see=$out/console.log
	if [ ! -f "$out/checks.declared" ]; then
		fail "$name/declared-checks: no declarations ($out/checks.declared)"
		return
	fi
	# A result's name: its first word ("FAIL NAME: why" loses the colon).
	{ [ -f "$out/results" ] && cat "$out/results"; } |
		awk '$1 == "PASS" || $1 == "FAIL" { n = $2; if ($1 == "FAIL") sub(/:$/, "", n); print n }' |
		LC_ALL=C sort -u >"$out/checks.reported"
	while IFS= read -r n; do
		fail "$name/declared-checks: malformed declaration: $n"
		bad=1
	done <"$out/checks.malformed"
	while IFS= read -r n; do
		fail "$name/declared-checks: '$n' was declared but has no result; see $see"
		bad=1
	done < <(LC_ALL=C comm -23 "$out/checks.declared" "$out/checks.reported")
	while IFS= read -r n; do
		fail "$name/declared-checks: result '$n' was not declared (#@check $n, or the host's checks)"
		bad=1
	done < <(LC_ALL=C comm -13 "$out/checks.declared" "$out/checks.reported")
	[ $bad = 1 ] ||
		pass "$name/declared-checks ($(grep -c . "$out/checks.declared") declared, each reported)"
}

vm_report() {
	local out=$VM_OUTDIR/boot-$1 line expect=${2:-poweroff} name=${3:-$1}
	local outcome
	outcome=$(cat "$out/outcome" 2>/dev/null || echo none)
	if [ "$outcome" = "$expect" ]; then
		pass "$name/boot ($outcome after $(cat "$out/seconds") s)"
	else
		fail "$name/boot ended by $outcome, expected $expect; see $out/console.log"
	fi
	if [ -s "$out/problems" ]; then
		fail "$name/kernel-log: $(head -n 3 "$out/problems" | tr '\n' '|')"
	else
		pass "$name/kernel-log clean"
	fi
	# A powered-off boot ran its scenario to the end: after its last check
	# the guest wrote the completion marker with the exit status (/init:
	# /results/exit and "EVT-END exit=N"; a console guest: the line).
	# Restart and panic boots end inside the scenario.
	if [ "$expect" = poweroff ]; then
		local rc
		rc=$(cat "$out/exit" 2>/dev/null ||
			sed -n 's/^EVT-END exit=//p' "$out/console.log" 2>/dev/null | tail -n 1)
		if [ "$rc" = 0 ]; then
			pass "$name/scenario-completed (exit 0)"
		elif [ -z "$rc" ]; then
			fail "$name/scenario did not complete: no completion marker (EVT-END exit=N); see $out/console.log"
		else
			fail "$name/scenario did not complete: exit '$rc'; see $out/output"
		fi
	fi
	vm_check_declared "$out" "$name"
	[ -f "$out/results" ] || return 0
	while IFS= read -r line; do
		case $line in
		PASS\ *) pass "$name/${line#PASS }" ;;
		FAIL\ *) fail "$name/${line#FAIL }" ;;
		esac
	done <"$out/results"
}
