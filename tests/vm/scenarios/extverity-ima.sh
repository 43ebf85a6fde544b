# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC1091
# shellcheck shell=sh
#
# Guest side of t-vm-extverity.sh, ima boot (ima_policy=critical_data):
# load a table and print the IMA log's dm_table_load records, which the
# host decodes and checks.
#@check insmod
#@check ima-log-readable
#@check create
#@check remove
. /ctl/guest-lib.sh
. /ctl/params

if ext_insmod >/tmp/insmod.out 2>&1; then
	gpass insmod
else
	gfail insmod "$(cat /tmp/insmod.out)"
	exit 1
fi
mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
log=/sys/kernel/security/ima/ascii_runtime_measurements
gcheck ima-log-readable test -r "$log"
line=$(extverity table --check-at-most-once "$D_IMG" "$D_HASH" "$ROOT")
gcheck create dmsetup create --noudevsync --readonly evima --table "$line"
grep ' dm_table_load ' "$log"
gcheck remove dmsetup remove --noudevsync evima
