#!/bin/bash
# timeout: 900
# A merged directory bigger than a build keeps index entries in memory
# (docs/odf-format.md 7.5: 16384), so its build puts them into the index
# in batches and finds the names of lower branches both among the
# waiting entries and in the index written so far:
# - three branches (ext4 upper, xfs and ext4 lower), 46,099 names, 6,000
#   of them on two branches, 100 long names (several slots each) on two
#   lower branches, one lower name removed (whiteout);
# - the union lists every name once, the one of the highest branch
#   (inode numbers and types checked for every name), in one open stream
#   that seeks back and forth (rdseek verify: seekdir to recorded offsets
#   within the stream, rewinddir, SEEK_END);
# - the offsets are the same after remount (a listing from the state) and
#   after names are added directly in a lower branch (a reconcile, which
#   stages its entries the same way);
# - the state holds the names in listing order (odfedit rd-list) and
#   odfck finds the ODF clean;
# - d/ has an XFS part, which gives no bound on its names: its build
#   counts them first (readdir_counted 1); e/, on the two ext4 branches
#   only (45,000 names, 3,000 on both), is built without counting, its
#   names staged in memory that grows as they come (16384 entries, then
#   doubling), and so is its reconcile after 20,000 names are added
#   directly: every name once, offsets kept, readdir_counted still 1.
. "$SRC/tests/vm/lib.sh"

RD=$SRC/tests/vm/prog/rdseek
b0=/mnt/b0 b1=/mnt/b1 b2=/mnt/b2 u=/mnt/u
TMP=$(mktemp -d)
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch xfs "$(nth_disk 2)" $b1
mkbranch ext4 "$(nth_disk 3)" $b2
mkodf_dev "$ODF_DEV"
opts="odf=$ODF_DEV,dirs=$b0=rw:$b1=ro:$b2=ro"

python3 - $b0/d $b1/d $b2/d $TMP/expect <<'PY' || fail "cannot make the branch directories"
import os, sys
up, l1, l2, expect = sys.argv[1:]
for d in (up, l1, l2):
    os.mkdir(d)
def mk(d, names):
    for n in names:
        os.close(os.open(os.path.join(d, n), os.O_CREAT | os.O_WRONLY, 0o644))
longs = ["long%03d-" % i + "x" * 190 for i in range(100)]
mk(up, ["u%05d" % i for i in range(10000)] + ["d%05d" % i for i in range(2000)])
mk(l1, ["l%05d" % i for i in range(20000)] + ["d%05d" % i for i in range(5000)] + longs)
mk(l2, ["m%05d" % i for i in range(10000)] + ["d%05d" % i for i in range(3000, 6000)] + longs)
names = (["u%05d" % i for i in range(10000)] + ["d%05d" % i for i in range(6000)] +
         ["l%05d" % i for i in range(20000) if i != 5] + ["m%05d" % i for i in range(10000)] + longs)
with open(expect, "w") as f:
    f.write("".join(n + "\n" for n in names))
print(len(names), "names")
PY

union_mount $u "$opts"
rm $u/d/l00005 || fail "rm of a lower name"
[ -e $b1/d/l00005 ] || fail "rm through the union removed the lower file"
# The first listing builds the state.
"$RD" record --strict $u/d $TMP/r1 || fail "first listing: $(tail -n 3 $TMP/r1 2>/dev/null)"
S=/sys/fs/unionfs/$(mountpoint -d $u)
expect_eq "builds that counted the names first (d/ has an XFS part)" 1 "$(cat $S/readdir_counted)"
n=$(grep -c '^e ' $TMP/r1)
[ "$n" = $((46099 + 2)) ] || fail "the union lists $n entries, 46101 wanted (46099 names, . and ..)"
"$RD" verify --strict --samples 0 --expect $TMP/expect $u/d $TMP/r1 ||
	fail "listing after the build (above)"
# Which branch each name comes from: the number is that of the highest
# branch holding it (ids 1, 2, 3 in mount order on a fresh ODF).
long=$(cd $b1/d && ls | grep '^long042-')
for nb in u00000:1 d00000:1 d01999:1 d02000:2 d04999:2 d05000:3 l00000:2 \
	m09999:3 "$long":2; do
	name=${nb%:*} id=${nb##*:}
	case $id in 1) b=$b0 ;; 2) b=$b1 ;; 3) b=$b2 ;; esac
	expect_eq "st_ino of $name (branch $id)" "$(uino "$id" "$(ino "$b/d/$name")")" \
		"$(ino "$u/d/$name")"
done
union_umount $u

# From the state after remount: the same offsets.
union_mount $u "$opts"
"$RD" verify --strict --samples 2000 --expect $TMP/expect $u/d $TMP/r1 ||
	fail "listing from the state after remount (above)"
union_umount $u

# Names added directly in both lower branches: a reconcile keeps every
# offset and puts the new names after them.
python3 - $b1/d $b2/d $TMP/expect <<'PY' || fail "cannot add the names"
import os, sys
l1, l2, expect = sys.argv[1:]
new = []
for i in range(3000):
    for d, p in ((l1, "n1-"), (l2, "n2-")):
        n = "%s%04d" % (p, i)
        os.close(os.open(os.path.join(d, n), os.O_CREAT | os.O_WRONLY, 0o644))
        new.append(n)
# a name on both lower branches: the first lower one wins
os.close(os.open(os.path.join(l2, "n1-0000"), os.O_CREAT | os.O_WRONLY, 0o644))
with open(expect, "a") as f:
    f.write("".join(n + "\n" for n in new))
PY
union_mount $u "$opts"
"$RD" verify --strict --samples 2000 --expect $TMP/expect $u/d $TMP/r1 ||
	fail "listing after names were added directly in the lower branches (above)"
expect_eq "st_ino of n1-0000 (on both lower branches: the first one's)" \
	"$(uino 2 "$(ino $b1/d/n1-0000)")" "$(ino $u/d/n1-0000)"
"$RD" record --strict $u/d $TMP/r2 || fail "listing after the reconcile"
dino=$(stat -c %i $u/d)
union_umount $u

"$SRC/tests/unit/odfedit" "$ODF_DEV" rd-list "$dino" >$TMP/rdlist 2>&1 ||
	fail "odfedit rd-list: $(tail -n 1 $TMP/rdlist)"
want=$(awk '$1 == "e" && $3 != "." && $3 != ".." { print $3 }' $TMP/r2)
got=$(awk '$1 != "end" { print $2 }' $TMP/rdlist)
[ "$want" = "$got" ] || fail "the readdir state lists other names, or in another order, than the union:
$(lines_diff "$want" "$got" | head -n 6)"

# ---- e/: on ext4 branches only, built and reconciled without counting ----
# Names of 23 bytes: the branches' sizes bound them by about 160,000,
# above the 131,072 a build once held in memory without counting.
x=xxxxxxxxxxxxxxxx
python3 - $b0/e $b2/e $TMP/expect-e $x <<'PY' || fail "cannot make e/"
import os, sys
up, l2, expect, x = sys.argv[1:]
def mk(d, names):
    os.makedirs(d, exist_ok=True)
    for n in names:
        os.close(os.open(os.path.join(d, n), os.O_CREAT | os.O_WRONLY, 0o644))
def nm(p, r):
    return ["%s%05d-%s" % (p, i, x) for i in r]
mk(up, nm("a", range(15000)) + nm("c", range(3000)))
mk(l2, nm("b", range(25000)) + nm("c", range(5000)))
names = nm("a", range(15000)) + nm("b", range(25000)) + nm("c", range(5000))
with open(expect, "w") as f:
    f.write("".join(n + "\n" for n in names))
PY
union_mount $u "$opts"
S=/sys/fs/unionfs/$(mountpoint -d $u)
"$RD" record --strict $u/e $TMP/e1 || fail "first listing of e/: $(tail -n 3 $TMP/e1 2>/dev/null)"
expect_eq "entries of e/" $((45000 + 2)) "$(grep -c '^e ' $TMP/e1)"
"$RD" verify --strict --samples 1000 --expect $TMP/expect-e $u/e $TMP/e1 ||
	fail "listing of e/ after its build (above)"
expect_eq "builds that counted the names first (e/: ext4 only)" 0 "$(cat $S/readdir_counted)"
expect_eq "states built" 1 "$(cat $S/readdir_built)"
expect_eq "st_ino of e/c00000-$x (upper)" "$(uino 1 "$(ino $b0/e/c00000-$x)")" "$(ino $u/e/c00000-$x)"
expect_eq "st_ino of e/c04000-$x (b2)" "$(uino 3 "$(ino $b2/e/c04000-$x)")" "$(ino $u/e/c04000-$x)"
union_umount $u
python3 - $b2/e $TMP/expect-e $x <<'PY' || fail "cannot add names to e/"
import os, sys
l2, expect, x = sys.argv[1:]
new = ["n%05d-%s" % (i, x) for i in range(20000)]
for n in new:
    os.close(os.open(os.path.join(l2, n), os.O_CREAT | os.O_WRONLY, 0o644))
with open(expect, "a") as f:
    f.write("".join(n + "\n" for n in new))
PY
union_mount $u "$opts"
S=/sys/fs/unionfs/$(mountpoint -d $u)
"$RD" verify --strict --samples 1000 --expect $TMP/expect-e $u/e $TMP/e1 ||
	fail "listing of e/ after 20000 names were added directly (above)"
expect_eq "states reconciled" 1 "$(cat $S/readdir_reconciled)"
expect_eq "builds that counted the names first (e/'s reconcile)" 0 "$(cat $S/readdir_counted)"
union_umount $u
odf_check
rm -rf "$TMP"
