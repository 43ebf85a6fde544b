#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Locate things in an extverity hash area, so the VM tests can damage them.

An independent reader of docs/format.md (it does not trust the tool):

  evtloc.py [--offset=BYTES] HASHFILE section NAME
      "<byte offset> <bytes>" of section EXTENTS|TREES|FILES|TOPS|LEVELS
  evtloc.py [--offset=BYTES] HASHFILE tree INODE
      shell assignments describing the tree of the file with that inode:
      TREE, DATA_SIZE, NLEVELS (levels including the top), TOP (byte offset
      of the packed top), TOP_BYTES, L0 (byte offset of the first level-0
      block, or 0), L0_BLOCKS, and SHARE_INODE: the inode of another file
      whose packed top lies in the same block (0 if none)
  evtloc.py [--offset=BYTES] HASHFILE zero-ranges
      one "start count" line per zero range (data blocks)
  evtloc.py [--offset=BYTES] HASHFILE block BLOCK...
      for each data block, the rule of the extent map that covers it:
      "BLOCK TREE INODE LEAF" (TREE 0: residual, 4294967295: zero range,
      LEAF 0 then)
Offsets are in bytes from the start of HASHFILE.
"""
import struct
import sys

SECTIONS = {"EXTENTS": 0, "TREES": 1, "FILES": 2, "TOPS": 3, "LEVELS": 4}
DIGEST = {1: 32, 2: 64}
ZERO = 0xFFFFFFFF


class Area:
    def __init__(self, path, offset):
        self.f = open(path, "rb")
        self.offset = offset
        sb = self.read(0, 1024)
        if sb[:8] != b"EXTVRITY":
            sys.exit("evtloc: not an extverity hash area")
        (self.alg, self.logbs) = struct.unpack_from("<BB", sb, 20)
        self.bs = 1 << self.logbs
        self.d = DIGEST[self.alg]
        self.sect = []
        for i in range(8):
            s = struct.unpack_from("<QQQI", sb, 88 + 96 * i)
            self.sect.append(s)

    def read(self, pos, n):
        self.f.seek(self.offset + pos)
        return self.f.read(n)

    def section_bytes(self, name):
        start, nr, _, _ = self.sect[SECTIONS[name]][:4]
        return start * self.bs, nr * self.bs

    def extents(self):
        start, nr, count, size = self.sect[0]
        raw = self.read(start * self.bs, count * 32)
        for i in range(count):
            yield struct.unpack_from("<QQIIQ", raw, i * 32)

    def tree(self, idx):
        start, nr, count, size = self.sect[1]
        rec = 24 + self.d
        return struct.unpack_from("<QQQ", self.read(start * self.bs + idx * rec, 24))

    def geometry(self, data_size):
        """Blocks per level, level 0 first; [] when there are no hash blocks."""
        per = self.bs // self.d
        n = -(-data_size // self.bs)
        if n <= 1:
            return []
        levels = []
        while True:
            n = -(-n // per)
            levels.append(n)
            if n == 1:
                return levels


def main():
    args = sys.argv[1:]
    offset = 0
    if args and args[0].startswith("--offset="):
        offset = int(args.pop(0).split("=", 1)[1])
    area = Area(args[0], offset)
    cmd = args[1]
    if cmd == "section":
        pos, n = area.section_bytes(args[2])
        print(offset + pos, n)
    elif cmd == "zero-ranges":
        for start, leaf, count, tree, ino in area.extents():
            if tree == ZERO:
                print(start, count)
    elif cmd == "block":
        ext = list(area.extents())
        for b in map(int, args[2:]):
            rule = [e for e in ext if e[0] <= b < e[0] + e[2]]
            if len(rule) != 1:
                sys.exit("evtloc: %d extents cover block %d" % (len(rule), b))
            start, leaf, count, tree, ino = rule[0]
            print(b, tree, ino, leaf + (b - start) if tree != ZERO else 0)
    elif cmd == "tree":
        ino = int(args[2])
        trees = {}
        for start, leaf, count, tree, eino in area.extents():
            if tree != ZERO and eino:
                trees.setdefault(tree, eino)
        idx = [t for t, i in trees.items() if i == ino]
        if not idx:
            sys.exit("evtloc: no extent of inode %d" % ino)
        idx = idx[0]
        size, top, levels = area.tree(idx)
        geo = area.geometry(size)
        below = geo[-2] if len(geo) >= 2 else -(-size // area.bs)
        l0 = 0
        if len(geo) >= 2:
            l0 = levels * area.bs + sum(geo[1:-1]) * area.bs
        share = 0
        if top:
            for t, i in trees.items():
                if t == idx:
                    continue
                s2, top2, _ = area.tree(t)
                if top2 and top2 // area.bs == top // area.bs:
                    share = i
                    break
        print("TREE=%d" % idx)
        print("DATA_SIZE=%d" % size)
        print("NLEVELS=%d" % len(geo))
        print("TOP=%d" % (offset + top if top else 0))
        print("TOP_BYTES=%d" % (below * area.d if top else 0))
        print("L0=%d" % (offset + l0 if l0 else 0))
        print("L0_BLOCKS=%d" % (geo[0] if len(geo) >= 2 else 0))
        print("SHARE_INODE=%d" % share)
    else:
        sys.exit("evtloc: unknown command " + cmd)


if __name__ == "__main__":
    main()
