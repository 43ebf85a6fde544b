#!/usr/bin/env bash
# extverity-generator (docs/boot.md, extverity-generator(8),
# extveritytab(5)), run as systemd runs a generator, with the command line,
# the table and "in the initrd" given by its test variables.  Checked
# against systemd itself: unit names against `systemd-escape --path`, every
# unit written against `systemd-analyze verify`; each unit's lines and
# links exactly; every malformed input refused with its line and reason,
# no unit for it, the others still written.
. "$TOPDIR/tests/userspace/common.sh"
W=$WORKDIR
G=$EXTVERITY_GENERATOR
D=$(printf '0123456789abcdef%.0s' 1 2 3 4)
D512=$D$D

# gen NAME INITRD CMDLINE [TAB_TEXT]: runs the generator into $W/NAME/out;
# its exit status in $W/NAME/rc, stderr in $W/NAME/err.
gen() {
	local d=$W/$1
	rm -rf "$d"
	mkdir -p "$d/out"
	printf '%s' "${4:-}" >"$d/tab"
	EXTVERITY_GENERATOR_INITRD=$2 EXTVERITY_GENERATOR_CMDLINE=$3 \
		EXTVERITY_GENERATOR_TAB=$d/tab "$G" "$d/out" "$d/early" "$d/late" \
		2>"$d/err"
	echo $? >"$d/rc"
}

# has NAME FILE LINE...: each LINE is a whole line of $W/NAME/out/FILE.
has() {
	local n=$1 f=$W/$1/out/$2 l
	shift 2
	for l in "$@"; do
		if grep -qxF -- "$l" "$f" 2>/dev/null; then
			pass "generator/$n/$(basename "$f"): $l"
		else
			fail "generator/$n/$(basename "$f"): no line '$l' in: $(cat "$f" 2>&1)"
		fi
	done
}

lacks() {
	local n=$1 f=$W/$1/out/$2 l
	shift 2
	for l in "$@"; do
		if grep -q -- "$l" "$f"; then
			fail "generator/$n/$(basename "$f"): has /$l/"
		else
			pass "generator/$n/$(basename "$f"): no /$l/"
		fi
	done
}

rc_is() {
	if [ "$(cat "$W/$1/rc")" = "$2" ]; then
		pass "generator/$1/exit-$2"
	else
		fail "generator/$1/exit-$2: exit $(cat "$W/$1/rc"), stderr: $(cat "$W/$1/err")"
	fi
}

# files NAME LIST: exactly these files and links under out/ (find -printf
# '%P %l', sorted).
files() {
	local got want
	got=$(cd "$W/$1/out" && find . -mindepth 1 ! -type d -printf '%P %l\n' | sed 's/ *$//' | sort)
	want=$(printf '%s\n' "${@:2}" | sed 's/ *$//' | sort)
	if [ "$got" = "$want" ]; then
		pass "generator/$1/files ($(echo "$want" | wc -l))"
	else
		fail "generator/$1/files: got [$got], want [$want]"
	fi
}

err_has() {
	if grep -qF -- "$2" "$W/$1/err"; then
		pass "generator/$1/says: $2"
	else
		fail "generator/$1/says: no '$2' in: $(cat "$W/$1/err")"
	fi
}

# verify NAME UNIT: systemd-analyze verify accepts the unit (the devices
# and the extverity tool need not exist here: only the unit's own syntax
# errors count).
verify() {
	local out
	out=$(cd "$W/$1/out" && SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --man=no \
		--generators=no "./$2" 2>&1 |
		grep -v -e 'Command extverity is not executable' -e 'not found' \
			-e 'Failed to prepare filename' -e 'Unit .* is not loaded' \
			-e 'setting up test' -e '^$')
	if [ -z "$out" ]; then
		pass "generator/$1/systemd-analyze-verify $2"
	else
		fail "generator/$1/systemd-analyze-verify $2: $out"
	fi
}

u1=$(systemd-escape --path /dev/disk/by-uuid/1234-ab)
[ "$u1" = 'dev-disk-by\x2duuid-1234\x2dab' ] || fail "generator: systemd-escape --path gives $u1"

# The initrd: the root and /usr from the command line.
gen initrd 1 "BOOT_IMAGE=/vmlinuz root=/dev/mapper/vroot ro extverity.root=UUID=1234-ab,/dev/vdb,$D,check_at_most_once,hash_offset=4096 quiet extverity.usr=PARTLABEL=usr,/dev/vdc,-,restart_on_corruption"
rc_is initrd 0
files initrd 'extverity@vroot.service ' 'extverity@vusr.service ' \
	'veritysetup.target.requires/extverity@vroot.service ../extverity@vroot.service' \
	'veritysetup.target.requires/extverity@vusr.service ../extverity@vusr.service' \
	'initrd-root-device.target.requires/extverity@vroot.service ../extverity@vroot.service' \
	'initrd-root-device.target.requires/extverity@vusr.service ../extverity@vusr.service'
has initrd extverity@vroot.service "BindsTo=$u1.device" "After=$u1.device" \
	'BindsTo=dev-vdb.device' 'After=dev-vdb.device' \
	'DefaultDependencies=no' 'Before=veritysetup.target' 'Before=initrd-root-device.target' \
	'Wants=blockdev@dev-mapper-vroot.target' 'Before=blockdev@dev-mapper-vroot.target' \
	'Type=oneshot' 'RemainAfterExit=yes' \
	"ExecStart=extverity open --check-at-most-once --hash-offset=4096 /dev/disk/by-uuid/1234-ab vroot /dev/vdb $D"
# Nothing stops or closes the root: not umount.target, not a unit.
lacks initrd extverity@vroot.service '^ExecStop' 'umount.target'
has initrd extverity@vusr.service "BindsTo=$(systemd-escape --path /dev/disk/by-partlabel/usr).device" \
	"ExecStart=extverity open --restart-on-corruption --root-hash-file=/etc/extverity/vusr.roothash --root-hash-signature=/etc/extverity/vusr.roothash.p7s /dev/disk/by-partlabel/usr vusr /dev/vdc"
verify initrd extverity@vroot.service
verify initrd extverity@vusr.service

# The last of a repeated parameter counts, as for the kernel's; the table's
# lines without x-initrd.attach wait for the running system.
gen initrd-tab 1 "extverity.root=/dev/vda,/dev/vda,$D512 extverity.root=/dev/vda,/dev/vdb,$D" \
	"data /dev/vdd /dev/vde $D
early LABEL=my.data /dev/vde $D x-initrd.attach
"
rc_is initrd-tab 0
files initrd-tab 'extverity@vroot.service ' 'extverity@early.service ' \
	'veritysetup.target.requires/extverity@vroot.service ../extverity@vroot.service' \
	'veritysetup.target.requires/extverity@early.service ../extverity@early.service' \
	'initrd-root-device.target.requires/extverity@vroot.service ../extverity@vroot.service'
has initrd-tab extverity@vroot.service "ExecStart=extverity open /dev/vda vroot /dev/vdb $D"
has initrd-tab extverity@early.service 'BindsTo=dev-disk-by\x2dlabel-my.data.device' \
	"ExecStart=extverity open /dev/disk/by-label/my.data early /dev/vde $D"
lacks initrd-tab extverity@early.service '^ExecStop' 'umount.target' 'initrd-root-device'

# The running system: the command line is the initrd's business; every
# table line but x-initrd.attach ones, with their options.
gen system 0 "extverity.root=/dev/vda,/dev/vdb,$D" \
	"# name data hash digest options
   
data /dev/vdd /dev/vde $D
	logs	/var/lib/images/logs.img	/var/lib/images/logs.img	$D512	hash-offset=1048576,nofail,ignore-corruption
spare /dev/vdf /dev/vdg /etc/extverity/spare.digest noauto,check_at_most_once
net.vol /dev/vdh /dev/vdi - _netdev
signed /dev/vdh /dev/vdi $D root-hash-signature=/etc/extverity/x.p7s
early /dev/vdj /dev/vdk $D x-initrd.attach
"
rc_is system 0
files system 'extverity@data.service ' 'extverity@logs.service ' 'extverity@spare.service ' \
	'extverity@net.vol.service ' 'extverity@signed.service ' \
	'veritysetup.target.requires/extverity@signed.service ../extverity@signed.service' \
	'veritysetup.target.requires/extverity@data.service ../extverity@data.service' \
	'veritysetup.target.wants/extverity@logs.service ../extverity@logs.service' \
	'remote-veritysetup.target.requires/extverity@net.vol.service ../extverity@net.vol.service'
has system extverity@data.service 'BindsTo=dev-vdd.device' 'BindsTo=dev-vde.device' \
	'Conflicts=umount.target' 'Before=umount.target' 'ExecStop=extverity close data' \
	"SourcePath=$W/system/tab" "ExecStart=extverity open /dev/vdd data /dev/vde $D"
lacks system extverity@data.service 'initrd-root-device'
# A file: the mount that holds it, once (data and hash are one file).
has system extverity@logs.service 'RequiresMountsFor=/var/lib/images/logs.img' \
	"ExecStart=extverity open --hash-offset=1048576 --ignore-corruption /var/lib/images/logs.img logs /var/lib/images/logs.img $D512"
if [ "$(grep -c RequiresMountsFor "$W/system/out/extverity@logs.service")" = 1 ]; then
	pass "generator/system/logs: one RequiresMountsFor"
else
	fail "generator/system/logs: $(grep -c RequiresMountsFor "$W/system/out/extverity@logs.service") RequiresMountsFor lines"
fi
has system extverity@spare.service \
	'ExecStart=extverity open --check-at-most-once --root-hash-file=/etc/extverity/spare.digest /dev/vdf spare /dev/vdg'
has system extverity@net.vol.service 'After=remote-fs-pre.target systemd-udevd-kernel.socket' \
	'Before=remote-veritysetup.target' \
	'ExecStart=extverity open --root-hash-file=/etc/extverity/net.vol.roothash --root-hash-signature=/etc/extverity/net.vol.roothash.p7s /dev/vdh net.vol /dev/vdi'
has system extverity@signed.service \
	"ExecStart=extverity open --root-hash-signature=/etc/extverity/x.p7s /dev/vdh signed /dev/vdi $D"
for u in data logs spare net.vol signed; do
	verify system "extverity@$u.service"
done

# A name with a '-' is escaped in the unit's name, not in the commands.
gen dash 0 "" "my-vol /dev/vda /dev/vdb $D
"
rc_is dash 0
files dash 'extverity@my\x2dvol.service ' \
	'veritysetup.target.requires/extverity@my\x2dvol.service ../extverity@my\x2dvol.service'
has dash 'extverity@my\x2dvol.service' 'Wants=blockdev@dev-mapper-my\x2dvol.target' \
	"ExecStart=extverity open /dev/vda my-vol /dev/vdb $D" 'ExecStop=extverity close my-vol'
if [ "$(systemd-escape --template=extverity@.service my-vol)" = 'extverity@my\x2dvol.service' ]; then
	pass "generator/dash: systemd-escape --template agrees"
else
	fail "generator/dash: systemd-escape --template gives $(systemd-escape --template=extverity@.service my-vol)"
fi

# Refusals: each bad line named by its number and reason, no unit for it
# and nothing of it left, the good lines still written, exit 1.
long=$(printf 'x%.0s' $(seq 5000))
gen bad 0 "" "ok /dev/vda /dev/vdb $D
few /dev/vda /dev/vdb
six /dev/vda /dev/vdb $D check-at-most-once extra
bad/name /dev/vda /dev/vdb $D
opt /dev/vda /dev/vdb $D check-at-most-once,verify-sometimes
digest /dev/vda /dev/vdb 0123
rel dev/vda /dev/vdb $D
uuid UUID=a/b /dev/vdb $D
quote /dev/vd\"a /dev/vdb $D
off /dev/vda /dev/vdb $D hash-offset=12k
sig /dev/vda /dev/vdb $D root-hash-signature=x.p7s
$long /dev/vda /dev/vdb $D
dot /dev/./vda /dev/vdb $D
twosig /dev/vda /dev/vdb - root-hash-signature=/etc/extverity/x.p7s
again /dev/vda /dev/vdb $D check-at-most-once,eio,check_at_most_once
offsets /dev/vda /dev/vdb $D hash-offset=4096,hash_offset=8192
ok2 /dev/vdc /dev/vdd $D
"
rc_is bad 1
files bad 'extverity@ok.service ' 'extverity@ok2.service ' \
	'veritysetup.target.requires/extverity@ok.service ../extverity@ok.service' \
	'veritysetup.target.requires/extverity@ok2.service ../extverity@ok2.service'
err_has bad "tab:2: want NAME DATA HASH ROOT_DIGEST [OPTION,...], 3 fields; no unit written"
err_has bad "tab:3: want NAME DATA HASH ROOT_DIGEST [OPTION,...], 6 fields"
err_has bad "tab:4: 'bad/name' is no device-mapper name"
err_has bad "tab:5: unknown or malformed option 'verify-sometimes'"
err_has bad "tab:6: root digest '0123' is not 64 or 128 hex digits"
err_has bad "tab:7: 'dev/vda' is not a /dev path"
err_has bad "tab:8: 'UUID=a/b' is not a /dev path"
err_has bad "tab:9: '/dev/vd\"a' is not a /dev path"
err_has bad "tab:10: unknown or malformed option 'hash-offset=12k'"
err_has bad "tab:11: unknown or malformed option 'root-hash-signature=x.p7s'"
err_has bad "tab:12: line longer than 4096 bytes"
err_has bad "tab:13: '/dev/./vda' is not a /dev path"
err_has bad "tab:14: root-hash-signature= with the digest '-', which means /etc/extverity/twosig.roothash.p7s"
err_has bad "tab:15: option 'check-at-most-once' given twice"
err_has bad "tab:16: option 'hash-offset' given twice"
if [ "$(grep -c 'no unit written' "$W/bad/err")" = 15 ]; then
	pass "generator/bad: 15 refusals"
else
	fail "generator/bad: $(grep -c 'no unit written' "$W/bad/err") refusals: $(cat "$W/bad/err")"
fi

gen bad-cmdline 1 "extverity.root=/dev/vda,/dev/vdb extverity.usr=/dev/vda,/dev/vdb,$D,eio,hash_offset=-1"
rc_is bad-cmdline 1
files bad-cmdline
err_has bad-cmdline "/proc/cmdline: extverity.root=: want DATA,HASH,ROOT_DIGEST[,OPTION...]; no unit written"
err_has bad-cmdline "/proc/cmdline: extverity.usr=: unknown or malformed option 'hash_offset=-1'"

# No table, nothing on the command line: nothing to do, and no error.
mkdir -p "$W/none/out"
EXTVERITY_GENERATOR_INITRD=1 EXTVERITY_GENERATOR_CMDLINE="ro" EXTVERITY_GENERATOR_TAB=$W/none/tab \
	"$G" "$W/none/out" 2>"$W/none/err"
echo $? >"$W/none/rc"
rc_is none 0
files none
if [ -s "$W/none/err" ]; then
	fail "generator/none: says $(cat "$W/none/err")"
else
	pass "generator/none: silent"
fi

# A unit that already exists (a second volume of the same name) is not
# overwritten: the second line is refused.
gen twice 0 "" "v /dev/vda /dev/vdb $D
v /dev/vdc /dev/vdd $D
"
rc_is twice 1
has twice extverity@v.service "ExecStart=extverity open /dev/vda v /dev/vdb $D"
err_has twice "tab:2: cannot create $W/twice/out/extverity@v.service: File exists"

# Usage.
"$G" >/dev/null 2>"$W/usage.err"
rc=$?
if [ $rc = 1 ] && grep -q '^usage: extverity-generator NORMAL_DIR' "$W/usage.err"; then
	pass "generator/usage"
else
	fail "generator/usage: exit $rc, $(cat "$W/usage.err")"
fi
finish
