#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Make Debian 13 backports' Linux 7.3 cloud kernel usable on this Debian 12
# machine: boot it under qemu and build out-of-tree modules against it,
# without installing anything on the host (the packages do not install on
# Debian 12: they need glibc 2.38 and gcc-14).
#
#   scripts/kernel-7.3.sh [prepare|env|sparse]      (default: prepare)
#
# prepare  Everything under build/kernels/7.3 (re-done only when missing):
#          apt/   a private apt configuration for suite trixie-backports,
#                 on the archive URI the host's own bookworm entry uses
#          debs/  linux-{binary,modules,base,headers}-KVER,
#                 linux-headers-V-common, linux-kbuild-V, linux-source-7.3
#          root/  those packages (but linux-source) unpacked with dpkg-deb -x,
#                 depmod run, the headers' Makefile pointed at root/, the
#                 kbuild host tools that need glibc 2.38 (modpost, objtool,
#                 resolve_btfids) replaced by ones built here, and the
#                 compiler features gcc 12 lacks taken out of the headers'
#                 config (match_host_gcc)
#          src/   the part of linux-source-7.3 those tools are built from
#          env, stamp  the harness variables, the version prepared
#          The newest 7.3.N is looked up only when nothing is prepared yet;
#          KERNEL_7_3_VERSION=7.3.N pins one.  rm -rf build/kernels/7.3 to
#          move to a newer one.
# env      print the harness variables, one NAME=VALUE a line: KVER,
#          VM_KERNEL, VM_MODROOT, VM_KCONFIG, KDIR, KMAKEFLAGS.  Build a
#          module with: make -C "$KDIR" M=DIR $KMAKEFLAGS modules
#          KMAKEFLAGS holds spaces: take the lines whole, e.g.
#            while IFS= read -r l; do export "$l"; done < <(scripts/kernel-7.3.sh env)
#          (`env $(scripts/kernel-7.3.sh env)` or eval keep only CC=gcc of it).
# sparse   print the path of a sparse that can check code against 7.3's
#          headers (make C=1 CHECK=PATH), built once into sparse/.  7.3's
#          headers use __typeof_unqual__, which Debian 12's sparse 0.6.4
#          cannot parse: the kernel's scripts/checker-valid.sh then turns
#          C=1 off (this installs that script from linux-source-7.3 too:
#          Debian's kbuild package lacks it, and without it C=1 went off
#          without a word).  The source is Debian's sparse from unstable
#          (0.6.5~rc1 when this was written; no release after 0.6.4 exists),
#          fetched as source through a private apt configuration on the same
#          archive and built with the host's gcc in about 5 s.
#
# Modules built this way are not signed: loading one taints the kernel
# with E (unsigned) as well as O (out-of-tree).  The headers' .config asks
# for pahole 1.30 and Debian 12 has 1.24; make warns about it on every
# build, harmlessly, since KMAKEFLAGS leaves BTF out of modules.
#
# JOBS (default: nproc) sets make -j.
set -euo pipefail
TOPDIR=$(cd "$(dirname "$0")/.." && pwd)
OUT=$TOPDIR/build/kernels/7.3
APTDIR=$OUT/apt
DEBS=$OUT/debs
ROOT=$OUT/root
SRC=$OUT/src/linux-source-7.3
JOBS=${JOBS:-$(nproc)}
# The make arguments a module build needs, and why:
#  CC=gcc  Debian 13 builds with x86_64-linux-gnu-gcc-14 (not on Debian 12)
#  CONFIG_CC_HAS_MIN_FUNCTION_ALIGNMENT=  gcc 12 has no -fmin-function-alignment;
#          kbuild then uses -falign-functions
#  CONFIG_DEBUG_INFO_BTF_MODULES=  pahole 1.24 does not know 7.3's --btf_features
KMAKEFLAGS="CC=gcc CONFIG_CC_HAS_MIN_FUNCTION_ALIGNMENT= CONFIG_DEBUG_INFO_BTF_MODULES="
PATH=$PATH:/usr/sbin:/sbin	# depmod

die() { echo "kernel-7.3: $*" >&2; exit 1; }
log() { echo "kernel-7.3: $*" >&2; }

apt_private() { "$1" -c "$APTDIR/apt.conf" "${@:2}"; }

# The archive is the one the host already uses for bookworm (apt itself
# reads both sources.list and *.sources formats), so no host name is
# written here and a local mirror is honoured.
host_archive_uri() {
	# shellcheck disable=SC2016 # apt's $(FIELD) syntax, not the shell's
	apt-get indextargets --format '$(REPO_URI) $(RELEASE)' |
		awk '$2 == "bookworm" { print $1; exit }'
}

setup_apt() {
	local uri log keyring=/usr/share/keyrings/debian-archive-keyring.gpg
	uri=$(host_archive_uri)
	[ -n "$uri" ] || die "no bookworm entry in the host's apt sources to take the archive URI from"
	mkdir -p "$APTDIR/lists/partial" "$APTDIR/cache/archives/partial" "$DEBS"
	: >"$APTDIR/status"
	echo "deb [arch=amd64 signed-by=$keyring] $uri trixie-backports main" >"$APTDIR/sources.list"
	# Read after the host's apt.conf.d (apt -c), so these win; the host's
	# proxy and similar settings still apply.  Every directory is ours, so
	# apt's download sandbox runs as whoever runs this script.
	cat >"$APTDIR/apt.conf" <<EOF
Dir::State::Lists "$APTDIR/lists";
Dir::State::status "$APTDIR/status";
Dir::Cache "$APTDIR/cache";
Dir::Etc::SourceList "$APTDIR/sources.list";
Dir::Etc::SourceParts "/dev/null";
Dir::Etc::Preferences "/dev/null";
Dir::Etc::PreferencesParts "/dev/null";
APT::Architecture "amd64";
APT::Architectures { "amd64"; };
APT::Sandbox::User "$(id -un)";
EOF
	log "apt-get update (trixie-backports from $uri)"
	if ! log=$(apt_private apt-get -q --error-on=any update 2>&1); then
		echo "$log" >&2
		# debian-archive-keyring holds trixie's keys from 2023.3+deb12u1 on.
		case $log in *NO_PUBKEY*)
			die "$keyring lacks Debian 13's keys: upgrade debian-archive-keyring (bookworm-updates)" ;;
		esac
		die "apt-get update failed"
	fi
}

# The versions of package $1 in the private archive, one a line.
versions() {
	apt_private apt-cache madison "$1" | awk -F'|' '{ gsub(/ /, "", $2); print $2 }'
}

# Newest 7.3.N with a cloud kernel image in the archive.
newest_version() {
	apt_private apt-cache pkgnames linux-binary-7.3. |
		sed -n 's/^linux-binary-\(7\.3\.[0-9]*\)+deb13-cloud-amd64$/\1/p' |
		sort -V | tail -n 1
}

# linux-base holds the kernel's config (as lib/modules/KVER/config) and
# the modules.order/modules.builtin depmod wants; linux-source-7.3 is the
# source of the host tools rebuilt below.
packages() {
	local v=$1 kver=$1+deb13-cloud-amd64
	echo "linux-binary-$kver linux-modules-$kver linux-base-$kver linux-headers-$kver" \
		"linux-headers-$v+deb13-common linux-kbuild-$v+deb13 linux-source-7.3"
}

fetch() {
	local v=$1 p pins='' debver srcver
	debver=$(versions "linux-binary-$v+deb13-cloud-amd64" | sort -V | tail -n 1)
	[ -n "$debver" ] || die "linux-binary-$v+deb13-cloud-amd64 is not in trixie-backports"
	for p in $(packages "$v"); do
		[ "$p" = linux-source-7.3 ] && continue
		versions "$p" | grep -qxF "$debver" || die "$p $debver is not in trixie-backports"
		pins+=" $p=$debver"
	done
	# The archive keeps one linux-source-7.3, the newest: an older pinned
	# kernel gets its tools from that (same series, same tool interfaces).
	srcver=$debver
	if ! versions linux-source-7.3 | grep -qxF "$debver"; then
		srcver=$(versions linux-source-7.3 | sort -V | tail -n 1)
		[ -n "$srcver" ] || die "no linux-source-7.3 in trixie-backports"
		log "warning: no linux-source-7.3 $debver, building the host tools from $srcver"
	fi
	pins+=" linux-source-7.3=$srcver"
	log "downloading$pins"
	# shellcheck disable=SC2086 # word splitting wanted
	(cd "$DEBS" && apt_private apt-get -q download $pins >/dev/null)
	# unpack and build_tools take these, not whatever else debs/ holds.
	for p in $pins; do	# apt-get download names them NAME_VERSION_ARCH.deb
		p=${p%%=*}_${p#*=}
		compgen -G "$DEBS/${p//:/%3a}_*.deb" || die "apt-get download left no $DEBS/${p}_*.deb"
	done >"$DEBS/list-$v"
	log "downloaded $(xargs -d '\n' du -ch <"$DEBS/list-$v" | tail -n 1 | cut -f1)"
}

# The .deb of package $2 fetched for version $1.
deb_of() { grep -m 1 "/${2}_" "$DEBS/list-$1" || die "no $2 among the packages fetched for $1"; }

# The headers package links build -> ../../../src/...: resolve an absolute
# target inside root/ too.
resolve_in_root() {
	local link=$1 t
	t=$(readlink "$link")
	case $t in
	/*) echo "$ROOT$t" ;;
	*) (cd "$(dirname "$link")/$(dirname "$t")" && echo "$PWD/$(basename "$t")") ;;
	esac
}

# Sets MODROOT, VMLINUZ, KCONFIG, KDIR for KVER $1 from what is unpacked.
locate() {
	local kver=$1 d
	MODROOT='' VMLINUZ='' KCONFIG='' KDIR=''
	for d in "$ROOT/usr" "$ROOT"; do
		[ -d "$d/lib/modules/$kver/kernel" ] && { MODROOT=$d; break; }
	done
	[ -n "$MODROOT" ] || die "no lib/modules/$kver/kernel under $ROOT"
	for d in "$ROOT/boot/vmlinuz-$kver" "$MODROOT/lib/modules/$kver/vmlinuz"; do
		[ -f "$d" ] && { VMLINUZ=$d; break; }
	done
	for d in "$ROOT/boot/config-$kver" "$MODROOT/lib/modules/$kver/config"; do
		[ -f "$d" ] && { KCONFIG=$d; break; }
	done
	if [ -L "$MODROOT/lib/modules/$kver/build" ]; then
		KDIR=$(resolve_in_root "$MODROOT/lib/modules/$kver/build")
	else
		KDIR=$ROOT/usr/src/linux-headers-$kver
	fi
	[ -n "$VMLINUZ" ] || die "no vmlinuz for $kver under $ROOT"
	[ -n "$KCONFIG" ] || die "no config for $kver under $ROOT"
	[ -f "$KDIR/Makefile" ] || die "no headers Makefile in $KDIR"
}

unpack() {
	local v=$1 kver=$1+deb13-cloud-amd64 p
	log "unpacking into $ROOT"
	rm -rf "$ROOT"
	mkdir -p "$ROOT"
	for p in $(packages "$v"); do
		[ "$p" = linux-source-7.3 ] && continue
		dpkg-deb -x "$(deb_of "$v" "$p")" "$ROOT"
	done
	locate "$kver"
	# Its KBUILD_OUTPUT= and include name the installed /usr/src paths.
	sed -i "s#^\(KBUILD_OUTPUT=\|include \)/usr/src/#\1$ROOT/usr/src/#" "$KDIR/Makefile"
	! grep -q '[ =]/usr/src/' "$KDIR/Makefile" ||
		die "$KDIR/Makefile still names /usr/src: $(grep '[ =]/usr/src/' "$KDIR/Makefile")"
	depmod -b "$MODROOT" "$kver"
}

# Only what `make olddefconfig modules_prepare` reads: the Kconfig tree,
# scripts/, tools/, include/, arch/x86/, kernel/ (bounds, rq-offsets) and
# security/ (scripts/selinux includes its headers): ~230 MB of the 1.6 GB.
build_tools() {
	local v=$1 headers_config=$2
	log "unpacking linux-source-7.3 (part) into $(dirname "$SRC")"
	rm -rf "$(dirname "$SRC")"
	mkdir -p "$(dirname "$SRC")"
	dpkg-deb --fsys-tarfile "$(deb_of "$v" linux-source-7.3)" |
		tar -xO ./usr/src/linux-source-7.3.tar.xz | xz -dc -T2 |
		tar -x -C "$(dirname "$SRC")" --wildcards \
			linux-source-7.3/Makefile linux-source-7.3/Kbuild '*/Kconfig*' \
			'linux-source-7.3/scripts/*' 'linux-source-7.3/tools/*' \
			'linux-source-7.3/include/*' 'linux-source-7.3/arch/x86/*' \
			'linux-source-7.3/kernel/*' 'linux-source-7.3/security/*'
	# The headers' .config, so the tools match the kernel (olddefconfig
	# only drops what gcc 12 and the missing rustc cannot do).
	cp "$headers_config" "$SRC/.config"
	log "building modpost, objtool, resolve_btfids (make -j$JOBS CC=gcc modules_prepare)"
	make -C "$SRC" -s CC=gcc olddefconfig >/dev/null
	make -C "$SRC" -s -j"$JOBS" CC=gcc modules_prepare >/dev/null
}

# Debian's scripts/mod/modpost and tools/objtool/objtool are wrappers (they
# run on glibc 2.36) that exec NAME.real-VARIANT; VARIANT is lsb-64 for
# x86-64 objects and x86 for SRCARCH=x86.  The other variants are for other
# targets and cannot run here either: removed, so that nothing broken is left.
install_tool() {
	local new=$1 dir=$2 name=$3 variant=$4
	[ -x "$new" ] || die "$new was not built"
	if compgen -G "$dir/$name.real-*" >/dev/null; then
		rm -f "$dir/$name".real-*
		install -m 755 "$new" "$dir/$name.real-$variant"
	else
		install -m 755 "$new" "$dir/$name"
	fi
}

swap_tools() {
	install_tool "$SRC/scripts/mod/modpost" "$KDIR/scripts/mod" modpost lsb-64
	install_tool "$SRC/tools/objtool/objtool" "$KDIR/tools/objtool" objtool x86
	install_tool "$SRC/tools/bpf/resolve_btfids/resolve_btfids" \
		"$KDIR/tools/bpf/resolve_btfids" resolve_btfids ''
	# Every program of the kbuild tree must load here (glibc, libssl, ...).
	local kbuild f bad=0
	kbuild=$(cd -P "$KDIR/scripts/.." && pwd)
	while IFS= read -r f; do
		[ "$(head -c 4 "$f")" = $'\x7fELF' ] || continue
		if ldd "$f" 2>&1 | grep -q 'not found'; then
			log "cannot run here: $f: $(ldd "$f" 2>&1 | grep 'not found' | head -n 1)"
			bad=1
		fi
	done < <(find "$kbuild" -type f -perm -u+x)
	[ $bad = 0 ] || die "kbuild host programs that do not run on this machine (see above)"
}

# The compiler features the headers' autoconf.h claims for gcc 14 that gcc
# 12 lacks (CC_HAS_ASM_GOTO_OUTPUT: gcc 12.2 is on the kernel's list of
# versions that miscompile asm goto with outputs; CC_HAS_ASSUME,
# CC_HAS_SANE_FUNCTION_ALIGNMENT, ...), as olddefconfig with gcc 12 found
# them: dropped from the headers' config, so modules get the code the
# kernel would have chosen for gcc 12.  Compiler features only: no ABI.
match_host_gcc() {
	local sym gcc
	gcc=$(gcc -dumpfullversion)
	for sym in $(comm -23 \
		<(grep -o '^CONFIG_CC_HAS_[A-Z0-9_]*=y' "$KDIR/.config" | sort) \
		<(grep -o '^CONFIG_CC_HAS_[A-Z0-9_]*=y' "$SRC/.config" | sort)); do
		sym=${sym%=y}
		sed -i "/^#define $sym 1\$/d" "$KDIR/include/generated/autoconf.h"
		sed -i "/^$sym=y\$/d" "$KDIR/include/config/auto.conf"
		log "$sym is not for gcc $gcc: dropped from the headers' config"
	done
}

write_env() {
	local kver=$1
	cat >"$OUT/env" <<EOF
KVER=$kver
VM_KERNEL=$VMLINUZ
VM_MODROOT=$MODROOT
VM_KCONFIG=$KCONFIG
KDIR=$KDIR
KMAKEFLAGS=$KMAKEFLAGS
EOF
}

# Step stamps hold the version they were done for; a step that runs
# clears the stamps of the steps depending on it.
done_for() { [ "$(cat "$OUT/.$1" 2>/dev/null)" = "$2" ]; }
mark() { echo "$2" >"$OUT/.$1"; }

env_get() { sed -n "s/^$1=//p" "$OUT/env" 2>/dev/null; }

# The prepared tree is still whole (a cheap check, for the fast path).
intact() {
	local kdir
	kdir=$(env_get KDIR)
	[ -f "$(env_get VM_KERNEL)" ] && [ -f "$(env_get VM_KCONFIG)" ] &&
		[ -f "$(env_get VM_MODROOT)/lib/modules/$(env_get KVER)/modules.dep" ] &&
		[ -f "$kdir/Makefile" ] && [ -x "$kdir/scripts/mod/modpost" ]
}

prepare() {
	local v=${KERNEL_7_3_VERSION:-} have start kver
	v=${v%+deb13}
	[[ -z $v || $v =~ ^7\.3\.[0-9]+$ ]] || die "KERNEL_7_3_VERSION=$v: want 7.3.N"
	# One prepare at a time: a second one waits, then finds it all done.
	mkdir -p "$OUT"
	exec 9>"$OUT/.lock"
	flock -n 9 || { log "waiting for another prepare to finish"; flock 9; }
	have=$(cat "$OUT/stamp" 2>/dev/null || true)
	if [ -n "$have" ] && { [ -z "$v" ] || [ "$v" = "$have" ]; } && intact; then
		log "up to date: $have+deb13-cloud-amd64 in $OUT"
		return 0
	fi
	start=$(date +%s)
	if [ -z "$v" ] || ! done_for fetched "$v"; then
		setup_apt
		[ -n "$v" ] || v=$(newest_version)
		[ -n "$v" ] || die "no linux-binary-7.3.N+deb13-cloud-amd64 in trixie-backports"
		done_for fetched "$v" || { fetch "$v"; mark fetched "$v"; }
	fi
	kver=$v+deb13-cloud-amd64
	rm -f "$OUT/stamp"
	# Prepared once but not intact now: unpack again.
	[ "$have" != "$v" ] || rm -f "$OUT/.unpacked"
	done_for unpacked "$v" || { rm -f "$OUT/.swapped"; unpack "$v"; mark unpacked "$v"; }
	locate "$kver"
	done_for tools "$v" || { rm -f "$OUT/.swapped"; build_tools "$v" "$KDIR/.config"; mark tools "$v"; }
	done_for swapped "$v" || { swap_tools; match_host_gcc; mark swapped "$v"; }
	write_env "$kver"
	echo "$v" >"$OUT/stamp"
	log "prepared $kver in $(($(date +%s) - start)) s"
}

# A sparse that 7.3's own checker-valid.sh accepts (see the header).
sparse_for_73() {
	local dir=$OUT/sparse uri keyring=/usr/share/keyrings/debian-archive-keyring.gpg
	local checker=$SRC/scripts/checker-valid.sh src
	[ -f "$checker" ] || die "no $checker: run $0 prepare"
	if [ ! -x "$dir/sparse" ] || [ "$(sh "$checker" "$dir/sparse")" != 1 ]; then
		uri=$(host_archive_uri)
		[ -n "$uri" ] || die "no bookworm entry in the host's apt sources to take the archive URI from"
		rm -rf "$dir"
		mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial" "$dir/src"
		: >"$dir/apt/status"
		echo "deb-src [signed-by=$keyring] $uri sid main" >"$dir/apt/sources.list"
		sed -e "s|$APTDIR|$dir/apt|g" "$APTDIR/apt.conf" >"$dir/apt/apt.conf"
		log "fetching the sparse source package (sid) from $uri"
		(cd "$dir/src" && apt-get -c "$dir/apt/apt.conf" -q --error-on=any update >/dev/null &&
			apt-get -c "$dir/apt/apt.conf" -q source --download-only sparse >/dev/null) ||
			die "cannot fetch the sparse source package"
		src=$(compgen -G "$dir/src/sparse_*.orig.tar.*" | head -n 1)
		[ -n "$src" ] || die "the sparse source package has no .orig tarball"
		mkdir "$dir/build"
		tar -xf "$src" -C "$dir/build" --strip-components=1
		make -C "$dir/build" -s -j"$JOBS" sparse >/dev/null 2>&1 ||
			die "sparse ($(basename "$src")) does not build here"
		install -m 755 "$dir/build/sparse" "$dir/sparse"
		rm -rf "$dir/build" "$dir/apt"
		[ "$(sh "$checker" "$dir/sparse")" = 1 ] ||
			die "$(basename "$src") cannot parse 7.3's headers either ($checker)"
	fi
	# What make C=1 runs to decide whether to call sparse at all.
	cmp -s "$checker" "$(env_get KDIR)/scripts/checker-valid.sh" ||
		install -m 755 "$checker" "$(env_get KDIR)/scripts/checker-valid.sh"
	echo "$dir/sparse"
}

print_env() {
	if [ ! -f "$OUT/stamp" ] || [ ! -f "$OUT/env" ]; then
		die "nothing prepared in $OUT: run $0 prepare"
	fi
	cat "$OUT/env"
}

case ${1:-prepare} in
prepare) prepare ;;
env) print_env ;;
sparse) sparse_for_73 ;;
*) die "usage: $0 [prepare|env|sparse]" ;;
esac
