# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC1091,SC2154,SC2046
# shellcheck shell=sh
#
# Guest side of t-vm-corrupt.sh, the corruption matrix.  For every position
# of /ctl/NAME.pos (tests/vm/corrupt-plan.py) a dm-linear device puts the
# damaged block (block PATCH of the patch disk) over a pristine disk, so
# every position starts from an intact device and nothing is ever written.
# An extverity table is loaded over it and:
#   EXPECT refuse: the load must fail, and dm must log the reason of
#                  /ctl/NAME.refuse/ID ("... extverity: WHY (ERRNO)");
#   EXPECT read:   the whole device is read with O_DIRECT, in 4 KiB and in
#                  1 MiB reads (/ctl/corrupt-io check): exactly the blocks of
#                  /ctl/NAME.exp/ID fail with EIO, every other block returns
#                  the reference disk's bytes (zeros for zero ranges); the
#                  status says C only when something failed; then, when the
#                  filesystem mounts, every file is read: none may return
#                  wrong bytes, and with FILES exact exactly the files of
#                  /ctl/NAME.fail/ID fail.
# One result per position: matrix-NAME-ID-CLASS, declared by the host from
# the same plan (tests/vm/vm-lib.sh, declared checks).
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
mkdir -p /mnt/c

# mkdev NAME SECTORS LINEAR_SEGMENTS...: a read-only dm device.
mkdev() {
	_n=$1
	shift
	printf '%s\n' "$@" | dmsetup create --noudevsync --readonly "$_n" >/tmp/mkdev.out 2>&1 ||
		return 1
	nodes "$_n"
}

# Without udev, dmsetup usually makes the node itself: a dmsetup run less
# per device (hundreds of devices in one boot).
nodes() {
	[ -b "/dev/mapper/$1" ] || dmsetup mknodes "$1"
}
rmdev() {
	dmsetup remove --noudevsync "$@"
}

# problems MNT SUMS FAILLIST MODE: one line per file that misbehaved.
problems() {
	(cd "$1" && awk '{print $2}' "$2" | xargs sha256sum 2>/dev/null) >/tmp/got
	awk -v failfile="$3" -v mode="$4" '
		BEGIN { while ((getline l < failfile) > 0) bad[l] = 1 }
		FNR == NR { want[$2] = $1; next }
		{ got[$2] = $1 }
		END {
			for (p in want) {
				if (p in got) {
					if (got[p] != want[p])
						print "WRONG-BYTES " p
					else if (mode == "exact" && (p in bad))
						print "READ-BUT-SHOULD-FAIL " p
				} else if (mode == "exact" && !(p in bad)) {
					print "FAILED " p
				}
			}
		}' "$2" /tmp/got
}

# matrix NAME IMG HASH PATCH REF BS ALG ROOT
matrix() {
	_name=$1 _img=$2 _hash=$3 _patch=$4 _ref=$5 _bs=$6 _alg=$7 _root=$8
	_spb=$((_bs / 512))
	_len=$(blockdev --getsz "$_img")
	_t0=$(date +%s)
	_count=0
	while read -r id cls disk blk pidx expect files; do
		_count=$((_count + 1))
		_r=matrix-$_name-$id-$cls
		if [ "$disk" = data ]; then _dev=$_img; else _dev=$_hash; fi
		_total=$(blockdev --getsz "$_dev")
		_s=$((blk * _spb))
		set --
		[ "$_s" -gt 0 ] && set -- "0 $_s linear $_dev 0"
		set -- "$@" "$_s $_spb linear $_patch $((pidx * _spb))"
		_rest=$((_total - _s - _spb))
		[ "$_rest" -gt 0 ] && set -- "$@" "$((_s + _spb)) $_rest linear $_dev $((_s + _spb))"
		if ! mkdev cdmg "$@"; then
			gfail "$_r" "dm-linear: $(cat /tmp/mkdev.out)"
			continue
		fi
		if [ "$disk" = data ]; then
			_line="0 $_len extverity 1 /dev/mapper/cdmg $_hash 0 $_alg $_root"
		else
			_line="0 $_len extverity 1 $_img /dev/mapper/cdmg 0 $_alg $_root"
		fi
		dmesg_mark
		if ! dmsetup create --noudevsync --readonly cev --table "$_line" >/tmp/cev.out 2>&1; then
			if [ "$expect" = refuse ]; then
				_w=$(cat "/ctl/$_name.refuse/$id" 2>/dev/null)
				if [ -n "$_w" ] && dmesg_new | grep -q -F ": extverity: $_w ("; then
					gpass "$_r"
				else
					gfail "$_r" "refused, but not with '$_w': $(dmesg_new | grep extverity | tail -n 1)"
				fi
			else
				gfail "$_r" "table load failed: $(tr '\n' ' ' </tmp/cev.out)"
			fi
			rmdev cdmg
			continue
		fi
		nodes cev
		if [ "$expect" = refuse ]; then
			gfail "$_r" "table loaded despite the damage"
			rmdev cev
			rmdev cdmg
			continue
		fi
		_why=
		_ta=$(cut -d' ' -f1 /proc/uptime)
		# Both passes at once (two vCPUs): the test must stay short.
		for _chunk in 4096 1048576; do
			"$CIO" check /dev/mapper/cev "$_ref" "$_bs" "$_chunk" 300 >/tmp/chk.$_chunk 2>&1 &
		done
		wait
		for _chunk in 4096 1048576; do
			mv /tmp/chk.$_chunk /tmp/chk
			if ! grep -q '^S ' /tmp/chk; then
				_why="$_why reads($_chunk): $(tail -n 2 /tmp/chk | tr '\n' ' ')"
				continue
			fi
			grep '^E ' /tmp/chk >/tmp/chk.e
			if ! cmp -s /tmp/chk.e "/ctl/$_name.exp/$id"; then
				_why="$_why EIO($_chunk) got [$(head -n 4 /tmp/chk.e | tr '\n' ' ')] want [$(head -n 4 "/ctl/$_name.exp/$id" | tr '\n' ' ')]"
			fi
			if grep -q '^[WX] ' /tmp/chk; then
				_why="$_why BAD($_chunk): $(grep '^[WX] ' /tmp/chk | head -n 4 | tr '\n' ' ')"
			fi
		done
		# STATUS: <start> <len> extverity <V|C> <verified> <corrupt> <zero>
		_st=$(dmsetup status cev)
		# shellcheck disable=SC2086 # one word per field
		set -- $_st
		if [ -s "/ctl/$_name.exp/$id" ]; then
			[ "$4" = C ] && [ "$6" -gt 0 ] || _why="$_why status [$*], want C"
		else
			[ "$4" = V ] && [ "$6" -eq 0 ] || _why="$_why status [$*], want V"
		fi
		_tb=$(cut -d' ' -f1 /proc/uptime)
		_mnt=not-mounted
		if mount -t ext4 -o ro,noload /dev/mapper/cev /mnt/c 2>/dev/null; then
			_mnt=mounted
			if [ "$files" = exact ] && ! ls -lR /mnt/c >/dev/null 2>&1; then
				_why="$_why directory listing failed"
			fi
			_p=$(problems /mnt/c "/ctl/$_name.sha256" "/ctl/$_name.fail/$id" "$files")
			[ -n "$_p" ] && _why="$_why files: $(echo "$_p" | head -n 5 | tr '\n' ' ')"
			umount /mnt/c
		elif [ "$files" = exact ]; then
			_why="$_why the filesystem does not mount"
		fi
		echo "$_r: $_mnt; $(grep '^S ' /tmp/chk); $(echo "$_st" | cut -d' ' -f4-); reads $_ta..$_tb, files ..$(cut -d' ' -f1 /proc/uptime)"
		rmdev cev
		rmdev cdmg
		if [ -z "$_why" ]; then
			gpass "$_r"
		else
			gfail "$_r" "$_why"
		fi
	done <"/ctl/$_name.pos"
	echo "matrix $_name: $_count positions in $(($(date +%s) - _t0)) s"
}


for n in $MATRICES; do
	eval "set -- \$M_$n"
	matrix "$n" "$@"
done
