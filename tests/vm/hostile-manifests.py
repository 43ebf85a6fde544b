#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Hostile hash areas that authenticate (tests/vm/t-vm-hostile.sh).

hostile-manifests.py HASHFILE IMAGE OUTDIR

Reads a valid hash area made by `extverity format` (docs/format.md) and
writes OUTDIR/areas.bin: slot 0 holds the area unchanged, every other slot
one copy in which ONE named field was set to ONE named bound (just past a
limit, just inside it, an overflow value, a record moved onto another...).
The section digests and the superblock are recomputed and the table line
carries the new root, so the digests hold and only the kernel's
validation can refuse the copy.

Each case's expectation is written by hand in the table below (cases()),
from docs/format.md and docs/table.md: which refusal ("Invalid tree
table", and the reason and record the kernel logs) or that it loads and
reads back as the image.  Nothing here re-implements the validator: the
expectation follows from how the case was built, so a rule that the
kernel and a model both got wrong cannot pass unseen.  Boundary pairs
(the bound itself loads and reads back, one step past it is refused) show
where each limit really is.  The table was written for the image
t-vm-hostile.sh builds; layout() asserts every property of that image
the table relies on (which tree has two levels, where the tops lie...),
so another image stops the run instead of testing the wrong thing.

Output, one case a line, in OUTDIR/manifest-cases:
    ID WANT MODE TABLE...      (WANT V: must load and read back, R: refused)
and in OUTDIR/manifest-expect:
    ID WANT NAME<TAB>REGEX[<TAB>REGEX...]   (each must match a kernel log
    line of the case: ti->error, and the reason for Invalid superblock,
    Invalid tree table, Invalid extent map)
NAME is FIELD=BOUND.  The data device is /dev/vdb, the areas disk /dev/vdc.
"""
import copy
import hashlib
import re
import struct
import sys

SB_FMT = '<8sIIIBBBBQQ16s32s'
SECT_FMT = '<QQQII64s'
SB_SIZE = 1024
EXT_FMT = '<QQIIQ'
TREE_ZERO = 0xffffffff
U64 = (1 << 64) - 1
U32 = 0xffffffff
EXTENTS, TREES, FILES, TOPS, LEVELS, INODES, FEC, TOP_DIGESTS = range(8)
SECT_NAMES = ['extents', 'trees', 'files', 'tops', 'levels', 'inodes', 'fec',
              'top_digests']
# Sections with a digest in the superblock (EXTVERITY_SECT_HAS_DIGEST).
DIGESTED = (EXTENTS, TREES, FILES, INODES, TOP_DIGESTS)
INODE_INDEX = 1		# EXTVERITY_COMPAT_INODE_INDEX
FEC_FLAG = 2		# EXTVERITY_COMPAT_FEC
TOP_DIGESTS_FLAG = 4	# EXTVERITY_COMPAT_TOP_DIGESTS
INODE_FMT = '<QII'
DIGEST = {1: 32, 2: 64}
HASHES = {1: hashlib.sha256, 2: hashlib.sha512,
          'sha256': hashlib.sha256, 'sha512': hashlib.sha512}
DATA_DEV = '/dev/vdb'
AREA_DEV = '/dev/vdc'
# Record fields by name: index in the decoded record.
SB_FIELDS = ('magic', 'version', 'incompat', 'compat', 'alg', 'log_bs',
             'salt_size', 'pad0', 'data_blocks', 'hash_blocks', 'uuid',
             'salt')
SECT_FIELD = {'start': 0, 'nr_blocks': 1, 'nr_entries': 2, 'entry_size': 3}
TREE_FIELD = {'data_size': 0, 'top': 1, 'levels': 2}
EXT_FIELD = {'start': 0, 'leaf': 1, 'count': 2, 'tree': 3, 'inode': 4}
INODE_FIELD = {'inode': 0, 'tree': 1, 'reserved': 2}


class Area:
    """A decoded hash area: superblock fields, sections, records, bytes."""

    def __init__(self, raw, slot):
        f = struct.unpack_from(SB_FMT, raw, 0)
        for name, v in zip(SB_FIELDS, f):
            setattr(self, name, v)
        off = struct.calcsize(SB_FMT)
        self.sect = [list(struct.unpack_from(SECT_FMT, raw, off + i * 96))
                     for i in range(8)]
        self.reserved = raw[off + 8 * 96:SB_SIZE]
        # Records are written back where format put them, whatever the
        # mutated superblock then says.
        self.home = [tuple(s[:2]) for s in self.sect]
        self.bs = 1 << self.log_bs
        self.dsize = DIGEST[self.alg]
        self.orig = bytes(raw)
        assert len(raw) <= slot
        self.buf = bytearray(raw) + bytearray(slot - len(raw))
        self.ext = [list(struct.unpack_from(EXT_FMT, self.sect_bytes(EXTENTS),
                                            i * 32))
                    for i in range(self.sect[EXTENTS][2])]
        tsz = 24 + self.dsize
        tb = self.sect_bytes(TREES)
        self.trees = [list(struct.unpack_from('<QQQ', tb, i * tsz)) +
                      [tb[i * tsz + 24:(i + 1) * tsz]]
                      for i in range(self.sect[TREES][2])]
        ib = self.sect_bytes(INODES) if self.compat & INODE_INDEX else b''
        self.inodes = [list(struct.unpack_from(INODE_FMT, ib, i * 16))
                       for i in range(len(ib) and self.sect[INODES][2])]
        # What the case changes outside the area itself.
        self.encode_records = True
        self.fix_digest = [True] * 8
        # The top digests follow the TOPS section the superblock names,
        # so that a case that moves a top tests what it says.
        self.fix_top_digests = True
        self.len_follows = False	# table length from data_blocks
        self.hostile_root = False	# a root that is not the superblock's
        self.table_alg = 'sha256'	# the table line's algorithm
        self.hstart = 0			# bytes into the slot the area starts at
        self.room = None		# blocks from the area to the disk's end

    def sect_bytes(self, sid):
        s = self.sect[sid]
        return self.orig[s[0] * self.bs:(s[0] + s[1]) * self.bs]

    def copy_in(self, dst, src, n):
        """Put n bytes of the original area at src at byte dst."""
        self.buf[dst:dst + n] = self.orig[src:src + n]

    def put_top_digests(self, buf):
        """The salted digest of each TOPS block, where format put the
        section, and their count; none (an empty section) for no TOPS.
        Left as they are when the TOPS section does not fit the area."""
        t, d = self.sect[TOPS], self.sect[TOP_DIGESTS]
        o, room = self.home[TOP_DIGESTS][0] * self.bs, \
            self.home[TOP_DIGESTS][1] * self.bs
        if t[1] * self.dsize > room or (t[0] + t[1]) * self.bs > len(buf):
            return
        alg = HASHES[self.alg]
        salt = self.salt[:self.salt_size]
        if salt:
            salt = salt.ljust(alg().block_size, b'\0')
        dg = b''.join(alg(salt + bytes(buf[b * self.bs:(b + 1) * self.bs])).digest()
                      for b in range(t[0], t[0] + t[1]))
        buf[o:o + room] = dg + bytes(room - len(dg))
        d[2] = t[1]
        if not t[1]:
            d[0:2], d[5] = [0, 0], bytes(64)

    def encode(self):
        """The area's bytes (slot long) and its superblock."""
        buf = self.buf
        bs = 1 << self.log_bs if 10 <= self.log_bs <= 12 else self.bs
        if self.fix_top_digests and self.compat & TOP_DIGESTS_FLAG and \
                DIGEST.get(self.alg) == self.dsize and bs == self.bs:
            self.put_top_digests(buf)
        if self.encode_records:
            recs = {EXTENTS: b''.join(struct.pack(EXT_FMT, e[0] & U64, e[1] & U64,
                                                  e[2] & U32, e[3] & U32, e[4] & U64)
                                      for e in self.ext),
                    TREES: b''.join(struct.pack('<QQQ', *(v & U64 for v in t[:3])) +
                                    t[3] for t in self.trees)}
            if self.inodes:
                recs[INODES] = b''.join(
                    struct.pack(INODE_FMT, i[0] & U64, i[1] & U32, i[2] & U32)
                    for i in self.inodes)
            for sid, data in recs.items():
                o = self.home[sid][0] * self.bs
                n = self.home[sid][1] * self.bs
                assert len(data) <= n, 'records do not fit their section'
                buf[o:o + n] = data + bytes(n - len(data))
        alg = HASHES.get(self.alg, hashlib.sha256)
        for sid in DIGESTED:
            s = self.sect[sid]
            o, n = s[0] * bs, s[1] * bs
            if self.fix_digest[sid] and s[1] and o + n <= len(buf):
                d = alg(bytes(buf[o:o + n])).digest()
                s[5] = d + bytes(64 - len(d))
        sb = struct.pack(SB_FMT, *(getattr(self, n) for n in SB_FIELDS))
        for s in self.sect:
            sb += struct.pack(SECT_FMT, s[0] & U64, s[1] & U64, s[2] & U64,
                              s[3] & U32, s[4] & U32, s[5])
        sb += self.reserved
        assert len(sb) == SB_SIZE
        buf[0:SB_SIZE] = sb
        return buf, sb


def shape(log_bs, dsize, data_size):
    """A tree's shape (docs/format.md "Tree geometry"): (data blocks,
    levels, top_len, lower blocks).  Used to find records and to move hash
    blocks, never to decide an outcome; only for the image's own trees."""
    bs = 1 << log_bs
    n = (data_size + bs - 1) >> log_bs
    if n <= 1:
        return n, 0, 0, 0
    counts = []
    b = n
    while b > 1:
        b = (b + bs // dsize - 1) // (bs // dsize)
        counts.append(b)
    top_len = (n if len(counts) == 1 else counts[-2]) * dsize
    return n, len(counts), top_len, sum(counts[:-1])


# ------------------------------------------------------ expected outcomes
# The kernel's words: ti->error (docs/table.md "Errors at table load"),
# logged by device-mapper as "<dev>: extverity: <error>", and the reason
# dm-extverity logs for an authenticated but malformed manifest.
BAD_MAGIC = 'not an extverity hash area (bad magic)'
VERSION = 'unsupported format version or incompatible feature'
UNKNOWN_ALG = 'unknown hash algorithm in superblock'
BLOCK_SIZE = 'unsupported block size'
SALT = 'salt too long'
DATA_RANGE = 'data block count out of range'
HASH_RANGE = 'hash block count out of range'
RECORD_SIZE = 'section has the wrong record size'
EMPTY_LOC = 'empty section has a location or entries'
OUTSIDE = 'section lies outside the hash area or overlaps another'
LENGTH = 'section length does not match its record count'
HASH_COUNT = 'hash block section has a record count'
EXTENT_COUNT = 'extent count out of range'
TREE_COUNT = 'tree count out of range'
TOO_LARGE = 'tree too large'
AT_MOST_ONE = 'tree of at most one block has hash blocks'
TOP_OUT = 'top hash block outside the TOPS section or misaligned'
ONE_LEVEL = 'one-level tree has lower hash blocks'
LEVELS_OUT = 'hash blocks outside the LEVELS section'
TOPS_ORDER = "trees' top hash blocks overlap or are out of order"
LEVELS_ORDER = "trees' hash blocks overlap or are out of order"
UNSORTED = 'extent map is not sorted and contiguous'
PAST_DEVICE = 'extent is empty or runs past the data device'
ZERO_LEAF = 'zero range has a leaf index'
NO_TREE = 'extent names a tree that does not exist'
PAST_TREE = 'extent runs past the end of its tree'
INODE_ORDER = 'inode index is not sorted, or repeats an inode'
INODE_TREE = "inode index names a tree that is not a file's"
INODE_RESERVED = 'inode index entry has reserved bits set'


def ok(*log):
    """Loads, and reads back as the image; the kernel logs nothing but one
    line for each regex of @log."""
    return 'V', list(log)


# A TOPS block that fails its top digest, logged once per cached block.
TOP_DIGEST_MISMATCH = r'extverity: \S+: hash block %d: top digest ' \
    r'mismatch, checking each top in it$'


def ti(error):
    return 'R', [r'extverity: ' + re.escape(error)]


def sb(why):
    return 'R', ti('Invalid superblock')[1] + \
        [r'extverity: \S+: invalid superblock: %s$' % re.escape(why)]


def tree(i, why):
    return 'R', ti('Invalid tree table')[1] + \
        [r'extverity: \S+: tree %d: %s$' % (i, re.escape(why))]


def ext(i, why):
    return 'R', ti('Invalid extent map')[1] + \
        [r'extverity: \S+: extent %d: %s$' % (i, re.escape(why))]


def inode(i, why):
    return 'R', ti('Invalid inode index')[1] + \
        [r'extverity: \S+: inode entry %d: %s$' % (i, re.escape(why))]


def ext_end(end, n):
    return 'R', ti('Invalid extent map')[1] + \
        [r'extverity: (\S+: )?extent map ends at block %d, not %d$' % (end, n)]


# -------------------------------------------------------------- mutators

def set_sb(field, v):
    return lambda x: setattr(x, field, v)


def set_sect(sid, field, v):
    def f(x):
        x.sect[sid][SECT_FIELD[field]] = v
    return f


def set_tree(t, field, v):
    def f(x):
        x.trees[t][TREE_FIELD[field]] = v
    return f


def set_ext(e, field, v):
    def f(x):
        x.ext[e][EXT_FIELD[field]] = v
    return f


def set_inode(i, field, v):
    def f(x):
        x.inodes[i][INODE_FIELD[field]] = v
    return f


def both(*fs):
    def f(x):
        for g in fs:
            g(x)
    return f


class Layout:
    """The image's records the table names, found by role; every property
    the expectations rely on is asserted here."""

    def __init__(self, a):
        self.a = a
        B, D = a.bs, a.dsize
        self.N, self.H = a.data_blocks, a.hash_blocks
        self.ne, self.nt = len(a.ext), len(a.trees)
        self.shape = [shape(a.log_bs, D, t[0]) for t in a.trees]
        s = a.sect
        # Sections packed in order, one block each but LEVELS; the inode
        # index (one block, room for two more entries) then the top
        # digests (one block, the one TOPS block's) end the area.
        assert a.compat == INODE_INDEX | TOP_DIGESTS_FLAG, \
            'the area has no inode index or no top digests'
        nxt = 1
        for sid in (*range(6), TOP_DIGESTS):
            assert s[sid][0] == nxt and s[sid][1] >= 1, 'sections not packed'
            nxt += s[sid][1]
        assert nxt == self.H, 'TOP_DIGESTS does not end the area'
        assert [s[i][1] for i in (0, 1, 2, 3, 5, 7)] == [1] * 6
        assert s[TOP_DIGESTS][2] == 1
        assert s[EXTENTS][2] * 32 <= B and s[TREES][2] * (24 + D) <= B
        self.ni = len(a.inodes)
        assert self.ni >= 4 and (self.ni + 2) * 16 <= B
        # The index names the trees of files, each once, in inode order.
        assert all(0 < i[1] < self.nt and not i[2] for i in a.inodes)
        assert all(p[0] < q[0] for p, q in zip(a.inodes, a.inodes[1:]))
        self.tops_s, self.tops_e = s[TOPS][0] * B, (s[TOPS][0] + 1) * B
        self.lv_s, self.lv_e = s[LEVELS][0], s[LEVELS][0] + s[LEVELS][1]
        # Trees with hash blocks, in record order; their tops packed in
        # that order from the start of TOPS.
        self.hashed = [i for i, g in enumerate(self.shape) if g[1]]
        pos = self.tops_s
        for i in self.hashed:
            assert a.trees[i][1] == pos, 'tops not packed in record order'
            pos += self.shape[i][2]
        self.tops_used = pos
        # R: the residual tree, one level.  L1, L2: the two two-level
        # trees, their lower levels filling LEVELS in order.
        self.R = 0
        assert self.shape[0][1] == 1 and self.hashed[0] == 0
        two = [i for i in self.hashed if self.shape[i][1] == 2]
        assert len(two) == 2 and len(self.hashed) == len(two) + \
            len([i for i in self.hashed if self.shape[i][1] == 1])
        self.L1, self.L2 = two
        assert a.trees[self.L1][2] == self.lv_s
        assert a.trees[self.L2][2] == self.lv_s + self.lower(self.L1)
        assert a.trees[self.L2][2] + self.lower(self.L2) == self.lv_e
        # LAST, PREV: the last two trees with hash blocks; room after the
        # packed tops for both again.
        self.PREV, self.LAST = self.hashed[-2:]
        assert self.LAST == self.L2
        assert self.tops_e - self.tops_used >= \
            self.top_len(self.PREV) + self.top_len(self.LAST) + D
        # O1, O2: two one-level trees, adjacent in the tops, same top size.
        self.O1, self.O2 = next(
            (p, q) for p, q in zip(self.hashed, self.hashed[1:])
            if p != self.R and self.shape[p][1] == self.shape[q][1] == 1 and
            self.top_len(p) == self.top_len(q))
        # M: a one-level tree of 3+ blocks, S: a one-block tree, EMPTY: an
        # empty file's tree; each with one extent (but EMPTY: none).
        self.M = next(i for i in self.hashed if self.shape[i][1] == 1 and
                      i != self.R and self.shape[i][0] >= 3 and
                      len(self.exts(i)) == 1)
        self.S = next(i for i, g in enumerate(self.shape)
                      if g[0] == 1 and len(self.exts(i)) == 1)
        self.EMPTY = next(i for i, t in enumerate(a.trees) if t[0] == 0)
        for t in (self.M, self.S, self.O2):
            e = a.ext[self.exts(t)[0]]
            assert e[1] == 0 and e[2] == self.shape[t][0], 'not one whole extent'
        # Extents: FIRST (residual), FILE (L1's first, 2+ blocks, with room
        # in its tree for one more), ONE (O2's only one), LAST (a zero
        # range, the map's end), LEAF (a file extent with a leaf > 0).
        self.E_FIRST = 0
        self.E_FILE = self.exts(self.L1)[0]
        self.E_ONE = self.exts(self.O2)[0]
        self.E_LAST = self.ne - 1
        self.E_LEAF = next(i for i, e in enumerate(a.ext)
                           if e[3] not in (0, TREE_ZERO) and e[1] > 0)
        first, fil = a.ext[self.E_FIRST], a.ext[self.E_FILE]
        assert first[3] == 0 and first[2] + 1 <= self.shape[0][0]
        assert fil[2] >= 2 and fil[1] + fil[2] + 1 <= self.shape[self.L1][0]
        assert a.ext[self.E_LAST][3] == TREE_ZERO
        assert 0 < self.E_FILE and self.E_ONE + 1 < self.E_LAST
        assert self.E_FIRST + 1 < self.ne and self.E_FILE + 1 < self.E_LAST

    def exts(self, t):
        return [i for i, e in enumerate(self.a.ext) if e[3] == t]

    def top_len(self, t):
        return self.shape[t][2]

    def lower(self, t):
        return self.shape[t][3]

    def move_top(self, t, new):
        """Put tree t's top at byte new, its bytes with it."""
        def f(x):
            x.copy_in(new, self.a.trees[t][1], self.top_len(t))
            x.trees[t][1] = new
        return f

    def move_levels(self, t, new):
        """Put tree t's lower levels at block new, their blocks with them."""
        B = self.a.bs

        def f(x):
            x.copy_in(new * B, self.a.trees[t][2] * B, self.lower(t) * B)
            x.trees[t][2] = new
        return f

    def grow(self, sid, k):
        """Section sid k blocks longer; the sections after it, their blocks
        and the trees' levels pointing there move k blocks on."""
        a, B = self.a, self.a.bs

        def f(x):
            end = a.sect[sid][0] + a.sect[sid][1]
            x.sect[sid][1] += k
            for j in range(sid + 1, 8):
                if not a.sect[j][1]:
                    continue
                x.sect[j][0] += k
                x.home[j] = (x.home[j][0] + k, x.home[j][1])
            x.hash_blocks += k
            x.copy_in((end + k) * B, end * B, (self.H - end) * B)
            for t in range(self.nt):
                if a.trees[t][2] >= end:
                    x.trees[t][2] = a.trees[t][2] + k
        return f


# ---------------------------------------------------------- the case table

def cases(a):
    """Yield (FIELD, BOUND, mutate, expectation), written by hand."""
    lay = Layout(a)
    B, D, N, H = a.bs, a.dsize, lay.N, lay.H
    ne, nt = lay.ne, lay.nt
    R, L1, L2, O1, O2, M, S = lay.R, lay.L1, lay.L2, lay.O1, lay.O2, lay.M, lay.S
    PREV, LAST = lay.PREV, lay.LAST
    tops_s, tops_e, lv_s, lv_e = lay.tops_s, lay.tops_e, lay.lv_s, lay.lv_e
    top = [t[1] for t in a.trees]
    lvl = [t[2] for t in a.trees]
    blocks = [g[0] for g in lay.shape]
    E = a.ext

    # --- Valid variants: each must load and read back as the image.
    yield 'none', 're-encoded', lambda x: None, ok()
    # Unknown compat bits are ignored; the known bits say the index, the
    # top digests (and the FEC record, which this area has not) are there:
    # clear, slot 5 or 7 is ignored as by a reader older than it.  FEC's
    # bit without its section is refused: the slot of an area without FEC
    # is all zeros, record size included.
    yield 'sb.compat_flags', 'all-unknown-bits-added', \
        set_sb('compat', U32 & ~FEC_FLAG), ok()
    yield 'sb.compat_flags', 'unknown-bits-only', \
        set_sb('compat', U32 & ~INODE_INDEX & ~FEC_FLAG & ~TOP_DIGESTS_FLAG), ok()
    yield 'sb.compat_flags', 'fec-without-its-section', \
        set_sb('compat', INODE_INDEX | FEC_FLAG | TOP_DIGESTS_FLAG), \
        sb('section has the wrong record size')
    yield 'sb.compat_flags', 'inode-index-clear', \
        set_sb('compat', TOP_DIGESTS_FLAG), ok()
    yield 'sb.compat_flags', 'top-digests-clear', set_sb('compat', INODE_INDEX), ok()
    yield 'sb.compat_flags', 'all-clear', set_sb('compat', 0), ok()
    yield 'sb.sections[inodes]', 'garbage,flag-clear', \
        both(set_sb('compat', TOP_DIGESTS_FLAG),
             lambda x: x.sect.__setitem__(INODES, [7, 7, 7, 7, 7, b'\x07' * 64])), \
        ok()
    yield 'sb.uuid', 'other', set_sb('uuid', bytes(range(16))), ok()
    yield 'sb.sections[fec]', 'garbage,flag-clear', \
        lambda x: x.sect.__setitem__(6, [7, 7, 7, 7, 7, b'\x07' * 64]), ok()
    yield 'sb.sections[top_digests]', 'garbage,flag-clear', \
        both(set_sb('compat', INODE_INDEX),
             lambda x: x.sect.__setitem__(TOP_DIGESTS,
                                          [7, 7, 7, 7, 7, b'\x07' * 64])), ok()
    # A top digest that does not match its TOPS block: the kernel falls
    # back to each tree's own check, and the tops are intact.  Then the
    # last top moved (loads, as below) with the digest left as it was.
    def wrong_top_digest(x):
        x.fix_top_digests = False
        x.buf[a.sect[TOP_DIGESTS][0] * B] ^= 1
    top_block = a.sect[TOPS][0]
    yield 'top_digests[0]', 'wrong', wrong_top_digest, \
        ok(TOP_DIGEST_MISMATCH % top_block)
    yield 'top_digests[0]', 'stale,last-top-moved', \
        both(lambda x: setattr(x, 'fix_top_digests', False),
             lay.move_top(lay.LAST, lay.tops_e - lay.top_len(lay.LAST))), \
        ok(TOP_DIGEST_MISMATCH % top_block)
    # A TOPS block that matches its digest authenticates every top in it:
    # the kernel does not also hash each top against its tree's root
    # (docs/format.md "Top digests").  So a root that is not its tree's
    # top's, signed, loads and the file reads back; a kernel that ignored
    # the top digests would fail the file's reads.
    def root_not_its_tops(x):
        x.trees[lay.M][3] = bytes([x.trees[lay.M][3][0] ^ 1]) + \
            x.trees[lay.M][3][1:]
    yield 'trees[one-level].root', 'not-its-top(top-digest-matches)', \
        root_not_its_tops, ok()
    # A digest per TOPS block, no more, no fewer.
    for k, v in (('0', 0), ('tops+1', a.sect[TOPS][1] + 1)):
        yield 'sb.sections[top_digests].nr_entries', k, \
            both(lambda x: setattr(x, 'fix_top_digests', False),
                 set_sect(TOP_DIGESTS, 'nr_entries', v)), \
            sb('section length does not match its record count' if not v else
               'top digest count does not match the TOPS section')

    def split(x):
        e = x.ext[lay.E_FILE]
        h = e[2] // 2
        x.ext[lay.E_FILE:lay.E_FILE + 1] = [[e[0], e[1], h, e[3], e[4]],
                                            [e[0] + h, e[1] + h, e[2] - h, e[3], e[4]]]
        x.sect[EXTENTS][2] += 1
    yield 'extents[file]', 'split-in-two', split, ok()

    # --- Superblock fields (docs/format.md "Superblock").
    for m in (b'EXTVRITX', b'\0' * 8, b'extvrity'):
        yield 'sb.magic', m.hex(), set_sb('magic', m), sb(BAD_MAGIC)
    for v in (0, 2, 3, 0x100, 0x80000000, U32):
        yield 'sb.version', '%#x' % v, set_sb('version', v), sb(VERSION)
    for b in range(32):
        yield 'sb.incompat_flags', 'bit%d' % b, set_sb('incompat', 1 << b), \
            sb(VERSION)
    for v in (0, 3, 0x7f, 0xff):
        yield 'sb.hash_algorithm', str(v), set_sb('alg', v), sb(UNKNOWN_ALG)
    # sha512 is known, but then a tree record is 24 + 64 bytes: the TREES
    # section's record size (24 + 32) is wrong.
    yield 'sb.hash_algorithm', '2-sha512', set_sb('alg', 2), sb(RECORD_SIZE)
    for v in (0, 9, 13, 16, 63, 255):
        yield 'sb.log_blocksize', str(v), set_sb('log_bs', v), sb(BLOCK_SIZE)
    # 10 and 11 are valid block sizes; the table's length is the image's
    # in 4096-byte blocks.
    for v in (10, 11):
        yield 'sb.log_blocksize', str(v), set_sb('log_bs', v), \
            ti('Target length does not match the image size')
    assert a.salt_size == 32, 'the table assumes a 32-byte salt (the limit)'
    for v in (33, 64, 128, 255):
        yield 'sb.salt_size', str(v), set_sb('salt_size', v), sb(SALT)

    def data_blocks(v, follow):
        def f(x):
            x.data_blocks = v
            x.len_follows = follow
        return f
    # No table length change: refused by the superblock check, or (a valid
    # count) by the length.
    for v in (0, (1 << 48) + 1, 1 << 63, U64):
        yield 'sb.data_blocks', '%#x' % v, data_blocks(v, False), sb(DATA_RANGE)
    yield 'sb.data_blocks', 'N+1', data_blocks(N + 1, False), \
        ti('Target length does not match the image size')
    yield 'sb.data_blocks', 'N-1', data_blocks(N - 1, False), \
        ti('Target length does not match the image size')
    # The table's length follows data_blocks.
    yield 'sb.data_blocks', 'max(2^48),len', data_blocks(1 << 48, True), \
        ti('Data device is smaller than the image')
    yield 'sb.data_blocks', 'max+1,len', data_blocks((1 << 48) + 1, True), \
        sb(DATA_RANGE)
    yield 'sb.data_blocks', 'N+1,len', data_blocks(N + 1, True), \
        ti('Data device is smaller than the image')
    yield 'sb.data_blocks', 'N-1,len', data_blocks(N - 1, True), \
        ext(lay.E_LAST, PAST_DEVICE)
    # Extent count <= data_blocks: at the bound the count check passes and
    # the first extent reaching past block ne is refused.
    cut = next(i for i, e in enumerate(E) if e[0] + e[2] > ne)
    yield 'sb.data_blocks', 'extents(%d),len' % ne, data_blocks(ne, True), \
        ext(cut, PAST_DEVICE)
    yield 'sb.data_blocks', 'extents-1,len', data_blocks(ne - 1, True), \
        sb(EXTENT_COUNT)
    yield 'sb.data_blocks', '1,len', data_blocks(1, True), sb(EXTENT_COUNT)

    for v in (0, 1, (1 << 48) + 1, 1 << 63, U64):
        yield 'sb.hash_blocks', '%#x' % v, set_sb('hash_blocks', v), sb(HASH_RANGE)
    # 2 is in range, but TREES at block 2 no longer fits.
    yield 'sb.hash_blocks', '2', set_sb('hash_blocks', 2), sb(OUTSIDE)
    yield 'sb.hash_blocks', 'H-1', set_sb('hash_blocks', H - 1), sb(OUTSIDE)
    for v in (1 << 32, 1 << 48):
        yield 'sb.hash_blocks', '%#x' % v, set_sb('hash_blocks', v), \
            ti('Hash device is smaller than the hash area')

    def room(k):
        def f(x):
            x.hash_blocks = x.room + k
        return f
    # Up to the end of the areas disk: every block there can be addressed.
    yield 'sb.hash_blocks', 'device-end', room(0), ok()
    yield 'sb.hash_blocks', 'device-end+1', room(1), \
        ti('Hash device is smaller than the hash area')

    # --- Sections (docs/format.md "Layout"): packed, each one block but
    # LEVELS; TOP_DIGESTS ends the area, after INODES (no FEC).
    for sid in (*range(6), TOP_DIGESTS):
        nm = 'sb.sections[%s].' % SECT_NAMES[sid]
        s = a.sect[sid]
        for v in sorted({s[3] + 1, 1, U32, 32, 24 + D} - {s[3]}):
            yield nm + 'entry_size', '%#x' % v, set_sect(sid, 'entry_size', v), \
                sb(RECORD_SIZE)
        starts = {'0': 0, 'H': H, 'H+1': H + 1, '2^64-1': U64, '2^63': 1 << 63,
                  'end-wraps-to-0': U64 - s[1] + 1}
        if sid:
            p = a.sect[INODES if sid == TOP_DIGESTS else sid - 1]
            starts['prev.start'] = p[0]
            if p[1] > 1:
                starts['prev.end-1'] = p[0] + p[1] - 1
        for k, v in starts.items():
            yield nm + 'start', k, set_sect(sid, 'start', v), sb(OUTSIDE)
        yield nm + 'nr_blocks', '0', set_sect(sid, 'nr_blocks', 0), sb(EMPTY_LOC)
        nbs = {'H': H, '2^64-1': U64, '2^63': 1 << 63}
        if s[0] > 1:	# (for start 1 it is 2^64: 0)
            nbs['end-wraps-to-1'] = U64 - s[0] + 2
        if H - s[0] != s[1]:
            nbs['to-H+1'] = H - s[0] + 1
        for k, v in nbs.items():
            yield nm + 'nr_blocks', k, set_sect(sid, 'nr_blocks', v), sb(OUTSIDE)
        # One block more: too long for EXTENTS', TREES' and INODES'
        # records, onto the next section for FILES, TOPS and LEVELS
        # (reported for that one, with the same words), past the area for
        # TOP_DIGESTS.
        yield nm + 'nr_blocks', '+1', set_sect(sid, 'nr_blocks', s[1] + 1), \
            sb(LENGTH if sid in (EXTENTS, TREES, INODES) else OUTSIDE)
    # Records: EXTENTS holds ne, and room for B/32 in its one block; the
    # records past ne read as zeros (an extent at 0: out of order).
    per = B // 32
    for k, v, want in (('0', 0, sb(LENGTH)), ('+1', ne + 1, ext(ne, UNSORTED)),
                       ('fills-block(%d)' % per, per, ext(ne, UNSORTED)),
                       ('fills-block+1', per + 1, sb(LENGTH)),
                       ('2^32', 1 << 32, sb(LENGTH)), ('2^63', 1 << 63, sb(LENGTH)),
                       ('2^64-1', U64, sb(LENGTH))):
        yield 'sb.sections[extents].nr_entries', k, \
            set_sect(EXTENTS, 'nr_entries', v), want
    # TREES: zero records past nt read as empty files' trees: harmless.
    per = B // (24 + D)
    for k, v, want in (('0', 0, sb(LENGTH)), ('+1', nt + 1, ok()),
                       ('fills-block(%d)' % per, per, ok()),
                       ('fills-block+1', per + 1, sb(LENGTH)),
                       ('2^32', 1 << 32, sb(LENGTH)), ('2^63', 1 << 63, sb(LENGTH)),
                       ('2^64-1', U64, sb(LENGTH))):
        yield 'sb.sections[trees].nr_entries', k, \
            set_sect(TREES, 'nr_entries', v), want
    # FILES is for the tools only: the kernel reads neither its records nor
    # its bytes (docs/format.md "File list").
    yield 'sb.sections[files].nr_entries', '2^64-1', \
        set_sect(FILES, 'nr_entries', U64), ok()
    yield 'sb.sections[files].digest', 'stale', \
        both(lambda x: x.fix_digest.__setitem__(FILES, False),
             lambda x: x.sect[FILES].__setitem__(5, bytes(64))), ok()
    for sid in (TOPS, LEVELS):
        for k, v in (('1', 1), ('2^64-1', U64)):
            yield 'sb.sections[%s].nr_entries' % SECT_NAMES[sid], k, \
                set_sect(sid, 'nr_entries', v), sb(HASH_COUNT)

    def empty(sid, start=0, entries=0):
        def f(x):
            x.sect[sid][0:3] = [start, 0, entries]
            x.encode_records = False
        return f
    yield 'sb.sections[files]', 'empty', empty(FILES), ok()
    yield 'sb.sections[files]', 'empty-with-start', empty(FILES, start=a.sect[FILES][0]), \
        sb(EMPTY_LOC)
    yield 'sb.sections[files]', 'empty-with-entries', \
        empty(FILES, entries=a.sect[FILES][2]), sb(EMPTY_LOC)
    yield 'sb.sections[extents]', 'empty', empty(EXTENTS), sb(EXTENT_COUNT)
    yield 'sb.sections[trees]', 'empty', empty(TREES), sb(TREE_COUNT)
    yield 'sb.sections[tops]', 'empty', empty(TOPS), tree(R, TOP_OUT)
    yield 'sb.sections[levels]', 'empty', empty(LEVELS), tree(L1, LEVELS_OUT)

    def swap_sections(i, j):
        def f(x):
            x.sect[i][0:2], x.sect[j][0:2] = x.sect[j][0:2], x.sect[i][0:2]
            x.encode_records = False
        return f
    # The later section comes first: the earlier one then overlaps it.
    yield 'sb.sections[extents,trees]', 'swapped', swap_sections(EXTENTS, TREES), \
        sb(OUTSIDE)
    yield 'sb.sections[tops,levels]', 'swapped', swap_sections(TOPS, LEVELS), \
        sb(OUTSIDE)

    # --- Authentication (docs/format.md "Authentication").
    def stale(sid):
        def f(x):
            x.fix_digest[sid] = False
            if sid == TREES:
                x.trees[0][0] ^= 1
            elif sid == INODES:
                x.inodes[0][0] ^= 1
            else:
                x.ext[0][4] ^= 1
        return f
    yield 'sb.sections[trees].digest', 'stale', stale(TREES), \
        ti('Tree table digest mismatch')
    yield 'sb.sections[inodes].digest', 'stale', stale(INODES), \
        ti('Inode index digest mismatch')
    yield 'sb.sections[extents].digest', 'stale', stale(EXTENTS), \
        ti('Extent map digest mismatch')

    def stale_top_digests(x):
        x.fix_digest[TOP_DIGESTS] = False
        x.fix_top_digests = False
        x.buf[a.sect[TOP_DIGESTS][0] * B] ^= 1
    yield 'sb.sections[top_digests].digest', 'stale', stale_top_digests, \
        ti('Top digests digest mismatch')
    yield 'table.root', 'not-the-superblocks', \
        lambda x: setattr(x, 'hostile_root', True), \
        ti('Superblock does not match the root digest')

    # --- The table line against the superblock (docs/table.md).
    yield 'table.alg', 'sha512-over-a-sha256-area', \
        lambda x: setattr(x, 'table_alg', 'sha512'), \
        ti('Hash algorithm does not match the superblock')
    for k in (512, B - 512, B + 512):
        yield 'table.hash_start', '+%d-bytes' % k, \
            lambda x, k=k: setattr(x, 'hstart', k), \
            ti('Hash start is not a multiple of the block size')
    yield 'table.hash_start', '+%d-bytes(one-block)' % B, \
        lambda x: setattr(x, 'hstart', B), ok()

    # --- Tree records (docs/format.md "Tree table", "Storage and packing").
    TMAX = 1 << (32 + a.log_bs)		# data_size of 2^32 blocks
    for t, nm in ((R, 'residual'), (L1, 'two-level')):
        for k, v in (('2^64-1', U64), ('2^63', 1 << 63),
                     ('2^32-blocks+1', TMAX + 1)):
            yield 'trees[%s].data_size' % nm, k, set_tree(t, 'data_size', v), \
                tree(t, TOO_LARGE)
        # One block: no hash blocks allowed, yet it has some.
        yield 'trees[%s].data_size' % nm, '1', set_tree(t, 'data_size', 1), \
            tree(t, AT_MOST_ONE)
    # 2^32 blocks: the size limit itself; such a tree has lower levels,
    # which the residual tree has not.
    yield 'trees[residual].data_size', '2^32-blocks', \
        set_tree(R, 'data_size', TMAX), tree(R, LEVELS_OUT)
    # Block count bounds: data_size down to one byte past its last full
    # block keeps the tree's blocks (loads, reads back); a block less and
    # the extent holding its last leaf runs past the tree.
    for t, nm in ((M, 'one-level'), (L1, 'two-level')):
        last = next(i for i, e in enumerate(E)
                    if e[3] == t and e[1] + e[2] == blocks[t])
        yield 'trees[%s].data_size' % nm, 'blocks-1+1byte', \
            set_tree(t, 'data_size', (blocks[t] - 1) * B + 1), ok()
        yield 'trees[%s].data_size' % nm, 'blocks-1', \
            set_tree(t, 'data_size', (blocks[t] - 1) * B), ext(last, PAST_TREE)
    # A one-level tree grown past B/D blocks needs lower levels.
    yield 'trees[one-level].data_size', 'B/D+1-blocks', \
        set_tree(M, 'data_size', (B // D) * B + 1), tree(M, LEVELS_OUT)
    # A one-block tree: a whole block still has no hash blocks; one byte
    # more needs a top it has not got; an empty tree has no leaf to map.
    yield 'trees[one-block].data_size', 'B', set_tree(S, 'data_size', B), ok()
    yield 'trees[one-block].data_size', 'B+1', set_tree(S, 'data_size', B + 1), \
        tree(S, TOP_OUT)
    yield 'trees[one-block].data_size', '0', set_tree(S, 'data_size', 0), \
        ext(lay.exts(S)[0], PAST_TREE)
    for t, nm in ((S, 'one-block'), (lay.EMPTY, 'empty')):
        yield 'trees[%s].top' % nm, 'tops.start', set_tree(t, 'top', tops_s), \
            tree(t, AT_MOST_ONE)
        yield 'trees[%s].levels' % nm, 'levels.start', set_tree(t, 'levels', lv_s), \
            tree(t, AT_MOST_ONE)
    yield 'trees[residual].levels', 'levels.start', set_tree(R, 'levels', lv_s), \
        tree(R, ONE_LEVEL)
    yield 'trees[one-level].levels', 'levels.start', set_tree(M, 'levels', lv_s), \
        tree(M, ONE_LEVEL)
    # Top outside TOPS, across its end, not a multiple of D.
    for t, nm in ((R, 'residual'), (L1, 'two-level')):
        for k, v in (('0', 0), ('tops.start-D', tops_s - D), ('tops.end', tops_e),
                     ('tops.end-D', tops_e - D), ('+1', top[t] + 1),
                     ('+D/2', top[t] + D // 2), ('2^63', 1 << 63),
                     ('2^64-D+1', U64 - D + 1)):
            yield 'trees[%s].top' % nm, k, set_tree(t, 'top', v), tree(t, TOP_OUT)
    # Lower levels outside LEVELS, across its end.
    for k, v in (('0', 0), ('levels.start-1', lv_s - 1), ('levels.end', lv_e),
                 ('levels.end-lower+1', lv_e - lay.lower(L1) + 1),
                 ('2^63', 1 << 63), ('2^64-1', U64)):
        yield 'trees[two-level].levels', k, set_tree(L1, 'levels', v), \
            tree(L1, LEVELS_OUT)

    # --- Trees' hash blocks: in record order, disjoint (TOPS and LEVELS).
    # The tops are packed in record order: each starts where the one
    # before ends (the bound); every refused case below is refused at the
    # tree that comes second.
    yield 'trees[next].top', 'prev.top(shared)', set_tree(O2, 'top', top[O1]), \
        tree(O2, TOPS_ORDER)
    yield 'trees[next].top', 'prev.end-D', set_tree(O2, 'top', top[O2] - D), \
        tree(O2, TOPS_ORDER)
    yield 'trees[after-residual].top', 'residual.end-D', \
        set_tree(lay.hashed[1], 'top', top[lay.hashed[1]] - D), \
        tree(lay.hashed[1], TOPS_ORDER)
    yield 'trees[two-level].top', 'tops.start(the-residuals)', \
        set_tree(L1, 'top', tops_s), tree(L1, TOPS_ORDER)
    # Disjoint but out of order: both tops swapped, bytes too (what each
    # tree reads is right); the format wants record order.
    yield 'trees[prev,next].top', 'swapped', \
        both(lay.move_top(O1, top[O2]), lay.move_top(O2, top[O1])), \
        tree(O2, TOPS_ORDER)
    # The last two tops moved to the end of TOPS: PREV after a gap, LAST
    # starting exactly at PREV's end and ending at the block's end (loads);
    # PREV one digest later overlaps LAST.
    end_last = tops_e - lay.top_len(LAST)
    yield 'trees[last].top', 'tops.end-top_len(gap-before)', \
        lay.move_top(LAST, end_last), ok()
    yield 'trees[last].top', 'tops.end-top_len+D', \
        lay.move_top(LAST, end_last + D), tree(LAST, TOP_OUT)
    yield 'trees[prev,last].top', 'gap,then-just-disjoint', \
        both(lay.move_top(PREV, end_last - lay.top_len(PREV)),
             lay.move_top(LAST, end_last)), ok()
    yield 'trees[prev,last].top', 'gap,then-overlap-D', \
        both(lay.move_top(PREV, end_last - lay.top_len(PREV) + D),
             lay.move_top(LAST, end_last)), tree(LAST, TOPS_ORDER)
    # TOPS one block longer (LEVELS moved one block on): LAST's top at the
    # new block's start loads; across the block boundary it is refused.
    yield 'trees[last].top', 'tops2.block-start', \
        both(lay.grow(TOPS, 1), lay.move_top(LAST, tops_e)), ok()
    yield 'trees[last].top', 'tops2.block-start-D(across)', \
        both(lay.grow(TOPS, 1), lay.move_top(LAST, tops_e - D)), \
        tree(LAST, TOP_OUT)
    # LEVELS: L2's lower levels start where L1's end (the bound).
    yield 'trees[second].levels', 'first.levels(shared)', \
        set_tree(L2, 'levels', lvl[L1]), tree(L2, LEVELS_ORDER)
    yield 'trees[second].levels', 'first.end-1', \
        set_tree(L2, 'levels', lvl[L2] - 1), tree(L2, LEVELS_ORDER)
    yield 'trees[first].levels', 'second.levels', \
        set_tree(L1, 'levels', lvl[L2]), tree(L2, LEVELS_ORDER)
    yield 'trees[first,second].levels', 'swapped', \
        both(lay.move_levels(L1, lvl[L1] + lay.lower(L2)),
             lay.move_levels(L2, lvl[L1])), tree(L2, LEVELS_ORDER)
    # LEVELS two blocks longer: L1 after a gap, L2 just after L1 and
    # ending at the section's end (loads); L2 one block earlier overlaps
    # L1; one block later it runs past LEVELS.
    g = lay.grow(LEVELS, 2)
    l2_end = lv_e + 2 - lay.lower(L2)
    l1_gap = l2_end - lay.lower(L1)
    yield 'trees[first,second].levels', 'gap,then-just-disjoint', \
        both(g, lay.move_levels(L1, l1_gap), lay.move_levels(L2, l2_end)), ok()
    yield 'trees[first,second].levels', 'gap,then-overlap-1', \
        both(g, lay.move_levels(L1, l1_gap), lay.move_levels(L2, l2_end - 1)), \
        tree(L2, LEVELS_ORDER)
    yield 'trees[first,second].levels', 'gap,then-past-end+1', \
        both(g, lay.move_levels(L1, l1_gap), lay.move_levels(L2, l2_end + 1)), \
        tree(L2, LEVELS_OUT)

    def drop_trees(x):
        del x.trees[LAST:]
        x.sect[TREES][2] = LAST
    yield 'sb.sections[trees].nr_entries', 'drop-from-a-referenced-tree', \
        drop_trees, ext(next(i for i, e in enumerate(E)
                             if LAST <= e[3] != TREE_ZERO), NO_TREE)

    # --- Extents (docs/format.md "Extent map").
    for e, nm in ((lay.E_FIRST, 'first'), (lay.E_FILE, 'file'),
                  (lay.E_ONE, 'one-level'), (lay.E_LAST, 'last-zero')):
        r = E[e]
        starts = {'+1': r[0] + 1, '2^63': 1 << 63, '2^64-1': U64, 'N': N}
        if r[0]:
            starts.update({'-1': r[0] - 1, '0': 0})
        for k, v in starts.items():
            yield 'extents[%s].start' % nm, k, set_ext(e, 'start', v), \
                ext(e, UNSORTED)
        yield 'extents[%s].count' % nm, '0', set_ext(e, 'count', 0), \
            ext(e, PAST_DEVICE)
        for k, v in (('2^31', 1 << 31), ('2^32-1', U32)):
            yield 'extents[%s].count' % nm, k, set_ext(e, 'count', v), \
                ext(e, PAST_DEVICE)
        for k, v in (('trees', nt), ('trees+100', nt + 100),
                     ('2^31-1', 0x7fffffff), ('zero-1', TREE_ZERO - 1)):
            yield 'extents[%s].tree' % nm, k, set_ext(e, 'tree', v), \
                ext(e, NO_TREE)
    # count + 1: the next extent no longer starts where this one ends,
    # or (the tree's last leaf / the map's end) it runs past.
    yield 'extents[first].count', '+1', \
        set_ext(lay.E_FIRST, 'count', E[lay.E_FIRST][2] + 1), \
        ext(lay.E_FIRST + 1, UNSORTED)
    yield 'extents[file].count', '+1', \
        set_ext(lay.E_FILE, 'count', E[lay.E_FILE][2] + 1), \
        ext(lay.E_FILE + 1, UNSORTED)
    yield 'extents[one-level].count', 'tree-blocks+1', \
        set_ext(lay.E_ONE, 'count', E[lay.E_ONE][2] + 1), ext(lay.E_ONE, PAST_TREE)
    yield 'extents[last-zero].count', 'to-N+1', \
        set_ext(lay.E_LAST, 'count', E[lay.E_LAST][2] + 1), \
        ext(lay.E_LAST, PAST_DEVICE)
    for e, nm in ((lay.E_FIRST, 'first'), (lay.E_FILE, 'file'),
                  (lay.E_ONE, 'one-level')):
        yield 'extents[%s].count' % nm, '-1', \
            set_ext(e, 'count', E[e][2] - 1), ext(e + 1, UNSORTED)
    yield 'extents[last-zero].count', '-1', \
        set_ext(lay.E_LAST, 'count', E[lay.E_LAST][2] - 1), ext_end(N - 1, N)
    # Leaves: past the tree's end by one, at overflow values.
    for e, nm in ((lay.E_FIRST, 'first'), (lay.E_FILE, 'file'),
                  (lay.E_ONE, 'one-level')):
        r = E[e]
        tb = blocks[r[3]]
        for k, v in (('tree-end-count+1', tb - r[2] + 1), ('tree-end', tb),
                     ('2^63', 1 << 63), ('2^64-1', U64),
                     ('2^64-count+1', U64 - r[2] + 2)):
            if v != r[1]:
                yield 'extents[%s].leaf' % nm, k, set_ext(e, 'leaf', v), \
                    ext(e, PAST_TREE)
    # A tree that exists but is empty has no leaf for the extent.
    yield 'extents[first].tree', 'empty-tree', \
        set_ext(lay.E_FIRST, 'tree', lay.EMPTY), ext(lay.E_FIRST, PAST_TREE)
    # Zero ranges carry no leaf.
    for k, v in (('1', 1), ('2^63', 1 << 63), ('2^64-1', U64)):
        yield 'extents[last-zero].leaf', k, set_ext(lay.E_LAST, 'leaf', v), \
            ext(lay.E_LAST, ZERO_LEAF)
    yield 'extents[leaf>0].tree', 'zero-range', \
        set_ext(lay.E_LEAF, 'tree', TREE_ZERO), ext(lay.E_LEAF, ZERO_LEAF)

    # Records moved, lost, doubled.
    def swap(i):
        def f(x):
            x.ext[i], x.ext[i + 1] = x.ext[i + 1], x.ext[i]
        return f
    for i in (0, ne // 2, ne - 2):
        yield 'extents[%d,%d]' % (i, i + 1), 'swapped', swap(i), ext(i, UNSORTED)

    def delete(i):
        def f(x):
            del x.ext[i]
            x.sect[EXTENTS][2] -= 1
        return f
    for i in (0, ne // 2):
        yield 'extents[%d]' % i, 'deleted', delete(i), ext(i, UNSORTED)
    yield 'extents[last]', 'deleted', delete(ne - 1), \
        ext_end(E[ne - 1][0], N)

    def dup(i):
        def f(x):
            x.ext.insert(i, list(x.ext[i]))
            x.sect[EXTENTS][2] += 1
        return f
    for i in (0, ne // 2, ne - 1):
        yield 'extents[%d]' % i, 'duplicated', dup(i), ext(i + 1, UNSORTED)

    def append(x):
        x.ext.append([x.data_blocks, 0, 1, TREE_ZERO, 0])
        x.sect[EXTENTS][2] += 1
    yield 'extents[N]', 'appended-past-end', append, ext(ne, PAST_DEVICE)

    def insert0(x):
        x.ext.insert(1, [x.ext[1][0], 0, 0, TREE_ZERO, 0])
        x.sect[EXTENTS][2] += 1
    yield 'extents[1]', 'inserted-count-0', insert0, ext(1, PAST_DEVICE)
    yield 'extents', 'reversed', lambda x: x.ext.reverse(), ext(0, UNSORTED)

    def shift_all(x):
        for e in x.ext:
            e[0] += 1
    yield 'extents[*].start', '+1', shift_all, ext(0, UNSORTED)

    # --- Inode index (docs/format.md "Inode index"): ni entries, strictly
    # ascending inodes, each naming a file's tree (not 0, below nt).
    I = a.inodes
    ni, last = lay.ni, lay.ni - 1
    mid = ni // 2
    # Inode numbers: 0 never; each above the one before.
    yield 'inodes[0].inode', '0', set_inode(0, 'inode', 0), inode(0, INODE_ORDER)
    yield 'inodes[mid].inode', 'prev', set_inode(mid, 'inode', I[mid - 1][0]), \
        inode(mid, INODE_ORDER)
    yield 'inodes[mid].inode', 'prev-1', set_inode(mid, 'inode', I[mid - 1][0] - 1), \
        inode(mid, INODE_ORDER)
    yield 'inodes[mid].inode', 'next(so-next-repeats)', \
        set_inode(mid, 'inode', I[mid + 1][0]), inode(mid + 1, INODE_ORDER)
    yield 'inodes[mid].inode', 'prev+1', set_inode(mid, 'inode', I[mid - 1][0] + 1), \
        ok()
    yield 'inodes[last].inode', '2^64-1', set_inode(last, 'inode', U64), ok()
    yield 'inodes[0].inode', '1', set_inode(0, 'inode', 1), ok()

    def swap_inodes(i):
        def f(x):
            x.inodes[i], x.inodes[i + 1] = x.inodes[i + 1], x.inodes[i]
        return f
    for i in (0, mid, ni - 2):
        yield 'inodes[%d,%d]' % (i, i + 1), 'swapped', swap_inodes(i), \
            inode(i + 1, INODE_ORDER)
    yield 'inodes', 'reversed', lambda x: x.inodes.reverse(), inode(1, INODE_ORDER)

    def dup_inode(i):
        def f(x):
            x.inodes.insert(i, list(x.inodes[i]))
            x.sect[INODES][2] += 1
        return f
    for i in (0, mid, last):
        yield 'inodes[%d]' % i, 'duplicated', dup_inode(i), inode(i + 1, INODE_ORDER)

    def del_inode(i):
        def f(x):
            del x.inodes[i]
            x.sect[INODES][2] -= 1
        return f
    # A file missing from the index loads (measure: ENOENT for it).
    yield 'inodes[mid]', 'deleted', del_inode(mid), ok()
    # Trees: a file's, never the residual tree, never past the table.
    for k, v in (('0(residual)', 0), ('trees', nt), ('trees+100', nt + 100),
                 ('2^31', 1 << 31), ('zero(2^32-1)', TREE_ZERO)):
        yield 'inodes[mid].tree', k, set_inode(mid, 'tree', v), \
            inode(mid, INODE_TREE)
    yield 'inodes[0].tree', '0(residual)', set_inode(0, 'tree', 0), \
        inode(0, INODE_TREE)
    yield 'inodes[last].tree', 'trees', set_inode(last, 'tree', nt), \
        inode(last, INODE_TREE)
    # The bounds: 1 and nt - 1 are file trees (another file's: loads).
    yield 'inodes[mid].tree', '1', set_inode(mid, 'tree', 1), ok()
    yield 'inodes[mid].tree', 'trees-1', set_inode(mid, 'tree', nt - 1), ok()
    for k, v in (('1', 1), ('2^31', 1 << 31), ('2^32-1', U32)):
        yield 'inodes[mid].reserved', k, set_inode(mid, 'reserved', v), \
            inode(mid, INODE_RESERVED)
    # Counts: the records past ni read as zeros (inode 0: out of order);
    # one more than the block holds, or none in a one-block section, does
    # not match the section's length.
    per = B // 16
    for k, v, want in (('+1', ni + 1, inode(ni, INODE_ORDER)),
                       ('fills-block(%d)' % per, per, inode(ni, INODE_ORDER)),
                       ('fills-block+1', per + 1, sb(LENGTH)),
                       ('0', 0, sb(LENGTH)),
                       ('-1', ni - 1, ok()),
                       ('2^32-1', U32, sb(LENGTH)),
                       ('2^64-1', U64, sb(LENGTH))):
        yield 'sb.sections[inodes].nr_entries', k, \
            set_sect(INODES, 'nr_entries', v), want
    # An empty index, the flag set: loads (measure: ENOENT for every inode).
    yield 'sb.sections[inodes]', 'empty', empty(INODES), ok()
    yield 'sb.sections[inodes]', 'empty-with-start', \
        empty(INODES, start=a.sect[INODES][0]), sb(EMPTY_LOC)
    yield 'sb.sections[inodes]', 'empty-with-entries', \
        empty(INODES, entries=ni), sb(EMPTY_LOC)
    # (Onto LEVELS and past the area: the section cases above.)  The area
    # one block longer, the index and the top digests after it moved one
    # block on: loads; the index moved alone runs onto the top digests.
    def move_inodes(x):
        x.hash_blocks += 1
        for sid in (INODES, TOP_DIGESTS):
            x.sect[sid][0] += 1
            x.home[sid] = (x.home[sid][0] + 1, x.home[sid][1])
    yield 'sb.sections[inodes].start', '+1(gap-before,area-longer)', move_inodes, ok()
    yield 'sb.sections[inodes].start', '+1(past-the-area)', \
        set_sect(INODES, 'start', a.sect[INODES][0] + 1), sb(OUTSIDE)


def main():
    hashfile, image, outdir = sys.argv[1:4]
    raw = open(hashfile, 'rb').read()
    bs = 1 << struct.unpack_from(SB_FMT, raw, 0)[5]
    # Room for the area moved a block on (hash start, grown sections).
    slot = (len(raw) + 2 * bs + 65535) // 65536 * 65536
    orig = Area(raw, slot)
    assert orig.alg == 1, 'the test uses sha256'
    table = list(cases(orig))
    disk = len(table) * slot
    data_bytes = len(open(image, 'rb').read())
    length = orig.data_blocks << (orig.log_bs - 9)
    assert data_bytes == length * 512
    lines, expect = [], []
    names = set()
    with open(outdir + '/areas.bin', 'wb') as out:
        for idx, (field, bound, mutate, (want, regexes)) in enumerate(table):
            name = '%s=%s' % (field, bound)
            assert name not in names and not re.search(r'\s', name), name
            names.add(name)
            x = copy.deepcopy(orig)
            x.room = (disk - idx * slot) // bs
            mutate(x)
            buf, sbb = x.encode()
            h = HASHES[x.table_alg]
            root = h(sbb + (b'x' if x.hostile_root else b'')).hexdigest()
            tlen = length
            if x.len_follows:
                tlen = (x.data_blocks << (x.log_bs - 9)) & U64
            out.write(bytes(x.hstart) + buf[:slot - x.hstart])
            assert not any(buf[slot - x.hstart:]), 'area past its slot'
            cid = 'm%03d' % idx
            lines.append('%s %s ro 0 %d extverity 1 %s %s %d %s %s' %
                         (cid, want, tlen, DATA_DEV, AREA_DEV,
                          (idx * slot + x.hstart) // 512, x.table_alg, root))
            expect.append('%s %s %s\t%s' % (cid, want, name, '\t'.join(regexes)))
    with open(outdir + '/manifest-cases', 'w') as f:
        f.write('\n'.join(lines) + '\n')
    with open(outdir + '/manifest-expect', 'w') as f:
        f.write('\n'.join(expect) + '\n')
    print('%d manifests (%d valid), slot %d bytes, areas.bin %d bytes' %
          (len(table), sum(1 for c in table if c[3][0] == 'V'), slot, disk))


if __name__ == '__main__':
    main()
