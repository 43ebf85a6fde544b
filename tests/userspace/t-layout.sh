#!/usr/bin/env bash
# Determinism, --hash-offset (appended and separate file), --fs=raw.
. "$TOPDIR/tests/userspace/common.sh"
W=$WORKDIR
MKIMAGE_NO_BIG=1 mkimg "$W/i" 4096
img=$W/i/image.ext4
u=12345678-1234-5678-9abc-def012345678
"$EXTVERITY" format --salt=aabb --uuid=$u "$img" "$W/h1" >/dev/null 2>&1
"$EXTVERITY" format --salt=aabb --uuid=$u "$img" "$W/h2" >/dev/null 2>&1
check "same salt+uuid gives byte-identical hash file" bash -c "[ -s '$W/h1' ] && cmp -s '$W/h1' '$W/h2'"
# No salt by default (fs-verity's default): the same bytes as --salt=-.
"$EXTVERITY" format --uuid=$u "$img" "$W/h3" >/dev/null 2>&1
"$EXTVERITY" format --salt=- --uuid=$u "$img" "$W/h4" >/dev/null 2>&1
check "default format wrote a hash area" test -s "$W/h3"
check "default salt is none" cmp "$W/h3" "$W/h4"
# --salt=random: 32 bytes, a new one each time.
"$EXTVERITY" format --salt=random --uuid=$u --json "$img" "$W/h5" >"$W/j5" 2>&1
"$EXTVERITY" format --salt=random --uuid=$u --json "$img" "$W/h6" >"$W/j6" 2>&1
salt_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["salt"])' "$1" 2>/dev/null; }
s5=$(salt_of "$W/j5")
s6=$(salt_of "$W/j6")
if [[ $s5 =~ ^[0-9a-f]{64}$ ]] && [[ $s6 =~ ^[0-9a-f]{64}$ ]] && [ "$s5" != "$s6" ]; then
	pass "--salt=random: 32 bytes, new each time"
else
	fail "--salt=random: 32 bytes, new each time (got '$s5' and '$s6')"
fi
check "--salt=random area differs from no salt's" bash -c "[ -s '$W/h5' ] && ! cmp -s '$W/h5' '$W/h4'"

# Appended to the image itself.
isz=$(stat -c %s "$img")
cp "$img" "$W/app"
"$EXTVERITY" format --salt=- --hash-offset="$isz" "$W/app" "$W/app" >"$W/f" 2>&1
root=$(root_of "$W/f")
check "appended: image part unchanged" cmp -s -n "$isz" "$img" "$W/app"
check_exit "appended: verify" 0 "$EXTVERITY" verify --hash-offset="$isz" \
	"$W/app" "$W/app" "$root"
check "appended: dump --files" bash -c "'$EXTVERITY' dump --files \
	--hash-offset=$isz '$W/app' | grep -q ' /sizes/f4097$'"
# Formatted again over its appended area, with a larger one (sha512) that
# cannot be written whole (a file size limit): the failed write leaves no
# superblock, old or new, describing blocks that are not there, and the
# file its length.
asz=$(stat -c %s "$W/app")
(
	trap '' XFSZ
	ulimit -f $((asz / 1024))
	"$EXTVERITY" format --hash=sha512 --salt=- --hash-offset="$isz" \
		"$W/app" "$W/app" >"$W/f512" 2>&1
) && fail "re-format past a size limit: format succeeded"
check_err "re-format that failed: no area left at the offset" 1 \
	"not an extverity hash area" "$EXTVERITY" dump --hash-offset="$isz" "$W/app"
check "re-format that failed: length kept" test "$(stat -c %s "$W/app")" = "$asz"
check "re-format that failed: image part unchanged" cmp -s -n "$isz" "$img" "$W/app"
cp "$img" "$W/ov"
check_err "offset overlapping the data refused" 1 "extverity: |ERROR: " \
	"$EXTVERITY" format --hash-offset=4096 "$W/ov" "$W/ov"
check "refused overlap leaves the image intact" cmp -s "$img" "$W/ov"
# Separate file at an offset.
"$EXTVERITY" format --salt=- --hash-offset=65536 "$img" "$W/sep" >"$W/f" 2>&1
check_exit "separate file at offset: verify" 0 "$EXTVERITY" verify \
	--hash-offset=65536 "$img" "$W/sep" "$(root_of "$W/f")"
check_exit "separate file at offset: wrong offset refused" 1 "$EXTVERITY" \
	verify "$img" "$W/sep" "$(root_of "$W/f")"

# --fs=raw on a non-ext4 image.
openssl enc -aes-128-ctr -pass pass:raw -nosalt -pbkdf2 </dev/zero 2>/dev/null |
	head -c $((4096 * 300)) >"$W/raw"
check_err "non-ext4 image with default --fs names --fs=raw" 1 "fs=raw" \
	"$EXTVERITY" format "$W/raw" "$W/rh"
check "no hash file left after refusal" test ! -e "$W/rh"
"$EXTVERITY" format --fs=raw "$W/raw" "$W/rh" >"$W/f" 2>&1
root=$(root_of "$W/f")
check_exit "raw: verify" 0 "$EXTVERITY" verify "$W/raw" "$W/rh" "$root"
cp "$W/raw" "$W/rc"
flip "$W/rc" $((4096 * 250 + 9))
check_err "raw: changed byte caught" 2 "corrupted: " \
	"$EXTVERITY" verify "$W/rc" "$W/rh" "$root"

# table line.
"$EXTVERITY" format --salt=- "$img" "$W/h" >"$W/f" 2>&1
root=$(root_of "$W/f")
nsect=$((isz / 512))
check "table line" bash -c "'$EXTVERITY' table '$img' '$W/h' $root |
	grep -qx '0 $nsect extverity 1 $img $W/h 0 sha256 $root'"
check "table line with options" bash -c "'$EXTVERITY' table --restart-on-corruption \
	--check-at-most-once '$img' '$W/h' $root | grep -Eq ' $root 2 (restart_on_corruption check_at_most_once|check_at_most_once restart_on_corruption)\$'"
check_exit "conflicting table options refused" 1 "$EXTVERITY" table \
	--ignore-corruption --panic-on-corruption "$img" "$W/h" "$root"

# Size against veritysetup.
veritysetup format "$img" "$W/vh" >/dev/null 2>&1
ours=$(stat -c %s "$W/h"); theirs=$(stat -c %s "$W/vh")
ratio=$(python3 -c "print(f'{$ours/$theirs:.3f}')")
echo "  hash area: extverity $ours bytes, veritysetup $theirs bytes, ratio $ratio"
check "hash area <= 1.25 x veritysetup ($ratio)" python3 -c "import sys; sys.exit(not $ours <= 1.25 * $theirs)"

# Durable: the new file is fsync'ed before the rename, and its directory
# after it (else a crash can leave the old file, or none, once format has
# said it was done).
mkdir -p "$W/dur"
strace -f -e trace=rename,renameat,renameat2,fsync,openat -o "$W/trace" \
	"$EXTVERITY" format --salt=- "$img" "$W/dur/h" >/dev/null 2>&1
got=$(awk -v dir="$W/dur" '
	/rename/ && index($0, dir "/h\"") { renamed = 1; next }
	renamed && /O_DIRECTORY/ && index($0, "\"" dir "\"") { fd = $NF; next }
	renamed && fd != "" && $0 ~ "fsync\\(" fd "\\) += 0" { print "synced"; exit }
' "$W/trace")
check "format syncs the directory after the rename" test "$got" = synced

# Threads: --threads=N, and by default the CPUs the process may use (its
# affinity, here taskset), not all the machine's.  Counted as the threads
# the release build starts (ASan's runtime starts its own).
threads_of() {
	strace -f -e trace=clone,clone3 -o "$W/clones" "$@" >/dev/null 2>&1
	grep -c 'CLONE_THREAD' "$W/clones"
}
t1=$(threads_of "$EXTVERITY_RELEASE" format --salt=- --uuid=$u --threads=1 "$img" "$W/t1")
t2=$(threads_of "$EXTVERITY_RELEASE" format --salt=- --uuid=$u --threads=2 "$img" "$W/t2")
tset=$(threads_of taskset -c 0 "$EXTVERITY_RELEASE" format --salt=- "$img" "$W/t3")
echo "  threads started: --threads=1 $t1, --threads=2 $t2, taskset -c 0 $tset"
check "--threads=2 starts more threads than --threads=1" test "$t2" -gt "$t1"
check "one CPU allowed (taskset): as --threads=1" test "$tset" = "$t1"
check "--threads does not change the area" cmp "$W/t1" "$W/t2"
check_err "--threads=0 refused" 1 "invalid --threads '0' \\(1 to 4096\\)" \
	"$EXTVERITY" format --threads=0 "$img" "$W/t4"
finish
