#!/usr/bin/env bash
# extverity measure and status' damaged files, on the host.  Without
# device-mapper: the refusals that need no device (a directory, a device
# node, a FIFO, a missing file, a file on tmpfs or on a plain block
# device), the worst exit code over several files, --json.  Then through
# dm-shim.c, a libdevmapper with one fake device whose messages answer from
# files: the device found from the file's st_dev, the message sent
# (`measure <st_ino>`), the answer printed as `fsverity measure` prints it,
# each refusal of the target (ENOENT, ENODATA, EPERM, EINVAL, a garbled
# answer) and of the table (another target, several), and status mapping
# the target's `corrupted` list to paths through an authenticated hash
# area.  The kernel's answers themselves: tests/vm.
. "$TOPDIR/tests/userspace/common.sh"
W=$WORKDIR
E=$EXTVERITY

check_err "a directory refused" 1 "^extverity: $W: is a directory; only regular files have an fs-verity digest\$" \
	"$E" measure "$W"
check_err "a device node refused" 1 '/dev/null: is a character device' "$E" measure /dev/null
mkfifo "$W/fifo"
check_err "a FIFO refused (not opened)" 1 'fifo: is a FIFO' timeout 10 "$E" measure "$W/fifo"
check_err "a missing file" 4 'nofile: cannot stat: No such file' "$E" measure "$W/nofile"
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
	f=$(mktemp /dev/shm/extverity-measure.XXXXXX)
	check_err "a file on tmpfs: not on an extverity device" 1 \
		"$f: not on an extverity device \\(st_dev 0:[0-9]+ is an anonymous device of a tmpfs filesystem, not a block device\\)" \
		"$E" measure "$f"
	rm -f "$f"
else
	skip "a file on tmpfs: /dev/shm is not a tmpfs"
fi
echo data >"$W/plain"
dev=$(stat -c '%Hd:%Ld' "$W/plain")
fstype=$(stat -f -c %T "$W/plain")
if [ "${dev%%:*}" != 0 ] && ! grep -Eq "^ *${dev%%:*} device-mapper\$" /proc/devices; then
	check_err "a file on a plain block device: not on an extverity device" 1 \
		"plain: not on an extverity device \\(st_dev $dev is .*, not a device-mapper device\\)" \
		"$E" measure "$W/plain"
else
	skip "a file on a plain block device: $W is on $dev"
fi
# Every file tried, the worst code returned; --json: an entry each.
rc=0
"$E" measure --json "$W" "$W/nofile" >"$W/json" 2>"$W/err" || rc=$?
if [ "$rc" -eq 4 ] && [ "$(grep -c . "$W/err")" -eq 2 ] && python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert [o["file"] for o in j] == sys.argv[2:4], j
assert "is a directory" in j[0]["error"] and "cannot stat" in j[1]["error"], j
' "$W/json" "$W" "$W/nofile"; then
	pass "every file tried, the worst exit code, an entry each in --json"
else
	fail "two bad files: exit $rc, $(cat "$W/err") $(cat "$W/json")"
fi
check_err "no file refused" 1 'measure: missing FILE' "$E" measure

# ------------------------------------------------------------ the shim
if ! cc -shared -fPIC -O2 -o "$W/dmshim.so" "$TOPDIR/tests/userspace/dm-shim.c"; then
	fail "cannot build the shim"
	finish
fi
if [ "${dev%%:*}" = 0 ] || { [ "$fstype" != ext2/ext3 ] && [ "$fstype" != xfs ]; }; then
	skip "measure through the shim: $W is on $fstype, $dev (needs ext4 or XFS on a block device)"
	finish
fi
mkdir "$W/msg"
SHIM_TARGETS="extverity 1 254:1000 254:1001 0 sha256 $(printf '%064d' 0)"
export SHIM_DM_MAJOR=${dev%%:*} SHIM_NAME=evt SHIM_DEV=$dev \
	SHIM_MSG_DIR=$W/msg SHIM_LOG=$W/sent SHIM_TARGETS
shim() {
	env LD_PRELOAD="$W/dmshim.so" \
		ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0" "$@"
}
head -c 10000 /dev/urandom >"$W/f1"
cp "$W/f1" "$W/f2"
ino=$(stat -c %i "$W/f1")
fsverity digest "$W/f1" >"$W/want"
cut -d' ' -f1 "$W/want" >"$W/msg/measure $ino"
: >"$W/sent"
if shim "$E" measure "$W/f1" >"$W/got" 2>"$W/err" && cmp -s "$W/want" "$W/got" &&
	[ "$(cat "$W/sent")" = "measure $ino" ]; then
	pass "measure sends 'measure <st_ino>' and prints the answer as fsverity does"
else
	fail "measure: $(cat "$W/got" "$W/err") sent: $(cat "$W/sent")"
fi
fsverity digest --hash-alg=sha512 "$W/f1" | cut -d' ' -f1 >"$W/msg/measure $ino"
check "a sha512 answer printed as is" \
	test "$(shim "$E" measure "$W/f1")" = "$(fsverity digest --hash-alg=sha512 "$W/f1")"
cut -d' ' -f1 "$W/want" >"$W/msg/measure $ino"
ino2=$(stat -c %i "$W/f2")
for e in 2 61 1; do
	echo "errno $e" >"$W/msg/measure $ino2"
	case $e in
	2) check_err "ENOENT: not a regular file in the manifest" 1 \
		"f2: inode $ino2 is not a regular file in the extverity manifest of evt" \
		shim "$E" measure "$W/f2" ;;
	61) check_err "ENODATA: no inode index, re-format" 1 \
		'f2: the hash area of evt has no inode index; re-format it with extverity [^ ]+ or later' \
		shim "$E" measure "$W/f2" ;;
	1) check_err "EPERM: needs root" 4 'f2: asking the kernel needs root' \
		shim "$E" measure "$W/f2" ;;
	esac
done
rm "$W/msg/measure $ino2"
check_err "EINVAL: a target that does not know the message" 1 \
	"f2: the extverity target of evt does not answer 'measure $ino2'" \
	shim "$E" measure "$W/f2"
echo "sha256:xyz" >"$W/msg/measure $ino2"
check_err "a garbled answer refused" 4 "f2: unexpected answer from the kernel" \
	shim "$E" measure "$W/f2"
rc=0
shim "$E" measure --json "$W/f1" "$W/f2" "$W" >"$W/json" 2>"$W/err" || rc=$?
if [ "$rc" -eq 4 ] && python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
ok = j[0]
assert ok["file"] == sys.argv[2] and ok["inode"] == int(sys.argv[3]), ok
assert ok["digest"] == open(sys.argv[4]).read().split()[0], ok
assert ok["algorithm"] == "sha256" and ok["device"] == "evt", ok
assert [set(o) for o in j[1:]] == [{"file", "error"}] * 2, j
' "$W/json" "$W/f1" "$ino" "$W/want"; then
	pass "--json: the digest, inode and device of each file, the errors of the others"
else
	fail "--json: exit $rc $(cat "$W/json")"
fi
SHIM_TARGETS="linear 254:1000 0" check_err "a filesystem on another dm layer refused" 1 \
	"f1: not on an extverity device \\(st_dev $dev is device-mapper device evt, a 'linear' target; measure needs the filesystem directly on an extverity device" \
	shim "$E" measure "$W/f1"
SHIM_TARGETS="$SHIM_TARGETS
$SHIM_TARGETS" check_err "a device of two targets refused" 1 \
	"f1: not on an extverity device \\(st_dev $dev is device-mapper device evt, 2 targets" \
	shim "$E" measure "$W/f1"

# ------------------------------------------------ status: damaged files
MKIMAGE_NO_BIG=1 mkimg "$W/i" 4096
"$E" format "$W/i/image.ext4" "$W/h" >"$W/fmt" 2>&1
root=$(root_of "$W/fmt")
export SHIM_TARGETS="extverity 1 254:1000 254:1001 0 sha256 $root" SHIM_STATUS="C 100 4 5"
ino_t=$(debugfs -R "stat /links/target" "$W/i/image.ext4" 2>/dev/null | sed -n 's/^Inode: \([0-9]*\).*/\1/p')
ino_f=$(debugfs -R "stat /sizes/f4097" "$W/i/image.ext4" 2>/dev/null | sed -n 's/^Inode: \([0-9]*\).*/\1/p')
printf '%s 8192 1\n0 4096 2\n%s 4096 1\n999999 0 1\nmore 2\n' "$ino_t" "$ino_f" >"$W/msg/corrupted"
cat >"$W/want" <<EOF
  damaged:     /deep/a/b/c/hardlink2 (inode $ino_t, byte 8192, 1 block)
               metadata at byte 4096 (2 blocks)
               /sizes/f4097 (inode $ino_f, byte 4096, 1 block)
               inode 999999 (byte 0, 1 block)
               and 2 bad blocks in other files
EOF
shim "$E" status --hash-device="$W/h" evt >"$W/st" 2>"$W/err"
if sed -n '/damaged:/,$p' "$W/st" | cmp -s - "$W/want" &&
	grep -q '^  root digest: ' "$W/st" && grep -q '^  uuid: ' "$W/st"; then
	pass "status --hash-device: damaged files by path (first path of a hard-linked file), metadata, an unknown inode, the rest counted"
else
	fail "status --hash-device: $(cat "$W/st" "$W/err")"
fi
sed -e 's|/deep/a/b/c/hardlink2 (inode \([0-9]*\), |inode \1 (|' \
	-e 's|/sizes/f4097 (inode \([0-9]*\), |inode \1 (|' "$W/want" >"$W/want-ino"
shim "$E" status evt >"$W/st" 2>"$W/err"
if sed -n '/damaged:/,$p' "$W/st" | cmp -s - "$W/want-ino"; then
	pass "status without the hash area: damaged inodes"
else
	fail "status without the hash area: $(cat "$W/st" "$W/err")"
fi
shim "$E" status --json --hash-device="$W/h" evt >"$W/st.json" 2>"$W/err"
if python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
d = j["damaged"]
assert [(o["kind"], o["inode"], o.get("path"), o["offset"], o["blocks"]) for o in d] == [
    ("file", int(sys.argv[2]), "/deep/a/b/c/hardlink2", 8192, 1),
    ("metadata", 0, None, 4096, 2),
    ("file", int(sys.argv[3]), "/sizes/f4097", 4096, 1),
    ("file", 999999, None, 0, 1)], d
assert j["damaged_more"] == 2 and j["status"] == "corrupted", j
' "$W/st.json" "$ino_t" "$ino_f"; then
	pass "status --json: damaged, damaged_more"
else
	fail "status --json: $(cat "$W/st.json" "$W/err")"
fi
: >"$W/msg/corrupted"
shim "$E" status --hash-device="$W/h" evt >"$W/st" 2>&1
check "status: no damage, no damaged line" eval "! grep -q damaged '$W/st'"
rm "$W/msg/corrupted"
shim "$E" status --json evt >"$W/st.json" 2>&1
check "status --json: a target without the message, damaged null" \
	python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); assert j["damaged"] is None and j["damaged_more"] is None' "$W/st.json"
echo "12 x 1" >"$W/msg/corrupted"
check_err "status: a garbled list said, status still printed" 0 \
	"cannot parse the target's list of corrupted files" shim "$E" status evt
echo "1 0 1" >"$W/msg/corrupted"
"$E" format --salt=random "$W/i/image.ext4" "$W/h2" >/dev/null 2>&1
check_err "status --hash-device of another area refused" 1 'root digest does not match' \
	shim "$E" status --hash-device="$W/h2" evt
check_err "status --hash-device of no area refused" 1 'is not an extverity hash area' \
	shim "$E" status --hash-device="$W/fmt" evt
check_err "status --hash-offset alone refused" 1 'give both, or neither' \
	shim "$E" status --hash-offset=4096 evt

# ------------------------------------------------ status: each target's line
# The counters a target does not print (before 1.3.0 corrected, before
# 1.4.0 paired, before 1.5.0 split) are null in --json and left out of the
# text; a line of more words than 1.5.0's is refused.
for line in "V 1 2 3" "V 1 2 3 4" "V 1 2 3 4 5" "V 1 2 3 4 5 6"; do
	n=$(echo "$line" | wc -w)
	SHIM_STATUS=$line shim "$E" status --json evt >"$W/st.json" 2>"$W/err"
	SHIM_STATUS=$line shim "$E" status evt >"$W/st" 2>>"$W/err"
	if python3 -c '
import json, sys
j, n = json.load(open(sys.argv[1])), int(sys.argv[2])
want = [1, 2, 3, 4 if n >= 5 else None, 5 if n >= 6 else None, 6 if n >= 7 else None]
got = [j[k] for k in ("verified_blocks", "corrupt_blocks", "zero_blocks",
                      "corrected_blocks", "paired_blocks", "split_reads")]
assert got == want, got
' "$W/st.json" "$n" && [ "$(grep -cE '^  (corrected|paired|split): ' "$W/st")" = $((n - 4)) ]; then
		pass "status of a $n-word line: its counters, the others null"
	else
		fail "status of '$line': $(cat "$W/st.json" "$W/st" "$W/err")"
	fi
done
SHIM_STATUS="V 1 2 3 4 5 6 7" check_err "status of an 8-word line refused" 1 \
	"cannot parse the status of evt: V 1 2 3 4 5 6 7" shim "$E" status evt
finish
