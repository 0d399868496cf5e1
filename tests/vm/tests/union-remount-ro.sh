#!/bin/bash
# timeout: 300
# remount,ro and back (issue 10 item 12): remount,ro ends the ODF session
# as an unmount does -- the ODF superblock says CLEAN while the union
# stays mounted read-only, and nothing more is written to the ODF (a
# listing of a changed merged directory comes from memory); the union
# refuses writes with EROFS and shows the same names.  remount,rw starts
# a new session (MOUNTED, mount count + 1) and writes work again.  A
# power cut while remounted ro therefore needs no recovery: the next
# mount logs none.  ext4 rw over ext4 ro.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 u=/mnt/u
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch ext4 "$(nth_disk 2)" $b1
"$MKODF" -q -f "$ODF_DEV" 64M >/dev/null || fail "mkodf $ODF_DEV 64M"
opts="odf=$ODF_DEV,dirs=$b0=rw:$b1=ro"
mkdir -p $b1/m $b0/m
for i in 1 2 3; do echo l$i >$b1/m/l$i; echo u$i >$b0/m/u$i; done

# The ODF's files are watched through a second mount of its ext4 (it
# shares the module's superblock, so it sees what the module wrote).
odfm=/mnt/odfpeek
mkdir -p $odfm
# "STATE MNT_COUNT" of the ODF superblock.
odf_sb() {
	od -An -t u2 -j 10 -N 2 $odfm/superblock | tr -d ' '
	od -An -t u4 -j 28 -N 4 $odfm/superblock | tr -d ' '
}
# Every ODF file and directory: name, inode, size, mtime, ctime.
odf_files() { (cd $odfm && find . -printf '%p %i %s %T@ %C@\n' | sort); }

union_mount $u "$opts"
mount -t ext4 "$ODF_DEV" $odfm || fail "cannot mount the ODF a second time"
set -- $(odf_sb); st0=$1 mc0=$2
expect_eq "ODF state while mounted rw" 2 "$st0"
rm $u/m/l1 || fail "rm a lower file"
echo new >$u/m/n || fail "create"
expect_eq "m" "l2 l3 n u1 u2 u3" "$(union_ls $u/m)"

mount -o remount,ro $u || fail "remount,ro"
set -- $(odf_sb); st1=$1 mc1=$2
expect_eq "ODF state after remount,ro (CLEAN)" 1 "$st1"
expect_eq "mount count after remount,ro" "$mc0" "$mc1"
expect_errno "create after remount,ro" EROFS "open('$u/x', 'w')"
expect_errno "unlink after remount,ro" EROFS "os.unlink('$u/m/l2')"
# A change made on the upper branch directly: the state is stale, and a
# read-only session lists from memory instead of writing it.
echo direct >$b0/m/direct
files0=$(odf_files)
expect_eq "m after remount,ro" "direct l2 l3 n u1 u2 u3" "$(union_ls $u/m)"
expect_eq "content after remount,ro" new "$(cat $u/m/n)"
ls -lR $u >/dev/null || fail "ls -lR after remount,ro"
sync
expect_eq "ODF files after using the union remounted ro" "$files0" "$(odf_files)"
set -- $(odf_sb); st2=$1 mc2=$2
expect_eq "ODF state still CLEAN" 1 "$st2"

mount -o remount,rw $u || fail "remount,rw"
set -- $(odf_sb); st3=$1 mc3=$2
expect_eq "ODF state after remount,rw (MOUNTED)" 2 "$st3"
expect_eq "mount count after remount,rw" $((mc0 + 1)) "$mc3"
rm $u/m/l2 || fail "rm after remount,rw"
echo again >$u/m/a || fail "create after remount,rw"
expect_eq "m after remount,rw" "a direct l3 n u1 u2 u3" "$(union_ls $u/m)"

# Power cut while remounted ro: the ODF says CLEAN, so the next mount
# recovers nothing.  (The union is dropped without unmounting by
# copying the ODF device as it is now.)
mount -o remount,ro $u || fail "remount,ro again"
umount $odfm
sync
odf2=$(nth_disk 3)
dd if="$ODF_DEV" of="$odf2" bs=1M count=64 status=none conv=fsync ||
	fail "copy the ODF"
union_umount $u
klog_mark
union_mount $u "odf=$odf2,dirs=$b0=rw:$b1=ro"
klog_new | grep -q 'not unmounted cleanly' &&
	fail "a union remounted ro was recovered as after a crash: $(klog_new | grep unionfs | head -n 2)"
expect_eq "m after the cut" "a direct l3 n u1 u2 u3" "$(union_ls $u/m)"
union_umount $u
odf_check
