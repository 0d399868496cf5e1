#!/bin/bash
# timeout: 300
# Renaming a directory keeps what is mounted below it (issue 10 item 5):
# a tmpfs mounted at a/m (a lower directory) and at u/m (an upper one)
# is still there, with its file, after mv a b and mv u v; names below
# the renamed directories keep their inode numbers; a file renamed over
# a lower name shows its own content, not the lower file's.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 u=/mnt/u
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch ext4 "$(nth_disk 2)" $b1
mkodf_dev "$ODF_DEV"
mkdir -p $b1/a/m $b1/a/s $b0/u/m
echo lower-f >$b1/a/s/f
echo lower-x >$b1/x

union_mount $u "odf=$ODF_DEV,dirs=$b0=rw:$b1=ro"
mkdir -p /mnt/t1 /mnt/t2
mount -t tmpfs t1 $u/a/m || fail "mount tmpfs on a/m"
mount -t tmpfs t2 $u/u/m || fail "mount tmpfs on u/m"
echo in-t1 >$u/a/m/f1
echo in-t2 >$u/u/m/f2
ino_s=$(ino $u/a/s) ino_f=$(ino $u/a/s/f)
mv $u/a $u/b || fail "mv a b"
mv $u/u $u/v || fail "mv u v"
mountpoint -q $u/b/m || fail "the tmpfs below a is gone after mv a b"
mountpoint -q $u/v/m || fail "the tmpfs below u is gone after mv u v"
expect_eq "file on the tmpfs below b" in-t1 "$(cat $u/b/m/f1)"
expect_eq "file on the tmpfs below v" in-t2 "$(cat $u/v/m/f2)"
expect_eq "b/s keeps its inode" "$ino_s" "$(ino $u/b/s)"
expect_eq "b/s/f keeps its inode" "$ino_f" "$(ino $u/b/s/f)"
expect_eq "b/s/f" lower-f "$(cat $u/b/s/f)"
expect_eq "root" "b v x" "$(union_ls $u)"
# The renamed directory is still a working directory: create, remove.
echo new >$u/b/s/g || fail "create below b"
rm $u/b/s/f || fail "unlink below b"
expect_eq "b/s" "g" "$(union_ls $u/b/s)"
# A file renamed over a lower name: its own content.
echo upper-y >$u/y
mv $u/y $u/x || fail "mv y x"
expect_eq "x after mv y x" upper-y "$(cat $u/x)"
umount $u/b/m $u/v/m || fail "umount the tmpfs mounts"
union_umount $u

union_mount $u "odf=$ODF_DEV,dirs=$b0=rw:$b1=ro"
expect_eq "root after a remount" "b v x" "$(union_ls $u)"
expect_eq "b/s after a remount" "g" "$(union_ls $u/b/s)"
expect_eq "b after a remount" "m s" "$(union_ls $u/b)"
union_umount $u
odf_check
