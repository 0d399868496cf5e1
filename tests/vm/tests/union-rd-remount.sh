#!/bin/bash
# A listing of a merged directory that goes on across remount,ro while
# the directory changes behind the union's back (issue 10).  Each name
# must come once, none that is still there may be missing.  Two ways:
# - on the same open stream (os.scandir): the stream goes on with the
#   view of the state it read (section 7: a direct change shows from
#   the next rewind or open);
# - from a new open at the offset the first part ended at (what an NFS
#   READDIR with a cookie does): the read-only union cannot reconcile
#   the state, now stale, and lists the rest from memory.  Long names
#   take several slots each, so the state's offsets are far from the
#   positions of a listing from memory: before the fix, the rest of the
#   listing skipped or repeated names.
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

	# The rest from a new open at the offset reached, the state stale.
	union_mount $u "$opts"
	ls $u/d >/dev/null
	ls $u/d >$TMP/want
	"$SRC/tests/vm/prog/dirlist" -b 4096 -n $((100 * round + 2)) $u/d >$TMP/first ||
		fail "round $round: dirlist of the first part"
	off=$(awk '$1 != "end" { o = $1 } END { print o }' $TMP/first)
	mount -o remount,ro $u || fail "round $round: remount,ro"
	: >$b1/d/zz_fresh_$round
	"$SRC/tests/vm/prog/dirlist" -s "$off" $u/d >$TMP/rest ||
		fail "round $round: dirlist -s $off after remount,ro"
	python3 - $TMP/want $TMP/first $TMP/rest "$round" <<'PY' || fail "round $round, new open: $(cat /tmp/rdr.err)"
import collections, sys
want = set(open(sys.argv[1]).read().split())
got = [l.split(" ", 3)[3].rstrip("\n") for f in sys.argv[2:4] for l in open(f)
       if not l.startswith("end ")]
got = [n for n in got if n not in (".", "..")]
c = collections.Counter(got)
dup = [n for n, k in c.items() if k > 1]
missing = want - set(got)
extra = set(got) - want - {"zz_fresh_%s" % sys.argv[4]}
msg = "%d names listed, %d expected; %d twice (%s), %d missing (%s), %d unknown" % (
    len(got), len(want), len(dup), " ".join(sorted(dup)[:3]), len(missing),
    " ".join(sorted(missing)[:3]), len(extra))
print("# round %s, new open: %s" % (sys.argv[4], msg))
if dup or missing or extra:
    open("/tmp/rdr.err", "w").write(msg); sys.exit(1)
PY
	umount $u || fail "umount"
done
odf_check
echo PASS
