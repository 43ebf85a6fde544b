# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC1091
# shellcheck shell=sh
#
# Guest half of `make bench` (bench/run.sh): the same data disk through
# linear (raw), verity, verity with try_verify_in_tasklet (verity-bh:
# verification in the completion context when the hash blocks are cached;
# a BH workqueue since 6.9, a tasklet before) and extverity, without and
# with its own try_verify_in_tasklet (extverity-bh).  /dev/vdb is
# the reference image,
# /dev/vdc its veritysetup hash device, /dev/vdd its extverity hash area.
# /ctl/params: BLOCKS, VROOT, VSALT, EROOT, FILE_BYTES, RUNTIME, ROUNDS.
# Each run leaves /results/<kind>-<test>-<round>.json (fio) or .txt.
. /ctl/guest-lib.sh
. /ctl/params
export LD_LIBRARY_PATH=/ctl/lib
FIO="/ctl/lib/ld-linux-x86-64.so.2 /ctl/bin/fio"
LEN=$((BLOCKS * 8))

ext_insmod || { gfail insmod "cannot insert dm-extverity.ko"; exit 0; }
table() {
	case $1 in
	raw) echo "0 $LEN linear /dev/vdb 0" ;;
	verity) echo "0 $LEN verity 1 /dev/vdb /dev/vdc 4096 4096 $BLOCKS 1 sha256 $VROOT $VSALT" ;;
	verity-bh) echo "0 $LEN verity 1 /dev/vdb /dev/vdc 4096 4096 $BLOCKS 1 sha256 $VROOT $VSALT 1 try_verify_in_tasklet" ;;
	extverity) extverity table /dev/vdb /dev/vdd "$EROOT" ;;
	extverity-bh) extverity table --use-tasklets /dev/vdb /dev/vdd "$EROOT" ;;
	esac
}
# fresh KIND: the device "b" re-created over KIND, every cache dropped.
fresh() {
	dmsetup remove --noudevsync b 2>/dev/null
	echo 3 >/proc/sys/vm/drop_caches
	dmsetup create --noudevsync --readonly b --table "$(table "$1")" || return 1
	dmsetup mknodes b
}
sectors() { awk '{print $3}' "/sys/block/$1/stat"; }
now_cs() { awk '{ printf "%d\n", $1 * 100 }' /proc/uptime; }
# io OUT: append the data and hash disks' sectors read since mark_io.
mark_io() { d0=$(sectors vdb); h0=$(sectors vdc); e0=$(sectors vdd); }
io() { echo "data_sectors=$(($(sectors vdb) - d0)) hash_sectors=$(($(sectors vdc) + $(sectors vdd) - h0 - e0))" >"$1"; }

fio_run() {
	_out=$1
	shift
	mark_io
	$FIO --output-format=json --output="$_out.json" --filename=/dev/mapper/b \
		--direct=1 "$@" >/dev/null 2>"$_out.err" || echo "fio failed: $(cat "$_out.err")"
	io "$_out.io"
}

uname -r >/results/kernel.txt
r=1
while [ $r -le "$ROUNDS" ]; do
	for kind in raw verity verity-bh extverity extverity-bh; do
		o=/results/$kind
		echo "== round $r: $kind"
		fresh $kind || { gfail "$kind-create" "$(table $kind)"; continue; }
		fio_run "$o-seq-$r" --name=seq --rw=read --bs=1M --ioengine=psync
		fresh $kind
		fio_run "$o-rand1-$r" --name=rand1 --rw=randread --bs=4k \
			--ioengine=psync --runtime="$RUNTIME" --time_based --randseed=$r
		# warm: the same device again, hash blocks now cached
		fio_run "$o-warm1-$r" --name=warm1 --rw=randread --bs=4k \
			--ioengine=psync --runtime="$RUNTIME" --time_based --randseed=$((r + 100))
		fresh $kind
		fio_run "$o-rand16-$r" --name=rand16 --rw=randread --bs=4k \
			--ioengine=libaio --iodepth=16 --runtime="$RUNTIME" --time_based --randseed=$r
		fresh $kind
		mkdir -p /mnt/b
		mark_io
		t0=$(now_cs)
		if mount -t ext4 -o ro,noload /dev/mapper/b /mnt/b; then
			find /mnt/b -type f -exec cat {} + >/dev/null
			t1=$(now_cs)
			umount /mnt/b
			echo "centiseconds=$((t1 - t0)) bytes=$FILE_BYTES" >"$o-tree-$r.txt"
		else
			gfail "$kind-mount" "cannot mount"
		fi
		io "$o-tree-$r.io"
		echo "status: $(dmsetup status b)"
		case $kind in
		verity | verity-bh) dmsetup status b | grep -q ' V' || gfail "$kind-status" "$(dmsetup status b)" ;;
		extverity | extverity-bh) dmsetup status b | grep -q ' V ' || gfail "$kind-status" "$(dmsetup status b)" ;;
		esac
		dmsetup remove --noudevsync b
	done
	r=$((r + 1))
done
gpass bench-ran
