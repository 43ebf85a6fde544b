#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn bench/uml.sh's guest times into bench/results/STAMP-uml.{json,md}.

Usage: uml-report.py TIMES DEVICE_BYTES FILE_BYTES OUT
TIMES has lines "EVT-UML TEST KIND ROUND CENTISECONDS".
"""
import json
import statistics
import sys

times, dev_bytes, file_bytes, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
TESTS = {
    'seq': ('cold sequential read of the device, 4 MiB reads', dev_bytes),
    'tree': ('cold whole-tree file read (mounted)', file_bytes),
}
KINDS = ('raw', 'verity', 'extverity')
runs = {t: {k: [] for k in KINDS} for t in TESTS}
with open(times) as f:
    for line in f:
        _, test, kind, _, cs = line.split()
        runs[test][kind].append(int(cs))

res = {}
for test, (_, nbytes) in TESTS.items():
    res[test] = {}
    for kind in KINDS:
        cs = statistics.median(runs[test][kind])
        res[test][kind] = {
            'MBps': nbytes / (cs / 100) / 1e6 if cs else None,
            'centiseconds': runs[test][kind],
        }

lines = [
    '# make bench-uml (User-Mode Linux, one pinned CPU, kernel code at native speed; medians of %d)' % len(runs['seq']['raw']),
    '',
    '| test | raw MB/s | dm-verity MB/s | extverity MB/s | ext/verity | ext/raw |',
    '|---|---|---|---|---|---|',
]
for test, (label, _) in TESTS.items():
    r = {k: res[test][k]['MBps'] for k in KINDS}
    lines.append('| %s | %.1f | %.1f | %.1f | %.2fx | %.2fx |' % (
        label, r['raw'], r['verity'], r['extverity'],
        r['extverity'] / r['verity'], r['extverity'] / r['raw']))
    res[test]['ext_over_verity'] = r['extverity'] / r['verity']
with open(out + '.md', 'w') as f:
    f.write('\n'.join(lines) + '\n')
with open(out + '.json', 'w') as f:
    json.dump(res, f, indent=1)
