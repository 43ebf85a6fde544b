#!/usr/bin/env bash
# --json of format, dump, dump --files, verify and status: strict JSON
# (UTF-8 throughout, as json.loads on bytes checks), the keys and types
# scripts rely on, file names that are not UTF-8 (replaced, plus *_hex),
# and verify's list of damaged items, field for field what stderr says.
. "$TOPDIR/tests/userspace/common.sh"
W=$WORKDIR
E=$EXTVERITY

# jcheck NAME FILE PYTHON: FILE parses as strict JSON into j, then PYTHON
# (statements; raise or assert to fail) runs with j, raw (the bytes) and
# argv (the rest of the arguments).
jcheck() {
	local name=$1 file=$2 code=$3 msg
	shift 3
	if msg=$(python3 -c '
import json, sys
raw = open(sys.argv[1], "rb").read()
# Strict UTF-8 (json.loads(bytes) lets encoded surrogates through).
j = json.loads(raw.decode("utf-8"))
argv = sys.argv[2:]
exec(sys.stdin.read())' "$file" "$@" 2>&1 <<<"$code"); then
		pass "$name"
	else
		fail "$name: $(tail -n 3 <<<"$msg") -- $(head -c 300 "$file")"
	fi
}

# An image whose names hold invalid UTF-8 (a lone \xff, a truncated
# sequence, an overlong '/', a surrogate), valid multibyte UTF-8, a quote,
# a backslash and a tab; "big" files have a packed top and a level 0.
src=$W/src
bad=$'bad\xff\xfe'
mkdir -p "$src/dir" "$src/$bad-dir" "$src/$(printf 'ovl\xc0\xafsur\xed\xa0\x80')"
printf 'hello\n' >"$src/a.txt"
printf 'caf\n' >"$src/dir/café ☕.txt"
printf 'quote\n' >"$src/dir/q\"b\\s"$'\t'"x"
printf 'trunc\n' >"$src/$bad-dir/tr"$'\xe2\x82'
printf 'x\n' >"$src/$(printf 'ovl\xc0\xafsur\xed\xa0\x80')/f"
big=$'big\xff'
head -c 600000 /dev/urandom >"$src/$bad-dir/$big"
head -c 1048576 /dev/urandom >"$src/dir/big2"
img=$W/image.ext4
if ! mkfs.ext4 -q -F -b 4096 -d "$src" "$img" 16M >"$W/mkfs" 2>&1; then
	fail "mkfs.ext4 -d: $(cat "$W/mkfs")"
	finish
fi
fixed=(--uuid=01234567-89ab-cdef-0123-456789abcdef)

# ---------------------------------------------------------- format, dump
# The keys in their order and their types, as before json-c.
params_py='
keys = ["root_digest", "hash_algorithm", "data_block_size", "data_blocks",
        "hash_offset", "hash_blocks", "hash_bytes", "hole_hash_blocks",
        "salt", "uuid", "files", "inode_index", "top_digests",
        "trees", "shared_trees", "extents", "zero_blocks", "residual_blocks"]
assert list(j) == keys, list(j)
for k in keys:
    want = str if k in ("root_digest", "hash_algorithm", "salt", "uuid") else int
    assert type(j[k]) is want, (k, j[k])
assert raw.startswith(b"{\"root_digest\": \"") and raw.endswith(b"}\n"), raw
assert j["files"] == 7 and j["salt"] == "" and j["data_block_size"] == 4096
'
"$E" format --json "${fixed[@]}" "$img" "$W/h" >"$W/format.json" 2>"$W/err" ||
	fail "format --json: $(cat "$W/err")"
jcheck "format --json: keys, types, layout" "$W/format.json" "$params_py"
root=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["root_digest"])' "$W/format.json")
"$E" dump --json "$W/h" >"$W/dump.json" 2>"$W/err" ||
	fail "dump --json: $(cat "$W/err")"
jcheck "dump --json: keys, types, layout" "$W/dump.json" "$params_py"
if cmp -s "$W/format.json" "$W/dump.json"; then
	pass "dump --json prints what format --json printed"
else
	fail "dump --json differs from format --json: $(diff "$W/format.json" "$W/dump.json")"
fi

# ---------------------------------------------------------- dump --files
# One object a file, and the same files and digests as the text listing,
# byte for byte: the path, or for a name not UTF-8 path_hex.
"$E" dump --files "$W/h" >"$W/files.txt"
"$E" dump --files --json "$W/h" >"$W/files.json" 2>"$W/err" ||
	fail "dump --files --json: $(cat "$W/err")"
jcheck "dump --files --json: the text listing's files and digests" \
	"$W/files.json" '
text = open(argv[0], "rb").read()
assert isinstance(j, list) and len(j) == 7, j
lines = b""
for f in j:
    assert set(f) <= {"path", "path_hex", "inode", "size", "algorithm",
                      "digest"}, f
    assert type(f["inode"]) is int and type(f["size"]) is int, f
    p = bytes.fromhex(f["path_hex"]) if "path_hex" in f else f["path"].encode()
    lines += b"%s:%s %s\n" % (f["algorithm"].encode(), f["digest"].encode(), p)
assert lines == text, (lines, text)
# One element a line, for line-oriented tools.
assert raw.count(b"\n") == len(j) + 2, raw
' "$W/files.txt"
# The policy: valid UTF-8 as is (a tab and a quote escaped, "/" not);
# otherwise every byte not in a valid sequence is U+FFFD, and path_hex
# holds the bytes.
jcheck "dump --files --json: names not UTF-8 get U+FFFD and path_hex" \
	"$W/files.json" '
by = {f["path"]: f for f in j}
R = "\ufffd"
assert "path_hex" not in by["/a.txt"] and b"\"/a.txt\"" in raw
assert "path_hex" not in by["/dir/café ☕.txt"]
assert "path_hex" not in by["/dir/q\"b\\s\tx"]
assert b"\\t" in raw and b"\\/" not in raw
for p, b in [("/bad" + R * 2 + "-dir/big" + R, b"/bad\xff\xfe-dir/big\xff"),
             ("/bad" + R * 2 + "-dir/tr" + R * 2, b"/bad\xff\xfe-dir/tr\xe2\x82"),
             ("/ovl" + R * 2 + "sur" + R * 3 + "/f",
              b"/ovl\xc0\xafsur\xed\xa0\x80/f")]:
    assert by[p]["path_hex"] == b.hex(), (p, by.get(p))
'
# An area without files (--fs=raw): an empty array.
"$E" format --fs=raw "$img" "$W/hraw" >/dev/null 2>&1
"$E" dump --files --json "$W/hraw" >"$W/raw.json" 2>&1
jcheck "dump --files --json: no files, an empty array" "$W/raw.json" \
	'assert j == [] and raw == b"[\n]\n", raw'

# ---------------------------------------------------------------- verify
"$E" verify --json "$img" "$W/h" "$root" >"$W/ok.json" 2>"$W/err" ||
	fail "verify --json intact: $(cat "$W/err")"
jcheck "verify --json intact: keys, types, nothing corrupted" "$W/ok.json" '
assert list(j) == ["image", "verified", "corrupted_items", "data_bytes",
                   "corrupted"], list(j)
assert j["verified"] is True and j["corrupted_items"] == 0
assert type(j["data_bytes"]) is int and j["corrupted"] == []
'

# verify_items NAME IMAGE HASH: exit 2, and "corrupted" holds one object a
# "corrupted:" line of stderr, each line rebuilt from its object's fields.
verify_items() {
	local name=$1 rc=0
	"$E" verify --json "$2" "$3" "$root" >"$W/v.json" 2>"$W/v.err" || rc=$?
	[ "$rc" -eq 2 ] || fail "$name: exit $rc, want 2: $(head -c 300 "$W/v.err")"
	jcheck "$name" "$W/v.json" '
err = [l for l in open(argv[0], "rb").read().split(b"\n")
       if l.startswith(b"extverity: corrupted: ")]
def path(o):
    return bytes.fromhex(o["path_hex"]) if "path_hex" in o else o["path"].encode()
def tree(o):
    if "path" in o:
        return b"%s (inode %d)" % (path(o), o["inode"])
    return b"metadata" if o["tree"] == 0 else b"tree %d" % o["tree"]
got = []
for o in j["corrupted"]:
    k = o["kind"]
    if k == "file":
        s = b"file %s (inode %d) at offset %d (data block %d)" % (
            path(o) if o["path"] is not None else b"?", o["inode"],
            o["offset"], o["block"])
    elif k == "metadata":
        s = b"metadata block %d" % o["block"]
    elif k == "hash-tree":
        s = b"hash tree of %s level %d" % (tree(o), o["level"])
    elif k == "packed-top":
        s = b"packed top hash block %d (trees of %s)" % (o["block"],
            b", ".join(b"metadata" if t["tree"] == 0 else
                       path(t) if "path" in t else b"tree %d" % t["tree"]
                       for t in o["trees"]))
    elif k == "top-digest":
        s = b"packed top hash block %d (its top digest; the tops in it " \
            b"match their trees)" % o["block"]
    else:
        raise Exception("kind " + k)
    got.append(b"extverity: corrupted: " + s)
assert got == err, (got, err)
assert j["verified"] is False and j["corrupted_items"] == len(got) > 0
assert {o["kind"] for o in j["corrupted"]} >= set(argv[1:]), j
' "$W/v.err" "${@:4}"
}

# Data of a file whose name is not UTF-8, and metadata (the superblock).
blk=$(debugfs -R "bmap \"/$bad-dir/$big\" 2" "$img" 2>/dev/null | tr -d ' ')
cp "$img" "$W/c"
flip "$W/c" $((blk * 4096 + 9)) 1084
verify_items "verify --json: a file block (name not UTF-8) and metadata" \
	"$W/c" "$W/h" file metadata

# The hash area: a level-0 block and a packed top of big (not UTF-8).
python3 "$TOPDIR/tests/userspace/evread.py" "$W/h" "$root" sections >"$W/sec"
read -r _ _ _ top lev < <(awk '$1 == "TREE" && $3 == 600000' "$W/sec")
cp "$W/h" "$W/hc"
flip "$W/hc" $((lev * 4096 + 64))
verify_items "verify --json: a damaged hash tree level" "$img" "$W/hc" \
	hash-tree
cp "$W/h" "$W/hc"
flip "$W/hc" $((top + 1))
verify_items "verify --json: a damaged packed top block" "$img" "$W/hc" \
	packed-top
# The last byte of the TOPS section, past every top (this image's tops
# fill a fraction of their block): only the block's top digest fails.
read -r _ tstart tnr < <(awk '$1 == "TOPS"' "$W/sec")
cp "$W/h" "$W/hc"
flip "$W/hc" $(((tstart + tnr) * 4096 - 1))
verify_items "verify --json: a TOPS block that fails its top digest only" \
	"$img" "$W/hc" top-digest

# 150 damaged blocks: stderr names 100, so does the list; all are counted.
first=$(debugfs -R "bmap /dir/big2 0" "$img" 2>/dev/null | tr -d ' ')
last=$(debugfs -R "bmap /dir/big2 149" "$img" 2>/dev/null | tr -d ' ')
if [ $((last - first)) -eq 149 ]; then
	cp "$img" "$W/c"
	# shellcheck disable=SC2046 # one offset a word
	flip "$W/c" $(seq $((first * 4096)) 4096 $((last * 4096)))
	"$E" verify --json "$W/c" "$W/h" "$root" >"$W/v.json" 2>/dev/null
	jcheck "verify --json: 150 damaged, 100 listed as on stderr" "$W/v.json" \
		'assert j["corrupted_items"] == 150 and len(j["corrupted"]) == 100, j["corrupted_items"]'
else
	fail "/dir/big2 is not contiguous ($first..$last)"
fi

# An image name that is not UTF-8: image_hex.
cp "$img" "$W/$bad.img"
"$E" verify --json "$W/$bad.img" "$W/h" "$root" >"$W/v.json" 2>"$W/err" ||
	fail "verify --json $bad.img: $(cat "$W/err")"
jcheck "verify --json: an image name not UTF-8" "$W/v.json" '
assert bytes.fromhex(j["image_hex"]) == argv[0].encode("utf-8", "surrogateescape")
assert j["image"].endswith("/bad\ufffd\ufffd.img"), j
' "$W/$bad.img"

# ---------------------------------------------------------------- status
# An inactive device (needs device-mapper, which a container may lack).
rc=0
"$E" status --json ev-json-none >"$W/s.json" 2>"$W/err" || rc=$?
if [ "$rc" -eq 4 ] && [ -s "$W/s.json" ]; then
	jcheck "status --json: an inactive device" "$W/s.json" \
		'assert raw == b"{\"name\": \"ev-json-none\", \"active\": false}\n", raw'
	"$E" status --json "ev-json-$bad" >"$W/s.json" 2>"$W/err"
	jcheck "status --json: an inactive name not UTF-8" "$W/s.json" '
assert list(j) == ["name", "name_hex", "active"] and j["active"] is False
assert j["name"] == "ev-json-bad\ufffd\ufffd", j
assert bytes.fromhex(j["name_hex"]) == b"ev-json-bad\xff\xfe"
'
else
	skip "status --json: no device-mapper here (exit $rc: $(head -c 200 "$W/err"))"
fi
finish
