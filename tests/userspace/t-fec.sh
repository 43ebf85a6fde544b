#!/usr/bin/env bash
# Reed-Solomon parity (tools/lib/fec.c, through fec-encode.c) against
# veritysetup's FEC for the same area: byte for byte, for the smallest and
# largest number of roots, two block sizes, areas that end inside a round
# and span several of the encoder's batches, 1 and 4 threads.  veritysetup
# covers the data and then its hash device from the block after its
# superblock.  Out-of-range parameters and a short input are refused with
# what is wrong.  Then correction with veritysetup's parity, up to what the
# roots can correct and one past it, with veritysetup's own verify as the
# oracle of what 2 roots repair.
. "$TOPDIR/tests/userspace/common.sh"
W=$WORKDIR
enc=$W/fec-encode
# shellcheck disable=SC2086
if ! cc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O1 \
	-fsanitize=address,undefined -fno-sanitize-recover=all \
	-I"$TOPDIR/tools/lib" -I"$TOPDIR/drivers/md" -I"$TOPDIR/include/uapi" \
	-o "$enc" "$TOPDIR/tests/userspace/fec-encode.c" \
	"$TOPDIR/tools/lib/fec.c" -lpthread 2>"$W/cc.log"; then
	fail "cannot build fec-encode: $(head -n 5 "$W/cc.log" | tr '\n' ' ')"
	finish
fi

# same NAME BS ROOTS BYTES: veritysetup's parity of random data of BYTES,
# and ours with 1 and with 4 threads.
same() {
	local name=$1 bs=$2 roots=$3 bytes=$4 t
	head -c "$bytes" /dev/urandom >"$W/data"
	rm -f "$W/hash" "$W/vfec"
	if ! veritysetup format --data-block-size="$bs" --hash-block-size="$bs" \
		--fec-device="$W/vfec" --fec-roots="$roots" \
		"$W/data" "$W/hash" >"$W/v.out" 2>&1; then
		fail "$name: veritysetup format: $(tail -n 1 "$W/v.out")"
		return
	fi
	for t in 1 4; do
		rm -f "$W/efec"
		if ! "$enc" "$bs" "$roots" "$t" "$W/efec" "$W/data" "$W/hash@$bs" 2>"$W/e.err"; then
			fail "$name ($t threads): $(cat "$W/e.err")"
		elif ! cmp -s "$W/vfec" "$W/efec"; then
			fail "$name ($t threads): differs from veritysetup's ($(stat -c %s "$W/efec") bytes, want $(stat -c %s "$W/vfec"); $(cmp "$W/vfec" "$W/efec" 2>&1 | head -n 1))"
		else
			pass "$name ($t threads, $(stat -c %s "$W/efec") bytes)"
		fi
	done
}
same roots-2 4096 2 $((5 * 1048576 + 3 * 4096))
same roots-24 4096 24 $((5 * 1048576 + 3 * 4096))
# 3584 blocks and a 4-block hash area: 15 rounds of 253, two batches.
same batches 4096 2 $((14 * 1048576))
same bs-1024-roots-7 1024 7 $((3 * 1048576 + 5 * 1024))

# Correction (ev_fec_correct_block) with veritysetup's parity: a block of
# garbage is one bad byte in each of its codewords, which 2 roots correct;
# two in one round (blocks X and X + rounds) are not.  24 roots correct 12
# blocks of one round, not 13.
# fixed NAME ROOTS BLOCK: block BLOCK of the area comes back as it was.
fixed() {
	local name=$1 roots=$2 block=$3 got
	if ! got=$("$enc" -c 4096 "$roots" "$W/fec$roots" "$block" "$W/blk" \
		"$W/bad" "$W/hash$roots@4096" 2>&1); then
		fail "$name: $got"
	elif ! cmp -s "$W/blk" "$W/good.$block"; then
		fail "$name: block $block corrected into other bytes ($got)"
	else
		pass "$name ($got)"
	fi
}
head -c $((6 * 1048576)) /dev/urandom >"$W/data"
for r in 2 24; do
	rm -f "$W/hash$r" "$W/fec$r"
	veritysetup format --fec-device="$W/fec$r" --fec-roots=$r \
		"$W/data" "$W/hash$r" >"$W/vf$r.out"
done
root2=$(sed -n 's/^Root hash:[[:space:]]*//p' "$W/vf2.out")
# oracle NAME WANT: veritysetup's own verify of $W/bad with its 2-root
# FEC says the damage is repairable (WANT 0) or not (2): the capacity this
# decoder is held to.
oracle() {
	local rc=0
	veritysetup verify --fec-device="$W/fec2" --fec-roots=2 "$W/bad" \
		"$W/hash2" "$root2" >"$W/vv.out" 2>&1 || rc=$?
	if [ "$rc" = "$2" ]; then
		pass "$1: veritysetup verify agrees (exit $rc: $(grep -i -m1 'repair' "$W/vv.out"))"
	else
		fail "$1: veritysetup verify exit $rc, want $2: $(tail -n 2 "$W/vv.out" | tr '\n' ' ')"
	fi
}
# 1536 data blocks and 13 hash blocks (12 after the superblock): 7 rounds
# with 2 roots (253 a codeword), 7 with 24 (231).
hblocks=$(($(stat -c %s "$W/hash2") / 4096 - 1))
rounds2=$(((1536 + hblocks + 252) / 253))
rounds24=$(((1536 + $(stat -c %s "$W/hash24") / 4096 - 1 + 230) / 231))
cat "$W/data" "$W/hash2" >"$W/good"
cp "$W/data" "$W/bad"
for b in 5 $((5 + rounds2)) 1537; do
	dd if="$W/good" of="$W/good.$b" bs=4096 skip=$b count=1 2>/dev/null
done
fixed unchanged-block 2 5
garble "$W/bad" 5
fixed data-block-2-roots 2 5
oracle data-block-2-roots 0
# Block 1537 of the area is the hash device's second block after its
# superblock: the tree is covered too.
cp "$W/hash2" "$W/hash2.keep"
garble "$W/hash2" 2
dd if="$W/hash2.keep" of="$W/good.1537" bs=4096 skip=2 count=1 2>/dev/null
fixed hash-block-2-roots 2 1537
cp "$W/hash2.keep" "$W/hash2"
garble "$W/bad" $((5 + rounds2))
check_err two-in-a-round-2-roots 1 'too many errors to correct' \
	"$enc" -c 4096 2 "$W/fec2" 5 "$W/blk" "$W/bad" "$W/hash2@4096"
oracle two-in-a-round-2-roots 2
cp "$W/data" "$W/bad"
twelve=$(for k in $(seq 0 11); do echo $((3 + k * rounds24)); done)
# shellcheck disable=SC2086
garble "$W/bad" $twelve
dd if="$W/data" of="$W/good.$((3 + 11 * rounds24))" bs=4096 \
	skip=$((3 + 11 * rounds24)) count=1 2>/dev/null
fixed twelve-in-a-round-24-roots 24 $((3 + 11 * rounds24))
garble "$W/bad" $((3 + 12 * rounds24))
check_err thirteen-in-a-round-24-roots 1 'too many errors to correct' \
	"$enc" -c 4096 24 "$W/fec24" 3 "$W/blk" "$W/bad" "$W/hash24@4096"
check_err block-past-the-area 1 'past the area FEC covers' \
	"$enc" -c 4096 2 "$W/fec2" $((1536 + hblocks)) "$W/blk" "$W/data" "$W/hash2@4096"
head -c 100 "$W/fec2" >"$W/fec2.short"
check_err parity-short 1 'the FEC parity ends early' \
	"$enc" -c 4096 2 "$W/fec2.short" 5 "$W/blk" "$W/data" "$W/hash2@4096"

head -c 65536 /dev/urandom >"$W/small"
check_err roots-1-refused 1 'FEC roots or block size out of range' \
	"$enc" 4096 1 1 "$W/o" "$W/small"
check_err roots-25-refused 1 'FEC roots or block size out of range' \
	"$enc" 4096 25 1 "$W/o" "$W/small"
check_err block-size-refused 1 'FEC roots or block size out of range' \
	"$enc" 3000 2 1 "$W/o" "$W/small"
check_err empty-refused 1 'the area FEC covers is empty' \
	"$enc" 4096 2 1 "$W/o" "$W/small@65536"
check_err short-input 1 'the area FEC covers ends early' \
	"$enc" 4096 2 2 "$W/o" "$W/small@0+1048576"
finish
