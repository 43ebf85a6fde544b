#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The inode index of a hash area (docs/format.md "Inode index"), for the
VM tests: take it away or empty it, and print the new root.

evinodes.py strip HASHFILE  the compat flag cleared and slot 5 zeroed, as
                            an area made before the index existed; the
                            blocks stay (no section covers them).  Prints
                            the root digest.
evinodes.py empty HASHFILE  the flag set and the section empty, as for an
                            image without regular files.  Prints the root
                            digest.
evinodes.py list HASHFILE   "INODE TREE" per entry of the index.

Only the superblock is rewritten, from the layout in
include/uapi/linux/dm-extverity.h; nothing is validated.
"""
import hashlib
import struct
import sys

SB_SIZE = 1024
SECT_OFF = 88
SECT_FMT = '<QQQII64s'
COMPAT_OFF = 16
INODES = 5
INODE_INDEX = 1
HASHES = {1: hashlib.sha256, 2: hashlib.sha512}


def read(path):
    with open(path, 'rb') as f:
        return bytearray(f.read())


def sect(buf, sid):
    return list(struct.unpack_from(SECT_FMT, buf, SECT_OFF + sid * 96))


def put_sect(buf, sid, s):
    struct.pack_into(SECT_FMT, buf, SECT_OFF + sid * 96, *s)


def params(buf):
    assert buf[:8] == b'EXTVRITY', 'not an extverity hash area'
    alg, log_bs = buf[20], buf[21]
    hash_blocks = struct.unpack_from('<Q', buf, 32)[0]
    return HASHES[alg], 1 << log_bs, hash_blocks


def root(buf, h):
    return h(bytes(buf[:SB_SIZE])).hexdigest()


def strip(path):
    buf = read(path)
    h = params(buf)[0]
    compat = struct.unpack_from('<I', buf, COMPAT_OFF)[0]
    struct.pack_into('<I', buf, COMPAT_OFF, compat & ~INODE_INDEX)
    put_sect(buf, INODES, [0, 0, 0, 0, 0, bytes(64)])
    with open(path, 'r+b') as f:
        f.write(buf[:SB_SIZE])
    print(root(buf, h))


def empty(path):
    buf = read(path)
    h = params(buf)[0]
    compat = struct.unpack_from('<I', buf, COMPAT_OFF)[0]
    struct.pack_into('<I', buf, COMPAT_OFF, compat | INODE_INDEX)
    put_sect(buf, INODES, [0, 0, 0, 16, 0, bytes(64)])
    with open(path, 'r+b') as f:
        f.write(buf[:SB_SIZE])
    print(root(buf, h))


def list_index(path):
    buf = read(path)
    bs = params(buf)[1]
    if not struct.unpack_from('<I', buf, COMPAT_OFF)[0] & INODE_INDEX:
        sys.exit('no inode index')
    start, _, n = sect(buf, INODES)[:3]
    for k in range(n):
        i, t, _ = struct.unpack_from('<QII', buf, start * bs + 16 * k)
        print(i, t)


def main():
    cmds = {'strip': strip, 'empty': empty, 'list': list_index}
    if len(sys.argv) != 3 or sys.argv[1] not in cmds:
        sys.exit(__doc__)
    cmds[sys.argv[1]](sys.argv[2])


if __name__ == '__main__':
    main()
