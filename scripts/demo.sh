#!/usr/bin/env bash
# Demo of the extverity tool: build a small ext4 image, hash it, list the
# files' fs-verity digests, verify it, then corrupt one file's data and
# watch `verify` name the file.  Run by `make demo` after the build.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
tool=${EXTVERITY:-$top/tools/extverity}
work=$(mktemp -d /tmp/extverity-demo.XXXXXX)
trap 'rm -rf "$work"' EXIT
step() { printf '\n=== %s\n' "$*"; }

step "Building a sample ext4 image (tests/lib/mkimage.sh, without the 65 MiB file)"
MKIMAGE_NO_BIG=1 "$top/tests/lib/mkimage.sh" "$work" 4096 >/dev/null
ls -l "$work/image.ext4"

step "extverity format: build the Merkle trees and write the hash area"
"$tool" format "$work/image.ext4" "$work/image.hash" | tee "$work/format.out"
root=$(sed -n 's/^Root digest: *//p' "$work/format.out")

step "extverity dump --files (same lines as 'fsverity digest'), first 8"
"$tool" dump --files "$work/image.hash" | head -8

step "The same file through the reference fsverity tool (no salt: fs-verity's default)"
(cd "$work/src" && fsverity digest big/two-levels)
"$tool" dump --files "$work/image.hash" | grep ' /big/two-levels$'
echo "(in the VM below, 'extverity measure' asks the kernel for the same digest)"

step "extverity verify on the intact image"
"$tool" verify "$work/image.ext4" "$work/image.hash" "$root"

blk=$(debugfs -R "bmap /big/two-levels 2" "$work/image.ext4" 2>/dev/null)
step "Flipping one byte of /big/two-levels, data block $blk, in a copy"
cp "$work/image.ext4" "$work/bad.ext4"
python3 - "$work/bad.ext4" $((blk * 4096 + 10)) <<'PY'
import sys
with open(sys.argv[1], 'r+b') as f:
    f.seek(int(sys.argv[2])); b = f.read(1)[0]
    f.seek(int(sys.argv[2])); f.write(bytes([b ^ 0xff]))
PY
step "extverity verify on the corrupted copy (expect exit 2 naming the file)"
rc=0
"$tool" verify "$work/bad.ext4" "$work/image.hash" "$root" || rc=$?
echo "exit status: $rc"
[ "$rc" -eq 2 ]

# The kernel half: the same images through the dm-extverity target, in
# Debian's kernel under qemu (the host kernel has no device-mapper).
. "$top/tests/vm/vm-lib.sh"
why=$(vm_prereqs)
[ -z "$why" ] && [ ! -f "$top/drivers/md/dm-extverity.ko" ] &&
	why="drivers/md/dm-extverity.ko not built"
if [ -n "$why" ]; then
	step "Skipping the kernel part: $why"
	exit 0
fi
step "Booting Debian's kernel in qemu (TCG) with dm-extverity"
mkdir -p "$work/ctl"
echo "ROOT=$root" >"$work/ctl/params"
VM_OUTDIR=$work run_vm --name=demo --timeout=300 --ctl="$work/ctl" \
	"$top/scripts/demo-guest.sh" "$work/image.ext4:ro" \
	"$work/image.hash:ro" "$work/bad.ext4:ro" || rc=$?
cat "$work/boot-demo/output" 2>/dev/null
if [ "$(cat "$work/boot-demo/outcome")" != poweroff ] ||
	[ -s "$work/boot-demo/problems" ]; then
	echo "the VM did not finish cleanly:" >&2
	tail -n 20 "$work/boot-demo/console.log" >&2
	exit 1
fi
step "Demo finished"
