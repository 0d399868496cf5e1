#!/bin/bash
# timeout: 600
# Long names and deep paths behave as on ext4 (issue 10, done-when):
# every operation (create, open, stat, chmod, chown, truncate, link,
# symlink, mkdir, rmdir, mkfifo, mknod, rename, unlink) on a path of
# PATH_MAX-1 (4095) bytes, and with components of exactly NAME_MAX
# (255) bytes, gives the same result through the union as on a plain
# ext4 mounted at a path of the same length; one byte more gives
# ENAMETOOLONG on both.  Done twice: in a directory chain that exists
# only on the lower branch (every call copies it up) and in one the
# union created.  Then deep whiteouts and a deep directory rename
# survive a remount, and the ODF is clean.
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

def chain(root, ch, depth):
    """Make ROOT/ch*255/... DEPTH levels deep with relative calls."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        try:
            os.mkdir(C(ch), 0o755, dir_fd=fd)
        except FileExistsError:
            pass
        nfd = os.open(C(ch), os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = nfd
    return fd

def make(root, with_files):
    fd = chain(root, "a", 15)
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

def err(fn):
    try:
        fn()
        return "OK"
    except OSError as x:
        return errno.errorcode.get(x.errno, "E%d" % x.errno)

def run(root, ch, log):
    """Every operation at a path of exactly PATH_MAX-1 bytes below ROOT
    (in chain CH), then one byte more; returns the list of results."""
    d = root + ("/" + C(ch)) * 15
    room = PATH_MAX - 1 - len(d) - 1          # bytes left for a leaf name
    assert 0 < room <= NAME_MAX, room
    leaf = lambda c: d + "/" + c * room       # exactly 4095 bytes
    over = lambda c: d + "/" + c * (room + 1)  # 4096: one byte more
    assert len(leaf("x")) == PATH_MAX - 1
    res = []
    def t(what, fn):
        r = err(fn)
        res.append("%s %s" % (what, r))
        log.write("%s %s\n" % (what, r))
    def creat(p):
        os.close(os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
    def wr(p, s):
        f = os.open(p, os.O_WRONLY | os.O_TRUNC)
        os.write(f, s)
        os.close(f)
    def rd(p):
        f = os.open(p, os.O_RDONLY)
        b = os.read(f, 100)
        os.close(f)
        if b != b"data":
            raise OSError(errno.EIO, "content %r" % b)
    for tag, path in (("max", leaf), ("over", over)):
        t(tag + " create", lambda: creat(path("f")))
        t(tag + " open+write", lambda: wr(path("f"), b"data"))
        t(tag + " read", lambda: rd(path("f")))
        t(tag + " stat", lambda: os.stat(path("f")))
        t(tag + " chmod", lambda: os.chmod(path("f"), 0o600))
        t(tag + " chown", lambda: os.chown(path("f"), 1234, 1234))
        t(tag + " truncate", lambda: os.truncate(path("f"), 2))
        t(tag + " link", lambda: os.link(path("f"), path("l")))
        t(tag + " symlink", lambda: os.symlink("f", path("s")))
        t(tag + " readlink", lambda: os.readlink(path("s")))
        t(tag + " mkdir", lambda: os.mkdir(path("d")))
        t(tag + " rmdir", lambda: os.rmdir(path("d")))
        t(tag + " mkfifo", lambda: os.mkfifo(path("p")))
        t(tag + " mknod", lambda: os.mknod(path("n"), 0o600 | stat.S_IFCHR,
                                          os.makedev(1, 3)))
        t(tag + " rename", lambda: os.rename(path("f"), path("r")))
        t(tag + " unlink", lambda: os.unlink(path("r")))
        for c in "lspn":
            t(tag + " unlink " + c, lambda: os.unlink(path(c)))
    # Components of exactly NAME_MAX bytes, and one more.
    top = root + "/" + C(ch)
    t("name255 create", lambda: creat(top + "/" + C("n")))
    t("name255 rename", lambda: os.rename(top + "/" + C("n"), top + "/" + C("m")))
    t("name255 mkdir", lambda: os.mkdir(top + "/" + C("o")))
    t("name255 rmdir", lambda: os.rmdir(top + "/" + C("o")))
    t("name255 unlink", lambda: os.unlink(top + "/" + C("m")))
    t("name256 create", lambda: creat(top + "/" + C("n", 256)))
    t("name256 stat", lambda: os.stat(top + "/" + C("n", 256)))
    t("name256 mkdir", lambda: os.mkdir(top + "/" + C("n", 256)))
    return res

cmd = sys.argv[1]
if cmd == "make":
    make(sys.argv[2], sys.argv[3] == "files")
elif cmd == "run":
    with open(sys.argv[4], "w") as log:
        print("\n".join(run(sys.argv[2], sys.argv[3], log)))
elif cmd == "deep":
    # Deep whiteouts and a deep directory rename in chain "a".
    d = sys.argv[2] + ("/" + C("a")) * 15
    os.unlink(d + "/gone")
    os.rename(d + "/tree", d + "/tree2")
    os.rename(d + "/" + C("k")[:200], d + "/" + C("k")[:201])
elif cmd == "view":
    d = sys.argv[2] + ("/" + C("a")) * 15
    names = sorted(n if len(n) < 20 else "%s*%d" % (n[0], len(n))
                   for n in os.listdir(d))
    print(" ".join(names), " ".join(sorted(os.listdir(d + "/tree2"))))
PY

python3 /tmp/longpath.py make $b1 files || fail "cannot build the lower chain"
python3 /tmp/longpath.py make $e files || fail "cannot build the ext4 chain"
snap lower $b1

union_mount $u "$opts"
# Chain a: lower only (copied up by the calls); chain b: made through
# the union (and on ext4).
python3 /tmp/longpath.py make $u nofiles || fail "cannot make chain a through the union"
for ch in a b; do
	if [ $ch = b ]; then
		python3 -c "
import os
fd = os.open('$u', os.O_RDONLY)
for i in range(15):
    try: os.mkdir('b' * 255, dir_fd=fd)
    except FileExistsError: pass
    n = os.open('b' * 255, os.O_RDONLY, dir_fd=fd); os.close(fd); fd = n
" || fail "cannot make chain b through the union"
		python3 -c "
import os
fd = os.open('$e', os.O_RDONLY)
for i in range(15):
    try: os.mkdir('b' * 255, dir_fd=fd)
    except FileExistsError: pass
    n = os.open('b' * 255, os.O_RDONLY, dir_fd=fd); os.close(fd); fd = n
" || fail "cannot make chain b on ext4"
	fi
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
snap after $b1
expect_same "lower branch" "$lower" "$after"
odf_check
