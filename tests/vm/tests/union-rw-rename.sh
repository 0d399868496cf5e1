#!/bin/bash
# timeout: 300
# Rename in a union of tmpfs rw over ext4 and xfs: files from lower and
# upper branches, over existing targets of every branch; a name whited
# out by rename stays hidden; RENAME_NOREPLACE (EEXIST) and
# RENAME_EXCHANGE (of two files, of a file and a lower directory);
# directory trees that live on the read-only branches (no EXDEV: their
# contents show under the new name, twice renamed, after a remount;
# the old name is gone and a new directory there is empty); a
# directory over one whose lower entries are all whited out; errno
# cases; inode numbers follow the objects; lower branches unchanged;
# the ODF holds the whiteouts and redirects and is clean.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 b2=/mnt/b2 u=/mnt/u
mkbranch tmpfs none $b0
mkbranch ext4 "$(nth_disk 1)" $b1
mkbranch xfs "$(nth_disk 2)" $b2
mkodf_dev "$ODF_DEV"
opts="odf=$ODF_DEV,dirs=$b0=rw:$b1=ro:$b2=ro"

# b0 (tmpfs, upper)  b1 (ext4)                   b2 (xfs)
# u, uover           a, t, x, ex1, dir/in1       b2file, t2, ex2, dir2/in2
#                    tree/{f1, sub/f2,            tree/sub/f4
#                      sub/deeper/f3, emptydir/}
#                    m/m1, ld/{l1,l2}            m/m2, notempty/n
echo u0 >$b0/u
echo uo >$b0/uover
mkdir -p $b1/dir $b1/tree/sub/deeper $b1/tree/emptydir $b1/m $b1/ld \
	$b2/dir2 $b2/tree/sub $b2/m $b2/notempty
for f in a t x ex1 dir/in1 tree/f1 tree/sub/f2 tree/sub/deeper/f3 m/m1 ld/l1 ld/l2; do
	echo "$(basename $f)" >$b1/$f
done
for f in b2file t2 ex2 dir2/in2 tree/sub/f4 m/m2 notempty/n; do
	echo "$(basename $f)" >$b2/$f
done
snap lower1 $b1
snap lower2 $b2

union_mount $u "$opts"
declare -A I
for p in a u x ex1 ex2 b2file dir2 tree tree/sub tree/sub/f2 tree/sub/f4 \
	tree/sub/deeper/f3 m; do
	I[$p]=$(ino $u/$p)
done
expect_eq "inode of tree (ext4, branch 2)" "$(uino 2 "$(ino $b1/tree)")" "${I[tree]}"
expect_eq "inode of tree/sub/f4 (xfs, branch 3)" "$(uino 3 "$(ino $b2/tree/sub/f4)")" "${I[tree/sub/f4]}"

# content NAME...: the contents of files, space separated.
content() { (cd $u && cat "$@" | tr '\n' ' ' | sed 's/ $//'); }

# 1. Files.
expect_errno "lower a to a_new" OK "os.rename('$u/a', '$u/a_new')"
expect_errno "upper u over lower t" OK "os.rename('$u/u', '$u/t')"
expect_errno "lower b2file over lower t2" OK "os.rename('$u/b2file', '$u/t2')"
expect_errno "lower x into lower dir" OK "os.rename('$u/x', '$u/dir/x_in')"
expect_errno "a_new over upper uover" OK "os.rename('$u/a_new', '$u/uover')"
expect_eq "contents" "u0 b2file x a" "$(content t t2 dir/x_in uover)"
expect_eq "inodes follow" "${I[u]} ${I[b2file]} ${I[x]} ${I[a]}" \
	"$(ino $u/t) $(ino $u/t2) $(ino $u/dir/x_in) $(ino $u/uover)"
expect_errnos "old names gone" <<EOF
ENOENT os.lstat('$u/a')
ENOENT os.lstat('$u/a_new')
ENOENT os.lstat('$u/u')
ENOENT os.lstat('$u/b2file')
ENOENT os.lstat('$u/x')
EOF
expect_eq "dir" "in1 x_in" "$(union_ls $u/dir)"

# 2. RENAME_NOREPLACE; renaming back over a whiteout; the name left
# behind (t2, which exists below) stays hidden.
expect_eq "NOREPLACE over a lower name" EEXIST "$(renameat2 $u/ex1 $u/ex2 1)"
expect_eq "NOREPLACE over an upper name" EEXIST "$(renameat2 $u/ex1 $u/uover 1)"
expect_eq "after EEXIST" "ex1 ex2" "$(content ex1 ex2)"
expect_eq "NOREPLACE to a free name" OK "$(renameat2 $u/ex1 $u/ex3 1)"
expect_eq "NOREPLACE over a whited-out name" OK "$(renameat2 $u/t2 $u/b2file 1)"
expect_eq "b2file is back" b2file "$(content b2file)"
expect_eq "inode of b2file" "${I[b2file]}" "$(ino $u/b2file)"
expect_errno "t2 (exists below) stays hidden" ENOENT "os.lstat('$u/t2')"
expect_eq "NOREPLACE of a missing name" ENOENT "$(renameat2 $u/nothing $u/nothing2 1)"

# 3. RENAME_EXCHANGE: two files (upper and lower); a file and a lower
# directory.
expect_eq "EXCHANGE ex3 ex2" OK "$(renameat2 $u/ex3 $u/ex2 2)"
expect_eq "exchanged contents" "ex2 ex1" "$(content ex3 ex2)"
expect_eq "exchanged inodes" "${I[ex2]} ${I[ex1]}" "$(ino $u/ex3) $(ino $u/ex2)"
expect_eq "EXCHANGE with a missing name" ENOENT "$(renameat2 $u/ex3 $u/nothing 2)"
expect_eq "EXCHANGE t dir2" OK "$(renameat2 $u/t $u/dir2 2)"
expect_eq "t is the directory" "in2" "$(union_ls $u/t)"
expect_eq "t/in2" "in2" "$(content t/in2)"
expect_eq "dir2 is the file" "u0" "$(content dir2)"
expect_eq "exchanged inodes (file, directory)" "${I[dir2]} ${I[u]}" "$(ino $u/t) $(ino $u/dir2)"

# 4. A directory tree on the read-only branches (ext4, xfs under sub/):
# renamed, a subdirectory renamed inside it, moved again into a new
# directory, changed there.
expect_errno "rename of a lower directory tree" OK "os.rename('$u/tree', '$u/tree2')"
expect_errno "tree is gone" ENOENT "os.lstat('$u/tree')"
expect_eq "tree2" "emptydir f1 sub" "$(union_ls $u/tree2)"
expect_eq "tree2/sub" "deeper f2 f4" "$(union_ls $u/tree2/sub)"
expect_eq "tree2 contents" "f1 f2 f4 f3" "$(content tree2/f1 tree2/sub/f2 tree2/sub/f4 tree2/sub/deeper/f3)"
expect_eq "tree2 inodes" "${I[tree]} ${I[tree/sub]} ${I[tree/sub/f2]} ${I[tree/sub/f4]} ${I[tree/sub/deeper/f3]}" \
	"$(stat -c %i $u/tree2 $u/tree2/sub $u/tree2/sub/f2 $u/tree2/sub/f4 $u/tree2/sub/deeper/f3 | tr '\n' ' ' | sed 's/ $//')"
expect_errno "rename inside the renamed tree" OK "os.rename('$u/tree2/sub', '$u/tree2/sub_r')"
mkdir $u/newparent || fail "mkdir newparent"
expect_errno "second rename of the tree" OK "os.rename('$u/tree2', '$u/newparent/tree3')"
rm $u/newparent/tree3/f1 || fail "unlink a lower file in the moved tree"
echo new >$u/newparent/tree3/new || fail "create in the moved tree"
echo more >>$u/newparent/tree3/sub_r/f2 || fail "write to a lower file in the moved tree"
expect_eq "tree3" "emptydir new sub_r" "$(union_ls $u/newparent/tree3)"
expect_eq "tree3/sub_r" "deeper f2 f4" "$(union_ls $u/newparent/tree3/sub_r)"
expect_eq "tree3/sub_r/f2" "f2 more" "$(content newparent/tree3/sub_r/f2)"
expect_eq "tree3 inodes" "${I[tree]} ${I[tree/sub]} ${I[tree/sub/f2]} ${I[tree/sub/f4]}" \
	"$(stat -c %i $u/newparent/tree3 $u/newparent/tree3/sub_r $u/newparent/tree3/sub_r/f2 $u/newparent/tree3/sub_r/f4 | tr '\n' ' ' | sed 's/ $//')"
expect_errnos "old tree names gone" <<EOF
ENOENT os.lstat('$u/tree2')
ENOENT os.lstat('$u/tree')
ENOENT os.lstat('$u/newparent/tree3/sub')
ENOENT os.lstat('$u/newparent/tree3/f1')
EOF

# 5. A directory merged from both lower branches.
expect_errno "rename of a merged directory" OK "os.rename('$u/m', '$u/m_ren')"
expect_eq "m_ren" "m1 m2" "$(union_ls $u/m_ren)"
expect_eq "inode of m_ren" "${I[m]}" "$(ino $u/m_ren)"

# 6. A new directory over a lower one whose entries are all whited out:
# allowed, and the old entries do not come back.
rm $u/ld/l1 $u/ld/l2 || fail "unlink ld/l1 ld/l2"
mkdir $u/nd && echo own >$u/nd/own || fail "mkdir nd"
ino_nd=$(ino $u/nd)
expect_errno "directory over an emptied lower directory" OK "os.rename('$u/nd', '$u/ld')"
expect_eq "ld" "own" "$(union_ls $u/ld)"
expect_eq "inode of ld" "$ino_nd" "$(ino $u/ld)"

# 7. Errors.
expect_errnos "rename errors" <<EOF
EISDIR os.rename('$u/ex2', '$u/m_ren')
EISDIR os.rename('$u/uover', '$u/notempty')
ENOTDIR os.rename('$u/m_ren', '$u/ex2')
ENOTDIR os.rename('$u/notempty', '$u/uover')
ENOTEMPTY os.rename('$u/dir', '$u/notempty')
ENOTEMPTY os.rename('$u/ld', '$u/m_ren')
EINVAL os.rename('$u/m_ren', '$u/m_ren/inside')
EINVAL os.rename('$u/newparent', '$u/newparent/tree3/sub_r/x')
ENOENT os.rename('$u/a', '$u/zz')
ENOENT os.rename('$u/nothing', '$u/zz')
ENOENT os.rename('$u/ex2', '$u/nodir/zz')
ENOTDIR os.rename('$u/ex2', '$u/ex3/zz')
OK os.rename('$u/ex2', '$u/ex2')
EOF
expect_eq "after the errors" "ex1 ex2" "$(content ex2 ex3)"

expect_eq "root" "b2file dir dir2 ex2 ex3 ld m_ren newparent notempty t uover" "$(union_ls $u)"
expect_tree "upper branch" $b0 <<'EOF'
t d
uover f
dir d
dir/x_in f
b2file f
ex2 f
ex3 f
dir2 f
newparent d
newparent/tree3 d
newparent/tree3/sub_r d
newparent/tree3/sub_r/f2 f
newparent/tree3/new f
m_ren d
ld d
ld/own f
EOF
snap view $u
union_umount $u

snap after1 $b1
snap after2 $b2
expect_same "lower branch $b1" "$lower1" "$after1"
expect_same "lower branch $b2" "$lower2" "$after2"
for b in $b0 $b1 $b2; do assert_branch_clean $b; done
odf_check
odf_ns
ns_has "W /a" "W /x" "W /ex1" "W /t2" "W /tree" "W /m" "W /newparent/tree3/f1" \
	"R /newparent/tree3 2:/tree 3:/tree" "R /t 3:/dir2" "R /m_ren 2:/m 3:/m"
grep -q '^R /newparent/tree3/sub_r ' <<<"$NS" || fail "no redirect for newparent/tree3/sub_r: $(echo $NS)"
ns_lacks "W /u" "W /b2file" "W /uover"
grep -q '^BAD' <<<"$NS" && fail "ODF /ns: $(grep '^BAD' <<<"$NS" | head -n 2)"

# After a remount: the same view; a third rename of the tree keeps it
# whole; a new directory at the tree's first name is empty.
union_mount $u "$opts"
snap view2 $u
expect_same "union after remount" "$view" "$view2"
expect_errno "third rename of the tree" OK "os.rename('$u/newparent/tree3', '$u/tree4')"
expect_eq "tree4" "emptydir new sub_r" "$(union_ls $u/tree4)"
expect_eq "tree4/sub_r" "deeper f2 f4" "$(union_ls $u/tree4/sub_r)"
expect_eq "tree4/sub_r/deeper/f3" f3 "$(content tree4/sub_r/deeper/f3)"
mkdir $u/tree || fail "mkdir tree"
expect_eq "new tree is empty" "" "$(union_ls $u/tree)"
mkdir $u/m || fail "mkdir m"
expect_eq "new m is empty" "" "$(union_ls $u/m)"
union_umount $u
odf_check
odf_ns
ns_has "R /tree4 2:/tree 3:/tree" "O /tree" "O /m"

union_mount $u "$opts"
expect_eq "tree4 after a second remount" "emptydir new sub_r" "$(union_ls $u/tree4)"
expect_eq "tree after a second remount" "" "$(union_ls $u/tree)"
expect_eq "root after a second remount" \
	"b2file dir dir2 ex2 ex3 ld m m_ren newparent notempty t tree tree4 uover" "$(union_ls $u)"
union_umount $u
snap after1 $b1
snap after2 $b2
expect_same "lower branch $b1 at the end" "$lower1" "$after1"
expect_same "lower branch $b2 at the end" "$lower2" "$after2"
odf_check
