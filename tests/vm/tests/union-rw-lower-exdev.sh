#!/bin/bash
# timeout: 200
# A rename or link in place on a writable lower branch (unionfs(5),
# "Several writable branches") that the branch refuses with EXDEV
# (ext4 project quota: a file may not move into a directory of another
# project) is made the copy-up way instead, as before in-place renames:
# it succeeds, the branch is left as it was, and the union's count of
# changes under way on the branch stays right (mode=ro of the branch
# afterwards works; a count left off by one made it EBUSY for good).
. "$SRC/tests/vm/lib.sh"

up=/mnt/up l1=/mnt/l1 u=/mnt/u
mkbranch ext4 "$(nth_disk 1)" $up
mkdir -p $l1
mkfs.ext4 -q -F -O project,quota "$(nth_disk 2)" && mount -t ext4 -o prjquota "$(nth_disk 2)" $l1 ||
	fail "cannot make an ext4 branch with project quota"
rmdir $l1/lost+found
# p1 -> p2 for a rename, p3 -> p4 for a link: each copy-up gives the
# directories upper parts, after which nothing there is in place.
mkdir $l1/p1 $l1/p2 $l1/p3 $l1/p4
for i in 1 2 3 4; do chattr -p $i +P $l1/p$i || fail "chattr -p: no project ids on $l1"; done
echo f >$l1/p1/f
echo g >$l1/p3/g
echo h >$l1/p1/h
expect_eq "rename(2) across projects on ext4 itself" EXDEV "$(pyerr "os.rename('$l1/p1/h', '$l1/p2/h')")"
mkodf_dev "$ODF_DEV"
union_mount $u "odf=$ODF_DEV,dirs=$up=rw:$l1=rw"

# In place, p1/f -> p1/f2 works (same project).
mv $u/p1/f $u/p1/f2 || fail "rename p1/f to p1/f2"
expect_eq "l1/p1/f2 (in place)" f "$(cat $l1/p1/f2)"
[ -e $up/p1 ] && fail "p1/ copied up for a rename in place"

# Across projects: EXDEV from the branch, then the copy-up way.
# rename(2), not mv(1): mv would copy on EXDEV by itself.
expect_eq "rename(2) of p1/f2 to p2/f (EXDEV in the branch)" OK "$(pyerr "os.rename('$u/p1/f2', '$u/p2/f')")"
expect_eq "up/p2/f (copied up)" f "$(cat $up/p2/f)"
[ -e $u/p1/f2 ] && fail "p1/f2 still shows after its rename"
expect_eq "l1/p1/f2 stays on the branch, hidden" f "$(cat $l1/p1/f2)"
ln $u/p3/g $u/p4/g || fail "link p3/g to p4/g (EXDEV in the branch)"
expect_eq "union p4/g and p3/g: one object" "$(ino $u/p3/g)" "$(ino $u/p4/g)"
expect_eq "up/p4/g (copied up)" g "$(cat $up/p4/g)"
[ -e $l1/p4/g ] && fail "l1/p4/g made though ext4 refused it"

# The changes under way on l1 are all over.
klog_mark
mount -o remount,mode=$l1=ro $u ||
	fail "mode=$l1=ro after the EXDEV renames: $(klog_new | grep unionfs: | tail -n 1)"
mount -o remount,mode=$l1=rw $u || fail "mode=$l1=rw"
echo more >>$u/p1/h || fail "append to p1/h"
expect_eq "l1/p1/h written in place again" "h
more" "$(cat $l1/p1/h)"
union_umount $u
odf_check
