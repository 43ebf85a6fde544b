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
KINDS = ('raw', 'verity', 'verity-bh', 'extverity', 'extverity-bh')
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
    'One CPU: a rate is the inverse of the CPU time per MiB (ms per MiB in brackets). '
    'bh: with try_verify_in_tasklet; ext/verity: the better extverity against the better dm-verity.',
    '',
    '| test | raw MB/s | dm-verity | dm-verity bh | extverity | extverity bh | ext/verity | ext/raw |',
    '|---|---|---|---|---|---|---|---|',
]


def cell(r):
    return '%.1f (%.2f)' % (r, 1048576 / r / 1e3)


for test, (label, _) in TESTS.items():
    r = {k: res[test][k]['MBps'] for k in KINDS}
    ver = max(r['verity'], r['verity-bh'])
    ext = max(r['extverity'], r['extverity-bh'])
    lines.append('| %s | %s | %s | %s | %s | %s | %.2fx | %.2fx |' % (
        label, cell(r['raw']), cell(r['verity']), cell(r['verity-bh']),
        cell(r['extverity']), cell(r['extverity-bh']), ext / ver, ext / r['raw']))
    res[test]['ext_over_verity'] = ext / ver
with open(out + '.md', 'w') as f:
    f.write('\n'.join(lines) + '\n')
with open(out + '.json', 'w') as f:
    json.dump(res, f, indent=1)
