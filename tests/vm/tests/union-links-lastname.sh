#!/bin/bash
# timeout: 300
# The last upper name of a copied-up hard link goes (unlink, or a rename
# over it) while lower names of the same object still show the copy:
# those names keep the copy's data, inode number and a correct link
# count, and can be renamed (a rename copies them up by linking them to
# the copy), also after a remount.  Before the fix the copy was left
# with no name: the next copy-up of another name failed with ENOENT
# (seen as "rename(EXCHANGE) n6 n5: got ENOENT" in union-rw-stress).
# ext4 rw over xfs ro; the lower branch does not change.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 u=/mnt/u
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch xfs "$(nth_disk 2)" $b1
mkodf_dev "$ODF_DEV"
opts="odf=$ODF_DEV,dirs=$b0=rw:$b1=ro"

# Lower: a, b one inode (same directory); x/p, y/q one inode (two
# directories); m, n one inode and a file o to rename over m.
mkdir -p $b1/x $b1/y
echo orig-ab >$b1/a && ln $b1/a $b1/b
echo orig-pq >$b1/x/p && ln $b1/x/p $b1/y/q
echo orig-mn >$b1/m && ln $b1/m $b1/n
echo o >$b1/o
snap lower $b1

stat_of() { stat -c '%i %h' "$@" | tr '\n' ' ' | sed 's/ $//'; }
union_mount $u "$opts"
ino_ab=$(ino $u/a) ino_pq=$(ino $u/x/p) ino_mn=$(ino $u/m)
stat $u/b $u/y/q $u/n >/dev/null || fail "stat the second names"

# 1. Same directory: copy up through a, unlink a.
echo more >>$u/a || fail "append through a"
rm $u/a || fail "unlink a"
expect_eq "b after unlink of a" "$(printf 'orig-ab\nmore')" "$(cat $u/b)"
expect_eq "b: st_ino st_nlink" "$ino_ab 1" "$(stat_of $u/b)"
mv $u/b $u/b2 || fail "rename b (its copy-up) after the copy lost its last upper name"
expect_eq "b2" "$(printf 'orig-ab\nmore')" "$(cat $u/b2)"
expect_eq "b2: st_ino st_nlink" "$ino_ab 1" "$(stat_of $u/b2)"

# 2. Two directories.
echo more >>$u/x/p || fail "append through x/p"
rm $u/x/p || fail "unlink x/p"
expect_eq "y/q after unlink of x/p" "$(printf 'orig-pq\nmore')" "$(cat $u/y/q)"
echo again >>$u/y/q || fail "append through y/q"
expect_eq "y/q: st_ino st_nlink" "$ino_pq 1" "$(stat_of $u/y/q)"

# 3. A rename over the last upper name.
echo more >>$u/m || fail "append through m"
mv $u/o $u/m || fail "rename o over m"
expect_eq "m is o" "o" "$(cat $u/m)"
expect_eq "n after m was replaced" "$(printf 'orig-mn\nmore')" "$(cat $u/n)"
expect_eq "n: st_ino st_nlink" "$ino_mn 1" "$(stat_of $u/n)"
union_umount $u

snap after $b1
expect_same "lower branch" "$lower" "$after"
assert_branch_clean $b0
odf_check

union_mount $u "$opts"
expect_eq "after remount: root" "b2 m n x y" "$(union_ls $u)"
expect_eq "after remount: x, y" " q" "$(union_ls $u/x) $(union_ls $u/y)"
expect_eq "after remount: b2" "$(printf 'orig-ab\nmore')" "$(cat $u/b2)"
expect_eq "after remount: y/q" "$(printf 'orig-pq\nmore\nagain')" "$(cat $u/y/q)"
expect_eq "after remount: n" "$(printf 'orig-mn\nmore')" "$(cat $u/n)"
expect_eq "after remount: st_ino st_nlink" "$ino_ab 1 $ino_pq 1 $ino_mn 1" \
	"$(stat_of $u/b2 $u/y/q $u/n)"
union_umount $u
odf_check
