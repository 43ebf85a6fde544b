# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC1091,SC2154
# shellcheck shell=sh
#
# Guest side of t-vm-fec.sh.  /dev/vdb the image, /dev/vdc its hash area
# (with a FEC record), /dev/vdd its parity (2 roots); /dev/vde the image
# with data blocks D1-D4 garbled, /dev/vdf the hash area with blocks L0B
# (a level-0 block of two-levels) and TOPB (packed tops) garbled;
# /dev/vdg the image with D1 and D2 garbled, /dev/vdh the parity with one
# byte of D1's codeword flipped; /dev/vdi a parity of zeros, /dev/vdj one
# a block short; /dev/vdk a hash area of the same image without FEC;
# /dev/vdl the hash area with a block of the extent map and one of the
# tree table garbled, /dev/vdm the parity with one byte of the extent map
# block's codeword flipped; /dev/vdn the hash area with its superblock's
# block garbled, /dev/vdo the parity with one byte of that block's
# codeword flipped.
#@check insmod
. /ctl/guest-lib.sh
. /ctl/params

if ! ext_insmod >/tmp/insmod.out 2>&1; then
	gfail insmod "$(cat /tmp/insmod.out)"
	exit 1
fi
gpass insmod
spb=$((BS / 512))
len=$((N * spb))
# fec DEV ROOTS BLOCKS START: the FEC options.
fec() { echo "8 use_fec_from_device $1 fec_roots $2 fec_blocks $3 fec_start $4"; }
GOOD=$(fec /dev/vdd 2 "$FEC_BLOCKS" 0)
# ev NAME DATA HASH [OPTS [ROOT]]: an extverity device.
ev() {
	dmsetup create --noudevsync --readonly "$1" --table \
		"0 $len extverity 1 $2 $3 0 sha256 ${5:-$ROOT}${4:+ $4}" >/tmp/ev.out 2>&1 &&
		dmsetup mknodes "$1"
}
md5() {
	dd if="$1" bs="$BS" skip="$2" count="$3" ${4:+iflag=$4} 2>/dev/null | md5sum | cut -d' ' -f1
}
blk() { dd if="$1" of=/dev/null bs="$BS" skip="$2" count=1 iflag=direct 2>/dev/null; }
# counts NAME: "FLAG VERIFIED CORRUPT ZERO CORRECTED" of the status.
counts() { dmsetup status "$1" | cut -d' ' -f4-; }
corrected() { dmsetup status "$1" | awk '{ print $8 }'; }
corrupt() { dmsetup status "$1" | awk '{ print $6 }'; }
lines() { dmesg_new | grep 'device-mapper: extverity: ' | grep -E -- "$1"; }
# refused NAME PATTERN DATA HASH OPTS [ROOT]: the table is refused with
# PATTERN (ti->error) in the kernel log.
refused() {
	dmesg_mark
	if ev r "$3" "$4" "$5" "$6"; then
		gfail "$1" "table loaded: $5"
		dmsetup remove r
		return
	fi
	if dmesg_new | grep -Eq -- "extverity: $2"; then
		gpass "$1"
	else
		gfail "$1" "no /$2/ in the kernel log: $(dmesg_new | tail -n 3 | tr '\n' ' ')"
	fi
}

# --- within the capacity: every block reads as the image's ----------------
#@check fix-create
#@check fix-device-reads-as-image
#@check fix-blocks-read
#@check fix-status
#@check fix-logged
dmesg_mark
if ev ef /dev/vde /dev/vdf "$GOOD"; then
	gpass fix-create
	s=$(dd if=/dev/mapper/ef bs=1M 2>/dev/null | md5sum | cut -d' ' -f1)
	if [ "$s" = "$IMG_MD5" ]; then gpass fix-device-reads-as-image; else gfail fix-device-reads-as-image "md5 $s, image $IMG_MD5"; fi
	# Four data blocks, two hash blocks, each at least once (readahead
	# bios verified at once may both correct a hash block before either
	# has put it right); nothing corrupt.
	c=$(counts ef)
	n=$(corrected ef)
	case $c in
	"V "*" 0 "*) [ "$n" -ge 6 ] && ok=1 || ok= ;;
	*) ok= ;;
	esac
	if [ -n "$ok" ]; then gpass "fix-status ($c)"; else gfail fix-status "'$c', want V, 0 corrupt, 6 or more corrected"; fi
	# Read again, one at a time, past the page cache: each data block is
	# corrected again (the device stays as it is), the hash blocks are
	# not (the corrected buffers are kept, known good).
	bad=
	for b in $D1 $D2 $D3 $D4; do
		[ "$(md5 /dev/mapper/ef "$b" 1 direct)" = "$(md5 /dev/vdb "$b" 1 direct)" ] || bad="$bad $b"
	done
	if [ -z "$bad" ] && [ "$(corrected ef)" = $((n + 4)) ]; then gpass fix-blocks-read; else gfail fix-blocks-read "blocks$bad differ; status $(counts ef), want $((n + 4)) corrected"; fi
	d=$(dmsetup info -c --noheadings -o major,minor ef | tr -d ' ')
	miss=
	for b in $D1 $D2 $D3; do
		lines "^.*$d: data block $b: corrected by FEC, file inode $TWO_INO byte offset [0-9]+\$" >/dev/null || miss="$miss data-$b"
	done
	lines "$d: data block $D4: corrected by FEC, metadata\$" >/dev/null || miss="$miss meta-$D4"
	lines "$d: hash block $L0B \\(tree [0-9]+\\): corrected by FEC\$" >/dev/null || miss="$miss hash-$L0B"
	lines "$d: hash block $TOPB \\(tree [0-9]+\\): corrected by FEC\$" >/dev/null || miss="$miss top-$TOPB"
	if [ -z "$miss" ] && [ -z "$(lines 'corrupted')" ]; then
		gpass fix-logged
	else
		gfail fix-logged "missing:$miss; $(lines . | head -n 4 | tr '\n' '|')"
	fi
	dmsetup remove ef
else
	gfail fix-create "$(cat /tmp/ev.out)"
fi

# --- check_at_most_once: a corrected block is not taken for verified -------
#@check once-create
#@check once-reads-twice
dmesg_mark
if ev eon /dev/vde /dev/vdc "9 check_at_most_once $(fec /dev/vdd 2 "$FEC_BLOCKS" 0 | cut -d' ' -f2-)"; then
	gpass once-create
	bad=
	for b in $D1 $D1 $D4 $D4; do
		[ "$(md5 /dev/mapper/eon "$b" 1 direct)" = "$(md5 /dev/vdb "$b" 1 direct)" ] || bad="$bad $b"
	done
	if [ -z "$bad" ] && [ "$(corrected eon)" = 4 ]; then
		gpass once-reads-twice
	else
		gfail once-reads-twice "blocks$bad differ from the image; status $(counts eon)"
	fi
	dmsetup remove eon
else
	gfail once-create "$(cat /tmp/ev.out)"
fi

# --- one error past the capacity --------------------------------------------
#@check over-create
#@check over-block-eio
#@check over-reported
#@check over-other-block-corrected
dmesg_mark
if ev eo /dev/vdg /dev/vdc "$(fec /dev/vdh 2 "$FEC_BLOCKS" 0)"; then
	gpass over-create
	if blk /dev/mapper/eo "$D1"; then gfail over-block-eio "block $D1 read"; else gpass over-block-eio; fi
	if [ "$(corrupt eo)" = 1 ] && lines "data block $D1: corrupted, file inode $TWO_INO" >/dev/null; then
		gpass over-reported
	else
		gfail over-reported "status $(counts eo); $(lines . | head -n 3 | tr '\n' '|')"
	fi
	if [ "$(md5 /dev/mapper/eo "$D2" 1 direct)" = "$(md5 /dev/vdb "$D2" 1 direct)" ] &&
		[ "$(corrected eo)" = 1 ]; then
		gpass over-other-block-corrected
	else
		gfail over-other-block-corrected "block $D2; status $(counts eo)"
	fi
	dmsetup remove eo
else
	gfail over-create "$(cat /tmp/ev.out)"
fi

# --- an I/O error under one block --------------------------------------------
#@check ioerr-create
#@check ioerr-below-fails
#@check ioerr-block-reads
#@check ioerr-64k-reads
#@check ioerr-status
s1=$((E1 * spb))
if printf '0 %d linear /dev/vdb 0\n%d %d error\n%d %d linear /dev/vdb %d\n' \
	"$s1" "$s1" "$spb" $((s1 + spb)) $((len - s1 - spb)) $((s1 + spb)) |
	dmsetup create --noudevsync --readonly lower >/tmp/lower.out 2>&1 &&
	dmsetup mknodes lower && ev ee /dev/mapper/lower /dev/vdc "$GOOD"; then
	gpass ioerr-create
	if blk /dev/mapper/lower "$E1"; then gfail ioerr-below-fails "block $E1 of the lower device read"; else gpass ioerr-below-fails; fi
	if [ "$(md5 /dev/mapper/ee "$E1" 1 direct)" = "$(md5 /dev/vdb "$E1" 1 direct)" ]; then
		gpass ioerr-block-reads
	else
		gfail ioerr-block-reads "block $E1: $(blk /dev/mapper/ee "$E1" 2>&1; echo "exit $?")"
	fi
	a=$(dd if=/dev/mapper/ee bs=64k skip=$((E0 / 16)) count=1 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)
	b=$(dd if=/dev/vdb bs=64k skip=$((E0 / 16)) count=1 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)
	if [ "$a" = "$b" ]; then gpass ioerr-64k-reads; else gfail ioerr-64k-reads "64 KiB at block $E0: $a, want $b"; fi
	c=$(counts ee)
	case $c in
	"V "*" 0 "*) gpass "ioerr-status ($c)" ;;
	*) gfail ioerr-status "'$c'" ;;
	esac
	dmsetup remove ee
else
	gfail ioerr-create "$(cat /tmp/lower.out /tmp/ev.out)"
fi
dmsetup remove lower 2>/dev/null

# --- an I/O error under a hash block -----------------------------------------
#@check hashio-create
#@check hashio-blocks-read
#@check hashio-once
hlen=$(blockdev --getsz /dev/vdc)
h1=$((L0B * spb))
dmesg_mark
if printf '0 %d linear /dev/vdc 0\n%d %d error\n%d %d linear /dev/vdc %d\n' \
	"$h1" "$h1" "$spb" $((h1 + spb)) $((hlen - h1 - spb)) $((h1 + spb)) |
	dmsetup create --noudevsync --readonly lowerh >/tmp/lower.out 2>&1 &&
	dmsetup mknodes lowerh && ev eh /dev/vdb /dev/mapper/lowerh "$GOOD"; then
	gpass hashio-create
	bad=
	for b in $D1 $D2; do
		[ "$(md5 /dev/mapper/eh "$b" 1 direct)" = "$(md5 /dev/vdb "$b" 1 direct)" ] || bad="$bad $b"
	done
	if [ -z "$bad" ]; then gpass hashio-blocks-read; else gfail hashio-blocks-read "blocks$bad differ; status $(counts eh); $(lines . | head -n 3 | tr '\n' '|')"; fi
	# Decoded once, then kept in the cache, verified.
	d=$(dmsetup info -c --noheadings -o major,minor eh | tr -d ' ')
	if [ "$(corrected eh)" = 1 ] && [ "$(corrupt eh)" = 0 ] &&
		lines "$d: hash block $L0B \\(tree [0-9]+\\): unreadable, corrected by FEC\$" >/dev/null; then
		gpass hashio-once
	else
		gfail hashio-once "status $(counts eh); $(lines . | head -n 3 | tr '\n' '|')"
	fi
	dmsetup remove eh
else
	gfail hashio-create "$(cat /tmp/lower.out /tmp/ev.out)"
fi
dmsetup remove lowerh 2>/dev/null

# --- a wrong or short FEC device ---------------------------------------------
#@check zero-create
#@check zero-blocks-eio
dmesg_mark
if ev ez /dev/vde /dev/vdc "$(fec /dev/vdi 2 "$FEC_BLOCKS" 0)"; then
	gpass zero-create
	r=
	for b in $D1 $D2 $D3 $D4; do blk /dev/mapper/ez "$b" && r="$r $b"; done
	if [ -z "$r" ] && [ "$(corrected ez)" = 0 ]; then gpass zero-blocks-eio; else gfail zero-blocks-eio "read:$r; status $(counts ez)"; fi
	dmsetup remove ez
else
	gfail zero-create "$(cat /tmp/ev.out)"
fi
#@check short-refused
refused short-refused "FEC device is smaller than its parity" /dev/vdb /dev/vdc \
	"$(fec /dev/vdj 2 "$FEC_BLOCKS" 0)"

# --- FEC options the area does not match --------------------------------------
#@check roots-1-refused
#@check roots-25-refused
#@check roots-3-refused
#@check blocks-refused
#@check start-refused
#@check missing-refused
#@check no-record-refused
#@check over-data-refused
#@check over-hash-refused
refused roots-1-refused "Invalid fec_roots \\(2 to 24\\)" /dev/vdb /dev/vdc "$(fec /dev/vdd 1 "$FEC_BLOCKS" 0)"
refused roots-25-refused "Invalid fec_roots \\(2 to 24\\)" /dev/vdb /dev/vdc "$(fec /dev/vdd 25 "$FEC_BLOCKS" 0)"
refused roots-3-refused "fec_roots does not match the hash area's FEC record" /dev/vdb /dev/vdc "$(fec /dev/vdd 3 "$FEC_BLOCKS" 0)"
refused blocks-refused "fec_blocks does not match the hash area's FEC record" /dev/vdb /dev/vdc "$(fec /dev/vdd 2 $((FEC_BLOCKS + 1)) 0)"
refused start-refused "fec_start does not match the hash area's FEC record" /dev/vdb /dev/vdc "$(fec /dev/vdd 2 "$FEC_BLOCKS" 1)"
refused missing-refused "FEC needs use_fec_from_device, fec_roots, fec_blocks and fec_start" /dev/vdb /dev/vdc \
	"6 use_fec_from_device /dev/vdd fec_roots 2 fec_blocks $FEC_BLOCKS"
refused no-record-refused "FEC options given, but the hash area has no FEC record" /dev/vdb /dev/vdk "$GOOD" "$ROOT2"
refused over-data-refused "FEC parity overlaps the data" /dev/vdb /dev/vdc "$(fec /dev/vdb 2 "$FEC_BLOCKS" 0)"
refused over-hash-refused "FEC parity overlaps the hash area" /dev/vdb /dev/vdc "$(fec /dev/vdc 2 "$FEC_BLOCKS" 0)"

# --- a damaged manifest: corrected at table load ---------------------------
#@check manifest-create
#@check manifest-logged
#@check manifest-status
#@check manifest-reads-as-image
#@check manifest-over-refused
dmesg_mark
if ev em /dev/vdb /dev/vdl "$GOOD"; then
	gpass manifest-create
	if lines "manifest section 0: 1 blocks corrected by FEC" >/dev/null &&
		lines "manifest section 1: 1 blocks corrected by FEC" >/dev/null; then
		gpass manifest-logged
	else
		gfail manifest-logged "$(dmesg_new | tail -n 3 | tr '\n' ' ')"
	fi
	# Counted at load; nothing else needs correcting.
	c=$(counts em)
	if [ "$(corrupt em)" = 0 ] && [ "$(corrected em)" = 2 ]; then gpass manifest-status; else gfail manifest-status "'$c', want 0 corrupt, 2 corrected"; fi
	s=$(dd if=/dev/mapper/em bs=1M 2>/dev/null | md5sum | cut -d' ' -f1)
	c=$(counts em)
	if [ "$s" = "$IMG_MD5" ] && [ "$(corrupt em)" = 0 ] && [ "$(corrected em)" = 2 ]; then
		gpass manifest-reads-as-image
	else
		gfail manifest-reads-as-image "md5 $s, image $IMG_MD5; status '$c'"
	fi
	dmsetup remove em
else
	gfail manifest-create "$(cat /tmp/ev.out) $(dmesg_new | tail -n 3 | tr '\n' ' ')"
	gfail manifest-logged "not created"
	gfail manifest-status "not created"
	gfail manifest-reads-as-image "not created"
fi
refused manifest-over-refused "Extent map digest mismatch" /dev/vdb /dev/vdl "$(fec /dev/vdm 2 "$FEC_BLOCKS" 0)"

# --- a damaged or unreadable superblock: corrected at table load -----------
#@check sb-create
#@check sb-logged
#@check sb-reads-as-image
#@check sb-over-refused
#@check sb-unreadable
dmesg_mark
if ev es /dev/vdb /dev/vdn "$GOOD"; then
	gpass sb-create
	if lines ": superblock corrected by FEC\$" >/dev/null; then
		gpass sb-logged
	else
		gfail sb-logged "$(dmesg_new | tail -n 3 | tr '\n' ' ')"
	fi
	s=$(dd if=/dev/mapper/es bs=1M 2>/dev/null | md5sum | cut -d' ' -f1)
	c=$(counts es)
	if [ "$s" = "$IMG_MD5" ] && [ "$(corrupt es)" = 0 ] && [ "$(corrected es)" = 1 ]; then
		gpass sb-reads-as-image
	else
		gfail sb-reads-as-image "md5 $s, image $IMG_MD5; status '$c', want 0 corrupt, 1 corrected"
	fi
	dmsetup remove es
else
	gfail sb-create "$(cat /tmp/ev.out) $(dmesg_new | tail -n 3 | tr '\n' ' ')"
	gfail sb-logged "not created"
	gfail sb-reads-as-image "not created"
fi
refused sb-over-refused "Superblock does not match the root digest" /dev/vdb /dev/vdn "$(fec /dev/vdo 2 "$FEC_BLOCKS" 0)"
# dm-error under the superblock's block: the hash device cannot read it.
dmesg_mark
if printf '0 %d error\n%d %d linear /dev/vdc %d\n' "$spb" "$spb" $((hlen - spb)) "$spb" |
	dmsetup create --noudevsync --readonly lowers >/tmp/lower.out 2>&1 &&
	dmsetup mknodes lowers && ev esu /dev/vdb /dev/mapper/lowers "$GOOD"; then
	s=$(dd if=/dev/mapper/esu bs=1M 2>/dev/null | md5sum | cut -d' ' -f1)
	if [ "$s" = "$IMG_MD5" ] && [ "$(corrected esu)" = 1 ] && lines ": superblock corrected by FEC\$" >/dev/null; then
		gpass sb-unreadable
	else
		gfail sb-unreadable "md5 $s; status $(counts esu); $(lines . | head -n 3 | tr '\n' '|')"
	fi
	dmsetup remove esu
else
	gfail sb-unreadable "$(cat /tmp/lower.out /tmp/ev.out) $(dmesg_new | tail -n 3 | tr '\n' ' ')"
fi
dmsetup remove lowers 2>/dev/null

# --- the tool ---------------------------------------------------------------
#@check tool-table
#@check tool-open-reads
#@check tool-status
t=$(extverity table --fec-device=/dev/vdd /dev/vde /dev/vdf "$ROOT" 2>&1)
if [ "$t" = "0 $len extverity 1 /dev/vde /dev/vdf 0 sha256 $ROOT $GOOD" ]; then
	gpass tool-table
else
	gfail tool-table "'$t'"
fi
if extverity open --fec-device=/dev/vdd /dev/vde et /dev/vdf "$ROOT" >/tmp/open.out 2>&1; then
	dmsetup mknodes et
	s=$(dd if=/dev/mapper/et bs=1M 2>/dev/null | md5sum | cut -d' ' -f1)
	if [ "$s" = "$IMG_MD5" ]; then gpass tool-open-reads; else gfail tool-open-reads "md5 $s"; fi
	extverity status et >/tmp/st.out 2>&1
	n=$(sed -n 's/^ *corrected: *\([0-9]*\) blocks (by FEC)$/\1/p' /tmp/st.out)
	if [ "${n:-0}" -ge 6 ] &&
		grep -q "^ *FEC: *device [0-9]*:[0-9]*, 2 roots over $FEC_BLOCKS blocks, parity at block 0\$" /tmp/st.out; then
		gpass tool-status
	else
		gfail tool-status "$(tr '\n' '|' </tmp/st.out)"
	fi
	extverity close et
else
	gfail tool-open-reads "open: $(cat /tmp/open.out)"
	gfail tool-status "not opened"
fi
