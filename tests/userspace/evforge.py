#!/usr/bin/env python3
"""Rewrite an extverity hash area so that it still authenticates but lies.

evforge.py IN OUT ROOT_HEX CHANGE
Reads the hash area IN (docs/format.md, v1, at offset 0) whose superblock
hashes to ROOT_HEX, makes one CHANGE, rewrites the changed records,
recomputes the digests of the manifest sections and writes the result to
OUT; prints the new root digest.  Written from docs/format.md, not from
the validators: what a change must be refused for follows from what it
breaks, and the caller says so.

CHANGE:
  same               nothing (re-encoded: the root must not change)
  split-extent       a file extent cut in two (still valid; when the map
                     fills its last block, the sections after it and the
                     trees' hash blocks move one block on)
  grow-extents       file extents cut in two until the map needs one more
                     block, so that the move is always made (still valid)
  drop-last-extent   the last extent removed: the map stops short of N
  drop-middle-extent an extent in the middle removed: a gap in the map
  extent-past-tree   the last extent of a single-extent file starts one
                     leaf later, so it runs one leaf past its tree's end
  section-past-area  the LEVELS section starts past the hash area
Exit 1 with a message when IN is not what it should be, 3 when the area
has nothing the change needs."""
import hashlib
import struct
import sys

ALGS = {1: 'sha256', 2: 'sha512'}
ZERO = 0xffffffff
SB_SIZE = 1024
SECT_OFF, SECT_SIZE = 88, 96
EXTENTS, TREES, FILES, TOPS, LEVELS = range(5)


def die(msg, code=1):
    sys.stderr.write('evforge: %s\n' % msg)
    sys.exit(code)


class Area:
    """The superblock's sections, the extent map and the trees' sizes."""

    def __init__(self, path, root):
        self.buf = bytearray(open(path, 'rb').read())
        sb = bytes(self.buf[:SB_SIZE])
        if sb[:8] != b'EXTVRITY':
            die('%s: bad magic' % path)
        (self.alg, self.log_bs, self.data_blocks,
         self.hash_blocks) = struct.unpack_from('<BB2xQQ', sb, 20)
        if self.alg not in ALGS:
            die('%s: unknown algorithm %d' % (path, self.alg))
        if self.hash(sb).hex() != root:
            die('%s: the superblock does not hash to the root' % path)
        self.bs = 1 << self.log_bs
        self.dsize = len(self.hash(b''))
        self.sect = [list(struct.unpack_from('<QQQI', sb, SECT_OFF + i * SECT_SIZE))
                     for i in range(8)]
        start, _, n, _ = self.sect[EXTENTS]
        self.ext = [list(struct.unpack_from('<QQIIQ', self.buf,
                                            start * self.bs + i * 32))
                    for i in range(n)]
        start, _, n, esz = self.sect[TREES]
        self.tree_size = [struct.unpack_from('<Q', self.buf,
                                             start * self.bs + i * esz)[0]
                          for i in range(n)]

    def hash(self, data):
        return hashlib.new(ALGS[self.alg], data).digest()

    def tree_blocks(self, t):
        return (self.tree_size[t] + self.bs - 1) // self.bs

    def grow_extents(self, n):
        """Insert n blocks after the EXTENTS section: what follows moves."""
        end = self.sect[EXTENTS][0] + self.sect[EXTENTS][1]
        self.buf[end * self.bs:end * self.bs] = bytes(n * self.bs)
        for i, sec in enumerate(self.sect):
            if i != EXTENTS and sec[1] and sec[0] >= end:
                sec[0] += n
        start, _, nr, esz = self.sect[TREES]
        for i in range(nr):
            off = start * self.bs + i * esz + 8
            top, levels = struct.unpack_from('<QQ', self.buf, off)
            struct.pack_into('<QQ', self.buf, off,
                             top + n * self.bs if top else 0,
                             levels + n if levels else 0)
        self.hash_blocks += n
        struct.pack_into('<Q', self.buf, 32, self.hash_blocks)

    def write(self, path):
        """Put the extent map back, re-digest the sections, re-sign."""
        s = self.sect[EXTENTS]
        blocks = (len(self.ext) * 32 + self.bs - 1) // self.bs
        if blocks > s[1]:
            self.grow_extents(blocks - s[1])
        s[1], s[2] = blocks, len(self.ext)
        base = s[0] * self.bs
        region = bytearray(blocks * self.bs)
        for i, e in enumerate(self.ext):
            struct.pack_into('<QQIIQ', region, i * 32, *e)
        self.buf[base:base + len(region)] = region
        for i in range(8):
            struct.pack_into('<QQQI', self.buf, SECT_OFF + i * SECT_SIZE,
                             *self.sect[i])
        for i in (EXTENTS, TREES, FILES):
            start, nr = self.sect[i][0], self.sect[i][1]
            d = self.hash(bytes(self.buf[start * self.bs:(start + nr) * self.bs])) if nr else b''
            off = SECT_OFF + i * SECT_SIZE + 32
            self.buf[off:off + 64] = d.ljust(64, b'\0')
        open(path, 'wb').write(self.buf)
        return self.hash(bytes(self.buf[:SB_SIZE])).hex()


def file_extents(a):
    """Indices of the extents of file trees (not residual, not zero)."""
    return [i for i, e in enumerate(a.ext) if e[3] not in (0, ZERO)]


def split_extent(a):
    for i in file_extents(a):
        start, leaf, count, tree, ino = a.ext[i]
        if count >= 2:
            h = count // 2
            a.ext[i:i + 1] = [[start, leaf, h, tree, ino],
                              [start + h, leaf + h, count - h, tree, ino]]
            return
    die('no file extent of two blocks or more', 3)


def grow_extents(a):
    per_block = a.bs // 32
    want = (len(a.ext) + per_block - 1) // per_block + 1
    while (len(a.ext) + per_block - 1) // per_block < want:
        split_extent(a)


def drop_middle_extent(a):
    if len(a.ext) < 3:
        die('fewer than three extents', 3)
    del a.ext[len(a.ext) // 2]


def extent_past_tree(a):
    per_tree = {}
    for i in file_extents(a):
        per_tree.setdefault(a.ext[i][3], []).append(i)
    for t, idx in sorted(per_tree.items()):
        e = a.ext[idx[-1]]
        if len(idx) == 1 and e[1] == 0 and e[2] == a.tree_blocks(t):
            e[1] += 1
            return
    die('no file of a single extent covering its whole tree', 3)


def section_past_area(a):
    s = a.sect[LEVELS]
    if not s[1]:
        die('no LEVELS section', 3)
    s[0] = a.hash_blocks + 1


CHANGES = {
    'same': lambda a: None,
    'split-extent': split_extent,
    'grow-extents': grow_extents,
    'drop-last-extent': lambda a: a.ext.pop(),
    'drop-middle-extent': drop_middle_extent,
    'extent-past-tree': extent_past_tree,
    'section-past-area': section_past_area,
}


def main():
    if len(sys.argv) != 5 or sys.argv[4] not in CHANGES:
        die('usage: evforge.py IN OUT ROOT_HEX CHANGE (%s)' %
            ' | '.join(CHANGES))
    a = Area(sys.argv[1], sys.argv[3])
    CHANGES[sys.argv[4]](a)
    print(a.write(sys.argv[2]))


main()
