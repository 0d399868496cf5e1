#!/bin/bash
# timeout: 400
# Deletions in a directory that exists only on lower branches survive the
# removal of the branch its inode number is made of (issue 11; spec 3.5,
# 9.4).  Such a directory is numbered after its part on the oldest lower
# branch, and removing that branch gives it the number of its next part.
# A whiteout keyed by the old number would then stop applying and the
# deleted name would come back.  So a removal of a lower name copies the
# lower-only directory up first: its UPPER record keeps its number
# whatever branch goes.  Checked here for unlink, rmdir and a nested
# directory, with del= and then a fresh mount of the new set: the deleted
# names stay deleted, the directories keep their st_ino, the other
# branch's names stay, the upper branch holds the copied-up directories
# and nothing else, the whiteouts are in their nodes, odfck is clean.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 b2=/mnt/b2 u=/mnt/u
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch ext4 "$(nth_disk 2)" $b1
mkbranch tmpfs none $b2
mkodf_dev "$ODF_DEV"
# a/ on both lower branches (its number is made of b1's part: branch
# ids follow priority at mkodf, b0 is 1, b1 2, b2 3), a/s/ too;
# the names removed below are on b2 only, so they outlive del=b1.
mkdir -p $b1/a/s $b2/a/s/e $b2/a/t
echo x1 >$b1/a/x1; echo x2 >$b2/a/x2; echo y2 >$b2/a/y2
echo z2 >$b2/a/s/z2; echo k2 >$b2/a/s/k2; echo t2 >$b2/a/t/t2

union_mount $u "odf=$ODF_DEV,dirs=$b0=rw:$b1=ro:$b2=ro"
ino_a=$(ino $u/a) ino_s=$(ino $u/a/s) ino_x2=$(ino $u/a/x2)
expect_eq "st_ino of a (numbered after b1's part)" "$(uino 2 "$(ino $b1/a)")" "$ino_a"
rm $u/a/y2 || fail "rm a/y2"
rmdir $u/a/s/e || fail "rmdir a/s/e"
rm $u/a/s/z2 || fail "rm a/s/z2"
expect_eq "a/ after the removals" "s t x1 x2" "$(union_ls $u/a)"
expect_eq "a/s/ after the removals" "k2" "$(union_ls $u/a/s)"
expect_eq "st_ino of a after its copy-up" "$ino_a" "$(ino $u/a)"
expect_eq "st_ino of a/s after its copy-up" "$ino_s" "$(ino $u/a/s)"

mount -o remount,del=$b1 $u || fail "remount del=$b1: $(dmesg | grep unionfs: | tail -n 1)"
expect_eq "a/ after del of b1" "s t x2" "$(union_ls $u/a)"
expect_eq "a/s/ after del of b1" "k2" "$(union_ls $u/a/s)"
[ -e $u/a/y2 ] && fail "a/y2, deleted before, is back after del of b1"
[ -e $u/a/s/e ] && fail "a/s/e, removed before, is back after del of b1"
expect_eq "st_ino of a after del of b1" "$ino_a" "$(ino $u/a)"
expect_eq "st_ino of a/s after del of b1" "$ino_s" "$(ino $u/a/s)"
expect_eq "st_ino of a/x2 after del of b1" "$ino_x2" "$(ino $u/a/x2)"
expect_eq "a/x2" x2 "$(cat $u/a/x2)"
# What is on the upper branch: the two directories, empty; a/t untouched
# (checked after del=, where the deleted names would come back).
expect_eq "upper branch after del of b1" "a a/s" "$(cd $b0 && find a | sort | paste -sd' ')"
union_umount $u
odf_check
odf_ns
expect_ns "whiteouts" <<EOF
W /a/y2
W /a/s/e
W /a/s/z2
EOF

union_mount $u "odf=$ODF_DEV,dirs=$b0=rw:$b2=ro"
expect_eq "a/ after mounting again" "s t x2" "$(union_ls $u/a)"
expect_eq "a/s/ after mounting again" "k2" "$(union_ls $u/a/s)"
expect_eq "st_ino of a after mounting again" "$ino_a" "$(ino $u/a)"
union_umount $u
odf_check
expect_eq "b2 untouched" "a a/s a/s/e a/s/k2 a/s/z2 a/t a/t/t2 a/x2 a/y2" \
	"$(cd $b2 && find a | sort | paste -sd' ')"
