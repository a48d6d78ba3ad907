#!/usr/bin/env python3
"""extract-vmlinux.py - write the uncompressed ELF vmlinux held in a bzImage.

Debian's kernels are xz-compressed (CONFIG_KERNEL_XZ). Booting the ELF
vmlinux through its PVH entry point skips the in-guest decompression, which
under TCG halves the boot. Usage: extract-vmlinux.py BZIMAGE OUTPUT
"""
import lzma
import os
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: extract-vmlinux.py BZIMAGE OUTPUT")
    data = open(sys.argv[1], "rb").read()
    start = 0
    while True:
        pos = data.find(b"\xfd7zXZ\x00", start)
        if pos < 0:
            sys.exit("no xz payload with an ELF kernel in " + sys.argv[1])
        try:
            out = lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(data[pos:])
        except lzma.LZMAError:
            out = b""
        if out[:4] == b"\x7fELF":
            break
        start = pos + 1
    tmp = sys.argv[2] + ".tmp"
    with open(tmp, "wb") as f:
        f.write(out)
    os.replace(tmp, sys.argv[2])


if __name__ == "__main__":
    main()
