#!/bin/bash
# A directory with lower parts renamed away and back to its own name (a
# stress run found it): its node is a plain directory again, not opaque
# with a redirect to itself (which odfck calls damage and would "repair"
# by hiding the lower contents).  Contents stay visible through every
# step, after remount, and odfck finds the ODF clean.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 u=/mnt/u
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch xfs "$(nth_disk 2)" $b1
mkodf_dev "$ODF_DEV"
mkdir -p $b1/d/sub/deep $b1/d/two
echo x >$b1/d/sub/x; echo y >$b1/d/sub/deep/y; echo t >$b1/d/two/t
union_mount $u "odf=$ODF_DEV,dirs=$b0=rw:$b1=ro"

contents() { (cd "$1" && find . -type f | sort | xargs cat | tr '\n' ' '); }
expect_eq "before" "y x " "$(contents $u/d/sub)"
mv $u/d/sub $u/d/away || fail "mv away"
mv $u/d/away $u/d/sub || fail "mv back"
expect_eq "back" "y x " "$(contents $u/d/sub)"
expect_eq "names" "sub two" "$(ls $u/d | tr '\n' ' ' | sed 's/ $//')"
# A chain, then back; and one through another directory.
mv $u/d/sub $u/d/a && mv $u/d/a $u/d/b && mv $u/d/b $u/d/sub || fail "chain"
expect_eq "chain back" "y x " "$(contents $u/d/sub)"
mkdir $u/e
mv $u/d/two $u/e/two && mv $u/e/two $u/d/two || fail "via e"
expect_eq "via e" "t " "$(contents $u/d/two)"
echo new >$u/d/sub/new
union_umount $u
odf_check
union_mount $u "odf=$ODF_DEV,dirs=$b0=rw:$b1=ro"
expect_eq "after remount" "y new x " "$(contents $u/d/sub)"
expect_eq "two after remount" "t " "$(contents $u/d/two)"
expect_eq "names after remount" "sub two" "$(ls $u/d | tr '\n' ' ' | sed 's/ $//')"
union_umount $u
odf_check
expect_eq "lower untouched" "x" "$(cat $b1/d/sub/x)"
exit 0
