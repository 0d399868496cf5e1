#!/bin/bash
# timeout: 300
# Copy-up to a writable lower branch that cannot take the copy falls
# back to the upper branch (unionfs(5) "Several writable branches",
# docs/odf-format.md 3.4 and 9.6): the nearest writable branch above a
# read-only branch's file is full (ENOSPC, also part-way through a big
# file), read-only beneath the union (EROFS), or a union itself (no
# O_TMPFILE there: EOPNOTSUPP).  Each time the change lands on the upper
# branch with the file's union inode number kept, nothing is left on the
# writable lower branch (no name, no space held by a half-made copy),
# and the ODF stays clean for odfck.
. "$SRC/tests/vm/lib.sh"

up=/mnt/up l1=/mnt/l1 l2=/mnt/l2 ib=/mnt/ib ui=/mnt/ui u=/mnt/u
mkbranch ext4 "$(nth_disk 1)" $up
# l1: a 4 MiB ext4, filled up below.
mkdir -p $l1
mkfs.ext4 -q -F "$(nth_disk 2)" 4M || fail "mkfs.ext4 of a 4 MiB l1"
mount -t ext4 "$(nth_disk 2)" $l1 || fail "mount l1"
rmdir $l1/lost+found
mkbranch ext4 "$(nth_disk 3)" $l2
mkbranch ext4 "$(nth_disk 5)" $ib
mkdir -p $l1/d $l2/d $ib/d
for n in a b c e; do echo $n >$l2/d/$n; done
head -c 1048576 /dev/urandom >$l2/d/big
big_sum=$(md5sum <$l2/d/big)
mkodf_dev "$ODF_DEV"
inner_odf=$(nth_disk 4)
mkodf_dev "$inner_odf"
rm -f /tmp/odf-dirmap

union_mount $u "odf=$ODF_DEV,dirs=$up=rw:$l1=rw:$l2=ro"
for n in a b c e big; do eval "ino_$n=\$(ino $u/d/$n)"; done
free_kb() { df -k --output=avail "$1" | tail -n 1 | tr -d ' '; }
# fallback NAME REASON: after a change of d/NAME, it is on the upper
# branch only, with its number.
fallback() {
	[ -e $l1/d/$1 ] && fail "d/$1 copied to l1 ($2)"
	[ -f $up/d/$1 ] || fail "d/$1 not copied to the upper branch ($2)"
	expect_eq "st_ino of d/$1 ($2)" "$(eval echo \$ino_$1)" "$(ino $u/d/$1)"
}

# ---- l1 full: ENOSPC ----
dd if=/dev/zero of=$l1/fill bs=64k 2>/dev/null
sync
expect_eq "l1 free space after the fill" 0 "$(free_kb $l1)"
echo x >>$u/d/a || fail "append to d/a with l1 full"
expect_eq "up/d/a (l1 full)" "a
x" "$(cat $up/d/a)"
fallback a "l1 full"
echo y >>$u/d/a || fail "second append to d/a"
expect_eq "d/a after a second append (in place on up)" "a
x
y" "$(cat $u/d/a)"
[ -e $l1/d/a ] && fail "d/a on l1 after the second append"
expect_eq "l2/d/a untouched" a "$(cat $l2/d/a)"

# ---- room for part of a big file: ENOSPC part-way through ----
# About 300 KiB left (plus ext4's blocks reserved for root, which the
# copy may use): less than d/big's 1 MiB.
rm $l1/fill
sync
head -c $(( ($(free_kb $l1) - 300) * 1024 )) /dev/zero >$l1/fill
sync
free_before=$(free_kb $l1)
[ "$free_before" -gt 64 ] && [ "$free_before" -lt 512 ] ||
	fail "l1 should have between 64 and 512 KiB free, has $free_before KiB"
echo tail >>$u/d/big || fail "append to d/big with l1 nearly full"
expect_eq "up/d/big (l1 full part-way)" "$big_sum" "$(head -c 1048576 $up/d/big | md5sum)"
expect_eq "up/d/big's last line" tail "$(tail -c 5 $up/d/big)"
fallback big "l1 full part-way"
sync
expect_eq "l1 free space after the failed copy (the half copy released)" \
	"$free_before" "$(free_kb $l1)"
expect_eq "l1/d after the failed copies" "" "$(ls -A $l1/d)"
rm $l1/fill

# ---- l1 read-only beneath the union: EROFS ----
mount -o remount,ro $l1 || fail "remount l1 read-only"
echo x >>$u/d/b || fail "append to d/b with l1 read-only beneath"
expect_eq "up/d/b (l1 read-only)" "b
x" "$(cat $up/d/b)"
fallback b "l1 read-only beneath"
mount -o remount,rw $l1 || fail "remount l1 read-write"
# With room and writable, l1 takes the copy: the fallbacks above were
# l1's failures, not another choice of target.
echo x >>$u/d/e || fail "append to d/e with l1 writable again"
expect_eq "l1/d/e (l1 writable, with room)" "e
x" "$(cat $l1/d/e)"
[ -e $up/d/e ] && fail "d/e copied to the upper branch with l1 fine"
expect_eq "st_ino of d/e" "$ino_e" "$(ino $u/d/e)"

union_umount $u
odf_check
union_mount $u "odf=$ODF_DEV,dirs=$up=rw:$l1=rw:$l2=ro"
for n in a b big; do
	expect_eq "st_ino of d/$n after a new mount" "$(eval echo \$ino_$n)" "$(ino $u/d/$n)"
done

union_umount $u
odf_check

# ---- a union as the writable lower branch: no O_TMPFILE copy there ----
# (A union cannot be added by remount: its stacking depth is fixed at
# mount.  A fresh ODF for the new branch set.)
mkodf_dev "$ODF_DEV"
rm -f /tmp/odf-dirmap
union_mount $ui "odf=$inner_odf,dirs=$ib=rw"
union_mount $u "odf=$ODF_DEV,dirs=$up=rw:$ui=rw:$l2=ro"
ino_c=$(ino $u/d/c)
echo x >>$u/d/c || fail "append to d/c with a union as the writable lower branch"
expect_eq "up/d/c (a union as l1)" "c
x" "$(cat $up/d/c)"
[ -e $ib/d/c ] && fail "d/c copied into the inner union"
[ -e $up/d/c ] || fail "d/c not copied to the upper branch"
expect_eq "st_ino of d/c (a union as l1)" "$ino_c" "$(ino $u/d/c)"
expect_eq "union d/" "a b big c e" "$(union_ls $u/d)"
union_umount $u
union_umount $ui
odf_check
"$ODFCK" -fn "$inner_odf" >$TMP/fi 2>&1 || { cat $TMP/fi; fail "odfck -fn of the inner ODF"; }
assert_branch_clean $l2
checks_done
