#!/bin/bash
# timeout: 600
# Renames of an ancestor racing unlink, create and lookup below it
# (issue 10, item 2).  One process renames a lower directory tree back
# and forth (t <-> t2) while others remove lower files, create files and
# stat names two levels below it, each through whichever name the tree
# has at that moment.  Whatever interleaving: every file whose unlink
# succeeded is gone, every file whose create succeeded is there, and
# every other lower file is there, now and after a remount; a name is
# never seen through stat after its unlink returned.  With the
# namespace keyed by union path, an unlink racing the rename wrote its
# whiteout under the old path and the file stayed visible.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 u=/mnt/u
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch ext4 "$(nth_disk 2)" $b1
mkodf_dev "$ODF_DEV"
n=300
mkdir -p $b1/t/sub
for i in $(seq 1 $n); do echo "f$i" >$b1/t/sub/f$i; done
union_mount $u "odf=$ODF_DEV,dirs=$b0=rw:$b1=ro"

cat >/tmp/race.py <<'PY'
import errno, os, sys, time
u, role, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
def through(rel, fn):
    """Run fn(path) on t/REL or t2/REL, whichever exists (retrying)."""
    for _ in range(10000):
        for top in ("t", "t2"):
            try:
                return fn(os.path.join(u, top, rel))
            except FileNotFoundError:
                continue
    raise SystemExit("%s: %s never found" % (role, rel))
if role == "rename":
    stop = time.time() + float(sys.argv[4])
    k = 0
    while time.time() < stop:
        a, b = ("t", "t2") if k % 2 == 0 else ("t2", "t")
        os.rename(os.path.join(u, a), os.path.join(u, b))
        k += 1
    if k % 2:
        os.rename(os.path.join(u, "t2"), os.path.join(u, "t"))
    print("renames", k)
elif role == "unlink":
    gone = []
    for i in range(1, n + 1, 2):
        through("sub/f%d" % i, os.unlink)
        gone.append(i)
        # Once unlink returned, no name may show the file again.
        for top in ("t", "t2"):
            if os.path.lexists(os.path.join(u, top, "sub/f%d" % i)):
                raise SystemExit("f%d visible under %s after its unlink" % (i, top))
    print(" ".join(map(str, gone)))
elif role == "create":
    for i in range(1, n // 2 + 1):
        def mk(p):
            fd = os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            os.write(fd, b"c%d" % i)
            os.close(fd)
        through("sub/c%d" % i, mk)
    print("created", n // 2)
elif role == "stat":
    seen = 0
    for k in range(4 * n):
        i = 2 * (k % (n // 2)) + 2      # even files: never removed
        through("sub/f%d" % i, os.stat)
        seen += 1
    print("stats", seen)
PY

python3 /tmp/race.py $u rename $n 20 >/tmp/r.out 2>&1 & pr=$!
python3 /tmp/race.py $u unlink $n >/tmp/u.out 2>&1 & pu=$!
python3 /tmp/race.py $u create $n >/tmp/c.out 2>&1 & pc=$!
python3 /tmp/race.py $u stat $n >/tmp/s.out 2>&1 & ps=$!
wait $pu || fail "unlinker: $(cat /tmp/u.out)"
wait $pc || fail "creator: $(cat /tmp/c.out)"
wait $ps || fail "stat: $(cat /tmp/s.out)"
wait $pr || fail "renamer: $(cat /tmp/r.out)"
note "$(cat /tmp/r.out), $(cat /tmp/s.out)"

# want: even lower files and every created file.
want=$( (for i in $(seq 2 2 $n); do echo f$i; done
	for i in $(seq 1 $((n / 2))); do echo c$i; done) | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')
check() {
	expect_eq "$1: t/sub" "$want" "$(union_ls $u/t/sub)"
	[ -e $u/t2 ] && fail "$1: t2 exists"
	for i in $(seq 1 2 $n); do
		[ -e $u/t/sub/f$i ] && fail "$1: removed f$i is visible"
	done
	return 0
}
check "after the race"
union_umount $u
union_mount $u "odf=$ODF_DEV,dirs=$b0=rw:$b1=ro"
check "after a remount"
union_umount $u
odf_check
