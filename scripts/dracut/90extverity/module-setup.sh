#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dracut module: opens verified volumes (docs/boot.md) in the initramfs.
#
# With dracut's systemd (the usual case), the initramfs gets
# extverity-generator, which turns extverity.root= and extverity.usr= on
# the kernel command line, and the /etc/extveritytab lines marked
# x-initrd.attach, into extverity@NAME.service units.  Without systemd, a
# cmdline hook reads extverity.root= and the initqueue opens the root
# (extverity-root.sh) once its devices are there.  Either way: the
# extverity tool (as /usr/sbin/extverity), dmsetup, the modules
# dm-extverity, dm-bufio, dm-mod and reed_solomon, and what /etc/extverity
# holds (root digests and their signatures, for the digest '-').
#
# For tests and for what is not installed: EXTVERITY_TOOL=, EXTVERITY_KO=
# and EXTVERITY_GENERATOR= name the tool, the module and the generator to
# copy in (as the initramfs-tools hook does), EXTVERITY_KEYDIR= the
# directory of digests and signatures.
# shellcheck shell=bash disable=SC2154 # dracut's variables

extverity_tool() {
	if [[ -n ${EXTVERITY_TOOL-} ]]; then
		echo "$EXTVERITY_TOOL"
	else
		find_binary extverity
	fi
}

extverity_generator() {
	local g
	if [[ -n ${EXTVERITY_GENERATOR-} ]]; then
		echo "$EXTVERITY_GENERATOR"
		return
	fi
	for g in "$systemdutildir" /usr/local/lib/systemd /usr/lib/systemd; do
		g=$g/system-generators/extverity-generator
		[[ -x $g ]] && echo "$g" && return
	done
}

# called by dracut
check() {
	local tool
	tool=$(extverity_tool)
	if [[ -z $tool || ! -x $tool ]]; then
		derror "extverity: the extverity tool is not installed${tool:+ ($tool)}"
		return 1
	fi
	# A host-only initramfs carries it when this system uses it.
	if [[ $hostonly ]] && ! grep -qw -e 'extverity\.root=' -e 'extverity\.usr=' /proc/cmdline &&
		[[ ! -f $dracutsysrootdir/etc/extveritytab ]]; then
		return 255
	fi
	return 0
}

# called by dracut
depends() {
	echo dm rootfs-block
	return 0
}

# called by dracut
installkernel() {
	instmods dm-mod dm-bufio
	if [[ -n ${EXTVERITY_KO-} ]]; then
		[[ -f $EXTVERITY_KO ]] || {
			derror "extverity: EXTVERITY_KO=$EXTVERITY_KO: no such file"
			return 1
		}
		inst_simple "$EXTVERITY_KO" "/lib/modules/$kernel/updates/dm-extverity.ko"
		# What the file says it needs (reed_solomon, with FEC built
		# in): dracut cannot ask depmod about a module not installed.
		local deps
		deps=$(modinfo -F depends "$EXTVERITY_KO")
		# shellcheck disable=SC2086 # one word a module
		[[ -z $deps ]] || instmods ${deps//,/ }
	else
		hostonly='' instmods dm-extverity ||
			dwarning "extverity: no dm-extverity module for $kernel (dkms install extverity/VERSION -k $kernel)"
	fi
}

# called by dracut
install() {
	local tool gen f keydir
	tool=$(extverity_tool)
	inst_binary "$tool" /usr/sbin/extverity
	inst_multiple dmsetup
	# Root digests and signatures for the digest '-', and the table.
	keydir=${EXTVERITY_KEYDIR:-$dracutsysrootdir/etc/extverity}
	for f in "$keydir"/*.roothash "$keydir"/*.roothash.p7s; do
		[[ -f $f ]] && inst_simple "$f" "/etc/extverity/${f##*/}"
	done
	[[ -f $dracutsysrootdir/etc/extveritytab ]] && inst_simple /etc/extveritytab

	if dracut_module_included systemd; then
		gen=$(extverity_generator)
		if [[ -z $gen ]]; then
			derror "extverity: extverity-generator is not installed"
			return 1
		fi
		inst_simple "$gen" "$systemdutildir/system-generators/extverity-generator"
		inst_multiple -o \
			"$systemdsystemunitdir"/veritysetup-pre.target \
			"$systemdsystemunitdir"/veritysetup.target \
			"$systemdsystemunitdir"/remote-veritysetup.target \
			"$systemdsystemunitdir"/blockdev@.target \
			"$systemdsystemunitdir"/sysinit.target.wants/veritysetup.target
	else
		inst_hook cmdline 30 "$moddir/parse-extverity.sh"
		inst_script "$moddir/extverity-root.sh" /sbin/extverity-root
		dracut_need_initqueue
	fi
}
