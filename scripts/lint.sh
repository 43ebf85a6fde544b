#!/usr/bin/env bash
# make lint: the kernel code must be checkpatch --strict clean, and build
# with W=1 and sparse (C=1) without a single warning.  checkpatch.pl comes
# from Debian's linux-source-6.1 tarball, extracted once into build/.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
kdir=${KDIR:?KDIR not set}
ck=build/checkpatch
src=/usr/src/linux-source-6.1.tar.xz
if [ ! -f "$ck/scripts/checkpatch.pl" ]; then
	[ -f "$src" ] || { echo "lint: $src missing (apt-get install linux-source-6.1)" >&2; exit 1; }
	mkdir -p "$ck"
	tar -xJf "$src" -C "$ck" --strip-components=1 \
		linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch
fi

status=0
shopt -s nullglob
files=(drivers/md/*.[ch] include/uapi/linux/*.h tools/lib/*.[ch] tools/programs/*.[ch])
echo "  CHECKPATCH (--strict)"
# Userspace files are held to the same style, less the kernel-only rules.
for f in "${files[@]}"; do
	case $f in
	tools/*) extra=--ignore=SPDX_LICENSE_TAG,NEW_TYPEDEFS,PREFER_KERNEL_TYPES,SPLIT_STRING,EMBEDDED_FUNCTION_NAME,FILE_PATH_CHANGES,CAMELCASE,PREFER_DEFINED_ATTRIBUTE_MACRO ;;
	*) extra= ;;
	esac
	out=$(perl "$ck/scripts/checkpatch.pl" --strict --no-tree --quiet \
		--no-summary --show-types $extra -f "$f" 2>&1) || true
	if [ -n "$out" ]; then
		echo "$out"
		status=1
	fi
done

if [ -f drivers/md/Kbuild ]; then
	echo "  KBUILD  W=1 C=1 (sparse)"
	log=build/lint-kbuild.log
	mkdir -p build
	make -s -C "$kdir" M="$top" clean >/dev/null 2>&1 || true
	if ! make -C "$kdir" M="$top" W=1 C=1 modules >"$log" 2>&1; then
		cat "$log"
		status=1
	elif grep -E 'warning:|error:' "$log"; then
		status=1
	fi
fi
[ $status -eq 0 ] && echo "lint: clean"
exit $status
