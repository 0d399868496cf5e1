#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""halfdir: read a directory with getdents64 in two halves on one open fd.

usage: halfdir.py DIR COUNT READY GO OUT [rewind]
Opens DIR, reads at least COUNT names with a small getdents64 buffer,
writes them to OUT, creates the file READY and waits until the file GO
exists (the server is remounted meanwhile), then reads on to the end on
the same descriptor and appends the rest to OUT.  Lines of OUT: "1 NAME"
for the first part, "2 NAME" for the rest; "." and ".." are left out.
With "rewind", the descriptor is then sought to 0 (rewinddir) and read
whole again: lines "3 NAME".
An error is written as "error ERRNO-NAME" and the exit status is 1.
"""
import ctypes
import errno
import os
import struct
import sys
import time

libc = ctypes.CDLL(None, use_errno=True)
SYS_getdents64 = 217


def getdents(fd, buf):
    n = libc.syscall(SYS_getdents64, fd, buf, len(buf))
    if n < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    names, off = [], 0
    while off < n:
        _ino, _doff, reclen, _typ = struct.unpack_from("<QqHB", buf, off)
        name = bytes(buf[off + 19:off + reclen]).split(b"\0", 1)[0].decode()
        if name not in (".", ".."):
            names.append(name)
        off += reclen
    return n, names


def main():
    d, count, ready, go, out = sys.argv[1:6]
    rewind = sys.argv[6:] == ["rewind"]
    buf = ctypes.create_string_buffer(2048)
    fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    with open(out, "w") as f:
        try:
            part = 1
            got = 0
            while True:
                if part == 1 and got >= int(count):
                    f.flush()
                    open(ready, "w").close()
                    while not os.path.exists(go):
                        time.sleep(0.2)
                    part = 2
                n, names = getdents(fd, buf)
                if n == 0 and rewind and part == 2:
                    os.lseek(fd, 0, os.SEEK_SET)
                    part = 3
                    continue
                if n == 0:
                    break
                for name in names:
                    f.write("%d %s\n" % (part, name))
                got += len(names)
        except OSError as e:
            f.write("error %s\n" % errno.errorcode.get(e.errno, str(e.errno)))
            open(ready, "w").close()
            sys.exit(1)


main()
