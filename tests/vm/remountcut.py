"""Power cuts during branch changes (tests/vm/tests/union-remount-crash.sh;
docs/odf-format.md 3.5 and 9.11).

The ODF is on a dm-log-writes target; the branches are not logged (a
branch change writes only the ODF).  A union is mounted with set A,
then remounted with add= (set B), then with del= (set C), then
unmounted, with a mark in the log after each step.  The log is
replayed to every FLUSH/FUA entry and every mark; at each state:

  * odfck -p repairs what it finds (exit below 4);
  * exactly one of the three sets mounts: the ODF records one table;
  * the set is never older than the one of an earlier state, and after
    the mark of a remount that returned it is that remount's set (the
    change was durable when remount returned);
  * the union shows that set's view: names, contents, the whiteout
    still hiding a name the added branch has, st_ino of the names of
    the branches that stay, d_ino = st_ino of every name (m/, a
    lower-only directory listed with set B, is renumbered by the del=
    and its readdir state moved: spec 3.5);
  * odfck -fn is clean after the union's umount.

Devices: the ODF is a slice of $ODF_DEV; BRANCH_DEVS 1 = upper (ext4),
2 = lower 1 (ext4), 3 = the log, 4 = the replay copy, 5 = copy-on-write
space of the snapshot each state is checked on.  Lower 2 is a tmpfs.
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import powercut as pc  # noqa: E402  (dm, mount and log helpers)

BR = os.environ["BRANCH_DEVS"].split()
UPD, L1D, LOG, REP, COW = BR[0], BR[1], BR[2], BR[3], BR[4]
SLICE = 256 << 11
UP, L1, L2, U = "/mnt/rc-up", "/mnt/rc-l1", "/mnt/rc-l2", "/mnt/rc-u"

SETS = {
    "A": "%s=rw:%s=ro" % (UP, L1),
    "B": "%s=rw:%s=ro:%s=ro" % (UP, L2, L1),
    "C": "%s=rw:%s=ro" % (UP, L2),
}
ORDER = "ABC"


def wfile(path, data):
    with open(path, "w") as f:
        f.write(data)


def view(root):
    """{relative path: content or '<dir>'} and {relative path: st_ino};
    a name whose readdir d_ino is not its st_ino gets "d_ino N" added."""
    names, inos = {}, {}
    for dirpath, dirs, files in os.walk(root):
        for e in os.scandir(dirpath):
            rel = os.path.relpath(e.path, root)
            st = os.lstat(e.path)
            inos[rel] = st.st_ino
            names[rel] = "<dir>" if e.is_dir(follow_symlinks=False) else open(e.path).read()
            if e.inode() != st.st_ino:
                names[rel] += " d_ino %d" % e.inode()
    return names, inos


def setup():
    for d in (UP, L1, L2, U):
        os.makedirs(d, exist_ok=True)
    pc.sh("mkfs.ext4", "-q", "-F", UPD)
    pc.sh("mkfs.ext4", "-q", "-F", L1D)
    pc.mount(UPD, UP, "ext4")
    pc.mount(L1D, L1, "ext4")
    pc.mount("none", L2, "tmpfs")
    for d in (UP, L1):
        os.rmdir(os.path.join(d, "lost+found"))
    os.makedirs(L1 + "/a")
    wfile(L1 + "/a/f1", "f1")
    wfile(L1 + "/a/f2", "f2")
    wfile(L1 + "/x", "x1")
    wfile(L1 + "/k", "k1")
    # m/: on both lower branches, never written: numbered after its
    # part on lower 1 (the oldest), so del= of lower 1 renumbers it and
    # moves its readdir state (the listing of set B made it).
    os.makedirs(L1 + "/m")
    wfile(L1 + "/m/p1", "p1")
    os.makedirs(L2 + "/m")
    wfile(L2 + "/m/q1", "q1")
    os.makedirs(L2 + "/a")
    wfile(L2 + "/a/f3", "f3")
    wfile(L2 + "/x", "x2")
    wfile(L2 + "/y", "y2")


def main():
    setup()
    for m in ("dm_mod", "dm_log_writes", "dm_snapshot"):
        subprocess.run(["modprobe", m], stderr=subprocess.DEVNULL)
    odf = pc.dm_create("rc-odf", "0 %d linear %s 0" % (SLICE, pc.devnum(pc.ODF_DEV)))
    pc.sh(pc.MKODF, "-q", "-f", odf)
    # Set A's ODF: a whiteout (x, which the branch added later also
    # has), a deleted lower file, a new file.
    pc.mount("none", U, "unionfs", "odf=%s,dirs=%s" % (odf, SETS["A"]))
    os.unlink(U + "/x")
    os.unlink(U + "/a/f2")
    wfile(U + "/new", "new")
    pc.umount(U)
    # The log starts here, from a copy of that ODF.
    rep = pc.dm_create("rc-rep", "0 %d linear %s 0" % (SLICE, pc.devnum(REP)))
    pc.sh("dd", "if=" + odf, "of=" + rep, "bs=1M", "conv=fsync", "status=none")
    lw = pc.dm_create("rc-lw", "0 %d log-writes %s %s" % (SLICE, pc.devnum(odf), pc.devnum(LOG)))

    pc.mount("none", U, "unionfs", "odf=%s,dirs=%s" % (lw, SETS["A"]))
    truth = {"A": view(U)}
    pc.mark("rc-lw", "A")
    pc.sh("mount", "-o", "remount,add=%s=ro" % L2, U)
    truth["B"] = view(U)
    pc.mark("rc-lw", "B")
    pc.sh("mount", "-o", "remount,del=%s" % L1, U)
    truth["C"] = view(U)
    pc.mark("rc-lw", "C")
    pc.umount(U)
    pc.dm_remove("rc-lw")

    # What the sets must show (so the live run is checked too).
    want = {
        "A": {"a": "<dir>", "a/f1": "f1", "k": "k1", "new": "new", "m": "<dir>",
              "m/p1": "p1"},
        "B": {"a": "<dir>", "a/f1": "f1", "a/f3": "f3", "k": "k1", "new": "new", "y": "y2",
              "m": "<dir>", "m/p1": "p1", "m/q1": "q1"},
        "C": {"a": "<dir>", "a/f3": "f3", "new": "new", "y": "y2", "m": "<dir>",
              "m/q1": "q1"},
    }
    bad = []
    for s in ORDER:
        if truth[s][0] != want[s]:
            bad.append("live union with set %s shows %s, not %s" % (s, truth[s][0], want[s]))
    # Adding a branch moves no number: a (a lower-only directory the
    # added branch has too, numbered after its oldest part), a/f1, new.
    for p in ("a", "a/f1", "k", "new"):
        if truth["A"][1][p] != truth["B"][1][p]:
            bad.append("st_ino of %s: %d with set A, %d after add=" % (p, truth["A"][1][p], truth["B"][1][p]))

    ents = pc.parse_log(LOG)
    marks = {m: i for i, fl, m in ents if "MARK" in fl}
    states = sorted({0, len(ents)} | {i + 1 for i, fl, m in ents
                                     if "MARK" in fl or any(x in fl for x in pc.FLUSHY)})
    must = {marks[s] + 1: s for s in ORDER}   # after each mark, that set
    print("# ODF log: %d entries, %d states to check" % (len(ents), len(states)), flush=True)
    srv = subprocess.Popen([pc.LOGREPLAY, "--log", LOG, "--replay", rep, "--serve"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    last, seen, t0 = 0, {}, time.time()
    for n in states:
        srv.stdin.write("%d\n" % n)
        srv.stdin.flush()
        ok = srv.stdout.readline().split()
        if ok != ["ok", str(n)]:
            bad.append("state %d: logreplay said %s" % (n, ok))
            break
        snap = pc.dm_create("rc-snap", "0 %d snapshot %s %s N 16" % (SLICE, rep, pc.devnum(COW)))
        try:
            r = subprocess.run([pc.ODFCK, "-p", snap], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            if r.returncode >= 4:
                bad.append("state %d: odfck -p exit %d: %s" % (n, r.returncode, r.stdout[-300:]))
                continue
            mounted = []
            for s in ORDER:
                try:
                    pc.mount("none", U, "unionfs", "odf=%s,dirs=%s" % (snap, SETS[s]))
                except OSError:
                    continue
                mounted.append(s)
                got = view(U)
                pc.umount(U)
                if got != truth[s]:
                    bad.append("state %d, set %s: the union shows %s, not %s" % (n, s, got, truth[s]))
            if len(mounted) != 1:
                bad.append("state %d: sets that mount: %s (want exactly one)" % (n, mounted or "none"))
                continue
            s = mounted[0]
            seen[s] = seen.get(s, 0) + 1
            if ORDER.index(s) < last:
                bad.append("state %d: set %s after set %s at an earlier state" % (n, s, ORDER[last]))
            last = max(last, ORDER.index(s))
            if n in must and must[n] != s:
                bad.append("state %d (mark %s: that remount had returned): set %s" % (n, must[n], s))
            r = subprocess.run([pc.ODFCK, "-fn", snap], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            if r.returncode:
                bad.append("state %d: odfck -fn after umount exit %d: %s" % (
                    n, r.returncode, r.stdout[-300:]))
        finally:
            pc.dm_remove("rc-snap")
    srv.stdin.close()
    srv.wait()
    print("# checked %d states in %.0fs; the set each showed: %s" % (
        len(states), time.time() - t0, ", ".join("%s %d" % kv for kv in sorted(seen.items()))))
    for b in bad[:20]:
        print("VIOLATION " + b)
    for m in (U, L2, L1, UP):
        subprocess.run(["umount", m], stderr=subprocess.DEVNULL)
    pc.dm_remove("rc-rep")
    pc.dm_remove("rc-odf")
    if not bad and len(seen) != 3:
        print("VIOLATION: not every set was seen: %s" % seen)
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
