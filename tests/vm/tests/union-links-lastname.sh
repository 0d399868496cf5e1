#!/bin/bash
# timeout: 600
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
RACES=40

# Lower: a, b one inode (same directory); x/p, y/q one inode (two
# directories); m, n one inode and a file o to rename over m.
mkdir -p $b1/x $b1/y
echo orig-ab >$b1/a && ln $b1/a $b1/b
echo orig-pq >$b1/x/p && ln $b1/x/p $b1/y/q
echo orig-mn >$b1/m && ln $b1/m $b1/n
echo o >$b1/o
# r/N, r/N.l one inode each, for the race of two unlinks (4).
mkdir $b1/r $b1/r2
for i in $(seq 1 $RACES); do echo "orig-$i" >$b1/r/$i && ln $b1/r/$i $b1/r/$i.l; done
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

# 4. Two upper names of a copy (r/N, linked to r2/N.u through the union;
# two directories, as the VFS serializes unlinks in one) unlinked at once
# by two processes while the lower name r/N.l shows the copy: whichever
# goes last must first link r/N.l to the copy.  The VFS holds the union
# inode's lock across each unlink, so the "last upper name?" answer
# cannot change under it; this holds the union to that.
python3 - "$u/r" "$RACES" <<'EOF' || fail "race: the operations failed"
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
for i in range(1, n + 1):
    os.stat(f"{d}/{i}.l")
    with open(f"{d}/{i}", "a") as f:
        f.write("more\n")
    os.link(f"{d}/{i}", f"{d}2/{i}.u")
# One helper process for the whole loop: both unlinks of a round start
# within a wakeup of each other.  This process takes r/N, whose unlink
# commits a whiteout first (a lower name): the window in which the old
# code had decided "not the last name" and not yet unlinked.
go_r, go_w = os.pipe()
done_r, done_w = os.pipe()
pid = os.fork()
if pid == 0:
    for i in range(1, n + 1):
        os.read(go_r, 1)
        os.unlink(f"{d}2/{i}.u")
        os.write(done_w, b".")
    os._exit(0)
for i in range(1, n + 1):
    os.write(go_w, b".")
    os.unlink(f"{d}/{i}")
    os.read(done_r, 1)
_, st = os.waitpid(pid, 0)
sys.exit(1 if st else 0)
EOF
bad=$(cd $u/r && for i in $(seq 1 $RACES); do
	[ "$(cat $i.l)" = "$(printf 'orig-%s\nmore' $i)" ] || echo $i
done | wc -l)
expect_eq "race: lower names that lost the copy's data (of $RACES)" 0 $bad
expect_eq "race: names left in r, r2" "$RACES 0" "$(ls $u/r | wc -l) $(ls $u/r2 | wc -l)"
union_umount $u

snap after $b1
expect_same "lower branch" "$lower" "$after"
assert_branch_clean $b0
odf_check

union_mount $u "$opts"
expect_eq "after remount: root" "b2 m n r r2 x y" "$(union_ls $u)"
expect_eq "after remount: x, y" " q" "$(union_ls $u/x) $(union_ls $u/y)"
expect_eq "after remount: b2" "$(printf 'orig-ab\nmore')" "$(cat $u/b2)"
expect_eq "after remount: y/q" "$(printf 'orig-pq\nmore\nagain')" "$(cat $u/y/q)"
expect_eq "after remount: n" "$(printf 'orig-mn\nmore')" "$(cat $u/n)"
expect_eq "after remount: st_ino st_nlink" "$ino_ab 1 $ino_pq 1 $ino_mn 1" \
	"$(stat_of $u/b2 $u/y/q $u/n)"
union_umount $u
odf_check
