#!/bin/bash
# timeout: 600
# Long names and deep paths behave as on ext4 (issue 10, done-when):
# every operation (create, open, stat, chmod, chown, truncate, link,
# symlink, mkdir, rmdir, mkfifo, mknod, rename, unlink) with a path
# argument of PATH_MAX-1 (4095) bytes, relative to a directory 10
# levels down (so the object is ~6600 bytes below the union root, as in
# a conformance suite that chdirs deep), and with components of exactly
# NAME_MAX (255) bytes, gives the same result through the union as on a
# plain ext4 mounted at a path of the same length; one byte more gives
# ENAMETOOLONG on both.  Done twice: in a 27-level directory chain that
# exists only on the lower branch (the calls copy it up) and in one the
# union created.  Then a whiteout and directory and file renames 27
# levels (~6900 bytes) down survive a remount, and the ODF is clean.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 u=/mnt/u e=/mnt/e
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch ext4 "$(nth_disk 2)" $b1
mkbranch ext4 "$(nth_disk 3)" $e
mkodf_dev "$ODF_DEV"
opts="odf=$ODF_DEV,dirs=$b0=rw:$b1=ro"
[ ${#u} = ${#e} ] || fail "the union and ext4 mount points differ in length"

# The same deep chain on the lower branch and on the plain ext4, made
# with relative calls (the paths are too long for one call).
cat >/tmp/longpath.py <<'PY'
import errno, os, stat, sys

NAME_MAX, PATH_MAX = 255, 4096
C = lambda ch, n=NAME_MAX: ch * n
DEPTH, BASE = 27, 10      # chain levels; the *at() calls start at level BASE

def walk(root, ch, depth, create=False):
    """An fd of ROOT/ch*255/... DEPTH levels down, with relative calls
    (the whole path is far longer than PATH_MAX)."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        if create:
            try:
                os.mkdir(C(ch), 0o755, dir_fd=fd)
            except FileExistsError:
                pass
        nfd = os.open(C(ch), os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = nfd
    return fd

def make(root, ch, with_files):
    fd = walk(root, ch, DEPTH, True)
    if with_files:
        for n in ("gone", "keep", C("k")[:200]):
            f = os.open(n, os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd)
            os.write(f, n.encode()[:8])
            os.close(f)
        os.mkdir("tree", dir_fd=fd)
        f = os.open("tree/inner", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd)
        os.write(f, b"inner")
        os.close(f)
    os.close(fd)

sys.path.insert(0, os.environ["SRC"] + "/tests/vm/prog")
from errname import err

def run(root, ch, log):
    """Every operation with a path argument of exactly PATH_MAX-1 bytes,
    relative to a directory BASE levels down (so the object is about
    6600 bytes below the union root), then one byte more."""
    base = walk(root, ch, BASE)
    rel = (C(ch) + "/") * (DEPTH - BASE - 2)  # ends DEPTH-2 levels down
    room = PATH_MAX - 1 - len(rel)
    assert 0 < room <= NAME_MAX, room
    leaf = lambda c: rel + c * room            # exactly 4095 bytes
    over = lambda c: rel + c * (room + 1)      # 4096: one byte more
    assert len(leaf("x")) == PATH_MAX - 1
    res = []
    def t(what, fn):
        r = err(fn)
        res.append("%s %s" % (what, r))
        log.write("%s %s\n" % (what, r))
    def creat(p):
        os.close(os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644,
                         dir_fd=base))
    def wr(p, s):
        f = os.open(p, os.O_WRONLY | os.O_TRUNC, dir_fd=base)
        os.write(f, s)
        os.close(f)
    def rd(p):
        f = os.open(p, os.O_RDONLY, dir_fd=base)
        b = os.read(f, 100)
        os.close(f)
        if b != b"data":
            raise OSError(errno.EIO, "content %r" % b)
    def trunc(p, n):
        # truncate(2) has no *at() form: open, then ftruncate
        f = os.open(p, os.O_WRONLY, dir_fd=base)
        try:
            os.ftruncate(f, n)
        finally:
            os.close(f)
    B = {"dir_fd": base}
    for tag, path in (("max", leaf), ("over", over)):
        t(tag + " create", lambda: creat(path("f")))
        t(tag + " open+write", lambda: wr(path("f"), b"data"))
        t(tag + " read", lambda: rd(path("f")))
        t(tag + " stat", lambda: os.stat(path("f"), **B))
        t(tag + " chmod", lambda: os.chmod(path("f"), 0o600, **B))
        t(tag + " chown", lambda: os.chown(path("f"), 1234, 1234, **B))
        t(tag + " truncate", lambda: trunc(path("f"), 2))
        t(tag + " link", lambda: os.link(path("f"), path("l"),
                                         src_dir_fd=base, dst_dir_fd=base))
        t(tag + " symlink", lambda: os.symlink("f", path("s"), **B))
        t(tag + " readlink", lambda: os.readlink(path("s"), **B))
        t(tag + " mkdir", lambda: os.mkdir(path("d"), **B))
        t(tag + " rmdir", lambda: os.rmdir(path("d"), **B))
        t(tag + " mkfifo", lambda: os.mkfifo(path("p"), **B))
        t(tag + " mknod", lambda: os.mknod(path("n"), 0o600 | stat.S_IFCHR,
                                          os.makedev(1, 3), **B))
        t(tag + " rename", lambda: os.rename(path("f"), path("r"),
                                             src_dir_fd=base, dst_dir_fd=base))
        t(tag + " unlink", lambda: os.unlink(path("r"), **B))
        for c in "lspn":
            t(tag + " unlink " + c, lambda: os.unlink(path(c), **B))
    # Components of exactly NAME_MAX bytes, and one more.
    top = root + "/" + C(ch)
    t("name255 create", lambda: os.close(os.open(top + "/" + C("n"),
                                                 os.O_CREAT | os.O_EXCL, 0o644)))
    t("name255 rename", lambda: os.rename(top + "/" + C("n"), top + "/" + C("m")))
    t("name255 mkdir", lambda: os.mkdir(top + "/" + C("o")))
    t("name255 rmdir", lambda: os.rmdir(top + "/" + C("o")))
    t("name255 unlink", lambda: os.unlink(top + "/" + C("m")))
    t("name256 create", lambda: os.close(os.open(top + "/" + C("n", 256),
                                                 os.O_CREAT | os.O_EXCL, 0o644)))
    t("name256 stat", lambda: os.stat(top + "/" + C("n", 256)))
    t("name256 mkdir", lambda: os.mkdir(top + "/" + C("n", 256)))
    os.close(base)
    return res

cmd = sys.argv[1]
if cmd == "make":
    make(sys.argv[2], sys.argv[3], sys.argv[4] == "files")
elif cmd == "run":
    with open(sys.argv[4], "w") as log:
        print("\n".join(run(sys.argv[2], sys.argv[3], log)))
elif cmd == "deep":
    # Deep whiteouts and a deep directory rename in chain "a".
    fd = walk(sys.argv[2], "a", DEPTH)
    os.unlink("gone", dir_fd=fd)
    os.rename("tree", "tree2", src_dir_fd=fd, dst_dir_fd=fd)
    os.rename(C("k")[:200], C("k")[:201], src_dir_fd=fd, dst_dir_fd=fd)
    os.close(fd)
elif cmd == "view":
    fd = walk(sys.argv[2], "a", DEPTH)
    names = sorted(n if len(n) < 20 else "%s*%d" % (n[0], len(n))
                   for n in os.listdir(fd))
    t2 = os.open("tree2", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
    print(" ".join(names), " ".join(sorted(os.listdir(t2))))
    os.close(t2)
    os.close(fd)
PY

python3 /tmp/longpath.py make $b1 a files || fail "cannot build the lower chain"
python3 /tmp/longpath.py make $e a files || fail "cannot build the ext4 chain"
# The lower branch, summed (its paths are longer than PATH_MAX: find
# walks it relative to each directory).
lower_sum() { (cd $b1 && find . -printf '%p %y %m %s %T@\n' | LC_ALL=C sort | md5sum); }
lower=$(lower_sum)

union_mount $u "$opts"
# Chain a: lower only (the calls copy it up); chain b: made through the
# union (and on ext4).
python3 /tmp/longpath.py make $u b nofiles || fail "cannot make chain b through the union"
python3 /tmp/longpath.py make $e b nofiles || fail "cannot make chain b on ext4"
for ch in a b; do
	want=$(python3 /tmp/longpath.py run $e $ch /tmp/lp-ext4-$ch.log) ||
		fail "the ext4 run of chain $ch failed"
	got=$(python3 /tmp/longpath.py run $u $ch /tmp/lp-union-$ch.log) ||
		fail "the union run of chain $ch failed"
	grep -q '^max create OK$' <<<"$want" || fail "ext4 itself refuses: $(echo $want)"
	grep -q '^over create ENAMETOOLONG$' <<<"$want" ||
		fail "ext4 accepts one byte more: $(echo $want)"
	[ "$want" = "$got" ] || fail "chain $ch: union and ext4 differ:
$(lines_diff "$want" "$got")"
done

# Deep whiteouts and renames, through a remount.
python3 /tmp/longpath.py deep $u || fail "deep unlink/rename failed"
python3 /tmp/longpath.py deep $e || fail "deep unlink/rename on ext4 failed"
want=$(python3 /tmp/longpath.py view $e)
expect_eq "deep directory" "$want" "$(python3 /tmp/longpath.py view $u)"
union_umount $u
union_mount $u "$opts"
expect_eq "deep directory after a remount" "$want" "$(python3 /tmp/longpath.py view $u)"
union_umount $u
expect_eq "lower branch unchanged" "$lower" "$(lower_sum)"
odf_check
