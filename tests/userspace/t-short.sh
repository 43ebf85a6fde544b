#!/usr/bin/env bash
# Short options: veritysetup's, where they do not clash (docs/cli.md "Short
# options").  Each behaves exactly as its long form: the same standard
# output, standard error and exit code, and format writes the same hash
# file.  A letter veritysetup has (its --help and man page when installed,
# else the list below) that is neither tested here nor said to be left out
# in docs/cli.md fails.
. "$TOPDIR/tests/userspace/common.sh"
W=$WORKDIR
E=$EXTVERITY
MKIMAGE_NO_BIG=1 mkimg "$W/i" 4096
img=$W/i/image.ext4
u=12345678-1234-1234-1234-123456789abc
"$E" format --uuid=$u "$img" "$W/h" >"$W/f" 2>&1 || { fail "format: $(cat "$W/f")"; finish; }
root=$(root_of "$W/f")

# run NAME ARG...: the tool's exit code, stdout, stderr and the hash file it
# wrote to $W/o.h (empty if none) into $W/NAME.{rc,out,err,h}.
run() {
	local n=$1 rc=0
	shift
	rm -f "$W/o.h"
	"$E" "$@" >"$W/$n.out" 2>"$W/$n.err" || rc=$?
	echo "$rc" >"$W/$n.rc"
	if [ -f "$W/o.h" ]; then mv "$W/o.h" "$W/$n.h"; else : >"$W/$n.h"; fi
}

# same LETTER NAME SHORT_ARG... :: LONG_ARG...: the two behave alike.
declare -A taken=()
same() {
	local letter=$1 name=$2 x
	local -a s=()
	shift 2
	while [ "$1" != :: ]; do s+=("$1"); shift; done
	shift
	run s "${s[@]}"
	run l "$@"
	for x in rc out err h; do
		if ! cmp -s "$W/s.$x" "$W/l.$x"; then
			fail "$name: $x differs from the long form's: $(diff "$W/s.$x" "$W/l.$x" | head -n 4 | tr '\n' ' ')"
			return
		fi
	done
	taken[$letter]=1
	pass "$name: as the long form (exit $(cat "$W/s.rc"))"
}

# -s, --salt (format).
f=(--uuid="$u" "$img" "$W/o.h")
same s "format -s HEX" format -s 00112233aabbccdd "${f[@]}" :: format --salt=00112233aabbccdd "${f[@]}"
same s "format -sHEX" format -s00112233aabbccdd "${f[@]}" :: format --salt=00112233aabbccdd "${f[@]}"
same s "format -s - (no salt)" format -s - "${f[@]}" :: format --salt=- "${f[@]}"
same s "format -s '' (no salt)" format -s '' "${f[@]}" :: format --salt= "${f[@]}"
same s "format -s after the operands" format "${f[@]}" -s 0a0b :: format "${f[@]}" --salt=0a0b
same s "format -s with --json" format --json -s 0a0b "${f[@]}" :: format --json --salt=0a0b "${f[@]}"
same s "format -s without its value" format "${f[@]}" -s :: format "${f[@]}" --salt
same s "format -s twice" format -s 00 -s 00 "${f[@]}" :: format --salt=00 --salt=00 "${f[@]}"
same s "format -s and --salt" format -s 00 --salt=00 "${f[@]}" :: format --salt=00 --salt=00 "${f[@]}"
same s "format -s bad hex" format -s 0g "${f[@]}" :: format --salt=0g "${f[@]}"
same s "format -s too long" format -s "$(printf '%066d' 0)" "${f[@]}" :: format --salt="$(printf '%066d' 0)" "${f[@]}"
"$E" format -s 00112233 "${f[@]}" >"$W/fs" 2>&1
check "format -s: the salt is in the hash area" grep -q '^Salt: *00112233$' \
	<("$E" dump "$W/o.h")

# -v, --verbose (every command, anywhere before "--").
same v "-v before the command" -v dump "$W/h" :: --verbose dump "$W/h"
same v "dump -v" dump -v "$W/h" :: dump --verbose "$W/h"
same v "verify -v" verify -v "$img" "$W/h" "$root" :: verify --verbose "$img" "$W/h" "$root"
same v "format -v" format -v "${f[@]}" :: format --verbose "${f[@]}"
same v "-v on a failure" -v dump "$W/nope" :: --verbose dump "$W/nope"
same v "-v with --json" dump -v --json "$W/h" :: dump --verbose --json "$W/h"

# -V, --version.
same V "-V" -V :: --version

# -?, --help: before a command, and after each.
same '?' "-?" '-?' :: --help
for c in $("$E" --help | sed -n 's/^  \([a-z]*\) .*/\1/p'); do
	same '?' "$c -?" "$c" '-?' :: "$c" --help
done
same '?' "format -? among other options" format -s 00 '-?' "$img" :: format -s 00 --help "$img"

# A letter that is no short option is named as such, not taken for the
# long option it begins (close -d is not --deferred).
check_err "close -d: unknown option" 1 "^extverity: close: unknown option '-d'\$" "$E" close -d x
check_err "format -x: unknown option" 1 "^extverity: format: unknown option '-x'\$" "$E" format -x "${f[@]}"
check_err "format -xs: the unknown letter named" 1 "^extverity: format: unknown option '-x'\$" \
	"$E" format -xs 00 "${f[@]}"

# extverity's own -h, --help, before veritysetup's -h (--hash) was asked for.
same h-help "-h" -h :: --help

# Every letter of veritysetup's: as its long form above, or left out and
# said so in docs/cli.md's "Left out" list.
declare -A long=([s]=salt [v]=verbose [V]=version ['?']=help [h]=hash [q]=batch-mode)
if command -v veritysetup >/dev/null; then
	while read -r l o; do
		long[$l]=$o
	done < <(veritysetup --help 2>/dev/null | sed -n 's/^ *-\(.\), --\([a-z-]*\).*/\1 \2/p'
		 m=$(man -w veritysetup 2>/dev/null) && zcat -f "$m" |
			sed -n 's/\\-/-/g; s/^\\fB--\([a-z-]*\)[^,]*, -\(.\)\\fP$/\2 \1/p')
fi
declare -A mine=([s]=salt [v]=verbose [V]=version ['?']=help)
left=$(sed -n '/^## Short options/,/^## /p' "$TOPDIR/docs/cli.md" | sed -n '/^Left out/,$p')
for l in "${!long[@]}"; do
	o=${long[$l]}
	if [ "${mine[$l]:-}" = "$o" ] && [ -n "${taken[$l]:-}" ]; then
		pass "veritysetup's -$l (--$o): extverity's -$l is --$o"
	elif grep -qF -- "- \`-$l\`, veritysetup's \`--$o\`" <<<"$left"; then
		pass "veritysetup's -$l (--$o): left out, said so in docs/cli.md"
	else
		fail "veritysetup's -$l (--$o): neither extverity's -$l (tested as --$o) nor in docs/cli.md's \"Left out\""
	fi
done
finish
