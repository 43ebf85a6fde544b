#!/usr/bin/env bash
# Progress lines of format and verify (quiet unless stderr is a terminal or
# --progress), and verify --json for intact and damaged images.
. "$TOPDIR/tests/userspace/common.sh"
W=$WORKDIR
E=$EXTVERITY
mkimg "$W/i" 4096
img=$W/i/image.ext4

# Not a terminal, no --progress: stderr stays empty.
# Fixed salt and UUID, so two runs write the same bytes.
fixed=(--salt=00112233 --uuid=01234567-89ab-cdef-0123-456789abcdef)
"$E" format "${fixed[@]}" "$img" "$W/h" >"$W/f" 2>"$W/quiet.err"
root=$(root_of "$W/f")
if [ ! -s "$W/quiet.err" ]; then pass "format: quiet without a terminal"
else fail "format wrote to stderr: $(head -n 3 "$W/quiet.err")"; fi
"$E" verify "$img" "$W/h" "$root" >/dev/null 2>"$W/quiet.err"
if [ ! -s "$W/quiet.err" ]; then pass "verify: quiet without a terminal"
else fail "verify wrote to stderr: $(head -n 3 "$W/quiet.err")"; fi

# --progress into a file: one line per tenth, percentages rising, ending
# at 100 % with both MiB figures equal.
progress_ok() {	# NAME FILE PHASE
	local name=$1 f=$2 phase=$3 pcts last
	pcts=$(sed -n "s/^$phase: *\([0-9]*\)% .*/\1/p" "$f")
	last=$(grep "^$phase: " "$f" | tail -n 1)
	if [ -z "$pcts" ]; then
		fail "$name: no '$phase' lines in $(head -c 300 "$f")"
	elif [ "$(sort -n <<<"$pcts")" != "$pcts" ] || [ "$(sort -un <<<"$pcts")" != "$pcts" ]; then
		fail "$name: percentages not rising: $(echo $pcts)"
	elif [ "$(wc -l <<<"$pcts")" -gt 11 ]; then
		fail "$name: $(wc -l <<<"$pcts") lines, want at most 11"
	elif ! [[ $last =~ ^$phase:\ 100%\ \(([0-9]+)\ of\ ([0-9]+)\ MiB\)$ ]] ||
		[ "${BASH_REMATCH[1]}" != "${BASH_REMATCH[2]}" ]; then
		fail "$name: last line '$last'"
	else
		pass "$name ($(wc -l <<<"$pcts") lines)"
	fi
}
"$E" format "${fixed[@]}" --progress "$img" "$W/h2" >"$W/f2" 2>"$W/fmt.err"
progress_ok "format --progress: files" "$W/fmt.err" "hashing files"
progress_ok "format --progress: metadata" "$W/fmt.err" "hashing metadata"
if cmp -s "$W/h" "$W/h2"; then pass "format --progress: same hash area"
else fail "format --progress changed the hash area"; fi
"$E" verify --progress "$img" "$W/h" "$root" >/dev/null 2>"$W/ver.err"
progress_ok "verify --progress" "$W/ver.err" "verifying"

# A terminal (script(1) gives one): redrawn in place with carriage returns.
if command -v script >/dev/null; then
	script -qec "$E format $img $W/h3 >/dev/null" /dev/null >"$W/tty.out"
	if grep -q $'\rhashing files: 100% ' "$W/tty.out"; then pass "format on a terminal: lines redrawn"
	else fail "format on a terminal: $(od -c "$W/tty.out" | head -n 4)"; fi
else
	skip "format on a terminal: no script(1)"
fi

# verify --json: one object, verified or not, and the exit code.  The
# bytes checked are the image minus its zero ranges (dump's zero blocks).
zero=$("$E" dump "$W/h" | sed -n 's/^Zero blocks: *//p')
size=$(stat -c %s "$img")
want=$((size - ${zero:-0} * 4096))
out=$("$E" verify --json "$img" "$W/h" "$root")
if [ "$out" = "{\"image\": \"$img\", \"verified\": true, \"corrupted_items\": 0, \"data_bytes\": $want, \"corrupted\": []}" ]; then
	pass "verify --json: intact ($want bytes)"
else
	fail "verify --json: '$out', want $want data bytes"
fi
# Two damaged blocks: the ext4 superblock and an inode table block.
itab=$(dumpe2fs "$img" 2>/dev/null | sed -n 's/.*Inode table at \([0-9]*\)-.*/\1/p' | head -n 1)
cp "$img" "$W/bad.ext4"
printf '\377' | dd of="$W/bad.ext4" bs=1 seek=1084 conv=notrunc 2>/dev/null
printf '\377' | dd of="$W/bad.ext4" bs=1 seek=$((itab * 4096 + 300)) conv=notrunc 2>/dev/null
rc=0
out=$("$E" verify --json "$W/bad.ext4" "$W/h" "$root" 2>"$W/bad.err") || rc=$?
if [ "$rc" = 2 ] &&
	[ "$out" = "{\"image\": \"$W/bad.ext4\", \"verified\": false, \"corrupted_items\": 2, \"data_bytes\": $want, \"corrupted\": [{\"kind\": \"metadata\", \"block\": 0}, {\"kind\": \"metadata\", \"block\": $itab}]}" ] &&
	grep -q "corrupted: metadata block $itab" "$W/bad.err"; then
	pass "verify --json: two damaged blocks, exit 2"
else
	fail "verify --json on damage: rc $rc, '$out', $(head -c 300 "$W/bad.err")"
fi
# On a terminal a report starts a line of its own: the progress line drawn
# there is erased first (CR, erase line), and drawn again below it.
if command -v script >/dev/null; then
	script -qec "$E verify $W/bad.ext4 $W/h $root" /dev/null >"$W/tty2.out"
	if python3 - "$W/tty2.out" <<'PY'
import re, sys
out = open(sys.argv[1], 'rb').read()
at = [m.start() for m in re.finditer(rb'extverity: corrupted: ', out)]
assert len(at) == 2, out
for i in at:
    assert i == 0 or out[:i].endswith((b'\n', b'\r\033[K')), out[:i][-60:]
# The line is drawn again after the reports, and ends complete.
assert re.search(rb'corrupted: [^\n]*\n.*\rverifying: 100% [^\n]*\n$', out,
                 re.S), out[-200:]
PY
	then
		pass "verify on a terminal: a report does not follow the progress line"
	else
		fail "verify on a terminal: report glued to the progress line: $(od -c "$W/tty2.out" | head -n 8)"
	fi
else
	skip "verify on a terminal: no script(1)"
fi
check_err "verify --json: wrong digest is not JSON" 1 "root digest does not match" \
	"$E" verify --json "$img" "$W/h" "$(tr 0-9a-f 1-9a-f0 <<<"$root")"
check_err "verify: repeated --progress" 1 "option --progress given more than once" \
	"$E" verify --progress --progress "$img" "$W/h" "$root"
check_err "format: repeated --progress" 1 "option --progress given more than once" \
	"$E" format --progress --progress "$img" "$W/h4"
finish
