#!/usr/bin/env bash
# Memory of format and verify does not follow file sizes (issue 15 item 1):
# a 32 MiB ext4 image holding an 8 GiB sparse file has a 64.6 MiB hash area
# (the file's level 0 alone is 64 MiB), and both commands must work with
# less address space than that.  Trees are hashed into a scratch file and
# checked a chunk at a time; the area is copied from the scratch file to
# the output, never built in memory.
#
# The bound is a functional one, `ulimit -v` (not a measurement: peak RSS
# is in the benchmark).  64 MiB of address space is below the size of the
# area itself, so no code holding a whole tree or the whole area can pass
# (before the change format needed 130-160 MiB, verify 64-96 MiB), while
# the streaming code runs in about 32 MiB.  The release build is used:
# ASan reserves terabytes of address space.  Threads that cannot get a stack
# under the limit are simply not started.
. "$TOPDIR/tests/userspace/common.sh"
W=$WORKDIR
EV=$EXTVERITY_RELEASE
LIMIT_KB=$((64 * 1024))
S="--salt=00ff11 --uuid=12345678-1234-1234-1234-123456789abc"

# Scratch files go to TMPDIR: keep them where we can see they are gone.
mkdir -p "$W/tmp" "$W/d"
export TMPDIR=$W/tmp

# limited CMD...: CMD under the address space limit.
limited() {
	(ulimit -v "$LIMIT_KB" && "$@")
}

# 8 GiB apparent size; 1 MiB + 5000 bytes of data at 4 GiB + 12345 so that
# verify reads leaves from the middle of level 0, across chunk boundaries.
truncate -s 8G "$W/d/big"
openssl enc -aes-128-ctr -pass pass:mem -nosalt -pbkdf2 </dev/zero \
	2>/dev/null | head -c $((1024 * 1024 + 5000)) |
	dd of="$W/d/big" bs=1 seek=$((4 * 1024 * 1024 * 1024 + 12345)) \
		conv=notrunc status=none
echo small >"$W/d/small"
mke2fs -q -F -t ext4 -b 4096 -d "$W/d" "$W/img" 32M >/dev/null

rc=0
limited "$EV" format $S "$W/img" "$W/h" >"$W/out" 2>"$W/err" || rc=$?
if [ "$rc" -eq 0 ]; then
	pass "format of an 8 GiB sparse file in $LIMIT_KB KiB of address space"
else fail "format within the limit: exit $rc: $(head -c 300 "$W/err")"; fi
root=$(root_of "$W/out")
# Hole hash blocks, from how the file was built: its 2^21 blocks' tree has
# 2^14 level-0 and 2^7 level-1 blocks, of which only those over its data
# (blocks 4 GiB + 12345 to + 1 MiB + 5000) cover more than holes.
want=$(python3 -c '
first = (4 * 2**30 + 12345) // 4096
last = (4 * 2**30 + 12345 + 2**20 + 5000 - 1) // 4096
print(sum(2**21 // 128**l - ((last >> 7 * l) - (first >> 7 * l) + 1) for l in (1, 2)))')
got=$(sed -n 's/^Hole hash blocks: *//p' "$W/out")
check "summary: $want hash blocks over holes only" test "$got" = "$want"
"$EV" dump "$W/h" >"$W/dump" 2>&1
check "dump counts them alike" test "$(sed -n 's/^Hole hash blocks: *//p' "$W/dump")" = "$want"
size=$(stat -c %s "$W/h" 2>/dev/null || echo 0)
if [ "$size" -gt $((LIMIT_KB * 1024)) ]; then
	pass "the hash area ($size bytes) is larger than the limit"
else fail "the hash area ($size bytes) should exceed the limit"; fi
check "no scratch file left behind" test -z "$(ls -A "$W/tmp")"

# The same area without the limit (all threads, other chunk interleaving).
"$EV" format $S "$W/img" "$W/h2" >/dev/null
check "the area does not depend on the limit" cmp -s "$W/h" "$W/h2"
rm -f "$W/h2"

check_exit "verify in $LIMIT_KB KiB of address space" 0 \
	limited "$EV" verify "$W/img" "$W/h" "$root"

# Appended to the image itself, written in place: the same area.
cp --sparse=always "$W/img" "$W/app"
check_exit "format --hash-offset in place within the limit" 0 \
	limited "$EV" format $S --hash-offset=$((32 * 1024 * 1024)) \
	"$W/app" "$W/app" >/dev/null
check "appended area equals the separate one" \
	cmp -s -i $((32 * 1024 * 1024)):0 "$W/app" "$W/h"
check_exit "verify of the appended area within the limit" 0 \
	limited "$EV" verify --hash-offset=$((32 * 1024 * 1024)) "$W/app" \
	"$W/app" "$root"
rm -f "$W/app"

# Damage is still found and named when trees are read a chunk at a time.
# /big: 2^21 data blocks, level 0 of 16384 blocks after a level 1 of 128;
# the leaves of the data at 4 GiB are in level-0 block 8192.
python3 "$TOPDIR/tests/userspace/evread.py" "$W/h" "$root" sections >"$W/sec"
read -r _ _ _ _ lev < <(awk '$1 == "TREE" && $3 == 8589934592' "$W/sec")
cp "$W/h" "$W/hc"
flip "$W/hc" $(((lev + 128 + 8192) * 4096 + 40))
check_err "a level-0 block in the middle of a big tree is checked" 2 \
	"corrupted: hash tree of /big .*level 0" \
	limited "$EV" verify "$W/img" "$W/hc" "$root"
blk=$(debugfs -R "bmap /big $((4 * 1024 * 1024 * 1024 / 4096 + 100))" \
	"$W/img" 2>/dev/null)
cp "$W/img" "$W/imgc"
flip "$W/imgc" $((blk * 4096 + 7))
check_err "a damaged data block at 4 GiB is named with its offset" 2 \
	"file /big \(inode [0-9]+\) at offset $(((4 * 1024 * 1024 * 1024 / 4096 + 100) * 4096))" \
	limited "$EV" verify "$W/imgc" "$W/h" "$root"
rm -f "$W/hc" "$W/imgc"

# Without a usable scratch directory, format fails and writes nothing.
check_err "an unusable scratch directory is an error" 4 \
	"cannot create a scratch file in $W/none" \
	env TMPDIR="$W/none" "$EXTVERITY" format $S "$W/img" "$W/h3"
check "nothing written when the scratch file fails" test ! -e "$W/h3"
# A size no tree can cover (2^32 blocks, here 5 TiB with 1 KiB blocks) is
# refused naming the inode, before any hashing; nothing is written.
mkdir -p "$W/d5" && echo x >"$W/d5/f"
mke2fs -q -F -t ext4 -b 1024 -d "$W/d5" "$W/img5" 8M >/dev/null
debugfs -w -R "sif /f size 0x50000000000" "$W/img5" >/dev/null 2>&1
rc=0
"$EXTVERITY" format --data-block-size=1024 "$W/img5" "$W/h5" \
	>/dev/null 2>"$W/err" || rc=$?
if [ "$rc" -ne 0 ] && grep -q "inode 12\b" "$W/err" && [ ! -e "$W/h5" ]; then
	pass "a 5 TiB inode is refused, naming it"
else fail "a 5 TiB inode: exit $rc, $(head -c 200 "$W/err")"; fi
finish
