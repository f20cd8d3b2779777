#!/usr/bin/env python3
"""Write a stand-in for an etcd full snapshot, as warden-snapshot verifies it.

    snap_fixture.py FILE BYTES [NAME]

FILE gets BYTES random bytes, rounded up to whole 512-byte sectors as an
etcd (bbolt) database is, followed by the SHA-256 of those bytes: what
`etcdctl snapshot save` writes. NAME (default FILE) says the compression as
etcd-backup-restore names its snapshots: a name ending in ".gz" (before an
optional ".final") is gzip, ".zlib" zlib, ".Z" LZW (Go's compress/lzw, LSB,
literal width 8); anything else is written as it is. Memory stays at one
1 MiB piece whatever BYTES is. Prints nothing; exit status 2 on bad usage.
"""
import gzip
import hashlib
import os
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lzw_encode  # noqa: E402

PIECE = 1 << 20


def compression(name):
    base = os.path.basename(name)
    if base.endswith(".final"):
        base = base[: -len(".final")]
    for suffix in (".gz", ".zlib", ".Z"):
        if base.endswith(suffix):
            return suffix
    return ""


class Plain:
    def __init__(self, f):
        self.f = f

    def write(self, b):
        self.f.write(b)

    def close(self):
        pass


class Zlib:
    def __init__(self, f):
        self.f = f
        self.z = zlib.compressobj(1)

    def write(self, b):
        self.f.write(self.z.compress(b))

    def close(self):
        self.f.write(self.z.flush())


def main(argv):
    if len(argv) not in (3, 4) or not argv[2].isdigit():
        print(__doc__, file=sys.stderr)
        return 2
    path, size = argv[1], int(argv[2])
    size = (size + 511) // 512 * 512
    comp = compression(argv[3] if len(argv) == 4 else path)
    with open(path, "wb") as f:
        if comp == ".gz":
            out = gzip.GzipFile(fileobj=f, mode="wb", compresslevel=1, mtime=0)
        elif comp == ".zlib":
            out = Zlib(f)
        elif comp == ".Z":
            out = lzw_encode.Writer(f)
        else:
            out = Plain(f)
        h = hashlib.sha256()
        left = size
        while left > 0:
            b = os.urandom(min(left, PIECE))
            h.update(b)
            out.write(b)
            left -= len(b)
        out.write(h.digest())
        out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
