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
The inode index (INODES, slot 5, present when compat flag 1 is set; it
follows LEVELS):
  old-format         as the oldest extverity wrote it: flags 1 and 4
                     cleared, slots 5 and 7 zero, the area cut where LEVELS
                     ends (still valid)
  index-unsorted     the first two entries swapped
  index-duplicate    the second entry repeats the first's inode
  index-inode-zero   the first entry's inode is 0
  index-tree-zero    the first entry names the residual tree
  index-tree-range   the first entry names a tree past the tree table
  index-reserved     the first entry's reserved field is not zero
  index-count        one entry more counted than the section can hold
  index-drop         the last entry removed (each entry still valid; the
                     FILES section names an inode the index lacks)
  index-other-tree   two entries of different trees swap trees (each
                     entry valid; each disagrees with FILES)
The FEC record (FEC, slot 6, present when compat flag 2 is set; one
32-byte record {start, blocks, roots, reserved}):
  fec-roots-1        roots 1, below the code's minimum
  fec-roots-25       roots 25, above veritysetup's maximum
  fec-blocks         blocks one more than data + hash area
  fec-past-device    the parity starts at block 2^48, past any device
  fec-reserved       a reserved byte set
  fec-two-records    nr_entries 2
  fec-no-record      the flag set, slot 6 emptied
The top digests (TOP_DIGESTS, slot 7, present when compat flag 4 is set;
a digest per TOPS block; the last section):
  no-top-digests     as an extverity before them wrote it: flag cleared,
                     slot 7 zero, the area cut where the section started
                     (still valid)
  top-digest-count   one digest more counted than there are TOPS blocks
  top-digest-wrong   the first digest's first byte flipped (each top still
                     matches its tree's root; the block not its digest)
Exit 1 with a message when IN is not what it should be, 3 when the area
has nothing the change needs."""
import hashlib
import struct
import sys

ALGS = {1: 'sha256', 2: 'sha512'}
ZERO = 0xffffffff
SB_SIZE = 1024
SECT_OFF, SECT_SIZE = 88, 96
EXTENTS, TREES, FILES, TOPS, LEVELS, INODES, FEC, TOP_DIGESTS = range(8)
INODE_INDEX = 1     # compat_flags bit of the INODES section
FEC_FLAG = 2        # compat_flags bit of the FEC section
TOP_DIGESTS_FLAG = 4    # compat_flags bit of the TOP_DIGESTS section
DIGESTED = (EXTENTS, TREES, FILES, INODES, FEC, TOP_DIGESTS)


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
        self.compat = struct.unpack_from('<I', sb, 16)[0]
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
        # (inode, tree, reserved) of each entry; None: no index.
        self.inodes = None
        self.inode_count = None     # nr_entries to store, if not len()
        if self.compat & INODE_INDEX:
            start, _, n, _ = self.sect[INODES]
            self.inodes = [list(struct.unpack_from('<QII', self.buf,
                                                   start * self.bs + i * 16))
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

    def put_inodes(self):
        """Put the inode index back: the sections after it, and the
        area's end, move with its length."""
        s = self.sect[INODES]
        if self.inodes is None:
            return
        if not s[1]:
            s[0] = max(x[0] + x[1] for x in self.sect[:INODES])
        blocks = (len(self.inodes) * 16 + self.bs - 1) // self.bs
        region = bytearray(blocks * self.bs)
        for i, e in enumerate(self.inodes):
            struct.pack_into('<QII', region, i * 16, *e)
        self.buf[s[0] * self.bs:(s[0] + s[1]) * self.bs] = region
        for x in self.sect[INODES + 1:]:
            if x[1]:
                x[0] += blocks - s[1]
        self.hash_blocks += blocks - s[1]
        struct.pack_into('<Q', self.buf, 32, self.hash_blocks)
        s[1] = blocks
        s[2] = len(self.inodes) if self.inode_count is None else self.inode_count
        if not blocks:
            s[0] = 0

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
        self.put_inodes()
        struct.pack_into('<I', self.buf, 16, self.compat)
        for i in range(8):
            struct.pack_into('<QQQI', self.buf, SECT_OFF + i * SECT_SIZE,
                             *self.sect[i])
        for i in DIGESTED:
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


def cut_at(a, block):
    """End the area at @block."""
    del a.buf[block * a.bs:]
    a.hash_blocks = block
    struct.pack_into('<Q', a.buf, 32, a.hash_blocks)


def old_format(a):
    if a.inodes is None:
        die('no inode index', 3)
    if a.compat & FEC_FLAG:
        die('a FEC section after the inode index', 3)
    cut_at(a, a.sect[LEVELS][0] + a.sect[LEVELS][1])
    a.sect[INODES] = [0, 0, 0, 0]
    a.sect[TOP_DIGESTS] = [0, 0, 0, 0]
    a.compat &= ~(INODE_INDEX | TOP_DIGESTS_FLAG)
    a.inodes = None


def no_top_digests(a):
    s = a.sect[TOP_DIGESTS]
    if not a.compat & TOP_DIGESTS_FLAG:
        die('no top digests', 3)
    if s[1]:
        cut_at(a, s[0])
        # The FEC record covers the area: one as long as it now is.
        if a.compat & FEC_FLAG:
            struct.pack_into('<Q', a.buf, a.sect[FEC][0] * a.bs + 8,
                             a.data_blocks + a.hash_blocks)
    a.sect[TOP_DIGESTS] = [0, 0, 0, 0]
    a.compat &= ~TOP_DIGESTS_FLAG


def top_digest_section(a):
    """The TOP_DIGESTS section, when it has a digest."""
    s = a.sect[TOP_DIGESTS]
    if not a.compat & TOP_DIGESTS_FLAG or not s[1]:
        die('no top digest', 3)
    return s


def index_entries(a, n):
    if a.inodes is None or len(a.inodes) < n:
        die('an inode index of fewer than %d entries' % n, 3)
    return a.inodes


def index_other_tree(a):
    v = index_entries(a, 2)
    for e in v[1:]:
        if e[1] != v[0][1]:
            v[0][1], e[1] = e[1], v[0][1]
            return
    die('every indexed inode has the same tree', 3)


def index_count(a):
    index_entries(a, 1)
    a.inode_count = a.sect[INODES][1] * a.bs // 16 + 1


def fec_record(a):
    """Offset of the FEC record in the area."""
    if not a.compat & FEC_FLAG or not a.sect[FEC][1]:
        sys.exit(3)
    return a.sect[FEC][0] * a.bs


def fec_set(a, fmt, at, value):
    struct.pack_into(fmt, a.buf, fec_record(a) + at, value)


def fec_no_record(a):
    fec_record(a)
    a.sect[FEC] = [0, 0, 0, 32]


CHANGES = {
    'same': lambda a: None,
    'split-extent': split_extent,
    'grow-extents': grow_extents,
    'drop-last-extent': lambda a: a.ext.pop(),
    'drop-middle-extent': drop_middle_extent,
    'extent-past-tree': extent_past_tree,
    'section-past-area': section_past_area,
    'old-format': old_format,
    'index-unsorted': lambda a: index_entries(a, 2).__setitem__(
        slice(0, 2), [a.inodes[1], a.inodes[0]]),
    'index-duplicate': lambda a: index_entries(a, 2)[1].__setitem__(
        0, a.inodes[0][0]),
    'index-inode-zero': lambda a: index_entries(a, 1)[0].__setitem__(0, 0),
    'index-tree-zero': lambda a: index_entries(a, 1)[0].__setitem__(1, 0),
    'index-tree-range': lambda a: index_entries(a, 1)[0].__setitem__(
        1, len(a.tree_size)),
    'index-reserved': lambda a: index_entries(a, 1)[0].__setitem__(2, 1),
    'index-count': index_count,
    'index-drop': lambda a: index_entries(a, 1).pop(),
    'index-other-tree': index_other_tree,
    'fec-roots-1': lambda a: fec_set(a, '<B', 16, 1),
    'fec-roots-25': lambda a: fec_set(a, '<B', 16, 25),
    'fec-blocks': lambda a: fec_set(a, '<Q', 8,
                                    a.data_blocks + a.hash_blocks + 1),
    'fec-past-device': lambda a: fec_set(a, '<Q', 0, 1 << 48),
    'fec-reserved': lambda a: fec_set(a, '<B', 31, 1),
    'fec-two-records': lambda a: (fec_record(a),
                                  a.sect[FEC].__setitem__(2, 2)),
    'fec-no-record': fec_no_record,
    'no-top-digests': no_top_digests,
    'top-digest-count': lambda a: top_digest_section(a).__setitem__(
        2, a.sect[TOPS][1] + 1),
    'top-digest-wrong': lambda a: a.buf.__setitem__(
        top_digest_section(a)[0] * a.bs,
        a.buf[a.sect[TOP_DIGESTS][0] * a.bs] ^ 1),
}


def main():
    if len(sys.argv) != 5 or sys.argv[4] not in CHANGES:
        die('usage: evforge.py IN OUT ROOT_HEX CHANGE (%s)' %
            ' | '.join(CHANGES))
    a = Area(sys.argv[1], sys.argv[3])
    CHANGES[sys.argv[4]](a)
    print(a.write(sys.argv[2]))


main()
