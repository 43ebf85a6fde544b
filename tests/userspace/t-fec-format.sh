#!/usr/bin/env bash
# format --fec-device (issue 19): the parity it writes is the Reed-Solomon
# parity of the image followed by its hash area, as fec-encode.c computes
# it (t-fec.sh checks that against veritysetup's), in a file of its own,
# after an area appended to the image, and after the area in the hash
# file; the FEC record (slot 6, compat flag 2) read back by evread.py and
# by dump agrees with what format printed.  Bad options and parity that
# would overlap the data or the area are refused, with nothing written; a
# failed write leaves neither the area nor the parity.  Forged FEC records
# that still authenticate are refused with what is wrong.
. "$TOPDIR/tests/userspace/common.sh"
W=$WORKDIR
E=$EXTVERITY
R=$TOPDIR/tests/userspace/evread.py
F=$TOPDIR/tests/userspace/evforge.py
enc=$W/fec-encode
if ! cc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O1 \
	-I"$TOPDIR/tools/lib" -I"$TOPDIR/drivers/md" -I"$TOPDIR/include/uapi" \
	-o "$enc" "$TOPDIR/tests/userspace/fec-encode.c" \
	"$TOPDIR/tools/lib/fec.c" -lpthread 2>"$W/cc.log"; then
	fail "cannot build fec-encode: $(head -n 5 "$W/cc.log" | tr '\n' ' ')"
	finish
fi

# field NAME FILE: a "Name:   value" line of format's or dump's output.
field() {
	sed -n "s/^$1: *//p" "$2"
}

# parity NAME BS ROOTS FECFILE FECOFF INPUT...: the FEC bytes FECFILE
# holds at FECOFF are fec-encode's parity of the INPUTs, and the FEC record
# (evread.py and dump) says what format printed in $W/NAME.fmt.
parity() {
	local name=$1 bs=$2 roots=$3 file=$4 off=$5 hashfile=$6 hoff=$7 root
	shift 7
	root=$(root_of "$W/$name.fmt")
	if ! "$enc" "$bs" "$roots" 2 "$W/$name.want" "$@" 2>"$W/$name.err"; then
		fail "$name: fec-encode: $(cat "$W/$name.err")"
		return
	fi
	if cmp -s "$W/$name.want" <(tail -c +$((off + 1)) "$file" | head -c "$(stat -c %s "$W/$name.want")"); then
		pass "$name: the parity is the image's and the area's ($(stat -c %s "$W/$name.want") bytes at $off)"
	else
		fail "$name: the parity differs from fec-encode's"
	fi
	local blocks hb fb
	hb=$(field "Hash blocks" "$W/$name.fmt")
	blocks=$(($(field "Data blocks" "$W/$name.fmt") + hb))
	fb=$(($(field "FEC bytes" "$W/$name.fmt") / bs))
	if [ "$(field "FEC blocks" "$W/$name.fmt")" = "$blocks" ] &&
		[ "$(field "FEC roots" "$W/$name.fmt")" = "$roots" ] &&
		[ "$(field "FEC bytes" "$W/$name.fmt")" = "$(stat -c %s "$W/$name.want")" ]; then
		pass "$name: format prints $roots roots over $blocks blocks (data + hash area)"
	else
		fail "$name: format printed $(grep FEC "$W/$name.fmt" | tr '\n' '|'), want $roots roots, $blocks blocks"
	fi
	# evread.py reads the area at offset 0.
	tail -c +$((hoff + 1)) "$hashfile" | head -c $((hb * bs)) >"$W/$name.area"
	if [ "$(python3 "$R" "$W/$name.area" "$root" fec 2>&1)" = "FEC $((off / bs)) $blocks $roots $fb" ]; then
		pass "$name: evread.py reads the FEC record format wrote"
	else
		fail "$name: evread.py: $(python3 "$R" "$W/$name.area" "$root" fec 2>&1)"
	fi
	"$E" dump --hash-offset="$hoff" --root-digest="$root" "$hashfile" >"$W/$name.dump" 2>&1
	if [ "$(grep '^FEC' "$W/$name.dump")" = "$(grep '^FEC [obr]' "$W/$name.fmt")" ]; then
		pass "$name: dump prints the FEC record"
	else
		fail "$name: dump: $(grep FEC "$W/$name.dump" | tr '\n' '|')"
	fi
}

mkimg "$W/i" 4096
img=$W/i/image.ext4
size=$(stat -c %s "$img")

# A FEC file of its own, 2 roots (the default).
if "$E" format --fec-device="$W/a.fec" "$img" "$W/a.h" >"$W/a.fmt" 2>&1; then
	parity a 4096 2 "$W/a.fec" 0 "$W/a.h" 0 "$img" "$W/a.h"
	check "a: verify succeeds with a FEC section" \
		"$E" verify "$img" "$W/a.h" "$(root_of "$W/a.fmt")"
else
	fail "a: format: $(cat "$W/a.fmt")"
fi

# The area appended to the image, the parity after it, 24 roots.
cp "$img" "$W/b.img"
hb=$(field "Hash blocks" "$W/a.fmt")
foff=$((size + (hb + 3) * 4096))
if "$E" format --hash-offset="$size" --fec-device="$W/b.img" \
	--fec-offset="$foff" --fec-roots=24 "$W/b.img" "$W/b.img" >"$W/b.fmt" 2>&1; then
	parity b 4096 24 "$W/b.img" "$foff" "$W/b.img" "$size" "$W/b.img@0+$((size + hb * 4096))"
	check "b: the image's data is unchanged" cmp -n "$size" "$img" "$W/b.img"
else
	fail "b: format: $(cat "$W/b.fmt")"
fi

# The parity in the hash file, after the area; 1 KiB blocks, sha512.
mkimg "$W/k" 1024
if "$E" format --hash=sha512 --data-block-size=1024 --fec-device="$W/c.h" \
	--fec-offset=$((32 * 1048576)) --fec-roots=7 "$W/k/image.ext4" "$W/c.h" >"$W/c.fmt" 2>&1; then
	parity c 1024 7 "$W/c.h" $((32 * 1048576)) "$W/c.h" 0 "$W/k/image.ext4" \
		"$W/c.h@0+$(($(field "Hash blocks" "$W/c.fmt") * 1024))"
else
	fail "c: format: $(cat "$W/c.fmt")"
fi

if "$E" format --json --fec-device="$W/j.fec" "$img" "$W/j.h" >"$W/j.json" 2>&1 &&
	python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["fec_device"] == sys.argv[2] and j["fec_offset"] == 0, j
assert j["fec_roots"] == 2 and j["fec_blocks"] == j["data_blocks"] + j["hash_blocks"], j
assert j["fec_bytes"] > 0 and j["fec_bytes"] % j["data_block_size"] == 0, j
' "$W/j.json" "$W/j.fec"; then
	pass "format --json: fec_device, fec_offset, fec_roots, fec_blocks, fec_bytes"
else
	fail "format --json: $(cat "$W/j.json")"
fi
if grep -q '^FEC: *none$' <("$E" dump "$W/j.h" 2>&1; "$E" format "$img" "$W/n.h" >/dev/null 2>&1; "$E" dump "$W/n.h" 2>&1); then
	pass "dump of an area without FEC says none"
else
	fail "dump of an area without FEC: $("$E" dump "$W/n.h" 2>&1 | grep FEC)"
fi

# Refusals: exit 1, the reason, and no hash file or parity written.
# refused NAME PATTERN ARGS...: format ARGS... "$img" $W/r.h is refused.
refused() {
	local name=$1 pattern=$2
	shift 2
	rm -f "$W/r.h" "$W/r.fec"
	check_err "$name" 1 "$pattern" "$E" format "$@" "$img" "$W/r.h"
	if [ -e "$W/r.h" ] || [ -e "$W/r.fec" ]; then
		fail "$name: wrote $(ls "$W"/r.*)"
	fi
}
refused "roots 1" "invalid --fec-roots '1' \\(2 to 24\\)" --fec-device="$W/r.fec" --fec-roots=1
refused "roots 25" "invalid --fec-roots '25' \\(2 to 24\\)" --fec-device="$W/r.fec" --fec-roots=25
refused "roots not a number" "invalid --fec-roots 'two'" --fec-device="$W/r.fec" --fec-roots=two
refused "--fec-roots without a device" "need --fec-device" --fec-roots=4
refused "--fec-offset without a device" "need --fec-device" --fec-offset=4096
refused "--fec-offset not a multiple of the block size" \
	"--fec-offset 1000 is not a multiple of the block size 4096" \
	--fec-device="$W/r.fec" --fec-offset=1000
cp "$img" "$W/r.img"
rm -f "$W/r.h"
check_err "parity over the image's data" 1 "puts the FEC parity over the data of" \
	"$E" format --fec-device="$W/r.img" --fec-offset=$((size - 4096)) "$W/r.img" "$W/r.h"
check "parity over the image's data: image unchanged, no area" \
	bash -c "cmp -s '$img' '$W/r.img' && [ ! -e '$W/r.h' ]"
check_err "parity over the appended area" 1 "puts the FEC parity over the hash area" \
	"$E" format --hash-offset="$size" --fec-device="$W/r.img" \
	--fec-offset=$((size + 4096)) "$W/r.img" "$W/r.img"
check "parity over the appended area: image unchanged" cmp -s "$img" "$W/r.img"
check_err "parity over the area in the hash file" 1 "puts the FEC parity over the hash area" \
	"$E" format --fec-device="$W/r.h" --fec-offset=4096 "$img" "$W/r.h"

# A write that fails leaves nothing: the parity cannot be written (no such
# directory), then the area cannot (the parity is not renamed into place).
rm -f "$W/r.h" "$W"/.r.*
check_err "parity unwritable: refused" 4 "cannot create a file next to $W/none/r.fec" \
	"$E" format --fec-device="$W/none/r.fec" "$img" "$W/r.h"
check "parity unwritable: no hash area written" test ! -e "$W/r.h"
check_err "area unwritable: refused" 4 "cannot create a file next to $W/none/r.h" \
	"$E" format --fec-device="$W/r.fec" "$img" "$W/none/r.h"
check "area unwritable: no parity left, no temporary file" \
	bash -c "[ ! -e '$W/r.fec' ] && [ -z \"\$(ls -A '$W' | grep '^\\.r\\.')\" ]"

# Forged FEC records, re-signed: each refused with what is wrong.
root=$(root_of "$W/a.fmt")
forged() {
	local change=$1 rc=$2 pattern=$3 r
	if ! r=$(python3 "$F" "$W/a.h" "$W/f.h" "$root" "$change" 2>&1); then
		fail "forged $change: evforge: $r"
		return
	fi
	check_err "forged $change: refused" "$rc" "$pattern" \
		"$E" dump --root-digest="$r" "$W/f.h"
}
r=$(python3 "$F" "$W/a.h" "$W/f.h" "$root" same)
check "forged same: the root is unchanged" test "$r" = "$root"
forged fec-roots-1 2 "FEC roots out of range \\(2 to 24\\)"
forged fec-roots-25 2 "FEC roots out of range \\(2 to 24\\)"
forged fec-blocks 2 "FEC does not cover exactly the data and the hash area"
forged fec-past-device 2 "FEC parity lies past the largest device"
forged fec-reserved 2 "FEC record has reserved bytes set"
forged fec-two-records 1 "FEC section does not hold one record"
forged fec-no-record 1 "FEC section does not hold one record"
# The record's bytes are authenticated: one flipped is a bad digest.
fec_start=$(python3 - "$W/a.h" <<'PY'
import struct, sys
sb = open(sys.argv[1], 'rb').read(1024)
print(struct.unpack_from('<Q', sb, 88 + 6 * 96)[0])
PY
)
cp "$W/a.h" "$W/g.h"
flip "$W/g.h" $((fec_start * 4096 + 16))
check_err "a flipped FEC record: the section's digest fails" 2 \
	"corrupted: manifest section FEC" "$E" dump --root-digest="$root" "$W/g.h"
finish
