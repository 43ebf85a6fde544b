#!/usr/bin/env bash
# DKMS: the sources `make install-dkms` installs build dm-extverity.ko with
# dkms against every installed Debian kernel's headers (6.1 and 6.12 here:
# scripts/install-deps.sh installs both).  Cleans up after
# itself (dkms remove --all, /usr/src/extverity-VERSION).  Skips when dkms,
# root or the headers are missing, or the version is already installed.
. "$TOPDIR/tests/userspace/common.sh"
W=$WORKDIR
cd "$TOPDIR" || exit 1
VER=$(sed -n 's/^VERSION := //p' Makefile)
SRC=/usr/src/extverity-$VER
# The kernels whose headers are installed (not necessarily the running one).
KVS=()
for d in /lib/modules/*/build; do
	[ -e "$d/Makefile" ] && KVS+=("$(basename "$(dirname "$d")")")
done
KV=${KVS[*]}
if ! command -v dkms >/dev/null; then
	skip "dkms: not installed (scripts/install-deps.sh)"
	finish
elif [ "$(id -u)" -ne 0 ]; then
	skip "dkms: needs root"
	finish
elif [ -z "$KV" ]; then
	skip "dkms: no kernel headers (/lib/modules/*/build)"
	finish
elif [ -e "$SRC" ] || dkms status -m extverity 2>/dev/null | grep -q .; then
	skip "dkms: extverity $VER already installed here ($SRC); not touching it"
	finish
fi
cleanup() {
	dkms remove -m extverity -v "$VER" --all >/dev/null 2>&1
	rm -rf "$SRC"
}
trap cleanup EXIT
# Both kernels Debian 12 offers must be among them, or this proves less
# than it says.
for series in 6.1 6.12; do
	if printf '%s\n' "${KVS[@]}" | grep -q "^$series\.[0-9]"; then
		pass "headers of a $series kernel installed"
	else
		fail "no $series kernel headers among: $KV (scripts/install-deps.sh)"
	fi
done

if make -s install-dkms DESTDIR= >"$W/install.log" 2>&1; then
	pass "make install-dkms into $SRC"
else
	fail "make install-dkms: $(tail -n 3 "$W/install.log")"
	finish
fi
check "dkms add" dkms add -m extverity -v "$VER"
for KV in "${KVS[@]}"; do
	if dkms build -m extverity -v "$VER" -k "$KV" >"$W/build-$KV.log" 2>&1; then
		pass "dkms build -k $KV"
	else
		fail "dkms build -k $KV: $(tail -n 5 "$W/build-$KV.log" | tr '\n' ' ')"
		tail -n 20 /var/lib/dkms/extverity/"$VER"/build/make.log 2>/dev/null
	fi
	ko=$(find "/var/lib/dkms/extverity/$VER/$KV" -name 'dm-extverity.ko*' 2>/dev/null | head -n 1)
	if [ -n "$ko" ]; then
		pass "built ${ko#/var/lib/dkms/}"
		vm=$(modinfo -F vermagic "$ko" 2>/dev/null | cut -d' ' -f1)
		if [ "$vm" = "$KV" ]; then pass "vermagic $vm"
		else fail "vermagic '$vm', want $KV"; fi
	else
		fail "no dm-extverity.ko under /var/lib/dkms/extverity/$VER/$KV"
	fi
done
cleanup
if dkms status -m extverity 2>/dev/null | grep -q . || [ -e "$SRC" ]; then
	fail "dkms remove --all left: $(dkms status -m extverity) $(ls -d "$SRC" 2>/dev/null)"
else
	pass "dkms remove --all cleans up"
fi
finish
