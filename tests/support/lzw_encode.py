#!/usr/bin/env python3
"""LZW as Go's compress/lzw writes it with order LSB and literal width 8,
the compressor etcd-backup-restore uses for its ".Z" snapshots.

The algorithm and its code sequence are those of Go's Writer (1.17 and
later): a clear code (256) first, codes 9 bits wide growing by one bit
each time the next code to assign reaches a power of two, a clear code
when it reaches 4095 (the table starts again at 9 bits), the last pending
code and the end code (257) on close, and the final bits padded to a
byte. Codes are packed least significant bit first.

    Writer(f).write(b) ... .close()   streams into the binary file f
    python3 lzw_encode.py < in > out  the same on stdin and stdout
"""
import sys

CLEAR = 256
END = 257
MAX_CODE = 4095


class Writer:
    def __init__(self, f):
        self.f = f
        self.bits = 0
        self.nbits = 0
        self.out = bytearray()
        self.table = {}
        self.width = 9
        self.hi = END
        self.overflow = 512
        self.saved = None  # the pending code; None before the first byte

    def _code(self, c):
        self.bits |= c << self.nbits
        self.nbits += self.width
        while self.nbits >= 8:
            self.out.append(self.bits & 0xFF)
            self.bits >>= 8
            self.nbits -= 8
        if len(self.out) >= 1 << 16:
            self.f.write(bytes(self.out))
            self.out.clear()

    def _inc_hi(self):
        """Go's incHi: False when the table was full and has been cleared."""
        self.hi += 1
        if self.hi == self.overflow:
            self.width += 1
            self.overflow <<= 1
        if self.hi == MAX_CODE:
            self._code(CLEAR)
            self.width = 9
            self.hi = END
            self.overflow = 512
            self.table.clear()
            return False
        return True

    def write(self, data):
        if not data:
            return
        data = memoryview(data)
        code = self.saved
        if code is None:
            self._code(CLEAR)
            code, data = data[0], data[1:]
        table = self.table
        for x in data:
            key = code << 8 | x
            hit = table.get(key)
            if hit is not None:
                code = hit
                continue
            self._code(code)
            code = x
            if self._inc_hi():
                table[key] = self.hi
        self.saved = code

    def close(self):
        if self.saved is not None:
            self._code(self.saved)
            self._inc_hi()
        else:
            self._code(CLEAR)
        self._code(END)
        if self.nbits > 0:
            self.out.append(self.bits & 0xFF)
        self.f.write(bytes(self.out))
        self.out.clear()


if __name__ == "__main__":
    w = Writer(sys.stdout.buffer)
    while True:
        piece = sys.stdin.buffer.read(1 << 20)
        if not piece:
            break
        w.write(piece)
    w.close()
