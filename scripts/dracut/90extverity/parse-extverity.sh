#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# dracut cmdline hook (dracut without systemd; module-setup.sh): reads
#
#   extverity.root=DATA,HASH,ROOT_DIGEST[,OPTION...]
#
# (docs/boot.md), checks its form now, so that a malformed one stops the
# boot at once, and queues extverity-root, which opens the verified root as
# /dev/mapper/vroot when DATA and HASH are there, or stops the boot when
# that fails.  The initqueue waits for the device (its finished hook) up to
# rd.retry=, then dracut's emergency: the root is never mounted
# unverified.
# shellcheck shell=dash disable=SC1091,SC2154

type getarg >/dev/null 2>&1 || . /lib/dracut-lib.sh

extverity_spec=$(getarg extverity.root=)
if [ -n "$extverity_spec" ]; then
	if ! extverity_why=$(/sbin/extverity-root --check "$extverity_spec" 2>&1); then
		die "extverity: $extverity_why; not mounting an unverified root"
	fi
	# The job is sourced by init on each round of its queue, so that die
	# runs in init itself: init exits, the kernel panics (or reboots with
	# panic=N), and nothing mounts an unverified root.  --check allowed
	# no quote in the value.
	printf '%s\n' "/sbin/extverity-root '$extverity_spec' || die 'extverity: not mounting an unverified root'" \
		>"$hookdir/initqueue/settled/extverity-root.sh"
	echo '[ -b /dev/mapper/vroot ]' >"$hookdir/initqueue/finished/extverity-root.sh"
fi
unset extverity_spec extverity_why
