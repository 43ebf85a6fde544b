#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Plan the damage of the corruption matrix (t-vm-corrupt.sh).

  corrupt-plan.py NAME IMAGE HASH INODES METADATA OUTDIR [small]

IMAGE is a corrupt-image.sh image, HASH its hash area, INODES lines
"inode path" (every regular file), METADATA lines "kind block" (ext4
metadata blocks found by dumpe2fs/debugfs).  "small" keeps only the deep
tree of big/multi, the residual tree and a few of the other classes.  Hash-area positions are found
by reading HASH with tests/vm/evtloc.py's reader (docs/format.md), not by
asking the tool.  Writes, in OUTDIR:

  NAME.patch     the damaged blocks, one per position, back to back; the
                 guest maps block i of it over the pristine block with
                 dm-linear, so every position starts from a fresh device
  NAME.ref       what the device must return: the image with every zero
                 range zeroed
  ctl/NAME.pos   one line per position:
                   ID CLASS DISK BLOCK PATCH EXPECT FILES
                 DISK data|hash, BLOCK the damaged block of that disk,
                 PATCH its index in NAME.patch, EXPECT refuse (the table
                 load must fail) or read, FILES exact (the files in
                 ctl/NAME.fail/ID must fail, all others read intact) or any
                 (filesystem metadata hit: a file may fail or read, never
                 with wrong bytes; the filesystem may not mount)
  ctl/NAME.exp/ID  the data blocks whose reads must fail, as the runs
                 "E first last" tests/vm/corrupt-io.c prints
  ctl/NAME.fail/ID the paths that must fail (FILES exact)
  ctl/NAME.refuse/ID  for EXPECT refuse, the reason the table load must
                 give (its ti->error, docs/table.md), from what was
                 damaged: the superblock, which the root digest
                 authenticates, or the TREES or EXTENTS section, which
                 their digests in the superblock do
  NAME.classes   "CLASS count" per class
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evtloc  # noqa: E402

ZERO = evtloc.ZERO
# What a refused table must say, by the part of the manifest damaged.
REFUSE_WHY = {
    "manifest-sb": "Superblock does not match the root digest",
    "manifest-trees": "Tree table digest mismatch",
    "manifest-extents": "Extent map digest mismatch",
    "manifest-top-digests": "Top digests digest mismatch",
}


def main():
    name, image, hashf, inodes, metadata, outdir = sys.argv[1:7]
    small = sys.argv[7:] == ["small"]
    area = evtloc.Area(hashf, 0)
    bs, d = area.bs, area.d
    per = bs // d
    exts = list(area.extents())
    ntrees = area.sect[1][2]
    trees = [area.tree(t) for t in range(ntrees)]
    paths = {}
    for line in open(inodes):
        ino, path = line.split(None, 1)
        paths.setdefault(int(ino), []).append(path.strip())
    meta = [(k, int(b)) for k, b in (line.split() for line in open(metadata))]
    img = open(image, "rb").read()
    hsh = open(hashf, "rb").read()
    nblocks = len(img) // bs

    def rule(block):
        for e in exts:
            if e[0] <= block < e[0] + e[2]:
                return e
        raise SystemExit("block %d outside the extent map" % block)

    def tree_of(ino):
        for start, leaf, count, tree, eino in exts:
            if eino == ino and tree != ZERO:
                return tree
        raise SystemExit("no extent of inode %d" % ino)

    def ino_of(path):
        for ino, ps in paths.items():
            if path in ps:
                return ino
        raise SystemExit("no inode for " + path)

    def file_blocks(ino):
        """Physical blocks of inode ino, leaf order."""
        out = []
        for start, leaf, count, tree, eino in sorted(exts, key=lambda e: e[1]):
            if eino == ino and tree != ZERO:
                out += [(leaf + i, start + i) for i in range(count)]
        return [b for _, b in sorted(out)]

    def leaves_blocks(tree, first, last):
        """Data blocks mapped to leaves [first, last] of tree."""
        out = []
        for start, leaf, count, t, eino in exts:
            if t != tree:
                continue
            lo, hi = max(first, leaf), min(last, leaf + count - 1)
            out += [start + (x - leaf) for x in range(lo, hi + 1)]
        return sorted(out)

    def inodes_of(blocks):
        s = set(blocks)
        return {e[4] for e in exts if e[3] != ZERO and e[4] and
                any(b in s for b in range(e[0], e[0] + e[2]))}

    def levels(tree):
        """[(first hash block or top byte, nblocks)] level 0 first."""
        size, top, lv = trees[tree]
        geo = area.geometry(size)
        out = []
        for k in range(len(geo) - 1):
            out.append((lv + sum(geo[k + 1:len(geo) - 1]), geo[k]))
        return geo, out, top

    def section(i):
        start, nr, count, esize = area.sect[i][:4]
        return start * bs, nr * bs, count, esize

    positions = []
    patches = bytearray()

    def add(cls, disk, byte, expect, bad_blocks=(), files="exact",
            fail_inodes=None):
        """Damage byte `byte` of disk; bad_blocks: data blocks that fail."""
        src = img if disk == "data" else hsh
        blk = byte // bs
        b = bytearray(src[blk * bs:(blk + 1) * bs])
        b[byte % bs] ^= 0x5A
        if fail_inodes is None:
            fail_inodes = inodes_of(bad_blocks)
        positions.append((cls, disk, blk, len(patches) // bs, expect,
                          sorted(set(bad_blocks)), files,
                          sorted(p for i in fail_inodes for p in paths[i])))
        patches.extend(b)

    def add_block(cls, disk, blk, expect, **kw):
        """Overwrite a whole block with a pattern (zero-range class)."""
        src = img if disk == "data" else hsh
        positions.append((cls, disk, blk, len(patches) // bs, expect,
                          [], "exact", []))
        patches.extend((b"\xa5\x5a" * bs)[:bs])
        assert len(src) >= (blk + 1) * bs

    # The baseline: a block replaced by itself.
    positions.append(("pristine", "data", 0, 0, "read", [], "exact", []))
    patches.extend(img[:bs])

    # Data blocks of each size class: first, last, and across a level-0
    # boundary; the byte inside the block moves around.
    spots = [0, bs // 2 + 3, bs - 1]
    n = 0
    data = (("sizes/tiny", (0,)), ("sizes/one", (0,)),
            ("sizes/few", (-1,)), ("sizes/l0full", (-1,)),
            ("sizes/l0over", (per - 1, per)),
            ("big/multi", (0, -1)),
            ("dup/a", (2,)), ("sparse/holes", (-1,)))
    if small:
        data = (("big/multi", (per * 2 + 1,)),)
        meta = [m for m in meta if m[0] in ("superblock", "journal")]
    for path, which in data:
        ino = ino_of(path)
        blocks = file_blocks(ino)
        for w in which:
            blk = blocks[w]
            cls = "data:" + path.split("/")[1]
            if rule(blk)[3] == 0:
                cls = "data-tail-residual:" + path.split("/")[1]
            add(cls, "data", blk * bs + spots[n % 3], "read", [blk],
                fail_inodes=[ino])
            n += 1

    # Filesystem metadata: residual tree, one block fails.
    for kind, blk in meta:
        e = rule(blk)
        if e[3] != 0:
            raise SystemExit("metadata block %d (%s) is not in the residual "
                             "tree" % (blk, kind))
        # Byte 1024 + ... lands inside the ext4 superblock at any size.
        off = 1024 + 100 if kind == "superblock" and bs > 1024 else \
            spots[n % 3]
        add("metadata:" + kind, "data", blk * bs + off, "read", [blk],
            files="any")
        n += 1

    # Tree blocks.  For each tree: the levels below the top, first and last
    # block of each, then the top (bytes inside its used part).
    def tree_positions(label, tree, files, which=(0, -1), top_too=True):
        geo, lv, top = levels(tree)
        nleaves = -(-trees[tree][0] // bs)
        for k, (first, count) in enumerate(lv):
            span = per ** (k + 1)
            # In small mode one block a level, alternating first and last.
            ws = which if not small else (which[k % len(which)],)
            for j in sorted({w % count for w in ws}):
                bad = leaves_blocks(tree, j * span,
                                    min(nleaves, (j + 1) * span) - 1)
                # Byte of a digest that is used, or the zero tail of the
                # last block of a level.
                used = min(per, -(-nleaves // per ** k) - j * per) * d
                off = (used - 1) if j == 0 else (used + 5 if used < bs
                                                 else bs // 3)
                add("tree-L%d:%s" % (k, label), "hash",
                    (first + j) * bs + off, "read", bad, files=files)
        if top and top_too:
            below = -(-nleaves // per ** (len(geo) - 1))
            add("tree-top:%s" % label, "hash", top + below * d // 2, "read",
                leaves_blocks(tree, 0, nleaves - 1), files=files)

    tree_positions("residual", 0, "any", (-1,), not small)
    for path, which, top_too in \
            ((("big/multi", (0, -1), True),) if small else
             (("sizes/few", (), True), ("sizes/l0full", (), True),
              ("sizes/l0over", (0, -1), False),
              ("big/multi", (0, -1), True), ("dup/a", (), True))):
        tree_positions(path.split("/")[1], tree_of(ino_of(path)), "exact",
                       which, top_too)

    # Packed tops: bytes of the TOPS section that no top uses (the slack at
    # the end of a TOPS block) fail the block's top digest, and the kernel
    # then checks each top in it against its tree's root: no effect.
    tpos, tbytes, _, _ = section(3)
    used = set()
    for size, top, lv in trees:
        if top:
            geo = area.geometry(size)
            below = -(-(-(-size // bs)) // per ** (len(geo) - 1))
            used.update(range(top, top + below * d))
    slack = [x for x in range(tpos, tpos + tbytes) if x not in used]
    if slack and not small:
        for x in (slack[-1],):
            add("tops-slack", "hash", x, "read", [])

    # The manifest.  The superblock is authenticated by the root digest,
    # EXTENTS and TREES by their section digests: any change refuses the
    # table.  FILES is for tools only: the kernel never reads it.
    for field, off in (("magic", 0), ("version", 8), ("log_bs", 21),
                       ("data_blocks", 24), ("hash_blocks", 32),
                       ("uuid", 40), ("salt", 60),
                       ("sect-trees-entries", 96 + 88 + 16),
                       ("sect-trees-digest", 96 + 88 + 40),
                       ("sect-tops-nr", 3 * 96 + 88 + 8),
                       ("sect-slot7", 7 * 96 + 88 + 3),
                       ("reserved", 900))[::6 if small else 1]:
        add("manifest-sb:" + field, "hash", off, "refuse")
    epos, eb, ecount, esize = section(0)
    for field, rec, off in (("start", 1, 0), ("leaf", 2, 8), ("count", 0, 16),
                            ("tree", 3, 20), ("inode", 4, 24))[
                                :1 if small else 5]:
        add("manifest-extents:" + field, "hash", epos + rec * esize + off,
            "refuse")
    if ecount * esize < eb and not small:
        add("manifest-extents:padding", "hash", epos + eb - 1, "refuse")
    tpos_, tb, tcount, tsize = section(1)
    for field, rec, off in (("data_size", 1, 0), ("top", 2, 8),
                            ("levels", tcount - 1, 16),
                            ("root", 0, 24 + d - 1))[:1 if small else 4]:
        add("manifest-trees:" + field, "hash", tpos_ + rec * tsize + off,
            "refuse")
    if tcount * tsize < tb and not small:
        add("manifest-trees:padding", "hash", tpos_ + tb - 1, "refuse")
    fpos, fb, _, _ = section(2)
    if fb and not small:
        add("manifest-files", "hash", fpos + fb // 2, "read", [])
    # The top digests, authenticated by their section digest.
    dpos, db, _, _ = section(7)
    if db and not small:
        add("manifest-top-digests", "hash", dpos + 1, "refuse")

    # Zero ranges: a free block full of garbage still reads as zeros.
    zr = [(e[0], e[2]) for e in exts if e[3] == ZERO]
    for start, count in zr[:1 if small else 2]:
        for blk in sorted({start + count - 1} if small else
                          {start, start + count - 1}):
            add_block("zero-range", "data", blk, "read")

    os.makedirs(outdir + "/ctl/%s.exp" % name, exist_ok=True)
    os.makedirs(outdir + "/ctl/%s.fail" % name, exist_ok=True)
    os.makedirs(outdir + "/ctl/%s.refuse" % name, exist_ok=True)
    counts = {}
    with open(outdir + "/ctl/%s.pos" % name, "w") as pf:
        for i, (cls, disk, blk, pidx, expect, bad, files, fail) in \
                enumerate(positions):
            counts[cls.split(":")[0]] = counts.get(cls.split(":")[0], 0) + 1
            pf.write("%d %s %s %d %d %s %s\n" % (i, cls, disk, blk, pidx,
                                                 expect, files))
            with open(outdir + "/ctl/%s.exp/%d" % (name, i), "w") as f:
                run = None
                for b in bad + [None]:
                    if run and b == run[1] + 1:
                        run[1] = b
                        continue
                    if run:
                        f.write("E %d %d\n" % tuple(run))
                    run = [b, b] if b is not None else None
            with open(outdir + "/ctl/%s.fail/%d" % (name, i), "w") as f:
                f.write("".join(p + "\n" for p in fail))
            if expect == "refuse":
                with open(outdir + "/ctl/%s.refuse/%d" % (name, i),
                          "w") as f:
                    f.write(REFUSE_WHY[cls.split(":")[0]] + "\n")
    open(outdir + "/%s.patch" % name, "wb").write(patches)
    ref = bytearray(img)
    for start, count in zr:
        ref[start * bs:(start + count) * bs] = bytes(count * bs)
    assert len(ref) == nblocks * bs
    open(outdir + "/%s.ref" % name, "wb").write(ref)
    with open(outdir + "/%s.classes" % name, "w") as f:
        for k, v in counts.items():
            f.write("%s %d\n" % (k, v))


if __name__ == "__main__":
    main()
