#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn a `make bench` run into bench/results/STAMP.{json,md,png}."""
import argparse
import glob
import json
import os
import re
import shutil
import statistics
import subprocess

ap = argparse.ArgumentParser()
for a in ('res', 'host', 'image', 'ehash', 'vhash', 'files', 'file-bytes', 'free-blocks', 'out'):
    ap.add_argument('--' + a, required=True)
ap.add_argument('--rss')
ap.add_argument('--verify')
args = ap.parse_args()

KINDS = ('raw', 'verity', 'verity-bh', 'extverity', 'extverity-bh')
TESTS = {
    'seq': ('cold sequential read, 1 MiB direct', 'MB/s'),
    'rand1': ('cold random 4 KiB direct, QD 1', 'IOPS'),
    'rand16': ('cold random 4 KiB direct, QD 16', 'IOPS'),
    'tree': ('cold whole-tree file read (mounted)', 'MB/s'),
    'warm1': ('warm random 4 KiB direct, QD 1', 'IOPS'),
}


def kv(path):
    with open(path) as f:
        return {k: int(v) for k, v in re.findall(r'(\w+)=(\d+)', f.read())}


def one(kind, test, rnd):
    base = os.path.join(args.res, f'{kind}-{test}-{rnd}')
    io = kv(base + '.io')
    if test == 'tree':
        t = kv(base + '.txt')
        value = t['bytes'] / (t['centiseconds'] / 100) / 1e6
    else:
        with open(base + '.json') as f:
            read = json.load(f)['jobs'][0]['read']
        value = read['bw_bytes'] / 1e6 if test == 'seq' else read['iops']
    ratio = io['hash_sectors'] / io['data_sectors'] if io['data_sectors'] else 0
    return value, ratio


rounds = sorted({int(m.group(1)) for p in glob.glob(os.path.join(args.res, 'raw-seq-*.io'))
                 for m in [re.search(r'-(\d+)\.io$', p)]})
res = {}
for test in TESTS:
    res[test] = {}
    for kind in KINDS:
        vals = [one(kind, test, r) for r in rounds]
        res[test][kind] = {
            'value': statistics.median(v for v, _ in vals),
            'hash_bytes_per_data_byte': statistics.median(h for _, h in vals),
            'runs': [v for v, _ in vals],
        }
kernel = '?'
if os.path.exists(os.path.join(args.res, 'kernel.txt')):
    with open(os.path.join(args.res, 'kernel.txt')) as f:
        kernel = f.read().strip()
# The machine the guest ran on: TCG's speed, and so every absolute figure,
# follows the host CPU (which of its extensions qemu's helpers can use), so
# runs on different hosts compare by their ratios only.
machine = {'cpu': '?', 'cpus': os.cpu_count(), 'qemu': '?'}
with open('/proc/cpuinfo') as f:
    for line in f:
        if line.startswith('model name'):
            machine['cpu'] = line.split(':', 1)[1].strip()
            break
try:
    machine['qemu'] = subprocess.run(['qemu-system-x86_64', '--version'], capture_output=True,
                                     text=True, check=True).stdout.splitlines()[0]
except (OSError, subprocess.CalledProcessError, IndexError):
    pass
host = {}
with open(args.host) as f:
    for line in f:
        k, v = line.split()
        host.setdefault(k, []).append(float(v))
host_med = {k: statistics.median(v) for k, v in host.items()}
sizes = {'image': os.path.getsize(args.image), 'extverity_hash': os.path.getsize(args.ehash),
         'veritysetup_hash': os.path.getsize(args.vhash)}
# "format|verify IMAGE KIB" lines: peak RSS of the tool.
rss = {}
if args.rss:
    with open(args.rss) as f:
        for line in f:
            cmd, image, kib = line.split()
            rss[f'{cmd} {image}'] = int(kib)
# "verify many-N SECONDS" lines: verify of an image of N small files.
verify = {}
if args.verify:
    with open(args.verify) as f:
        for line in f:
            cmd, image, sec = line.split()
            verify.setdefault(f'{cmd} {image}', []).append(float(sec))
out = {
    'rss_kib': rss,
    'verify_seconds': verify,
    'verify_median_seconds': {k: statistics.median(v) for k, v in verify.items()},
    'rounds': len(rounds), 'files': int(args.files), 'file_bytes': int(args.file_bytes),
    'free_blocks': int(args.free_blocks),
    'sizes': sizes, 'host_seconds': host, 'host_median_seconds': host_med,
    'guest': res,
    'kernel': kernel,
    'machine': machine,
}
with open(args.out + '.json', 'w') as f:
    json.dump(out, f, indent=1)

md = [f'# make bench ({len(rounds)} rounds, medians; guest under qemu TCG; kernel {kernel})', '',
      f'Host: {machine["cpu"]}, {machine["cpus"]} CPUs; {machine["qemu"]}.', '',
      f'Reference image: {sizes["image"] >> 20} MiB, {args.files} files '
      f'({int(args.file_bytes) >> 20} MiB of file data, sizes from Debian 12 /usr; '
      f'{int(args.free_blocks) * 4096 * 100 / sizes["image"]:.1f} % of its blocks free).', '',
      'dm-verity and extverity are each measured without and with '
      '`try_verify_in_tasklet` (bh); ext/verity is the better extverity against '
      'the better dm-verity (the one the hash columns describe; * marks bh).', '',
      '| test | unit | raw | dm-verity | dm-verity bh | extverity | extverity bh '
      '| ext/verity | ext/raw | hash B per data B: verity | extverity | ext/verity |',
      '|---|---|---|---|---|---|---|---|---|---|---|---|']
chart = []
for test, (name, unit) in TESTS.items():
    r = res[test]
    rv = r['raw']['value']
    v1, vb = r['verity']['value'], r['verity-bh']['value']
    e1, eb = r['extverity']['value'], r['extverity-bh']['value']
    best = 'verity-bh' if vb > v1 else 'verity'
    ebest = 'extverity-bh' if eb > e1 else 'extverity'
    vv, ev = r[best]['value'], r[ebest]['value']
    eh, vh = (r[ebest]['hash_bytes_per_data_byte'],
              r[best]['hash_bytes_per_data_byte'])
    hr = f'{eh / vh:.2f}' if vh else '-'
    vbs = f'{vb:.1f}' + ('*' if best == 'verity-bh' else '')
    ebs = f'{eb:.1f}' + ('*' if ebest == 'extverity-bh' else '')
    md.append(f'| {name} | {unit} | {rv:.1f} | {v1:.1f} | {vbs} | {e1:.1f} '
              f'| {ebs} | {ev / vv:.2f}x '
              f'| {ev / rv:.2f}x | {vh:.4f} | {eh:.4f} | {hr} |')
    chart.append((test, ev / vv, eh / vh if vh else 0))
e, v = host_med['extverity'], host_med['veritysetup']
md += ['', '| host (median of %d) | seconds | vs veritysetup |' % len(host['extverity']),
       '|---|---|---|',
       f'| extverity format | {e:.3f} | {v / e:.2f}x faster than veritysetup format |',
       f'| veritysetup format | {v:.3f} | 1.00x |',
       f'| fsverity digest, every file, {os.cpu_count()} processes | {host_med["fsverity"]:.3f} | {v / host_med["fsverity"]:.2f}x |',
       ]
if 'extverity-verify' in host_med:
    ve, vv = host_med['extverity-verify'], host_med['veritysetup-verify']
    md += [f'| extverity verify | {ve:.3f} | {vv / ve:.2f}x faster than veritysetup verify |',
           f'| veritysetup verify | {vv:.3f} | 1.00x |']
if 'extverity-fec' in host_med:
    fe, fv = host_med['extverity-fec'], host_med['veritysetup-fec']
    # The parity's own cost: format with it, less format without.
    pe, pv = fe - e, fv - v
    md += [f'| extverity format --fec-device, 2 roots | {fe:.3f} | {fv / fe:.2f}x faster than veritysetup format --fec-device |',
           f'| veritysetup format --fec-device, 2 roots | {fv:.3f} | 1.00x |',
           f'| the parity alone: extverity (goal: within 1.5x veritysetup) | {pe:.3f} | {pv / pe if pe > 0 else float("inf"):.2f}x faster than veritysetup |',
           f'| the parity alone: veritysetup | {pv:.3f} | 1.00x |']
md += [
       '', f'Hash area: extverity {sizes["extverity_hash"]} B, veritysetup '
       f'{sizes["veritysetup_hash"]} B ({sizes["extverity_hash"] / sizes["veritysetup_hash"]:.3f}x).']
if rss:
    md += ['', '| peak RSS (goal for sparse-8G: < 64 MiB) | MiB |', '|---|---|']
    md += [f'| extverity {k} | {v / 1024:.1f} |' for k, v in rss.items()]
if verify:
    md += ['', '| verify (goal for many-100000: < 1 s) | median s | runs |', '|---|---|---|']
    md += [f'| extverity {k} files | {statistics.median(v):.3f} | {len(v)} |'
           for k, v in verify.items()]
with open(args.out + '.md', 'w') as f:
    f.write('\n'.join(md) + '\n')

if shutil.which('gnuplot'):
    dat = args.out + '.dat'
    with open(dat, 'w') as f:
        for t, speed, hashio in chart:
            f.write(f'{t} {speed:.4f} {hashio:.4f}\n')
    script = f'''set terminal png size 800,400
set output "{args.out}.png"
set title "extverity / best dm-verity (same run)"
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.8
set yrange [0:*]
set grid ytics
set key outside below
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2
plot "{dat}" using 2:xtic(1) title "speed ratio (>= 1 is the goal)", "" using 3 title "hash bytes read ratio (<= 0.33 is the goal)"
'''
    subprocess.run(['gnuplot'], input=script.encode(), check=True)
    os.unlink(dat)
