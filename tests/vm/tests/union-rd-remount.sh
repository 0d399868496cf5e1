#!/bin/bash
# A listing of a merged directory that goes on across remount,ro while
# the directory changes behind the union's back (issue 10): the
# listing began from the readdir state; the read-only union cannot
# reconcile the state, now stale, and lists the rest from memory.  Each
# name must come once, none that is still there may be missing.  Long
# names take several slots each, so the state's offsets are far from
# the positions of a listing from memory: before the fix, the rest of
# the listing skipped or repeated names.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 u=/mnt/u
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch ext4 "$(nth_disk 2)" $b1
mkodf_dev "$ODF_DEV"
opts="odf=$ODF_DEV,dirs=$b0=rw:$b1=ro"
long=$(printf 'n%.0s' $(seq 1 60))
mkdir -p $b0/d $b1/d
python3 - $b0/d $b1/d "$long" <<'PY' || fail "cannot fill the branches"
import os, sys
up, lo, long = sys.argv[1], sys.argv[2], sys.argv[3]
for i in range(2000):
    open("%s/%s_%04d" % (lo, long, i), "w").close()
for i in range(100):
    open("%s/u_%03d" % (up, i), "w").close()
PY

for round in 1 2 3; do
	union_mount $u "$opts"
	ls $u/d >/dev/null		# the state, fresh
	python3 - $u $b1/d "$round" <<'PY' || fail "round $round: $(cat /tmp/rdr.err)"
import os, sys, collections
u, lo, rnd = sys.argv[1], sys.argv[2], sys.argv[3]
want = set(os.listdir(u + "/d"))
got = []
it = os.scandir(u + "/d")
for e in it:
    got.append(e.name)
    if len(got) == 100 * int(rnd):
        # The rest of the listing after remount,ro, with the state stale.
        if os.system("mount -o remount,ro %s" % u):
            open("/tmp/rdr.err", "w").write("remount,ro failed"); sys.exit(1)
        open("%s/zz_new_%s" % (lo, rnd), "w").close()
it.close()
c = collections.Counter(got)
dup = [n for n, k in c.items() if k > 1]
missing = want - set(got)
extra = set(got) - want - {"zz_new_%s" % rnd}
msg = "%d names listed, %d expected; %d twice (%s), %d missing (%s), %d unknown" % (
    len(got), len(want), len(dup), " ".join(sorted(dup)[:3]), len(missing),
    " ".join(sorted(missing)[:3]), len(extra))
print("# round %s: %s" % (rnd, msg))
if dup or missing or extra:
    open("/tmp/rdr.err", "w").write(msg); sys.exit(1)
PY
	umount $u || fail "umount"
done
odf_check
echo PASS
