#!/bin/bash
# A union mounted read-only over an ODF written by a read-write session
# shows exactly what the read-write union showed: whiteouts hide, opaque
# directories stop the merge, renamed directories keep their lower parts,
# copies keep their inode numbers.  Branch 0 is the upper branch of those
# rules in both kinds of mount (a bug once hid renamed directories in ro
# mounts).  The ro mount writes nothing to the ODF.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 u=/mnt/u
mkfs_branch ext4 "$(nth_disk 1)" $b0
mkfs_branch xfs "$(nth_disk 2)" $b1
rmdir $b0/lost+found
mkdir -p $b1/tree/sub $b1/gone $b1/op $u
echo f >$b1/tree/f; echo s >$b1/tree/sub/s; echo g >$b1/gone/g
echo o >$b1/op/old; echo k >$b1/keep; echo x >$b1/x
mkodf_dev "$ODF_DEV"

mount -t unionfs -o odf="$ODF_DEV",dirs=$b0=rw:$b1=ro none $u || fail "rw mount"
mv $u/tree $u/moved || fail "rename a lower tree"
rm -r $u/gone || fail "rm -r a lower tree"
rm -r $u/op && mkdir $u/op && echo new >$u/op/new || fail "opaque directory"
echo more >>$u/keep || fail "copy-up"
rm $u/x || fail "unlink"
snapshot() {
	(cd $u && find . -printf '%p %y %i\n' | sort
	 cat moved/f moved/sub/s op/new keep)
}
want=$(snapshot)
umount $u
odfstate() {
	dumpe2fs -h "$ODF_DEV" 2>/dev/null | grep -E '^(Lifetime writes|Last write time|Mount count):'
	"$SRC/tests/unit/odfedit" "$ODF_DEV" dump | head -n 20
}
sum=$(odfstate)

mount -t unionfs -o ro,odf="$ODF_DEV",dirs=$b0=rw:$b1=ro none $u || fail "ro mount"
expect_eq "ro view equals the rw view" "$want" "$(snapshot)"
umount $u
expect_eq "the ro mount wrote nothing to the ODF" "$sum" "$(odfstate)"
"$ODFCK" -fn "$ODF_DEV" >$TMP/fsck.out 2>&1 || { cat $TMP/fsck.out; fail "odfck -fn"; }
exit 0
