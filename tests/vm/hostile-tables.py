#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Hostile table lines for the extverity target (tests/vm/t-vm-hostile.sh).

hostile-tables.py gen OUTDIR LEN ROOT DISK_SECTORS
    Writes OUTDIR/table-cases ("ID WANT MODE TABLE...", WANT V must load,
    R must be refused; MODE ro or rw) and OUTDIR/table-expect
    ("ID WANT NAME<TAB>REGEX" the kernel log must match for a refusal;
    an empty REGEX: dmsetup refuses the line itself, nothing reaches the
    kernel).  The data image is /dev/vdb, its valid hash area is at sector 0
    of /dev/vdc (DISK_SECTORS long).  Single-field mutations of every word,
    then seeded random combinations of two or three; the expected reason
    of a combination is the first in the target's order of checks
    (docs/table.md "Table load").

hostile-tables.py check EXPECT... -- RESULTS DMESG
    Checks the guest's RESULTS ("ID RC PRESENT READBACK" lines) against the
    EXPECT files, with the kernel log DMESG cut at the "EVTH ID" markers
    the guest wrote to /dev/kmsg.  An EXPECT line may give several REGEXes
    (tab-separated): each must match a log line of the case.  Prints
    "PASS name" / "FAIL name: why" lines and a count summary.
"""
import os
import random
import re
import sys

DATA, HASH = '/dev/vdb', '/dev/vdc'
OPTS = ['ignore_corruption', 'restart_on_corruption', 'panic_on_corruption',
        'restart_on_error', 'panic_on_error', 'check_at_most_once']
CORRUPTION = OPTS[:3]
U64 = (1 << 64) - 1
ERROR = OPTS[3:5]

# Reasons, in the order the kernel checks them (lower first).
ORDER = [
    ('dmsetup', ''),
    ('zero', r'zero-length target'),
    ('large', r'too large device'),
    ('gap', r'Gap in table'),
    ('arity', r'extverity: Not enough arguments'),
    ('rw', r'extverity: Device must be readonly'),
    ('version', r'extverity: Invalid version'),
    ('datadev', r'extverity: Data device lookup failed'),
    ('hashdev', r'extverity: Hash device lookup failed'),
    ('start', r'extverity: Invalid hash start sector'),
    ('beyond', r'extverity: Hash start beyond the end of the hash device'),
    ('alg', r'extverity: Unknown hash algorithm'),
    ('root', r'extverity: Invalid root digest'),
    ('opts', None),		# the option's own message
    ('sig', r'extverity: Root digest signature'),
    ('small', r'extverity: Hash device too small for a superblock'),
    ('sb', r'extverity: Superblock does not match the root digest'),
    ('len', r'extverity: Target length does not match the image size'),
]
RANK = {k: i for i, (k, _) in enumerate(ORDER)}

BAD_NUMBERS = ['-1', '-0x1', '0x10', 'x', '1.5', '1e3', '18446744073709551616',
               '99999999999999999999999', 'NaN', '1O', '0b1', '++1', '1-',
               '--1', '1_0']


def gen(outdir, length, root, disk_sectors):
    length = int(length)
    disk_sectors = int(disk_sectors)
    base = {'start': '0', 'len': str(length), 'version': '1',
            'data': DATA, 'hash': HASH, 'hstart': '0', 'alg': 'sha256',
            'root': root, 'opts': []}
    cases = []

    def add(name, want, reason, mode='ro', line=None, **kw):
        f = dict(base, **kw)
        # dm core checks start and length (as dmsetup parsed them) first.
        try:
            st, ln = int(f['start']) & U64, int(f['len']) & U64
            if not ln:
                core = 'zero'
            elif st + ln > U64 or st + ln > ((1 << 63) - 1) >> 9:
                core = 'large'
            elif st:
                core = 'gap'
            else:
                core = None
        except ValueError:
            core = 'dmsetup'
        if core and line is None:
            want, reason = 'R', (core, '' if core == 'dmsetup' else None)
        if line is None:
            words = [f['start'], f['len'], 'extverity', f['version'],
                     f['data'], f['hash'], f['hstart'], f['alg'], f['root']]
            words += f['opts']
            line = ' '.join(words)
        cases.append((name, want, mode, reason, line))

    # Fields: (key, value, reason, regex override).  Built once, used for
    # single mutations and for the random combinations.
    fields = []

    def fld(key, value, reason, regex=None):
        fields.append((key, value, reason, regex))

    for v in ['1', '2', '8191', str(length - 1), '-1', '4294967296',
              '18446744073709551615', '0x0', 'one']:
        # dmsetup reads start and length itself (strtoull-like): a
        # non-number never reaches the kernel; '-1' wraps.
        if v in ('0x0', 'one'):
            fld('start', v, 'dmsetup')
        else:
            fld('start', v, 'gap')
    fld('len', '0', 'zero')
    for v in ['1', '8', str(length - 8), str(length - 1), str(length + 1),
              str(length + 8), str(length * 2), str(length // 2),
              '4294967296', str(1 << 51), str((1 << 63) - 1)]:
        fld('len', v, 'len')
    for v in ['0', '2', '3', '-1', '1.0', '0x1', 'v1', '4294967297',
              '18446744073709551617', 'one', '1x', '-0x1', '0x10', 'x',
              '1.5', '1e3']:
        fld('version', v, 'version')
    devs = ['/dev/nonexistent', '/dev/vdz', '/dev/vdb9', '999:999',
            '4095:1048575', '4096:0', '-1:-1', ':', '253:', ':0', 'a:b',
            '/', '/dev', '/dev/null', '/dev/zero', '/dev/mapper/control',
            '/proc/self/fd/0', '/dev/vdb/', '/dev//vdq', '/dev/./vdq',
            '/sys/block/vdb', '8:0', '254:77', '259:4000', '0:1',
            'x' * 200, '/dev/' + 'y' * 300]
    for d in devs:
        fld('data', d, 'datadev')
        fld('hash', d, 'hashdev')
    for v in BAD_NUMBERS + ['0x0', '0x', '1s', '8k', '4096B']:
        fld('hstart', v, 'start')
    for v in [str(disk_sectors), str(disk_sectors + 1), '4294967296',
              str(1 << 63), '18446744073709551615', str(disk_sectors * 2)]:
        fld('hstart', v, 'beyond')
    fld('hstart', str(disk_sectors - 1), 'small')
    for v in ['1', '2', '7', '8', '64', '127', '128', '256',
              str(disk_sectors - 8), str(disk_sectors - 2)]:
        fld('hstart', v, 'sb')
    for v in ['sha1', 'SHA256', 'Sha256', 'sha-256', 'md5', 'crc32c', 'sha384',
              'sha3-256', 'blake2b-256', 'sha2566', 'sha25', 'sha256,',
              'hmac(sha256)', 'sha224', 'xxhash64', 'none', '0', '1', '2']:
        fld('alg', v, 'alg')
    fld('alg', 'sha512', 'root')	# a 64-digit root is wrong for sha512
    for v in ['', root[:-1], root + '0', root[:32], root * 2, root[1:] + 'g',
              'g' * 64, '-' + root[1:], root[:-2] + 'zz',
              '0x' + root[2:], root[:-1] + '.', 'G' + root[1:]]:
        if v:
            fld('root', v, 'root')
    for i in range(64):
        flipped = root[:i] + '%x' % (int(root[i], 16) ^ 1) + root[i + 1:]
        fld('root', flipped, 'sb')
    for v in ['0' * 64, 'f' * 64]:
        fld('root', v, 'sb')

    def opt(words, reason, regex=None):
        fld('opts', words, reason, regex)
    opt(['1'], 'opts', r'extverity: Invalid number of options')
    opt(['18446744073709551617'], 'opts',
        r'extverity: Invalid number of options')
    for n in ['9', '10', '-1', 'x', '1.0', '0x1', '4294967305']:
        opt([n], 'opts', r'extverity: Invalid number of options')
        opt([n, 'ignore_corruption'], 'opts',
            r'extverity: Invalid number of options')
    opt(['2', 'ignore_corruption'], 'opts',
        r'extverity: Invalid number of options')
    opt(['8'] + OPTS, 'opts', r'extverity: Invalid number of options')
    opt(['0', 'ignore_corruption'], 'opts',
        r'extverity: Unexpected argument after the options')
    opt(['1', 'ignore_corruption', 'check_at_most_once'], 'opts',
        r'extverity: Unexpected argument after the options')
    opt(['1', 'check_at_most_once', 'x'], 'opts',
        r'extverity: Unexpected argument after the options')
    for u in ['foo', 'IGNORE_CORRUPTION', 'ignore_corruption=1',
              'ignore_corruption,', 'ignore-corruption', 'ignore_zero_blocks',
              'use_fec_from_device_', 'fec_root', 'restart_on_corruption_',
              'check_at_most_twice', '--', '0', '1', 'panic', 'restart',
              'root_hash_sig_key_desc=x', 'sha256', root]:
        opt(['1', u], 'opts', r'extverity: Unknown option')
        opt(['2', 'check_at_most_once', u], 'opts',
            r'extverity: Unknown option')
    for o in OPTS:
        opt(['2', o, o], 'opts', r'extverity: Duplicate option')
    opt(['4', 'root_hash_sig_key_desc', 'a:b', 'root_hash_sig_key_desc',
         'a:b'], 'opts', r'extverity: Duplicate option')
    for grp in (CORRUPTION, ERROR):
        for a in grp:
            for b in grp:
                if a != b:
                    opt(['2', a, b], 'opts', r'extverity: Conflicting options')
                    opt(['3', a, 'check_at_most_once', b], 'opts',
                        r'extverity: Conflicting options')
    opt(['1', 'root_hash_sig_key_desc'], 'opts',
        r'extverity: Missing option argument')
    for o in ['use_fec_from_device', 'fec_roots', 'fec_blocks', 'fec_start']:
        opt(['1', o], 'opts', r'extverity: Missing option argument')
    for v in ['0', '1', '25', '-2', 'x', '4294967298']:
        opt(['2', 'fec_roots', v], 'opts',
            r'extverity: Invalid fec_roots \(2 to 24\)')
    for v in ['0', '-1', 'x', '18446744073709551616']:
        opt(['2', 'fec_blocks', v], 'opts', r'extverity: Invalid fec_blocks')
    for v in ['-1', 'x', '18446744073709551616']:
        opt(['2', 'fec_start', v], 'opts', r'extverity: Invalid fec_start')
    opt(['2', 'fec_roots', '2'], 'opts',
        r'extverity: FEC needs use_fec_from_device, fec_roots, '
        r'fec_blocks and fec_start')
    opt(['4', 'fec_start', '0', 'fec_start', '0'], 'opts',
        r'extverity: Duplicate option')
    opt(['2', 'check_at_most_once', 'root_hash_sig_key_desc'], 'opts',
        r'extverity: Missing option argument')
    for d in ['a,b', 'a;b', ',', 'x' * 5000]:
        opt(['2', 'root_hash_sig_key_desc', d], 'opts',
            r'extverity: Invalid signature key description')
    for d in ['evt:nokey', 'nokey', 'user:none']:
        opt(['2', 'root_hash_sig_key_desc', d], 'sig')

    # Counts past 2^32: device-mapper's dm_read_arg_group() would read
    # them modulo 2^32 (4294967297 as 1); the target parses <#opts>
    # itself and must refuse them.
    wrapped = [['4294967296'], ['4294967296', 'ignore_corruption'],
               ['4294967297', 'ignore_corruption'],
               ['4294967298', 'ignore_corruption', 'check_at_most_once'],
               ['18446744073709551617', 'ignore_corruption']]
    for k in wrapped:
        opt(k, 'opts', r'extverity: Invalid number of options')

    # Single mutations.
    for key, value, reason, regex in fields:
        show = value if isinstance(value, str) else ' '.join(value)
        kw = {key: value}
        add('%s=%s' % (key, show[:40]), 'R', (reason, regex), **kw)

    # Arity: the fixed words cut short.
    fixed = ['1', DATA, HASH, '0', 'sha256', root]
    for n in range(6):
        add('arity-%d' % n, 'R', ('arity', None),
            line=' '.join(['0', str(length), 'extverity'] + fixed[:n]))
    # The data image is no hash area.
    add('hash=data-image', 'R', ('sb', None), hash=DATA)
    add('rw', 'R', ('rw', None), mode='rw')
    add('rw-opts', 'R', ('rw', None), mode='rw',
        opts=['1', 'check_at_most_once'])

    # Lines that must load.
    add('valid', 'V', None)
    add('valid-0-opts', 'V', None, opts=['0'])
    add('valid-version-01', 'V', None, version='01')
    add('valid-version-plus', 'V', None, version='+1')
    add('valid-root-upper', 'V', None, root=root.upper())
    add('valid-hstart-plus', 'V', None, hstart='+0')
    for o in OPTS:
        add('valid-' + o, 'V', None, opts=['1', o])
    for a in CORRUPTION:
        for b in ERROR:
            add('valid-%s-%s' % (a, b), 'V', None,
                opts=['3', b, 'check_at_most_once', a])
    add('valid-three-reversed', 'V', None,
        opts=['3', 'check_at_most_once', 'panic_on_error',
              'ignore_corruption'])

    # Random combinations of two or three mutated fields.
    rng = random.Random(20261204)
    singles = len(cases)
    # HOSTILE_TABLES: lines in all (1100), never fewer than the single
    # faults (0: those alone, as check-debug runs them: each load is
    # slower on the debug kernel).
    want_total = max(int(os.environ.get('HOSTILE_TABLES', '1100')), singles)
    while len(cases) < want_total:
        k = rng.choice((2, 2, 3))
        picked = {}
        while len(picked) < k:
            f = rng.choice(fields)
            if f[0] not in picked:
                picked[f[0]] = f
        if 'alg' in picked and 'root' in picked:
            continue	# a sha512 line with a 128-digit root is well formed
        # Only the earliest check's reason is reported.
        first = min(picked.values(), key=lambda f: RANK[f[2]])
        # Two reasons of the same rank (hash start parse, sb): any of them.
        same = [f for f in picked.values() if RANK[f[2]] == RANK[first[2]]]
        regex = '|'.join(sorted({f[3] or dict(ORDER)[f[2]] for f in same}))
        kw = {key: f[1] for key, f in picked.items()}
        add('combo-%s' % '+'.join(sorted(picked)), 'R',
            (first[2], regex), **kw)

    with open(outdir + '/table-cases', 'w') as fc, \
            open(outdir + '/table-expect', 'w') as fe:
        for i, (name, want, mode, reason, line) in enumerate(cases):
            cid = 't%04d' % i
            assert '\n' not in line and '\\' not in line
            fc.write('%s %s %s %s\n' % (cid, want, mode, line))
            if reason is None:
                regex = ''
            else:
                regex = reason[1]
                if regex is None:
                    regex = dict(ORDER)[reason[0]]
            fe.write('%s %s %s\t%s\n' % (cid, want, name.replace(' ', '_'),
                                         regex))
    print('%d table lines (%d single, %d valid)' %
          (len(cases), singles, sum(1 for c in cases if c[1] == 'V')))


def check(expect_files, results, dmesg):
    expect = {}
    for fn in expect_files:
        for line in open(fn):
            head, _, regex = line.rstrip('\n').partition('\t')
            cid, want, name = head.split(' ', 2)
            expect[cid] = (want, name, regex, fn)
    got = {}
    for line in open(results):
        w = line.split()
        if len(w) >= 4:
            got[w[0]] = w[1:4]
    # Kernel log lines of each case: from its marker to the next one.
    seg = {}
    cur = None
    for line in open(dmesg, errors='replace'):
        m = re.search(r'EVTH (\w+)$', line.rstrip())
        if m:
            cur = m.group(1)
            seg[cur] = []
        elif cur:
            seg[cur].append(line.rstrip())
    stats = {}
    fails = 0
    for cid, (want, name, regex, fn) in sorted(expect.items()):
        kind = {'m': 'manifest', 'l': 'lbs'}.get(cid[0], 'table')
        st = stats.setdefault(kind, {'tried': 0, 'refused': 0,
                                     'accepted': 0, 'reason-ok': 0,
                                     'no-kernel-msg': 0})
        why = None
        if cid not in got:
            why = 'not run'
        else:
            st['tried'] += 1
            rc, present, readback = got[cid]
            log = seg.get(cid, [])
            if rc == '0':
                st['accepted'] += 1
            else:
                st['refused'] += 1
            if present != '0':
                why = 'a device is left after the case (rc %s)' % rc
            elif want == 'V':
                rxs = regex.split('\t') if regex else []
                ours = [ln for ln in log if 'extverity' in ln]
                if rc != '0':
                    why = 'valid case refused (rc %s): %s' % (
                        rc, ' | '.join(log[-2:]))
                elif readback != 'ok':
                    why = 'loaded but read back %s' % readback
                elif [sum(1 for ln in ours if re.search(rx, ln))
                      for rx in rxs] != [1] * len(rxs) or \
                        len(ours) != len(rxs):
                    why = 'the kernel log is not one line for each of ' \
                          '/%s/: %s' % ('/, /'.join(rxs),
                                        ' | '.join(ours[:3]) or 'nothing')
            elif rc == '0':
                why = 'hostile case ACCEPTED by the kernel'
            elif regex:
                missing = [rx for rx in regex.split('\t')
                           if not any(re.search(rx, ln) for ln in log)]
                if missing:
                    why = 'no /%s/ in the kernel log: %s' % (
                        '/, /'.join(missing), ' | '.join(log[-3:]) or 'nothing')
                else:
                    st['reason-ok'] += 1
            else:
                if any('extverity' in ln for ln in log):
                    why = 'dmsetup should refuse it itself, the kernel ' \
                          'saw it: ' + ' | '.join(log[-2:])
                st['no-kernel-msg'] += 1
        if why:
            fails += 1
            print('FAIL %s %s: %s' % (cid, name, why))
    for kind, st in sorted(stats.items()):
        print('COUNT %s %s' % (kind, ' '.join('%s=%d' % kv
                                              for kv in sorted(st.items()))))
    print('COUNT failures=%d' % fails)
    return 1 if fails else 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == 'gen':
        gen(*sys.argv[2:6])
        return 0
    if len(sys.argv) > 1 and sys.argv[1] == 'check':
        args = sys.argv[2:]
        sep = args.index('--')
        return check(args[:sep], *args[sep + 1:sep + 3])
    sys.exit(__doc__)


if __name__ == '__main__':
    sys.exit(main())
