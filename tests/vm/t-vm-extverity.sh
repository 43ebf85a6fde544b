#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The extverity target in a qemu guest (see tests/vm/README.md).  The host
# generates the ext4 fixture, formats it with tools/extverity, makes damaged
# copies at places located independently (debugfs, tests/vm/evtloc.py), and
# boots six guests: the main scenarios (1-3, 4 ignore_corruption, 5-12;
# 12: the measure and corrupted messages), ima,
# restart_on_corruption, panic_on_corruption, restart_on_error and
# panic_on_error.
#
#   VM_STRESS_SECONDS   duration of the concurrent readers (default 30)
#   VM_ONLY             run only these boots (default: all of "main restart
#                       panic restart-error panic-error")
# shellcheck disable=SC1091
. "$TOPDIR/tests/lib.sh"
. "$TOPDIR/tests/vm/vm-lib.sh"
: "${VM_STRESS_SECONDS:=30}"
: "${VM_ONLY:=main ima restart panic restart-error panic-error}"

why=$(vm_prereqs)
[ -z "$why" ] && [ ! -f "$MODULE" ] && why="kernel module $MODULE not built (make module)"
[ -z "$why" ] && [ ! -x "$EXTVERITY_RELEASE" ] && why="tool $EXTVERITY_RELEASE not built (make tools)"
[ -z "$why" ] && ! command -v veritysetup >/dev/null && why="veritysetup not installed"
if [ -n "$why" ]; then
	fail "extverity VM scenarios: $why"
	finish
fi

EV=$EXTVERITY_RELEASE
BS=4096
w=$WORKDIR/ev
rm -rf "$w"
mkdir -p "$w/ctl"
die() { fail "setup: $*"; finish; }

"$TOPDIR/tests/vm/fixture.sh" "$w/fx" $BS >"$w/fixture.log" 2>&1 ||
	die "fixture: $(tail -n 3 "$w/fixture.log")"
IMG=$w/fx/image.ext4
SRC=$w/fx/src
[ -f "$IMG" ] || die "no $IMG"

SALT=5a17c0ffee5a17c0ffee5a17c0ffee00
UUID=0e7f5c1a-8d1e-4a59-9b0b-3c0a1f2d4e5f
"$EV" format --salt=$SALT --uuid=$UUID "$IMG" "$w/hash" >"$w/format.out" 2>&1 ||
	die "extverity format: $(cat "$w/format.out")"
ROOT=$(sed -n 's/^Root digest:[[:space:]]*//p' "$w/format.out")
[ -n "$ROOT" ] || die "no Root digest line in: $(cat "$w/format.out")"
SIZE=$(stat -c %s "$IMG")
BLOCKS=$((SIZE / BS))

# manifest DIR: sha256sum lines of its regular files; names that busybox
# sha256sum -c cannot take back (newline, backslash) are left out.
manifest() {
	(cd "$1" && find . -type f ! -name '*\\*' ! -name "*"$'\n'"*" -print0 |
		LC_ALL=C sort -z | xargs -0 sha256sum)
}
# plain NAME: a name the guest's shell and grep patterns can take as is.
plain() { [[ "$1" =~ ^[A-Za-z0-9_./+-]+$ ]]; }
manifest "$SRC" >"$w/ctl/src.sha256"

dfs() { debugfs -R "$1" "$IMG" 2>/dev/null; }
inode_of() { dfs "stat $1" | sed -n 's/^Inode: *\([0-9]*\).*/\1/p'; }

# Files with content found once (a shared tree would hide which file is hit).
uniq_files=$(sort "$w/ctl/src.sha256" | awk '{print $1}' | uniq -u)
unique() { grep -q "^$(sha256sum <"$SRC/$1" | cut -d' ' -f1)\$" <<<"$uniq_files"; }

# Scenario 2: a file of >= 5 blocks, one byte of its block 2.
DFILE=
while read -r f; do
	f=${f#./}
	plain "$f" || continue
	[ -L "$SRC/$f" ] && continue
	[ "$(stat -c %s "$SRC/$f")" -ge $((5 * BS)) ] || continue
	[ "$(stat -c %h "$SRC/$f")" -eq 1 ] || continue
	unique "$f" && { DFILE=/$f; break; }
done < <(cd "$SRC" && find . -type f | LC_ALL=C sort)
[ -n "$DFILE" ] || die "fixture has no unique file of 5 blocks"
DINO=$(inode_of "$DFILE")
DPHYS=$(dfs "bmap $DFILE 2")
cp "$IMG" "$w/image.data"
flip "$w/image.data" $((DPHYS * BS + 100))

# Scenario 3: a directory block (not the root directory's).
DIR=
while read -r d; do
	d=${d#./}
	plain "$d" || continue
	[ -n "$(find "$SRC/$d" -maxdepth 1 -type f | head -n 1)" ] || continue
	case "$DFILE" in /"$d"/*) continue ;; esac
	DIR=/$d
	break
done < <(cd "$SRC" && find . -mindepth 1 -type d | LC_ALL=C sort)
[ -n "$DIR" ] || die "fixture has no directory with files"
MPHYS=$(dfs "bmap $DIR 0")
cp "$IMG" "$w/image.meta"
flip "$w/image.meta" $((MPHYS * BS + 40))
# A file elsewhere that must still read.
OTHER=$(cd "$SRC" && find . -type f ! -path "./${DIR#/}/*" | LC_ALL=C sort | grep -E '^[A-Za-z0-9_./+-]+$' | head -n 1)
OTHER=${OTHER#.}

# Scenario 3: tree levels.  The largest unique file with two levels.
LFILE=
while read -r _ f; do
	f=${f#./}
	plain "$f" || continue
	[ "$(stat -c %h "$SRC/$f")" -eq 1 ] || continue
	unique "$f" || continue
	LFILE=/$f
	break
done < <(cd "$SRC" && find . -type f -printf '%s %p\n' | sort -rn)
LINO=$(inode_of "$LFILE")
"$TOPDIR/tests/vm/evtloc.py" "$w/hash" tree "$LINO" >"$w/ltree" 2>"$w/evtloc.err" ||
	die "evtloc: $(cat "$w/evtloc.err")"
# shellcheck disable=SC1091
. "$w/ltree"
LNLEVELS=$NLEVELS L0BLOCKS=$L0_BLOCKS
cp "$w/hash" "$w/hash.l0"
cp "$w/hash" "$w/hash.top"
if [ "$NLEVELS" -ge 2 ] && [ "$L0_BLOCKS" -ge 2 ]; then
	flip "$w/hash.l0" $((L0 + BS))   # level-0 block 1: data blocks 128..255
fi
[ "$TOP" -gt 0 ] && flip "$w/hash.top" $((TOP + 1))
SHARE_PATH=
if [ "$SHARE_INODE" -gt 0 ]; then
	SHARE_PATH=$(dfs "ncheck $SHARE_INODE" | awk -v i="$SHARE_INODE" '$1 == i {print $2; exit}')
fi
# Manifest: a byte of the EXTENTS section.
read -r EXT_OFF _ < <("$TOPDIR/tests/vm/evtloc.py" "$w/hash" section EXTENTS)
# Empty, the flip would land in the superblock and prove something else.
if ! [ "${EXT_OFF:-0}" -gt 0 ] 2>/dev/null; then
	fail "no EXTENTS section offset from evtloc.py ('$EXT_OFF')"
	finish
fi
cp "$w/hash" "$w/hash.ext"
flip "$w/hash.ext" $((EXT_OFF + 40))

# Scenario 6: garbage in a free block (a zero range of the hash area).
read -r ZSTART ZCOUNT < <("$TOPDIR/tests/vm/evtloc.py" "$w/hash" zero-ranges | sort -k2 -rn | head -n 1)
[ -n "$ZSTART" ] || die "no zero range in the hash area"
FREEBLK=$((ZSTART + ZCOUNT / 2))
dumpe2fs "$IMG" 2>/dev/null | grep -q 'Free blocks: .*[0-9]' || die dumpe2fs
cp "$IMG" "$w/image.free"
head -c $BS /dev/zero | tr '\0' '\377' |
	dd of="$w/image.free" bs=$BS seek="$FREEBLK" conv=notrunc status=none

# Scenario 7: the hash area appended to the image.
cp "$IMG" "$w/image.app"
"$EV" format --salt=$SALT --uuid=$UUID --hash-offset="$SIZE" "$w/image.app" "$w/image.app" \
	>"$w/format-app.out" 2>&1 || die "format --hash-offset: $(cat "$w/format-app.out")"
AROOT=$(sed -n 's/^Root digest:[[:space:]]*//p' "$w/format-app.out")

# Scenario 8: the same image through dm-verity.
veritysetup format --salt=- "$IMG" "$w/vhash" >"$w/vformat.out" || die "veritysetup format"
VROOT=$(sed -n 's/^Root hash:[[:space:]]*//p' "$w/vformat.out")

# Scenario 11: sha512 over a 1 KiB-block filesystem, no salt.
"$TOPDIR/tests/vm/fixture.sh" "$w/fx1k" 1024 >"$w/fixture1k.log" 2>&1 ||
	die "fixture 1k: $(tail -n 3 "$w/fixture1k.log")"
IMG1K=$w/fx1k/image.ext4
"$EV" format --hash=sha512 --data-block-size=1024 --salt=- "$IMG1K" "$w/hash1k" >"$w/format1k.out" 2>&1 ||
	die "extverity format --hash=sha512 (1k): $(cat "$w/format1k.out")"
ROOT1K=$(sed -n 's/^Root digest:[[:space:]]*//p' "$w/format1k.out")
manifest "$w/fx1k/src" >"$w/ctl/src1k.sha256"
F1K=/$(cd "$w/fx1k/src" && find . -type f -size +20k -links 1 | LC_ALL=C sort | grep -E '^[A-Za-z0-9_./+-]+$' | head -n 1 | cut -c3-)
P1K=$(debugfs -R "bmap $F1K 5" "$IMG1K" 2>/dev/null)
cp "$IMG1K" "$w/image1k.data"
flip "$w/image1k.data" $((P1K * 1024 + 3))

# Scenario 12: every regular file's fs-verity digest, as measure must give
# it (debugfs's inodes, fsverity-utils' digests of the source files); the
# area without an inode index, and with an empty one.
python3 "$TOPDIR/tests/vm/measure-expect.py" "$IMG" "$SRC" sha256 $BS $SALT \
	"$w/ctl/measure.paths" >"$w/ctl/measure" 2>"$w/measure.log" ||
	die "measure-expect: $(tail -n 2 "$w/measure.log")"
python3 "$TOPDIR/tests/vm/measure-expect.py" "$IMG1K" "$w/fx1k/src" sha512 1024 - \
	"$w/ctl/measure1k.paths" >"$w/ctl/measure1k" 2>"$w/measure1k.log" ||
	die "measure-expect (1k): $(tail -n 2 "$w/measure1k.log")"
gcc -static -O2 -Wall -Wextra -Werror -o "$w/ctl/dm-measure" \
	"$TOPDIR/tests/vm/dm-measure.c" 2>"$w/gcc.log" ||
	die "gcc -static dm-measure.c: $(head -n 5 "$w/gcc.log")"
cp "$w/hash" "$w/hash.noidx"
NOIDX_ROOT=$(python3 "$TOPDIR/tests/vm/evinodes.py" strip "$w/hash.noidx") || die "evinodes.py strip"
cp "$w/hash" "$w/hash.emptyidx"
EMPTYIDX_ROOT=$(python3 "$TOPDIR/tests/vm/evinodes.py" empty "$w/hash.emptyidx") || die "evinodes.py empty"
SYMLINK=$(cd "$SRC" && find . -type l | LC_ALL=C sort | grep -E '^[A-Za-z0-9_./+-]+$' | head -n 1)
SYMLINK_INO=$(inode_of "${SYMLINK#.}")
DIR_INO=$(inode_of "$DIR")
LAST_INO=$(tail -n 1 "$w/ctl/measure" | cut -d' ' -f1)
[ -n "$SYMLINK_INO" ] && [ -n "$DIR_INO" ] && [ -n "$LAST_INO" ] ||
	die "no symlink ($SYMLINK_INO), directory ($DIR_INO) or file inode ($LAST_INO)"

disks=()
params=$w/ctl/params
: >"$params"
letters=(b c d e f g h i j k l m n o p q r s t u v w x y z)
adddisk() {
	echo "$1=/dev/vd${letters[${#disks[@]}]}" >>"$params"
	disks+=("$2")
}
adddisk D_IMG "$IMG:ro"
adddisk D_HASH "$w/hash:ro"
adddisk D_DATA "$w/image.data:ro"
adddisk D_META "$w/image.meta:ro"
adddisk D_HL0 "$w/hash.l0:ro"
adddisk D_HTOP "$w/hash.top:ro"
adddisk D_HEXT "$w/hash.ext:ro"
adddisk D_FREE "$w/image.free:ro"
adddisk D_APP "$w/image.app:ro"
adddisk D_VHASH "$w/vhash:ro"
cp "$IMG" "$w/image.rw"
cp "$w/hash" "$w/hash.rw"
adddisk D_RW "$w/image.rw"
adddisk D_HRW "$w/hash.rw"
adddisk D_IMG1K "$IMG1K:ro"
adddisk D_HASH1K "$w/hash1k:ro"
adddisk D_DATA1K "$w/image1k.data:ro"
adddisk D_HNOIDX "$w/hash.noidx:ro"
adddisk D_HEMPTYIDX "$w/hash.emptyidx:ro"
cat >>"$params" <<EOF
BS=$BS
BLOCKS=$BLOCKS
SIZE=$SIZE
ROOT=$ROOT
AROOT=$AROOT
VROOT=$VROOT
IMAGE_SHA256=$(sha256sum <"$IMG" | cut -d' ' -f1)
DFILE=$DFILE
DINO=$DINO
DPHYS=$DPHYS
DSIZE=$(stat -c %s "$SRC$DFILE")
DIR=$DIR
MPHYS=$MPHYS
OTHER=$OTHER
LFILE=$LFILE
LSIZE=$(stat -c %s "$SRC$LFILE")
LNLEVELS=$LNLEVELS
L0BLOCKS=$L0BLOCKS
SHARE_PATH=$SHARE_PATH
FREEBLK=$FREEBLK
STRESS_SECONDS=$VM_STRESS_SECONDS
ROOT1K=$ROOT1K
BLOCKS1K=$(($(stat -c %s "$IMG1K") / 1024))
IMAGE1K_SHA256=$(sha256sum <"$IMG1K" | cut -d' ' -f1)
F1K=$F1K
P1K=$P1K
LINO=$LINO
NOIDX_ROOT=$NOIDX_ROOT
EMPTYIDX_ROOT=$EMPTYIDX_ROOT
SYMLINK_INO=$SYMLINK_INO
DIR_INO=$DIR_INO
LAST_INO=$LAST_INO
EOF
cp "$params" "$w/params.txt"
# The main boot's checks that depend on the fixture, declared on the
# condition extverity-main.sh reports them on (its other checks are its
# own "#@check" lines).
: >"$w/main.checks"
if [ "$LNLEVELS" -ge 2 ] && [ "$L0BLOCKS" -ge 3 ]; then
	echo s3-l0-next-range-reads >>"$w/main.checks"
fi

t0=$(date +%s)
if [[ " $VM_ONLY " == *" main "* ]]; then
	run_vm --name=main --timeout=$((300 + VM_STRESS_SECONDS)) --ctl="$w/ctl" \
		--checks="$w/main.checks" \
		"$TOPDIR/tests/vm/scenarios/extverity-main.sh" "${disks[@]}"
	vm_report main
fi
# dm-ima: with ima_policy=critical_data the kernel measures every table
# load, with the target's STATUSTYPE_IMA record, into the IMA log.
if [[ " $VM_ONLY " == *" ima "* ]] && [ -r "$VM_KCONFIG" ] && [ "$(vm_kconfig IMA)" != y ]; then
	skip "ima boot: the kernel has no CONFIG_IMA ($VM_KCONFIG)"
elif [[ " $VM_ONLY " == *" ima "* ]]; then
	run_vm --name=ima --timeout=120 --ctl="$w/ctl" \
		--append=ima_policy=critical_data \
		"$TOPDIR/tests/vm/scenarios/extverity-ima.sh" "${disks[@]}"
	vm_report ima
	rec=$(awk '$5 == "dm_table_load" {print $6}' "$VM_OUTDIR/boot-ima/output" |
		tail -n 1 | python3 -c 'import sys; print(bytes.fromhex(sys.stdin.read().strip()).decode("ascii", "replace").replace("\0", "\n"))' |
		grep -a 'target_name=extverity' || true)
	want="target_name=extverity,target_version=1.6.0,hash_failed=V,verity_version=1,"
	if [[ "$rec" == *"$want"*"verity_algorithm=sha256,root_digest=$ROOT,salt=$SALT,ignore_corruption=n,restart_on_corruption=n,panic_on_corruption=n,restart_on_error=n,panic_on_error=n,check_at_most_once=y,try_verify_in_tasklet=n;"* ]]; then
		pass "ima/dm_table_load record has the extverity fields"
	else
		fail "ima/dm_table_load record: '${rec:-none}' (see $VM_OUTDIR/boot-ima/output)"
	fi
fi
for boot in restart panic restart-error panic-error; do
	[[ " $VM_ONLY " == *" $boot "* ]] || continue
	mode=${boot%-error}
	kind=corruption
	[ "$boot" = "$mode" ] || kind=error
	printf 'MODE=%s\nKIND=%s\n' "$mode" "$kind" >"$w/ctl/mode"
	run_vm --name="$boot" --expect="$mode" --timeout=120 --ctl="$w/ctl" \
		"$TOPDIR/tests/vm/scenarios/extverity-fatal.sh" "${disks[@]}"
	vm_report "$boot" "$mode"
	# The console must show why the guest went down.
	case $mode in
	restart) re='Restarting system' ;;
	panic) re='Kernel panic - not syncing' ;;
	esac
	# ... and that block caused it, in this order on the console: the
	# intact reads passed, the bad read began, the target reported block
	# $DPHYS, the guest went down for that reason.  Not the line vm_judge
	# used to decide the outcome: the reason must be extverity's.
	case $kind in
	corruption) report="extverity: [0-9:]+: data block $DPHYS: corrupted, file inode"
		reason='dm-extverity device corrupted' ;;
	error) report="extverity: [0-9:]+: data blocks $DPHYS-$DPHYS: data device read failed: error -[0-9]+"
		reason='dm-extverity device has I/O error' ;;
	esac
	if lines=$(vm_console_in_order "$VM_OUTDIR/boot-$boot" \
		'EVT-RESULT PASS intact-blocks-around-reads' \
		"EVT-READING-BAD-BLOCK $DPHYS\$" "$report" "($re).*$reason"); then
		pass "$boot/console: intact reads, then the read of block $DPHYS, its report, then '$reason'"
	else
		fail "$boot/console: intact reads, bad read, report, $mode for '$reason' not in order (lines $lines); see $VM_OUTDIR/boot-$boot/console.log"
	fi
done
echo "  (VM boots took $(($(date +%s) - t0)) s)"
finish
