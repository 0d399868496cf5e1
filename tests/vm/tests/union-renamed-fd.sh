#!/bin/bash
# The fd of a file renamed in place on a writable lower branch.  The
# union dentry the fd holds keeps the old name's upper dentry (negative)
# and negative branch dentries of the old name; a lookup of the new name
# replaces it (a renamed dentry is marked invalid).  A change through the
# fd that copies the object must first look its name up again and copy
# only if the name still shows the object (copyup.c,
# unionfs_copy_name_current()); parts 1-4 are union-stale-upper-fd's:
#  5. fd; rename in place; mode=ro of the branch; fchmod(fd): the file is
#     copied up at its new name (bug: ESTALE, the copy-up found the old
#     name's upper dentry);
#  6. rm of a copied-up hard link whose other name was renamed in place
#     and is held open works;
#  7. fd; rename in place; ln through the union (copies it up); fchmod(fd)
#     changes that copy and fstat shows it (bug: ESTALE);
#  8. fd; rename in place; rm of the new name; mode=ro; fchmod(fd): ENOENT
#     and nothing comes back;
#  9. fd; rename in place; rename again in place; mode=ro; fchmod(fd):
#     ESTALE (the file is elsewhere now) and no copy at the name it left;
# 10. fd; rename in place; mode=ro; rm of the new name (a whiteout);
#     fchmod(fd): ENOENT and nothing comes back;
# 11. as 8, in a directory that is only on l1 (the fd's dentry has no
#     upper dentry at all): ENOENT and nothing comes back (bug: fchmod
#     copied the unlinked l1 file up to up/e6/p2, which showed again).
. "$SRC/tests/vm/lib.sh"

up=/mnt/up l1=/mnt/l1 l2=/mnt/l2 u=/mnt/u
mkbranch ext4 "$(nth_disk 1)" $up
mkbranch ext4 "$(nth_disk 2)" $l1
mkbranch ext4 "$(nth_disk 3)" $l2
mkdir -p $up/d $l1/d $l1/e $l1/e2 $l1/e3 $l1/e4 $l1/e5 $l1/e6 $l2/d $l2/d/sub
echo ro >$l2/d/rof
echo rw1 >$l1/d/rmf
echo rw2 >$l1/d/mvf
echo lg >$l1/d/lg
echo h >$l1/d/ha
echo k >$l1/d/lk
echo ra >$l1/d/ra
echo rb >$l1/d/rb
echo wa >$l1/d/wa
echo p >$l1/e6/p
ln $l1/d/ha $l1/d/hb
chmod 644 $l2/d/rof $l1/d/rmf $l1/d/mvf $l1/d/lg $l1/d/ha $l1/d/lk $l1/d/ra $l1/d/rb $l1/d/wa
mkodf_dev "$ODF_DEV"
union_mount $u "odf=$ODF_DEV,dirs=$up=rw:$l1=rw:$l2=ro"

# 5. The fd of a file renamed in place, once its branch is read-only: a
# change copies it up, at its new name (it failed with ESTALE: the
# copy-up found the old name's upper dentry).
# 6. The same dentry as another name's last chance (review): rm of the
# copied-up hard link looked for a lower name to keep the copy at and
# found the renamed one, whose copy-up failed with ESTALE.
ino_lg=$(ino $u/d/lg)
out=$(python3 - "$u" "$l1" <<'PY'
import os, sys, errno, subprocess
u, l1 = sys.argv[1], sys.argv[2]

sys.path.insert(0, os.environ["SRC"] + "/tests/vm/prog")
from errname import err

def remount(mode):
    subprocess.run(["mount", "-o", "remount,mode=%s=%s" % (l1, mode), u],
                   check=True)

fd = os.open(u + "/d/lg", os.O_RDONLY)
os.rename(u + "/d/lg", u + "/e/lg2")
remount("ro")
print("lg", err(lambda: os.fchmod(fd, 0o640)))
remount("rw")
os.close(fd)

fd = os.open(u + "/d/ha", os.O_RDONLY)
os.rename(u + "/d/ha", u + "/e/ha2")
open(u + "/d/ha", "w").close()
os.rename(u + "/d/hb", u + "/d/hb2")
print("hb2", err(lambda: os.unlink(u + "/d/hb2")))
os.close(fd)

fd = os.open(u + "/d/lk", os.O_RDONLY)
os.rename(u + "/d/lk", u + "/e2/lk2")
os.link(u + "/e2/lk2", u + "/d/lk3")
with open(u + "/d/lk3", "a") as f:
    f.write("more\n")
print("lk", err(lambda: os.fchmod(fd, 0o640)), os.fstat(fd).st_size)
os.close(fd)

fd = os.open(u + "/d/ra", os.O_RDONLY)
os.rename(u + "/d/ra", u + "/e3/ra")
os.unlink(u + "/e3/ra")
remount("ro")
print("ra", err(lambda: os.fchmod(fd, 0o640)))
remount("rw")
os.close(fd)

fd = os.open(u + "/d/rb", os.O_RDONLY)
os.rename(u + "/d/rb", u + "/e4/rb1")
os.rename(u + "/e4/rb1", u + "/e4/rb2")
remount("ro")
print("rb", err(lambda: os.fchmod(fd, 0o640)))
remount("rw")
os.close(fd)

fd = os.open(u + "/d/wa", os.O_RDONLY)
os.rename(u + "/d/wa", u + "/e5/wa")
remount("ro")
os.unlink(u + "/e5/wa")
print("wa", err(lambda: os.fchmod(fd, 0o640)))
remount("rw")
os.close(fd)

fd = os.open(u + "/e6/p", os.O_RDONLY)
os.rename(u + "/e6/p", u + "/e6/p2")
os.unlink(u + "/e6/p2")
remount("ro")
print("p", err(lambda: os.fchmod(fd, 0o640)))
remount("rw")
os.close(fd)
PY
) || fail "python: $out"
echo "$out"
expect_eq "fchmod through the fd, branch read-only" "lg OK" "$(echo "$out" | sed -n 1p)"
expect_eq "up/e/lg2 (copied up at its new name)" "640 lg" "$(stat -c %a $up/e/lg2) $(cat $up/e/lg2)"
expect_eq "l1/e/lg2 unchanged" 644 "$(stat -c %a $l1/e/lg2)"
expect_eq "e/lg2 keeps its number" "$ino_lg" "$(ino $u/e/lg2)"
expect_eq "rm of the copied-up hard link" "hb2 OK" "$(echo "$out" | sed -n 2p)"
expect_eq "union d/ after rm" "ha mvf rmf rof sub" "$(union_ls $u/d | sed 's/ lk3//')"
expect_eq "e/ha2 (l1's object)" "h" "$(cat $u/e/ha2)"
expect_eq "fchmod through the fd after a link copied the file up" "lk OK 7" "$(echo "$out" | sed -n 3p)"
expect_eq "up/e2/lk2 and up/d/lk3: one file" "640 2 k|more| 640 2 k|more|" \
	"$(for f in $up/e2/lk2 $up/d/lk3; do echo "$(stat -c '%a %h' $f) $(tr '\n' '|' <$f)"; done | tr '\n' ' ' | sed 's/ $//')"
expect_eq "l1/e2/lk2 unchanged" "644 k" "$(stat -c %a $l1/e2/lk2) $(cat $l1/e2/lk2)"
expect_eq "fchmod through the fd of a file removed since" "ra ENOENT" "$(echo "$out" | sed -n 4p)"
expect_eq "fchmod through the fd of a file renamed again since" "rb ESTALE" "$(echo "$out" | sed -n 5p)"
expect_eq "union e3/: the removed file not back" "" "$(union_ls $u/e3)"
[ -e $up/e3/ra ] && fail "the removed e3/ra is back on the upper branch"
expect_eq "union e4/: no copy at the old name" "rb2" "$(union_ls $u/e4)"
[ -e $up/e4 ] && fail "e4/ was copied up"
expect_eq "l1/e4/rb2 unchanged" "644 rb" "$(stat -c %a $l1/e4/rb2) $(cat $l1/e4/rb2)"
expect_eq "fchmod through the fd of a file whited out since" "wa ENOENT" "$(echo "$out" | sed -n 6p)"
expect_eq "union e5/: the removed file not back" "" "$(union_ls $u/e5)"
expect_eq "fchmod through the fd of a file renamed and removed in an l1-only directory" "p ENOENT" "$(echo "$out" | sed -n 7p)"
expect_eq "union e6/: the removed file not back" "" "$(union_ls $u/e6)"
expect_eq "l2 unchanged" ro "$(cat $l2/d/rof)"
union_umount $u
"$ODFCK" -fn "$ODF_DEV" >$TMP/fsck.out 2>&1 || { cat $TMP/fsck.out; fail "odfck -fn"; }
exit 0
