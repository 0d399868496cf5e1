#!/bin/bash
# Renames made directly in a lower branch while the union is mounted and
# has the names cached (issue 11, item 4): the union shows each object at
# its new name on the next lookup, the old name is gone (ENOENT, also
# below a renamed directory), a name renamed over shows the new object,
# a name the union had cached as absent appears, and an fd opened before
# keeps reading, also while the directory above it moves and gets copied
# up.  On ext4, xfs and tmpfs lower branches.  Before, a
# directory renamed in a branch kept showing under its old name.
# timeout: 700
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 u=/mnt/u

n=0
for fs in ext4 xfs tmpfs; do
	n=$((n + 1))
	l=/mnt/l$fs
	mkbranch ext4 "$(nth_disk 1)" $b0
	mkodf_dev "$ODF_DEV"
	if [ $fs = tmpfs ]; then
		mkbranch tmpfs none $l
	else
		mkbranch $fs "$(nth_disk $((n + 1)))" $l
	fi
	mkdir -p $l/d/sub $l/e $l/moveme/deep
	echo one >$l/d/sub/f
	echo file >$l/f
	echo a >$l/a
	echo b >$l/b
	echo x >$l/x
	echo deep >$l/moveme/deep/g
	union_mount $u "odf=$ODF_DEV,dirs=$b0=rw:$l=ro"
	# Cache every name, and the absent ones.
	ls -laR $u >/dev/null
	cat $u/d/sub/f $u/f $u/a $u/b $u/moveme/deep/g >/dev/null
	stat $u/newname $u/d2 $u/g $u/e/moved 2>/dev/null && fail "$fs: names exist before the renames"
	exec 3<$u/d/sub/f

	mv $l/d $l/d2
	mv $l/f $l/g
	mv $l/a $l/b
	mv $l/x $l/newname
	mv $l/moveme $l/e/moved

	for p in d d/sub d/sub/f f a x moveme moveme/deep/g; do
		[ -e $u/$p ] && fail "$fs: $p still shows in the union after its rename in the branch"
		err=$(stat $u/$p 2>&1) && fail "$fs: stat $p succeeded"
		grep -q "No such file" <<<"$err" || fail "$fs: stat $p: $err (want ENOENT)"
	done
	expect_eq "$fs: d2/sub/f" one "$(cat $u/d2/sub/f)"
	expect_eq "$fs: g" file "$(cat $u/g)"
	expect_eq "$fs: b (renamed over by a)" a "$(cat $u/b)"
	expect_eq "$fs: newname" x "$(cat $u/newname)"
	expect_eq "$fs: e/moved/deep/g" deep "$(cat $u/e/moved/deep/g)"
	expect_eq "$fs: st_ino of d2 is the branch object's" \
		"$(stat -c %i $l/d2)" "$(($(stat -c %i $u/d2) & 0xffffffffffff))"
	expect_eq "$fs: root listing" "b d2 e g newname" "$(ls $u | tr '\n' ' ' | sed 's/ $//')"
	expect_eq "$fs: e listing" "moved" "$(ls $u/e)"
	expect_eq "$fs: fd opened before the rename" one "$(cat <&3)"

	# And back, with the new names cached now, and the fd still open
	# below it (the union dentry of the directory, in use, moves with
	# it); then a file created below it copies it up at its name.
	mv $l/d2 $l/d
	[ -e $u/d2 ] && fail "$fs: d2 still shows after its rename back"
	expect_eq "$fs: d/sub/f after the rename back" one "$(cat $u/d/sub/f)"
	echo new >$u/d/sub/created || fail "$fs: cannot create d/sub/created"
	expect_eq "$fs: d/sub/created on the upper branch" new "$(cat $b0/d/sub/created)"
	[ -e $b0/d2 ] && fail "$fs: the copy-up made d2 on the upper branch"
	exec 3<&-
	union_umount $u
	odf_check
	umount $l $b0
done

# udba=none: the union does not look for direct edits of names it has
# cached (unionfs(5)): a directory renamed in the lower branch keeps
# showing at its old name, and its files can still be read.  A remount
# with udba=reval (what mount(8) does without udba=none) sees the
# rename at the next lookup.
l=/mnt/lext4
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch ext4 "$(nth_disk 2)" $l
mkodf_dev "$ODF_DEV"
mkdir -p $l/d/sub
echo one >$l/d/sub/f
union_mount $u "odf=$ODF_DEV,dirs=$b0=rw:$l=ro,udba=none"
grep " $u unionfs " /proc/mounts | grep -q ",udba=none" ||
	fail "udba=none: /proc/mounts shows $(grep " $u " /proc/mounts)"
cat $u/d/sub/f >/dev/null
mv $l/d $l/d2
expect_eq "udba=none: a cached directory renamed in the branch still shows" \
	one "$(cat $u/d/sub/f 2>&1)"
mount -o remount,udba=reval $u || fail "remount,udba=reval"
grep " $u unionfs " /proc/mounts | grep -q "udba=" &&
	fail "udba=reval: /proc/mounts shows $(grep " $u " /proc/mounts)"
[ -e $u/d ] && fail "udba=reval after remount: d still shows after its rename"
expect_eq "udba=reval after remount: d2/sub/f" one "$(cat $u/d2/sub/f)"
union_umount $u
odf_check
umount $l $b0
note "renames in ext4, xfs and tmpfs lower branches seen at the next lookup; udba=none and remount to udba=reval"
exit 0
