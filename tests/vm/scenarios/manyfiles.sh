# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC1091
# shellcheck shell=sh
#
# Guest side of t-vm-manyfiles.sh: /dev/vdb is a 100k-file ext4 image,
# /dev/vdc its hash area; /ctl/params has ROOT, EXTENTS, TREES.
#@check insmod
#@check table
#@check create
#@check mount
#@check sample-files-match
#@check file-count
#@check status-V
#@check remove
. /ctl/guest-lib.sh
. /ctl/params

if ext_insmod >/tmp/insmod.out 2>&1; then
	gpass insmod
else
	gfail insmod "$(cat /tmp/insmod.out)"
	exit 1
fi
# uptime in centiseconds, and kernel memory (slab + vmalloc) in KiB.
now_cs() { awk '{ printf "%d\n", $1 * 100 }' /proc/uptime; }
kmem_kb() {
	awk '/^Slab:|^VmallocUsed:/ { s += $2 } END { print s }' /proc/meminfo
}

table=$(extverity table /dev/vdb /dev/vdc "$ROOT") || {
	gfail table "extverity table failed"
	exit 1
}
gpass table
echo 3 >/proc/sys/vm/drop_caches
m0=$(kmem_kb)
t0=$(now_cs)
gcheck create dmsetup create --noudevsync --readonly many --table "$table"
t1=$(now_cs)
m1=$(kmem_kb)
dmsetup mknodes
ms=$(((t1 - t0) * 10))
echo "load: $EXTENTS extents, $TREES trees: dmsetup create took ${ms} ms," \
	"kernel memory +$((m1 - m0)) KiB" \
	"($(((m1 - m0) * 1024 / EXTENTS)) bytes per extent, all included)"
mkdir -p /mnt/m
gcheck mount mount -t ext4 -o ro,noload /dev/mapper/many /mnt/m
gcheck sample-files-match sh -c 'cd /mnt/m && sha256sum -c -s /ctl/sample.sha256'
gcheck file-count sh -c "[ \$(find /mnt/m -type f | wc -l) -ge $((TREES - 1)) ]"
case $(dmsetup status many | awk '{print $4}') in
V*) gpass status-V ;;
*) gfail status-V "$(dmsetup status many)" ;;
esac
umount /mnt/m
gcheck remove dmsetup remove --noudevsync many
