#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Hostile hash areas that authenticate (tests/vm/t-vm-hostile.sh).

hostile-manifests.py HASHFILE IMAGE OUTDIR

Reads a valid hash area made by `extverity format` (docs/format.md), and
writes OUTDIR/areas.bin: slot 0 holds the area unchanged, every other slot
one mutated copy in which a field lies (overlapping, missing or unsorted
extents, counts at integer limits, sections out of place, unknown flags...)
but whose section digests and superblock were recomputed, so the root
digest matches and only the kernel's validation can refuse it.

A model of the kernel's load-time checks (docs/table.md "Table load",
drivers/md/dm-extverity-format.c's rules, written from the format
description) predicts the reason each case is refused, or that it loads.
Every mutation says whether it is meant to be hostile; one the model
accepts is a generator bug and stops the run.

Output, one case a line, in OUTDIR/manifest-cases:
    ID WANT MODE TABLE...      (WANT V: must load and read back, R: refused)
and in OUTDIR/manifest-expect:
    ID WANT NAME<TAB>REGEX (the reason, escaped, the kernel log must hold)
The data device is /dev/vdb, the areas disk /dev/vdc.
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
EXT_SIZE = 32
TREE_ZERO = 0xffffffff
MAX_DATA_BLOCKS = 1 << 48
MAX_TREE_BLOCKS = 1 << 32
MAX_LEVELS = 8
U64 = (1 << 64) - 1
EXTENTS, TREES, FILES, TOPS, LEVELS = range(5)
DIGEST = {1: 32, 2: 64}
HASHES = {1: hashlib.sha256, 2: hashlib.sha512}
DATA_DEV = '/dev/vdb'
AREA_DEV = '/dev/vdc'


class Refused(Exception):
    pass


class Area:
    """A decoded hash area: superblock fields, sections, records, blocks."""

    def __init__(self, raw):
        f = struct.unpack_from(SB_FMT, raw, 0)
        self.magic, self.version, self.incompat, self.compat = f[0:4]
        self.alg, self.log_bs, self.salt_size, self.pad0 = f[4:8]
        self.data_blocks, self.hash_blocks, self.uuid, self.salt = f[8:12]
        off = struct.calcsize(SB_FMT)
        self.sect = []
        for i in range(8):
            s = struct.unpack_from(SECT_FMT, raw, off + i * 96)
            self.sect.append(list(s))
        self.reserved = raw[off + 8 * 96:SB_SIZE]
        # Records are written back where format put them, whatever the
        # mutated superblock then says.
        self.home = [tuple(s[:2]) for s in self.sect]
        self.bs = 1 << self.log_bs
        self.raw = bytearray(raw)
        self.dsize = DIGEST[self.alg]
        self.ext = [list(struct.unpack_from(EXT_FMT, self.sect_bytes(EXTENTS),
                                            i * EXT_SIZE))
                    for i in range(self.sect[EXTENTS][2])]
        tsz = 24 + self.dsize
        tb = self.sect_bytes(TREES)
        self.trees = []
        for i in range(self.sect[TREES][2]):
            d, top, lv = struct.unpack_from('<QQQ', tb, i * tsz)
            self.trees.append([d, top, lv, tb[i * tsz + 24:(i + 1) * tsz]])
        # Set by mutations: encode records, recompute digests.
        self.encode_records = True
        self.fix_digest = [True, True, True]
        self.len_follows = False
        self.hostile_root = False

    def sect_bytes(self, sid):
        s = self.sect[sid]
        return bytes(self.raw[s[0] * self.bs:(s[0] + s[1]) * self.bs])

    def encode(self, slot):
        """The area bytes (at most slot bytes) and the superblock."""
        buf = bytearray(self.raw[:slot])
        buf.extend(bytes(slot - len(buf)))
        bs = 1 << self.log_bs if 10 <= self.log_bs <= 12 else self.bs
        if self.encode_records:
            for sid, data in ((EXTENTS, b''.join(struct.pack(EXT_FMT, e[0] & U64, e[1] & U64,
                                                             e[2] & 0xffffffff,
                                                             e[3] & 0xffffffff,
                                                             e[4] & U64)
                                                 for e in self.ext)),
                              (TREES, b''.join(struct.pack('<QQQ', *(v & U64 for v in t[:3])) +
                                               t[3] for t in self.trees))):
                o = self.home[sid][0] * self.bs
                n = self.home[sid][1] * self.bs
                assert len(data) <= n and o + n <= slot, \
                    'records do not fit their section'
                buf[o:o + n] = data + bytes(n - len(data))
        alg = HASHES.get(self.alg, hashlib.sha256)
        for sid in range(3):
            s = self.sect[sid]
            if not self.fix_digest[sid]:
                continue
            o, n = s[0] * bs, s[1] * bs
            if s[1] and o + n <= slot:
                d = alg(bytes(buf[o:o + n])).digest()
                s[5] = d + bytes(64 - len(d))
        return buf, self.superblock()

    def superblock(self):
        sb = struct.pack(SB_FMT, self.magic, self.version, self.incompat,
                         self.compat, self.alg, self.log_bs, self.salt_size,
                         self.pad0, self.data_blocks, self.hash_blocks,
                         self.uuid, self.salt)
        for s in self.sect:
            sb += struct.pack(SECT_FMT, s[0] & U64, s[1] & U64, s[2] & U64,
                              s[3] & 0xffffffff, s[4] & 0xffffffff, s[5])
        sb += self.reserved
        assert len(sb) == SB_SIZE
        return sb


# --------------------------------------------------------------- the model

def geometry(log_bs, dsize, data_size):
    """(data blocks, levels, top_len, lower blocks) or None if too big."""
    bs = 1 << log_bs
    if data_size > MAX_TREE_BLOCKS << log_bs:
        return None
    n = (data_size + bs - 1) >> log_bs
    if n <= 1:
        return n, 0, 0, 0
    per = bs // dsize
    counts = []
    b = n
    while True:
        if len(counts) == MAX_LEVELS:
            return None
        b = (b + per - 1) // per
        counts.append(b)
        if b <= 1:
            break
    top_len = (n if len(counts) == 1 else counts[-2]) * dsize
    return n, len(counts), top_len, sum(counts[:-1])


def model(sbbytes, area, table_alg, length, data_bytes, hash_bytes):
    """Raise Refused(reason) the way the kernel would, or return."""
    f = struct.unpack_from(SB_FMT, sbbytes, 0)
    magic, version, incompat, _, alg, log_bs, salt_size, _ = f[:8]
    data_blocks, hash_blocks = f[8], f[9]
    off = struct.calcsize(SB_FMT)
    sect = [struct.unpack_from(SECT_FMT, sbbytes, off + i * 96)
            for i in range(8)]
    if magic != b'EXTVRITY':
        raise Refused('not an extverity hash area (bad magic)')
    if version != 1 or incompat:
        raise Refused('unsupported format version or incompatible feature')
    if alg not in DIGEST:
        raise Refused('unknown hash algorithm in superblock')
    if not 10 <= log_bs <= 12:
        raise Refused('unsupported block size')
    dsize = DIGEST[alg]
    bs = 1 << log_bs
    tsz = 24 + dsize
    if salt_size > 32:
        raise Refused('salt too long')
    if not data_blocks or data_blocks > MAX_DATA_BLOCKS:
        raise Refused('data block count out of range')
    if hash_blocks < 2 or hash_blocks > MAX_DATA_BLOCKS:
        raise Refused('hash block count out of range')
    nxt = 1
    loc = {}
    for sid in range(5):
        start, nb, ne, esz = sect[sid][:4]
        want = {EXTENTS: EXT_SIZE, TREES: tsz}.get(sid, 0)
        if esz != want:
            raise Refused('section has the wrong record size')
        if not nb:
            if start or ne:
                raise Refused('empty section has a location or entries')
            loc[sid] = (0, 0, 0)
            continue
        if start < nxt or start > hash_blocks or nb > hash_blocks - start:
            raise Refused('section lies outside the hash area or overlaps another')
        nxt = start + nb
        if want:
            if ne > (nb << log_bs) // want or \
                    nb != (ne * want + bs - 1) >> log_bs:
                raise Refused('section length does not match its record count')
        elif sid != FILES and ne:
            raise Refused('hash block section has a record count')
        loc[sid] = (start, nb, ne)
    if not loc[EXTENTS][2] or loc[EXTENTS][2] > data_blocks:
        raise Refused('extent count out of range')
    if not loc[TREES][2] or loc[TREES][2] >= TREE_ZERO:
        raise Refused('tree count out of range')
    if alg != table_alg:
        raise Refused('Hash algorithm does not match the superblock')
    if length != (data_blocks << (log_bs - 9)) & U64:
        raise Refused('Target length does not match the image size')
    if data_bytes < length * 512:
        raise Refused('Data device is smaller than the image')
    if hash_bytes // bs < hash_blocks:
        raise Refused('Hash device is smaller than the hash area')
    h = HASHES[alg]

    def section(sid):
        start, nb, _ = loc[sid]
        data = bytes(area[start * bs:(start + nb) * bs])
        assert len(data) == nb * bs, 'section outside the slot'
        return data, h(data).digest() == sect[sid][5][:dsize]

    tb, ok = section(TREES)
    if not ok:
        raise Refused('Tree table digest mismatch')
    trees = []
    tops_s = loc[TOPS][0] * bs
    tops_e = tops_s + loc[TOPS][1] * bs
    lv_s = loc[LEVELS][0]
    lv_e = lv_s + loc[LEVELS][1]
    for i in range(loc[TREES][2]):
        ds, top, lv = struct.unpack_from('<QQQ', tb, i * tsz)
        g = geometry(log_bs, dsize, ds)
        if g is None:
            raise Refused('tree %d: tree too large' % i)
        n, levels, top_len, lower = g
        trees.append(n)
        if not levels:
            if top or lv:
                raise Refused('tree %d: tree of at most one block has hash blocks' % i)
            continue
        if top < tops_s or top >= tops_e or top_len > tops_e - top or \
                top % dsize or (top & (bs - 1)) + top_len > bs:
            raise Refused('tree %d: top hash block outside the TOPS section or misaligned' % i)
        if levels == 1:
            if lv:
                raise Refused('tree %d: one-level tree has lower hash blocks' % i)
            continue
        if lv < lv_s or lv > lv_e or lower > lv_e - lv:
            raise Refused('tree %d: hash blocks outside the LEVELS section' % i)
    eb, ok = section(EXTENTS)
    if not ok:
        raise Refused('Extent map digest mismatch')
    expected = 0
    for i in range(loc[EXTENTS][2]):
        start, leaf, count, tree, _ = struct.unpack_from(EXT_FMT, eb, i * 32)
        if start != expected:
            raise Refused('extent %d: extent map is not sorted and contiguous' % i)
        if not count or count > data_blocks - start:
            raise Refused('extent %d: extent is empty or runs past the data device' % i)
        expected = start + count
        if tree == TREE_ZERO:
            if leaf:
                raise Refused('extent %d: zero range has a leaf index' % i)
            continue
        if tree >= len(trees):
            raise Refused('extent %d: extent names a tree that does not exist' % i)
        if leaf > trees[tree] or count > trees[tree] - leaf:
            raise Refused('extent %d: extent runs past the end of its tree' % i)
    if expected != data_blocks:
        raise Refused('extent map ends at block %d, not %d' % (expected, data_blocks))


# ----------------------------------------------------------- the mutations

def mutations(a):
    """Yield (name, hostile, function(area)) for area a (the original)."""
    def sb(field, value):
        return lambda x: setattr(x, field, value)

    yield 'valid-reencoded', False, lambda x: None
    yield 'valid-compat-flags', False, sb('compat', 0xffffffff)
    yield 'valid-uuid', False, sb('uuid', bytes(range(16)))
    yield 'valid-reserved-slot5', False, \
        lambda x: x.sect.__setitem__(5, [7, 7, 7, 7, 7, b'\x07' * 64])

    def split(x):
        for i, e in enumerate(x.ext):
            if e[2] >= 2 and e[3] != TREE_ZERO:
                h = e[2] // 2
                x.ext[i:i + 1] = [[e[0], e[1], h, e[3], e[4]],
                                  [e[0] + h, e[1] + h, e[2] - h, e[3], e[4]]]
                x.sect[EXTENTS][2] += 1
                return
    yield 'valid-split-extent', False, split

    for m in (b'EXTVRITX', b'\0' * 8, b'extvrity'):
        yield 'magic-%s' % m.hex(), True, sb('magic', m)
    for v in (0, 2, 3, 0x100, 0x80000000, 0xffffffff):
        yield 'version-%#x' % v, True, sb('version', v)
    for b in range(32):
        yield 'incompat-bit%d' % b, True, sb('incompat', 1 << b)
    for v in (0, 2, 3, 0x7f, 0xff):
        yield 'alg-%d' % v, True, sb('alg', v)
    for v in (0, 9, 10, 11, 13, 16, 63, 255):
        yield 'log-blocksize-%d' % v, True, sb('log_bs', v)
    for v in (33, 64, 128, 255):
        yield 'salt-size-%d' % v, True, sb('salt_size', v)

    n = a.data_blocks
    for v, follow in ((0, False), (MAX_DATA_BLOCKS + 1, False),
                      (1 << 63, False), (U64, False), (n - 1, True),
                      (n + 1, True), (n + 1, False), (MAX_DATA_BLOCKS, True),
                      (1, True), (len(a.ext) - 1, True)):
        def f(x, v=v, follow=follow):
            x.data_blocks = v
            x.len_follows = follow
        yield 'data-blocks-%#x%s' % (v, '-len' if follow else ''), True, f
    hb = a.hash_blocks
    for v in (0, 1, MAX_DATA_BLOCKS + 1, U64, 1 << 63, hb - 1,
              MAX_DATA_BLOCKS, 1 << 32):
        yield 'hash-blocks-%#x' % v, True, sb('hash_blocks', v)

    names = ['extents', 'trees', 'files', 'tops', 'levels']
    for sid in range(5):
        s = a.sect[sid]
        nm = names[sid]

        def field(i, v, sid=sid):
            def f(x):
                x.sect[sid][i] = v
            return f
        for v in sorted({s[3] + 1, 1, 0xffffffff, 32, 24 + a.dsize} - {s[3]}):
            yield '%s-entry-size-%#x' % (nm, v), True, field(3, v)
        if not s[1]:
            yield '%s-empty-with-start' % nm, True, field(0, 3)
            yield '%s-empty-with-entries' % nm, True, field(2, 1)
            continue
        prev = [a.sect[i] for i in range(sid) if a.sect[i][1]]
        starts = {0, hb, hb + 1, U64, 1 << 63, U64 - s[1] + 1}
        if prev:
            starts.add(prev[-1][0])
            starts.add(prev[-1][0] + prev[-1][1] - 1)
        for v in sorted(starts - {s[0]}):
            yield '%s-start-%#x' % (nm, v), True, field(0, v)
        for v in sorted({0, U64, 1 << 63, hb, hb - s[0] + 1, s[1] + 1,
                         U64 - s[0] + 2} - {s[1]}):
            yield '%s-nr-blocks-%#x' % (nm, v), True, field(1, v)
        if sid == TREES:
            # The padding after the last record reads as an empty file's
            # tree (size 0, no hash blocks): harmless, so it must load.
            yield 'valid-trees-one-more-zero-record', False, field(2, s[2] + 1)
        if sid in (EXTENTS, TREES):
            for v in sorted({0, s[2] + 1 if sid == EXTENTS else 0, U64, 1 << 63, 1 << 32,
                             s[2] + (a.bs // s[3]) + 1} - {s[2]}):
                yield '%s-nr-entries-%#x' % (nm, v), True, field(2, v)
        elif sid != FILES:
            yield '%s-nr-entries-1' % nm, True, field(2, 1)
            yield '%s-nr-entries-max' % nm, True, field(2, U64)

    def empty(sid):
        def f(x):
            x.sect[sid][0:3] = [0, 0, 0]
            x.encode_records = False
        return f
    yield 'extents-section-empty', True, empty(EXTENTS)
    yield 'trees-section-empty', True, empty(TREES)

    def swap_sections(i, j):
        def f(x):
            x.sect[i][0], x.sect[j][0] = x.sect[j][0], x.sect[i][0]
            x.sect[i][1], x.sect[j][1] = x.sect[j][1], x.sect[i][1]
            x.encode_records = False
        return f
    yield 'sections-swap-extents-trees', True, swap_sections(EXTENTS, TREES)
    yield 'sections-swap-tops-levels', True, swap_sections(TOPS, LEVELS)

    def no_fix(sid):
        def f(x):
            x.fix_digest[sid] = False
            x.ext[0][4] ^= 1 if sid == EXTENTS else 0
            if sid == TREES:
                x.trees[0][0] ^= 1
        return f
    yield 'digest-trees-stale', True, no_fix(TREES)
    yield 'digest-extents-stale', True, no_fix(EXTENTS)

    def wrong_root(x):
        x.hostile_root = True
    yield 'root-digest-wrong', True, wrong_root

    # Trees: pick the residual tree, a one-level and a two-level tree.
    geo = [geometry(a.log_bs, a.dsize, t[0]) for t in a.trees]
    picks = {'residual': 0}
    for i, g in enumerate(geo):
        if g[1] == 1 and 'one' not in picks:
            picks['one'] = i
        if g[1] == 2 and 'two' not in picks:
            picks['two'] = i
        if g[1] == 0 and g[0] == 1 and 'small' not in picks:
            picks['small'] = i
    tops_s = a.sect[TOPS][0] * a.bs
    tops_e = tops_s + a.sect[TOPS][1] * a.bs
    lv_s, lv_e = a.sect[LEVELS][0], a.sect[LEVELS][0] + a.sect[LEVELS][1]
    for label, ti in sorted(picks.items()):
        t = a.trees[ti]
        g = geo[ti]

        def tf(i, v, ti=ti):
            def f(x):
                x.trees[ti][i] = v
            return f
        for v in sorted({U64, 1 << 63, ((MAX_TREE_BLOCKS + 1) << a.log_bs),
                         ((MAX_TREE_BLOCKS) << a.log_bs) + 1} - {t[0]}):
            yield 'tree-%s-data-size-%#x' % (label, v), True, tf(0, v)
        if g[1]:
            yield 'tree-%s-data-size-1' % label, True, tf(0, 1)
            yield 'tree-%s-data-size-x200' % label, True, tf(0, t[0] * 200)
            yield 'tree-%s-data-size-minus-block' % label, True, \
                tf(0, max(t[0] - a.bs * ((g[0] + 1) // 2), 1))
            for v in sorted({0, tops_s - a.dsize, tops_e, tops_e - a.dsize,
                             t[1] + 1, U64 - a.dsize + 1, tops_s + a.bs - a.dsize,
                             1 << 63} - {t[1]}):
                if v < 0:
                    continue
                yield 'tree-%s-top-%#x' % (label, v), True, tf(1, v)
        else:
            yield 'tree-%s-top-set' % label, True, tf(1, tops_s)
            yield 'tree-%s-levels-set' % label, True, tf(2, lv_s or 1)
            yield 'tree-%s-data-size-x1000' % label, True, \
                tf(0, max(t[0], 1) * 1000 + a.bs * 200)
        if g[1] == 1:
            yield 'tree-%s-levels-set' % label, True, tf(2, lv_s or 1)
        if g[1] >= 2:
            for v in sorted({0, lv_s - 1, lv_e, lv_e - g[3] + 1, U64,
                             1 << 63} - {t[2]}):
                yield 'tree-%s-levels-%#x' % (label, v), True, tf(2, v)

    def drop_trees(x):
        k = max(e[3] for e in x.ext if e[3] != TREE_ZERO)
        del x.trees[k:]
        x.sect[TREES][2] = k
    yield 'trees-drop-referenced', True, drop_trees

    # Extents.
    ne = len(a.ext)
    zero_i = next((i for i, e in enumerate(a.ext) if e[3] == TREE_ZERO), None)
    file_i = next((i for i, e in enumerate(a.ext)
                   if e[3] not in (0, TREE_ZERO) and e[2] >= 2), None)
    pos = {'first': 0, 'middle': ne // 2, 'last': ne - 1}
    if zero_i is not None:
        pos['zero'] = zero_i
    if file_i is not None:
        pos['file'] = file_i
    for label, ei in sorted(pos.items()):
        e = a.ext[ei]

        def ef(i, v, ei=ei):
            def f(x):
                x.ext[ei][i] = v
            return f
        for v in sorted({e[0] + 1, max(e[0] - 1, 0), 0, U64, 1 << 63,
                         a.data_blocks} - {e[0]}):
            yield 'extent-%s-start-%#x' % (label, v), True, ef(0, v)
        for v in sorted({0, e[2] + 1, e[2] - 1, 0xffffffff, 1 << 31} -
                        {e[2]}):
            yield 'extent-%s-count-%#x' % (label, v), True, ef(2, v)
        for v in sorted({len(a.trees), len(a.trees) + 100, 0xfffffffe,
                         0x7fffffff} - {e[3]}):
            yield 'extent-%s-tree-%#x' % (label, v), True, ef(3, v)
        if e[3] == TREE_ZERO:
            for v in (1, U64, 1 << 63):
                yield 'extent-%s-leaf-%#x' % (label, v), True, ef(1, v)
        else:
            tb = geo[e[3]][0]
            for v in sorted({tb, tb - e[2] + 1, U64, 1 << 63, U64 - e[2] + 2}
                            - {e[1]}):
                yield 'extent-%s-leaf-%#x' % (label, v), True, ef(1, v)

    def swap(i):
        def f(x):
            x.ext[i], x.ext[i + 1] = x.ext[i + 1], x.ext[i]
        return f
    for i in (0, ne // 2, ne - 2):
        yield 'extents-swap-%d' % i, True, swap(i)

    def delete(i):
        def f(x):
            del x.ext[i]
            x.sect[EXTENTS][2] -= 1
        return f
    for i in (0, ne // 2, ne - 1):
        yield 'extents-delete-%d' % i, True, delete(i)

    def dup(i):
        def f(x):
            x.ext.insert(i, list(x.ext[i]))
            x.sect[EXTENTS][2] += 1
        return f
    for i in (0, ne // 2, ne - 1):
        yield 'extents-duplicate-%d' % i, True, dup(i)

    def append(x):
        x.ext.append([x.data_blocks, 0, 1, TREE_ZERO, 0])
        x.sect[EXTENTS][2] += 1
    yield 'extents-append-past-end', True, append

    def reverse(x):
        x.ext.reverse()
    yield 'extents-reversed', True, reverse

    def shift_all(x):
        for e in x.ext:
            e[0] += 1
    yield 'extents-all-shifted', True, shift_all

    def zero_count_insert(x):
        x.ext.insert(1, [x.ext[1][0], 0, 0, TREE_ZERO, 0])
        x.sect[EXTENTS][2] += 1
    yield 'extents-insert-count0', True, zero_count_insert


def main():
    hashfile, image, outdir = sys.argv[1:4]
    raw = open(hashfile, 'rb').read()
    data_bytes = len(open(image, 'rb').read())
    orig = Area(raw)
    assert orig.alg == 1, 'the test uses sha256'
    bs = orig.bs
    slot = (len(raw) + 2 * bs + 65535) // 65536 * 65536
    cases = list(mutations(orig))
    disk = len(cases) * slot
    lines, expect = [], []
    names = set()
    bad = 0
    with open(outdir + '/areas.bin', 'wb') as out:
        for idx, (name, hostile, mutate) in enumerate(cases):
            assert name not in names, name
            names.add(name)
            x = copy.deepcopy(orig)
            mutate(x)
            buf, sbb = x.encode(slot)
            buf[0:SB_SIZE] = sbb
            root = hashlib.sha256(sbb).hexdigest()
            if x.hostile_root:
                root = hashlib.sha256(sbb + b'x').hexdigest()
            length = orig.data_blocks << (orig.log_bs - 9)
            if x.len_follows and 10 <= x.log_bs <= 12:
                length = (x.data_blocks << (x.log_bs - 9)) & U64
            try:
                if x.hostile_root:
                    raise Refused('Superblock does not match the root digest')
                model(sbb, buf, 1, length, data_bytes, disk - idx * slot)
                why = None
            except Refused as r:
                why = str(r)
            if hostile and why is None:
                print('%s: meant to be hostile, but the model loads it'
                      % name, file=sys.stderr)
                bad += 1
            if not hostile and why is not None:
                sys.exit('%s: meant to be valid, the model refuses: %s'
                         % (name, why))
            out.write(buf)
            want = 'R' if hostile else 'V'
            cid = 'm%03d' % idx
            lines.append('%s %s ro 0 %d extverity 1 %s %s %d sha256 %s' %
                         (cid, want, length, DATA_DEV, AREA_DEV,
                          idx * slot // 512, root))
            expect.append('%s %s %s\t%s' % (cid, want, name,
                                             re.escape(why or '')))
    if bad:
        sys.exit('%d hostile mutations load' % bad)
    with open(outdir + '/manifest-cases', 'w') as f:
        f.write('\n'.join(lines) + '\n')
    with open(outdir + '/manifest-expect', 'w') as f:
        f.write('\n'.join(expect) + '\n')
    print('%d manifests (%d valid), slot %d bytes, areas.bin %d bytes' %
          (len(cases), sum(1 for c in cases if not c[1]), slot, disk))


if __name__ == '__main__':
    main()
