#!/usr/bin/env bash
# Reed-Solomon parity (tools/lib/fec.c, through fec-encode.c) against
# veritysetup's FEC for the same area: byte for byte, for the smallest and
# largest number of roots, two block sizes, areas that end inside a round
# and span several of the encoder's batches, 1 and 4 threads.  veritysetup
# covers the data and then its hash device from the block after its
# superblock.  Out-of-range parameters and a short input are refused with
# what is wrong.
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
