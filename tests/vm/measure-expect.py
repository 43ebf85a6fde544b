#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What `dmsetup message DEV 0 measure INODE` must answer, from sources
independent of extverity: e2fsprogs' debugfs for the inode of each path
of an ext4 image, fsverity-utils' `fsverity digest` for the digest of the
same file in the source tree the image was made from.

measure-expect.py IMAGE SRCDIR HASH_ALG BLOCK_SIZE SALT_HEX|- [PATHS_OUT]

Prints "INODE DIGEST" per regular file (one line an inode: hard links
agree, else it fails), sorted by inode, then to stderr a summary.  Fails
when a regular file of the image has no source file, or the reverse.
With PATHS_OUT, also writes there what `extverity measure` must print
for every path of a regular file, run in the image's mount point on the
paths sorted bytewise: "DIGEST ./PATH" lines (fsverity measure's form).
"""
import os
import subprocess
import sys


def debugfs_files(image):
    """{path: inode} of every regular file, and the directories' inodes."""
    files, dirs = {}, {}
    todo = ['/']
    while todo:
        batch, todo = todo, []
        cmds = ''.join('ls -p "%s"\n' % d for d in batch)
        out = subprocess.run(['debugfs', '-f', '-', image], input=cmds.encode(),
                             capture_output=True, check=True).stdout
        cur = None
        for line in out.decode('utf-8', 'surrogateescape').splitlines():
            if line.startswith('debugfs: ls -p '):
                cur = line[len('debugfs: ls -p '):].strip('"')
                continue
            f = line.split('/')
            if cur is None or len(f) < 7 or f[0] != '':
                continue
            ino, mode, name = int(f[1]), int(f[2], 8), f[5]
            if name in ('.', '..'):
                continue
            path = cur.rstrip('/') + '/' + name
            if mode & 0o170000 == 0o100000:
                files[path] = ino
            elif mode & 0o170000 == 0o040000 and name != 'lost+found':
                dirs[path] = ino
                todo.append(path)
    return files, dirs


def main():
    image, src, alg, bs, salt = sys.argv[1:6]
    paths_out = sys.argv[6] if len(sys.argv) > 6 else None
    files, dirs = debugfs_files(image)
    srcfiles = set()
    for root, _, names in os.walk(src):
        for n in names:
            p = os.path.join(root, n)
            if os.path.isfile(p) and not os.path.islink(p):
                srcfiles.add('/' + os.path.relpath(p, src))
    if set(files) != srcfiles:
        sys.exit('image and source differ: only in the image %s, only in the source %s' %
                 (sorted(set(files) - srcfiles)[:3], sorted(srcfiles - set(files))[:3]))
    paths = sorted(files)
    cmd = ['fsverity', 'digest', '--hash-alg=' + alg, '--block-size=' + bs]
    if salt != '-':
        cmd.append('--salt=' + salt)
    digest = {}
    for i in range(0, len(paths), 200):
        chunk = paths[i:i + 200]
        out = subprocess.run(cmd + [src + p for p in chunk], capture_output=True,
                             check=True).stdout.decode('utf-8', 'surrogateescape')
        lines = out.splitlines()
        assert len(lines) == len(chunk), out
        for p, line in zip(chunk, lines):
            d, _, name = line.partition(' ')
            assert name == src + p, (name, p)
            digest[p] = d
    by_inode = {}
    for p in paths:
        if by_inode.setdefault(files[p], digest[p]) != digest[p]:
            sys.exit('hard links of inode %d differ' % files[p])
    for ino in sorted(by_inode):
        print(ino, by_inode[ino])
    if paths_out:
        with open(paths_out, 'wb') as f:
            for p in sorted(paths, key=lambda q: q.encode('utf-8', 'surrogateescape')):
                f.write(('%s .%s\n' % (digest[p], p)).encode('utf-8', 'surrogateescape'))
    print('%d regular files, %d inodes, %d directories' %
          (len(paths), len(by_inode), len(dirs)), file=sys.stderr)


if __name__ == '__main__':
    main()
