#!/usr/bin/env bash
# make install / install-dkms into a staging directory, the man page
# renders without warnings, and the man page and bash completion know
# every command and option the tool has.
. "$TOPDIR/tests/userspace/common.sh"
W=$WORKDIR
cd "$TOPDIR" || exit 1
if [ ! -x tools/extverity ] || [ ! -x tools/extverity-generator ]; then
	skip "install: tools/extverity or tools/extverity-generator not built (make tools)"
	finish
fi
# -o tools: install what is built, do not rebuild it here.
rm -rf "$W/root"
if make -s -o tools install DESTDIR="$W/root" PREFIX=/usr >"$W/install.log" 2>&1; then
	pass "make install DESTDIR PREFIX=/usr"
else
	fail "make install: $(tail -n 3 "$W/install.log")"
fi
(cd "$W/root" && find . -type f | LC_ALL=C sort) >"$W/files"
printf '%s\n' ./usr/bin/extverity ./usr/share/bash-completion/completions/extverity \
	./usr/share/initramfs-tools/hooks/extverity \
	./usr/share/initramfs-tools/scripts/local-top/extverity \
	./usr/share/man/man8/extverity.8 ./usr/share/man/man8/extverity-generator.8 \
	./usr/share/man/man5/extveritytab.5 ./usr/lib/systemd/system-generators/extverity-generator \
	./usr/lib/dracut/modules.d/90extverity/module-setup.sh \
	./usr/lib/dracut/modules.d/90extverity/parse-extverity.sh \
	./usr/lib/dracut/modules.d/90extverity/extverity-root.sh | LC_ALL=C sort >"$W/want"
if cmp -s "$W/files" "$W/want"; then pass "installed files: $(tr '\n' ' ' <"$W/files")"
else fail "installed files: $(tr '\n' ' ' <"$W/files")"; fi
check "installed tool runs" sh -c "\"$W/root/usr/bin/extverity\" --version >/dev/null"
check "tool is executable" test -x "$W/root/usr/bin/extverity"
check "initramfs hook is executable" test -x "$W/root/usr/share/initramfs-tools/hooks/extverity"
check "initramfs local-top script is executable" \
	test -x "$W/root/usr/share/initramfs-tools/scripts/local-top/extverity"
check "generator is executable" test -x "$W/root/usr/lib/systemd/system-generators/extverity-generator"
check "dracut module-setup.sh is executable" \
	test -x "$W/root/usr/lib/dracut/modules.d/90extverity/module-setup.sh"

rm -rf "$W/root2"
make -s -o tools install DESTDIR="$W/root2" >/dev/null 2>&1
check "default PREFIX is /usr/local" test -x "$W/root2/usr/local/bin/extverity"
check "default PREFIX: the generator in /usr/local/lib/systemd" \
	test -x "$W/root2/usr/local/lib/systemd/system-generators/extverity-generator"
make -s -o tools uninstall DESTDIR="$W/root2" >/dev/null 2>&1
check "uninstall removes the files" test -z "$(find "$W/root2" -type f)"

rm -rf "$W/dkms"
make -s install-dkms DESTDIR="$W/dkms" >"$W/dkms.log" 2>&1 ||
	fail "make install-dkms: $(tail -n 3 "$W/dkms.log")"
d=$W/dkms/usr/src/extverity-1.0.0
for f in dkms.conf Kbuild drivers/md/Kbuild include/uapi/linux/dm-extverity.h \
	drivers/md/dm-extverity-target.c drivers/md/dm-extverity-format.h; do
	check "install-dkms: $f" test -f "$d/$f"
done
left=$(cd "$d" && find . -name '*.o' -o -name '*.ko' -o -name '*.mod*' -o -name '*.cmd')
check "install-dkms: no build products" test -z "$left"
check "dkms.conf: version matches the Makefile" \
	grep -q "^PACKAGE_VERSION=\"$(sed -n 's/^VERSION := //p' Makefile)\"" dkms.conf

# The man pages: no groff warnings, render with man.
for m in docs/extverity.8 docs/extverity-generator.8 docs/extveritytab.5; do
	err=$(groff -man -Tutf8 -z -ww "$m" 2>&1)
	if [ -z "$err" ]; then pass "man page $m: groff -ww without warnings"
	else fail "man page $m: groff: $err"; fi
done
if command -v man >/dev/null; then
	MANWIDTH=80 man -l docs/extverity.8 2>"$W/man.err" | col -b >"$W/man.txt"
	if grep -q 'EXIT STATUS' "$W/man.txt" && grep -q 'SEE ALSO' "$W/man.txt" &&
		[ ! -s "$W/man.err" ]; then
		pass "man -l renders"
	else fail "man -l: $(head -n 3 "$W/man.err")"; fi
else
	groff -man -Tutf8 docs/extverity.8 2>/dev/null | col -b >"$W/man.txt"
fi
# Every command and every long option of the usage is documented and completed.
cmds=$("$EXTVERITY" --help | sed -n 's/^  \([a-z]*\) .*/\1/p')
opts=$("$EXTVERITY" --help | grep -Eo -- '--[a-z][a-z-]*' | sort -u)
. scripts/extverity.bash-completion
for c in $cmds; do
	grep -q "^       $c" "$W/man.txt" || fail "man page lacks command $c"
	COMP_WORDS=(extverity "${c:0:2}"); COMP_CWORD=1; _extverity
	[[ " ${COMPREPLY[*]} " == *" $c "* ]] || fail "completion lacks command $c"
done
for o in $opts; do
	grep -q -- "$o" "$W/man.txt" || fail "man page lacks option $o"
done
for c in $cmds; do
	for o in $("$EXTVERITY" "$c" --help | grep -Eo -- '--[a-z][a-z-]*' | sort -u); do
		COMP_WORDS=(extverity "$c" "$o"); COMP_CWORD=2; _extverity
		[[ " ${COMPREPLY[*]} " == *" $o"[=\ ]* ]] || fail "completion of $c lacks $o"
	done
done
# Short options ("-s, --salt"): in the man page, and completed after their
# command (-v after every one, -V before one), but -?, which compgen would
# take for a file pattern.
mapfile -t shorts < <("$EXTVERITY" --help | grep -Eo -- '(^|[[ ])-[A-Za-z?],' | tr -d '[ ,' | sort -u)
for o in "${shorts[@]}"; do
	grep -Eq -- "(^|[[:space:]/])${o/\?/\\?}([,/[:space:]]|\$)" "$W/man.txt" ||
		fail "man page lacks option $o"
done
for c in $cmds; do
	mapfile -t cshorts < <("$EXTVERITY" "$c" --help | grep -Eo -- '(^|[[ ])-[A-Za-z],' | tr -d '[ ,')
	for o in "${cshorts[@]}" -v; do
		COMP_WORDS=(extverity "$c" "$o"); COMP_CWORD=2; _extverity
		[[ " ${COMPREPLY[*]} " == *" $o "* ]] || fail "completion of $c lacks $o"
	done
done
COMP_WORDS=(extverity -V); COMP_CWORD=1; _extverity
[[ " ${COMPREPLY[*]} " == *" -V "* ]] || fail "completion lacks -V"
pass "man page and completion cover $(wc -w <<<"$cmds") commands, $(wc -w <<<"$opts") options, ${#shorts[@]} short options"
finish
