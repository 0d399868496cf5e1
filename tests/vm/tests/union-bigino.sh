#!/bin/bash
# Lower inode numbers that do not fit in 48 bits get allocated union
# numbers (docs/odf-format.md section 4): recorded once (BIGINO + REVERSE),
# the same on every lookup, in readdir, and after remount; a read-only
# union that would have to allocate says EOVERFLOW.  The branch with big
# numbers is an overlayfs with xino=on, whose lower-layer objects carry
# the layer index in the top bits of st_ino.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 l1=/mnt/l1 ou=/mnt/ou ov=/mnt/ov u=/mnt/u
mkfs_branch ext4 "$(nth_disk 1)" $b0
mkfs_branch xfs "$(nth_disk 2)" $l1
mkfs_branch xfs "$(nth_disk 3)" $ou
mkdir -p $ou/up $ou/work $ov $u /mnt/odf
echo big >$l1/bigfile; mkdir $l1/dir; echo in >$l1/dir/inner; mkdir $l1/later; echo f >$l1/later/fresh
mount -t overlay -o lowerdir=$l1,upperdir=$ou/up,workdir=$ou/work,xino=on overlay $ov ||
	fail "cannot mount the overlay branch"
big=$(stat -c %i $ov/bigfile)
[ "$(python3 -c "print(int($big) >= 2**48)")" = True ] ||
	skip "overlay xino did not give a large inode number ($big)"
mkodf_dev "$ODF_DEV"

# A read-only union cannot record an allocation.
mount -t unionfs -o ro,odf="$ODF_DEV",dirs=$b0=rw:$ov=ro none $u || fail "ro mount"
out=$(stat -c %i $u/bigfile 2>&1) && fail "ro union gave a number for a big inode: $out"
case $out in *"Value too large"*) ;; *) fail "ro union: $out" ;; esac
umount $u

mount -t unionfs -o odf="$ODF_DEV",dirs=$b0=rw:$ov=ro none $u || fail "mount: $(dmesg | tail -n 1)"
i1=$(stat -c %i $u/bigfile)
[ "$(python3 -c "print(16 <= $i1 < 2**48)")" = True ] || fail "allocated number $i1 out of range"
expect_eq "same number on a second lookup" "$i1" "$(stat -c %i $u/bigfile)"
expect_eq "content" big "$(cat $u/bigfile)"
d=$("$SRC/tests/vm/prog/dirlist" $u | awk '$4 == "bigfile" { print $2 }')
expect_eq "d_ino == st_ino" "$i1" "$d"
i2=$(stat -c %i $u/dir/inner)
[ "$i1" != "$i2" ] || fail "two objects share number $i1"
# Copy-up keeps the allocated number.
echo more >>$u/bigfile
expect_eq "number after copy-up" "$i1" "$(stat -c %i $u/bigfile)"
umount $u

mount -t unionfs -o odf="$ODF_DEV",dirs=$b0=rw:$ov=ro none $u || fail "remount"
expect_eq "number after remount" "$i1" "$(stat -c %i $u/bigfile)"
expect_eq "inner after remount" "$i2" "$(stat -c %i $u/dir/inner)"
expect_eq "copied content" "big more" "$(cat $u/bigfile | tr '\n' ' ' | sed 's/ $//')"
umount $u

# After a crash the counter may be behind the numbers the maps hold
# (section 10.2 step 4): the mount that recovers moves it past them, so a
# new allocation (for "fresh", never looked up so far) reuses nothing.
"$SRC/tests/unit/odfedit" "$ODF_DEV" sb-set next_ino 16 || fail "odfedit sb-set"
"$SRC/tests/unit/odfedit" "$ODF_DEV" sb-set state 2 || fail "odfedit sb-set"
klog_mark
mount -t unionfs -o odf="$ODF_DEV",dirs=$b0=rw:$ov=ro none $u || fail "mount with a stale counter"
klog_new | grep -q "inode number counter was behind" || fail "no log line for the stale counter"
expect_eq "number with a stale counter" "$i1" "$(stat -c %i $u/bigfile)"
i3=$(stat -c %i $u/later/fresh)
for i in $i1 $i2 $(stat -c %i $u/dir); do
	[ "$i3" != "$i" ] || fail "number $i3 was handed out twice"
done
umount $u
umount $ov

"$ODFCK" -fn "$ODF_DEV" >$TMP/fsck.out 2>&1 || { cat $TMP/fsck.out; fail "odfck -fn not clean"; }
grep -q " 0+0 map records" $TMP/fsck.out && fail "no map records: $(tail -n 1 $TMP/fsck.out)"
note "$(tail -n 1 $TMP/fsck.out)"
exit 0
