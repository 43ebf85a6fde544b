#!/usr/bin/env python3
"""Independent reader of an extverity hash area (docs/format.md, v1).

evread.py HASHFILE ROOT_HEX [sections|inodes|fec|tops]
Checks the superblock against the root digest, each manifest section's
digest (INODES too when compat flag 1 says it is there, FEC when compat
flag 2 does, TOP_DIGESTS when compat flag 4 does), and that the extent map partitions [0, N).  Prints one line
per extent, "start count tree leaf inode", for the caller to cross-check
with debugfs; with
"sections", prints the sections ("NAME start_block nr_blocks") and tree
records ("TREE index data_size top levels") instead; with "inodes", one
line per inode index entry, "inode tree ALG:DIGEST", the digest being the
fs-verity digest of the entry's tree record (fs-verity's descriptor built
here, from docs/format.md), or "none" when the area has no index; with
"fec", "FEC start blocks roots parity_blocks" from the FEC record, checked
against the superblock, or "none"; with "tops", "TOP_DIGESTS start
nr_blocks nr_entries" after checking that the section holds one digest per
TOPS block, each the salted hash H(salt' || block) of that block as
stored, or "none".
Exit 1 with a message on the first violation."""
import hashlib
import struct
import sys

ALGS = {1: 'sha256', 2: 'sha512'}
ZERO = 0xffffffff


def die(msg):
    sys.exit('evread: ' + msg)


def main():
    path, root = sys.argv[1], sys.argv[2]
    off = 0
    f = open(path, 'rb')
    f.seek(off)
    sb = f.read(1024)
    if sb[:8] != b'EXTVRITY':
        die('bad magic')
    (ver, incompat, compat, alg, logbs, salt_size, _pad, nblocks,
     hblocks) = struct.unpack_from('<III BBBB QQ', sb, 8)
    if ver != 1 or incompat or alg not in ALGS or not 10 <= logbs <= 12:
        die('bad superblock fields')
    if hashlib.new(ALGS[alg], sb).hexdigest() != root:
        die('superblock hash is not the root digest')
    bs = 1 << logbs
    secs = []
    for i in range(8):
        start, nr, ents, esz, _r = struct.unpack_from('<QQQII', sb, 88 + i * 96)
        dig = sb[88 + i * 96 + 32:88 + i * 96 + 96]
        secs.append((start, nr, ents, esz, dig))
    digested = [0, 1, 2] + ([5] if compat & 1 else []) + \
        ([6] if compat & 2 else []) + ([7] if compat & 4 else [])
    for i in digested:
        start, nr, _e, _s, dig = secs[i]
        if not nr:
            if any(dig):
                die('empty section %d has a digest' % i)
            continue
        f.seek(off + start * bs)
        data = f.read(nr * bs)
        if len(data) != nr * bs:
            die('section %d truncated' % i)
        h = hashlib.new(ALGS[alg], data).digest()
        if h != dig[:len(h)]:
            die('section %d digest mismatch' % i)
    dsz = hashlib.new(ALGS[alg]).digest_size
    salt = sb[56:56 + salt_size]
    if 'sections' in sys.argv[3:]:
        for i, name in enumerate(['EXTENTS', 'TREES', 'FILES', 'TOPS',
                                  'LEVELS']):
            print(name, secs[i][0], secs[i][1])
        f.seek(off + secs[1][0] * bs)
        tdata = f.read(secs[1][2] * (24 + dsz))
        for i in range(secs[1][2]):
            size, top, lev = struct.unpack_from('<QQQ', tdata, i * (24 + dsz))
            print('TREE', i, size, top, lev)
        return
    if 'tops' in sys.argv[3:]:
        if not compat & 4:
            print('none')
            return
        # salt': the salt zero-padded to the hash's block size, or nothing.
        padded = salt.ljust(hashlib.new(ALGS[alg]).block_size, b'\0') \
            if salt else b''
        tstart, tnr = secs[3][0], secs[3][1]
        start, nr, ents, esz, _d = secs[7]
        if esz != dsz or ents != tnr or nr != -(-ents * dsz // bs) or \
                (not nr and start):
            die('TOP_DIGESTS: %d entries of %d bytes in %d blocks at %d, '
                'for %d TOPS blocks' % (ents, esz, nr, start, tnr))
        f.seek(off + start * bs)
        digests = f.read(ents * dsz)
        f.seek(off + tstart * bs)
        for k in range(tnr):
            h = hashlib.new(ALGS[alg], padded + f.read(bs)).digest()
            if h != digests[k * dsz:(k + 1) * dsz]:
                die('TOPS block %d does not match its top digest' %
                    (tstart + k))
        print('TOP_DIGESTS', start, nr, ents)
        return
    if 'fec' in sys.argv[3:]:
        if not compat & 2:
            print('none')
            return
        start, nr, ents, esz, _d = secs[6]
        if nr != 1 or ents != 1 or esz != 32:
            die('FEC section is not one 32-byte record in one block')
        f.seek(off + start * bs)
        rec = f.read(32)
        fstart, fblocks, roots = struct.unpack_from('<QQB', rec)
        if any(rec[17:]) or not 2 <= roots <= 24:
            die('bad FEC record')
        if fblocks != nblocks + hblocks:
            die('FEC blocks %d, not data + hash %d' %
                (fblocks, nblocks + hblocks))
        rounds = -(-fblocks // (255 - roots))
        print('FEC', fstart, fblocks, roots, rounds * roots)
        return
    if 'inodes' in sys.argv[3:]:
        if not compat & 1:
            print('none')
            return
        f.seek(off + secs[1][0] * bs)
        tdata = f.read(secs[1][2] * (24 + dsz))
        start, nr, ents, esz, _d = secs[5]
        if esz != 16 or ents * 16 > nr * bs:
            die('inode index of %d entries of %d bytes in %d blocks' %
                (ents, esz, nr))
        f.seek(off + start * bs)
        data = f.read(ents * 16)
        for i in range(ents):
            ino, tree, res = struct.unpack_from('<QII', data, i * 16)
            if tree >= secs[1][2]:
                die('inode %d: tree %d of %d' % (ino, tree, secs[1][2]))
            size = struct.unpack_from('<Q', tdata, tree * (24 + dsz))[0]
            root_hash = tdata[tree * (24 + dsz) + 24:(tree + 1) * (24 + dsz)]
            desc = struct.pack('<BBBBIQ64s32s144s', 1, alg, logbs, salt_size,
                               0, size, root_hash, salt, b'')
            print(ino, tree, '%s:%s' % (ALGS[alg],
                                        hashlib.new(ALGS[alg], desc).hexdigest()))
        return
    start, nr, ents, esz, _d = secs[0]
    if esz != 32:
        die('extent size %d' % esz)
    f.seek(off + start * bs)
    data = f.read(ents * 32)
    pos = 0
    for i in range(ents):
        s, leaf, cnt, tree, ino = struct.unpack_from('<QQIIQ', data, i * 32)
        if s != pos or cnt < 1:
            die('extent %d starts at %d, expected %d' % (i, s, pos))
        pos = s + cnt
        print(s, cnt, 'zero' if tree == ZERO else tree, leaf, ino)
    if pos != nblocks:
        die('extents end at %d, not N=%d' % (pos, nblocks))


main()
