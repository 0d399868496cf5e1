#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""fhandle: file handles through name_to_handle_at/open_by_handle_at.

usage: fhandle.py save PATH FILE     write PATH's handle to FILE
       fhandle.py open MNT FILE      open the handle in FILE on the
                                     filesystem mounted at MNT; print
                                     "ino=N data=TEXT" (file) or
                                     "ino=N dir=NAME,NAME,..." (directory),
                                     or the errno name of the failure
       fhandle.py append MNT FILE TEXT
                                     open the handle in FILE for appending
                                     and write TEXT and a newline (exit 1
                                     and the errno name on failure)
       fhandle.py edit FILE OFF HEX  overwrite handle bytes at OFF
A saved handle is one line: "TYPE HEXBYTES".  Exit status 0 unless the
arguments are wrong (an errno is output, not a failure).
"""
import ctypes
import errno
import os
import stat
import sys

libc = ctypes.CDLL(None, use_errno=True)
MAX_HANDLE_SZ = 128


class FileHandle(ctypes.Structure):
    _fields_ = [("handle_bytes", ctypes.c_uint), ("handle_type", ctypes.c_int),
                ("f_handle", ctypes.c_ubyte * MAX_HANDLE_SZ)]


def ename(e):
    return errno.errorcode.get(e, "E%d" % e)


def save(path, out):
    fh = FileHandle(handle_bytes=MAX_HANDLE_SZ)
    mount_id = ctypes.c_int()
    if libc.name_to_handle_at(-100, path.encode(), ctypes.byref(fh),
                              ctypes.byref(mount_id), 0) != 0:
        print(ename(ctypes.get_errno()))
        return
    with open(out, "w") as f:
        f.write("%d %s\n" % (fh.handle_type,
                             bytes(fh.f_handle[:fh.handle_bytes]).hex()))
    print("type=%d bytes=%d" % (fh.handle_type, fh.handle_bytes))


def load(path):
    t, hx = open(path).read().split()
    b = bytes.fromhex(hx)
    fh = FileHandle(handle_bytes=len(b), handle_type=int(t))
    ctypes.memmove(fh.f_handle, b, len(b))
    return fh


def open_handle(mnt, path):
    fh = load(path)
    mfd = os.open(mnt, os.O_RDONLY | os.O_DIRECTORY)
    fd = libc.open_by_handle_at(mfd, ctypes.byref(fh), os.O_RDONLY)
    err = ctypes.get_errno()
    os.close(mfd)
    if fd < 0:
        print(ename(err))
        return
    st = os.fstat(fd)
    if stat.S_ISDIR(st.st_mode):
        names = sorted(os.listdir("/proc/self/fd/%d" % fd))
        print("ino=%d dir=%s" % (st.st_ino, ",".join(names)))
    else:
        data = os.read(fd, 4096).decode(errors="replace")
        print("ino=%d data=%s" % (st.st_ino, data.strip().replace("\n", "|")))
    os.close(fd)


def append(mnt, path, text):
    fh = load(path)
    mfd = os.open(mnt, os.O_RDONLY | os.O_DIRECTORY)
    fd = libc.open_by_handle_at(mfd, ctypes.byref(fh),
                                os.O_WRONLY | os.O_APPEND)
    err = ctypes.get_errno()
    os.close(mfd)
    if fd < 0:
        print(ename(err))
        sys.exit(1)
    os.write(fd, (text + "\n").encode())
    os.close(fd)


def edit(path, off, hx):
    t, old = open(path).read().split()
    b = bytearray(bytes.fromhex(old))
    new = bytes.fromhex(hx)
    b[off:off + len(new)] = new
    with open(path, "w") as f:
        f.write("%s %s\n" % (t, b.hex()))


def main():
    a = sys.argv[1:]
    if len(a) == 3 and a[0] == "save":
        save(a[1], a[2])
    elif len(a) == 3 and a[0] == "open":
        open_handle(a[1], a[2])
    elif len(a) == 4 and a[0] == "append":
        append(a[1], a[2], a[3])
    elif len(a) == 4 and a[0] == "edit":
        edit(a[1], int(a[2]), a[3])
    else:
        sys.stderr.write(__doc__)
        sys.exit(2)


main()
