#!/usr/bin/env bash
# make kernel-patch: for 6.1 and 6.12 the in-tree patch is written, applies
# to Debian's linux-source of that series, is clean for its checkpatch
# (scripts/kernel-patch.sh fails otherwise) and carries no compatibility
# code: dm-extverity-compat.h resolved for that tree's API.
. "$TOPDIR/tests/userspace/common.sh"
W=$WORKDIR
for series in 6.1 6.12; do
	p=$W/extverity-linux-$series.patch
	if [ ! -r "/usr/src/linux-source-$series.tar.xz" ]; then
		fail "$series: no /usr/src/linux-source-$series.tar.xz (scripts/install-deps.sh)"
		continue
	fi
	if ! "$TOPDIR/scripts/kernel-patch.sh" "$series" "$p" >"$W/$series.log" 2>&1; then
		fail "$series: kernel-patch.sh: $(tail -n 3 "$W/$series.log" | tr '\n' ' ')"
		continue
	fi
	pass "$series: patch written, applies, checkpatch --strict clean"
	if grep -q -e 'dm-extverity-compat' -e LINUX_VERSION_CODE -e EXTVERITY_HAVE_ "$p"; then
		fail "$series: compatibility code in the patch"
	else
		pass "$series: no compatibility code"
	fi
	# The names of this tree's API, not the newest kernel's.
	case $series in
	6.1) want='FMODE_READ' unwanted='BLK_OPEN_READ|WQ_PERCPU|kmalloc_obj|linux/hex\.h' ;;
	6.12) want='BLK_OPEN_READ' unwanted='FMODE_READ' ;;
	esac
	if grep -q "^+.*$want" "$p" && ! grep -Eq "^\+.*($unwanted)" "$p"; then
		pass "$series: uses $want, none of /$unwanted/"
	else
		fail "$series: want $want and none of /$unwanted/ in the added lines"
	fi
	# Neither tree has sha256_finup_2x(): no library path, no file, no
	# Kconfig entry or Makefile line for it, and the stand-ins kept.
	if grep -Eq 'dm-extverity-sha256\.[co]|SHA256_LIB|sha256_finup_2x\(ctx|sha256_ctx \*ctx' "$p" ||
		! grep -q '^+static inline void extverity_sha256_2blocks' "$p"; then
		fail "$series: the SHA-256 library path left in, or its stand-ins gone: $(grep -Em 2 'dm-extverity-sha256\.[co]|SHA256_LIB' "$p" | tr '\n' ' ')"
	else
		pass "$series: no SHA-256 library path (the tree has no sha256_finup_2x())"
	fi
done
finish
