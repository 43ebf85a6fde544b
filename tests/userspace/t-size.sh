#!/usr/bin/env bash
# Hash area size against `veritysetup format` on the same image: a tree per
# file must not cost much more than one tree over the whole device, also on
# a many-small-files image (20k file sizes sampled from Debian 12's /usr).
. "$TOPDIR/tests/userspace/common.sh"
W=$WORKDIR
sizes=/work/shared/data/debian12-usr-file-sizes.txt.gz

# ratio NAME IMAGE: assert extverity bytes <= 1.25 x veritysetup bytes.
ratio() {
	"$EXTVERITY" format --salt=- "$2" "$W/h" >/dev/null 2>"$W/err" ||
		{ fail "$1: format: $(cat "$W/err")"; return; }
	veritysetup format "$2" "$W/vh" >/dev/null 2>&1 ||
		{ fail "$1: veritysetup format failed"; return; }
	local ours theirs r
	ours=$(stat -c %s "$W/h"); theirs=$(stat -c %s "$W/vh")
	r=$(python3 -c "print(f'{$ours / $theirs:.3f}')")
	echo "  $1: extverity $ours bytes, veritysetup $theirs bytes, ratio $r"
	if python3 -c "import sys; sys.exit(not $ours <= 1.25 * $theirs)"; then
		pass "$1: hash area ratio $r <= 1.25"
	else fail "$1: hash area ratio $r > 1.25"; fi
	rm -f "$W/h" "$W/vh"
}

mkimg "$W/i" 4096
ratio "generated image" "$W/i/image.ext4"

if [ ! -r "$sizes" ]; then
	skip "many small files ($sizes missing)"
	finish
fi
python3 - "$sizes" "$W/many" <<'PY'
import gzip, os, random, sys
sizes = [int(l) for l in gzip.open(sys.argv[1], 'rt') if l.strip()]
rng = random.Random(1234)
sample = rng.sample(sizes, 20000)
for i, sz in enumerate(sample):
    sz = min(sz, 4 << 20)
    d = os.path.join(sys.argv[2], 'd%03d' % (i // 200))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, 'f%05d' % i), 'wb') as f:
        f.write(rng.randbytes(sz))
PY
kb=$(du -sk "$W/many" | cut -f1)
mke2fs -q -F -t ext4 -b 4096 -N 30000 -d "$W/many" "$W/many.ext4" \
	$(((kb * 13 / 10 + 16384) / 4 * 4))k
ratio "20k small files" "$W/many.ext4"
"$EXTVERITY" format --salt=- "$W/many.ext4" "$W/h" >/dev/null 2>&1
"$EXTVERITY" dump --files "$W/h" >"$W/got"
oracle "$W/many" sha256 4096 | sed 's| /| /|' >"$W/want"
# Two empty listings are equal too: both must hold every file.
if [ "$(wc -l <"$W/want")" -ge 20000 ] && cmp -s "$W/got" "$W/want"; then
	pass "20k small files: all $(wc -l <"$W/got") digests equal fsverity's"
else fail "20k small files: digests differ: $(diff "$W/want" "$W/got" | head -3)"; fi
finish
