#!/bin/bash
# A directory, symlink or node is copied up at its name (no O_TMPFILE)
# under a COPYUP intent (docs/odf-format.md 9.6, 10.2).  The states a
# crash leaves are built offline (upper branch by hand, intent with
# odfedit), then a mount must keep a finished copy (its records give it
# the intent's number) and remove a half-built one (no records: maybe no
# ACL, no xattrs), so the name shows the lower object again with its
# owner, mode, ACL and inode number.  A half-built directory that is not
# empty stays.  Every intent is gone after the mount and odfck is clean.
# Live copy-ups through the union leave no intent behind.
. "$SRC/tests/vm/lib.sh"

ODFEDIT=$SRC/tests/unit/odfedit
b0=/mnt/b0 b1=/mnt/b1 u=/mnt/u
mkdir -p $u /mnt/odf

acl() { getfacl -cp "$1" 2>/dev/null | grep -v '^#'; }

setup() {
	umount $u $b0 $b1 2>/dev/null
	mkfs_branch ext4 "$(nth_disk 1)" $b0
	mkfs_branch ext4 "$(nth_disk 2)" $b1
	rmdir $b0/lost+found $b1/lost+found
	mkdir $b1/sub
	echo inside >$b1/sub/f
	chown 1234:1234 $b1/sub
	chmod 0750 $b1/sub
	setfattr -n user.colour -v blue $b1/sub
	setfacl -m u:4321:rx $b1/sub
	ln -s target-of-ln $b1/ln
	mkodf_dev "$ODF_DEV"
	mount -t unionfs -o odf="$ODF_DEV",dirs=$b0=rw:$b1=ro none $u || fail "first mount"
	U=$(ino $u/sub) L=$(ino $u/ln)
	umount $u
	expect_eq "sub's number is deterministic (branch 2)" "$(uino 2 "$(ino $b1/sub)")" "$U"
	ACL=$(acl $b1/sub)
}

# What /reclaim holds; while the union is mounted, a second mount of the
# ODF shares its superblock, so it must not ask for read-only.
reclaim_left() {
	mount ${1:--o ro} -t ext4 "$ODF_DEV" /mnt/odf || fail "mount the ODF"
	ls /mnt/odf/reclaim
	umount /mnt/odf
}

# check STEP: after the mount the intent is gone and odfck is clean.
mount_union() {
	klog_mark
	mount -t unionfs -o odf="$ODF_DEV",dirs=$b0=rw:$b1=ro none $u ||
		fail "step $1: mount: $(dmesg | tail -n 2)"
}
finish() {
	umount $u || fail "step $1: umount"
	expect_eq "step $1: /reclaim after the mount" "" "$(reclaim_left)"
	"$ODFCK" -fn "$ODF_DEV" >$TMP/fsck.out 2>&1 || { cat $TMP/fsck.out; fail "step $1: odfck -fn"; }
}
# sub shows the lower directory: owner, mode, xattr, ACL, number, contents.
expect_lower_sub() {
	expect_eq "step $1: owner and mode" "1234:1234 750" "$(stat -c '%u:%g %a' $u/sub)"
	expect_eq "step $1: xattr" "blue" "$(getfattr --absolute-names --only-values -n user.colour $u/sub )"
	expect_eq "step $1: ACL" "$ACL" "$(acl $u/sub)"
	expect_eq "step $1: st_ino" "$U" "$(ino $u/sub)"
	expect_eq "step $1: contents" "inside" "$(cat $u/sub/f)"
}

# 1: crash after the intent, before anything on the upper branch: the
# intent is dropped, nothing changes.
setup
"$ODFEDIT" "$ODF_DEV" copyup-intent-add 5 2 sub "$U" / || fail "intent-add"
mount_union 1
[ -e $b0/sub ] && fail "step 1: the mount created sub on the upper branch"
expect_lower_sub 1
finish 1

# 2: crash in step 2: the directory is on the upper branch, made with the
# lower owner and mode, but without its xattrs (hence no ACL) and no
# records: it is removed, the lower shows again.
setup
mkdir $b0/sub && chown 1234:1234 $b0/sub && chmod 0750 $b0/sub
"$ODFEDIT" "$ODF_DEV" copyup-intent-add 5 2 sub "$U" / || fail "intent-add"
mount_union 2
[ -e $b0/sub ] && fail "step 2: the half-built copy is still on the upper branch"
klog_new | grep -q "removed the unfinished copy-up of 'sub'" ||
	fail "step 2: no log line: $(klog_new | tail -n 3)"
expect_lower_sub 2
finish 2

# 3: the same for a symlink (and the copy is made again on demand).
setup
ln -s target-of-ln $b0/ln
"$ODFEDIT" "$ODF_DEV" copyup-intent-add 6 2 ln "$L" / || fail "intent-add"
mount_union 3
[ -e $b0/ln ] || [ -L $b0/ln ] && fail "step 3: the half-built symlink is still there"
expect_eq "step 3: link target" "target-of-ln" "$(readlink $u/ln)"
expect_eq "step 3: st_ino" "$L" "$(stat -c %i $u/ln)"
finish 3

# 4: crash after the records (step 3), before the intent went: the copy
# is finished and stays, with its number.
setup
mount_union 4
setfattr -n user.extra -v 1 $u/sub || fail "step 4: copy-up through the union"
[ -d $b0/sub ] || fail "step 4: sub was not copied up"
umount $u
"$ODFEDIT" "$ODF_DEV" copyup-intent-add 5 2 sub "$U" / || fail "intent-add"
mount_union 4
[ -d $b0/sub ] || fail "step 4: the finished copy was removed"
expect_lower_sub 4
expect_eq "step 4: the change made through the union" "1" "$(getfattr --absolute-names --only-values -n user.extra $u/sub)"
finish 4

# 5: a half-built directory that holds names (written on the branch
# directly) is not removed: it is kept and logged.
setup
mkdir $b0/sub && echo mine >$b0/sub/mine
"$ODFEDIT" "$ODF_DEV" copyup-intent-add 5 2 sub "$U" / || fail "intent-add"
mount_union 5
[ -f $b0/sub/mine ] || fail "step 5: a file on the upper branch was removed"
klog_new | grep -q "'sub' was copied up without its records and is not empty: kept" ||
	fail "step 5: no log line: $(klog_new | tail -n 3)"
expect_eq "step 5: both files show" "f mine" "$(ls $u/sub | tr '\n' ' ' | sed 's/ $//')"
finish 5

# 6: live copy-ups of a directory, a symlink and a FIFO keep owner, mode,
# ACL, xattrs and numbers, and leave no intent in /reclaim.
setup
mkfifo $b1/ff && chown 1234:1234 $b1/ff && chmod 0640 $b1/ff
setfacl -m u:4321:r $b1/ff || fail "setfacl on a FIFO"
FACL=$(acl $b1/ff)
mount_union 6
F=$(ino $u/ff)
touch $u/sub/new || fail "step 6: create in sub"
touch -h $u/ln || fail "step 6: touch -h ln"
touch $u/ff || fail "step 6: touch ff"
[ -d $b0/sub ] && [ -L $b0/ln ] && [ -p $b0/ff ] || fail "step 6: not copied up"
expect_eq "step 6: owner and mode" "1234:1234 750" "$(stat -c '%u:%g %a' $b0/sub)"
expect_eq "step 6: ACL on the upper copy" "$ACL" "$(acl $b0/sub)"
expect_eq "step 6: xattr" "blue" "$(getfattr --absolute-names --only-values -n user.colour $b0/sub)"
expect_eq "step 6: fifo owner and mode" "1234:1234 640" "$(stat -c '%u:%g %a' $b0/ff)"
expect_eq "step 6: fifo ACL" "$FACL" "$(acl $b0/ff)"
expect_eq "step 6: st_ino of sub" "$U" "$(ino $u/sub)"
expect_eq "step 6: st_ino of ln" "$L" "$(stat -c %i $u/ln)"
expect_eq "step 6: st_ino of ff" "$F" "$(ino $u/ff)"
expect_eq "step 6: /reclaim while mounted" "" "$(reclaim_left -orw)"
finish 6
mount_union 6b
expect_eq "step 6: st_ino of sub after remount" "$U" "$(ino $u/sub)"
umount $u
echo "all steps passed"
