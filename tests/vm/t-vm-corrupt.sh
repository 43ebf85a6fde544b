#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Corruption matrix, O_DIRECT buffer tampering and I/O errors (see
# tests/vm/README.md and docs/testing.md).  Boots:
#   matrix        one damage at a time at every class of position of two
#                 small images (4 KiB/sha256 with every file size class,
#                 1 KiB/sha512 with a 3-level tree and a journal), each
#                 read back whole
#                 (scenarios/corrupt.sh)
#   odirect       O_DIRECT reads into a buffer another thread keeps writing:
#                 never a false corruption; real corruption still fails
#   ioerr         dm-flakey and dm-error under the data device and under the
#                 hash device: EIO, bounded, not corruption; ignore_corruption
#                 does not hide I/O errors; reads recover with the device
#   restart-hash-error, panic-hash-error
#                 restart_on_error / panic_on_error on a hash device error
#                 (the data device's are in t-vm-extverity.sh)
#
#   VM_ONLY       run only these boots (default: all of the above)
#   VM_TAMPER_SECONDS  duration of the tampering run (default 6; a second
#                 run with single-block reads takes half of it)
#   VM_MATRIX     full (default) or small: the 4 KiB image planned as
#                 small as the 1 KiB one always is (corrupt-plan.py), one
#                 block a tree level and fewer manifest and slack
#                 positions.  make check-debug uses it: there each
#                 position costs KASAN's time, and the paths it reaches are
#                 the same; the Debian kernels run the full plan.
# shellcheck disable=SC1091
. "$TOPDIR/tests/lib.sh"
. "$TOPDIR/tests/vm/vm-lib.sh"
: "${VM_ONLY:=matrix odirect ioerr restart-hash-error panic-hash-error}"
: "${VM_TAMPER_SECONDS:=6}"
: "${VM_MATRIX:=full}"
case $VM_MATRIX in full | small) ;; *) fail "VM_MATRIX=$VM_MATRIX: full or small"; finish ;; esac

why=$(vm_prereqs)
[ -z "$why" ] && [ ! -f "$MODULE" ] && why="kernel module $MODULE not built (make module)"
[ -z "$why" ] && [ ! -x "$EXTVERITY_RELEASE" ] && why="tool $EXTVERITY_RELEASE not built (make tools)"
[ -z "$why" ] && ! command -v gcc >/dev/null && why="gcc not installed"
if [ -n "$why" ]; then
	fail "corruption VM scenarios: $why"
	finish
fi

EV=$EXTVERITY_RELEASE
w=$WORKDIR/corrupt
rm -rf "$w"
mkdir -p "$w/ctl"
die() { fail "setup: $*"; finish; }

gcc -static -O2 -pthread -Wall -Wextra -Werror -o "$w/ctl/corrupt-io" \
	"$TOPDIR/tests/vm/corrupt-io.c" 2>"$w/gcc.log" ||
	die "gcc -static corrupt-io.c: $(head -n 5 "$w/gcc.log")"

# prep DIR NAME: DIR/inodes ("inode path" of every regular file) and
# DIR/metadata ("kind block" of ext4 metadata blocks), from debugfs and
# dumpe2fs, for corrupt-plan.py.
prep() {
	local dir=$1 img=$1/image.ext4 d bs first it isz lastino p
	d=$(dumpe2fs "$img" 2>/dev/null)
	bs=$(sed -n 's/^Block size: *//p' <<<"$d")
	first=$(sed -n 's/^First block: *//p' <<<"$d")
	it=$(sed -n 's/^ *Inode table at \([0-9]*\)-.*/\1/p' <<<"$d" | head -n 1)
	isz=$(sed -n 's/^Inode size: *//p' <<<"$d")
	(cd "$dir/src" && find . -type f | cut -c3- | LC_ALL=C sort) | while read -r p; do
		echo "$(debugfs -R "stat /$p" "$img" 2>/dev/null |
			sed -n 's/^Inode: *\([0-9]*\).*/\1/p') $p"
	done >"$dir/inodes"
	lastino=$(sort -n "$dir/inodes" | tail -n 1 | cut -d' ' -f1)
	{
		echo "superblock $first"
		echo "group-descriptors $(sed -n 's/^ *Primary superblock at .*Group descriptors at \([0-9]*\)-.*/\1/p' <<<"$d" | head -n 1)"
		echo "block-bitmap $(sed -n 's/^ *Block bitmap at \([0-9]*\).*/\1/p' <<<"$d" | head -n 1)"
		echo "inode-bitmap $(sed -n 's/^ *Inode bitmap at \([0-9]*\).*/\1/p' <<<"$d" | head -n 1)"
		echo "inode-table $((it + (lastino - 1) * isz / bs))"
		echo "root-directory $(debugfs -R "bmap <2> 0" "$img" 2>/dev/null)"
		echo "directory $(debugfs -R "bmap /dir 0" "$img" 2>/dev/null)"
		if grep -q 'features:.*has_journal' <<<"$d"; then
			echo "journal $(debugfs -R "bmap <8> 0" "$img" 2>/dev/null)"
			echo "journal $(debugfs -R "bmap <8> 700" "$img" 2>/dev/null)"
		fi
	} >"$dir/metadata"
	if grep -Eqv '^[a-z-]+ [0-9]+$' "$dir/metadata" || [ "$(wc -l <"$dir/inodes")" -lt 10 ]; then
		die "prep $dir: $(tr '\n' ' ' <"$dir/metadata")"
	fi
	(cd "$dir/src" && find . -type f | cut -c3- | LC_ALL=C sort | xargs sha256sum) \
		>"$w/ctl/$2.sha256"
}

# image NAME BS DIGESTS_PER_BLOCK ALG JOURNAL PLAN: build, format, plan;
# JOURNAL journal or nojournal, PLAN full or small (corrupt-plan.py).  The
# 1 KiB image has the journal and is always small; the 4 KiB one has no
# journal, to stay fast.
params=$w/ctl/params
: >"$params"
disks=()
letters=(b c d e f g h i j k l m n o p q r s t u v w x y z)
nextdisk() { echo "/dev/vd${letters[${#disks[@]}]}"; }
image() {
	local name=$1 bs=$2 per=$3 alg=$4 journal=$5 plan=() dir=$w/$1 root di dh dp dr
	[ "$6" = small ] && plan=(small)
	"$TOPDIR/tests/vm/corrupt-image.sh" "$dir" "$bs" "$per" "$journal" >"$w/$name-image.log" 2>&1 ||
		die "corrupt-image.sh $name: $(tail -n 3 "$w/$name-image.log")"
	"$EV" format --hash="$alg" --data-block-size="$bs" --salt=c0ffee "$dir/image.ext4" "$dir/hash" \
		>"$dir/format.out" 2>&1 || die "format $name: $(cat "$dir/format.out")"
	root=$(sed -n 's/^Root digest:[[:space:]]*//p' "$dir/format.out")
	prep "$dir" "$name"
	"$TOPDIR/tests/vm/corrupt-plan.py" "$name" "$dir/image.ext4" "$dir/hash" \
		"$dir/inodes" "$dir/metadata" "$w" "${plan[@]}" 2>"$w/$name-plan.err" ||
		die "corrupt-plan.py $name: $(tail -n 3 "$w/$name-plan.err")"
	di=$(nextdisk); disks+=("$dir/image.ext4:ro")
	dh=$(nextdisk); disks+=("$dir/hash:ro")
	dp=$(nextdisk); disks+=("$w/$name.patch:ro")
	dr=$(nextdisk); disks+=("$w/$name.ref:ro")
	echo "M_$name='$di $dh $dp $dr $bs $alg $root'" >>"$params"
	echo "IMG_$name=$di HASH_$name=$dh PATCH_$name=$dp REF_$name=$dr ROOT_$name=$root" >>"$params"
}
image c4 4096 128 sha256 nojournal "$VM_MATRIX"
image c1 1024 16 sha512 journal small
echo "MATRICES='c4 c1'" >>"$params"

# I/O errors and tampering: big/multi's data block 5, the first level-0
# block of its tree (and the position that damages it, for the blocks it
# covers), the manifest's EXTENTS and TREES blocks.
read -r ioe_hash_pos _ _ ioe_hash_block _ < <(grep ' tree-L0:multi ' "$w/ctl/c4.pos" | head -n 1)
ioe_data_block=$(debugfs -R "bmap /big/multi 5" "$w/c4/image.ext4" 2>/dev/null)
read -r ext_off _ < <("$TOPDIR/tests/vm/evtloc.py" "$w/c4/hash" section EXTENTS)
read -r trees_off _ < <("$TOPDIR/tests/vm/evtloc.py" "$w/c4/hash" section TREES)
if [ -z "$ioe_hash_block" ] || [ -z "$ioe_data_block" ]; then
	die "no I/O error positions"
fi
cat >>"$params" <<EOF
IOE_DATA_BLOCK=$ioe_data_block
IOE_HASH_BLOCK=$ioe_hash_block
IOE_HASH_POS=$ioe_hash_pos
IOE_EXTENTS_BLOCK=$((ext_off / 4096))
IOE_TREES_BLOCK=$((trees_off / 4096))
FLAP_SECONDS=4
TAMPER_SECONDS=$VM_TAMPER_SECONDS
EOF
cp "$params" "$w/params.txt"
cat "$w/c4.classes" "$w/c1.classes" |
	awk '{n[$1] += $2} END {for (c in n) print c, n[c]}' | sort >"$w/classes"

t0=$(date +%s)
if [[ " $VM_ONLY " == *" matrix "* ]]; then
	# Every line of the plan is a declared check: a position the guest
	# skipped or never reached fails the boot (vm_report).
	for n in c4 c1; do
		awk -v n="$n" '{ print "matrix-" n "-" $1 "-" $2 }' "$w/ctl/$n.pos"
	done >"$w/matrix.checks"
	planned=$(grep -c . "$w/matrix.checks")
	[ "$planned" -gt 0 ] || die "the matrix plan is empty"
	run_vm --name=matrix --timeout=600 --ctl="$w/ctl" --checks="$w/matrix.checks" \
		"$TOPDIR/tests/vm/scenarios/corrupt.sh" "${disks[@]}"
	vm_report matrix
	echo "  $planned planned positions"
	echo "  positions per class: $(awk '{printf "%s%s %s", sep, $1, $2; sep = ", "}' "$w/classes")"
	grep '^matrix ' "$VM_OUTDIR/boot-matrix/output" 2>/dev/null | sed 's/^/  /'
fi
if [[ " $VM_ONLY " == *" odirect "* ]]; then
	run_vm --name=odirect --timeout=$((120 + 2 * VM_TAMPER_SECONDS)) --ctl="$w/ctl" \
		"$TOPDIR/tests/vm/scenarios/corrupt-odirect.sh" "${disks[@]}"
	vm_report odirect
	grep -E '^(intact|damaged)' "$VM_OUTDIR/boot-odirect/output" 2>/dev/null | sed 's/^/  /'
fi
if [[ " $VM_ONLY " == *" ioerr "* ]]; then
	run_vm --name=ioerr --timeout=300 --ctl="$w/ctl" \
		"$TOPDIR/tests/vm/scenarios/corrupt-ioerr.sh" "${disks[@]}"
	vm_report ioerr
	grep -E '^flapping' "$VM_OUTDIR/boot-ioerr/output" 2>/dev/null | sed 's/^/  /'
fi
for boot in restart-hash-error panic-hash-error; do
	[[ " $VM_ONLY " == *" $boot "* ]] || continue
	mode=${boot%%-*}
	echo "MODE=$mode" >"$w/ctl/mode"
	run_vm --name="$boot" --expect="$mode" --timeout=120 --ctl="$w/ctl" \
		"$TOPDIR/tests/vm/scenarios/corrupt-fatal.sh" "${disks[@]}"
	vm_report "$boot" "$mode"
	case $mode in
	restart) re='Restarting system' ;;
	panic) re='Kernel panic - not syncing' ;;
	esac
	line=$(grep -m1 -E "$re" "$VM_OUTDIR/boot-$boot/console.log" || true)
	if [ -n "$line" ]; then
		pass "$boot/console shows: ${line#*] }"
	else
		fail "$boot/console has no '$re' line"
	fi
	# The hash device's error, not a corruption, took it down, in this
	# order: the intact read passed, the read began, the error was
	# reported, the guest went down for that reason.
	con=$VM_OUTDIR/boot-$boot/console.log
	if lines=$(vm_console_in_order "$VM_OUTDIR/boot-$boot" \
		'EVT-RESULT PASS intact-block-reads' "EVT-READING-BAD-BLOCK $ioe_data_block\$" \
		"extverity: [0-9:]+: data blocks $ioe_data_block-$ioe_data_block: cannot read its hash blocks from the hash device: error -5" \
		"($re).*dm-extverity device has I/O error") &&
		! grep -q 'extverity.*corrupted' "$con"; then
		pass "$boot/console: intact read, then the read, the hash device error, then the $mode"
	else
		fail "$boot/console: intact read, read, error -5, $mode not in order (lines ${lines:-?}) or a corruption; see $con"
	fi
done
echo "  (VM boots took $(($(date +%s) - t0)) s)"
finish
