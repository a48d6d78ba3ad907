#!/usr/bin/env python3
"""extract-vmlinux.py - write the uncompressed ELF vmlinux held in a bzImage.

Debian 12's kernels are xz-compressed (CONFIG_KERNEL_XZ), Debian 13's zstd
(CONFIG_KERNEL_ZSTD; decompressed with the zstd program, which Python 3.11
lacks a module for). Booting the ELF vmlinux through its PVH entry point
skips the in-guest decompression, which under TCG halves the boot.
Usage: extract-vmlinux.py BZIMAGE OUTPUT
"""
import lzma
import os
import subprocess
import sys


def unxz(payload):
    try:
        return lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(payload)
    except lzma.LZMAError:
        return b""


def unzstd(payload):
    # zstd stops with an error at the bytes that follow the frame (the
    # bzImage's trailer), after writing the whole frame: judge by the output.
    return subprocess.run(["zstd", "-dcq"], input=payload, capture_output=True).stdout


FORMATS = [(b"\xfd7zXZ\x00", unxz), (b"\x28\xb5\x2f\xfd", unzstd)]


def find_vmlinux(data):
    for magic, decompress in FORMATS:
        start = 0
        while (pos := data.find(magic, start)) >= 0:
            out = decompress(data[pos:])
            if out[:4] == b"\x7fELF":
                return out
            start = pos + 1
    return None


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: extract-vmlinux.py BZIMAGE OUTPUT")
    out = find_vmlinux(open(sys.argv[1], "rb").read())
    if out is None:
        sys.exit("no xz or zstd payload with an ELF kernel in " + sys.argv[1])
    tmp = sys.argv[2] + ".tmp"
    with open(tmp, "wb") as f:
        f.write(out)
    os.replace(tmp, sys.argv[2])


if __name__ == "__main__":
    main()
