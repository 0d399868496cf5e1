#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""mount(2) and umount2(2) without mount(8), so tests see the errno.

usage: sysmount.py mount SOURCE TARGET FSTYPE [FLAGS [DATA]]
       sysmount.py remount TARGET FLAGS [DATA]
       sysmount.py umount TARGET
FLAGS is a comma list of: ro, remount, none.
Prints OK, or the errno name (ENOENT, EINVAL, ...); exit 0 either way,
1 on usage errors.
"""
import ctypes
import errno
import os
import sys

MS = {"ro": 1, "remount": 32, "none": 0}

libc = ctypes.CDLL(None, use_errno=True)


def flags(spec):
    v = 0
    for f in spec.split(","):
        if f:
            v |= MS[f]
    return v


def report(rc):
    if rc == 0:
        print("OK")
    else:
        print(errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno())))


def main(argv):
    if len(argv) >= 5 and argv[1] == "mount":
        src, tgt, fstype = argv[2:5]
        fl = flags(argv[5]) if len(argv) > 5 else 0
        data = argv[6].encode() if len(argv) > 6 else None
        report(libc.mount(src.encode(), tgt.encode(), fstype.encode(),
                          ctypes.c_ulong(fl), data))
    elif len(argv) >= 4 and argv[1] == "remount":
        tgt = argv[2]
        fl = flags(argv[3]) | MS["remount"]
        data = argv[4].encode() if len(argv) > 4 else None
        report(libc.mount(None, tgt.encode(), None, ctypes.c_ulong(fl), data))
    elif len(argv) == 3 and argv[1] == "umount":
        report(libc.umount2(argv[2].encode(), 0))
    else:
        sys.stderr.write(__doc__)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
