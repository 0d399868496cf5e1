#!/bin/bash
# timeout: 300
# A directory in use while a branch change moves its top part (issue 11).
# d/ is shown from lower branches only; a process has it as working
# directory, holds it open (a listing half read) and watches it with
# inotify (IN_OPEN).  remount,add= puts a branch with d/ above it, then del=
# takes that branch away again.  Its number is its oldest part's, so
# it stays, and so must the directory: one inode, not a second one of
# the same number.  After each change: getcwd() is still the path (not
# "... (deleted)"), "." has the union path's inode number and lists the
# new set of names, an inotify watch set before sees an open made
# through the path after, and the half-read listing goes on with the
# right d_ino (those of the branch it was opened on).  Nothing here
# writes: d/ stays lower-only throughout.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 b2=/mnt/b2 u=/mnt/u
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch ext4 "$(nth_disk 2)" $b1
mkbranch xfs "$(nth_disk 3)" $b2
mkodf_dev "$ODF_DEV"
mkdir -p $b1/d $b2/d
for i in $(seq -w 0 199); do : >$b1/d/f$i; done
echo c2 >$b2/d/c

union_mount $u "odf=$ODF_DEV,dirs=$b0=rw:$b1=ro"

python3 - "$u" "$b1" "$b2" <<'PYEND' || fail "the directory in use did not stay the same (above)"
import ctypes, os, struct, subprocess, sys

u, b1, b2 = sys.argv[1:]
libc = ctypes.CDLL(None, use_errno=True)
bad = []

def check(what, ok, detail=""):
    if not ok:
        bad.append("%s %s" % (what, detail))

def getdents(fd, size):
    """One getdents64 call with a SIZE-byte buffer: [(name, d_ino)]."""
    buf = ctypes.create_string_buffer(size)
    n = libc.syscall(217, fd, buf, size)
    if n < 0:
        raise OSError(ctypes.get_errno(), "getdents64")
    out, off = [], 0
    while off < n:
        ino, _, reclen, _ = struct.unpack_from("QqHB", buf.raw, off)
        name = buf.raw[off + 19:off + reclen].split(b"\0", 1)[0].decode()
        out.append((name, ino))
        off += reclen
    return out

def remount(opt):
    r = subprocess.run(["mount", "-o", "remount," + opt, u], capture_output=True, text=True)
    if r.returncode:
        print("mount -o remount,%s %s: %s" % (opt, u, r.stderr.strip()))
        sys.exit(1)

def events(ifd):
    """The names of the inotify events waiting on IFD."""
    names = []
    try:
        data = os.read(ifd, 65536)
    except BlockingIOError:
        return names
    off = 0
    while off < len(data):
        _, _, _, ln = struct.unpack_from("iIII", data, off)
        names.append(data[off + 16:off + 16 + ln].split(b"\0", 1)[0].decode())
        off += 16 + ln
    return names

d = u + "/d"
ino_d = os.stat(d).st_ino
os.chdir(d)
fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
first = getdents(fd, 256)            # a few entries; the rest after the change
ifd = libc.inotify_init1(os.O_NONBLOCK)
IN_OPEN = 0x20
check("inotify_add_watch", libc.inotify_add_watch(ifd, d.encode(), IN_OPEN) >= 0)
lower_ino = {n: os.stat(u + "/d/" + n).st_ino for n in os.listdir(d)}

def attempt(what, fn):
    try:
        return fn()
    except OSError as e:
        bad.append("%s: %s" % (what, e))
        return None

def same_dir(step, names):
    st = os.stat(d)     # looks d up again: the branch change shows here
    check(step + ": st_ino of d", st.st_ino == ino_d, "%d, was %d" % (st.st_ino, ino_d))
    st = attempt(step + ": stat .", lambda: os.stat("."))
    if st:
        check(step + ": st_ino of .", st.st_ino == ino_d, "%d, was %d" % (st.st_ino, ino_d))
    cwd = attempt(step + ": getcwd", os.getcwd)
    check(step + ": getcwd", cwd == d, repr(cwd))
    got = sorted(attempt(step + ": listdir .", lambda: os.listdir(".")) or [])
    check(step + ": names of .", got == names, "%s ... (%d names)" % (got[:4], len(got)))
    events(ifd)         # those of the listing of "."
    os.close(os.open(d, os.O_RDONLY | os.O_DIRECTORY))
    ev = events(ifd)
    check(step + ": inotify event of an open through the path", ev == [""], repr(ev))

base = sorted("f%03d" % i for i in range(200))
remount("add=1:%s=ro" % b2)
same_dir("add", sorted(base + ["c"]))
# The listing opened on b1's d/ goes on with b1's numbers.
rest = []
while True:
    ents = getdents(fd, 4096)
    if not ents:
        break
    rest += ents
for name, ino in first + rest:
    if name in lower_ino:
        check("d_ino of %s read after the change" % name, ino == lower_ino[name],
              "%d, stat %d" % (ino, lower_ino[name]))
names = sorted(n for n, _ in first + rest if n not in (".", ".."))
check("the half-read listing", names == base, "%d names" % len(names))
remount("del=%s" % b2)
same_dir("del", base)
os.close(fd)
os.chdir("/")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PYEND

# Nothing of the above wrote to a branch.
[ -e $b0/d ] && fail "d/ was copied up"
[ -e $b1/d/c ] && fail "b1 got c"
[ "$(ls $b2/d)" = c ] || fail "b2/d changed: $(ls $b2/d | head -n 3)"
union_umount $u
odf_check
exit 0
