#!/bin/bash
# timeout: 300
# Copy-up to the nearest writable branch above (issue 11 item 3,
# unionfs(5) "Several writable branches"): a change of a regular file
# of one link on a read-only branch copies it to the nearest writable
# branch above that branch, when that is a lower branch that has the
# file's parent; the copy keeps the union inode number (its inode map
# records are keyed on that branch, docs/odf-format.md 3.4) in stat,
# readdir, after a new mount and after mode=ro of the branch; it is
# then changed in place there, and unlinked there (a whiteout hides the
# original).  Otherwise the copy goes to the upper branch as before: a
# parent without a part on that branch, a hard link, a symlink, a
# writable branch that is not the nearest.  Each is checked in the
# branches directly, in the ODF (/ns, odfck) and as an unprivileged user.
. "$SRC/tests/vm/lib.sh"

up=/mnt/up l1=/mnt/l1 l2=/mnt/l2 l3=/mnt/l3 u=/mnt/u
USR=4242
mkbranch ext4 "$(nth_disk 1)" $up
mkbranch ext4 "$(nth_disk 2)" $l1
mkbranch xfs "$(nth_disk 3)" $l2
mkbranch ext4 "$(nth_disk 4)" $l3
mkdir -p $l1/d $l2/d $l1/pub $l2/pub $l2/e $l2/s $l1/s $l3/s $l3/n $l1/n
echo f >$l2/d/f
echo g >$l2/d/g
echo t >$l2/d/t
echo k >$l2/d/k
echo r >$l2/d/r
echo h >$l2/d/h1
ln $l2/d/h1 $l2/d/h2
ln -s f $l2/d/sym
echo e >$l2/e/x
echo mine >$l2/pub/mine
chmod 777 $l1/pub $l2/pub
chown $USR:$USR $l2/pub/mine
echo s3 >$l3/s/x
echo y3 >$l3/s/y
echo n3 >$l3/n/x
mkodf_dev "$ODF_DEV"
rm -f /tmp/odf-dirmap

# up rw, l1 rw, l2 ro, l3 ro: l2's and l3's files go to l1.
union_mount $u "odf=$ODF_DEV,dirs=$up=rw:$l1=rw:$l2=ro:$l3=ro"
for n in f g t k r h1 sym; do eval "ino_$n=\$(ino $u/d/$n)"; done
ino_s=$(ino $u/s/x) ino_n=$(ino $u/n/x) ino_e=$(ino $u/e/x)
ino_mine=$(ino $u/pub/mine)

# ---- a write, a chmod, an xattr, a truncating open ----
echo more >>$u/d/f || fail "append to d/f"
expect_eq "l1/d/f (copied to l1)" "f
more" "$(cat $l1/d/f)"
expect_eq "l2/d/f untouched" f "$(cat $l2/d/f)"
[ -e $up/d ] && fail "d/ was copied up to the upper branch"
expect_eq "st_ino of d/f kept by the copy to l1" "$ino_f" "$(ino $u/d/f)"
chmod 600 $u/d/g || fail "chmod d/g"
expect_eq "l1/d/g mode (copied to l1)" "600 g" "$(stat -c %a $l1/d/g) $(cat $l1/d/g)"
expect_eq "l2/d/g mode untouched" 644 "$(stat -c %a $l2/d/g)"
setfattr -n user.k -v v1 $u/d/k || fail "setfattr d/k"
expect_eq "l1/d/k user.k" v1 "$(getfattr --only-values -n user.k $l1/d/k 2>/dev/null)"
echo new >$u/d/t || fail "O_TRUNC write of d/t"
expect_eq "l1/d/t after a truncating open" new "$(cat $l1/d/t)"
for n in g k t; do
	expect_eq "st_ino of d/$n" "$(eval echo \$ino_$n)" "$(ino $u/d/$n)"
done
# The copy is then changed in place: a second write stays on l1.
echo again >>$u/d/f || fail "second append to d/f"
expect_eq "l1/d/f after the second append" "f
more
again" "$(cat $l1/d/f)"
[ -e $up/d/f ] && fail "d/f was copied to the upper branch after its copy to l1"
# Three branches up: l3's s/x goes to l1 too (l2 is read-only).
echo s >>$u/s/x || fail "append to s/x"
expect_eq "l1/s/x (from l3, nearest writable is l1)" "s3
s" "$(cat $l1/s/x)"
expect_eq "st_ino of s/x" "$ino_s" "$(ino $u/s/x)"

# ---- two writers at once: one copy on l1, both writes in it ----
mkdir -p $l2/d/race
for i in $(seq 1 30); do echo base >$l2/d/race/f$i; done
mkdir $l1/d/race || fail "mkdir l1/d/race"
for i in $(seq 1 30); do
	echo A >>$u/d/race/f$i &
	echo B >>$u/d/race/f$i &
	chmod 640 $u/d/race/f$i &
	wait
done
for i in $(seq 1 30); do
	expect_eq "l1/d/race/f$i after two appends and a chmod at once" "A B base 640" \
		"$(LC_ALL=C sort $l1/d/race/f$i | tr '\n' ' ')$(stat -c %a $l1/d/race/f$i)"
done
[ -e $up/d/race ] && fail "a racing writer copied d/race/* to the upper branch"

# ---- where it goes to the upper branch ----
echo e >>$u/e/x || fail "append to e/x"
expect_eq "up/e/x (l1 has no e/)" "e
e" "$(cat $up/e/x)"
[ -e $l1/e ] && fail "e/ was made on l1"
echo h >>$u/d/h1 || fail "append to d/h1"
expect_eq "up/d/h1 (a hard link: copied up)" "h
h" "$(cat $up/d/h1)"
expect_eq "d/h2 shows the copy" "h
h" "$(cat $u/d/h2)"
expect_eq "st_ino of d/h1" "$ino_h1" "$(ino $u/d/h1)"
[ -e $l1/d/h1 ] && fail "d/h1 (a hard link) was copied to l1"
touch -h -d @1000000000 $u/d/sym || fail "touch -h d/sym"
[ -L $l1/d/sym ] && fail "a symlink was copied to l1"
[ -L $up/d/sym ] || fail "d/sym was not copied up"
expect_eq "union d/sym target" f "$(readlink $u/d/sym)"

# ---- another user: the union checks the caller ----
as_user() { setpriv --reuid=$USR --regid=$USR --clear-groups "$@"; }
as_user sh -c "echo by-user >>$u/pub/mine" || fail "user append to pub/mine"
expect_eq "l1/pub/mine (copied to l1 for its owner)" "mine
by-user" "$(cat $l1/pub/mine)"
expect_eq "l1/pub/mine owner" "$USR" "$(stat -c %u $l1/pub/mine)"
expect_eq "st_ino of pub/mine" "$ino_mine" "$(ino $u/pub/mine)"
expect_eq "user append to d/r (0644 root)" EACCES \
	"$(as_user python3 -c "$PY_ERRNO_LIB
print(run('open(\"$u/d/r\", \"a\").write(\"x\")'))")"
[ -e $l1/d/r ] && fail "a refused write copied d/r to l1"

# ---- readdir: d_ino is the copy's kept number ----
expect_eq "union d/" "f g h1 h2 k r race sym t" "$(union_ls $u/d)"

# ---- unlink of a copy on l1: removed there, the original whited out ----
rm $u/d/k || fail "rm d/k"
[ -e $l1/d/k ] && fail "l1/d/k still there after rm"
expect_eq "l2/d/k stays" k "$(cat $l2/d/k)"
[ -e $u/d/k ] && fail "d/k shows after rm"
# The whiteout gave d/ an upper part (docs/odf-format.md 9.4 step 0):
# a new name goes there; changes of l2's files still go to l1.
echo k2 >$u/d/k || fail "create d/k again"
expect_eq "up/d/k (made again, d/ has an upper part now)" k2 "$(cat $up/d/k)"
[ -e $l1/d/k ] && fail "d/k made again on l1"
rm $u/d/k || fail "rm d/k again"
echo r >>$u/d/r || fail "append to d/r"
expect_eq "l1/d/r (copied to l1 though d/ has an upper part)" "r
r" "$(cat $l1/d/r)"
[ -e $up/d/r ] && fail "d/r copied to the upper branch"
expect_eq "st_ino of d/r" "$ino_r" "$(ino $u/d/r)"

# ---- a new mount keeps the numbers ----
union_umount $u
odf_check
odf_ns
ns_has "W /d/k"
ns_lacks "W /d/f" "W /d/g"
union_mount $u "odf=$ODF_DEV,dirs=$up=rw:$l1=rw:$l2=ro:$l3=ro"
for n in f g t; do
	expect_eq "st_ino of d/$n after a new mount" "$(eval echo \$ino_$n)" "$(ino $u/d/$n)"
done
expect_eq "st_ino of s/x after a new mount" "$ino_s" "$(ino $u/s/x)"
expect_eq "union d/ after a new mount" "f g h1 h2 r race sym t" "$(union_ls $u/d)"
expect_eq "d/f after a new mount" "f
more
again" "$(cat $u/d/f)"

# ---- mode=ro of l1: its copies keep their numbers; a change now goes up ----
mount -o remount,mode=$l1=ro $u || fail "remount mode=$l1=ro"
expect_eq "st_ino of d/f with l1 read-only" "$ino_f" "$(ino $u/d/f)"
echo up >>$u/d/f || fail "append to d/f with l1 read-only"
expect_eq "up/d/f (copied up from l1's copy)" "f
more
again
up" "$(cat $up/d/f)"
expect_eq "st_ino of d/f copied up again" "$ino_f" "$(ino $u/d/f)"
expect_eq "union d/ with l1 read-only" "f g h1 h2 r race sym t" "$(union_ls $u/d)"
mount -o remount,mode=$l1=rw $u || fail "remount mode=$l1=rw"
# l1 writable, the nearest above n/x (on l3) is l2 once it is rw:
# its parent n/ is not on l2, so the copy goes up, not to l1.
mount -o remount,mode=$l2=rw $u || fail "remount mode=$l2=rw"
echo n >>$u/n/x || fail "append to n/x"
[ -e $l1/n/x ] && fail "n/x copied to l1, past the nearer writable l2"
expect_eq "up/n/x (l2, the nearest writable, has no n/)" "n3
n" "$(cat $up/n/x)"
expect_eq "st_ino of n/x" "$ino_n" "$(ino $u/n/x)"
ino_y=$(ino $u/s/y)
echo y >>$u/s/y || fail "append to s/y"
expect_eq "l2/s/y (the nearest writable above l3)" "y3
y" "$(cat $l2/s/y)"
[ -e $l1/s/y ] && fail "s/y copied to l1, past the nearer writable l2"
mount -o remount,mode=$l2=ro $u || fail "remount mode=$l2=ro"
# l2's copy is copied again only to the upper branch, not to l1.
echo y2 >>$u/s/y || fail "append to s/y with l2 read-only"
[ -e $l1/s/y ] && fail "l2's copy of s/y copied to l1"
expect_eq "up/s/y (a copy copied again)" "y3
y
y2" "$(cat $up/s/y)"
expect_eq "st_ino of s/y" "$ino_y" "$(ino $u/s/y)"

# ---- a rename that cannot be in place copies the copy again ----
# d/ has an upper part: d/g (l1's copy) goes up, keeping its number.
mv $u/d/g $u/d/g2 || fail "rename d/g to d/g2"
expect_eq "up/d/g2" g "$(cat $up/d/g2)"
expect_eq "st_ino of d/g2" "$ino_g" "$(ino $u/d/g2)"
[ -e $u/d/g ] && fail "d/g shows after its rename"
mv $u/d/g2 $u/d/g || fail "rename d/g2 back to d/g"
expect_eq "st_ino of d/g after renaming it back" "$ino_g" "$(ino $u/d/g)"
union_umount $u
odf_check
union_mount $u "odf=$ODF_DEV,dirs=$up=rw:$l1=rw:$l2=ro:$l3=ro"
for n in f g; do
	expect_eq "st_ino of d/$n after a new mount" "$(eval echo \$ino_$n)" "$(ino $u/d/$n)"
done
expect_eq "st_ino of s/y after a new mount" "$ino_y" "$(ino $u/s/y)"

# ---- del= of l1: the originals show again, with the same numbers ----
mount -o remount,del=$l1 $u || fail "remount del=$l1"
expect_eq "d/t from l2 again" "t" "$(cat $u/d/t)"
expect_eq "st_ino of d/t after del=l1" "$ino_t" "$(ino $u/d/t)"
expect_eq "st_ino of d/r after del=l1" "$ino_r" "$(ino $u/d/r)"
expect_eq "d/g (on the upper branch since its rename) after del=l1" "600 g" "$(stat -c %a $u/d/g) $(cat $u/d/g)"
expect_eq "st_ino of d/g after del=l1" "$ino_g" "$(ino $u/d/g)"
union_umount $u
odf_check
assert_branch_clean $l2
checks_done
