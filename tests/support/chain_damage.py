#!/usr/bin/env python3
"""Damage a copy of a snapshot object for the verify corpus (tests/e2e/sidecar_verify_chain.sh).

  chain_damage.py truncate IN OUT     the first half of IN's bytes
  chain_damage.py flip IN OUT         one byte in the middle of IN inverted
  chain_damage.py rehash IN OUT       an uncompressed snapshot whose last 32 bytes (its
                                      SHA-256) are replaced by the SHA-256 of something else
"""
import hashlib
import sys


def main():
    op, src, dst = sys.argv[1:4]
    data = bytearray(open(src, "rb").read())
    if op == "truncate":
        data = data[: len(data) // 2]
    elif op == "flip":
        data[len(data) // 2] ^= 0xFF
    elif op == "rehash":
        data[-32:] = hashlib.sha256(b"not these events").digest()
    else:
        sys.exit("unknown op " + op)
    open(dst, "wb").write(bytes(data))


if __name__ == "__main__":
    main()
