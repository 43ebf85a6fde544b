# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC1091
# shellcheck shell=sh
#
# Guest side of t-vm-hostile.sh: load every generated table line (hostile
# hash areas packed on /dev/vdc, hostile table lines; then a 1 KiB-block
# image on loop devices of larger logical blocks) with dmsetup, one at
# a time.  Per case "ID RC PRESENT READBACK" goes to /results/hostile.res
# and an "EVTH ID" marker to the kernel log, so the host can match each
# case with the kernel's reason (hostile-tables.py check).  Lines marked V
# must load and read back as the image; every table is removed again.
# (--noudevsync and no udev: `dmsetup mknodes` makes /dev/mapper/NAME.)
#@check insmod
#@check all-cases-ran
#@check no-dm-left
#@check final-load
#@check final-readback
#@check final-files
#@check final-status
#@check final-remove
. /ctl/guest-lib.sh
. /ctl/params

RES=/results/hostile.res
: >$RES

if ext_insmod >/tmp/insmod.out 2>&1; then
	gpass insmod
else
	gfail insmod "$(cat /tmp/insmod.out)"
	exit 0
fi

# any_dm: a dm device exists (no fork: a glob).
any_dm() {
	for _d in /sys/block/dm-*; do
		[ -e "$_d" ] && return 0
	done
	return 1
}

# run_cases FILE: every "ID WANT MODE TABLE..." line of FILE.
run_cases() {
	while read -r id want mode table; do
		echo "EVTH $id" >/dev/kmsg
		ro=--readonly
		[ "$mode" = rw ] && ro=
		# shellcheck disable=SC2086 # $ro: one word or none
		dmsetup create --noudevsync $ro hx --table "$table" \
			</dev/null >/dev/null 2>&1
		rc=$?
		rb=-
		if [ $rc -eq 0 ]; then
			if [ "$want" = V ]; then
				dmsetup mknodes hx >/dev/null 2>&1
				sum=$(sha256sum </dev/mapper/hx | cut -d' ' -f1)
				if [ "$sum" = "$IMAGE_SHA256" ]; then rb=ok
				else rb=differs; fi
			fi
			dmsetup remove --noudevsync hx >/dev/null 2>&1
		fi
		present=0
		any_dm && present=1
		echo "$id $rc $present $rb" >>$RES
		# Never let one leftover spoil the next case.
		[ $present = 1 ] && dmsetup remove --noudevsync hx >/dev/null 2>&1
	done <"$1"
}

# run_lbs_cases FILE: every "ID WANT DATA_LBS HASH_LBS" line of FILE: the
# 1 KiB-block image (/dev/vdd: the image, its hash area at L1_HOFF) through
# two loop devices of those logical block sizes (util-linux's /sbin/losetup:
# busybox sh prefers its own applet to PATH; the size is checked in sysfs,
# so a losetup that ignores it cannot pass).
run_lbs_cases() {
	while read -r id want dbs hbs; do
		echo "EVTH $id" >/dev/kmsg
		rc=setup present=0 rb=-
		dl=$(/sbin/losetup -f --show -r --sector-size "$dbs" --sizelimit "$L1_BYTES" \
			/dev/vdd 2>/tmp/lbs.err)
		hl=$(/sbin/losetup -f --show -r --sector-size "$hbs" -o "$L1_HOFF" \
			--sizelimit "$L1_HBYTES" /dev/vdd 2>>/tmp/lbs.err)
		if [ -b "$dl" ] && [ -b "$hl" ] &&
			[ "$(cat "/sys/block/${dl#/dev/}/queue/logical_block_size")" = "$dbs" ] &&
			[ "$(cat "/sys/block/${hl#/dev/}/queue/logical_block_size")" = "$hbs" ]; then
			dmsetup create --noudevsync --readonly hx --table \
				"0 $L1_LEN extverity 1 $dl $hl 0 sha256 $L1_ROOT" \
				</dev/null >/dev/null 2>&1
			rc=$?
			if [ $rc -eq 0 ]; then
				if [ "$want" = V ]; then
					dmsetup mknodes hx >/dev/null 2>&1
					sum=$(sha256sum </dev/mapper/hx | cut -d' ' -f1)
					if [ "$sum" = "$L1_SHA256" ]; then rb=ok
					else rb=differs; fi
				fi
				dmsetup remove --noudevsync hx >/dev/null 2>&1
			fi
			any_dm && present=1
			[ $present = 1 ] && dmsetup remove --noudevsync hx >/dev/null 2>&1
		else
			echo "lbs $id: no loop devices of $dbs/$hbs-byte blocks ($dl $hl): $(cat /tmp/lbs.err)"
		fi
		for _l in $dl $hl; do
			[ -b "$_l" ] && /sbin/losetup -d "$_l"
		done
		echo "$id $rc $present $rb" >>$RES
	done <"$1"
}

t0=$(date +%s)
run_cases /ctl/manifest-cases
t1=$(date +%s)
run_cases /ctl/table-cases
t2=$(date +%s)
run_lbs_cases /ctl/lbs-cases
echo "EVTH end" >/dev/kmsg
echo "hostile: manifests $((t1 - t0)) s, table lines $((t2 - t1)) s"
echo "manifests_s=$((t1 - t0)) tables_s=$((t2 - t1))" >/results/hostile.time

want=$(($(grep -c . /ctl/manifest-cases) + $(grep -c . /ctl/table-cases) +
	$(grep -c . /ctl/lbs-cases)))
got=$(grep -c . $RES)
if [ "$got" -eq "$want" ]; then gpass all-cases-ran
else gfail all-cases-ran "$got of $want cases recorded"; fi

if dmsetup ls 2>/dev/null | grep -vq 'No devices found'; then
	gfail no-dm-left "$(dmsetup ls | tr '\n' ' ')"
else
	gpass no-dm-left
fi

# After all of that, the intact hash area still loads and reads back.
gcheck final-load dmsetup create --noudevsync --readonly hxfinal --table \
	"0 $LEN extverity 1 /dev/vdb /dev/vdc 0 sha256 $ROOT"
dmsetup mknodes hxfinal
sum=$(sha256sum </dev/mapper/hxfinal | cut -d' ' -f1)
if [ "$sum" = "$IMAGE_SHA256" ]; then gpass final-readback
else gfail final-readback "device $sum, image $IMAGE_SHA256"; fi
mkdir -p /mnt/h
if mount -t ext4 -o ro,noload /dev/mapper/hxfinal /mnt/h 2>/tmp/mnt.err; then
	gcheck final-files sh -c 'cd /mnt/h && sha256sum -c -s /ctl/src.sha256'
	umount /mnt/h
else
	gfail final-files "mount: $(cat /tmp/mnt.err)"
fi
st=$(dmsetup status hxfinal)
case $st in
*" extverity V "*) gpass final-status ;;
*) gfail final-status "$st" ;;
esac
gcheck final-remove dmsetup remove --noudevsync hxfinal
dmesg -s 33554432 >/results/hostile.dmesg 2>/dev/null || dmesg >/results/hostile.dmesg
