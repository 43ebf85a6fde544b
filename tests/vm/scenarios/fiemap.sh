# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC1091
# shellcheck shell=sh
#
# Guest side of t-vm-fiemap.sh.  /ctl/plan has a line per filesystem:
#   FS MOUNT_TYPE GOOD_DEV BAD_DEV HASH_DEV ROOT BAD_INODE BAD_PATH
# and /ctl/FS.sha256 the sha256 of every file, as the host read them;
# /ctl/FS.fsverity, what `fsverity digest` printed for each on the host.
# The host declares each filesystem's checks (/ctl/checks) from the plan.
#@check insmod
. /ctl/guest-lib.sh

gcheck insmod ext_insmod

# expect_status FS NAME WORD: `extverity status NAME` says "status: WORD".
expect_status() {
	if extverity status "$2" >/tmp/st.out 2>&1 &&
		grep -Eq "^ *status: +$3\$" /tmp/st.out; then
		gpass "$1-$3"
	else
		gfail "$1-$3" "$(tr '\n' '|' </tmp/st.out)"
	fi
}

# expect_measure FS NAME: `extverity measure` of every file under
# /mnt/NAME prints the host's `fsverity digest` lines; on btrfs, whose
# files' st_dev is an anonymous device, it refuses them and says so.
expect_measure() {
	# One run for all (the exit code is the worst; no path has a space).
	# shellcheck disable=SC2046
	(cd "/mnt/$2" && extverity measure $(find . -type f | sort)) \
		>/tmp/measure.out 2>&1
	_rc=$?
	case $1 in
	btrfs)
		if [ $_rc -eq 1 ] && grep -q 'anonymous device of a btrfs' \
			/tmp/measure.out && ! grep -q '^sha' /tmp/measure.out; then
			gpass "$1-measure"
		else
			gfail "$1-measure" "exit $_rc: $(head -n 3 /tmp/measure.out | tr '\n' '|')"
		fi
		;;
	*)
		if [ $_rc -eq 0 ] && cmp -s /tmp/measure.out "/ctl/$1.fsverity"; then
			gpass "$1-measure"
		else
			gfail "$1-measure" "exit $_rc: $(diff "/ctl/$1.fsverity" /tmp/measure.out | head -n 4 | tr '\n' '|')"
		fi
		;;
	esac
}

# open_mount FS NAME DATA HASH ROOT MOUNT_TYPE: open, then mount read-only
# on /mnt/NAME.  Fails (and says why) when either does.
open_mount() {
	if ! extverity open "$3" "$2" "$4" "$5" >/tmp/open.out 2>&1; then
		gfail "$1-open" "$(cat /tmp/open.out)"
		return 1
	fi
	gpass "$1-open"
	mkdir -p "/mnt/$2"
	if ! mount -t "$6" -o ro "/dev/mapper/$2" "/mnt/$2" >/tmp/mount.out 2>&1; then
		gfail "$1-mount" "$(cat /tmp/mount.out)"
		extverity close "$2"
		return 1
	fi
	gpass "$1-mount"
}

# umount_close FS NAME: unmount, close, and nothing of NAME is left.
umount_close() {
	umount "/mnt/$2"
	gcheck "$1-close" extverity close "$2"
	gcheck "$1-gone" dev_gone "$2"
}

while read -r fs mtype good bad hash root ino path; do
	echo "== $fs: $(wc -l <"/ctl/$fs.sha256") files, damaged $path (inode $ino)"
	if ! opt_modprobe "$mtype" >/tmp/mod.out 2>&1; then
		gfail "$fs-module" "$(cat /tmp/mod.out)"
		continue
	fi
	gpass "$fs-module"

	n=$(wc -l <"/ctl/$fs.sha256")
	if open_mount "$fs" "ev-$fs" "$good" "$hash" "$root" "$mtype"; then
		gcheck "$fs-every-file-matches" \
			sh -c "cd /mnt/ev-$fs && sha256sum -c -s /ctl/$fs.sha256"
		gcheck "$fs-file-count-$n" \
			sh -c "[ \$(find /mnt/ev-$fs -type f | wc -l) -eq $n ]"
		expect_status "$fs" "ev-$fs" verified
		expect_measure "$fs" "ev-$fs"
		umount_close "$fs" "ev-$fs"
	fi

	if open_mount "$fs-bad" "bad-$fs" "$bad" "$hash" "$root" "$mtype"; then
		# The report is rate-limited (DMERR_LIMIT: 10 lines in 5 s)
		# and the previous filesystem's retries may have used it up.
		[ -n "${reported:-}" ] && sleep 5
		reported=1
		dmesg_mark
		err=$(cat "/mnt/bad-$fs$path" 2>&1 >/dev/null)
		case $err in
		*"I/O error"* | *"Input/output error"*) gpass "$fs-bad-file-EIO" ;;
		*) gfail "$fs-bad-file-EIO" "cat $path said: '$err'" ;;
		esac
		gcheck "$fs-bad-others-match" sh -c "cd /mnt/bad-$fs &&
			grep -v ' \\.$path\$' /ctl/$fs.sha256 | sha256sum -c -s"
		new=$(dmesg_new | grep 'extverity')
		echo "$new" | head -n 3
		if echo "$new" | grep -q "corrupted, file inode $ino "; then
			gpass "$fs-bad-report-names-inode"
		else
			gfail "$fs-bad-report-names-inode" "inode $ino not in: $(echo "$new" | head -n 2)"
		fi
		expect_status "$fs-bad" "bad-$fs" corrupted
		# status asks the target which files it saw corrupted and
		# names them by path from the hash area (the table's).
		if extverity status "bad-$fs" >/tmp/st.out 2>&1 &&
			grep -q "damaged: *$path (inode $ino," /tmp/st.out; then
			gpass "$fs-bad-status-names-path"
		else
			gfail "$fs-bad-status-names-path" \
				"$path not in: $(tr '\n' '|' </tmp/st.out)"
		fi
		umount_close "$fs-bad" "bad-$fs"
	fi
done </ctl/plan
