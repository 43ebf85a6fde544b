#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Build the tree of `make bench`'s many-files image: COUNT files of 1 to
6 KB (one or two 4 KiB blocks: the per-file cost at its worst), 1000 to a
directory, each different (no two share a tree), reproducible.

Usage: mkmany.py OUTDIR COUNT
"""
import os
import random
import sys

out, count = sys.argv[1], int(sys.argv[2])
rng = random.Random(20261205)
pool = rng.randbytes(1 << 20)
for n in range(count):
    d = os.path.join(out, 'd%03d' % (n // 1000))
    if n % 1000 == 0:
        os.makedirs(d, exist_ok=True)
    size = rng.randrange(1000, 6001)
    off = rng.randrange(0, len(pool) - size)
    # The file's number first: slices of one pool could repeat.
    data = n.to_bytes(8, 'little') + pool[off:off + size - 8]
    fd = os.open(os.path.join(d, 'f%03d' % (n % 1000)),
                 os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, data)
    os.close(fd)
