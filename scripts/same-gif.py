#!/usr/bin/env python3
"""Prints 'identical' when two GIFs hold the same frames (every block but comments, which
record the command line), else 'DIFFERENT'. Usage: same-gif.py A.gif B.gif"""
import sys


def blocks(path):
    data = open(path, "rb").read()
    out, i = [data[:13]], 13
    flags = data[10]
    if flags & 0x80:  # global colour table
        size = 3 * 2 ** ((flags & 7) + 1)
        out.append(data[i : i + size])
        i += size

    def sub_blocks(i):
        start = i
        while data[i]:
            i += data[i] + 1
        return data[start : i + 1], i + 1

    while i < len(data) and data[i] != 0x3B:
        if data[i] == 0x21:  # extension: label, then sub-blocks
            label = data[i + 1]
            body, j = sub_blocks(i + 2)
            if label != 0xFE:  # keep all but comments
                out.append(data[i : i + 2] + body)
            i = j
        elif data[i] == 0x2C:  # image: descriptor, local table, LZW code size, data
            desc = data[i : i + 10]
            j = i + 10
            if desc[9] & 0x80:
                j += 3 * 2 ** ((desc[9] & 7) + 1)
            body, k = sub_blocks(j + 1)
            out.append(data[i : j + 1] + body)
            i = k
        else:
            raise SystemExit(f"{path}: not a GIF block at byte {i}")
    return out


a, b = blocks(sys.argv[1]), blocks(sys.argv[2])
print("identical" if a == b and len(a) > 2 else "DIFFERENT")
