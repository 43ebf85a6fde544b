# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC1091,SC2154,SC2046
# shellcheck shell=sh
#
# Guest side of t-vm-corrupt.sh, boot ioerr: read errors under the target.
# A dm device (ld over the data disk, lh over the hash disk) is linear but
# for a range that dm-flakey (up 0, down 1: always failing) or dm-error
# fails.  Without options the target must pass EIO up for exactly the
# blocks that depend on the failing range, within a time bound, return
# every other block intact, and not call it corruption (status V, corrupt
# counter 0, no "corrupted" message).  ignore_corruption must not hide an
# I/O error.  Once the lower device works again (table swapped back to
# linear) every block reads: no error is cached.  A failing superblock or
# extent map block refuses the table.  A flapping device (flakey up 1 s,
# down 1 s) never yields a wrong byte, and reads fail in its down seconds.
#@check insmod
. /ctl/guest-lib.sh
. /ctl/params

CIO=/ctl/corrupt-io
if ext_insmod >/tmp/insmod.out 2>&1; then
	gpass insmod
else
	gfail insmod "$(cat /tmp/insmod.out)"
	exit 1
fi
spb=8
len=$(blockdev --getsz "$IMG_c4")
hlen=$(blockdev --getsz "$HASH_c4")
mkdir -p /mnt/c

# table LOWER DISK SECTORS BLOCK TARGET...: LOWER linear over DISK but for
# block BLOCK (4 KiB), mapped to TARGET (e.g. "error", "flakey DEV OFF 0 1").
table() {
	_s=$(($4 * spb))
	_d=$2
	_rest=$(($3 - _s - spb))
	[ "$_s" -gt 0 ] && echo "0 $_s linear $_d 0"
	shift 4
	echo "$_s $spb $*"
	if [ "$_rest" -gt 0 ]; then
		echo "$((_s + spb)) $_rest linear $_d $((_s + spb))"
	fi
}
linear() { echo "0 $2 linear $1 0"; }
mk() {
	dmsetup create --noudevsync --readonly "$1" >/tmp/mk.out 2>&1 &&
		dmsetup mknodes "$1"
}
swap() {
	dmsetup suspend --noudevsync "$1" && dmsetup load "$1" &&
		dmsetup resume --noudevsync "$1"
}
ev() {
	dmsetup create --noudevsync --readonly "$1" --table \
		"0 $len extverity 1 $2 $3 0 sha256 $ROOT_c4${4:+ $4}" >/tmp/ev.out 2>&1 &&
		dmsetup mknodes "$1"
}

# whole NAME DEV WANT_FILE: read all of DEV (4 KiB and 1 MiB reads, each
# pass bounded to 60 s); exactly the runs of WANT_FILE fail, nothing wrong.
whole() {
	_why=
	for _c in 4096 1048576; do
		_t0=$(cut -d. -f1 /proc/uptime)
		if ! "$CIO" check "$2" "$REF_c4" 4096 "$_c" 60 >/tmp/chk 2>&1; then
			_why="$_why reads($_c) did not finish: $(tail -n 2 /tmp/chk | tr '\n' ' ')"
			continue
		fi
		grep '^E ' /tmp/chk >/tmp/chk.e
		cmp -s /tmp/chk.e "$3" ||
			_why="$_why EIO($_c) got [$(head -n 3 /tmp/chk.e | tr '\n' ' ')] want [$(tr '\n' ' ' <"$3")]"
		grep -q '^[WX] ' /tmp/chk &&
			_why="$_why BAD($_c): $(grep '^[WX] ' /tmp/chk | head -n 3 | tr '\n' ' ')"
		echo "$1($_c): $(grep '^S ' /tmp/chk) in $(($(cut -d. -f1 /proc/uptime) - _t0)) s"
	done
	if [ -z "$_why" ]; then gpass "$1"; else gfail "$1" "$_why"; fi
}

# status_v NAME DEV: an I/O error is not corruption.
status_v() {
	set -- "$1" $(dmsetup status "$2")
	echo "status $1: $*"
	if [ "$5" = V ] && [ "$7" = 0 ]; then gpass "$1"; else gfail "$1" "$*"; fi
}

# files NAME DEV BADFILE: mount, every file but BADFILE reads intact,
# BADFILE fails.
files() {
	if ! mount -t ext4 -o ro,noload "$2" /mnt/c 2>/tmp/m.out; then
		gfail "$1" "mount: $(cat /tmp/m.out)"
		return
	fi
	_bad=
	while read -r _sum _p; do
		_got=$(timeout 60 sha256sum "/mnt/c/$_p" 2>/dev/null | cut -d' ' -f1)
		if [ "$_p" = "$3" ]; then
			[ -z "$_got" ] || _bad="$_bad $_p-read"
		elif [ "$_got" != "$_sum" ]; then
			_bad="$_bad $_p:${_got:-failed}"
		fi
	done </ctl/c4.sha256
	umount /mnt/c
	if [ -z "$_bad" ]; then gpass "$1"; else gfail "$1" "$_bad"; fi
}

none=/tmp/none
: >$none
echo "E $IOE_DATA_BLOCK $IOE_DATA_BLOCK" >/tmp/want.data
cp "/ctl/c4.exp/$IOE_HASH_POS" /tmp/want.hash

# Data device: flakey, then error, each with and without ignore_corruption.
#@check data-flakey-lower
#@check data-flakey-create
#@check data-flakey-eio-exact
#@check data-flakey-files
#@check data-flakey-status-V
#@check data-flakey-no-corruption-message
#@check data-flakey-ignore-create
#@check data-flakey-ignore-eio-exact
#@check data-flakey-ignore-status-V
#@check data-flakey-ignore-no-corruption-message
#@check data-flakey-still-failing
#@check data-flakey-recovers
#@check data-error-lower
#@check data-error-create
#@check data-error-eio-exact
#@check data-error-files
#@check data-error-status-V
#@check data-error-no-corruption-message
#@check data-error-ignore-create
#@check data-error-ignore-eio-exact
#@check data-error-ignore-status-V
#@check data-error-ignore-no-corruption-message
#@check data-error-still-failing
#@check data-error-recovers
for kind in flakey error; do
	if [ $kind = flakey ]; then
		t="flakey $IMG_c4 $((IOE_DATA_BLOCK * spb)) 0 1"
	else
		t=error
	fi
	# shellcheck disable=SC2086 # $t is the target and its arguments
	table ld "$IMG_c4" "$len" "$IOE_DATA_BLOCK" $t | mk ld ||
		{ gfail "data-$kind-lower" "$(cat /tmp/mk.out)"; continue; }
	gpass "data-$kind-lower"
	for opts in "" "1 ignore_corruption"; do
		n=data-$kind${opts:+-ignore}
		dmesg_mark
		ev ev /dev/mapper/ld "$HASH_c4" "$opts" || { gfail "$n-create" "$(cat /tmp/ev.out)"; continue; }
		gpass "$n-create"
		whole "$n-eio-exact" /dev/mapper/ev /tmp/want.data
		[ -z "$opts" ] && files "$n-files" /dev/mapper/ev big/multi
		status_v "$n-status-V" ev
		if dmesg_new | grep -q 'extverity.*corrupted'; then
			gfail "$n-no-corruption-message" "$(dmesg_new | grep extverity | head -n 2)"
		else
			gpass "$n-no-corruption-message"
		fi
		dmsetup remove ev
	done
	# The same mapping with the lower device repaired: nothing cached.
	if ! ev ev /dev/mapper/ld "$HASH_c4"; then
		gfail "data-$kind-still-failing" "$(cat /tmp/ev.out)"
	elif dd if=/dev/mapper/ev of=/dev/null bs=4096 \
		skip="$IOE_DATA_BLOCK" count=1 iflag=direct 2>/dev/null; then
		gfail "data-$kind-still-failing" "the block read before the repair"
	else
		gpass "data-$kind-still-failing"
	fi
	linear "$IMG_c4" "$len" | swap ld
	whole "data-$kind-recovers" /dev/mapper/ev $none
	dmsetup remove ev
	dmsetup remove ld
done

# Hash device: flakey under the first level-0 block of big/multi's tree.
#@check hash-lower
#@check hash-flakey-ignore-create
#@check hash-flakey-ignore-eio-exact
#@check hash-flakey-ignore-status-V
#@check hash-flakey-ignore-no-corruption-message
#@check hash-flakey-ignore-log-names-hash-device
#@check hash-flakey-create
#@check hash-flakey-eio-exact
#@check hash-flakey-files
#@check hash-flakey-status-V
#@check hash-flakey-no-corruption-message
#@check hash-flakey-log-names-hash-device
#@check hash-flakey-recovers
if table lh "$HASH_c4" "$hlen" "$IOE_HASH_BLOCK" flakey "$HASH_c4" $((IOE_HASH_BLOCK * spb)) 0 1 | mk lh; then
	gpass hash-lower
else
	gfail hash-lower "$(cat /tmp/mk.out)"
fi
for opts in "1 ignore_corruption" ""; do
	n=hash-flakey${opts:+-ignore}
	# The error lines are rate-limited (DMERR_LIMIT: 10 in 5 s): after the
	# last pass's errors, a new window, so that this pass's first is logged.
	sleep 5
	dmesg_mark
	ev ev "$IMG_c4" /dev/mapper/lh "$opts" || { gfail "$n-create" "$(cat /tmp/ev.out)"; continue; }
	gpass "$n-create"
	whole "$n-eio-exact" /dev/mapper/ev /tmp/want.hash
	[ -z "$opts" ] && files "$n-files" /dev/mapper/ev big/multi
	status_v "$n-status-V" ev
	if dmesg_new | grep -q 'extverity.*corrupted'; then
		gfail "$n-no-corruption-message" "$(dmesg_new | grep extverity | head -n 2)"
	else
		gpass "$n-no-corruption-message"
	fi
	# The log blames the hash device, not the data device.
	if dmesg_new | grep -q "extverity: [0-9:]*: data blocks [0-9]*-[0-9]*: cannot read its hash blocks from the hash device: error -5" &&
		! dmesg_new | grep -q 'extverity.*data device'; then
		gpass "$n-log-names-hash-device"
	else
		gfail "$n-log-names-hash-device" "$(dmesg_new | grep extverity | head -n 2)"
	fi
	[ -n "$opts" ] && dmsetup remove ev
done
linear "$HASH_c4" "$hlen" | swap lh
whole hash-flakey-recovers /dev/mapper/ev $none
dmsetup remove ev
dmsetup remove lh

# Manifest blocks that cannot be read refuse the table, for that reason.
#@check hash-superblock-error-lower
#@check hash-superblock-error-refused
#@check hash-extent-map-error-lower
#@check hash-extent-map-error-refused
#@check hash-tree-table-error-lower
#@check hash-tree-table-error-refused
for b in "0 superblock" "$IOE_EXTENTS_BLOCK extent map" "$IOE_TREES_BLOCK tree table"; do
	what=${b#* }
	b=${b%% *}
	k=hash-$(echo "$what" | tr ' ' -)-error
	if table lh "$HASH_c4" "$hlen" "$b" error | mk lh; then
		gpass "$k-lower"
	else
		gfail "$k-lower" "block $b: $(cat /tmp/mk.out)"
	fi
	dmesg_mark
	if ev ev "$IMG_c4" /dev/mapper/lh; then
		gfail "$k-refused" "block $b: table loaded"
		dmsetup remove ev
	elif dmesg_new | grep -q "extverity: Cannot read the $what"; then
		gpass "$k-refused"
	else
		gfail "$k-refused" "block $b: not for 'Cannot read the $what': $(dmesg_new | grep extverity | tail -n 1)"
	fi
	dmsetup remove lh
done

# Flapping: every block is right or fails, never wrong; reads return.
#@check flapping-data-setup
#@check flapping-data-never-wrong
#@check flapping-data-saw-errors
#@check flapping-data-status-V
#@check flapping-hash-setup
#@check flapping-hash-never-wrong
#@check flapping-hash-saw-errors
#@check flapping-hash-status-V
# ev_over_flapping_hash: load ev over the flapping hash device.  A load in
# a down second is refused (EIO) by design, so it is tried 20 times.
ev_over_flapping_hash() {
	for _ in $(seq 20); do
		ev ev "$IMG_c4" /dev/mapper/lf && return 0
		sleep 0.3
	done
	return 1
}
# The data side: whole-device passes.
if echo "0 $len flakey $IMG_c4 0 1 1" | mk lf && ev ev /dev/mapper/lf "$HASH_c4"; then
	gpass flapping-data-setup
	end=$(($(cut -d. -f1 /proc/uptime) + FLAP_SECONDS))
	passes=0 eio=0 why=''
	while [ "$(cut -d. -f1 /proc/uptime)" -lt "$end" ]; do
		if ! "$CIO" check /dev/mapper/ev "$REF_c4" 4096 65536 60 >/tmp/chk 2>&1; then
			why="$why pass $passes did not finish: $(tail -n 1 /tmp/chk)"
			break
		fi
		grep -q '^[WX] ' /tmp/chk && why="$why $(grep '^[WX] ' /tmp/chk | head -n 3 | tr '\n' ' ')"
		eio=$((eio + $(sed -n 's/^S .*eio=\([0-9]*\).*/\1/p' /tmp/chk)))
		passes=$((passes + 1))
	done
	echo "flapping data: $passes passes, $eio blocks failed; status $(dmsetup status ev)"
	if [ -z "$why" ] && [ "$passes" -gt 0 ]; then
		gpass flapping-data-never-wrong
	else
		gfail flapping-data-never-wrong "$why"
	fi
	# Both up and down seconds were seen (else the test proved nothing).
	if [ "$eio" -gt 0 ] && [ "$eio" -lt $((passes * len / spb)) ]; then
		gpass flapping-data-saw-errors
	else
		gfail flapping-data-saw-errors "$eio failed blocks in $passes passes"
	fi
	status_v flapping-data-status-V ev
	dmsetup remove ev
else
	gfail flapping-data-setup "$(cat /tmp/mk.out /tmp/ev.out)"
fi
dmsetup remove lf 2>/dev/null

# The hash side: the prefetch reads the hash blocks of the data cluster
# around a read (prefetch_cluster), so after a few reads in up seconds
# every later read would find its hash blocks cached and the down seconds
# would go unseen.  Each read here comes
# after a suspend and resume, which empties the target's hash cache: its
# hash blocks are read then, in whatever second that is.  One block a
# read, spread over the device, for FLAP_SECONDS, and on (60 s at most)
# until reads have both failed and succeeded: a slow kernel (KASAN, two
# tests at once) makes only a few reads in FLAP_SECONDS.  Reads must fail
# in the down seconds and return the right bytes in the up ones.
if echo "0 $hlen flakey $HASH_c4 0 1 1" | mk lf && ev_over_flapping_hash; then
	gpass flapping-hash-setup
	blocks=$((len / spb))
	end=$(($(cut -d. -f1 /proc/uptime) + FLAP_SECONDS))
	reads=0 eio=0 why='' blk=0
	while [ "$(cut -d. -f1 /proc/uptime)" -lt "$end" ] ||
		{ { [ "$eio" = 0 ] || [ "$eio" = "$reads" ]; } &&
			[ "$(cut -d. -f1 /proc/uptime)" -lt $((end + 60)) ]; }; do
		if ! dmsetup suspend --noudevsync ev || ! dmsetup resume --noudevsync ev; then
			why="$why suspend/resume failed;"
			break
		fi
		blk=$(((blk + 97) % blocks))
		if dd if=/dev/mapper/ev of=/tmp/blk bs=4096 skip=$blk count=1 iflag=direct 2>/tmp/dd.err; then
			dd if="$REF_c4" of=/tmp/ref bs=4096 skip=$blk count=1 2>/dev/null
			cmp -s /tmp/blk /tmp/ref || why="$why block $blk wrong;"
		elif grep -q 'Input/output error' /tmp/dd.err; then
			eio=$((eio + 1))
		else
			why="$why block $blk: $(cat /tmp/dd.err);"
		fi
		reads=$((reads + 1))
		# 0 to 0.9 s, so that the reads do not keep step with the
		# device's period of 2 s.
		# shellcheck disable=SC3028 # busybox ash has RANDOM
		sleep 0.$((RANDOM % 10))
	done
	echo "flapping hash: $reads reads after emptying the cache, $eio failed; status $(dmsetup status ev)"
	if [ -z "$why" ] && [ "$reads" -gt 0 ]; then
		gpass flapping-hash-never-wrong
	else
		gfail flapping-hash-never-wrong "$why"
	fi
	if [ "$eio" -gt 0 ] && [ "$eio" -lt "$reads" ]; then
		gpass flapping-hash-saw-errors
	else
		gfail flapping-hash-saw-errors "$eio of $reads reads failed"
	fi
	status_v flapping-hash-status-V ev
	dmsetup remove ev
else
	gfail flapping-hash-setup "$(cat /tmp/mk.out /tmp/ev.out)"
fi
dmsetup remove lf 2>/dev/null

