# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC1091,SC2154,SC2046
# shellcheck shell=sh
#
# Guest side of t-vm-devices.sh: /dev/vdb is the fixture image, /dev/vdc its
# hash area, /dev/vdd that of a 2 TiB device (BIG_BLOCKS, BIG_ROOT); /ctl/params has ROOT, BLOCKS, ZSTART and ZCOUNT (a zero range
# with data after it) and MANIFEST_BYTES (what the kernel's manifest
# tables take at least).  Reads use O_DIRECT: what is counted below the
# target is what the target asked for, not the page cache's readahead.
#
#@check insmod
#@check reference-create
#@check hash-4kn-loop
#@check hash-4kn-create
#@check hash-4kn-reads-same
#@check data-4kn-loop
#@check data-4kn-create
#@check data-4kn-reads-same
#@check hash-4kn-misaligned-start-refused
#@check zero-lower-create
#@check zero-range-reads-zeros
#@check zero-range-no-lower-read
#@check zero-range-across-end
#@check zero-range-across-end-reads-data-only
#@check zero-range-restart-on-error-quiet
#@check zero-range-status-counts
#@check error-lower-create
#@check io-error-no-restart
#@check io-error-no-panic
#@check dma-alignment-is-block-size
#@check ioprio-create
#@check ioprio-hash-reads-take-the-read-class
#@check prefetch-cluster-reads-around
#@check bh-create
#@check bh-split-read-same
#@check bh-split-goes-on-from-the-block
#@check bh-warm-reads-not-in-worker
#@check bh-large-read-in-worker
#@check bh-idle-read-in-worker
#@check bh-without-option-in-worker
#@check bh-corrupt-create
#@check bh-corrupt-fails-once
#@check suspend-delay-create
#@check suspend-no-hash-io-while-suspended
#@check suspend-readers-read
#@check suspend-readers-never-wrong
#@check suspend-waits-for-prefetch
#@check suspend-waits-for-prefetch-bh
#@check suspend-waits-for-prefetch-busy-bh
#@check big-zero-create
#@check big-at-most-once-refused
#@check big-without-option-reads-zeros
#@check memcg-create
#@check memcg-manifest-charged
#@check memcg-manifest-uncharged-on-remove
#@check load-killed-refused
#@check load-killed-stops-early
. /ctl/guest-lib.sh
. /ctl/params
# A parameter the host failed to pass ends the scenario (and fails the boot).
: "${ROOT:?}" "${BLOCKS:?}" "${ZSTART:?}" "${ZCOUNT:?}" "${MANIFEST_BYTES:?}" \
	"${BIG_BLOCKS:?}" "${BIG_ROOT:?}" "${PBLOCK:?}" "${QBLOCK:?}" "${BH_BLOCK:?}" "${CLUSTER:?}"

if ! ext_insmod >/tmp/insmod.out 2>&1; then
	gfail insmod "$(cat /tmp/insmod.out)"
	exit 1
fi
gpass insmod
BS=4096
spb=$((BS / 512))
len=$((BLOCKS * spb))

# ev NAME DATA HASH [HASH_START [OPTS]]: an extverity device.
ev() {
	dmsetup create --noudevsync --readonly "$1" --table \
		"0 $len extverity 1 $2 $3 ${4:-0} sha256 $ROOT${5:+ $5}" >/tmp/ev.out 2>&1 &&
		dmsetup mknodes "$1"
}
# md5 DEV [SKIP COUNT]: md5 of DEV's blocks, read with O_DIRECT.
md5() {
	if [ $# -gt 1 ]; then
		dd if="$1" bs=$BS skip="$2" count="$3" iflag=direct 2>/dev/null
	else
		dd if="$1" bs=1M iflag=direct 2>/dev/null
	fi | md5sum | cut -d' ' -f1
}
# kname NAME: the kernel's name of dm device NAME (dm-N).
kname() { echo "dm-$(dmsetup info -c --noheadings -o minor "$1")"; }
# stat_field DM FIELD: a field of /sys/block/DM/stat (1 reads, 3 sectors);
# "none" when there is no such device, which no check takes for a count.
stat_field() { awk -v f="$2" '{ print $f }' "/sys/block/$1/stat" 2>/dev/null || echo none; }
inflight() { awk '{ print $1 + $2 }' "/sys/block/$1/inflight" 2>/dev/null || echo none; }

gcheck reference-create ev ref /dev/vdb /dev/vdc
want=$(md5 /dev/mapper/ref)
echo "devices: reference md5 $want"

# --- 4Kn devices -------------------------------------------------------------
if l4=$(/sbin/losetup -f --show -r -b 4096 /dev/vdc 2>/tmp/lo.out) &&
	[ "$(blockdev --getss "$l4")" = 4096 ]; then
	gpass hash-4kn-loop
	if ev h4 /dev/vdb "$l4"; then
		gpass hash-4kn-create
		got=$(md5 /dev/mapper/h4)
		if [ "$got" = "$want" ]; then gpass hash-4kn-reads-same; else gfail hash-4kn-reads-same "$got, want $want"; fi
		dmsetup remove h4
	else
		gfail hash-4kn-create "$(cat /tmp/ev.out; dmesg | grep extverity | tail -n 2)"
		gfail hash-4kn-reads-same "no device"
	fi
	# Sector 1 of a device of 4096-byte sectors cannot be read at all.
	dmesg_mark
	if ev h4m /dev/vdb "$l4" 1; then
		gfail hash-4kn-misaligned-start-refused "table loaded"
		dmsetup remove h4m
	elif dmesg_new | grep -q "extverity: Hash start is not a multiple of the hash device's logical block size"; then
		gpass hash-4kn-misaligned-start-refused
	else
		gfail hash-4kn-misaligned-start-refused "$(dmesg_new | grep extverity | tail -n 1)"
	fi
	dmsetup remove h4m 2>/dev/null
	/sbin/losetup -d "$l4"
else
	gfail hash-4kn-loop "losetup -b 4096: $(cat /tmp/lo.out)"
fi

if l4=$(/sbin/losetup -f --show -r -b 4096 /dev/vdb 2>/tmp/lo.out) &&
	[ "$(blockdev --getss "$l4")" = 4096 ]; then
	gpass data-4kn-loop
	if ev d4 "$l4" /dev/vdc; then
		gpass data-4kn-create
		got=$(md5 /dev/mapper/d4)
		if [ "$got" = "$want" ]; then gpass data-4kn-reads-same; else gfail data-4kn-reads-same "$got, want $want"; fi
		dmsetup remove d4
	else
		gfail data-4kn-create "$(cat /tmp/ev.out; dmesg | grep extverity | tail -n 2)"
		gfail data-4kn-reads-same "no device"
	fi
	/sbin/losetup -d "$l4"
else
	gfail data-4kn-loop "losetup -b 4096: $(cat /tmp/lo.out)"
fi

# --- zero ranges without I/O -------------------------------------------------
# ld: the data disk, but its free blocks ZSTART.. fail every read.
zs=$((ZSTART * spb))
zn=$((ZCOUNT * spb))
gcheck zero-lower-create sh -c "printf '%s\n' '0 $zs linear /dev/vdb 0' \
	'$zs $zn error' '$((zs + zn)) $((len - zs - zn)) linear /dev/vdb $((zs + zn))' |
	dmsetup create --noudevsync --readonly ld && dmsetup mknodes ld"
ld=$(kname ld)
zeros=$(head -c $((ZCOUNT * BS)) /dev/zero | md5sum | cut -d' ' -f1)
ev ez /dev/mapper/ld /dev/vdc || gfail zero-lower-create "ez: $(cat /tmp/ev.out)"
r0=$(stat_field "$ld" 1)
got=$(md5 /dev/mapper/ez "$ZSTART" "$ZCOUNT")
r1=$(stat_field "$ld" 1)
if [ "$got" = "$zeros" ]; then gpass zero-range-reads-zeros; else gfail zero-range-reads-zeros "$got, want zeros $zeros"; fi
if [ "$r1" = "$r0" ] && [ "$r0" != none ]; then gpass zero-range-no-lower-read; else gfail zero-range-no-lower-read "reads of the data device: $r0, then $r1"; fi
s0=$(stat_field "$ld" 3)
got=$(md5 /dev/mapper/ez $((ZSTART + ZCOUNT - 2)) 4)
s1=$(stat_field "$ld" 3)
if [ "$got" = "$(cat /ctl/across.md5)" ]; then gpass zero-range-across-end; else gfail zero-range-across-end "$got"; fi
if [ "$s0" != none ] && [ "$s1" != none ] && [ $((s1 - s0)) = $((2 * spb)) ]; then
	gpass zero-range-across-end-reads-data-only
else
	gfail zero-range-across-end-reads-data-only "sectors read below: $s0, then $s1; want $((2 * spb)) more"
fi
set -- $(dmsetup status ez)
if [ "$4" = V ] && [ "$7" -ge $((ZCOUNT + 2)) ]; then
	gpass zero-range-status-counts
else
	gfail zero-range-status-counts "$*"
fi
dmsetup remove ez
# Had a read of its free blocks reached dm-error, this guest would restart
# here instead of reporting the check.
ev ez /dev/mapper/ld /dev/vdc 0 "1 restart_on_error" || gfail zero-lower-create "ez: $(cat /tmp/ev.out)"
a=$(md5 /dev/mapper/ez "$ZSTART" "$ZCOUNT")
b=$(md5 /dev/mapper/ez $((ZSTART + ZCOUNT - 2)) 4)
if [ "$a" = "$zeros" ] && [ "$b" = "$(cat /ctl/across.md5)" ]; then
	gpass zero-range-restart-on-error-quiet
else
	gfail zero-range-restart-on-error-quiet "$a $b"
fi
dmsetup remove ez
dmsetup remove ld

# --- an I/O error is not corruption ------------------------------------------
# ld: the data disk, but for the data block after the zero range, which
# fails.  restart_on_corruption and panic_on_corruption must pass the EIO
# up and leave the guest running.
db=$((ZSTART + ZCOUNT))
gcheck error-lower-create sh -c "printf '%s\n' '0 $((db * spb)) linear /dev/vdb 0' \
	'$((db * spb)) $spb error' '$(((db + 1) * spb)) $((len - (db + 1) * spb)) linear /dev/vdb $(((db + 1) * spb))' |
	dmsetup create --noudevsync --readonly ld && dmsetup mknodes ld"
for mode in restart panic; do
	if ev em /dev/mapper/ld /dev/vdc 0 "1 ${mode}_on_corruption"; then
		if dd if=/dev/mapper/em of=/dev/null bs=$BS skip=$db count=1 iflag=direct 2>/dev/null; then
			gfail "io-error-no-$mode" "the read of the failing block succeeded"
		else
			set -- $(dmsetup status em)
			if [ "$4" = V ] && [ "$6" = 0 ]; then gpass "io-error-no-$mode"; else gfail "io-error-no-$mode" "status $*"; fi
		fi
		dmsetup remove em
	else
		gfail "io-error-no-$mode" "$(cat /tmp/ev.out)"
	fi
done
dmsetup remove ld

# --- direct I/O alignment ----------------------------------------------------
# Buffers aligned to the block size, as dm-verity asks: no data block
# straddles two pages.
a=$(cat "/sys/block/$(kname ref)/queue/dma_alignment" 2>&1)
if [ "$a" = $((BS - 1)) ]; then gpass dma-alignment-is-block-size; else gfail dma-alignment-is-block-size "dma_alignment $a, want $((BS - 1))"; fi

# --- hash reads at the priority of the read that needs them ------------------
# Since 6.10 dm-bufio's reads carry an I/O priority: the hash reads of a
# realtime reader (ionice -c 1) must be realtime too, not queued behind
# best-effort work.  The hash device is a loop device scheduled by
# mq-deadline, which counts its requests per class until they complete
# (debugfs sched/queued: RT BE IDLE), over dm-delay (direct I/O: no page
# cache in between), which keeps each one there for a second.  Before
# 6.10 they are best-effort whatever the reader.
hlen=$(blockdev --getsz /dev/vdc)
kv=$(uname -r)
kmaj=${kv%%.*} kmin=${kv#*.}
kmin=${kmin%%[!0-9]*}
want_class=BE
if [ "$kmaj" -gt 6 ] || { [ "$kmaj" = 6 ] && [ "$kmin" -ge 10 ]; }; then
	want_class=RT
fi
mount -t debugfs nodev /sys/kernel/debug 2>/dev/null
if opt_modprobe dm-delay >/tmp/dq.out 2>&1 && opt_modprobe mq-deadline >>/tmp/dq.out 2>&1 &&
	echo "0 $hlen delay /dev/vdc 0 1000" | dmsetup create --noudevsync --readonly hq 2>>/tmp/dq.out &&
	dmsetup mknodes hq && lq=$(/sbin/losetup -f --show -r --direct-io=on /dev/mapper/hq 2>>/tmp/dq.out) &&
	echo mq-deadline >"/sys/block/${lq#/dev/}/queue/scheduler" &&
	[ -r "/sys/kernel/debug/block/${lq#/dev/}/sched/queued" ] &&
	ev evq /dev/vdb "$lq"; then
	gpass ioprio-create
	q=/sys/kernel/debug/block/${lq#/dev/}/sched/queued
	echo "devices: ioprio: before the read, queued RT BE IDLE: $(cat "$q")"
	ionice -c 1 -n 3 dd if=/dev/mapper/evq of=/dev/null bs=$BS skip="$PBLOCK" count=1 \
		iflag=direct 2>/tmp/dq.out &
	rt=0 be=0 i=0
	while [ $i -lt 60 ]; do
		read -r r b _ <"$q"
		[ "$r" -gt 0 ] && rt=$((rt + 1))
		[ "$b" -gt 0 ] && be=$((be + 1))
		sleep 0.1
		i=$((i + 1))
	done
	wait $! || echo "devices: ioprio: the read failed: $(cat /tmp/dq.out)"
	echo "devices: ioprio: kernel $kv, hash reads seen queued in 60 samples: RT $rt, BE $be; want $want_class"
	if { [ $want_class = RT ] && [ $rt -gt 0 ] && [ $be = 0 ]; } ||
		{ [ $want_class = BE ] && [ $be -gt 0 ] && [ $rt = 0 ]; }; then
		gpass ioprio-hash-reads-take-the-read-class
	else
		gfail ioprio-hash-reads-take-the-read-class "kernel $kv: samples with RT queued $rt, BE $be; want $want_class only"
	fi
	dmsetup remove evq
else
	gfail ioprio-create "$(cat /tmp/dq.out /tmp/ev.out 2>/dev/null | tr '\n' ' ')"
fi
[ -n "${lq:-}" ] && /sbin/losetup -d "$lq"
dmsetup remove hq 2>/dev/null

# --- hash read-ahead in clusters -----------------------------------------------
# Hash sectors read from fresh devices (an empty hash cache): block BH_BLOCK
# (leaf 127 of the largest file, leaf 128 right after it) with the module's
# prefetch_cluster at 0 and at CLUSTER blocks (its default unless that
# cluster ends at leaf 127), and each block of that aligned cluster in turn
# at 0.  The cluster's read-ahead must read exactly the hash blocks of its
# data blocks: more than the one block needs (a second level-0 block, at
# least), and not one sector more (hash blocks of the hash area around
# them, say).
pc=/sys/module/dm_extverity/parameters/prefetch_cluster
pc_default=$(cat $pc 2>/dev/null)
cstart=$((BH_BLOCK / CLUSTER * CLUSTER))
# hash_sectors CLUSTER_BYTES SKIP COUNT: hash sectors one dd of COUNT
# blocks from SKIP, a block a read, reads from a fresh device; counted once
# the device is removed, which waits for the read-ahead still in flight
# (extverity_postsuspend()).
hash_sectors() {
	echo "$1" >$pc 2>/dev/null || { echo "?"; return; }
	ev evc /dev/vdb /dev/vdc || { echo "?"; return; }
	_hs_s0=$(stat_field vdc 3)
	dd if=/dev/mapper/evc of=/dev/null bs=$BS skip="$2" count="$3" iflag=direct 2>/dev/null
	dmsetup remove evc
	_hs_s1=$(stat_field vdc 3)
	echo $((_hs_s1 - _hs_s0))
}
sectors_none=$(hash_sectors 0 "$BH_BLOCK" 1)
sectors_cluster=$(hash_sectors $((CLUSTER * BS)) "$BH_BLOCK" 1)
sectors_each=$(hash_sectors 0 "$cstart" "$CLUSTER")
echo "$pc_default" >$pc 2>/dev/null
echo "devices: prefetch_cluster: default ${pc_default:-none}, here $((CLUSTER * BS)); hash sectors read for block $BH_BLOCK: $sectors_none with 0, $sectors_cluster with the cluster; for each block of $cstart-$((cstart + CLUSTER - 1)): $sectors_each"
if [ "${pc_default:-0}" = 262144 ] && [ "$sectors_none" != "?" ] && [ "$sectors_none" -gt 0 ] &&
	[ "$sectors_cluster" != "?" ] && [ "$sectors_cluster" -gt "$sectors_none" ] &&
	[ "$sectors_cluster" = "$sectors_each" ]; then
	gpass prefetch-cluster-reads-around
else
	gfail prefetch-cluster-reads-around "default ${pc_default:-none}: $sectors_none sectors with 0, $sectors_cluster with $((CLUSTER * BS)), $sectors_each for each block of the cluster ($(cat /tmp/ev.out 2>/dev/null))"
fi

# --- verification in the completion context ----------------------------------
# try_verify_in_tasklet: a read whose hash blocks are cached is verified
# where it completed (extverity_bh_work(); softirq context since 6.9, whose
# system_bh_wq takes the completions of hard interrupts), never by the
# worker (extverity_work()).  A block that needs a hash block still being
# read sends the rest of the read to the worker, which goes on from that
# block.  Kprobe events count the calls of both.  BH_BLOCK and the
# next three blocks are leaves 127-130 of one file: 127 under its first
# level-0 hash block, 128-130 under its second.  Without read-ahead
# clusters and over a slow hash device (500 ms), each hash block is read
# when first needed and is still in flight when the data is back.
T=/sys/kernel/tracing
mount -t tracefs nodev $T 2>/dev/null
# traced CMD...: run CMD with the two functions traced; sets BHN (calls of
# extverity_bh_work), BHS (those in softirq context) and WKN (extverity_work).
traced() {
	: >$T/trace
	echo 1 >$T/tracing_on
	"$@"
	echo 0 >$T/tracing_on
	set -- $(awk '
		/^#/ { next }
		{ for (i = 1; i < NF; i++) if ($i ~ /^\[[0-9]+\]$/) { fl = $(i + 1); break } }
		/ evt_bh_work: / { b++; if (substr(fl, 3, 1) == "s") s++ }
		/ evt_work: / { w++ }
		END { print b + 0, s + 0, w + 0 }' $T/trace)
	BHN=$1 BHS=$2 WKN=$3
}
# blocks DEV FIRST N: read N blocks from FIRST in one read.
blocks() { dd if="$1" of=/tmp/blocks bs=$(($3 * BS)) count=1 skip=$(($2 * BS)) iflag=direct,skip_bytes 2>/dev/null; }
# singles DEV FIRST N: read N blocks from FIRST one read each, backwards.
singles() {
	_i=$3
	while [ "$_i" -gt 0 ]; do
		_i=$((_i - 1))
		dd if="$1" of=/dev/null bs=$BS count=1 skip=$(($2 + _i)) iflag=direct 2>/dev/null || return
	done
}
verified() { dmsetup status "$1" | awk '{ print $5 }'; }
have_bh_wq=0
if [ "$kmaj" -gt 6 ] || { [ "$kmaj" = 6 ] && [ "$kmin" -ge 9 ]; }; then
	have_bh_wq=1
fi
echo 0 >$pc
if echo 'p:evt_bh_work extverity_bh_work' >>$T/kprobe_events 2>/tmp/bh.out &&
	echo 'p:evt_work extverity_work' >>$T/kprobe_events 2>>/tmp/bh.out &&
	echo 0 >$T/tracing_on && echo 1 >$T/events/kprobes/enable 2>>/tmp/bh.out &&
	echo "0 $hlen delay /dev/vdc 0 500" | dmsetup create --noudevsync --readonly hd 2>>/tmp/bh.out &&
	dmsetup mknodes hd && ev evb /dev/vdb /dev/mapper/hd 0 "1 try_verify_in_tasklet" &&
	dmsetup table evb | grep -q ' 1 try_verify_in_tasklet$'; then
	gpass bh-create
	# Leaf 127 alone: the worker reads its hash blocks.  Then 127 and 128
	# in one read: 127 verified where the read completed, 128 in the worker.
	dd if=/dev/mapper/evb of=/dev/null bs=$BS count=1 skip="$BH_BLOCK" iflag=direct 2>/dev/null
	v0=$(verified evb)
	traced blocks /dev/mapper/evb "$BH_BLOCK" 2
	v1=$(verified evb)
	got=$(md5sum </tmp/blocks | cut -d' ' -f1)
	ref=$(dd if=/dev/mapper/ref bs=$BS count=2 skip="$BH_BLOCK" iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)
	echo "devices: bh: kernel $kv; split read: bh_work $BHN ($BHS in softirq), work $WKN, verified +$((v1 - v0))"
	if [ "$got" = "$ref" ]; then gpass bh-split-read-same; else gfail bh-split-read-same "md5 $got, want $ref"; fi
	if [ "$BHN" = 1 ] && [ "$WKN" = 1 ] && [ $((v1 - v0)) = 2 ]; then
		gpass bh-split-goes-on-from-the-block
	else
		gfail bh-split-goes-on-from-the-block "bh_work $BHN, work $WKN, verified +$((v1 - v0)); want 1, 1, +2"
	fi
	# Leaves 112-127, their hash blocks cached: not one in the worker.
	v0=$(verified evb)
	traced singles /dev/mapper/evb $((BH_BLOCK - 15)) 16
	v1=$(verified evb)
	echo "devices: bh: 16 cached reads: bh_work $BHN ($BHS in softirq), work $WKN, verified +$((v1 - v0))"
	if [ "$BHN" = 16 ] && [ "$WKN" = 0 ] && [ $((v1 - v0)) = 16 ] &&
		{ [ $have_bh_wq = 0 ] || [ "$BHS" = 16 ]; }; then
		gpass bh-warm-reads-not-in-worker
	else
		gfail bh-warm-reads-not-in-worker "bh_work $BHN ($BHS in softirq, want 16 since 6.9), work $WKN, verified +$((v1 - v0)); want 16, 0, +16"
	fi
	# The limits: one read of the same 16 blocks (64 KiB, over
	# bh_max_bytes), and one block read at the idle I/O class, both go to
	# the worker at once, their hash blocks cached or not.
	v0=$(verified evb)
	traced blocks /dev/mapper/evb $((BH_BLOCK - 15)) 16
	v1=$(verified evb)
	echo "devices: bh: one read of 16 cached blocks: bh_work $BHN, work $WKN, verified +$((v1 - v0))"
	if [ "$BHN" = 0 ] && [ "$WKN" = 1 ] && [ $((v1 - v0)) = 16 ]; then
		gpass bh-large-read-in-worker
	else
		gfail bh-large-read-in-worker "bh_work $BHN, work $WKN, verified +$((v1 - v0)); want 0, 1, +16"
	fi
	traced ionice -c 3 dd if=/dev/mapper/evb of=/dev/null bs=$BS count=1 skip="$BH_BLOCK" iflag=direct 2>/dev/null
	echo "devices: bh: one cached block at the idle class: bh_work $BHN, work $WKN"
	if [ "$BHN" = 0 ] && [ "$WKN" = 1 ]; then
		gpass bh-idle-read-in-worker
	else
		gfail bh-idle-read-in-worker "bh_work $BHN, work $WKN; want 0, 1"
	fi
	# The same reads of the reference device (no option, its cache warm).
	singles /dev/mapper/ref $((BH_BLOCK - 15)) 16
	traced singles /dev/mapper/ref $((BH_BLOCK - 15)) 16
	echo "devices: bh: the same without the option: bh_work $BHN, work $WKN"
	if [ "$BHN" = 0 ] && [ "$WKN" = 16 ]; then
		gpass bh-without-option-in-worker
	else
		gfail bh-without-option-in-worker "bh_work $BHN, work $WKN; want 0, 16"
	fi
	dmsetup remove evb
else
	gfail bh-create "$(cat /tmp/bh.out /tmp/ev.out 2>/dev/null | tr '\n' ' ')"
fi
# Leaf 129 holds leaf 130's bytes (a linear table swaps them in): with its
# hash blocks cached (leaf 130 read first), the attempt where the read
# completed finds the mismatch and leaves it to the worker, which reads
# the block again, reports it and fails the read.
cb=$((BH_BLOCK + 2))
if printf '0 %s linear /dev/vdb 0\n%s %s linear /dev/vdb %s\n%s %s linear /dev/vdb %s\n' \
		$((cb * spb)) $((cb * spb)) $spb $(((cb + 1) * spb)) \
		$(((cb + 1) * spb)) $((len - (cb + 1) * spb)) $(((cb + 1) * spb)) |
		dmsetup create --noudevsync --readonly swapped 2>/tmp/bh.out &&
	dmsetup mknodes swapped && ev evx /dev/mapper/swapped /dev/mapper/hd 0 "1 try_verify_in_tasklet"; then
	gpass bh-corrupt-create
	dd if=/dev/mapper/evx of=/dev/null bs=$BS count=1 skip=$((cb + 1)) iflag=direct 2>/dev/null
	dmesg_mark
	read_cb() {
		if dd if=/dev/mapper/evx of=/dev/null bs=$BS count=1 skip="$cb" iflag=direct 2>/dev/null; then
			echo read >/tmp/cb.rc
		else
			echo failed >/tmp/cb.rc
		fi
	}
	traced read_cb
	st=$(dmsetup status evx | awk '{ print $4, $6 }')
	rep=$(dmesg_new | grep -c "data block $cb: corrupted, file inode [0-9]* byte offset $((129 * BS))")
	echo "devices: bh: corrupt block: bh_work $BHN, work $WKN; the read $(cat /tmp/cb.rc); status $st; reports $rep"
	if [ "$BHN" = 1 ] && [ "$WKN" = 1 ] && [ "$(cat /tmp/cb.rc)" = failed ] &&
		[ "$st" = "C 1" ] && [ "$rep" = 1 ]; then
		gpass bh-corrupt-fails-once
	else
		gfail bh-corrupt-fails-once "bh_work $BHN, work $WKN (want 1, 1); the read $(cat /tmp/cb.rc) (want failed); status '$st' (want 'C 1'); reports $rep (want 1)"
	fi
	dmsetup remove evx
else
	gfail bh-corrupt-create "$(cat /tmp/bh.out /tmp/ev.out 2>/dev/null | tr '\n' ' ')"
fi
dmsetup remove swapped 2>/dev/null
dmsetup remove hd 2>/dev/null
echo 0 >$T/events/kprobes/enable 2>/dev/null
echo >$T/kprobe_events 2>/dev/null
echo "$pc_default" >$pc 2>/dev/null

# --- suspend under reads over a slow hash device ------------------------------
# A small dm-bufio cache keeps hash blocks going out and coming back in, so
# that reads (and their prefetches) of the hash device are always under way.
echo 65536 >/sys/module/dm_bufio/parameters/max_cache_size_bytes
if opt_modprobe dm-delay >/tmp/dd.out 2>&1 &&
	echo "0 $hlen delay /dev/vdc 0 60" | dmsetup create --noudevsync --readonly hd &&
	dmsetup mknodes hd && ev evs /dev/vdb /dev/mapper/hd; then
	gpass suspend-delay-create
else
	gfail suspend-delay-create "$(cat /tmp/dd.out /tmp/ev.out)"
fi
hd=$(kname hd)
rm -f /tmp/stop /tmp/reader.*
# reader N: random blocks, each compared with the reference device.
reader() {
	_ok=0 _bad=0
	while [ ! -f /tmp/stop ]; do
		# shellcheck disable=SC3028 # busybox ash has RANDOM
		_b=$(( (RANDOM * 32768 + RANDOM) % BLOCKS ))
		if [ "$(md5 /dev/mapper/evs "$_b" 1)" = "$(md5 /dev/mapper/ref "$_b" 1)" ]; then
			_ok=$((_ok + 1))
		else
			_bad=$((_bad + 1))
			echo "block $_b" >>"/tmp/reader.$1.bad"
		fi
	done
	echo "$_ok $_bad" >"/tmp/reader.$1"
}
reader 1 &
reader 2 &
bad=
for round in 1 2 3 4 5 6 7 8; do
	sleep 1
	dmsetup suspend --noudevsync evs
	i1=$(inflight "$hd")
	r1=$(stat_field "$hd" 1)
	sleep 0.3
	i2=$(inflight "$hd")
	r2=$(stat_field "$hd" 1)
	dmsetup resume --noudevsync evs
	[ "$i1" = 0 ] && [ "$i2" = 0 ] && [ "$r1" = "$r2" ] ||
		bad="$bad round $round: in flight $i1 then $i2, reads $r1 then $r2;"
done
touch /tmp/stop
wait
if [ -z "$bad" ]; then gpass suspend-no-hash-io-while-suspended; else gfail suspend-no-hash-io-while-suspended "$bad"; fi
read -r ok1 bad1 <"/tmp/reader.1" 2>/dev/null
read -r ok2 bad2 <"/tmp/reader.2" 2>/dev/null
echo "devices: suspend: readers read ${ok1:-?} and ${ok2:-?} blocks"
if [ "${ok1:-0}" -gt 0 ] && [ "${ok2:-0}" -gt 0 ]; then gpass suspend-readers-read; else gfail suspend-readers-read "${ok1:-none} ${ok2:-none}"; fi
if [ "${bad1:-1}" = 0 ] && [ "${bad2:-1}" = 0 ]; then
	gpass suspend-readers-never-wrong
else
	gfail suspend-readers-never-wrong "$(cat /tmp/reader.*.bad 2>/dev/null | head -n 3 | tr '\n' ' ')"
fi
dmsetup remove evs
dmsetup remove hd

# The same, made certain: a read of data block PBLOCK fails on the data
# device (dm-error), so the read ends without verification, while the
# prefetch of its hash blocks (1 s a read here; the cache is empty on a new
# device) goes on.  Suspend must not return before that prefetch is over.
# With try_verify_in_tasklet too: dm-bufio's reset of the hash cache then
# does not wait for reads (its client may not sleep), the prefetch must.
# A lone read's prefetch runs on its CPU's worker; -busy-bh makes it while
# a read of QBLOCK, on the same CPU, waits for its hash blocks, so that it
# runs on the unbound one (extverity_submit_prefetch()).
echo "0 $hlen delay /dev/vdc 0 1000" | dmsetup create --noudevsync --readonly hp &&
	dmsetup mknodes hp
hp=$(kname hp)
printf '%s\n' "0 $((PBLOCK * spb)) linear /dev/vdb 0" "$((PBLOCK * spb)) $spb error" \
	"$(((PBLOCK + 1) * spb)) $((len - (PBLOCK + 1) * spb)) linear /dev/vdb $(((PBLOCK + 1) * spb))" |
	dmsetup create --noudevsync --readonly lp && dmsetup mknodes lp
for sfx in '' -bh -busy-bh; do
	opt=
	[ "$sfx" != '' ] && opt="1 try_verify_in_tasklet"
	if ! ev evp /dev/mapper/lp /dev/mapper/hp 0 "$opt"; then
		gfail "suspend-waits-for-prefetch$sfx" "$(cat /tmp/ev.out)"
		continue
	fi
	dmesg_mark
	r0=$(stat_field "$hp" 1)
	busy=
	if [ "$sfx" = -busy-bh ]; then
		taskset -c 0 dd if=/dev/mapper/evp of=/dev/null bs=$BS skip="$QBLOCK" count=1 \
			iflag=direct 2>/dev/null &
		busy=$!
		sleep 0.5
	fi
	taskset -c 0 dd if=/dev/mapper/evp of=/dev/null bs=$BS skip="$PBLOCK" count=1 \
		iflag=direct 2>/dev/null && echo "devices: the read of the failing block succeeded"
	dmsetup suspend --noudevsync evp
	i1=$(inflight "$hp")
	r1=$(stat_field "$hp" 1)
	sleep 1.5
	r2=$(stat_field "$hp" 1)
	[ -n "$busy" ] && wait "$busy"
	dmsetup resume --noudevsync evp
	dmsetup remove evp
	leak=$(dmesg_new | grep -c 'leaked buffer')
	echo "devices: prefetch$sfx${opt:+ ($opt)}: hash reads $r0 before the read, $r1 at suspend, $r2 1.5 s later; $i1 in flight; $leak leaked buffers"
	if [ "$i1" = 0 ] && [ "$r1" = "$r2" ] && [ "$r1" != none ] && [ "$r1" -gt "$r0" ] && [ "$leak" = 0 ]; then
		gpass "suspend-waits-for-prefetch$sfx"
	else
		gfail "suspend-waits-for-prefetch$sfx" "hash reads $r0 before, $r1 at suspend, $r2 after 1.5 s; $i1 in flight at suspend; dm-bufio leaked $leak buffers"
	fi
done
dmsetup remove lp
dmsetup remove hp

# --- check_at_most_once past INT_MAX blocks ----------------------------------
# /dev/vdd: the hash area of a 2^31 + 8 block device of 1 KiB blocks, one
# zero range; the data device is dm-zero.
big=$((BIG_BLOCKS * 2))
if opt_modprobe dm-zero >/tmp/dz.out 2>&1 &&
	echo "0 $big zero" | dmsetup create --noudevsync --readonly bigz >/tmp/dz.out 2>&1 &&
	dmsetup mknodes bigz; then
	gpass big-zero-create
else
	gfail big-zero-create "$(cat /tmp/dz.out)"
fi
bigline() { echo "0 $big extverity 1 /dev/mapper/bigz /dev/vdd 0 sha256 $BIG_ROOT$1"; }
dmesg_mark
if dmsetup create --noudevsync --readonly evb --table "$(bigline ' 1 check_at_most_once')" >/dev/null 2>&1; then
	gfail big-at-most-once-refused "table loaded"
	dmsetup remove evb
elif dmesg_new | grep -q 'extverity: Device too large for check_at_most_once'; then
	gpass big-at-most-once-refused
else
	gfail big-at-most-once-refused "$(dmesg_new | grep extverity | tail -n 1)"
fi
dmsetup remove evb 2>/dev/null
if dmsetup create --noudevsync --readonly evb --table "$(bigline)" >/tmp/ev.out 2>&1 &&
	dmsetup mknodes evb; then
	got=$(dd if=/dev/mapper/evb bs=1024 skip=$((BIG_BLOCKS - 4)) count=4 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)
	if [ "$got" = "$(head -c 4096 /dev/zero | md5sum | cut -d' ' -f1)" ]; then
		gpass big-without-option-reads-zeros
	else
		gfail big-without-option-reads-zeros "last blocks: $got"
	fi
	dmsetup remove evb
else
	gfail big-without-option-reads-zeros "$(cat /tmp/ev.out)"
fi
dmsetup remove bigz

# --- memory ------------------------------------------------------------------
# The manifest's tables are charged to the memory cgroup of the process that
# loads the table, and uncharged when the table goes.
mkdir -p /sys/fs/cgroup
mount -t cgroup2 none /sys/fs/cgroup
echo +memory >/sys/fs/cgroup/cgroup.subtree_control
mkdir /sys/fs/cgroup/load
# memory.stat's "kernel": memory.current also holds what the per-CPU charge
# stock keeps of freed pages (6.1 returns them to it, not to the counter),
# so it may not drop when the table goes.  The statistics are flushed every
# 2 s: each reading waits for a flush.
kmem() {
	sleep 5
	awk '$1 == "kernel" { print $2 }' /sys/fs/cgroup/load/memory.stat
}
# The device is made and removed outside the cgroup (making one charges
# sysfs and inode memory of its own): only the table load and its removal
# (dmsetup clear drops the loaded table) are measured.
dmsetup create --noudevsync --readonly --notable evm
c0=$(kmem)
gcheck memcg-create sh -c "echo \$\$ >/sys/fs/cgroup/load/cgroup.procs &&
	exec dmsetup load --readonly evm --table '0 $len extverity 1 /dev/vdb /dev/vdc 0 sha256 $ROOT'"
c1=$(kmem)
dmsetup clear evm
c2=$(kmem)
dmsetup remove evm
echo "devices: memcg kernel memory: $c0 bytes, $c1 with the table loaded, $c2 after it was cleared; manifest tables take $MANIFEST_BYTES at least"
if [ -n "$c0" ] && [ $((c1 - c0)) -ge "$MANIFEST_BYTES" ]; then
	gpass memcg-manifest-charged
else
	gfail memcg-manifest-charged "charged '$c0' to '$c1' bytes, want $MANIFEST_BYTES more or more"
fi
if [ -n "$c2" ] && [ $((c1 - c2)) -ge "$MANIFEST_BYTES" ]; then
	gpass memcg-manifest-uncharged-on-remove
else
	gfail memcg-manifest-uncharged-on-remove "uncharged '$c1' to '$c2' bytes when cleared, want $MANIFEST_BYTES or more"
fi

# A load over a hash device that takes 3 s a read, killed while it waits for
# one (its state D: the only uninterruptible sleep of a load is a read): it
# must give up at the next block, not read the whole manifest first.
echo "0 $hlen delay /dev/vdc 0 3000" | dmsetup create --noudevsync --readonly hk
dmsetup mknodes hk
dmsetup create --noudevsync --readonly --notable evk
dmesg_mark
dmsetup load --readonly evk --table "0 $len extverity 1 /dev/vdb /dev/mapper/hk 0 sha256 $ROOT" >/dev/null 2>&1 &
pid=$!
i=0
while [ $i -lt 200 ] && [ "$(awk '{ print $3 }' /proc/$pid/stat 2>/dev/null)" != D ]; do
	sleep 0.1
	i=$((i + 1))
done
echo "devices: killing the load after $i polls"
kill -9 $pid
wait $pid
if [ -n "$(dmsetup table --inactive evk 2>/dev/null)$(dmsetup table evk 2>/dev/null)" ]; then
	gfail load-killed-refused "the table loaded: $(dmsetup table --inactive evk)"
else
	gpass load-killed-refused
fi
if dmesg_new | grep -q 'extverity: [0-9:]*: tree table load interrupted by a fatal signal'; then
	gpass load-killed-stops-early
else
	gfail load-killed-stops-early "$(dmesg_new | grep extverity | tail -n 2)"
fi
dmsetup remove evk 2>/dev/null
dmsetup remove hk
dmsetup remove ref
