#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Build the benchmark's reference tree: files whose sizes are drawn from
Debian 12's /usr (the size list in ../shared/data), until TARGET bytes of
data, 100 to a directory, with incompressible but reproducible contents.

Usage: mkref.py SIZES.txt.gz OUTDIR TARGET_BYTES [SEED]

Another SEED draws other files (make bench's full image adds them to fill
its free space: no file then repeats another's contents).
"""
import gzip
import os
import random
import sys

sizes_file, out, target = sys.argv[1], sys.argv[2], int(sys.argv[3])
seed = int(sys.argv[4]) if len(sys.argv) > 4 else 20261203
sizes = [int(line) for line in gzip.open(sizes_file, 'rt') if line.strip()]
rng = random.Random(seed)
rng.shuffle(sizes)
# One pseudo-random pool; each file is a slice at a per-file offset, so
# no two files share content unless they are empty.
pool = rng.randbytes(64 << 20)
total = n = 0
for size in sizes:
    size = min(size, 32 << 20)
    if total + size > target:
        continue
    d = os.path.join(out, 'd%04d' % (n // 100))
    if n % 100 == 0:
        os.makedirs(d, exist_ok=True)
    off = rng.randrange(0, len(pool) - (1 << 20))
    with open(os.path.join(d, 'f%03d' % (n % 100)), 'wb') as f:
        left = size
        while left:
            chunk = pool[off:off + min(left, 1 << 20)]
            f.write(chunk)
            left -= len(chunk)
            off = (off + 4099) % (len(pool) - (1 << 20))
    total += size
    n += 1
    if total >= target:
        break
print(f'{n} files, {total} bytes')
