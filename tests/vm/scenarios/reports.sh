# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC1091,SC2154,SC2046
# shellcheck shell=sh
#
# Guest side of t-vm-reports.sh.  /dev/vdb is the image, /dev/vdc its hash
# area, /dev/vdd a copy of the image with the blocks of /ctl/flips damaged
# ("BLOCK INODE OFFSET" each, in the order they are read here), /dev/vde a
# copy of the hash area whose level-0 hash block L0B1 (the one over
# two-levels' blocks 128-129, T128 and T129) is damaged, /dev/vdf and
# /dev/vdg copies of the image and the hash area in which block TOPF_B3 and
# its digest in the packed top are forged alike.  /ctl/params has
# the blocks and the expectations (t-vm-reports.sh).
#
# The log's forms run first: the cap's reads that follow are more than the
# log's rate limit lets through.  The readahead checks run last: a target
# that took a failed readahead for an error would restart or panic there.
#@check insmod
. /ctl/guest-lib.sh
. /ctl/params

if ! ext_insmod >/tmp/insmod.out 2>&1; then
	gfail insmod "$(cat /tmp/insmod.out)"
	exit 1
fi
gpass insmod
spb=$((BS / 512))
len=$((BLOCKS * spb))

# ev NAME DATA HASH [OPTS]: an extverity device.
ev() {
	dmsetup create --noudevsync --readonly "$1" --table \
		"0 $len extverity 1 $2 $3 0 sha256 $ROOT${4:+ $4}" >/tmp/ev.out 2>&1 &&
		dmsetup mknodes "$1"
}
# mk NAME: a device from the table on stdin.
mk() {
	dmsetup create --noudevsync --readonly "$1" >/tmp/mk.out 2>&1 &&
		dmsetup mknodes "$1"
}
# blk DEV B: read block B of DEV with O_DIRECT.
blk() { dd if="$1" of=/dev/null bs="$BS" skip="$2" count=1 iflag=direct 2>/dev/null; }
# md5 DEV SKIP COUNT [FLAG]: md5 of blocks of DEV (FLAG: dd's iflag).
md5() {
	dd if="$1" bs="$BS" skip="$2" count="$3" ${4:+iflag=$4} 2>/dev/null | md5sum | cut -d' ' -f1
}
# kname NAME: dm-N; devno NAME: MAJOR:MINOR, as the target names itself.
kname() { echo "dm-$(dmsetup info -c --noheadings -o minor "$1")"; }
devno() { dmsetup info -c --noheadings -o major,minor "$1" | tr -d ' '; }
# stat_field DM FIELD: a field of /sys/block/DM/stat (1: reads completed).
stat_field() { awk -v f="$2" '{ print $f }' "/sys/block/$1/stat" 2>/dev/null || echo none; }
# corrupted NAME: the answer to the corrupted message, lines joined by "|".
corrupted() { dmsetup message "$1" 0 corrupted 2>&1 | tr '\n' '|'; }
# status NAME: "FLAG CORRUPT" of the target's status line.
status() { dmsetup status "$1" | awk '{ print $4, $6 }'; }
# lines RE: the extverity lines since the mark that match RE (grep -E).
lines() { dmesg_new | grep 'device-mapper: extverity: ' | grep -E -- "$1"; }
# exact TEXT: how many lines since the mark end with "extverity: TEXT".
exact() {
	dmesg_new | awk -v t="device-mapper: extverity: $1" '
		substr($0, length($0) - length(t) + 1) == t { n++ } END { print n + 0 }'
}

# --- the log's forms ----------------------------------------------------------
# Hash tree corrupted: the level-0 block over T128 and T129 is damaged.
#@check tree-create
#@check tree-intact-neighbour-reads
#@check tree-blocks-eio
#@check tree-message
#@check tree-status-C
#@check tree-corrupted
dmesg_mark
if ev et /dev/vdb /dev/vde; then
	gpass tree-create
	d=$(devno et)
	a=$(md5 /dev/mapper/et "$T127" 1 direct)
	b=$(md5 /dev/vdb "$T127" 1 direct)
	if [ "$a" = "$b" ]; then gpass tree-intact-neighbour-reads; else gfail tree-intact-neighbour-reads "block $T127: $a, want $b"; fi
	f=
	blk /dev/mapper/et "$T128" && f="$f $T128"
	blk /dev/mapper/et "$T129" && f="$f $T129"
	if [ -z "$f" ]; then gpass tree-blocks-eio; else gfail tree-blocks-eio "read:$f"; fi
	o=$((128 * BS))
	m1="$d: data block $T128: hash tree corrupted, file inode $TWO_INO byte offset $o"
	m2="$d: data block $T129: hash tree corrupted, file inode $TWO_INO byte offset $((o + BS))"
	n1=$(exact "$m1")
	n2=$(exact "$m2")
	all=$(lines 'data block' | grep -c .)
	if [ "$n1" = 1 ] && [ "$n2" = 1 ] && [ "$all" = 2 ]; then
		gpass tree-message
	else
		gfail tree-message "want once each '$m1' and '$m2' and no other report; got $n1, $n2 of $all: $(lines 'data block' | head -n 3 | tr '\n' '|')"
	fi
	s=$(status et)
	if [ "$s" = "C 2" ]; then gpass tree-status-C; else gfail tree-status-C "status flag and corrupt count '$s', want 'C 2'"; fi
	# The damaged hash block counts for the file whose tree it is.
	c=$(corrupted et)
	want="$TWO_INO $((128 * BS)) 2|"
	if [ "$c" = "$want" ]; then gpass tree-corrupted; else gfail tree-corrupted "'$c', want '$want'"; fi
	dmsetup remove et
else
	gfail tree-create "$(cat /tmp/ev.out)"
fi

# Data corrupted, metadata and file forms, on the damaged copy.
#@check forms-create
#@check meta-block-eio
#@check meta-message
#@check file-block-eio
#@check file-message
#@check forms-corrupted
#@check forms-status-names-them
dmesg_mark
if ev em /dev/vdd /dev/vdc; then
	gpass forms-create
	d=$(devno em)
	if blk /dev/mapper/em "$META_BLK"; then gfail meta-block-eio "block $META_BLK read"; else gpass meta-block-eio; fi
	m="$d: data block $META_BLK: corrupted, metadata"
	n=$(exact "$m")
	all=$(lines "data block $META_BLK:" | grep -c .)
	if [ "$n" = 1 ] && [ "$all" = 1 ]; then
		gpass meta-message
	else
		gfail meta-message "want '$m' once; got $n of $all: $(lines "data block $META_BLK:" | head -n 2 | tr '\n' '|')"
	fi
	if blk /dev/mapper/em "$FILE_BLK"; then gfail file-block-eio "block $FILE_BLK read"; else gpass file-block-eio; fi
	m="$d: data block $FILE_BLK: corrupted, file inode $FILE_INO byte offset $FILE_OFF"
	n=$(exact "$m")
	all=$(lines "data block $FILE_BLK:" | grep -c .)
	if [ "$n" = 1 ] && [ "$all" = 1 ]; then
		gpass file-message
	else
		gfail file-message "want '$m' once; got $n of $all: $(lines "data block $FILE_BLK:" | head -n 2 | tr '\n' '|')"
	fi
	# Metadata as inode 0 at its offset on the device, then the file.
	c=$(corrupted em)
	want="0 $((META_BLK * BS)) 1|$FILE_INO $FILE_OFF 1|"
	if [ "$c" = "$want" ]; then gpass forms-corrupted; else gfail forms-corrupted "'$c', want '$want'"; fi
	# extverity status: the same two, the file by one of its paths (the
	# hash area's FILES, read from the table's hash device).
	extverity status em >/tmp/st.out 2>&1
	m=$(grep -c "damaged: *metadata at byte $((META_BLK * BS)) (1 block)\$" /tmp/st.out)
	p=$(sed -n "s|^ *\(damaged: *\)\{0,1\}\(/[^ ]*\) (inode $FILE_INO, byte $FILE_OFF, 1 block)\$|\2|p" /tmp/st.out)
	case " $FILE_PATHS " in
	*" $p "*) [ -n "$p" ] && [ "$m" = 1 ] && ok=1 || ok= ;;
	*) ok= ;;
	esac
	if [ -n "$ok" ]; then
		gpass "forms-status-names-them (metadata, $p)"
	else
		gfail forms-status-names-them "want metadata and one of $FILE_PATHS: $(sed -n '/damaged:/,$p' /tmp/st.out | tr '\n' '|')"
	fi
	dmsetup remove em
else
	gfail forms-create "$(cat /tmp/ev.out)"
fi

# --- a top is checked again when its buffer is read again -------------------
# Over linear devices on the image and the hash area: a read of the file
# checks its packed top.  Then, suspended (which empties the target's
# cache), the lower devices are switched to the forged copies: the top now
# holds the forged block's digest, and only its check against the root,
# which must be done again on the buffer read again, fails the read.
#@check top-create
#@check top-reads
#@check top-swapped
#@check top-forged-block-eio
#@check top-intact-block-eio
#@check top-message
#@check top-corrupted
dmesg_mark
hlen=$(blockdev --getsz /dev/vdc)
if echo "0 $len linear /dev/vdb 0" | mk tl &&
	echo "0 $hlen linear /dev/vdc 0" | mk th && ev etop /dev/mapper/tl /dev/mapper/th; then
	gpass top-create
	d=$(devno etop)
	a=$(md5 /dev/mapper/etop "$TOPF_B3" 1 direct)
	b=$(md5 /dev/vdb "$TOPF_B3" 1 direct)
	if [ "$a" = "$b" ]; then gpass top-reads; else gfail top-reads "block $TOPF_B3: $a, want $b"; fi
	# swap NAME DEV LEN: point linear device NAME at DEV.
	swap() {
		echo "0 $3 linear $2 0" | dmsetup load --readonly "$1" >/tmp/swap.out 2>&1 &&
			dmsetup suspend "$1" && dmsetup resume "$1"
	}
	if dmsetup suspend etop && swap tl /dev/vdf "$len" && swap th /dev/vdg "$hlen" &&
		dmsetup resume etop; then
		a=$(md5 /dev/mapper/tl "$TOPF_B3" 1 direct)
		b=$(md5 /dev/vdf "$TOPF_B3" 1 direct)
		c=$(md5 /dev/vdb "$TOPF_B3" 1 direct)
		if [ "$a" = "$b" ] && [ "$a" != "$c" ]; then
			gpass top-swapped
		else
			gfail top-swapped "block $TOPF_B3 below the target: $a, forged $b, intact $c"
		fi
	else
		gfail top-swapped "switching the lower devices: $(cat /tmp/swap.out)"
	fi
	if blk /dev/mapper/etop "$TOPF_B3"; then
		gfail top-forged-block-eio "forged block $TOPF_B3 read: its forged digest in the top was not checked against the root"
	else
		gpass top-forged-block-eio
	fi
	if blk /dev/mapper/etop "$TOPF_B0"; then gfail top-intact-block-eio "block $TOPF_B0 read under a forged top"; else gpass top-intact-block-eio; fi
	m1="$d: data block $TOPF_B3: hash tree corrupted, file inode $TOPF_INO byte offset $((3 * BS))"
	m2="$d: data block $TOPF_B0: hash tree corrupted, file inode $TOPF_INO byte offset 0"
	n1=$(exact "$m1")
	n2=$(exact "$m2")
	all=$(lines 'data block' | grep -c .)
	if [ "$n1" = 1 ] && [ "$n2" = 1 ] && [ "$all" = 2 ]; then
		gpass top-message
	else
		gfail top-message "want once each '$m1' and '$m2' and no other report; got $n1, $n2 of $all: $(lines 'data block' | head -n 3 | tr '\n' '|')"
	fi
	# Block 3 found first, block 0 then: the first bad offset is 0.
	c=$(corrupted etop)
	want="$TOPF_INO 0 2|"
	if [ "$c" = "$want" ]; then gpass top-corrupted; else gfail top-corrupted "'$c', want '$want'"; fi
	dmsetup remove etop
	dmsetup remove tl
	dmsetup remove th
else
	gfail top-create "$(cat /tmp/mk.out /tmp/ev.out 2>/dev/null)"
fi

# --- the uevent cap -----------------------------------------------------------
# uevents FILE: "BLOCK INODE OFFSET ACTION DEVPATH" per corruption uevent.
uevents() {
	awk '
		function out() { if (b != "") print b, i, o, a, p; b = i = o = "" }
		/^== / { out(); a = $2; p = $3; next }
		/^DM_EXTVERITY_ERR_BLOCK_NR=/ { b = substr($0, index($0, "=") + 1) }
		/^DM_EXTVERITY_ERR_INODE=/ { i = substr($0, index($0, "=") + 1) }
		/^DM_EXTVERITY_ERR_OFFSET=/ { o = substr($0, index($0, "=") + 1) }
		END { out() }' "$1"
}
# uevent_settle FILE: wait (up to 60 s) until FILE has stopped growing for
# 3 s: the helper runs once per event, one after another.
uevent_settle() {
	_us_last=-1 _us_same=0 _us_i=0
	while [ $_us_i -lt 120 ] && [ $_us_same -lt 6 ]; do
		_us_n=$(wc -c <"$1")
		if [ "$_us_n" = "$_us_last" ]; then _us_same=$((_us_same + 1)); else _us_same=0; fi
		_us_last=$_us_n
		sleep 0.5
		_us_i=$((_us_i + 1))
	done
}

#@check cap-create
#@check cap-reads-fail
#@check cap-status-counts-every-read
#@check cap-uevents-exactly-100
#@check cap-uevents-first-100-blocks
#@check cap-uevents-inode-offset
#@check cap-log-once
#@check cap-per-device
#@check cap-corrupted-first-64-files
#@check cap-corrupted-per-device
if ev ec /dev/vdd /dev/vdc; then
	gpass cap-create
	d=$(devno ec)
	path=/devices/virtual/block/$(kname ec)
	# After the create: dm's own change event does not count.
	uevent_start /tmp/ue
	dmesg_mark
	ok=
	while read -r b _; do
		blk /dev/mapper/ec "$b" && ok="$ok $b"
	done </ctl/flips
	uevent_settle /tmp/ue
	uevent_stop
	if [ -z "$ok" ]; then gpass cap-reads-fail; else gfail cap-reads-fail "these reads succeeded:$(echo "$ok" | cut -c1-200)"; fi
	s=$(status ec)
	if [ "$s" = "C $NFLIPS" ]; then
		gpass cap-status-counts-every-read
	else
		gfail cap-status-counts-every-read "status flag and corrupt count '$s', want 'C $NFLIPS'"
	fi
	uevents /tmp/ue >/tmp/ue.list
	n=$(grep -c . /tmp/ue.list)
	other=$(awk -v p="$path" '$4 != "change" || $5 != p' /tmp/ue.list | head -n 2 | tr '\n' '|')
	echo "reports: cap: $NFLIPS corrupt blocks read, $n corruption uevents"
	if [ "$n" = 100 ] && [ -z "$other" ]; then
		gpass cap-uevents-exactly-100
	else
		gfail cap-uevents-exactly-100 "$n corruption uevents, want 100 change events of $path${other:+; other: $other}"
	fi
	head -n 100 /ctl/flips | awk '{ print $1 }' | sort >/tmp/want.b
	awk '{ print $1 }' /tmp/ue.list | sort >/tmp/got.b
	if cmp -s /tmp/want.b /tmp/got.b; then
		gpass cap-uevents-first-100-blocks
	else
		gfail cap-uevents-first-100-blocks "missing: $(comm -23 /tmp/want.b /tmp/got.b | head -n 5 | tr '\n' ' ')extra: $(comm -13 /tmp/want.b /tmp/got.b | head -n 5 | tr '\n' ' ')"
	fi
	# Each uevent's inode and offset are its block's.
	bad=$(awk 'NR == FNR { want[$1] = $2 " " $3; next }
		!($1 in want) || want[$1] != $2 " " $3 { print $1, $2, $3 }' /ctl/flips /tmp/ue.list | head -n 3 | tr '\n' '|')
	if [ "$n" -gt 0 ] && [ -z "$bad" ]; then
		gpass cap-uevents-inode-offset
	else
		gfail cap-uevents-inode-offset "${bad:-no uevent}"
	fi
	m="$d: reached the maximum of 100 corruption uevents"
	c=$(exact "$m")
	all=$(lines 'maximum' | grep -c .)
	if [ "$c" = 1 ] && [ "$all" = 1 ]; then gpass cap-log-once; else gfail cap-log-once "'$m': $c times, $all lines on the maximum"; fi
	# The damaged files in the order read, each with its lowest offset
	# and its number of blocks; past 64 files, the others' blocks.
	want=$(awk '
		!($2 in n) { order[k++] = $2; off[$2] = $3 }
		$3 < off[$2] { off[$2] = $3 }
		{ n[$2]++ }
		END {
			for (i = 0; i < k; i++) {
				f = order[i]
				if (i < 64) printf "%s %s %d|", f, off[f], n[f]
				else more += n[f]
			}
			if (more) printf "more %d|", more
		}' /ctl/flips)
	c=$(corrupted ec)
	echo "reports: corrupted: $(echo "$c" | tr '|' '\n' | grep -c .) lines, last $(echo "$c" | tr '|' '\n' | tail -n 2 | tr '\n' ' ')"
	case $want in
	*"|more "*) ;;
	*) want="(the flips do not damage more than 64 files) $want" ;;
	esac
	if [ "$c" = "$want" ]; then
		gpass cap-corrupted-first-64-files
	else
		gfail cap-corrupted-first-64-files "got '$(echo "$c" | cut -c1-300)', want '$(echo "$want" | cut -c1-300)'"
	fi
	# A second device over the same disk has a cap of its own.
	read -r b0 i0 o0 </ctl/flips
	if ev ec2 /dev/vdd /dev/vdc; then
		uevent_start /tmp/ue2
		blk /dev/mapper/ec2 "$b0"
		uevent_settle /tmp/ue2
		uevent_stop
		got=$(uevents /tmp/ue2 | awk '{ print $1, $2, $3 }' | tr '\n' '|')
		if [ "$got" = "$b0 $i0 $o0|" ]; then gpass cap-per-device; else gfail cap-per-device "uevents of a fresh device for block $b0: '$got'"; fi
		c=$(corrupted ec2)
		if [ "$c" = "$i0 $o0 1|" ]; then gpass cap-corrupted-per-device; else gfail cap-corrupted-per-device "'$c', want '$i0 $o0 1|'"; fi
		dmsetup remove ec2
	else
		gfail cap-per-device "$(cat /tmp/ev.out)"
		gfail cap-corrupted-per-device "$(cat /tmp/ev.out)"
	fi
	dmsetup remove ec
else
	gfail cap-create "$(cat /tmp/ev.out)"
fi

# --- a failed readahead is not an error ---------------------------------------
# ld: the image, but block RA_BAD goes through rd (linear, so that its
# reads are counted) to re (dm-error).  lh: the hash area, its block L0B1
# through hd to he alike.
#@check ra-lower-create
#@check ra-lower-fails
if echo "0 $spb error" | mk re && echo "0 $spb linear /dev/mapper/re 0" | mk rd &&
	echo "0 $spb error" | mk he && echo "0 $spb linear /dev/mapper/he 0" | mk hd &&
	printf '%s\n' "0 $((RA_BAD * spb)) linear /dev/vdb 0" \
		"$((RA_BAD * spb)) $spb linear /dev/mapper/rd 0" \
		"$(((RA_BAD + 1) * spb)) $((len - (RA_BAD + 1) * spb)) linear /dev/vdb $(((RA_BAD + 1) * spb))" | mk ld &&
	hlen=$(blockdev --getsz /dev/vdc) &&
	printf '%s\n' "0 $((L0B1 * spb)) linear /dev/vdc 0" \
		"$((L0B1 * spb)) $spb linear /dev/mapper/hd 0" \
		"$(((L0B1 + 1) * spb)) $((hlen - (L0B1 + 1) * spb)) linear /dev/vdc $(((L0B1 + 1) * spb))" | mk lh; then
	gpass ra-lower-create
else
	gfail ra-lower-create "$(cat /tmp/mk.out)"
fi
# The failing blocks fail when read below the target, and nothing else does.
f=
blk /dev/mapper/ld "$RA_BAD" && f="$f ld block $RA_BAD read;"
blk /dev/mapper/lh "$L0B1" && f="$f lh block $L0B1 read;"
blk /dev/mapper/ld $((RA_BAD - 1)) || f="$f ld block $((RA_BAD - 1)) failed;"
blk /dev/mapper/lh $((L0B1 - 1)) || f="$f lh block $((L0B1 - 1)) failed;"
if [ -z "$f" ]; then gpass ra-lower-fails; else gfail ra-lower-fails "$f"; fi
rd=$(kname rd)
hd=$(kname hd)
want=$(md5 /dev/vdb "$RA_SKIP" "$RA_COUNT" direct)
T=/sys/kernel/tracing
if [ "$TRACING" = 1 ]; then
	mount -t tracefs nodev $T 2>/dev/null
	# block_bio_complete is enabled from the kernel command line (see
	# t-vm-reports.sh): here only recording is switched, no code patched.
	echo 0 >$T/tracing_on
	echo 4096 >$T/buffer_size_kb
fi

#@check ra-data-restart-create
#@check ra-data-restart-reads
#@check ra-data-restart-reached
#@check ra-data-restart-status-V
#@check ra-data-panic-create
#@check ra-data-panic-reads
#@check ra-data-panic-reached
#@check ra-data-panic-status-V
#@check ra-hash-restart-create
#@check ra-hash-restart-reads
#@check ra-hash-restart-reached
#@check ra-hash-restart-status-V
#@check ra-hash-panic-create
#@check ra-hash-panic-reads
#@check ra-hash-panic-reached
#@check ra-hash-panic-status-V
for lower in data hash; do
	if [ $lower = data ]; then
		data=/dev/mapper/ld hash=/dev/vdc bad=$rd sector=$((RA_BAD * spb))
	else
		data=/dev/vdb hash=/dev/mapper/lh bad=$hd sector=$((T128 * spb))
	fi
	for mode in restart panic; do
		n=ra-$lower-$mode
		if ! ev ra "$data" "$hash" "1 ${mode}_on_error"; then
			gfail "$n-create" "$(cat /tmp/ev.out)"
			continue
		fi
		gpass "$n-create"
		d=$(devno ra | tr : ,)
		blockdev --setra 2048 /dev/mapper/ra
		echo 3 >/proc/sys/vm/drop_caches
		r0=$(stat_field "$bad" 1)
		if [ "$TRACING" = 1 ]; then
			: >$T/trace
			echo 1 >$T/tracing_on
		fi
		# Buffered, sequential: the page cache reads ahead of dd.
		got=$(md5 /dev/mapper/ra "$RA_SKIP" "$RA_COUNT")
		if [ "$TRACING" = 1 ]; then
			echo 0 >$T/tracing_on
			cp $T/trace /tmp/trace.$n
		fi
		r1=$(stat_field "$bad" 1)
		echo "reports: $n: reads of the failing block's device $r0, then $r1"
		if [ "$got" = "$want" ]; then gpass "$n-reads"; else gfail "$n-reads" "md5 $got, want $want"; fi
		if [ "$r0" != none ] && [ "$r1" != none ] && [ "$r1" -gt "$r0" ]; then
			gpass "$n-reached"
		else
			gfail "$n-reached" "reads of the device in front of the failing block: $r0, then $r1"
		fi
		if [ "$TRACING" = 1 ]; then
			# "block_bio_complete: 253,4 RA 11248 + 512 [-5]": a
			# read-ahead bio of the target, over the block whose
			# verification needs the failing one, ended with EIO.
			t=$(awk -v d="$d" -v s="$sector" '
				{ for (i = 1; i < NF; i++) if ($i == "block_bio_complete:") break }
				i < NF && $(i + 1) == d && $(i + 2) ~ /^R/ && $(i + 2) ~ /A/ &&
				$(i + 3) <= s && s < $(i + 3) + $(i + 5) && $(i + 6) == "[-5]"' /tmp/trace.$n)
			echo "reports: $n: failed readahead: ${t:-none}"
			if [ -n "$t" ]; then
				gpass "$n-traced"
			else
				gfail "$n-traced" "no read-ahead bio of $d over sector $sector ended with -5: $(grep -c "block_bio_complete: $d " /tmp/trace.$n) completions of it, $(grep "block_bio_complete: $d " /tmp/trace.$n | grep -c '\[-5\]') failed"
			fi
		fi
		s=$(status ra)
		if [ "$s" = "V 0" ]; then gpass "$n-status-V"; else gfail "$n-status-V" "status flag and corrupt count '$s', want 'V 0'"; fi
		dmsetup remove ra
	done
done
dmsetup remove lh
dmsetup remove ld
dmsetup remove hd
dmsetup remove he
dmsetup remove rd
dmsetup remove re
