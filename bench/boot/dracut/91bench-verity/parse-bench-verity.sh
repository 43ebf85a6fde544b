#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# dracut cmdline hook of make bench-boot (module-setup.sh): with
# bench.verity= on the command line, the initqueue runs bench-verity-root
# on each round until /dev/mapper/vroot exists; a failure stops the boot,
# as the extverity module's does.
# shellcheck shell=dash disable=SC1091,SC2154

type getarg >/dev/null 2>&1 || . /lib/dracut-lib.sh

if [ -n "$(getarg bench.verity=)" ]; then
	echo "/sbin/bench-verity-root || die 'bench-verity: cannot open the root'" \
		>"$hookdir/initqueue/settled/bench-verity-root.sh"
	echo '[ -b /dev/mapper/vroot ]' >"$hookdir/initqueue/finished/bench-verity-root.sh"
fi
