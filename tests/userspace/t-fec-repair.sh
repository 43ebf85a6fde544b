#!/usr/bin/env bash
# verify --fec-device and repair (issue 19), on the shared ext4 image
# formatted with --fec-device: data blocks and a tree block garbled, each
# in a round of its own (docs/format.md's rounds).  verify still fails
# (exit 2) and lists the blocks FEC corrects; repair writes copies that
# are the image and its hash area byte for byte, and that verify accepts;
# without --hash-output a damaged hash area is refused with nothing
# written.  One round past the capacity (two blocks of one round): verify
# counts it, repair refuses with nothing written.  A damaged manifest
# block: verify names it, repair rebuilds it into --hash-output and
# refuses without.  Bad uses are refused.
. "$TOPDIR/tests/userspace/common.sh"
W=$WORKDIR
E=$EXTVERITY

mkimg "$W/i" 4096
img=$W/i/image.ext4
if ! "$E" format --fec-device="$W/fec" "$img" "$W/hash" >"$W/fmt" 2>&1; then
	fail "format: $(cat "$W/fmt")"
	finish
fi
root=$(root_of "$W/fmt")
n=$(sed -n 's/^Data blocks: *//p' "$W/fmt")
blocks=$(sed -n 's/^FEC blocks: *//p' "$W/fmt")
rounds=$(((blocks + 252) / 253))
# Data blocks 100, 101 and 5000, hash block 3 (a tree block: the first
# blocks after the manifest are TOPS and LEVELS): four rounds.
top=$(python3 - "$W/hash" <<'PY'
import struct, sys
sb = open(sys.argv[1], 'rb').read(1024)
print(struct.unpack_from('<Q', sb, 88 + 3 * 96)[0])
PY
)
r=" "
for b in 100 101 5000 $((n + top)); do
	case $r in *" $((b % rounds)) "*) fail "blocks share a round: pick others"; finish ;; esac
	r="$r$((b % rounds)) "
done
cp "$img" "$W/bad"
garble "$W/bad" 100 101 5000
cp "$W/hash" "$W/badh"
garble "$W/badh" "$top"

check_err "verify --fec-device: still damaged, exit 2" 2 \
	"FEC corrects 3 data blocks and 1 hash blocks; 0 rounds have more errors" \
	"$E" verify --fec-device="$W/fec" "$W/bad" "$W/badh" "$root"
"$E" verify --fec-device="$W/fec" "$W/bad" "$W/badh" "$root" 2>"$W/v.err"
got=$(sed -n 's/.*FEC corrects: //p' "$W/v.err" | sort | tr '\n' ',')
want=$(printf '%s\n' 'data block 100' 'data block 101' 'data block 5000' "hash block $top" | sort | tr '\n' ',')
if [ "$got" = "$want" ]; then
	pass "verify --fec-device names each block FEC corrects"
else
	fail "verify --fec-device: '$got'"
fi

rm -f "$W/out" "$W/outh"
check_err "repair without --hash-output: the tree block stays damaged" 2 \
	"still has 1 damaged items \\(0 rounds past what FEC corrects; 1 hash blocks FEC corrects need --hash-output\\): nothing written" \
	"$E" repair --fec-device="$W/fec" "$W/bad" "$W/badh" "$root" "$W/out"
check "nothing written" bash -c "[ ! -e '$W/out' ] && ! ls -A '$W' | grep -q '^\\.out\\.'"
if "$E" repair --fec-device="$W/fec" --hash-output="$W/outh" "$W/bad" "$W/badh" \
	"$root" "$W/out" >"$W/rep" 2>&1 &&
	grep -q "^Repaired 3 data blocks and 1 hash blocks; $W/out verifies.\$" "$W/rep"; then
	pass "repair: 3 data blocks and 1 hash block"
else
	fail "repair: $(cat "$W/rep")"
fi
check "repair: the copy is the image" cmp -s "$img" "$W/out"
check "repair: the hash output is the hash area" cmp -s "$W/hash" "$W/outh"
check "repair: verify accepts the copies" "$E" verify "$W/out" "$W/outh" "$root"

# Two blocks of one round: 2 roots cannot correct it.
cp "$W/bad" "$W/bad2"
garble "$W/bad2" $((100 + rounds))
# 100 and 100 + rounds cannot be corrected, 101 and 5000 can.
check_err "verify --fec-device: a round past the capacity" 2 \
	"FEC corrects 2 data blocks and 0 hash blocks; 1 rounds have more errors" \
	"$E" verify --fec-device="$W/fec" "$W/bad2" "$W/hash" "$root"
rm -f "$W/out2"
check_err "repair past the capacity: refused" 2 \
	"still has 2 damaged items \\(1 rounds past what FEC corrects\\): nothing written" \
	"$E" repair --fec-device="$W/fec" "$W/bad2" "$W/hash" "$root" "$W/out2"
check "repair past the capacity: nothing written" test ! -e "$W/out2"

# A damaged manifest (the extent map's first block): the FEC record still
# authenticates, so verify says what the parity corrects and repair
# rebuilds the hash area, into --hash-output only.
ext=$(python3 - "$W/hash" <<'PY'
import struct, sys
sb = open(sys.argv[1], 'rb').read(1024)
print(struct.unpack_from('<Q', sb, 88)[0])
PY
)
cp "$W/hash" "$W/badm"
garble "$W/badm" "$ext"
check_err "verify --fec-device: a damaged manifest" 2 \
	"FEC corrects 0 data blocks and 1 hash blocks; 0 rounds have more errors" \
	"$E" verify --fec-device="$W/fec" "$img" "$W/badm" "$root"
check_err "verify --fec-device: names the manifest block" 2 \
	"FEC corrects: hash block $ext\$" \
	"$E" verify --fec-device="$W/fec" "$img" "$W/badm" "$root"
rm -f "$W/out6" "$W/outm6"
check_err "repair of a damaged manifest without --hash-output: refused" 2 \
	"the manifest of $W/badm is damaged: repairing it needs --hash-output" \
	"$E" repair --fec-device="$W/fec" "$img" "$W/badm" "$root" "$W/out6"
check "repair of a damaged manifest refused: nothing written" test ! -e "$W/out6"
if "$E" repair --fec-device="$W/fec" --hash-output="$W/outm6" "$img" "$W/badm" \
	"$root" "$W/out6" >"$W/rep6" 2>&1 &&
	grep -q "^Repaired 0 data blocks and 1 hash blocks; $W/out6 verifies.\$" "$W/rep6"; then
	pass "repair of a damaged manifest: 1 hash block"
else
	fail "repair of a damaged manifest: $(cat "$W/rep6")"
fi
check "repair of a damaged manifest: the hash output is the hash area" cmp -s "$W/hash" "$W/outm6"
# The FEC record's own block damaged: nothing says where the parity is.
rec=$(python3 - "$W/hash" <<'PY'
import struct, sys
sb = open(sys.argv[1], 'rb').read(1024)
print(struct.unpack_from('<Q', sb, 88 + 6 * 96)[0])
PY
)
cp "$W/hash" "$W/badr"
garble "$W/badr" "$rec"
rm -f "$W/out7" "$W/outm7"
check_err "repair with its FEC record damaged: refused" 2 \
	"corrupted: manifest section" \
	"$E" repair --fec-device="$W/fec" --hash-output="$W/outm7" "$img" "$W/badr" "$root" "$W/out7"
check "repair with its FEC record damaged: nothing written" \
	bash -c "[ ! -e '$W/out7' ] && [ ! -e '$W/outm7' ]"

check_err "repair without --fec-device" 1 "repair needs --fec-device" \
	"$E" repair "$W/bad" "$W/hash" "$root" "$W/out3"
check_err "repair over its input" 1 "must be new files" \
	"$E" repair --fec-device="$W/fec" "$W/bad" "$W/hash" "$root" "$W/bad"
check_err "repair onto a device" 1 "must be files, not devices" \
	"$E" repair --fec-device="$W/fec" "$W/bad" "$W/hash" "$root" /dev/null
"$E" format "$img" "$W/nofec.h" >"$W/nofec.fmt" 2>&1
check_err "repair of an area without FEC" 1 "has no FEC record" \
	"$E" repair --fec-device="$W/fec" "$W/bad" "$W/nofec.h" "$(root_of "$W/nofec.fmt")" "$W/out4"
case $root in *0) other=${root%?}1 ;; *) other=${root%?}0 ;; esac
check_err "repair with a wrong root digest" 1 "" \
	"$E" repair --fec-device="$W/fec" "$W/bad" "$W/hash" "$other" "$W/out5"
finish
