#!/bin/bash
# timeout: 600
# Changes through fds racing renames, removals and branch mode changes
# of the files' names (the copy through an fd's dentry, copyup.c
# unionfs_copy_name_current()).  Movers own disjoint files: each renames
# some (in place), removes some, renames then removes some, through the
# union, and records what must be left.  Changers open fds of the
# original names, then fchmod, fchown and fstat through them while the
# names move; a remounter flips l1 between rw and ro, so a change copies
# the file up (ro) or changes it in place (rw).  Whatever interleaving:
# the union shows exactly the names the movers left, each with its
# data; no removed file and no name a file left comes back; a change
# fails only with ENOENT or ESTALE; odfck finds nothing.  The changers
# open every name before the movers start and keep the fds; each fd is
# changed once, at a random time while the names move, so the change is
# the file's first and must copy it when its branch is read-only then,
# through a dentry whose name may have moved or gone (the counts of
# each result are printed; some must be ENOENT or ESTALE).
. "$SRC/tests/vm/lib.sh"

up=/mnt/up l1=/mnt/l1 l2=/mnt/l2 u=/mnt/u
mkbranch ext4 "$(nth_disk 1)" $up
mkbranch ext4 "$(nth_disk 2)" $l1
mkbranch ext4 "$(nth_disk 3)" $l2
n=60
mkdir -p $l1/e $l2/d
for i in $(seq 0 $((n - 1))); do
	echo "e$i" >$l1/e/f$i
	echo "d$i" >$l2/d/g$i
done
chmod 644 $l1/e/* $l2/d/*
mkodf_dev "$ODF_DEV"
union_mount $u "odf=$ODF_DEV,dirs=$up=rw:$l1=rw:$l2=ro"

cat >/tmp/racefd.py <<'PY'
import errno, os, random, subprocess, sys, time
u, l1, role, seed, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
random.seed(seed)
names = [("e", "f%d" % i) for i in range(n)] + [("d", "g%d" % i) for i in range(n)]
ok_errs = (errno.ENOENT, errno.ESTALE)
if role == "mover":
    mine = [x for i, x in enumerate(names) if i % 2 == seed % 2]
    left = []
    time.sleep(1)    # the changers open their fds first
    for d, f in mine:
        time.sleep(random.random() * 0.25)
        p = os.path.join(u, d, f)
        act = random.choice(("keep", "mv", "rm", "mvrm", "mvrm", "mv2"))
        if act == "keep":
            left.append("%s/%s" % (d, f))
        elif act == "mv":
            os.rename(p, p + "r")
            left.append("%s/%sr" % (d, f))
        elif act == "rm":
            os.unlink(p)
        elif act == "mvrm":
            os.rename(p, p + "r")
            time.sleep(random.random() * 0.05)
            os.unlink(p + "r")
        else:
            os.rename(p, p + "r")
            time.sleep(random.random() * 0.05)
            os.rename(p + "r", p + "s")
            left.append("%s/%ss" % (d, f))
    print(" ".join(left))
elif role == "changer":
    fds = [(d, f, os.open(os.path.join(u, d, f), os.O_RDONLY)) for d, f in names]
    mine = [x for i, x in enumerate(fds) if i % 3 == seed % 3]
    start = time.time()
    plan = sorted((1 + random.random() * 9, x) for x in mine)
    counts = {}
    for when, (d, f, fd) in plan:
        time.sleep(max(0, start + when - time.time()))
        for op in ("chmod", "chown", "stat"):
            try:
                if op == "chmod":
                    os.fchmod(fd, random.choice((0o600, 0o640, 0o644)))
                elif op == "chown":
                    os.fchown(fd, random.choice((0, 4242)), -1)
                else:
                    os.fstat(fd)
                r = "OK"
            except OSError as e:
                if e.errno not in ok_errs:
                    raise SystemExit("%s %s/%s: %s" % (op, d, f, e))
                r = errno.errorcode[e.errno]
            counts[op + " " + r] = counts.get(op + " " + r, 0) + 1
    for d, f, fd in fds:
        os.close(fd)
    print(" ".join("%s=%d" % kv for kv in sorted(counts.items())).replace("chmod ", "chmod_").replace("chown ", "chown_").replace("stat ", "stat_"))
else:
    stop = time.time() + 11
    k = 0
    while time.time() < stop:
        mode = "ro" if k % 2 == 0 else "rw"
        subprocess.run(["mount", "-o", "remount,mode=%s=%s" % (l1, mode), u], check=True)
        k += 1
        time.sleep(0.2)
    subprocess.run(["mount", "-o", "remount,mode=%s=rw" % l1, u], check=True)
    print("remounts", k)
PY

pids=""
for s in 1 2; do
	python3 /tmp/racefd.py $u $l1 mover $s $n >$TMP/mover$s.out 2>&1 & pids="$pids $!"
done
for s in 3 4 5; do
	python3 /tmp/racefd.py $u $l1 changer $s $n >$TMP/changer$s.out 2>&1 & pids="$pids $!"
done
python3 /tmp/racefd.py $u $l1 remount 6 $n >$TMP/remount.out 2>&1 & pids="$pids $!"
bad=0
for p in $pids; do wait $p || bad=1; done
for f in $TMP/mover*.out $TMP/changer*.out $TMP/remount.out; do echo "$(basename $f): $(cat $f)"; done
[ $bad = 0 ] || fail "a racing process failed (outputs above)"
cat $TMP/changer*.out | grep -Eq "chmod_(ENOENT|ESTALE)" ||
	fail "no fchmod failed with ENOENT or ESTALE: the race did not reach the moved names' fds"

want=$(cat $TMP/mover*.out | tr ' ' '\n' | grep . | sort | tr '\n' ' ')
check_union() {
	got=$( (for d in e d; do for x in $(union_ls $u/$d); do echo "$d/$x"; done; done) | sort | tr '\n' ' ')
	expect_eq "$1: the union's names are the ones the movers left" "$want" "$got"
	for x in $want; do
		name=${x#*/}
		i=${name%[rs]}
		expect_eq "$1: data of $x" "${x%%/*}${i#[fg]}" "$(cat $u/$x)"
	done
}
check_union "after the race"
union_umount $u
"$ODFCK" -fn "$ODF_DEV" >$TMP/fsck.out 2>&1 || { cat $TMP/fsck.out; fail "odfck -fn"; }
union_mount $u "odf=$ODF_DEV,dirs=$up=rw:$l1=rw:$l2=ro"
check_union "after a remount"
union_umount $u
exit 0
