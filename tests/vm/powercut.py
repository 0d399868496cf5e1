# SPDX-License-Identifier: GPL-2.0
"""Power-cut tests of the union with dm-log-writes (tests/vm/tests/
union-powercut.sh, tests/vm/long/union-powercut-long.sh).

Runs inside the test VM.  Usage: python3 powercut.py quick|long|rwlower

Mode rwlower (tests/vm/tests/union-powercut-rwlower.sh): the logged
"upper" file system holds two branch directories, u (the upper branch)
and l (a writable lower branch), over a read-only lower on the plain
disk; the operations change and remove objects of l in place, where a
whiteout of the ODF must be durable before the branch's unlink (docs/
odf-format.md 9.4), and copy files of the read-only lower to l (9.6),
whose number must survive every cut.

1. Record.  The upper branch (ext4) and the ODF each sit on a dm-linear
   slice of a scratch disk under a dm-log-writes target with its own log
   disk; the lower branch (ext4) is a plain disk that is never written.
   A workload runs through the union.  After every operation the live
   union is walked (names, st_ino, content hashes: that is the "truth"
   after the operation returned, and the walk lists the merged
   directories, which updates the readdir state on the ODF), then marks
   are written: ODF "k", upper "k", ODF "k/e".

2. Sample cut instants (see docs/odf-format.md 9.10).  A replayed
   prefix of a log is the device as it would be after a power cut with
   the drive's cache lost: only writes made durable by a FLUSH/FUA
   before that instant.  A sample is a pair of replay points, one per
   log, that describe the same instant:
     * mark cut k: ODF at "k", upper at "k" -- the instant the upper
       mark was written (operation k returned, k+1 not begun).  Valid
       only if the ODF logged no FLUSH/FUA between "k" and "k/e" (its
       durable state did not move meanwhile); otherwise skipped and
       counted as ambiguous.
     * flush cut: every FLUSH/FUA entry of one log in the interval
       between marks k and k+1, with the other log at its mark k --
       the instant right after that flush completed.  Valid when the
       other log has no FLUSH/FUA in the same interval (then its
       durable state is that of mark k throughout).  When both logs
       flushed in the same interval their relative order is unknown:
       those flush cuts are skipped and counted as ambiguous (a wrong
       order could make a correct module look wrong).
   Operation k+1 may be half done at a flush cut.

3. Check each sample: replay both logs forward to it (one logreplay
   --serve process per log, so all samples cost one pass over each
   log), take dm-snapshots of both replayed devices (non-persistent, COW
   on a fifth disk; the replay devices stay untouched for the next
   sample), odfck -p the ODF copy, mount the upper copy and the union,
   compare with the truth, unmount, odfck -fn.

What a state may show for each object (identified by its st_ino):
let d be the last sync(2) at or before the cut; the object's names
(the set of paths it has) must equal its names after some operation in
d..k (or k+1 for a flush cut), and a regular file's content one of its
contents then.  A file fsync'ed at operation f > d must exist and have
its content of f or later.  Violations (counted per kind, all of them):
  lost            object with no name, though every allowed state has one
  both-names      object at more names than any allowed state (e.g. a
                  renamed file at its old and its new name)
  resurrected     deleted (and synced) object back at its old name
  wrong-names     any other set of names not allowed
  torn-content    content not one of the allowed (half a copy-up, lost
                  fsync'ed data)
  ino-changed     a path one of the allowed objects should hold carries
                  another inode number (regular files)
  unexpected      a name that belongs to no object known at that point
  readdir         readdir and lookup disagree
  odfck-p         odfck -p cannot repair the ODF (exit >= 4)
  mount           the union does not mount
  odfck-after     odfck -fn finds problems after the union's umount
  setup           the replayed upper ext4 does not mount
  dir-ino-changed the same for a directory (a copy-up without its
                  records, removed at mount since the COPYUP intent, 9.6)
"""
import ctypes
import errno
import fcntl
import hashlib
import json
import os
import stat
import struct
import subprocess
import sys
import threading
import time

SRC = os.environ["SRC"]
ODFCK = os.environ["ODFCK"]
MKODF = os.environ["MKODF"]
LOGREPLAY = os.path.join(SRC, "tests/vm/prog/logreplay")
ODF_DEV = os.environ["ODF_DEV"]
BR = os.environ["BRANCH_DEVS"].split()
UP_DISK, UP_LOG, ODF_LOG, LO_DISK, COW_DISK = BR[0], BR[1], BR[2], BR[3], BR[4]
SLICE = 256 << 11            # slice size in 512-byte sectors (set by main)
U, UP, LO = "/mnt/u", "/mnt/up", "/mnt/lo"
os.environ["DM_DISABLE_UDEV"] = "1"    # no udev in the guest: dmsetup makes the nodes

FLUSHY = ("FLUSH", "FUA")


PROFILE = {}
RWLOWER = False         # mode rwlower: a writable lower branch (main)
RW_LOWER_ID = 2         # its branch id: the second of dirs= when the ODF is new
RO_LOWER_ID = 3         # the read-only lower's: its files are copied to l


def sh(*cmd, check=True, quiet=False):
    t = time.time()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    key = os.path.basename(cmd[0]) + ("" if cmd[0] != "dmsetup" else " " + cmd[1])
    PROFILE[key] = PROFILE.get(key, 0) + time.time() - t
    if check and r.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), r.returncode, r.stdout.strip()[-600:]))
    return r


def devnum(path):
    st = os.stat(path)
    return "%d:%d" % (os.major(st.st_rdev), os.minor(st.st_rdev))


# Device-mapper and mount(2) straight from Python: under TCG every exec
# costs a good part of a second, and a state needs a dozen of them
# otherwise.  (dmsetup does the same ioctls; it is used for nothing here
# but stays the tool to inspect the targets by hand.)
DM_IOCTL_SIZE = 312             # sizeof(struct dm_ioctl)
DM_CMDS = {"create": 3, "remove": 4, "suspend": 6, "load": 9, "msg": 14}
_dm_fd = None


def dm_ioctl(cmd, name, data=b"", target_count=0, flags=0):
    global _dm_fd
    if _dm_fd is None:
        _dm_fd = os.open("/dev/mapper/control", os.O_RDWR)
    size = DM_IOCTL_SIZE + len(data) + 16384
    hdr = struct.pack("<3IIIIiIII Q128s129s7x", 4, 0, 0, size, DM_IOCTL_SIZE, target_count,
                      0, flags, 0, 0, 0, name.encode(), b"")
    assert len(hdr) == DM_IOCTL_SIZE
    buf = bytearray(hdr + data + bytes(size - DM_IOCTL_SIZE - len(data)))
    req = (3 << 30) | (DM_IOCTL_SIZE << 16) | (0xfd << 8) | DM_CMDS[cmd]
    t = time.time()
    fcntl.ioctl(_dm_fd, req, buf, True)
    PROFILE["dm " + cmd] = PROFILE.get("dm " + cmd, 0) + time.time() - t
    return buf


def dm_create(name, table):
    """table: "START LEN TYPE PARAMS" (one target); returns /dev/dm-N."""
    start, length, ttype, params = table.split(" ", 3)
    buf = dm_ioctl("create", name)
    dev = struct.unpack_from("<Q", buf, 40)[0]
    minor = (dev & 0xff) | ((dev >> 12) & ~0xff)
    spec = struct.pack("<QQiI16s", int(start), int(length), 0, 0, ttype.encode())
    p = params.encode() + b"\0"
    p += bytes(-(len(spec) + len(p)) % 8)
    spec = struct.pack("<QQiI16s", int(start), int(length), 0, len(spec) + len(p), ttype.encode()) + p
    try:
        dm_ioctl("load", name, spec, target_count=1)
        dm_ioctl("suspend", name)          # without DM_SUSPEND_FLAG: resume
    except OSError:
        dm_remove(name)
        raise
    path = "/dev/dm-%d" % minor
    for i in range(100):
        if os.path.exists(path):
            return path
        time.sleep(0.01)
    raise RuntimeError("%s: no %s" % (name, path))


def dm_remove(name):
    for i in range(50):
        try:
            dm_ioctl("remove", name)
            return
        except OSError as e:
            if e.errno != errno.EBUSY:
                raise
            time.sleep(0.1)
    raise RuntimeError("cannot remove dm device %s: busy" % name)


def mark(dm, name):
    dm_ioctl("msg", dm, struct.pack("<Q", 0) + ("mark %s" % name).encode() + b"\0")


_libc = ctypes.CDLL(None, use_errno=True)


def mount(src, target, fstype, opts=""):
    t = time.time()
    r = _libc.mount(src.encode(), target.encode(), fstype.encode(), ctypes.c_ulong(0),
                    opts.encode() if opts else None)
    PROFILE["mount"] = PROFILE.get("mount", 0) + time.time() - t
    if r != 0:
        e = ctypes.get_errno()
        raise OSError(e, "mount %s on %s: %s" % (src, target, os.strerror(e)))


def umount(target):
    t = time.time()
    r = _libc.umount2(target.encode(), 0)
    PROFILE["umount"] = PROFILE.get("umount", 0) + time.time() - t
    if r != 0:
        e = ctypes.get_errno()
        raise OSError(e, "umount %s: %s" % (target, os.strerror(e)))


# ---- the union's view: name sets, inode numbers, contents ----

CH = 65536
ZERO = bytes(CH)
EMPTY = "0:" + hashlib.md5().hexdigest()[:12]


def zeros_of(content):
    """The content_hash() of a file of the same size as content, all
    zeros (or holes)."""
    return content.split(":", 1)[0] + ":" + hashlib.md5().hexdigest()[:12]


def content_hash(path, size):
    """md5 of the non-zero 64 KiB blocks with their offsets: holes and
    zero blocks hash alike, so a sparse file costs what its data costs."""
    h = hashlib.md5()
    fd = os.open(path, os.O_RDONLY)
    try:
        off = 0
        while off < size:
            try:
                d = os.lseek(fd, off, os.SEEK_DATA)
            except OSError as e:
                if e.errno == errno.ENXIO:
                    break
                raise
            end = os.lseek(fd, d, os.SEEK_HOLE)
            pos = d - d % CH
            while pos < end:
                b = os.pread(fd, CH, pos)
                if not b:
                    break
                if b != ZERO[:len(b)]:
                    h.update(b"%d:" % pos + b)
                pos += CH
            off = max(end, pos)
    finally:
        os.close(fd)
    return "%d:%s" % (size, h.hexdigest()[:12])


def walk(root, problems=None):
    """{ino: [frozenset(paths), content or None, is_dir]} of everything
    below root, found by readdir; readdir/lookup disagreements go to
    problems."""
    objs = {}
    stack = [""]
    while stack:
        rel = stack.pop()
        d = os.path.join(root, rel)
        try:
            names = os.listdir(d)
        except OSError as e:
            if problems is not None:
                problems.append(("readdir", "cannot list /%s: %s" % (rel, e)))
            continue
        for n in names:
            r = os.path.join(rel, n)
            p = os.path.join(root, r)
            try:
                st = os.lstat(p)
            except OSError as e:
                if problems is not None:
                    problems.append(("readdir", "/%s listed but lstat fails: %s" % (r, e.strerror)))
                continue
            o = objs.setdefault(st.st_ino, [set(), None, stat.S_ISDIR(st.st_mode)])
            o[0].add(r)
            if stat.S_ISDIR(st.st_mode):
                stack.append(r)
            elif stat.S_ISREG(st.st_mode) and o[1] is None:
                try:
                    o[1] = content_hash(p, st.st_size)
                except OSError as e:
                    o[1] = "unreadable:%s" % e.strerror
    for o in objs.values():
        o[0] = frozenset(o[0])
    return objs


# ---- workloads ----

def wfile(path, data, flags=os.O_WRONLY | os.O_CREAT | os.O_TRUNC, off=None, fsync=False):
    fd = os.open(path, flags, 0o644)
    try:
        if off is None:
            os.write(fd, data)
        else:
            os.pwrite(fd, data, off)
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)


def rnd(n, seed):
    out = bytearray()
    h = hashlib.sha256(seed.encode()).digest()
    while len(out) < n:
        h = hashlib.sha256(h).digest()
        out += h * 32
    return bytes(out[:n])


def make_lower(rounds, big_mb):
    """The read-only branch: what every round's operations start from."""
    for r in range(rounds):
        b = os.path.join(LO, "r%d" % r)
        for d in ("src", "dst", "tree/sub/deep", "m", "w"):
            os.makedirs(os.path.join(b, d), exist_ok=True)
        for i in range(4):
            wfile(os.path.join(b, "src/f%d" % i), b"file %d of round %d\n" % (i, r))
        wfile(os.path.join(b, "dst/x"), b"x\n")
        for f in ("tree/t1", "tree/sub/t2", "tree/sub/deep/t3"):
            wfile(os.path.join(b, f), f.encode() + b"\n")
        for i in range(3):
            wfile(os.path.join(b, "m/l%d" % i), b"l%d\n" % i)
            wfile(os.path.join(b, "w/w%d" % i), b"whiteout me %d\n" % i)
        wfile(os.path.join(b, "h"), b"linked\n")
        wfile(os.path.join(b, "big"), rnd(big_mb << 20, "big%d" % r))
        fd = os.open(os.path.join(b, "sparse"), os.O_WRONLY | os.O_CREAT, 0o644)
        os.ftruncate(fd, 48 << 20)
        for off in (0, 20 << 20, (48 << 20) - 65536):
            os.pwrite(fd, rnd(65536, "sp%d%d" % (r, off)), off)
        os.close(fd)


def make_rwlower(rounds):
    """Mode rwlower: what the writable lower branch (directory l of the
    logged file system) and the read-only one start with."""
    for r in range(rounds):
        l, o = os.path.join(UP, "l", "r%d" % r), os.path.join(LO, "r%d" % r)
        for d in ("e", "x", "dst", "m"):
            os.makedirs(os.path.join(l, d), exist_ok=True)
        for d in ("e", "dst"):
            os.makedirs(os.path.join(o, d), exist_ok=True)
        for f in ("a", "b", "c", "g", "k", "t", "x/f", "m/log", "m/old"):
            wfile(os.path.join(l, f), b"%s of round %d on the rw lower\n" % (f.encode(), r) * 50)
        for f in ("b", "g", "k", "dst/y", "cp", "cq"):
            wfile(os.path.join(o, f), b"%s of round %d on the ro lower\n" % (f.encode(), r))


def in_place(_, r, d):
    """After an operation made in place: round r's directory d has no
    upper part (the upper branch is directory u of the logged fs)."""
    if os.path.exists(os.path.join(UP, "u", "r%d" % r, d)):
        raise AssertionError("r%d/%s was copied up: not in place" % (r, d))


def on_rw_lower(_, r, f):
    """After a change of a file of the read-only branch: it was copied to
    the writable lower branch (directory l), the nearest writable one
    above it, not to the upper branch (unionfs(5))."""
    if not os.path.exists(os.path.join(UP, "l", "r%d" % r, f)):
        raise AssertionError("r%d/%s was not copied to the writable lower branch" % (r, f))
    if os.path.exists(os.path.join(UP, "u", "r%d" % r, f)):
        raise AssertionError("r%d/%s was copied to the upper branch" % (r, f))


def ops_rwlower(r):
    """Mode rwlower: one round, on objects of the writable lower branch,
    changed and removed in place (unionfs(5), "Several writable
    branches"; docs/odf-format.md 9.4)."""
    b = os.path.join(U, "r%d" % r)
    P = lambda *a: os.path.join(b, *a)
    ls = lambda *ds: [sorted(os.listdir(P(d))) for d in ds]
    return [
        ("append to rw-lower a", lambda: wfile(P("a"), b"more a\n", os.O_WRONLY | os.O_APPEND), None),
        ("list ., dst", lambda: ls(".", "dst"), None),
        ("unlink rw-lower b (a copy on the ro branch)", lambda: os.unlink(P("b")), None),
        ("unlink rw-lower c (only there)", lambda: os.unlink(P("c")), None),
        # The fsync commits the branch's journal, unlink included, while
        # the ODF need not flush: a whiteout not committed before the
        # unlink (9.4) shows the read-only branch's k at that cut.
        ("unlink rw-lower k (a copy on the ro branch), fsync rw-lower t",
         lambda: (os.unlink(P("k")), wfile(P("t"), b"", os.O_WRONLY | os.O_APPEND, fsync=True)),
         ("fsync", "t")),
        ("chmod rw-lower a", lambda: os.chmod(P("a"), 0o600), None),
        ("rmdir rw-lower e (also on the ro branch)", lambda: os.rmdir(P("e")), None),
        ("unlink x/f, rmdir x (rw lower only)", lambda: (os.unlink(P("x/f")), os.rmdir(P("x"))), None),
        ("write rw-lower a and fsync it",
         lambda: wfile(P("a"), b"A" * 4000, os.O_WRONLY, off=0, fsync=True), ("fsync", "a")),
        # A read-only branch's file is copied to the writable lower
        # branch (9.6: records before the link) and then changed there.
        ("append to ro-lower cp (copied to the rw lower)",
         lambda: on_rw_lower(wfile(P("cp"), b"more cp\n", os.O_WRONLY | os.O_APPEND), r, "cp"), None),
        ("write ro-lower cq and fsync it (copied to the rw lower)",
         lambda: on_rw_lower(wfile(P("cq"), b"Q" * 3000, os.O_WRONLY, off=0, fsync=True), r, "cq"),
         ("fsync", "cq")),
        ("sync", lambda: os.sync(), "sync"),
        ("rename rw-lower g into dst (copied up)", lambda: os.rename(P("g"), P("dst/g")), None),
        ("unlink cp, a copy on the rw lower (whiteout over the ro one)", lambda: os.unlink(P("cp")), None),
        # cq's name is on the ro branch too: no rename in place, the copy
        # on l is copied again, to the upper branch (6.3: its records).
        ("rename the copy cq into dst (copied again, to the upper)",
         lambda: os.rename(P("cq"), P("dst/cq")), None),
        ("create b over its whiteout", lambda: wfile(P("b"), b"new b\n"), None),
        # m has no upper part and its names are on no other branch: the
        # renames are made in the branch (9.5, "In place").
        ("rename rw-lower m/log to m/log.1 (in place)",
         lambda: in_place(os.rename(P("m/log"), P("m/log.1")), r, "m"), None),
        ("list m", lambda: ls("m"), None),
        ("rename rw-lower m/log.1 over m/old (in place)",
         lambda: in_place(os.rename(P("m/log.1"), P("m/old")), r, "m"), None),
        ("truncate rw-lower t and fsync it",
         lambda: wfile(P("t"), b"short t\n", fsync=True), ("fsync", "t")),
        ("list ., dst", lambda: ls(".", "dst"), None),
        ("unlink the new b and sync", lambda: (os.unlink(P("b")), os.sync()), None),
    ]


def ops_round(r):
    """(name, function, kind) of one round of operations, run in /mnt/u/r<r>.
    kind: None, ("fsync", relpath) or "sync"."""
    if RWLOWER:
        return ops_rwlower(r)
    b = os.path.join(U, "r%d" % r)
    P = lambda *a: os.path.join(b, *a)
    ls = lambda *ds: [sorted(os.listdir(P(d))) for d in ds]
    return [
        ("rename lower src/f0 into dst", lambda: os.rename(P("src/f0"), P("dst/f0")), None),
        ("list src, dst", lambda: ls("src", "dst", "."), None),
        ("rename lower tree to dst/tree2", lambda: os.rename(P("tree"), P("dst/tree2")), None),
        ("copy-up big (write in the middle)",
         lambda: wfile(P("big"), b"NEW" * 1000, os.O_WRONLY, off=190 * 4096), None),
        ("copy-up sparse (write in a hole)",
         lambda: wfile(P("sparse"), b"S" * 5000, os.O_WRONLY, off=30 << 20), None),
        ("unlink lower w/w0", lambda: os.unlink(P("w/w0")), None),
        ("create w/w0 over its whiteout", lambda: wfile(P("w/w0"), b"new w0\n"), None),
        ("hard link lower h to dst/h2", lambda: os.link(P("h"), P("dst/h2")), None),
        ("list dst, w", lambda: ls("dst", "w", "."), None),
        ("create n1 and fsync it", lambda: wfile(P("n1"), b"fsynced n1\n" * 100, fsync=True), ("fsync", "n1")),
        ("rename lower src/f1 into m", lambda: os.rename(P("src/f1"), P("m/f1")), None),
        ("write big again and fsync it",
         lambda: wfile(P("big"), b"AGAIN" * 800, os.O_WRONLY, off=1 << 20, fsync=True), ("fsync", "big")),
        ("sync", lambda: os.sync(), "sync"),
        ("rename copied-up dst/f0 back to src/f0b", lambda: os.rename(P("dst/f0"), P("src/f0b")), None),
        ("unlink lower w/w1 and upper n1", lambda: (os.unlink(P("w/w1")), os.unlink(P("n1"))), None),
        ("rename lower dir m to src/m2", lambda: os.rename(P("m"), P("src/m2")), None),
        ("list src, src/m2", lambda: ls("src", "src/m2"), None),
        ("rename lower src/f2 to dst/f2 and fsync it",
         lambda: (os.rename(P("src/f2"), P("dst/f2")), wfile(P("dst/f2"), b"", os.O_WRONLY | os.O_APPEND, fsync=True)),
         ("fsync", "dst/f2")),
        ("sync", lambda: os.sync(), "sync"),
        ("rename lower src/f3 into dst/tree2/sub", lambda: os.rename(P("src/f3"), P("dst/tree2/sub/f3")), None),
        ("unlink lower w/w2 and create it again", lambda: (os.unlink(P("w/w2")), wfile(P("w/w2"), b"w2 again\n")), None),
    ]


# ---- record ----

class Recording:
    pass


def record(rounds, big_mb, tick):
    rec = Recording()
    for m in ("dm_mod", "dm_log_writes", "dm_snapshot"):
        sh("modprobe", m, check=False)
    for d in (U, UP, LO):
        os.makedirs(d, exist_ok=True)
    # Log disks must not hold an old log: dm-log-writes writes a fresh super.
    rec.upper = dm_create("pc-upper", "0 %d linear %s 0" % (SLICE, devnum(UP_DISK)))
    rec.odf = dm_create("pc-odf", "0 %d linear %s 0" % (SLICE, devnum(ODF_DEV)))
    lwu = dm_create("pc-lwu", "0 %d log-writes %s %s" % (SLICE, devnum(rec.upper), devnum(UP_LOG)))
    lwo = dm_create("pc-lwo", "0 %d log-writes %s %s" % (SLICE, devnum(rec.odf), devnum(ODF_LOG)))

    sh("mkfs.ext4", "-q", "-F", LO_DISK)
    sh("mount", "-t", "ext4", LO_DISK, LO)
    os.rmdir(os.path.join(LO, "lost+found"))
    if not RWLOWER:
        make_lower(rounds, big_mb)

    sh("mkfs.ext4", "-q", "-F", "-E", "nodiscard,lazy_itable_init=0,lazy_journal_init=0", lwu)
    sh(MKODF, "-q", "-f", lwo)
    mount(lwu, UP, "ext4", "noinit_itable")
    os.rmdir(os.path.join(UP, "lost+found"))
    if RWLOWER:
        # The upper and the writable lower branch: two directories of
        # the logged file system, so their order against the ODF's
        # writes is what the logs show.
        os.makedirs(os.path.join(UP, "u"))
        make_rwlower(rounds)
        rec.opts = "odf={odf},dirs={up}/u=rw:{up}/l=rw:{lo}=ro"
    else:
        rec.opts = "odf={odf},dirs={up}=rw:{lo}=ro"
    sh("mount", "-o", "remount,ro", LO)
    mount("none", U, "unionfs", rec.opts.format(odf=lwo, up=UP, lo=LO))

    ops = [("setup", lambda: None, "sync")]
    for r in range(rounds):
        ops += [("r%d: %s" % (r, n), f, (("fsync", "r%d/%s" % (r, k[1])) if isinstance(k, tuple) else k))
                for n, f, k in ops_round(r)]
    rec.ops = []          # [(name, kind)]
    rec.truth = []        # walk() after each op
    rec.fsync_ino = []    # ino fsync'ed by op k, or None
    rec.points = []       # [(mark name, k, mid)] in the order written
    lock = threading.RLock()
    state = {"k": 0, "stop": False}

    def point(name, k, mid):
        # One instant, written into both logs: see samples().  A tick
        # (k None) reads the last operation inside the lock: the next
        # operation cannot have begun before its marks are written.
        with lock:
            if k is None:
                k = state["k"]
            mark("pc-lwo", name)
            mark("pc-lwu", name)
            mark("pc-lwo", name + "/e")
            rec.points.append((name, k, mid))

    def ticker():
        n = 0
        while not state["stop"]:
            point("t%d" % n, None, True)
            n += 1
            time.sleep(tick)

    t0 = time.time()
    th = None
    for k, (name, fn, kind) in enumerate(ops):
        if kind == "sync":
            os.sync()
        t = time.time()
        fn()
        t2 = time.time()
        problems = []
        truth = walk(U, problems)
        if os.environ.get("PC_PROFILE"):
            print("# op %d %s: %.2fs, walk %.2fs" % (k, name, t2 - t, time.time() - t2), flush=True)
        if problems:
            raise RuntimeError("live union after '%s': %s" % (name, problems[:3]))
        rec.truth.append(truth)
        rec.ops.append((name, kind))
        rec.fsync_ino.append(os.lstat(os.path.join(U, kind[1])).st_ino if isinstance(kind, tuple) else None)
        with lock:
            point("%d" % k, k, False)
            state["k"] = k
        if th is None and tick > 0:
            th = threading.Thread(target=ticker, daemon=True)
            th.start()
    umount(U)
    umount(UP)
    state["stop"] = True
    if th:
        th.join()
    print("# recorded %d operations and %d instants in %.0fs" % (
        len(ops), len(rec.points), time.time() - t0), flush=True)
    dm_remove("pc-lwu")
    dm_remove("pc-lwo")
    return rec


# ---- sampling ----

def parse_log(dev):
    out = sh(LOGREPLAY, "--log", dev, "--list").stdout
    ents = []
    for line in out.splitlines():
        f = line.split(" ", 4)
        ents.append((int(f[0]), f[1].split("|"), f[4] if len(f) > 4 else None))
    return ents


def samples(rec, want_flush_cuts):
    """[(odf_state, upper_state, [(k, mid, what)])] in replay order, and
    statistics.

    Each recorded instant S was written as ODF mark "S", upper mark "S",
    ODF mark "S/e" (under one lock), and stands for the moment the upper
    mark was written.  A replayed prefix of a log is the device's
    durable state at an instant when it ends with that instant's last
    FLUSH/FUA (or mark).  So:
      * the instant S itself: ODF up to "S", upper up to "S" -- valid
        if the ODF logged no FLUSH/FUA between "S" and "S/e";
      * each FLUSH/FUA f of the ODF between "S/e" and the next instant
        "S'": ODF up to f, upper up to "S" -- the moment after f
        completed, valid if the upper logged no FLUSH/FUA between "S"
        and "S'" (its durable state did not change in between);
      * each FLUSH/FUA g of the upper between "S" and "S'": upper up to
        g, ODF up to "S/e", valid if the ODF logged no FLUSH/FUA
        between "S" and "S'".
    When both logs flushed between two instants their order is unknown
    and those flush cuts are skipped (counted as ambiguous): pairing
    them in a wrong order would blame a correct module.  The ticker
    writes instants every few milliseconds to keep that rare."""
    logs = {}
    for key, dev in (("o", ODF_LOG), ("u", UP_LOG)):
        ents = parse_log(dev)
        pos = {m: i for i, fl, m in ents if "MARK" in fl}
        flushes = [i for i, fl, m in ents if any(x in fl for x in FLUSHY)]
        logs[key] = (ents, pos, flushes)
    oe, opos, of = logs["o"]
    ue, upos, uf = logs["u"]
    import bisect

    def nflush(fl, a, b):
        return [fl[i] for i in range(bisect.bisect_right(fl, a), bisect.bisect_left(fl, b))]

    out, amb_marks, amb_flush = [], 0, 0
    pts = rec.points
    for i, (name, k, mid) in enumerate(pts):
        o_s, o_e, u_s = opos[name], opos[name + "/e"], upos[name]
        o_n = opos[pts[i + 1][0]] if i + 1 < len(pts) else len(oe)
        u_n = upos[pts[i + 1][0]] if i + 1 < len(pts) else len(ue)
        what = ("after op %d" % k) if not mid else ("instant %s" % name)
        o_jitter = nflush(of, o_s, o_e)
        if o_jitter:
            amb_marks += 1
        else:
            out.append((o_s + 1, u_s + 1, k, mid, what))
        if not want_flush_cuts:
            continue
        ofl = nflush(of, o_e, o_n)
        ufl = nflush(uf, u_s, u_n)
        if ofl and ufl or (ufl and o_jitter):
            amb_flush += len(ofl) + len(ufl)
            continue
        for f in ofl:
            out.append((f + 1, u_s + 1, k, True, "ODF flush entry %d" % f))
        for g in ufl:
            out.append((o_e + 1, g + 1, k, True, "upper flush entry %d" % g))
    # Replaying past a mark changes nothing: count states by the
    # entries that write.  The same pair of states at several instants
    # gets one check against each of their models.
    def canon(ents):
        c, last = [], 0
        for i, fl, m in ents:
            c.append(last)
            if "MARK" not in fl:
                last = i + 1
        c.append(last)
        return c
    oc, uc = canon(oe), canon(ue)
    ded = []
    for o, u, k, mid, what in out:
        o, u = oc[o], uc[u]
        if ded and ded[-1][:2] == (o, u):
            if (k, mid) not in [(m[0], m[1]) for m in ded[-1][2]]:
                ded[-1][2].append((k, mid, what))
        else:
            ded.append((o, u, [(k, mid, what)]))
    stats = {"odf_entries": len(oe), "upper_entries": len(ue), "odf_flush": len(of),
             "upper_flush": len(uf), "ambiguous_marks": amb_marks, "ambiguous_flush": amb_flush,
             "cuts": len(out)}
    return ded, stats


# ---- check ----

def allowed(rec, k, mid):
    """{ino: (namesets, contents, is_dir)} of what a cut after op k (and
    during op k+1 if mid) may show."""
    last = k + 1 if mid and k + 1 < len(rec.ops) else k
    d = max(i for i in range(k + 1) if rec.ops[i][1] == "sync")
    fs = {}
    for i in range(d + 1, k + 1):
        if rec.fsync_ino[i] is not None:
            fs[rec.fsync_ino[i]] = i
    inos = set()
    for i in range(d, last + 1):
        inos |= set(rec.truth[i])
    # Objects that existed before d and are gone since: must stay gone.
    res = {}
    for ino in inos:
        names, conts, isdir = set(), set(), False
        f = fs.get(ino)
        for i in range(d, last + 1):
            o = rec.truth[i].get(ino)
            ns = o[0] if o else frozenset()
            if f is not None and i < f:
                # fsync'ed at f: it exists (under any name it had) with
                # the content of f or later.
                if ns:
                    names.add(ns)
                continue
            names.add(ns)
            if o:
                isdir = o[2]
                if o[1] is not None:
                    conts.add(o[1])
        if ino not in rec.truth[d] and f is None and conts:
            # Created since the last sync and never fsync'ed: ext4's
            # delayed allocation may leave it empty (one write each, so
            # never partly written), and with dioread_nolock (ext4's
            # default) the size and the blocks, allocated unwritten, may
            # be committed before the data: the file then reads as zeros
            # of its full size (seen on 6.12's ext4 upper).
            conts.add(EMPTY)
            conts |= {zeros_of(c) for c in conts}
        if RWLOWER and ino >> 48 in (RW_LOWER_ID, RO_LOWER_ID) and f is None and len(conts) > 1:
            # Written in place on the writable lower branch (ext4) and
            # not fsync'ed in the window (a file of the read-only lower
            # is written there after its copy): as on a bare ext4, a
            # write into allocated blocks is not ordered against the
            # size, so any mix of its contents may show (an append: the
            # old bytes and zeros, once another file's fsync committed
            # the size).  Names and st_ino are still checked, and
            # fsync'ed data too (f above).
            conts = set()
        res[ino] = (names, conts, isdir)
    return res, d


def gone_before(rec, k):
    """{ino: names} of objects that existed at some op <= k and not in
    the allowed window (deleted and synced): their old names must not
    come back."""
    d = max(i for i in range(k + 1) if rec.ops[i][1] == "sync")
    out = {}
    for i in range(0, d):
        for ino, o in rec.truth[i].items():
            if ino not in rec.truth[d]:
                out.setdefault(ino, set()).update(o[0])
    return out


def compare(rec, k, mid, found, problems, root):
    al, d = allowed(rec, k, mid)
    gone = gone_before(rec, k)
    path_owner = {}
    reported = set()    # paths whose other object is reported below
    for ino, (names, conts, isdir) in al.items():
        for ns in names:
            for p in ns:
                path_owner.setdefault(p, set()).add(ino)
    for ino, (names, conts, isdir) in sorted(al.items()):
        o = found.get(ino)
        got = o[0] if o else frozenset()
        if got not in names:
            desc = " or ".join(sorted("{%s}" % ", ".join(sorted(n)) for n in names))
            if not got:
                # Maybe there under another number?
                if all(names):
                    kind = "lost"
                    for p in set().union(*names):
                        other = [i for i, x in found.items() if p in x[0] and i not in al]
                        if other and other[0] in gone:
                            problems.append(("resurrected", "/%s: deleted (and synced) ino %d is back "
                                             "instead of ino %d" % (p, other[0], ino)))
                            reported.add(p)
                            break
                        if other:
                            kind = "dir-ino-changed" if isdir else "ino-changed"
                            problems.append((kind, "/%s has st_ino %d instead of %d" % (p, other[0], ino)))
                            reported.add(p)
                            break
                    else:
                        problems.append((kind, "ino %d: no name; expected %s" % (ino, desc)))
                    continue
            elif any(got > n for n in names if n) and len(got) > max(len(n) for n in names):
                problems.append(("both-names", "ino %d at {%s}; expected %s" % (ino, ", ".join(sorted(got)), desc)))
            elif names == {frozenset()}:
                problems.append(("resurrected", "ino %d (deleted, synced) back at {%s}" % (ino, ", ".join(sorted(got)))))
            else:
                problems.append(("wrong-names", "ino %d at {%s}; expected %s" % (ino, ", ".join(sorted(got)), desc)))
        if o and o[1] is not None and conts and o[1] not in conts:
            problems.append(("torn-content", "ino %d /%s: content %s; expected %s" % (
                ino, sorted(got)[0], o[1], " or ".join(sorted(conts)))))
    for ino, o in found.items():
        if ino in al:
            continue
        for p in sorted(o[0]):
            # Reported above (ino-changed, resurrected).  A path whose
            # known object may be gone there (removed by the operation)
            # is not: another object at it (a lower branch's copy that
            # a whiteout should hide) is unexpected.
            if p in reported:
                continue
            if ino in gone:
                problems.append(("resurrected", "/%s (ino %d, deleted and synced) is back" % (p, ino)))
            else:
                problems.append(("unexpected", "/%s (ino %d) belongs to no known object" % (p, ino)))
    # Lookup of every allowed name agrees with readdir.
    listed = set()
    for o in found.values():
        listed |= o[0]
    for p in path_owner:
        if p not in listed and os.path.lexists(os.path.join(root, p)):
            problems.append(("readdir", "/%s found by lookup but not listed" % p))


class Checker:
    """Worker w: its own replay slices, COW slices and mount points."""

    def __init__(self, rec, w):
        self.rec, self.w = rec, w
        self.u, self.up = U + ("" if w == 0 else str(w)), UP + ("" if w == 0 else str(w))
        os.makedirs(self.u, exist_ok=True)
        os.makedirs(self.up, exist_ok=True)
        if w == 0:
            self.odf, self.upper = rec.odf, rec.upper
        else:
            self.odf = dm_create("pc-odf%d" % w, "0 %d linear %s %d" % (SLICE, devnum(ODF_DEV), w * SLICE))
            self.upper = dm_create("pc-upper%d" % w, "0 %d linear %s %d" % (SLICE, devnum(UP_DISK), w * SLICE))
        self.cowo = dm_create("pc-cowo%d" % w, "0 %d linear %s %d" % (SLICE, devnum(COW_DISK), 2 * w * SLICE))
        self.cowu = dm_create("pc-cowu%d" % w, "0 %d linear %s %d" % (SLICE, devnum(COW_DISK), (2 * w + 1) * SLICE))
        self.srv = {}
        for key, log, dev in (("o", ODF_LOG, self.odf), ("u", UP_LOG, self.upper)):
            sh("blkdiscard", "-f", dev, check=False)
            self.srv[key] = subprocess.Popen([LOGREPLAY, "--log", log, "--replay", dev, "--serve"],
                                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def replay(self, key, n):
        t = time.time()
        p = self.srv[key]
        p.stdin.write("%d\n" % n)
        p.stdin.flush()
        line = p.stdout.readline().strip()
        if line != "ok %d" % n:
            raise RuntimeError("logreplay (%s) to %d: %r" % (key, n, line))
        PROFILE["replay"] = PROFILE.get("replay", 0) + time.time() - t

    def close(self):
        for p in self.srv.values():
            p.stdin.close()
            p.wait()

    def check(self, o, u, models):
        rec, problems = self.rec, []
        self.replay("o", o)
        self.replay("u", u)
        w = self.w
        so = dm_create("pc-so%d" % w, "0 %d snapshot %s %s N 16" % (SLICE, devnum(self.odf), devnum(self.cowo)))
        su = dm_create("pc-su%d" % w, "0 %d snapshot %s %s N 16" % (SLICE, devnum(self.upper), devnum(self.cowu)))
        try:
            r = sh(ODFCK, "-p", so, check=False)
            fsck_p = r.stdout
            klog0 = len(sh("dmesg", check=False).stdout.splitlines())
            if r.returncode >= 4:
                problems.append(("odfck-p", "exit %d: %s" % (r.returncode, tail(r.stdout))))
            elif try_mount(su, self.up, "ext4", "", problems, "setup"):
                if try_mount("none", self.u, "unionfs", rec.opts.format(odf=so, up=self.up, lo=LO),
                             problems, "mount"):
                    t = time.time()
                    found = walk(self.u, problems)
                    PROFILE["walk"] = PROFILE.get("walk", 0) + time.time() - t
                    seen = set()
                    for k, mid, what in models:
                        pr = []
                        compare(rec, k, mid, found, pr, self.u)
                        for kind, msg in pr:
                            key = (kind, msg.split(";")[0])
                            if key not in seen:
                                seen.add(key)
                                problems.append((kind, msg))
                    if problems:
                        problems.append(("diag", diagnosis(fsck_p, klog0)))
                    umount(self.u)
                umount(self.up)
                r = sh(ODFCK, "-fn", so, check=False)
                if r.returncode != 0:
                    problems.append(("odfck-after", "odfck -fn exit %d: %s" % (r.returncode, tail(r.stdout))))
        finally:
            for m in (self.u, self.up):
                if os.path.ismount(m):
                    umount(m)
            dm_remove("pc-so%d" % w)
            dm_remove("pc-su%d" % w)
        return problems


def run_worker(rec, w, smp, idx, results, deadline):
    """Check samples smp (their indexes idx), in replay order; write one
    line of JSON per state to the file results.  Stop at deadline."""
    chk = Checker(rec, w)
    t0 = time.time()
    try:
        with open(results, "w") as out:
            for n, (o, u, models) in enumerate(smp):
                if time.time() > deadline:
                    break
                probs = chk.check(o, u, models)
                out.write(json.dumps([idx[n], o, u, models, probs]) + "\n")
                out.flush()
                if w == 0 and n % 25 == 24:
                    print("# worker 0: %d/%d states checked, %.0fs" % (n + 1, len(smp), time.time() - t0), flush=True)
    finally:
        chk.close()
    if os.environ.get("PC_PROFILE"):
        print("# worker %d profile: " % w + ", ".join(
            "%s %.1fs" % kv for kv in sorted(PROFILE.items(), key=lambda kv: -kv[1])), flush=True)


def try_mount(src, target, fstype, opts, problems, kind):
    try:
        mount(src, target, fstype, opts)
        return True
    except OSError as e:
        msg = [l for l in sh("dmesg", check=False).stdout.splitlines() if "unionfs" in l or "EXT4" in l]
        problems.append((kind, "%s (%s)" % (e.strerror, msg[-1].strip() if msg else "")))
        return False


def diagnosis(fsck_p, klog0):
    """What a failed state's report shows to explain it: odfck -p's
    findings (pending intents) and the module's log lines of the mount
    (another worker's may be among them)."""
    fs = [l.strip() for l in fsck_p.splitlines() if l.strip() and not l.startswith("Pass ")]
    kl = [l.split("] ", 1)[-1] for l in sh("dmesg", check=False).stdout.splitlines()[klog0:]
          if "unionfs" in l]
    return "odfck -p: %s | module: %s" % (" / ".join(fs[-6:]) or "-", " / ".join(kl[-6:]) or "-")


def tail(out):
    lines = [l for l in out.splitlines() if l.strip() and not l.startswith("Pass ")]
    return " | ".join(lines[-4:])[:300]


INFO_ONLY = {"diag"}    # kinds counted but not failed: what explains a failed state


def main():
    global RWLOWER
    mode = sys.argv[1] if len(sys.argv) > 1 else "quick"
    rounds, big_mb, tick, max_states = {
        "quick": (3, 2, 0.003, int(os.environ.get("PC_MAX_STATES", "300"))),
        "rwlower": (3, 0, 0.003, int(os.environ.get("PC_MAX_STATES", "200"))),
        "long": (6, 8, 0.001, int(os.environ.get("PC_MAX_STATES", "1000000"))),
    }[mode]
    RWLOWER = mode == "rwlower"
    global SLICE
    SLICE = int(os.environ.get("PC_SLICE_MB", "256" if mode == "quick" else "1024")) << 11
    nworkers = int(os.environ.get("PC_WORKERS", "2"))
    budget = int(os.environ.get("PC_BUDGET", {"quick": "540", "rwlower": "300"}.get(mode, "100000")))
    t0 = time.time()
    rec = record(rounds, big_mb, tick)
    smp, st = samples(rec, True)
    print("# ODF log: %(odf_entries)d entries, %(odf_flush)d FLUSH/FUA; upper log: "
          "%(upper_entries)d entries, %(upper_flush)d FLUSH/FUA" % st)
    print("# %d cut points, %d distinct states (skipped as ambiguous across the two logs: "
          "%d instants, %d flush cuts)" % (st["cuts"], len(smp), st["ambiguous_marks"],
                                          st["ambiguous_flush"]), flush=True)
    if len(smp) > max_states:
        # Keep every state after an operation and an even spread of the others.
        after = [i for i, s in enumerate(smp) if any(not m[1] for m in s[2])]
        rest = [i for i, s in enumerate(smp) if i not in set(after)]
        room = max(0, max_states - len(after))
        keep = set(after) | set(rest[int(j * len(rest) / room)] for j in range(room)) if room else set(after)
        smp = [s for i, s in enumerate(smp) if i in keep]
        print("# checking %d of them (PC_MAX_STATES=%d)" % (len(smp), max_states), flush=True)
    # Workers check every nworkers-th state in parallel (the guest has
    # two CPUs); each replays its own copy of the devices forward.  A
    # time budget keeps a loaded machine from running into the test's
    # timeout: the states left are reported, not failed.
    nworkers = max(1, min(nworkers, len(smp)))
    t1 = time.time()
    deadline = t1 + budget
    pids, files = [], []
    for w in range(nworkers):
        idx = list(range(w, len(smp), nworkers))
        files.append("/tmp/powercut-w%d.json" % w)
        pid = os.fork()
        if pid == 0:
            rc = 0
            try:
                run_worker(rec, w, [smp[i] for i in idx], idx, files[w], deadline)
            except Exception as e:
                print("worker %d: %s: %s" % (w, type(e).__name__, e), flush=True)
                rc = 2
            os._exit(rc)
        pids.append(pid)
    broken = 0
    for pid in pids:
        if os.waitpid(pid, 0)[1] != 0:
            broken += 1
    results = []
    for f in files:
        if os.path.exists(f):
            results += [json.loads(l) for l in open(f)]
    results.sort()
    counts, examples, bad_states = {}, {}, 0
    for n, o, u, models, probs in results:
        k, mid, what = models[0]
        opname = rec.ops[k + 1][0] if mid and k + 1 < len(rec.ops) else rec.ops[k][0]
        where = "%s [ODF state %d, upper state %d; %s %s]" % (
            what, o, u, "during/after" if mid else "after", opname)
        if any(p[0] not in INFO_ONLY for p in probs):
            bad_states += 1
        for kind, msg in probs:
            counts[kind] = counts.get(kind, 0) + 1
            # Examples: the first state for each object, up to 8 objects.
            obj = msg.split(";")[0]
            ex = examples.setdefault(kind, {})
            if obj not in ex:
                ex[obj] = ["%s: %s" % (where, msg), 0]
            ex[obj][1] += 1
    print("# checked %d states in %.0fs with %d workers (total %.0fs)" % (
        len(results), time.time() - t1, nworkers, time.time() - t0))
    for kind in sorted(counts):
        print("%s %s: %d, in %d object(s)" % ("note" if kind in INFO_ONLY else "VIOLATION", kind,
                                             counts[kind], len(examples[kind])))
        for obj, (e, n) in list(examples[kind].items())[:8]:
            print("    %d state(s), first: %s" % (n, e))
    nviol = sum(v for kk, v in counts.items() if kk not in INFO_ONLY)
    print("SUMMARY: %d states checked, %d with violations, %d violations (%s)" % (
        len(results), bad_states, nviol,
        ", ".join("%s %d" % (kk, v) for kk, v in sorted(counts.items()) if kk not in INFO_ONLY) or "none"))
    if broken:
        print("ERROR: %d worker(s) failed; %d of %d states checked" % (broken, len(results), len(smp)))
        return 2
    if len(results) != len(smp):
        print("# time budget (PC_BUDGET=%ds) spent: %d of %d states checked, the last %d not" % (
            budget, len(results), len(smp), len(smp) - len(results)))
    return 1 if nviol else 0


if __name__ == "__main__":
    sys.exit(main())
