# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC1091,SC2154
# shellcheck shell=sh
#
# Guest side of t-vm-stress.sh.  /dev/vdb, /dev/vdc: image and hash area of
# device a (4 KiB, sha256); /dev/vdd, /dev/vde: those of device b (1 KiB,
# sha512).  /ctl/params: DURATION, ROOT_x, SHA_x (sha256 of what device x
# must return), SIZE_x, FBYTES_x (bytes in its files).  /ctl/x.sums,
# x.bad.sums: CRC-32 per 4 KiB chunk (stress-io); /ctl/x.sha256: the files.
#
# For DURATION seconds, on each device: dd 1 MiB buffered and dd 4 KiB
# O_DIRECT (sha256 of the whole device), stress-io seq 1 MiB O_DIRECT and
# 4 KiB buffered, stress-io rand 4 KiB O_DIRECT and buffered, and a
# filesystem reader (mount, sha256sum -c, umount).  Meanwhile one chaos
# loop suspends and resumes (with and without lockfs), reloads the same
# table (live, and while suspended), loads and clears an inactive table,
# removes and re-creates a device, drops caches; another runs a bounded
# memory hog and compacts memory.  A device about to be removed is "held"
# (file $S/hold-x): readers let go of it within a read (stress-io), a
# 4 MiB segment (dd) or 200 files (filesystem), and a pass cut short is
# not counted; once it is removed (file $S/hold-x-away, until it is back)
# stress-io readers probe it (open, close) and count the opens that find
# it gone; it comes back only after one has (file $S/hold-x-seen).  The chaos loop's first action removes and re-creates a device,
# so that every run has such a window.
#@check insmod
#@check create-a
#@check create-b
#@check a-reads-back
#@check a-control-wrong-chunk-found
#@check b-reads-back
#@check b-control-wrong-chunk-found
#@check reads-dd-1m
#@check reads-dd-4k-direct
#@check reads-seq-1m-direct
#@check reads-seq-4k
#@check reads-rand-4k-direct
#@check reads-rand-4k
#@check reads-fs
#@check no-data-errors
#@check no-other-failures
#@check chaos-suspends
#@check chaos-reloads
#@check chaos-load-clears
#@check chaos-re-creates
#@check chaos-cache-drops
#@check chaos-memory-pressure
#@check device-away-probed
#@check no-target-messages
#@check a-reads-back-after
#@check a-status-V
#@check a-remove
#@check b-reads-back-after
#@check b-status-V
#@check b-remove
#@check rmmod
. /ctl/guest-lib.sh
. /ctl/params

S=/tmp/stress
IO=/ctl/stress-io
mkdir -p $S /mnt/a /mnt/b
# The hog runs with oom_score_adj 1000; nothing else here may be chosen.
echo -1000 >/proc/self/oom_score_adj

if ext_insmod >$S/insmod.out 2>&1; then
	gpass insmod
else
	gfail insmod "$(cat $S/insmod.out)"
	exit 1
fi
MAJOR=$(awk '$2 == "device-mapper" { print $1 }' /proc/devices)
table_a=$(extverity table /dev/vdb /dev/vdc "$ROOT_a")
table_b=$(extverity table /dev/vdd /dev/vde "$ROOT_b")
now() { cut -d. -f1 /proc/uptime; }
rnd() { od -An -N2 -tu2 /dev/urandom | tr -d ' '; }
tbl() { eval echo "\$table_$1"; }
# create x: the device "sx" with a fixed minor, so that a stale node
# /dev/mapper/sx can never reach the other device.
create() {
	case $1 in a) _m=40 ;; b) _m=41 ;; esac
	dmsetup create --noudevsync --readonly -j "$MAJOR" -m $_m "s$1" \
		--table "$(tbl "$1")" && dmsetup mknodes "s$1"
}
# bad WHAT: a failure that is not a data error of a reader (those are in
# the readers' R lines).
bad() { echo "$*" >>$S/errors; }

for d in a b; do
	if ! create $d >$S/create.out 2>&1; then
		gfail "create-$d" "$(cat $S/create.out)"
		exit 1
	fi
	gpass "create-$d"
done

# Before the chaos: each device reads back whole, and a reader given one
# wrong CRC finds exactly that chunk (it does compare).
now_cs() { awk '{ printf "%d\n", $1 * 100 }' /proc/uptime; }
for d in a b; do
	c0=$(now_cs)
	sum=$(dd if=/dev/mapper/s$d bs=1M 2>/dev/null | sha256sum | cut -d' ' -f1)
	eval want=\$SHA_$d size=\$SIZE_$d
	echo "stress: device $d alone: $((size >> 20)) MiB in $(($(now_cs) - c0))0 ms"
	if [ "$sum" = "$want" ]; then
		gpass "$d-reads-back"
	else
		gfail "$d-reads-back" "sha256 $sum, expected $want"
	fi
	$IO seq /dev/mapper/s$d /ctl/$d.bad.sums 1048576 0 0 $S/none \
		>$S/control.out 2>&1
	rc=$?
	if [ $rc -eq 1 ] && grep -q ' wrong=1 other=0' $S/control.out; then
		gpass "$d-control-wrong-chunk-found"
	else
		gfail "$d-control-wrong-chunk-found" "exit $rc: $(cat $S/control.out)"
	fi
done

dmesg_mark
END=$(($(now) + DURATION))
echo "== stress for $DURATION s: 14 readers on 2 devices, chaos, memory pressure"

# dd_reader x KIND BS FLAGS: whole-device dd passes (BS in bytes), sha256
# of each.
dd_reader() {
	_n=0 _gone=0 _bad=0 _o=$S/dd.$1.$2
	eval _want=\$SHA_$1 _size=\$SIZE_$1
	while [ "$(now)" -lt $END ]; do
		if [ -e $S/hold-$1 ]; then
			sleep 0.05
			continue
		fi
		# In 4 MiB segments, so that a hold (the chaos waiting to
		# remove the device) is seen within one segment, not one pass:
		# a whole pass can take minutes on the debug kernel.
		: >$_o.err
		rm -f $_o.cut
		_sum=$(_i=0
			while [ $((_i * 4194304)) -lt $_size ]; do
				if [ -e $S/hold-$1 ]; then
					: >$_o.cut
					break
				fi
				dd if=/dev/mapper/s$1 bs=$3 $4 skip=$((_i * 4194304 / $3)) \
					count=$((4194304 / $3)) 2>>$_o.err || break
				_i=$((_i + 1))
			done | sha256sum | cut -d' ' -f1)
		if [ -e $_o.cut ]; then
			continue
		elif [ "$_sum" = "$_want" ]; then
			_n=$((_n + 1))
		elif grep -q "can't open.*No such" $_o.err; then
			_gone=$((_gone + 1))
			sleep 0.05
		else
			_bad=$((_bad + 1))
			bad "dd $1 $2: sha256 $_sum: $(tr '\n' ' ' <$_o.err)"
		fi
	done
	echo "R passes=$_n bytes=$((_n * _size)) probes=0 gone=$_gone eio=0 wrong=$_bad other=0" >$_o
}

# fs_reader x: mount, check every file, umount.
fs_reader() {
	_n=0 _gone=0 _bad=0 _busy=0 _o=$S/fs.$1
	while [ "$(now)" -lt $END ]; do
		if [ -e $S/hold-$1 ]; then
			sleep 0.05
			continue
		fi
		if ! mount -t ext4 -o ro,noload /dev/mapper/s$1 /mnt/$1 2>$_o.err; then
			if grep -q 'No such' $_o.err; then
				_gone=$((_gone + 1))
				sleep 0.05
			elif grep -q 'resource busy' $_o.err; then
				# Mounting a frozen device (dmsetup suspend with
				# lockfs) fails with EBUSY by design.
				_busy=$((_busy + 1))
				sleep 0.05
			else
				_bad=$((_bad + 1))
				bad "mount $1: $(cat $_o.err)"
			fi
			continue
		fi
		# The files in parts of 200 (split by the host), checking for
		# a hold between parts, as dd_reader does between segments.
		_cut=0 _ok=1
		for _p in /ctl/$1.part.*; do
			if [ -e $S/hold-$1 ]; then
				_cut=1
				break
			fi
			(cd /mnt/$1 && sha256sum -c -s $_p) >$_o.err 2>&1 || {
				_ok=0
				break
			}
		done
		if [ $_cut = 1 ]; then
			:
		elif [ $_ok = 1 ]; then
			_n=$((_n + 1))
		else
			_bad=$((_bad + 1))
			bad "fs $1: $(head -n 5 $_o.err | tr '\n' ' ')"
		fi
		umount /mnt/$1 2>>$_o.err || bad "umount $1: $(cat $_o.err)"
	done
	eval _size=\$FBYTES_$1
	echo "R passes=$_n bytes=$((_n * _size)) probes=0 gone=$_gone eio=0 wrong=$_bad other=0 busy=$_busy" >$_o
}

# io_reader x KIND MODE BS DIRECT
io_reader() {
	$IO "$3" /dev/mapper/s$1 /ctl/$1.sums "$4" "$5" $END $S/hold-$1 \
		>$S/io.$1.$2 2>$S/io.$1.$2.err ||
		bad "stress-io $1 $2: $(head -n 5 $S/io.$1.$2.err | tr '\n' ' ')"
}

# The chaos loop: one action every 0-0.9 s on a random device.
chaos() {
	_i=0 _susp=0 _reload=0 _clear=0 _recreate=0 _busy=0 _drop=0
	# Until END, and at least one round of all eight actions (a loaded
	# host can make a short run end before a round is done).
	while [ "$(now)" -lt $END ] ||
		{ [ $_i -lt 8 ] && [ "$(now)" -lt $((END + 120)) ]; }; do
		_d=a
		[ $(($(rnd) % 2)) -eq 1 ] && _d=b
		# A removal needs readers to probe the device while it is
		# away, and a reader stops at END unless the hold is already
		# there: no removal starts within 10 s of END (the first
		# round's has come first).
		if [ $((_i % 8)) -eq 0 ] && [ $_i -gt 0 ] &&
			[ $(($(now) + 10)) -ge $END ]; then
			break
		fi
		case $((_i % 8)) in
		4 | 3)
			_f=
			[ $((_i % 8)) -eq 3 ] && _f=--nolockfs
			dmsetup suspend $_f s$_d || bad "suspend $_f s$_d"
			sleep 0.$(($(rnd) % 5))
			dmsetup resume s$_d || bad "resume s$_d"
			_susp=$((_susp + 1))
			;;
		1)
			{ dmsetup load --readonly s$_d --table "$(tbl $_d)" &&
				dmsetup resume s$_d; } || bad "reload s$_d"
			_reload=$((_reload + 1))
			;;
		5)
			# A table that is never made live.
			{ dmsetup load --readonly s$_d --table "$(tbl $_d)" &&
				dmsetup clear s$_d; } || bad "load+clear s$_d"
			_clear=$((_clear + 1))
			;;
		7)
			# Reload while suspended: the new table replaces the old
			# one with reads queued.
			{ dmsetup suspend s$_d &&
				dmsetup load --readonly s$_d --table "$(tbl $_d)" &&
				dmsetup resume s$_d; } || bad "suspend+reload s$_d"
			_susp=$((_susp + 1))
			_reload=$((_reload + 1))
			;;
		0)
			# First of all, so that every run has a device away.
			touch $S/hold-$_d
			_t0=$(now)
			until dmsetup remove --noudevsync s$_d 2>/dev/null; do
				_busy=$((_busy + 1))
				if [ $(($(now) - _t0)) -gt 120 ]; then
					bad "remove s$_d: still busy after 120 s"
					break
				fi
				sleep 0.02
			done
			# Away: the stress-io readers probe it (open, close).
			# Re-created once a probe has found it gone (the file
			# hold-x-seen), so that a starved reader cannot miss
			# the window; at most 120 s.
			rm -f $S/hold-$_d-seen
			touch $S/hold-$_d-away
			sleep 0.$((5 + $(rnd) % 5))
			_t0=$(now)
			until [ -s $S/hold-$_d-seen ]; do
				if [ $(($(now) - _t0)) -gt 120 ]; then
					bad "s$_d away: no probe found it gone in 120 s"
					break
				fi
				sleep 0.05
			done
			create $_d >$S/chaos-create.out 2>&1 ||
				bad "re-create s$_d: $(cat $S/chaos-create.out)"
			rm -f $S/hold-$_d-away $S/hold-$_d $S/hold-$_d-seen
			_recreate=$((_recreate + 1))
			;;
		*)
			echo 3 >/proc/sys/vm/drop_caches
			_drop=$((_drop + 1))
			;;
		esac
		echo "$(now) $((_i % 8)) s$_d" >>$S/chaos.log
		_i=$((_i + 1))
		sleep 0.$(($(rnd) % 10))
	done
	echo "suspends=$_susp reloads=$_reload load-clears=$_clear re-creates=$_recreate" \
		"busy-removes=$_busy cache-drops=$_drop" >$S/chaos
}

# Memory pressure: a hog taking 70 % of MemAvailable for 2 s, then a
# compaction, every 2-5 s.
pressure() {
	_n=0 _c=0
	while [ $(($(now) + 3)) -lt $END ]; do
		sleep $((2 + $(rnd) % 4))
		$IO hog 70 2 >>$S/hog.out 2>&1 || bad "hog: $(tail -n 1 $S/hog.out)"
		_n=$((_n + 1))
		echo 1 >/proc/sys/vm/compact_memory && _c=$((_c + 1))
	done
	echo "pressure-rounds=$_n compactions=$_c" >$S/pressure
}

t0=$(now)
# Readers at nice 10 and the chaos at -20, like the target's (WQ_HIGHPRI)
# workers, so that the chaos keeps its pace on 2 vCPUs.
renice 10 $$ >/dev/null
for d in a b; do
	dd_reader $d dd-1m 1048576 "" &
	dd_reader $d dd-4k-direct 4096 iflag=direct &
	io_reader $d seq-1m-direct seq 1048576 1 &
	io_reader $d seq-4k seq 4096 0 &
	io_reader $d rand-4k-direct rand 4096 1 &
	io_reader $d rand-4k rand 4096 0 &
	fs_reader $d &
done
renice -20 $$ >/dev/null
chaos &
renice 0 $$ >/dev/null
pressure &
wait
t1=$(now)

# Figures per reader kind, both devices added.
total() { # FIELD FILES...
	_f=$1
	shift
	cat "$@" 2>/dev/null | sed -n "s/.* $_f=\([0-9]*\).*/\1/p" |
		awk '{ s += $1 } END { print s + 0 }'
}
passes_line=
for k in dd.*.dd-1m dd.*.dd-4k-direct io.*.seq-1m-direct io.*.seq-4k \
	io.*.rand-4k-direct io.*.rand-4k fs.*; do
	files=$(ls $S/$k 2>/dev/null | grep -v '\.err$')
	name=$(echo "$k" | sed 's/^[a-z]*\.\*\.//; s/^fs\.\*$/fs/')
	p=$(total passes $files)
	passes_line="$passes_line $name=$p"
	[ -n "$files" ] && [ "$(echo "$files" | wc -l)" -eq 2 ] ||
		bad "reader kind $name: $(echo "$files" | wc -l) result files, expected 2"
	# Each reader must have checked bytes; a whole pass is not required
	# (a slow 4 KiB buffered pass may not finish a short run on a busy
	# host), but what was read was checked chunk by chunk.
	b=$(total bytes $files)
	if [ "$b" -gt 0 ]; then
		gpass "reads-$name"
	else
		gfail "reads-$name" "nothing read and checked"
	fi
done
all=$(ls $S/dd.*.* $S/io.*.* $S/fs.* | grep -v '\.err$')
mib=$(($(total bytes $all) >> 20))
gone=$(total gone $all)
probes=$(total probes $all)
eio=$(total eio $all)
wrong=$(total wrong $all)
other=$(total other $all)
hogs=$(sed -n 's/^H mib=\([0-9]*\).*/\1/p' $S/hog.out 2>/dev/null | sort -n | tail -n 1)
# The longest the hog took to fill one 8 MiB piece (page faults).
hogms=$(sed -n 's/^H .*slowest-piece-ms=\([0-9]*\).*/\1/p' $S/hog.out 2>/dev/null |
	sort -n | tail -n 1)
echo "stress: $((t1 - t0)) s; passes:$passes_line"
echo "stress: $mib MiB read and checked; eio=$eio wrong=$wrong other=$other;" \
	"gone=$gone (opens while a device was away, $probes probes);" \
	"mount-busy=$(total busy $all) (mounts while frozen)"
echo "stress: $(cat $S/chaos 2>/dev/null) $(cat $S/pressure 2>/dev/null) largest-hog=${hogs:-0}MiB" \
	"slowest-hog-piece=${hogms:-0}ms"
if [ "$eio" -eq 0 ] && [ "$wrong" -eq 0 ] && [ "$other" -eq 0 ]; then
	gpass no-data-errors
else
	gfail no-data-errors "eio=$eio wrong=$wrong other=$other:" \
		"$(cat $S/*.err 2>/dev/null | sort | uniq -c | sort -rn | head -n 5 | tr '\n' ' ')"
fi
if [ -s $S/errors ]; then
	gfail no-other-failures "$(sort $S/errors | uniq -c | head -n 5 | tr '\n' ' ')"
else
	gpass no-other-failures
fi
for k in suspends reloads load-clears re-creates cache-drops; do
	n=$(sed -n "s/.*$k=\([0-9]*\).*/\1/p" $S/chaos 2>/dev/null)
	if [ "${n:-0}" -gt 0 ]; then
		gpass "chaos-$k"
	else
		gfail "chaos-$k" "none done: $(cat $S/chaos 2>/dev/null)"
	fi
done
n=$(sed -n 's/.*pressure-rounds=\([0-9]*\).*/\1/p' $S/pressure 2>/dev/null)
if [ "${n:-0}" -gt 0 ] && [ "${hogs:-0}" -gt 0 ]; then
	gpass chaos-memory-pressure
else
	gfail chaos-memory-pressure "$(cat $S/pressure $S/hog.out 2>/dev/null | tr '\n' ' ')"
fi
# While a device was away the stress-io readers probed it, and the opens
# found it gone (ENOENT, ENXIO, ENODEV; any other error is "other" above).
io=
for f in $S/io.*.*; do
	case $f in *.err) ;; *) io="$io $f" ;; esac
done
probes_io=$(total probes $io)
gone_io=$(total gone $io)
if [ "$probes_io" -gt 0 ] && [ "$gone_io" -gt 0 ]; then
	gpass "device-away-probed ($probes_io probes, $gone_io found it gone)"
else
	gfail device-away-probed "$probes_io probes, $gone_io opens found the device gone"
fi
# The target logged nothing: no corruption, no I/O error.
dmesg_new | grep -E 'extverity|I/O error' | grep -v 'Runtime' >$S/klog
if [ -s $S/klog ]; then
	gfail no-target-messages "$(head -n 5 $S/klog | tr '\n' ' ')"
else
	gpass no-target-messages
fi

# Afterwards: both devices still read back whole and report V, 0 corrupt.
for d in a b; do
	sum=$(dd if=/dev/mapper/s$d bs=1M 2>/dev/null | sha256sum | cut -d' ' -f1)
	eval want=\$SHA_$d
	if [ "$sum" = "$want" ]; then
		gpass "$d-reads-back-after"
	else
		gfail "$d-reads-back-after" "sha256 $sum, expected $want"
	fi
	st=$(dmsetup status s$d)
	echo "status s$d: $st"
	case $st in
	*" extverity V "*) set -- $st
		if [ "$6" = 0 ]; then gpass "$d-status-V"; else gfail "$d-status-V" "$st"; fi ;;
	*) gfail "$d-status-V" "$st" ;;
	esac
	gcheck "$d-remove" dmsetup remove --noudevsync s$d
done
gcheck rmmod rmmod dm_extverity
cp -r $S /results/stress 2>/dev/null
